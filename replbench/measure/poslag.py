"""Replication lag from GTID positions, to about 10 ms: the master's position is read every POSITION_INTERVAL and
the moment each new transaction was first seen is kept; each replica's applied position is read as often. A
replica's lag at a moment is how long ago the master first showed the oldest transaction the replica has not
applied yet (0 once it has applied everything the master had shown). Every GTID domain counts, the heartbeat's too,
so a replica that applies nothing while the master writes only heartbeats still shows its lag.

Nothing is written to measure it: a 10 ms heartbeat would add 100 fsynced transactions a second to the master and
to every replica (and as many reads from the harness), and the binlog, fsync and CPU figures per write would carry
them. Reading a position costs a node about 45 µs of CPU; the harness pays about 240 µs per read with its thread's
wake-ups (sql.reader, PyMySQL; measured on the reference box): 100 reads a second of three nodes is about 0.5 % of
a core on each node and 7 % on the harness, which has its own CPU group. Both run through the idle window too, so
they are part of the idle cost a run subtracts.

Its floor: a transaction is seen up to one interval after it commits, and a replica is read once per interval, so
lag below about one interval is not resolved; the interval the samplers actually achieved (median) is reported.
The samples go to positions.csv: the master's position when it changed, each replica's position when it changed
and its lag at every read.
"""

from __future__ import annotations

import bisect
import statistics
import threading
import time
from array import array
from pathlib import Path
from typing import Any

from ..core import sql
from ..core.config import POSITION_INTERVAL, Settings
from .loops import Backoff, Loops

# POSITION_INTERVAL (core/config): seconds between two reads of a node's position, the lag figures' floor

# every RECEIVED_EVERY-th read of a replica also reads what it has received (its IO thread's position), for the
# lag's split: a status statement costs the harness about 0.28 ms against 0.03 for one variable, so 20 times a
# second, not 100 (docs/metrics.md, "Lag split by thread")
RECEIVED_EVERY = 5
CSV_COLUMNS = ["elapsed_s", "node", "position", "lag_ms", "received", "io_lag_ms"]


def position_sql(flavour: str, role: str) -> str:
    """The statement that reads a node's position: what the master has written, what a replica has applied."""
    if flavour != "mariadb":
        return "SELECT @@GLOBAL.gtid_executed"
    return "SELECT @@GLOBAL.gtid_binlog_pos" if role == "master" else "SELECT @@GLOBAL.gtid_slave_pos"


def received_sql(flavour: str) -> str:
    """The statement that reads what a replica's IO thread has received (MariaDB: SHOW SLAVE STATUS's Gtid_IO_Pos;
    MySQL 8: performance_schema's received transaction set)."""
    if flavour != "mariadb":
        return "SELECT RECEIVED_TRANSACTION_SET FROM performance_schema.replication_connection_status"
    return "SHOW SLAVE STATUS"


def received_text(flavour: str, cursor: Any) -> str:
    """The received position from the row received_sql() returned ("" when the replica has no replication)."""
    row = cursor.fetchone()
    if row is None:
        return ""
    if flavour != "mariadb":
        return str(row[0] or "")
    names = [d[0] for d in cursor.description]
    return str(row[names.index("Gtid_IO_Pos")] or "") if "Gtid_IO_Pos" in names else ""


def parse_position(flavour: str, text: str) -> dict[str, int]:
    """The highest sequence number per stream: a MariaDB domain ('0-1-100,99-1-7' -> {'0': 100, '99': 7}) or a
    MySQL source uuid ('u1:1-5:7-9,\\nu2:1-3' -> {'u1': 9, 'u2': 3})."""
    out: dict[str, int] = {}
    for part in (text or "").replace("\n", "").split(","):
        part = part.strip()
        if not part:
            continue
        if flavour == "mariadb":
            pieces = part.split("-")
            if len(pieces) == 3 and all(p.isdigit() for p in pieces):
                out[pieces[0]] = max(out.get(pieces[0], 0), int(pieces[2]))
            continue
        uuid, _, ranges = part.partition(":")
        ends = [int(r.rpartition("-")[2]) for r in ranges.split(":") if r.rpartition("-")[2].isdigit()]
        if ends:
            out[uuid] = max(out.get(uuid, 0), *ends)
    return out


class History:
    """Per stream, the sequence numbers the master showed and the moment each was first seen (compact arrays: a
    soak of hours keeps two numbers per change of position)."""

    def __init__(self) -> None:
        self.seqs: dict[str, array] = {}
        self.times: dict[str, array] = {}

    def add(self, t: float, position: dict[str, int]) -> bool:
        changed = False
        for stream, seq in position.items():
            seqs = self.seqs.setdefault(stream, array("q"))
            if not seqs or seq > seqs[-1]:
                seqs.append(seq)
                self.times.setdefault(stream, array("d")).append(t)
                changed = True
        return changed

    def lag_at(self, t: float, applied: dict[str, int]) -> float:
        """Seconds since the master first showed the oldest transaction not in `applied` (0: none)."""
        worst = 0.0
        for stream, seqs in self.seqs.items():
            i = bisect.bisect_right(seqs, applied.get(stream, 0))  # the first seq the replica has not applied
            if i < len(seqs):
                worst = max(worst, t - self.times[stream][i])
        return worst


