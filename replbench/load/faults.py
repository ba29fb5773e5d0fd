"""Faults on purpose: `--fault ACTION:NODE@TIME` (repeatable, or `faults = [...]` in a scenario file), carried out
at TIME after the attack's start by a thread on the run's clock, each recorded with the moment it really happened.

Actions: kill (SIGKILL the node's mariadbd), start (start it again; a replica resumes replicating),
stop-replication / start-replication (STOP SLAVE / START SLAVE on a replica), stop-sql-thread / start-sql-thread
and stop-io-thread / start-io-thread (one replication thread: STOP SLAVE SQL_THREAD …; the lag split shows where
the lag then goes), cut / restore (disable / enable a
replica's toxiproxy link, named with --link: its IO thread loses the master and reconnects), bigtx=ROWS on the
master (one UPDATE of ROWS rows of the scenario's table, the classic row-based incident, while the attack goes on;
the fault is done once every replica has applied it, so its "during" window is the incident and its windows show
which nodes served the reads meanwhile). The windows before, during and after each fault (error %, p50/p99, rate,
requests each node served) are cut from the timeline afterwards; the run then brings every node back (as `up`
does) and checks the replicas' checksums."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..core import sql
from ..core.config import CATCH_UP_TIMEOUT, Settings, parse_duration
from ..core.nodenames import MAX_REPLICAS, node_names
from ..core.results import BigTxFault, PlannedFault
from ..topology import links, nodes

ACTIONS = ("kill", "start", "stop-replication", "start-replication", "stop-sql-thread", "start-sql-thread",
           "stop-io-thread", "start-io-thread", "cut", "restore", "bigtx")
RESTORES = {"kill": "start", "stop-replication": "start-replication", "stop-sql-thread": "start-sql-thread",
            "stop-io-thread": "start-io-thread", "cut": "restore"}
THREADS = {"sql": "SQL_THREAD", "io": "IO_THREAD"}  # a thread fault's one replication thread, as the server spells it
SPEC_RE = re.compile(r"^([a-z-]+)(?:=(\d+))?:([a-z0-9]+)@(\S+)$")
BIGTX_DRAIN_TIMEOUT = 10 * CATCH_UP_TIMEOUT  # seconds the replicas may take to apply a bigtx fault's transaction


@dataclass(frozen=True)
class Fault:
    action: str
    node: str
    at: float  # seconds after the attack's start
    rows: int = 0  # bigtx: the rows its UPDATE changes

    @property
    def spec(self) -> str:
        size = f"={self.rows}" if self.rows else ""
        return f"{self.action}{size}:{self.node}@{self.at:g}s"


@dataclass(frozen=True)
class CarriedOut:
    """A planned fault as the runner carried it out: when it began and when it was done (seconds from the attack's
    start; a start is done once its node is ready), the error that stopped it, a bigtx fault's figures."""

    fault: Fault
    began_at_s: float
    at_s: float
    error: str | None = None
    bigtx: BigTxFault | None = None

    @property
    def node(self) -> str:
        return self.fault.node

    @property
    def action(self) -> str:
        return self.fault.action

    def record(self) -> PlannedFault:
        """As summary.json's planned_faults hold it: rows only for a bigtx fault, bigtx only once it has figures,
        error always (null: carried out)."""
        f = self.fault
        return PlannedFault.model_validate({
            "fault": f.spec, "action": f.action, "node": f.node, "planned_at_s": f.at,
            **({"rows": f.rows} if f.rows else {}), "began_at_s": self.began_at_s,
            **({"bigtx": self.bigtx} if self.bigtx is not None else {}), "error": self.error, "at_s": self.at_s})


