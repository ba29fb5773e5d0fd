"""Database tier of the app: one async pool per node, read routing over the replicas, health probing.

Routing: reads go to the healthy replica with the fewest queries in flight (ties broken round-robin).
Least-in-flight rather than plain round-robin because a replica that is busy applying the binlog answers
slower, and should then get less of the read load instead of a fixed half of it. A replica that fails (connection
error, or its replication stopped) leaves the rotation until the background probe finds it healthy again; when no
replica is healthy, reads fall back to the master (unless REPLBENCH_READ_FALLBACK=0). Writes go to the master only.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from replbench.core.config import Settings

PROBE_INTERVAL = 1.0  # seconds between health probes of each node
CLIENT_FOUND_ROWS = 2  # MySQL protocol flag: UPDATE reports matched rows, not changed rows
CLIENT_MULTI_STATEMENTS = 1 << 16  # several statements in one COM_QUERY (only for find_users' server-steps shape)
MAX_STATEMENT_TIME_ERRORS = {1969, 3024}  # MariaDB max_statement_time / MySQL max_execution_time exceeded
CONNECTION_ERRORS = {2002, 2003, 2006, 2013, 2055, 1040, 1053}


class NoNodeAvailable(Exception):
    """No node can serve this request now (master down for a write, or no replica and no fallback)."""


class QueryTimeout(Exception):
    """The query ran past the server-side statement time limit."""


class Overloaded(Exception):
    """Every connection to the node stayed busy for longer than the wait limit (backpressure: 503)."""


def load_driver(name: str) -> Any:
    return importlib.import_module(name)


@dataclass
class NodePool:
    """One node as the app sees it: its pool, health, queries in flight and counters."""

    name: str
    role: str
    host: str
    port: int
    user: str
    password: str
    pool: Any = None
    healthy: bool = True
    in_flight: int = 0
    served: int = 0
    last_error: str = ""
    last_change: float = field(default_factory=time.time)
    lag_s: float | None = None  # heartbeat lag read by the last probe (replicas)
    lagging: bool = False  # out of the read rotation for lag above REPLBENCH_MAX_LAG
    socket: str | None = None  # a unix socket instead of host:port (REPLBENCH_APP_TRANSPORT=unix)
    slots: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(1))

    def where(self) -> dict[str, Any]:
        """The driver's connection arguments for this node."""
        if self.socket:
            return {"unix_socket": self.socket, "user": self.user, "password": self.password}
        return {"host": self.host, "port": self.port, "user": self.user, "password": self.password}

    def mark(self, healthy: bool, error: str = "") -> None:
        if healthy != self.healthy:
            self.last_change = time.time()
        self.healthy = healthy
        if error:
            self.last_error = error

    def as_dict(self) -> dict[str, Any]:
        pool = self.pool
        return {"role": self.role, "host": self.host, "port": self.port, "socket": self.socket, "healthy": self.healthy,
                "in_flight": self.in_flight, "served": self.served, "last_error": self.last_error,
                "lag_s": self.lag_s, "lagging": self.lagging,
                "pool": None if pool is None else {"size": pool.size, "free": pool.freesize,
                                                   "max": pool.maxsize}}


