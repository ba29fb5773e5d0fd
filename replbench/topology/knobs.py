"""The replication settings a DBA weighs, as knobs of a run: each knob's MariaDB variable, the nodes it is set on,
its allowed values, its reference default, and whether replication must be stopped while it changes.

Every run applies the whole set (a knob not named gets its reference value, so a run never inherits another
run's setting), reads every variable back from every node, and records requested and actual values. `reset`
applies the reference set too. Values are case-insensitive.

| knob | variable | nodes | needs |
|---|---|---|---|
| binlog_format | binlog_format | all | – (new sessions: the app is restarted after) |
| binlog_row_image | binlog_row_image | all | – |
| binlog_annotate | binlog_annotate_row_events | all | – |
| binlog_compress / _min_len | log_bin_compress / log_bin_compress_min_len | all | – |
| sync_binlog | sync_binlog | all | – |
| flush_log_at_trx_commit | innodb_flush_log_at_trx_commit | all | – |
| parallel_threads / _mode | slave_parallel_threads / slave_parallel_mode | replicas | STOP SLAVE (all threads) |
| semi_sync, semi_sync_timeout_ms | rpl_semi_sync_master_enabled/_wait_point/_timeout | master | – |
|  | rpl_semi_sync_slave_enabled | replicas | IO thread restart |
| buffer_pool | innodb_buffer_pool_size | all | – (resized online, waited for; MySQL 8 the same since 5.7) |

buffer_pool's reference is the pool the nodes start with (REPLBENCH_BUFFER_POOL, 4G), so a run that shrinks it
leaves the next plain run at the reference again; a topology file's servers keep their own pool unless a run
names one. InnoDB rounds a size up to a multiple of innodb_buffer_pool_chunk_size (128M here).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, fields
from typing import Any

from ..core import sql
from ..core.config import Node, ReplbenchError, Settings
from ..core.results import KnobSetting
from .nodes import wait_replicating

BINLOG_FORMATS = ("ROW", "STATEMENT", "MIXED")
ROW_IMAGES = ("FULL", "MINIMAL", "NOBLOB")
ON_OFF = ("on", "off")
PARALLEL_MODES = ("none", "minimal", "conservative", "optimistic", "aggressive")
SEMI_SYNC = ("off", "after_sync", "after_commit")
COMPRESS_MIN_LEN = (10, 1024)
MAX_PARALLEL_THREADS = 256
SEMI_SYNC_CLIENTS_WAIT = 10.0  # seconds for both replicas to reconnect as semi-sync clients
POOL_SIZES = (32 << 20, 1 << 40)  # the smallest and largest buffer pool a run may ask for (bytes)
POOL_RESIZE_WAIT = 300.0  # seconds for a node to finish an online resize (shrinking evicts and flushes pages)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class KnobError(ReplbenchError):
    """A node refused a knob, or replication did not come back after a change."""


@dataclass(frozen=True)
class Knob:
    """One knob: its CLI spelling, what it sets, where, the values it takes and its help."""

    name: str
    help: str
    choices: tuple[str, ...] = ()
    low: int | None = None
    high: int | None = None
    size: bool = False  # a byte size such as 128M or 4G ("" = the reference)

    def typed(self, raw: Any) -> Any:
        """User input (a flag, a study file's value) typed as the knob's field and normalised (case)."""
        if isinstance(getattr(Knobs, self.name), int):
            try:
                return int(raw)
            except (TypeError, ValueError):
                raise ValueError(f"--{_flag(self.name)} must be a whole number; got {raw!r}") from None
        text = str(raw).strip()
        return text.upper() if self.name in ("binlog_format", "binlog_row_image") or self.size else text.lower()

    def check(self, value: Any) -> None:
        """The knob's own values (its choices, range or sizes); a combination of knobs is Knobs' to check."""
        if self.size and value:
            low, high = POOL_SIZES
            if not low <= parse_size(value, f"--{_flag(self.name)}") <= high:
                raise ValueError(f"--{_flag(self.name)} must be from 32M to 1T; got {value}")
        if self.choices and str(value) not in self.choices:
            raise ValueError(f"--{_flag(self.name)} must be one of {', '.join(self.choices)}; got {value!r}")
        if self.low is not None and not (self.low <= int(value) <= self.high):  # type: ignore[operator]
            raise ValueError(f"--{_flag(self.name)} must be from {self.low} to {self.high}; got {value}")

    def value(self, raw: Any) -> Any:
        """User input as the knob's checked value (ValueError naming the flag when it is not one)."""
        typed = self.typed(raw)
        self.check(typed)
        return typed


KNOB_LIST = (
    Knob("binlog_format", "binlog_format on every node", BINLOG_FORMATS),
    Knob("binlog_row_image", "binlog_row_image on every node", ROW_IMAGES),
    Knob("binlog_annotate", "binlog_annotate_row_events: the statement text in ROW binlogs", ON_OFF),
    Knob("binlog_compress", "log_bin_compress: zlib per binlog event", ON_OFF),
    Knob("binlog_compress_min_len", "log_bin_compress_min_len: smallest event compressed (bytes)", (),
         *COMPRESS_MIN_LEN),
    Knob("sync_binlog", "sync_binlog: fsync the binlog every N commits (0 = never)", (), 0, 1_000_000),
    Knob("flush_log_at_trx_commit", "innodb_flush_log_at_trx_commit", ("0", "1", "2")),
    Knob("parallel_threads", "slave_parallel_threads on the replicas (replication is restarted)", (), 0,
         MAX_PARALLEL_THREADS),
    Knob("parallel_mode", "slave_parallel_mode on the replicas (needs --parallel-threads > 0)", PARALLEL_MODES),
    Knob("semi_sync", "semi-synchronous replication: rpl_semi_sync_master_wait_point, or off", SEMI_SYNC),
    Knob("semi_sync_timeout_ms", "rpl_semi_sync_master_timeout: ms before falling back to async", (), 0,
         3_600_000),
    Knob("buffer_pool", "innodb_buffer_pool_size on every node, resized online (e.g. 128M, 1G)", size=True),
)
KNOBS = {k.name: k for k in KNOB_LIST}


@dataclass(frozen=True)
class Knobs:
    """A whole setting of the knobs; the defaults are the reference setup (mysql/*.cnf)."""

    binlog_format: str = "ROW"
    binlog_row_image: str = "FULL"
    binlog_annotate: str = "on"
    binlog_compress: str = "off"
    binlog_compress_min_len: int = 256
    sync_binlog: int = 1
    flush_log_at_trx_commit: int = 1
    parallel_threads: int = 0
    parallel_mode: str = "optimistic"
    semi_sync: str = "off"
    semi_sync_timeout_ms: int = 10_000
    buffer_pool: str = ""  # "": the pool the nodes start with (REPLBENCH_BUFFER_POOL)

    def __post_init__(self) -> None:
        for f in fields(self):
            KNOBS[f.name].check(getattr(self, f.name))
        if self.parallel_threads == 0 and self.parallel_mode != Knobs.parallel_mode:
            raise ValueError("--parallel-mode needs --parallel-threads above 0 (with 0 threads there is no "
                             "parallel apply to configure)")
        if self.semi_sync == "off" and self.semi_sync_timeout_ms != Knobs.semi_sync_timeout_ms:
            raise ValueError("--semi-sync-timeout-ms needs --semi-sync after_sync or after_commit")

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> Knobs:
        """Knobs from user input (CLI or a study file): names checked, values normalised and typed."""
        unknown = sorted(set(values) - set(KNOBS))
        if unknown:
            raise ValueError(f"unknown knob {', '.join(unknown)}; knobs: {', '.join(KNOBS)}")
        return cls(**{name: KNOBS[name].typed(raw) for name, raw in values.items() if raw is not None})

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def changed(self) -> dict[str, Any]:
        """The knobs that differ from the reference setup (for headers and labels)."""
        ref = Knobs()
        return {k: v for k, v in self.as_dict().items() if getattr(ref, k) != v}

    def describe(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.changed().items()) or "reference settings"


def recorded(setting: KnobSetting | None) -> Knobs:
    """A setting as a results file recorded it (a study cell's, a sweep's, a run's meta.json) as the Knobs it was,
    each knob read by its name and a knob it does not record at the reference's value (this class's defaults, the
    one place they are written). Every recorded setting parses (1,525 committed ones, checked 1 Dec 2026)."""
    return Knobs.from_values(setting.given() if setting is not None else {})


def _flag(name: str) -> str:
    return name.replace("_", "-")


def parse_size(text: str, what: str = "size") -> int:
    """'128M', '4G', '1073741824' -> bytes (K, M, G, T are powers of 1024, as MariaDB reads them)."""
    value = str(text).strip().upper().removesuffix("B")
    number, unit = (value[:-1], value[-1]) if value[-1:] in _UNITS and value[-1:] else (value, "")
    if not number.isdigit():
        raise ValueError(f"{what} must be a size such as 128M or 4G; got {text!r}")
    return int(number) * _UNITS[unit]


def pool_wanted(settings: Settings, knobs: Knobs) -> int | None:
    """The pool a run asks for, in bytes: the knob's, else the reference the nodes start with (None for a
    topology file's servers, whose pool is theirs unless a run names one)."""
    if knobs.buffer_pool:
        return parse_size(knobs.buffer_pool)
    return None if settings.external else parse_size(settings.buffer_pool)


def _on(value: str) -> str:
    return "ON" if value == "on" else "OFF"


def all_node_variables(knobs: Knobs) -> dict[str, Any]:
    return {"binlog_format": knobs.binlog_format, "binlog_row_image": knobs.binlog_row_image,
            "binlog_annotate_row_events": _on(knobs.binlog_annotate), "log_bin_compress": _on(knobs.binlog_compress),
            "log_bin_compress_min_len": knobs.binlog_compress_min_len, "sync_binlog": knobs.sync_binlog,
            "innodb_flush_log_at_trx_commit": knobs.flush_log_at_trx_commit}


def master_variables(knobs: Knobs) -> dict[str, Any]:
    on = knobs.semi_sync != "off"
    out: dict[str, Any] = {"rpl_semi_sync_master_enabled": "ON" if on else "OFF",
                           "rpl_semi_sync_master_timeout": knobs.semi_sync_timeout_ms}
    if on:
        out["rpl_semi_sync_master_wait_point"] = knobs.semi_sync.upper()
    return out


def replica_variables(knobs: Knobs) -> dict[str, Any]:
    # the master side of semi-sync stays off on replicas: with it on, their apply would wait for ACKs
    return {"slave_parallel_threads": knobs.parallel_threads, "slave_parallel_mode": knobs.parallel_mode,
            "rpl_semi_sync_slave_enabled": "ON" if knobs.semi_sync != "off" else "OFF",
            "rpl_semi_sync_master_enabled": "OFF"}


READ_BACK = ("innodb_buffer_pool_size", "binlog_format", "binlog_row_image", "binlog_annotate_row_events",
             "log_bin_compress",
             "log_bin_compress_min_len", "sync_binlog", "innodb_flush_log_at_trx_commit", "slave_parallel_threads",
             "slave_parallel_mode", "rpl_semi_sync_master_enabled", "rpl_semi_sync_master_wait_point",
             "rpl_semi_sync_master_timeout", "rpl_semi_sync_slave_enabled")


def apply(settings: Settings, knobs: Knobs, only: tuple[Node, ...] | None = None) -> dict[str, dict[str, Any]]:
    """Set every knob on the nodes it belongs to (`only`: these nodes alone, the others' threads left as they are);
    restart the replica threads a change needs; returns what every node reports afterwards (variable -> value). A
    refused value raises KnobError naming the node."""

    flavour = settings.flavour
    for node in settings.nodes if only is None else only:
        wanted = dict(all_node_variables(knobs))
        wanted.update(master_variables(knobs) if node.role == "master" else replica_variables(knobs))
        with sql.admin(node, settings) as cur:
            current = _read(cur, wanted, flavour)
            restart_all = node.role == "replica" and any(
                str(current.get(v)).lower() != str(wanted[v]).lower()
                for v in ("slave_parallel_threads", "slave_parallel_mode"))
            restart_io = node.role == "replica" and str(current.get("rpl_semi_sync_slave_enabled")) != \
                str(wanted["rpl_semi_sync_slave_enabled"])
            if restart_all:
                cur.execute(sql.stop_replica_sql(flavour))
            try:
                for variable, value in wanted.items():
                    if str(current.get(variable)).lower() == str(value).lower():
                        continue
                    statement = sql.set_global_sql(flavour, variable)
                    if statement is None:
                        raise KnobError(f"{node.name} cannot set {variable} = {value}: no such variable in "
                                        f"{flavour}")
                    try:
                        cur.execute(statement, (mysql_value(flavour, variable, value),))
                    except sql.MySQLError as exc:
                        raise KnobError(f"{node.name} refused {variable} = {value}: {exc.args[-1]}") from exc
                if restart_io and not restart_all:
                    cur.execute(sql.stop_replica_sql(flavour) + " IO_THREAD")
                    cur.execute(sql.start_replica_sql(flavour) + " IO_THREAD")
            finally:
                if restart_all:
                    cur.execute(sql.start_replica_sql(flavour))
        if node.role == "replica" and (restart_all or restart_io):
            wait_replicating(node, settings)
    if knobs.semi_sync != "off":
        wait_semi_sync_clients(settings)
    pool = pool_wanted(settings, knobs)
    if pool is not None:
        resize_pools(settings, pool)
    return read_back(settings)


def resize_pools(settings: Settings, pool: int) -> None:
    """SET GLOBAL innodb_buffer_pool_size on every node whose pool differs, then wait for each background resize
    to finish (Innodb_buffer_pool_resize_status) so the run starts with the pool it records."""
    changing = []
    for node in settings.nodes:
        with sql.admin(node, settings) as cur:
            cur.execute("SELECT @@innodb_buffer_pool_size, @@innodb_buffer_pool_chunk_size")
            current, chunk = (int(v) for v in sql.one_row(cur))
            if current == _rounded(pool, chunk):
                continue
            try:
                cur.execute("SET GLOBAL innodb_buffer_pool_size = %s", (pool,))
            except sql.MySQLError as exc:
                raise KnobError(f"{node.name} refused innodb_buffer_pool_size = {pool}: {exc.args[-1]}") from exc
            changing.append((node, _rounded(pool, chunk)))
    forget_warm(settings, [node.name for node, _ in changing])
    deadline = time.monotonic() + POOL_RESIZE_WAIT
    for node, target in changing:
        while True:
            with sql.admin(node, settings) as cur:
                cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN "
                            "('Innodb_buffer_pool_resize_status', 'Innodb_buffer_pool_pages_total')")
                status: dict[str, Any] = dict(sql.fetch_all(cur))
                cur.execute("SELECT @@innodb_page_size")
                page = int(sql.one_row(cur)[0])
            text = str(status.get("Innodb_buffer_pool_resize_status") or "")
            pages = int(status.get("Innodb_buffer_pool_pages_total") or 0)
            if abs(pages * page - target) < target * POOL_PAGES_SLACK and not _resizing(text):
                break
            if time.monotonic() > deadline:
                raise KnobError(f"{node.name} did not finish resizing its buffer pool to {target >> 20}M within "
                                f"{POOL_RESIZE_WAIT:g} s (it says: {text or 'nothing'})")
            time.sleep(0.2)