def parse(spec: str) -> Fault:
    """'kill:replica1@20s' or 'bigtx=100000:master@10s' -> Fault; ValueError with the allowed forms otherwise."""
    match = SPEC_RE.match(spec.strip())
    if not match:
        raise ValueError(f"bad fault {spec!r}: use ACTION:NODE@TIME, e.g. kill:replica1@20s or "
                         "bigtx=100000:master@10s")
    action, rows, node, when = match.groups()
    if action not in ACTIONS:
        raise ValueError(f"bad fault {spec!r}: action must be one of {', '.join(ACTIONS)}")
    if (action == "bigtx") != bool(rows) or (rows and int(rows) < 1):
        raise ValueError(f"bad fault {spec!r}: bigtx takes a row count (bigtx=100000:master@10s), no other "
                         "action does")
    if action == "bigtx" and node != "master":
        raise ValueError(f"bad fault {spec!r}: bigtx runs on the master")
    if node not in node_names(MAX_REPLICAS):
        raise ValueError(f"bad fault {spec!r}: node must be master or replica1 … replica{MAX_REPLICAS}")
    if (action.endswith(("replication", "thread")) or action in ("cut", "restore")) and node == "master":
        raise ValueError(f"bad fault {spec!r}: {action} applies to a replica")
    at = 0.0 if when in ("0", "0s") else parse_duration(when)
    return Fault(action, node, at, int(rows or 0))


def parse_all(specs: list[str], duration: float) -> tuple[Fault, ...]:
    faults = tuple(sorted((parse(s) for s in specs), key=lambda f: f.at))
    for f in faults:
        if f.at >= duration:
            raise ValueError(f"fault {f.spec} comes after the attack ends ({duration:g} s)")
    return faults


def big_update(settings: Settings, schema: str, rows: int) -> BigTxFault:
    """One UPDATE of `rows` rows of schema.accounts (the lowest ids) on the master, each row given a fresh value in
    `interests` (no index covers it: every row really changes), then wait until every replica has applied it.
    Returns what a DBA reads of it: rows changed, the master's seconds, each replica's seconds from the master's
    commit until applied (None: not within BIGTX_DRAIN_TIMEOUT)."""
    tag = f"bigtx-fault-{time.time_ns():x}"
    start = time.monotonic()
    with sql.admin(settings.master, settings) as cur:
        cur.execute("SET SESSION max_statement_time = 0")  # the incident's statement runs to its end
        cur.execute(f"SELECT MIN(id) FROM {schema}.accounts")
        low = int(sql.one_row(cur)[0] or 1)
        cur.execute(f"UPDATE {schema}.accounts SET interests = %s, updated_at = NOW() WHERE id BETWEEN %s AND %s",
                    (tag, low, low + rows - 1))
        changed = cur.rowcount
    committed = time.monotonic()
    gtid = nodes.master_gtid(settings)
    called = time.monotonic()
    applied = nodes.wait_caught_up(settings, BIGTX_DRAIN_TIMEOUT, gtid)  # seconds from the call
    return BigTxFault(table=f"{schema}.accounts", rows_changed=changed, value=tag, master_s=round(committed - start, 3),
                      replicas_applied_after_commit_s={name: None if took is None else
                                                       round(took + called - committed, 3)
                                                       for name, took in applied.items()})


def carry_out(fault: Fault, settings: Settings, schema: str = "") -> BigTxFault | None:
    """Carry the fault out; a bigtx returns its figures (big_update), the others None."""
    if fault.action == "bigtx":
        if not schema:
            raise ValueError("a bigtx fault needs the scenario's table")
        return big_update(settings, schema, fault.rows)
    node = settings.node(fault.node)
    if node.external and fault.action in ("kill", "start", "cut", "restore"):
        raise nodes.TopologyError(f"a {fault.action} fault needs the native topology: {node.name} is a server "
                                     f"of {settings.topology_name}")
    if fault.action == "kill":
        pid = nodes.node_pid(node)
        if pid:
            os.kill(pid, signal.SIGKILL)
    elif fault.action in ("cut", "restore"):  # the replica's link through toxiproxy (--link)
        links.set_enabled(settings, fault.node, fault.action == "restore")
    elif fault.action == "start":
        nodes.start_node(node, settings)
        if node.role == "replica":
            nodes.ensure_replicating(node, settings)
    else:
        verb = sql.start_replica_sql if fault.action.startswith("start") else sql.stop_replica_sql
        thread = THREADS.get(fault.action.split("-")[1], "") if fault.action.endswith("thread") else ""
        with sql.admin(node, settings) as cur:
            cur.execute(f"{verb(settings.flavour)} {thread}".strip())
    return None


