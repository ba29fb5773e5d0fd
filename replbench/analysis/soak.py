"""A soak run derived: how fast each replica's lag grows over consecutive windows (with its interval across the
windows), the stalls — seconds whose p99 or lag jumps — each with what InnoDB and the binlog did around it
(measure/innodb.py), and each window's cost per write (CPU net of idle, pages flushed, KB written, per node) with
when InnoDB reached its equilibrium: from the first window after which every node's checkpoint age and dirty pages
stay flat (the slope of their window means has a 95 % interval that holds 0). At equilibrium the page cleaner
writes what the writes dirty, so those windows' per-write figures are the steady state's cost, write-back
included, which a short run's forced flush bounds from above in pages and bytes (docs/decisions/write-back.md).
docs/runs.md, "Soak"."""

from __future__ import annotations

import math
import statistics
from typing import Any

from ..core.config import STALL_CONTEXT_S, STALL_LAG_MS, STALL_P99_FACTOR
from ..measure.lag import growth

# A soak's growth is printed in ms of lag per minute: a steady replica's slope is far below what s/s at 4 decimals
# shows (0.0001 s/s = 6 ms/min), and ms/min is the unit a DBA watching lag reads.
MS_PER_MIN = 60_000.0
COUNTERS = ("checkpoint_age_mb", "dirty_pages", "history_length", "pages_flushed_per_s")
FLAT = {"checkpoint_age_mb": "checkpoint age (MB)", "dirty_pages": "dirty pages"}  # flat: InnoDB's equilibrium
FLAT_WINDOWS = 3  # windows the equilibrium must hold over (their slope needs at least three means)


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
            innodb_rows: list[dict[str, Any]], t0: float, t1: float, window: float,
            costs: dict[str, Any] | None = None) -> dict[str, Any]:
    """The soak section of a run's summary: growth per replica over windows, the stalls with their context, and
    (`costs`: cost_windows' arguments beyond the innodb rows and the span) each window's cost per write with the
    equilibrium."""
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
    out = {"growth": {name: growth_windows(points, t0, t1, window) for name, points in lag_points.items()},
           "usual_p99_ms": round(statistics.median(p99s), 1) if p99s else None,
           "stalls": stalls}
    if costs is not None:
        windows = cost_windows(seconds, innodb_rows=innodb_rows, t0=t0, t1=t1, window=window, **costs)
        out.update(windows=windows, equilibrium=equilibrium(windows) if windows else None)
    return out


def _within(rows: list[dict[str, Any]], lo: float, hi: float) -> list[dict[str, Any]]:
    return [r for r in rows if lo <= float(r["elapsed_s"]) < hi]


def _number(value: Any) -> float | None:
    return None if value in (None, "") else float(value)


def cost_windows(seconds: list[dict[str, Any]], write_share: float, cpu_rows: list[dict[str, float]],
                 idle_cpu_per_s: dict[str, float], innodb_rows: list[dict[str, Any]], io_rows: list[dict[str, Any]],
                 t0: float, t1: float, window: float) -> list[dict[str, Any]]:
    """Each whole window of [t0, t1]: the successful writes in it (its seconds' successes × the run's share of
    writes among them) and per node the CPU-ms per write net of the idle rate (cpu.csv), the pages flushed and KB
    written per write (innodb.csv, io.csv), and the mean checkpoint age and dirty pages."""
    out = []
    start = t0
    nodes = sorted({r["node"] for r in innodb_rows})
    while start + window <= t1 + 1e-9:
        end = start + window
        oks = sum(s["requests"] - s["errors"] for s in seconds if start - t0 <= s["second"] < end - t0)
        writes = oks * write_share
        entry: dict[str, Any] = {"from_s": round(start - t0), "writes": round(writes), "nodes": {}}
        cpu = _within(cpu_rows, start + 1, end + 1e-9)  # a sample covers the second before its elapsed_s
        for node in nodes:
            inno = [r for r in _within(innodb_rows, start, end) if r["node"] == node]
            io = [r for r in _within(io_rows, start, end) if r["node"] == node]
            busy = [v for r in cpu if (v := r.get(node)) is not None]
            flushed = [v for r in inno if (v := _number(r["pages_flushed_per_s"])) is not None]
            written = [v for r in io if (v := _number(r.get("write_kb_per_s"))) is not None]
            net = None if not busy else max(0.0, sum(busy) / 100 - idle_cpu_per_s.get(node, 0.0) * len(busy))
            figures: dict[str, Any] = {
                "cpu_ms_per_write_net": round(1000 * net / writes, 3) if net is not None and writes else None,
                "pages_flushed_per_write": round(sum(flushed) / writes, 3) if flushed and writes else None,
                "kb_written_per_write": round(sum(written) / writes, 2) if written and writes else None}
            for key in FLAT:
                values = [v for r in inno if (v := _number(r[key])) is not None]
                figures[key] = round(statistics.fmean(values), 1) if values else None
            entry["nodes"][node] = figures
        out.append(entry)
        start = end
    return out