def forget_warm(settings: Settings, names: list[str]) -> None:
    """A resized pool no longer holds what warm-up read into it: drop those nodes' marks, so the next run warms
    them again (a pool shrunk and grown back holds little of the data)."""
    if not names or not settings.warm_marker.exists():
        return
    try:
        marks = json.loads(settings.warm_marker.read_text())
    except (OSError, ValueError):
        return
    kept = {k: v for k, v in marks.items() if k.split(":", 1)[0] not in names}
    settings.warm_marker.write_text(json.dumps(kept, indent=2) + "\n")


POOL_CHUNK_MAX = 1 << 30  # the largest rounding a chunk size can add to a pool (MariaDB's chunk is 128M)
POOL_PAGES_SLACK = 0.05  # a pool's pages cover its size less the chunks' own descriptors


def _resizing(status: str) -> bool:
    text = status.lower()
    return bool(text) and "completed" not in text and "finished" not in text


def _rounded(size: int, chunk: int) -> int:
    """The size InnoDB will take: a multiple of the chunk size, at least the one asked for."""
    return size if chunk <= 0 else -(-size // chunk) * chunk


def mysql_value(flavour: str, variable: str, value: Any) -> Any:
    """MySQL 8 has no parallel mode: any mode but none keeps the commit order (replica_preserve_commit_order)."""
    if flavour != "mariadb" and variable == "slave_parallel_mode":
        return "OFF" if value == "none" else "ON"
    return value


def _read(cur: Any, variables: Any, flavour: str = "mariadb") -> dict[str, Any]:
    """Variables by their MariaDB names, whatever the flavour spells them."""
    spelled = {sql.variable(flavour, v): v for v in variables if sql.variable(flavour, v)}
    cur.execute("SHOW GLOBAL VARIABLES WHERE Variable_name IN (" + ",".join(["%s"] * len(spelled)) + ")",
                tuple(spelled))
    return {spelled[name]: value for name, value in cur.fetchall() if name in spelled}


def read_back(settings: Settings) -> dict[str, dict[str, Any]]:
    """Every knob variable as each node reports it (None for a node that does not answer)."""
    out: dict[str, dict[str, Any]] = {}
    for node in settings.nodes:
        try:
            with sql.admin(node, settings) as cur:
                out[node.name] = _read(cur, READ_BACK, settings.flavour)
        except sql.MySQLError:
            out[node.name] = {}
    return out


def wait_semi_sync_clients(settings: Settings) -> int:
    """Wait until every replica is a semi-sync client of the master (their IO threads reconnected)."""
    deadline = time.monotonic() + SEMI_SYNC_CLIENTS_WAIT
    clients = 0
    while time.monotonic() < deadline:
        with sql.admin(settings.master, settings) as cur:
            cur.execute("SHOW GLOBAL STATUS LIKE %s",
                        (sql.status_name(settings.flavour, "Rpl_semi_sync_master_clients"),))
            row = sql.fetch_one(cur)
        clients = int(row[1]) if row else 0
        if clients >= len(settings.replicas):
            return clients
        time.sleep(0.2)
    raise KnobError(f"semi-sync is on but only {clients} of {len(settings.replicas)} replicas connected as "
                    f"semi-sync clients within {SEMI_SYNC_CLIENTS_WAIT:g} s")


def mismatches(knobs: Knobs, readback: dict[str, dict[str, Any]], settings: Settings | None = None) -> list[str]:
    """Variables a node reports with another value than requested (never ignored silently); the buffer pool is
    compared in bytes, allowing InnoDB's rounding up to a whole chunk."""
    out = []
    pool = pool_wanted(settings, knobs) if settings is not None else \
        (parse_size(knobs.buffer_pool) if knobs.buffer_pool else None)
    for name, values in readback.items():
        got = values.get("innodb_buffer_pool_size")
        if pool is not None and got is not None and not pool <= int(got) < pool + POOL_CHUNK_MAX:
            out.append(f"{name} innodb_buffer_pool_size={got} (requested {pool})")
        role = "master" if name == "master" else "replica"
        wanted = dict(all_node_variables(knobs))
        wanted.update(master_variables(knobs) if role == "master" else replica_variables(knobs))
        for variable, value in wanted.items():
            if variable in values and str(values[variable]).lower() != str(value).lower():
                out.append(f"{name} {variable}={values[variable]} (requested {value})")
    return out