class FaultRunner:
    """Carries out the planned faults at their times (relative to attack_start on the run's clock)."""

    def __init__(self, settings: Settings, faults: tuple[Fault, ...], clock_zero: float, schema: str = "") -> None:
        self.settings = settings
        self.schema = schema  # the scenario's: the table a bigtx fault updates
        self.faults = faults
        self.zero = clock_zero
        self.done: list[CarriedOut] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, attack_start: float) -> None:
        if self.faults:
            self._thread = threading.Thread(target=self._loop, args=(attack_start,), daemon=True)
            self._thread.start()

    def _loop(self, attack_start: float) -> None:
        for fault in self.faults:
            due = self.zero + attack_start + fault.at
            if self._stop.wait(max(0.0, due - time.monotonic())):
                return
            began = round(time.monotonic() - self.zero - attack_start, 3)
            figures, error = None, None
            try:
                figures = carry_out(fault, self.settings, self.schema)
            except Exception as exc:  # noqa: BLE001 — a fault that could not be carried out is recorded
                error = f"{type(exc).__name__}: {exc}"
            # done: a start waits for the node to be ready (crash recovery of a killed 8M node takes seconds)
            self.done.append(CarriedOut(fault, began, round(time.monotonic() - self.zero - attack_start, 3), error,
                                        figures))

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=BIGTX_DRAIN_TIMEOUT if any(f.rows for f in self.faults) else 30)


def outages(done: Sequence[CarriedOut]) -> list[tuple[str, float, float | None]]:
    """(node, down at, back at or None) for every kill (or stop-replication) and its restore."""
    out: list[tuple[str, float, float | None]] = []
    for record in done:
        if record.action not in RESTORES:
            continue
        restore = next((r for r in done if r.node == record.node and r.action == RESTORES[record.action]
                        and r.at_s >= record.at_s), None)
        out.append((record.node, record.at_s, restore.at_s if restore else None))
    return out


def held(done: Sequence[CarriedOut], replicas: set[str]) -> dict[str, str]:
    """Replicas a planned fault has stopped (killed, replication or a thread stopped, link cut) and no restore has
    given back yet: replica -> the fault's spec. A catch-up wait on them could only run out its timeout."""
    out: dict[str, str] = {}
    for record in done:
        if record.node in replicas and record.action in RESTORES and record.error is None:
            back = any(r.node == record.node and r.action == RESTORES[record.action]
                       and r.at_s >= record.at_s for r in done)
            if not back:
                out[record.node] = record.fault.spec
    return out


def windows(done: Sequence[CarriedOut], duration: float) -> list[tuple[str, float, float]]:
    """(name, start s, end s) for before / during / after each fault and its restore (times from the attack's
    start); a fault never restored is 'during' until the end."""
    out: list[tuple[str, float, float]] = []
    for record in done:
        if record.action == "bigtx":  # during: from the UPDATE's start until every replica has applied it
            label = f"bigtx {record.fault.rows:,} rows"
            began, end = record.began_at_s, max(record.at_s, record.began_at_s)
            out += [(f"{label}: before", 0.0, began), (f"{label}: during", began, end)]
            if end < duration:
                out.append((f"{label}: after", end, duration))
            continue
        if record.action not in RESTORES:
            continue
        restore = next((r for r in done if r.node == record.node and r.action == RESTORES[record.action]
                        and r.at_s >= record.at_s), None)
        end = restore.at_s if restore else duration
        label = f"{record.action} {record.node}"
        out += [(f"{label}: before", 0.0, record.at_s), (f"{label}: during", record.at_s, end)]
        if restore:
            out.append((f"{label}: after", end, duration))
    return out
