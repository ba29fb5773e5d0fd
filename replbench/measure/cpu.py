"""CPU sampling: per-group CPU every second (app, master, replica1, replica2, the vegeta attack process, the
harness — this process, which starts no helper beside vegeta — and the host), as % of one core; and each group's
resident memory every few seconds, so a long soak shows whether anything grows. Every row is on the run's clock
(the zero it is given).

Each group's CPU is the sum over its processes of user+system time, read with psutil. A process seen once keeps
its last reading after it exits (gunicorn workers, vegeta at the end), so totals never go backwards. Saved as
cpu.csv (and memory.csv); totals between two snapshots give CPU seconds per node, hence CPU-ms per request.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import psutil

from ..core.nodenames import nodes_in
from .loops import Loops

SAMPLE_INTERVAL = 1.0
GROUPS = ("app", "master", "replica1", "replica2", "vegeta", "harness")  # cpu.csv's columns (more replicas: after)
HOST_COLUMNS = ("host_busy", "host_steal")
MEMORY_EVERY = 10  # samples (seconds) between two rows of memory.csv
STEADY_TRIM = 0.1  # fraction of the attack cut at each end for the "steady part" means


def ordered_groups(names: Iterable[str]) -> list[str]:
    """The process groups among `names` in report order: app, master, replica1 … replicaN, vegeta, harness."""
    names = list(names)
    return [g for g in ("app", *nodes_in(names), "vegeta", "harness") if g in names]


def host_times() -> dict[str, float]:
    """Host CPU seconds: busy (all but idle, iowait and steal) and steal, summed over cores."""
    t = psutil.cpu_times()
    steal = getattr(t, "steal", 0.0)
    idle = t.idle + getattr(t, "iowait", 0.0)
    total = sum(t)
    return {"host_busy": total - idle - steal, "host_steal": steal}


def _pids(pids_of: Callable[[], list[int]]) -> list[int]:
    try:
        return pids_of()
    except Exception:  # a group's pid lookup must never kill the sampler
        return []


class CpuSampler:
    """Samples the CPU of process groups; groups map a name to a function returning that group's pids."""

    def __init__(self, groups: dict[str, Callable[[], list[int]]], path: Path, memory_path: Path | None = None,
                 clock_zero: float | None = None,
                 counters: dict[str, Callable[[], float | None]] | None = None) -> None:
        """counters: groups whose cumulative CPU seconds come from elsewhere (a node_exporter's host busy time);
        a group in neither mapping has no CPU figure at all (an empty cell in cpu.csv, n/a in the block)."""
        self.groups = groups
        self.counters = counters or {}
        self._counter_last: dict[str, float] = {}
        # every standard group keeps its column (an empty cell when nothing measures it), so cpu.csv's layout is
        # the same for every topology
        self.columns = list(GROUPS) + [g for g in [*groups, *self.counters] if g not in GROUPS]
        self.path = path
        self.memory_path = memory_path
        self.memory_rows: list[dict[str, float]] = []
        self._seen: dict[str, dict[int, float]] = {name: {} for name in groups}
        self._procs: dict[int, psutil.Process] = {}
        self.loops = Loops(path)  # its one thread (it writes cpu.csv and memory.csv itself)
        self.rows: list[dict[str, float]] = []
        self.started = time.monotonic() if clock_zero is None else clock_zero  # the run's clock: never reset

    def _proc(self, pid: int) -> psutil.Process | None:
        proc = self._procs.get(pid)
        if proc is None:
            try:
                proc = psutil.Process(pid)
            except psutil.NoSuchProcess:
                return None
            self._procs[pid] = proc
        return proc

    def totals(self) -> dict[str, float]:
        """Cumulative CPU seconds of each group (and of the host) now."""
        out: dict[str, float] = {}
        for name, pids_of in self.groups.items():
            seen = self._seen[name]
            for pid in _pids(pids_of):
                proc = self._proc(pid)
                if proc is None:
                    continue
                try:
                    t = proc.cpu_times()
                    seen[pid] = t.user + t.system
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    pass
            out[name] = sum(seen.values())
        for name, read in self.counters.items():
            try:
                value = read()
            except Exception:  # noqa: BLE001 — a remote source must never kill the sampler
                value = None
            if value is not None:
                self._counter_last[name] = value
            if name in self._counter_last:
                out[name] = self._counter_last[name]
        out.update(host_times())
        return out

    def memory_mb(self) -> dict[str, float]:
        """Resident memory of each group (live processes) and of this harness, in MiB."""
        out: dict[str, float] = {}
        for name, pids_of in self.groups.items():
            total = 0
            for pid in _pids(pids_of):
                proc = self._proc(pid)
                try:
                    total += proc.memory_info().rss if proc is not None else 0
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    pass
            out[name] = round(total / 2**20, 1)
        return out

    def _write_memory(self, writer: Any, elapsed: float) -> None:
        row = {"elapsed_s": round(elapsed, 3), **self.memory_mb()}
        self.memory_rows.append(row)
        writer.writerow(row.values())

    def start(self) -> None:
        self.loops.start(self._loop)

    def _loop(self) -> None:
        memory_file = open(self.memory_path, "w", newline="") if self.memory_path else None
        try:
            self._sample(memory_file)
        finally:
            if memory_file:
                memory_file.close()

    def _sample(self, memory_file: Any) -> None:
        memory = csv.writer(memory_file) if memory_file else None
        if memory:
            memory.writerow(["elapsed_s", *self.groups])
        with open(self.path, "w", newline="") as f:
            writer = csv.writer(f)
            columns = [*self.columns, *HOST_COLUMNS]
            writer.writerow(["elapsed_s", *columns])
            previous, previous_t = self.totals(), time.monotonic()
            samples = 0
            while not self.loops.stopped.wait(SAMPLE_INTERVAL - ((time.monotonic() - self.started) % SAMPLE_INTERVAL)):
                if memory and samples % MEMORY_EVERY == 0:
                    self._write_memory(memory, time.monotonic() - self.started)
                    memory_file.flush()
                samples += 1
                now_totals, now = self.totals(), time.monotonic()
                span = now - previous_t
                row = {"elapsed_s": round(now - self.started, 3)}
                row.update({c: round(100.0 * (now_totals[c] - previous[c]) / span, 1) for c in columns
                            if c in now_totals and c in previous})
                self.rows.append(row)
                writer.writerow([row["elapsed_s"], *(row.get(c, "") for c in columns)])
                f.flush()
                previous, previous_t = now_totals, now

    def stop(self) -> None:
        self.loops.stop()