def equilibrium(windows: list[dict[str, Any]]) -> dict[str, Any]:
    """From which window on every node's checkpoint age and dirty pages stay flat: the first window i such that
    over windows i… (at least FLAT_WINDOWS of them) every node flushed pages in each, and the least-squares slope
    of each counter's window means has a 95 % interval that holds 0 with window i's mean within the later windows'
    range. Then the steady state's per-write figures: each node's mean over those windows."""
    from scipy import stats  # imported where a soak is summarised, not by every command's start

    def flat(span: list[dict[str, Any]]) -> list[str]:
        moving = []
        for node in span[0]["nodes"]:
            # the page cleaner at work in every window: before it starts, dirty pages can sit near the later
            # windows' range with nothing written back yet, and such a window would price a write without it
            idle = [w["from_s"] for w in span if not (w["nodes"].get(node) or {}).get("pages_flushed_per_write")]
            if idle:
                moving.append(f"{node} flushed no page in the window from {idle[0]:g} s")
                continue
            for key in FLAT:
                points = [(w["from_s"], v) for w in span if (v := (w["nodes"].get(node) or {}).get(key)) is not None]
                if len(points) < FLAT_WINDOWS:
                    return [f"{node}'s {key} unread"]
                fit = stats.linregress([p[0] for p in points], [p[1] for p in points])
                # a series flat to the last digit fits a slope of float noise with no spread: that is flat
                spread = 0.0 if math.isnan(fit.stderr) else stats.t.ppf(0.975, len(points) - 2) * fit.stderr
                half = max(spread, 1e-9 * max(1.0, abs(points[0][1])))
                rest = [p[1] for p in points[1:]]
                # the first window inside the later ones' range too: a ramp's last window, a few means before a
                # plateau, leaves the slope's interval holding 0 but is not the plateau yet
                if not fit.slope - half <= 0 <= fit.slope + half or not min(rest) <= points[0][1] <= max(rest):
                    moving.append(f"{node}'s {FLAT[key]} {60 * fit.slope:+,.1f}/min")
        return moving

    for i in range(max(0, len(windows) - FLAT_WINDOWS + 1)):
        if not flat(windows[i:]):
            steady = windows[i:]
            per_node: dict[str, Any] = {}
            for node in steady[0]["nodes"]:
                per_node[node] = {}
                for key in ("cpu_ms_per_write_net", "pages_flushed_per_write", "kb_written_per_write"):
                    got = [v for w in steady if (v := (w["nodes"].get(node) or {}).get(key)) is not None]
                    per_node[node][key] = round(statistics.fmean(got), 3) if got else None
            return {"reached": True, "from_s": steady[0]["from_s"], "windows": len(steady), "per_write": per_node}
    last = windows[-FLAT_WINDOWS:] if len(windows) >= FLAT_WINDOWS else []
    return {"reached": False, "from_s": None, "windows": 0, "per_write": None,
            "moving": flat(last) if last else [f"fewer than {FLAT_WINDOWS} windows"]}
