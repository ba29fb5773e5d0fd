"""Every node, every second, on the run's clock: whether it answers (faults: lost at t, back at t), and where a
write's time goes on disk — bytes the mariadbd process wrote (/proc/<pid>/io), InnoDB data and log fsyncs, binlog
commits and group commits — plus the host's iowait. (MariaDB 10.11 counts InnoDB's data and redo fsyncs together
in Innodb_data_fsyncs; the binlog's own fsyncs have no counter, sync_binlog=1 makes one per group commit.)
Rows go to io.csv as per-second rates as they are taken."""

from __future__ import annotations

import csv
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from ..core import sql
from ..core.config import Settings
from .counters import process_write_bytes

SAMPLE_INTERVAL = 1.0
IO_STATUS = ("Innodb_data_fsyncs", "Innodb_log_writes", "Binlog_commits", "Binlog_group_commits")
IO_COLUMNS = ["elapsed_s", "node", "up", "write_kb_per_s", "innodb_fsyncs_per_s", "redo_log_writes_per_s",
              "binlog_commits_per_s", "binlog_group_commits_per_s", "host_iowait_pct"]


class NodeSampler:
    """One thread: per node a persistent admin connection (reopened after a loss), sampled every second."""

    def __init__(self, settings: Settings, path: Path, clock_zero: float,
                 pid_of: Callable[[str], int | None]) -> None:
        self.settings = settings
        self.path = path
        self.zero = clock_zero
        self.pid_of = pid_of
        self.faults: list[dict[str, Any]] = []
        self.rows: list[dict[str, Any]] = []  # io.csv's rows, as written
        self.planned: set[str] = set()  # nodes a planned fault takes down: their loss does not fail the run
        self._conns: dict[str, Any] = {}
        self._prev: dict[str, tuple[float, dict[str, float], int | None]] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=10)
        for conn in self._conns.values():
            try:
                conn.close()
            except Exception:  # noqa: BLE001 — closing a dead connection
                pass

    def elapsed(self) -> float:
        return round(time.monotonic() - self.zero, 3)

    def open_faults(self) -> list[dict[str, Any]]:
        with self._lock:
            return [f for f in self.faults if f["back_at_s"] is None]

    def _loop(self) -> None:
        with open(self.path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=IO_COLUMNS)
            writer.writeheader()
            cpu_prev = psutil.cpu_times()
            while not self._stop.wait(SAMPLE_INTERVAL - ((time.monotonic() - self.zero) % SAMPLE_INTERVAL)):
                cpu_now = psutil.cpu_times()
                span = sum(cpu_now) - sum(cpu_prev)
                iowait = 100.0 * (getattr(cpu_now, "iowait", 0) - getattr(cpu_prev, "iowait", 0)) / span if span else 0
                cpu_prev = cpu_now
                for node in self.settings.nodes:
                    row = self._sample(node.name)
                    row["host_iowait_pct"] = round(iowait, 1)
                    writer.writerow(row)
                    self.rows.append(row)  # kept for a soak's windows (analysis/soak.cost_windows)
                f.flush()

    def _sample(self, name: str) -> dict[str, Any]:
        t = self.elapsed()
        row: dict[str, Any] = {"elapsed_s": t, "node": name, "up": 0}
        status = self._status(name)
        if status is None:
            self._lost(name, t)
            self._prev.pop(name, None)
            return row
        self._back(name, t)
        row["up"] = 1
        written = process_write_bytes(self.pid_of(name))
        prev = self._prev.get(name)
        self._prev[name] = (time.monotonic(), status, written)
        if prev is not None:
            span = max(1e-6, time.monotonic() - prev[0])
            for column, var in zip(IO_COLUMNS[4:8], IO_STATUS):
                row[column] = round((status.get(var, 0) - prev[1].get(var, 0)) / span, 1)
            if written is not None and prev[2] is not None:
                row["write_kb_per_s"] = round((written - prev[2]) / 1024 / span, 1)
        return row

    def _status(self, name: str) -> dict[str, float] | None:
        conn = self._conns.get(name)
        try:
            if conn is None:
                conn = sql.connect(self.settings.node(name), self.settings, timeout=2.0)
                self._conns[name] = conn
            with conn.cursor() as cur:
                cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN (%s, %s, %s, %s)", IO_STATUS)
                return {k: float(v) for k, v in sql.fetch_all(cur)}
        except (sql.MySQLError, OSError):
            self._conns.pop(name, None)
            return None

    def _lost(self, name: str, t: float) -> None:
        with self._lock:
            if any(f["node"] == name and f["back_at_s"] is None for f in self.faults):
                return
            self.faults.append({"node": name, "kind": "unreachable", "lost_at_s": t, "back_at_s": None,
                                "planned": name in self.planned})

    def _back(self, name: str, t: float) -> None:
        with self._lock:
            for f in self.faults:
                if f["node"] == name and f["back_at_s"] is None:
                    f["back_at_s"] = t


def describe_faults(faults: list[dict[str, Any]], t_start: float) -> list[str]:
    """'replica1 lost at 6.2 s, back at 9.0 s' (times from the attack's start)."""
    out = []
    for f in faults:
        lost = f["lost_at_s"] - t_start
        back = "not back" if f["back_at_s"] is None else f"back at {f['back_at_s'] - t_start:.1f} s"
        out.append(f"{f['node']} {'stopped on purpose' if f.get('planned') else 'lost'} at {lost:.1f} s, {back}")
    return out