class PositionLag:
    """The master's and each replica's position every POSITION_INTERVAL, and each replica's lag, until stopped."""

    def __init__(self, settings: Settings, path: Path, clock_zero: float,
                 interval: float = POSITION_INTERVAL) -> None:
        self.settings = settings
        self.path = path
        self.zero = clock_zero
        self.interval = interval
        self.history = History()
        self.lags: dict[str, tuple[array, array]] = {r.name: (array("d"), array("d")) for r in settings.replicas}
        # at the reads that also read the received position: (time, total lag, lag not yet received) per replica
        self.splits: dict[str, tuple[array, array, array]] = {
            r.name: (array("d"), array("d"), array("d")) for r in settings.replicas}
        self.reads: dict[str, array] = {n.name: array("d") for n in settings.nodes}  # when each read was taken
        self.master_seen = threading.Event()  # a replica's lag means something once the master was read
        self.backoff = {n.name: Backoff(interval) for n in settings.nodes}
        self.loops = Loops(path)

    def start(self) -> None:
        self.loops.open(CSV_COLUMNS)
        for node in self.settings.nodes:
            self.loops.start(self._loop, node.name, node.role)

    def stop(self) -> None:
        self.loops.stop()

    def _loop(self, name: str, role: str) -> None:
        statement = position_sql(self.settings.flavour, role)
        conn = cur = None
        last = ""
        next_at = time.monotonic()
        backoff = self.backoff[name]
        while not self.loops.stopped.is_set():
            try:
                if conn is None:
                    conn = sql.reader(self.settings.node(name), self.settings)
                    cur = conn.cursor()
                assert cur is not None  # opened with conn, and dropped with it
                cur.execute(statement)
                text = str(cur.fetchone()[0] or "")
                t = time.monotonic() - self.zero
                received = None
                if role == "replica" and backoff.reads % RECEIVED_EVERY == 0:
                    cur.execute(received_sql(self.settings.flavour))
                    received = received_text(self.settings.flavour, cur)
                self._record(name, role, t, text, text != last, received)
                last = text
                pause = backoff.ok()
            except (sql.ReaderError, OSError):
                sql.close_quietly(conn)
                conn = cur = None
                pause = backoff.failed()  # a node that is down: retried ever more rarely, up to once a second
            next_at = max(next_at + pause, time.monotonic())  # a steady cadence; never a burst to catch up
            if pause > self.interval:
                self.loops.stopped.wait(max(0.0, next_at - time.monotonic()))  # stop() need not wait it out
            else:
                time.sleep(max(0.0, next_at - time.monotonic()))  # cheaper than an Event's timed wait, 100 a second
        sql.close_quietly(conn)

    def _record(self, name: str, role: str, t: float, text: str, changed: bool, received: str | None = None) -> None:
        position = parse_position(self.settings.flavour, text)
        with self.loops.lock:
            self.reads[name].append(t)
            if role == "master":
                self.history.add(t, position)
                self.master_seen.set()
                if changed:
                    self.loops.writer.writerow([f"{t:.4f}", name, text, "", "", ""])
                return
            if not self.master_seen.is_set():
                return
            lag_ms = round(1000 * self.history.lag_at(t, position), 1)
            times, values = self.lags[name]
            times.append(t)
            values.append(lag_ms)
            io_ms: float | str = ""
            if received:  # not yet received: the IO side's share, never more than the whole (read a moment later)
                io_ms = min(lag_ms, round(1000 * self.history.lag_at(t, parse_position(self.settings.flavour,
                                                                                        received)), 1))
                for series, value in zip(self.splits[name], (t, lag_ms, io_ms)):
                    series.append(value)
            self.loops.writer.writerow([f"{t:.4f}", name, text if changed else "", lag_ms, received or "", io_ms])

    def split(self, name: str, start: float, end: float) -> list[tuple[float, float, float]]:
        """(time, total lag ms, not yet received ms) at the reads within [start, end] that read both positions."""
        with self.loops.lock:
            times, totals, ios = self.splits[name]
            lo, hi = bisect.bisect_left(times, start), bisect.bisect_right(times, end)
            return list(zip(times[lo:hi], totals[lo:hi], ios[lo:hi]))

    def series(self, name: str, start: float, end: float) -> list[tuple[float, float]]:
        with self.loops.lock:
            times, values = self.lags[name]
            lo, hi = bisect.bisect_left(times, start), bisect.bisect_right(times, end)
            return list(zip(times[lo:hi], values[lo:hi]))

    def floor_ms(self, start: float | None = None, end: float | None = None) -> float | None:
        """The interval the reads actually achieved (the median gap between two reads of any node, within the
        window when given): lag below it is not resolved."""
        gaps: list[float] = []
        with self.loops.lock:
            for reads in self.reads.values():
                lo = 0 if start is None else bisect.bisect_left(reads, start)
                hi = len(reads) if end is None else bisect.bisect_right(reads, end)
                window = reads[lo:hi]
                gaps += [b - a for a, b in zip(window, window[1:])]
        return round(1000 * statistics.median(gaps), 1) if gaps else None