def steady_means(rows: list[dict[str, float]], start: float, end: float) -> dict[str, float]:
    """Mean % of one core per column over the middle of [start, end] (the attack window, sampler clock)."""
    trim = (end - start) * STEADY_TRIM
    window = [r for r in rows if start + trim <= r["elapsed_s"] <= end - trim + 0.5]
    if not window:
        window = [r for r in rows if start <= r["elapsed_s"] <= end + 1.0]
    if not window:
        return {}
    columns = {k for r in window for k in r if k != "elapsed_s"}
    means = {}
    for c in sorted(columns):
        values = [r[c] for r in window if c in r]  # a remote source may miss a second: mean of what it gave
        means[c] = round(sum(values) / len(values), 1)
    return means


def per_second_within(rows: list[dict[str, float]], start: float, end: float) -> dict[str, list[float]]:
    """Each column's CPU seconds per second over the samples that lie wholly inside [start, end] (sampler clock;
    a sample covers the interval before its elapsed_s)."""
    inside = [r for r in rows if r["elapsed_s"] - SAMPLE_INTERVAL >= start - 0.05 and r["elapsed_s"] <= end]
    columns = {k for r in inside for k in r if k != "elapsed_s"}
    return {c: [r[c] / 100.0 for r in inside if r.get(c) is not None] for c in sorted(columns)}


def memory_summary(rows: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    """Per group: RSS MiB at the first and last sample of memory.csv, and the maximum."""
    if not rows:
        return {}
    groups = [k for k in rows[0] if k != "elapsed_s"]
    return {g: {"first": rows[0][g], "last": rows[-1][g], "max": max(r[g] for r in rows)} for g in groups}


def cpu_seconds(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: round(after[k] - before[k], 3) for k in after if k in before}


CALIBRATION_SECONDS = 0.5


def cpu_model() -> tuple[str | None, float | None]:
    """The CPU's model name and current MHz from /proc/cpuinfo (None where it does not say)."""
    model, mhz = None, None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model is None:
                model = value.strip()
            elif key.strip() == "cpu MHz" and mhz is None:
                mhz = float(value)
    except (OSError, ValueError):
        pass
    return model, mhz


def calibrate(seconds: float = CALIBRATION_SECONDS) -> float:
    """A fixed single-thread integer loop: millions of iterations per second (higher = faster core right now).
    Recorded with every run so figures from two machines of "the same description" can be told apart."""
    end = time.perf_counter() + seconds
    loops = 0
    while time.perf_counter() < end:
        acc = 0
        for i in range(10_000):
            acc ^= i * 2654435761 & 0xFFFFFFFF
        loops += 10_000
    return round(loops / seconds / 1e6, 2)


def describe_host(calibrated: bool = True) -> dict[str, Any]:
    """The host; calibrated=False leaves the calibration score to the caller (a run takes it while it settles)."""
    model, mhz = cpu_model()
    return {"cores": psutil.cpu_count(), "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
            "cpu_model": model, "cpu_mhz": mhz, "calibration_score": calibrate() if calibrated else None,
            "calibration": "fixed integer loop, M iterations/s on one core"}