class Database:
    """All nodes of the topology, with read/write routing and a health probe task."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.driver = load_driver(settings.driver)
        self.master = NodePool("master", "master", *settings.address("master"), *settings.app_credentials("master"),
                               socket=settings.app_socket("master"))
        self.replicas = [NodePool(n.name, "replica", *settings.address(n.name), *settings.app_credentials("replica"),
                                  socket=settings.app_socket(n.name)) for n in settings.replicas]
        self._rr = itertools.count()
        self._probe_task: asyncio.Task[None] | None = None
        # each wait for a connection, in seconds (0: none), for the admission's standing-queue test (app/main.py)
        self.observe_wait: Callable[[float], None] | None = None
        # per schema: (whether its accounts table has find_users' index, when that was read) (handlers.find_hint)
        self.find_index: dict[str, tuple[bool, float]] = {}

    @property
    def nodes(self) -> list[NodePool]:
        return [self.master, *self.replicas]

    def _init_command(self) -> str:
        seconds = self.settings.statement_timeout
        if self.settings.flavour == "mariadb":
            return f"SET SESSION max_statement_time = {seconds:g}"
        # MySQL's group_concat_max_len is 1024 bytes: too short for find_users' server-steps IN list
        return f"SET SESSION max_execution_time = {int(seconds * 1000)}, SESSION group_concat_max_len = 1048576"

    def _client_flag(self) -> int:
        """Multi-statements only where a shape needs them: elsewhere a stacked statement stays refused."""
        multi = CLIENT_MULTI_STATEMENTS if self.settings.find_users == "server-steps" else 0
        return CLIENT_FOUND_ROWS | multi

    async def start(self) -> None:
        for node in self.nodes:
            node.slots = asyncio.Semaphore(self.settings.pool_size)
            node.pool = await self.driver.create_pool(
                **node.where(), minsize=0, maxsize=self.settings.pool_size, autocommit=True, charset="utf8mb4",
                connect_timeout=self.settings.db_timeout, init_command=self._init_command(),
                client_flag=self._client_flag())
        await asyncio.gather(*(self.probe(node) for node in self.nodes))
        self._probe_task = asyncio.create_task(self._probe_loop())

    async def close(self) -> None:
        if self._probe_task:
            self._probe_task.cancel()
        for node in self.nodes:
            if node.pool is not None:
                node.pool.close()
                await node.pool.wait_closed()

    # ---- routing ----

    def pick_reader(self, exclude: set[str] = frozenset()) -> NodePool:  # type: ignore[assignment]
        candidates = [r for r in self.replicas if r.healthy and not r.lagging and r.name not in exclude]
        if candidates:
            turn = next(self._rr)
            return min(candidates, key=lambda r: (r.in_flight, (self.replicas.index(r) - turn) % len(self.replicas)))
        if self.settings.read_fallback and self.master.name not in exclude:
            return self.master
        raise NoNodeAvailable("no healthy replica" + ("" if self.settings.read_fallback else
                                                      " and read fallback to the master is off"))

    async def read(self, work: Any) -> tuple[Any, str]:
        """Run work(cursor) on a replica (another one, then the master, if a node fails); (result, node name)."""
        tried: set[str] = set()
        while True:
            node = self.pick_reader(tried)
            try:
                return await self._run(node, work), node.name
            except NoNodeAvailable:
                tried.add(node.name)

    async def write(self, work: Any) -> tuple[Any, str]:
        if not self.master.healthy and time.time() - self.master.last_change < PROBE_INTERVAL:
            raise NoNodeAvailable(f"master unavailable: {self.master.last_error}")
        return await self._run(self.master, work), self.master.name

    async def _run(self, node: NodePool, work: Any) -> Any:
        """Run work on one node. Waiting for a connection is bounded (db_timeout, then 503: backpressure instead
        of an unbounded queue); the query itself is bounded by the server's statement time limit, so nothing is
        ever cancelled inside the driver (a cancelled acquire or query can leak pool connections)."""
        node.in_flight += 1
        try:
            if node.slots.locked():  # only a wait is bounded: wait_for costs a task and a timer per call
                began = time.monotonic()
                try:
                    await asyncio.wait_for(node.slots.acquire(), self.settings.db_timeout)
                except TimeoutError:
                    raise Overloaded(f"{node.name}: no free connection within {self.settings.db_timeout:g} s") \
                        from None
                finally:
                    if self.observe_wait is not None:
                        self.observe_wait(time.monotonic() - began)
            else:
                await node.slots.acquire()  # a free slot: taken at once, without suspending
                if self.observe_wait is not None:
                    self.observe_wait(0.0)
            try:
                return await self._run_on_connection(node, work)
            finally:
                node.slots.release()
        finally:
            node.in_flight -= 1

    async def _run_on_connection(self, node: NodePool, work: Any) -> Any:
        try:
            conn = await node.pool.acquire()
        except (TimeoutError, self.driver.Error, OSError) as exc:
            node.mark(False, f"connect: {exc}")
            raise NoNodeAvailable(f"{node.name} unavailable") from exc
        try:
            async with conn.cursor() as cur:
                result = await work(cur)
            node.served += 1
            return result
        except self.driver.OperationalError as exc:
            code = exc.args[0] if exc.args else 0
            if code in MAX_STATEMENT_TIME_ERRORS:
                raise QueryTimeout(f"{node.name}: statement time limit") from exc
            if code in CONNECTION_ERRORS or code >= 2000:
                conn.close()
                node.mark(False, f"query: {exc}")
                raise NoNodeAvailable(f"{node.name} unavailable") from exc
            raise
        except BaseException:
            conn.close()  # unknown state: never hand this connection to another request
            raise
        finally:
            node.pool.release(conn)

    # ---- health ----

    async def _probe_loop(self) -> None:
        while True:
            await asyncio.sleep(PROBE_INTERVAL)
            await asyncio.gather(*(self.probe(node) for node in self.nodes), return_exceptions=True)

    async def probe(self, node: NodePool) -> None:
        """Connect with a fresh connection (not from the pool) and check the node can serve its role."""
        try:
            conn = await asyncio.wait_for(self.driver.connect(
                **node.where(), connect_timeout=self.settings.db_timeout), self.settings.db_timeout + 1)
        except (TimeoutError, self.driver.Error, OSError) as exc:
            node.mark(False, f"probe: {exc or type(exc).__name__}")
            return
        try:
            async with conn.cursor() as cur:
                if node.role == "replica":
                    await cur.execute(self._replication_probe_sql())
                    row = await cur.fetchone()
                    state = str(row[-1]).upper() if row else ""
                    running = state in ("ON", "YES") or (state.isdigit() and int(state) > 0)
                    node.mark(running, "" if running else "replication stopped")
                    if self.settings.max_lag:
                        await self._probe_lag(node, cur)
                else:
                    await cur.execute("SELECT 1")
                    await cur.fetchone()
                    node.mark(True)
        except (self.driver.Error, OSError) as exc:
            node.mark(False, f"probe: {exc}")
        finally:
            try:
                await asyncio.wait_for(conn.ensure_closed(), self.settings.db_timeout)  # polite COM_QUIT
            except (TimeoutError, self.driver.Error, OSError):
                conn.close()

    async def _probe_lag(self, node: NodePool, cur: Any) -> None:
        """Heartbeat lag (pt-heartbeat's row): above max_lag the replica leaves the read rotation until it is
        back under (a replica whose replication stopped keeps aging, so it stays out)."""
        try:
            await cur.execute("SELECT TIMESTAMPDIFF(MICROSECOND, ts, SYSDATE(6)) / 1e6 FROM replbench_meta.heartbeat "
                              "WHERE id = 1")
            row = await cur.fetchone()
        except self.driver.Error:
            node.lag_s = None  # no heartbeat to read (no grant, no table): routing ignores lag
            return
        node.lag_s = None if not row or row[0] is None else float(row[0])
        lagging = node.lag_s is not None and node.lag_s > self.settings.max_lag
        if lagging != node.lagging:
            node.lagging = lagging
            node.last_change = time.time()

    def _replication_probe_sql(self) -> str:
        if self.settings.flavour == "mariadb":
            # needs no privilege; the SQL threads applying. Not Slave_running: it is OFF while the IO thread
            # reconnects to a dead master, and the replicas must keep serving reads then.
            return "SHOW GLOBAL STATUS LIKE 'Slaves_running'"
        return "SELECT SERVICE_STATE FROM performance_schema.replication_applier_status"
