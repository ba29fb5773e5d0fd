"""What a long run's stalls are made of, every node every second on the run's clock (soak runs): InnoDB's
checkpoint age (redo written since the last checkpoint: when it nears its maximum, InnoDB flushes hard), dirty
pages, the history list length (undo not yet purged), pages flushed per second, and the binlog file (a new one: a
rotation). Rows go to innodb.csv as they are taken, and are kept for the soak's analysis (analysis/soak.py)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..core import sql
from ..core.config import Settings
from .loops import Backoff, Loops

SAMPLE_INTERVAL = 1.0
COLUMNS = ["elapsed_s", "node", "checkpoint_age_mb", "checkpoint_max_age_mb", "dirty_pages", "history_length",
           "pages_flushed_per_s", "binlog_file", "rotations"]
# MariaDB's status variables for the columns; MySQL 8 has no status variable for two of them (INNODB_METRICS does)
MARIADB_STATUS = ("Innodb_checkpoint_age", "Innodb_checkpoint_max_age", "Innodb_buffer_pool_pages_dirty",
                  "Innodb_history_list_length", "Innodb_buffer_pool_pages_flushed")
MYSQL_METRICS = {"log_lsn_checkpoint_age": "Innodb_checkpoint_age",
                 "log_max_modified_age_async": "Innodb_checkpoint_max_age",
                 "trx_rseg_history_len": "Innodb_history_list_length"}


def status_sql(flavour: str) -> str:
    """The statement that reads the counters (as name, value rows) in the node's spelling."""
    if flavour == "mariadb":
        return "SHOW GLOBAL STATUS WHERE Variable_name IN (" + ", ".join(f"'{v}'" for v in MARIADB_STATUS) + ")"
    mapped = " ".join(f"WHEN '{metric}' THEN '{name}'" for metric, name in MYSQL_METRICS.items())
    return (f"SELECT CASE NAME {mapped} END, COUNT FROM information_schema.INNODB_METRICS WHERE NAME IN ("
            + ", ".join(f"'{m}'" for m in MYSQL_METRICS) + ") UNION ALL SELECT VARIABLE_NAME, VARIABLE_VALUE FROM "
            "performance_schema.global_status WHERE VARIABLE_NAME IN ('Innodb_buffer_pool_pages_dirty', "
            "'Innodb_buffer_pool_pages_flushed')")


class InnodbSampler:
    """One thread: each node's counters every second (a node that does not answer: backed off, its row left out)."""

    def __init__(self, settings: Settings, path: Path, clock_zero: float) -> None:
        self.settings = settings
        self.zero = clock_zero
        self.loops = Loops(path)
        self.rows: list[dict[str, Any]] = []
        self._state: dict[str, tuple[float, float, str, int]] = {}  # per node: time, pages flushed, file, rotations
        self._conns: dict[str, Any] = {}
        self.backoff = {n.name: Backoff(SAMPLE_INTERVAL, longest=10 * SAMPLE_INTERVAL) for n in settings.nodes}

    def start(self) -> None:
        self.loops.open(COLUMNS, rows_as_dicts=True)
        self.loops.start(self._loop)

    def stop(self) -> None:
        self.loops.stop()
        for conn in self._conns.values():
            sql.close_quietly(conn)

    def _loop(self) -> None:
        next_try = {n.name: 0.0 for n in self.settings.nodes}
        while not self.loops.stopped.wait(SAMPLE_INTERVAL - ((time.monotonic() - self.zero) % SAMPLE_INTERVAL)):
            for node in self.settings.nodes:
                if time.monotonic() >= next_try[node.name]:
                    next_try[node.name] = time.monotonic() + self._sample(node.name) - SAMPLE_INTERVAL

    def _sample(self, name: str) -> float:
        """Read one node and record its row; the pause its backoff asks for before the next read."""
        t = round(time.monotonic() - self.zero, 3)
        try:
            conn = self._conns.get(name) or sql.connect(self.settings.node(name), self.settings, timeout=2.0)
            self._conns[name] = conn
            with conn.cursor() as cur:
                cur.execute(status_sql(self.settings.flavour))
                status = {str(k): float(v) for k, v in sql.fetch_all(cur)}
                cur.execute("SHOW MASTER STATUS" if self.settings.flavour == "mariadb" else "SHOW BINARY LOG STATUS")
                row = sql.fetch_one(cur)
        except (sql.MySQLError, OSError):
            sql.close_quietly(self._conns.pop(name, None))
            return self.backoff[name].failed()
        self._record(name, t, status, str(row[0]) if row else "")
        return self.backoff[name].ok()

    def _record(self, name: str, t: float, status: dict[str, float], binlog_file: str) -> None:
        flushed = status.get("Innodb_buffer_pool_pages_flushed", 0.0)
        prev = self._state.get(name)
        rotations = (prev[3] if prev else 0) + int(bool(prev and binlog_file and binlog_file != prev[2]))
        row = {"elapsed_s": t, "node": name,
               "checkpoint_age_mb": round(status.get("Innodb_checkpoint_age", 0.0) / 2**20, 2),
               "checkpoint_max_age_mb": round(status.get("Innodb_checkpoint_max_age", 0.0) / 2**20, 2),
               "dirty_pages": int(status.get("Innodb_buffer_pool_pages_dirty", 0)),
               "history_length": int(status.get("Innodb_history_list_length", 0)),
               "pages_flushed_per_s": round((flushed - prev[1]) / max(1e-6, t - prev[0]), 1) if prev else "",
               "binlog_file": binlog_file, "rotations": rotations}
        self._state[name] = (t, flushed, binlog_file or (prev[2] if prev else ""), rotations)
        with self.loops.lock:
            self.rows.append(row)
            self.loops.writer.writerow(row)
