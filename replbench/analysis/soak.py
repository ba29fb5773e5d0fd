"""A soak run derived: how fast each replica's lag grows over consecutive windows (with its interval across the
windows), and the stalls — seconds whose p99 or lag jumps — each with what InnoDB and the binlog did around it
(measure/innodb.py). docs/runs.md, "Soak"."""

from __future__ import annotations

import statistics
from typing import Any

from ..core.config import STALL_CONTEXT_S, STALL_LAG_MS, STALL_P99_FACTOR
from ..measure.lag import growth

# A soak's growth is printed in ms of lag per minute: a steady replica's slope is far below what s/s at 4 decimals
# shows (0.0001 s/s = 6 ms/min), and ms/min is the unit a DBA watching lag reads.
MS_PER_MIN = 60_000.0
COUNTERS = ("checkpoint_age_mb", "dirty_pages", "history_length", "pages_flushed_per_s")


def growth_windows(points: list[tuple[float, float]], t0: float, t1: float, window: float) -> dict[str, Any]:
    """The lag's growth (seconds per second) in each whole window of [t0, t1], their mean and its 95 % interval
    (Student's t over the windows: the windows are the repeats)."""
    from scipy import stats  # imported where a soak is summarised, not by every command's start

    slopes = []
    start = t0
    while start + window <= t1 + 1e-9:
        inside = [(t, v) for t, v in points if start <= t < start + window]
        slope = growth(inside)
        if slope is not None:
            slopes.append(slope)
        start += window
    out: dict[str, Any] = {"window_s": window, "windows": len(slopes), "growth_s_per_s": [round(s, 5) for s in slopes]}
    if len(slopes) >= 2:
        mean, sem = statistics.fmean(slopes), statistics.stdev(slopes) / len(slopes) ** 0.5
        low, high = stats.t.interval(0.95, len(slopes) - 1, loc=mean, scale=sem) if sem > 0 else (mean, mean)
        out.update(mean_s_per_s=round(mean, 5), ci95_s_per_s=[round(low, 5), round(high, 5)],
                   mean_ms_per_min=round(mean * MS_PER_MIN, 2),
                   ci95_ms_per_min=[round(low * MS_PER_MIN, 2), round(high * MS_PER_MIN, 2)])
    elif slopes:
        out.update(mean_s_per_s=round(slopes[0], 5), ci95_s_per_s=None,
                   mean_ms_per_min=round(slopes[0] * MS_PER_MIN, 2), ci95_ms_per_min=None)
    return out


def lag_per_second(points: list[tuple[float, float]], t0: float) -> dict[int, float]:
    """The highest lag (ms) in each second after t0."""
    out: dict[int, float] = {}
    for t, v in points:
        second = int(t - t0)
        out[second] = max(out.get(second, 0.0), v)
    return out


def stall_seconds(seconds: list[dict[str, Any]], lags: dict[str, dict[int, float]]) -> list[int]:
    """Seconds whose p99 is above STALL_P99_FACTOR times the run's median second's, or whose lag (any replica) is
    more than STALL_LAG_MS above that replica's median second."""
    p99s = [float(s["p99_ms"]) for s in seconds if s.get("p99_ms") not in (None, "")]
    usual = statistics.median(p99s) if p99s else 0.0
    out = {int(s["second"]) for s in seconds if s.get("p99_ms") not in (None, "")
           and float(s["p99_ms"]) > STALL_P99_FACTOR * usual}
    for per_second in lags.values():
        if per_second:
            median = statistics.median(per_second.values())
            out |= {sec for sec, v in per_second.items() if v > median + STALL_LAG_MS}
    return sorted(out)


def group(seconds: list[int]) -> list[tuple[int, int]]:
    """Consecutive seconds as (first, last) stretches."""
    stretches: list[tuple[int, int]] = []
    for s in seconds:
        if stretches and s == stretches[-1][1] + 1:
            stretches[-1] = (stretches[-1][0], s)
        else:
            stretches.append((s, s))
    return stretches


def around(rows: list[dict[str, Any]], t0: float, first: int, last: int) -> dict[str, dict[str, Any]]:
    """Per node: each counter's peak within STALL_CONTEXT_S of the stretch and its median over the run, and the
    binlog rotations within it."""
    out: dict[str, dict[str, Any]] = {}
    lo, hi = t0 + first - STALL_CONTEXT_S, t0 + last + 1 + STALL_CONTEXT_S
    for node in sorted({r["node"] for r in rows}):
        mine = [r for r in rows if r["node"] == node]
        near = [r for r in mine if lo <= r["elapsed_s"] <= hi]
        if not near:
            continue
        figures: dict[str, Any] = {}
        for key in COUNTERS:
            values = [float(r[key]) for r in near if r[key] != ""]
            usual = [float(r[key]) for r in mine if r[key] != ""]
            if values:
                figures[key] = {"peak": max(values), "usual": round(statistics.median(usual), 1)}
        figures["rotations"] = near[-1]["rotations"] - near[0]["rotations"]
        out[node] = figures
    return out


def analyse(seconds: list[dict[str, Any]], lag_points: dict[str, list[tuple[float, float]]],
            innodb_rows: list[dict[str, Any]], t0: float, t1: float, window: float) -> dict[str, Any]:
    """The soak section of a run's summary: growth per replica over windows, and the stalls with their context."""
    lags = {name: lag_per_second(points, t0) for name, points in lag_points.items()}
    by_second = {int(s["second"]): s for s in seconds}
    stalls = []
    for first, last in group(stall_seconds(seconds, lags)):
        inside = [by_second[s] for s in range(first, last + 1) if s in by_second]
        stalls.append({
            "from_s": first, "to_s": last + 1,
            "p99_ms": max((float(s["p99_ms"]) for s in inside if s.get("p99_ms") not in (None, "")), default=None),
            "lag_ms": {name: max((per.get(s, 0.0) for s in range(first, last + 1)), default=0.0)
                       for name, per in lags.items()},
            "around": around(innodb_rows, t0, first, last)})
    p99s = [float(s["p99_ms"]) for s in seconds if s.get("p99_ms") not in (None, "")]
    return {"growth": {name: growth_windows(points, t0, t1, window) for name, points in lag_points.items()},
            "usual_p99_ms": round(statistics.median(p99s), 1) if p99s else None,
            "stalls": stalls}
