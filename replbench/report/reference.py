"""The reference experiment's own write figures (shared/reference: the write-up this suite grew from), to be shown
beside ours rate by rate.

The write-up ran on a 16-vCPU host (gunicorn with 12 workers, MySQL and two row-based replicas in Docker, 8M
accounts with 4 indexes, vegeta 60 s per step); it does not state its buffer pool (128M is the image's default: an
inference, not a figure of the write-up), its MySQL version, nor its disk beyond "NVMe". Each step gives "Gunicorn
cpu" and "Mysql cpu: master + 2 * replica" in % of one core and vegeta's latencies. Per request, so that a
16-vCPU host and a 2-core box compare: CPU-ms per write = CPU % × 10 ÷ rate.

Transcribed as printed, with two gaps: step 2.4's replicas read "50-95" (kept as that range), step 2.7
(write-noindex 2400) repeats step 2.6's vegeta lines (so only its CPU line is its own), and step 2.8 (3600) has no
CPU line.
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCE = "shared/reference/002_7c2abfa55c9f191f.txt"


@dataclass(frozen=True)
class Step:
    rate: int
    gunicorn: float | None  # % of one core
    master: float | None
    replica: tuple[float, float] | None  # each replica, % of one core (a range where the write-up gives one)
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    note: str = ""  # what the write-up's step lacks, said in the table instead of a bare gap

    def cpu_ms(self, percent: float | None) -> float | None:
        return None if percent is None else round(percent * 10 / self.rate, 3)

    def replica_text(self) -> str:
        if self.replica is None:
            return "–"
        low, high = (self.cpu_ms(v) for v in self.replica)
        return f"{low:.3f}" if low == high else f"{low:.3f}–{high:.3f}"


WRITES: dict[str, tuple[Step, ...]] = {
    "write": (
        Step(200, 15, 28, (18, 18), 31.894, 33.640, 215.554),
        Step(400, 25, 53, (35, 35), 31.382, 34.865, 56.846),
        Step(800, 60, 125, (75, 75), 33.026, 175.889, 329.269),
        Step(1200, 80, 180, (50, 95), 94.803, 605.634, 817.703),
    ),
    "write-noindex": (
        Step(1200, 70, 85, (7, 7), 31.569, 33.819, 64.295),
        Step(1600, 95, 110, (9, 9), 31.666, 34.932, 82.896),
        Step(2400, 150, 340, (13, 13), None, None, None,
             "its vegeta lines repeat the 1600 step's: only its CPU line is its own"),
        Step(3600, None, None, None, 35.482, 170.455, 604.084, "no CPU line"),
    ),
}


def rates(scenario: str) -> list[int]:
    return [s.rate for s in WRITES.get(scenario, ())]


def replica_cpu_ms(scenario: str) -> list[float]:
    """The write-up's replica CPU-ms per write of each step of a scenario (a range's midpoint)."""
    out = []
    for step in WRITES.get(scenario, ()):
        if step.replica is not None:
            low, high = (step.cpu_ms(v) for v in step.replica)
            out.append(round(((low or 0) + (high or 0)) / 2, 3))
    return out
