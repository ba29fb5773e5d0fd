"""Replication lag, measured two ways: from GTID positions every 10 ms (poslag.py: the figures a run reports, to
about 10 ms), and from a heartbeat row written on the master every REPLBENCH_HEARTBEAT_MS (100 ms) and read on each
replica as often (pt-heartbeat's method: the cross-check, and what tells a live replica from a stopped one while
the master writes nothing), plus Seconds_Behind_Master and the replication threads' state every second.

Heartbeat lag = the replica's clock minus the newest heartbeat timestamp it has applied (one box, one clock), so an
idle replica reads between 0 and one beat interval. Heartbeat writes run in their own GTID domain (MariaDB) and are
counted, so binlog figures per application write can leave them out.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from ..core import sql
from ..core.config import HEARTBEAT_DOMAIN_ID, META_SCHEMA, Settings
from ..core.stats import percentile
from .loops import Backoff, Loops
from .poslag import PositionLag

CSV_COLUMNS = ["elapsed_s", "replica", "heartbeat_lag_ms", "seconds_behind_master", "replicating"]
STATUS_INTERVAL = 1.0


class LagMonitor:
    """Heartbeat writer + per-replica readers (lag.csv) and the position sampler (positions.csv), until stopped."""

    def __init__(self, settings: Settings, path: Path, clock_zero: float) -> None:
        self.settings = settings
        self.path = path
        self.zero = clock_zero
        self.interval = settings.heartbeat_ms / 1000.0  # beat and read period: the floor of the lag figures
        self.beats = 0
        # compact per-replica series for the summary; every sample goes to lag.csv as it is taken (a soak of
        # hours keeps two floats per sample in memory, nothing else)
        self.lags: dict[str, list[tuple[float, float]]] = {r.name: [] for r in settings.replicas}
        self.behind: dict[str, list[tuple[float, int]]] = {r.name: [] for r in settings.replicas}
        self.not_replicating: set[str] = set()
        self.loops = Loops(path)
        self.positions = PositionLag(settings, path.with_name("positions.csv"), clock_zero)
        # each loop's pause before its next attempt: the heartbeat's ("master") and each replica reader's
        self.backoff = {n.name: Backoff(self.interval) for n in settings.nodes}

    def start(self) -> None:
        self.positions.start()
        self.loops.open(CSV_COLUMNS, rows_as_dicts=True)
        self.loops.start(self._beat_loop)
        for replica in self.settings.replicas:
            self.loops.start(self._read_loop, replica.name)

    def stop(self) -> None:
        self.loops.stop()
        self.positions.stop()

    def _elapsed(self) -> float:
        return round(time.monotonic() - self.zero, 3)

    def _connect(self, name: str) -> Any:
        """A connection to the node, or None while it does not answer (the loops retry every beat)."""
        try:
            conn = sql.connect(self.settings.node(name), self.settings, timeout=2.0)
        except (sql.MySQLError, OSError):
            return None
        if name == "master" and self.settings.flavour == "mariadb":
            with conn.cursor() as cur:
                cur.execute("SET SESSION gtid_domain_id = %s", (HEARTBEAT_DOMAIN_ID,))
        return conn

    def _beat_loop(self) -> None:
        conn = None
        backoff = self.backoff["master"]
        while not self.loops.stopped.is_set():
            conn = conn or self._connect("master")
            try:
                if conn is None:
                    raise OSError("not answering")
                with conn.cursor() as cur:
                    cur.execute(f"UPDATE {META_SCHEMA}.heartbeat SET ts = SYSDATE(6) WHERE id = 1")
                self.beats += 1
                pause = backoff.ok()
            except (sql.MySQLError, OSError):
                sql.close_quietly(conn)
                conn = None
                pause = backoff.failed()  # a master that is down: tried ever more rarely, up to once a second
            self.loops.stopped.wait(pause)
        sql.close_quietly(conn)

    def _read_loop(self, replica_name: str) -> None:
        conn = None
        next_status = 0.0
        backoff = self.backoff[replica_name]
        while not self.loops.stopped.is_set():
            sample: dict[str, Any] = {"elapsed_s": self._elapsed(), "replica": replica_name}
            conn = conn or self._connect(replica_name)
            try:
                if conn is None:
                    raise OSError("not answering")
                with conn.cursor() as cur:
                    cur.execute(f"SELECT TIMESTAMPDIFF(MICROSECOND, ts, SYSDATE(6)) FROM {META_SCHEMA}.heartbeat "
                                "WHERE id = 1")
                    sample["heartbeat_lag_ms"] = round(cur.fetchone()[0] / 1000.0, 1)
                    if time.monotonic() >= next_status:
                        next_status = time.monotonic() + STATUS_INTERVAL
                        state = sql.replica_threads(cur, self.settings.flavour)
                        sample["seconds_behind_master"] = state.get("lag")
                        replicating = state.get("io") == "Yes" and state.get("sql") == "Yes"
                        sample["replicating"] = int(replicating)
                        if not replicating:
                            self.not_replicating.add(replica_name)
                pause = backoff.ok()
            except (sql.MySQLError, OSError):
                sample["replicating"] = 0
                self.not_replicating.add(replica_name)
                sql.close_quietly(conn)
                conn = None
                pause = backoff.failed()  # a replica that is down: tried ever more rarely, up to once a second
            self._record(sample)
            self.loops.stopped.wait(pause)
        sql.close_quietly(conn)

    def _record(self, sample: dict[str, Any]) -> None:
        name, t = sample["replica"], sample["elapsed_s"]
        with self.loops.lock:
            self.loops.writer.writerow(sample)
            if sample.get("heartbeat_lag_ms") is not None:
                self.lags[name].append((t, sample["heartbeat_lag_ms"]))
            if sample.get("seconds_behind_master") is not None:
                self.behind[name].append((t, sample["seconds_behind_master"]))

    def summarize(self, start: float, end: float) -> dict[str, dict[str, Any]]:
        """Per replica within [start, end]: lag p50/p99/max/mean (ms) and its growth from GTID positions (`method`
        says which; the heartbeat's where no position was read), the heartbeat's p50/p99/max beside them, and the
        highest Seconds_Behind_Master."""
        out: dict[str, dict[str, Any]] = {}
        for name in sorted(self.lags):
            beats = [(t, v) for t, v in self.lags[name] if start <= t <= end]
            sbm = [v for t, v in self.behind[name] if start <= t <= end]
            points = self.positions.series(name, start, end) or beats
            lags = [v for _, v in points]
            out[name] = {"method": "gtid positions" if points is not beats else "heartbeat",
                         "samples": len(lags), "p50_ms": percentile(lags, 50), "p99_ms": percentile(lags, 99),
                         "max_ms": max(lags) if lags else None,
                         "mean_ms": round(statistics.fmean(lags), 1) if lags else None,
                         "heartbeat_p50_ms": percentile([v for _, v in beats], 50),
                         "heartbeat_p99_ms": percentile([v for _, v in beats], 99),
                         "heartbeat_max_ms": max((v for _, v in beats), default=None),
                         "max_seconds_behind_master": max(sbm) if sbm else None,
                         "growth_s_per_s": growth(points),
                         **split_figures(self.positions.split(name, start, end), out_mean=statistics.fmean(lags)
                                         if lags and points is not beats else None)}
        return out

    def floor_ms(self, start: float, end: float) -> float:
        """What the lag figures cannot resolve: the position reads' achieved interval, else the heartbeat's."""
        return self.positions.floor_ms(start, end) or 1000 * self.interval

    def settled_after(self, t0: float, threshold_ms: float | None = None) -> dict[str, float | None]:
        """Per replica: seconds after t0 until its lag was first back under the threshold (twice the floor by
        default); None if it never was while the monitor ran."""
        end = time.monotonic() - self.zero
        threshold_ms = 2 * self.floor_ms(0.0, end) if threshold_ms is None else threshold_ms
        out: dict[str, float | None] = {}
        for name, beats in sorted(self.lags.items()):
            series = self.positions.series(name, t0, end) or beats
            hit = next((t for t, v in series if t >= t0 and v <= threshold_ms), None)
            out[name] = None if hit is None else round(hit - t0, 3)
        return out


def split_figures(split: list[tuple[float, float, float]], out_mean: float | None) -> dict[str, Any]:
    """The lag split by replication thread, from the reads that read both positions: the share not yet received
    (the IO side: the master's position against what the replica received) and received but not applied (the SQL
    thread's). The means add up to the lag's mean exactly (the samples' shares applied to it); the p99s are each
    share's own."""
    if not split or out_mean is None:
        return {}
    total = sum(t for _, t, _ in split)
    io_share = sum(i for _, _, i in split) / total if total > 0 else 0.0
    io_mean = round(out_mean * io_share, 1)
    return {"split_samples": len(split), "io_mean_ms": io_mean, "sql_mean_ms": round(round(out_mean, 1) - io_mean, 1),
            "io_p99_ms": percentile([i for _, _, i in split], 99),
            "sql_p99_ms": percentile([t - i for _, t, i in split], 99)}


def growth(points: list[tuple[float, float]]) -> float | None:
    """The least-squares slope of lag (ms) over time (s), in seconds of lag per second: > 0 means falling behind."""
    import numpy as np  # imported where a summary is computed, not by every command's start

    if len(points) < 3 or len({t for t, _ in points}) < 2:
        return None
    t, v = np.array(points, dtype=float).T
    return round(float(np.polyfit(t, v, 1)[0]) / 1000.0, 3)
