"""A soak run derived: how fast each replica's lag grows over consecutive windows (with its interval across the
windows), the stalls — seconds whose p99 or lag jumps — each with what InnoDB and the binlog did around it
(measure/innodb.py), and each window's cost per write (CPU net of idle, pages flushed, KB written, per node) with
when InnoDB reached its equilibrium: from the first window after which every node's checkpoint age and dirty pages
stay flat (the slope of their window means has a 95 % interval that holds 0). At equilibrium the page cleaner
writes what the writes dirty, so those windows' per-write figures are the steady state's cost, write-back
included, which a short run's forced flush bounds from above in pages and bytes (docs/decisions/write-back.md).
An InnoDB that writes back in bursts (nothing until the checkpoint age nears its maximum, then most dirty pages at
once) is never flat: its steady state is the cycle, priced over whole cycles (`cycles`). docs/runs.md, "Soak"."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..core.config import STALL_CONTEXT_S, STALL_LAG_MS, STALL_P99_FACTOR
from ..core.nodenames import replicas_in
from ..core.results import (
    Equilibrium,
    NodeFigures,
    Num,
    Soak,
    SoakCycles,
    SoakGrowth,
    SoakWindow,
    Stall,
    StallCounter,
    StallNode,
)
from ..measure.lag import growth

# A soak's growth is printed in ms of lag per minute: a steady replica's slope is far below what s/s at 4 decimals
# shows (0.0001 s/s = 6 ms/min), and ms/min is the unit a DBA watching lag reads.
MS_PER_MIN = 60_000.0
COUNTERS = ("checkpoint_age_mb", "dirty_pages", "history_length", "pages_flushed_per_s")  # StallNode's counters
FLAT = {"checkpoint_age_mb": "checkpoint age (MB)", "dirty_pages": "dirty pages"}  # flat: InnoDB's equilibrium
FLAT_WINDOWS = 3  # windows the equilibrium must hold over (their slope needs at least three means)
# A run of flushing windows is a burst when one of them flushed at least this share of the busiest window's pages
# per write: between bursts InnoDB may still write a page now and then (an LRU eviction), which is no burst.
BURST_SHARE = 0.1
PER_WRITE = ("cpu_ms_per_write_net", "pages_flushed_per_write", "kb_written_per_write")  # a window's cost figures

# A row as measure/ keeps it (timeline's seconds, innodb.csv's and io.csv's rows): figures (ints stay ints), a
# node's name, and "" or None for a figure not read.
Cell = float | str | None
Row = Mapping[str, Cell]
RowT = TypeVar("RowT", bound=Row)  # a row of any of those, cpu.csv's (figures only) too


@dataclass(frozen=True)
class Costs:
    """What a soak's windows are priced from besides the timeline, the innodb rows and the span (cost_windows'
    other arguments): the run's share of writes among its successes, cpu.csv's rows, each node's idle CPU per
    second and io.csv's rows."""

    write_share: float
    cpu_rows: Sequence[Mapping[str, float]]
    idle_cpu_per_s: Mapping[str, float]
    io_rows: Sequence[Row]


def growth_windows(points: list[tuple[float, float]], t0: float, t1: float, window: float) -> SoakGrowth:
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
    rounded: list[Num] = [round(s, 5) for s in slopes]
    if len(slopes) >= 2:
        mean, sem = statistics.fmean(slopes), statistics.stdev(slopes) / len(slopes) ** 0.5
        low, high = stats.t.interval(0.95, len(slopes) - 1, loc=mean, scale=sem) if sem > 0 else (mean, mean)
        return SoakGrowth(window_s=window, windows=len(slopes), growth_s_per_s=rounded, mean_s_per_s=round(mean, 5),
                          ci95_s_per_s=[round(low, 5), round(high, 5)], mean_ms_per_min=round(mean * MS_PER_MIN, 2),
                          ci95_ms_per_min=[round(low * MS_PER_MIN, 2), round(high * MS_PER_MIN, 2)])
    if slopes:  # one window: its slope, with no interval (written as null)
        return SoakGrowth(window_s=window, windows=len(slopes), growth_s_per_s=rounded,
                          mean_s_per_s=round(slopes[0], 5), ci95_s_per_s=None,
                          mean_ms_per_min=round(slopes[0] * MS_PER_MIN, 2), ci95_ms_per_min=None)
    return SoakGrowth(window_s=window, windows=len(slopes), growth_s_per_s=rounded)


def lag_per_second(points: list[tuple[float, float]], t0: float) -> dict[int, float]:
    """The highest lag (ms) in each second after t0."""
    out: dict[int, float] = {}
    for t, v in points:
        second = int(t - t0)
        out[second] = max(out.get(second, 0.0), v)
    return out


def _present(value: Cell) -> float | str:
    """A row's value that must be there: None raises the TypeError that float(None) and int(None) raise."""
    if value is None:
        raise TypeError("a measured row lacks a figure")
    return value


def _figure(value: Cell) -> float:
    """A row's figure as it was recorded (an int stays an int, so a count written from it reads as before); None or
    a string raises the TypeError that arithmetic on it raises."""
    if value is None or isinstance(value, str):
        raise TypeError(f"a measured row's figure is {value!r}")
    return value


def _number(value: Cell) -> float | None:
    return None if value is None or value == "" else float(value)


def stall_seconds(seconds: Sequence[Row], lags: dict[str, dict[int, float]]) -> list[int]:
    """Seconds whose p99 is above STALL_P99_FACTOR times the run's median second's, or whose lag (any replica) is
    more than STALL_LAG_MS above that replica's median second."""
    p99s = [p99 for s in seconds if (p99 := _number(s.get("p99_ms"))) is not None]
    usual = statistics.median(p99s) if p99s else 0.0
    out = {int(_present(s["second"])) for s in seconds
           if (p99 := _number(s.get("p99_ms"))) is not None and p99 > STALL_P99_FACTOR * usual}
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


def around(rows: Sequence[Row], t0: float, first: int, last: int) -> dict[str, StallNode]:
    """Per node: each counter's peak within STALL_CONTEXT_S of the stretch and its median over the run, and the
    binlog rotations within it."""
    out: dict[str, StallNode] = {}
    lo, hi = t0 + first - STALL_CONTEXT_S, t0 + last + 1 + STALL_CONTEXT_S
    for node in sorted({str(r["node"]) for r in rows}):
        mine = [r for r in rows if r["node"] == node]
        near = [r for r in mine if lo <= _figure(r["elapsed_s"]) <= hi]
        if not near:
            continue
        counters: dict[str, StallCounter] = {}
        for key in COUNTERS:
            values = [float(_present(r[key])) for r in near if r[key] != ""]
            usual = [float(_present(r[key])) for r in mine if r[key] != ""]
            if values:
                counters[key] = StallCounter(peak=max(values), usual=round(statistics.median(usual), 1))
        # validated from the mapping so that a counter never read stays unset, absent from the file as before
        out[node] = StallNode.model_validate(
            {**counters, "rotations": _figure(near[-1]["rotations"]) - _figure(near[0]["rotations"])})
    return out


def analyse(seconds: Sequence[Row], lag_points: dict[str, list[tuple[float, float]]], innodb_rows: Sequence[Row],
            t0: float, t1: float, window: float, costs: Costs | None = None) -> Soak:
    """The soak section of a run's summary: growth per replica over windows, the stalls with their context, and
    (`costs`: cost_windows' arguments beyond the innodb rows and the span) each window's cost per write with the
    equilibrium."""
    lags = {name: lag_per_second(points, t0) for name, points in lag_points.items()}
    by_second = {int(_present(s["second"])): s for s in seconds}
    stalls = []
    for first, last in group(stall_seconds(seconds, lags)):
        inside = [by_second[s] for s in range(first, last + 1) if s in by_second]
        stalls.append(Stall(
            from_s=first, to_s=last + 1,
            p99_ms=max((p99 for s in inside if (p99 := _number(s.get("p99_ms"))) is not None), default=None),
            lag_ms={name: max((per.get(s, 0.0) for s in range(first, last + 1)), default=0.0)
                    for name, per in lags.items()},
            around=around(innodb_rows, t0, first, last)))
    p99s = [p99 for s in seconds if (p99 := _number(s.get("p99_ms"))) is not None]
    growths = {name: growth_windows(points, t0, t1, window) for name, points in lag_points.items()}
    usual_p99 = round(statistics.median(p99s), 1) if p99s else None
    if costs is None:  # no windows nor equilibrium: both keys absent, not null
        return Soak(growth=growths, usual_p99_ms=usual_p99, stalls=stalls)
    windows = cost_windows(seconds, costs.write_share, costs.cpu_rows, costs.idle_cpu_per_s, innodb_rows,
                           costs.io_rows, t0, t1, window)
    return Soak(growth=growths, usual_p99_ms=usual_p99, stalls=stalls, windows=windows,
                equilibrium=equilibrium(windows) if windows else None, cycles=cycles(windows) if windows else None)


def _within(rows: Sequence[RowT], lo: float, hi: float) -> list[RowT]:
    return [r for r in rows if lo <= float(_present(r["elapsed_s"])) < hi]


def cost_windows(seconds: Sequence[Row], write_share: float, cpu_rows: Sequence[Mapping[str, float]],
                 idle_cpu_per_s: Mapping[str, float], innodb_rows: Sequence[Row], io_rows: Sequence[Row],
                 t0: float, t1: float, window: float) -> list[SoakWindow]:
    """Each whole window of [t0, t1]: the successful writes in it (its seconds' successes × the run's share of
    writes among them) and per node the CPU-ms per write net of the idle rate (cpu.csv), the pages flushed and KB
    written per write (innodb.csv, io.csv), and the mean checkpoint age and dirty pages."""
    out = []
    start = t0
    nodes = sorted({str(r["node"]) for r in innodb_rows})
    while start + window <= t1 + 1e-9:
        end = start + window
        oks = sum(_figure(s["requests"]) - _figure(s["errors"]) for s in seconds
                  if start - t0 <= _figure(s["second"]) < end - t0)
        writes = oks * write_share
        per_node: dict[str, NodeFigures] = {}
        cpu = _within(cpu_rows, start + 1, end + 1e-9)  # a sample covers the second before its elapsed_s
        for node in nodes:
            inno = [r for r in _within(innodb_rows, start, end) if r["node"] == node]
            io = [r for r in _within(io_rows, start, end) if r["node"] == node]
            busy = [v for r in cpu if (v := r.get(node)) is not None]
            flushed = [v for r in inno if (v := _number(r["pages_flushed_per_s"])) is not None]
            written = [v for r in io if (v := _number(r.get("write_kb_per_s"))) is not None]
            net = None if not busy else max(0.0, sum(busy) / 100 - idle_cpu_per_s.get(node, 0.0) * len(busy))
            figures: NodeFigures = {
                "cpu_ms_per_write_net": round(1000 * net / writes, 3) if net is not None and writes else None,
                "pages_flushed_per_write": round(sum(flushed) / writes, 3) if flushed and writes else None,
                "kb_written_per_write": round(sum(written) / writes, 2) if written and writes else None}
            for key in FLAT:
                values = [v for r in inno if (v := _number(r[key])) is not None]
                figures[key] = round(statistics.fmean(values), 1) if values else None
            per_node[node] = figures
        out.append(SoakWindow(from_s=round(start - t0), writes=round(writes), nodes=per_node))
        start = end
    return out


def _of(window: SoakWindow, node: str, key: str) -> Num | None:
    """A node's figure in a window (None: the node or the figure not in it)."""
    return ((window.nodes or {}).get(node) or {}).get(key)


def equilibrium(windows: list[SoakWindow]) -> Equilibrium:
    """From which window on every node's checkpoint age and dirty pages stay flat: the first window i such that
    over windows i… (at least FLAT_WINDOWS of them) every node flushed pages in each, and the least-squares slope
    of each counter's window means has a 95 % interval that holds 0 with window i's mean within the later windows'
    range. Then the steady state's per-write figures: each node's mean over those windows."""
    from scipy import stats  # imported where a soak is summarised, not by every command's start

    def flat(span: list[SoakWindow]) -> list[str]:
        moving = []
        for node in span[0].nodes or {}:
            # the page cleaner at work in every window: before it starts, dirty pages can sit near the later
            # windows' range with nothing written back yet, and such a window would price a write without it
            idle = [w.from_s for w in span if not _of(w, node, "pages_flushed_per_write")]
            if idle:
                moving.append(f"{node} flushed no page in the window from {idle[0]:g} s")
                continue
            for key in FLAT:
                points = [(w.from_s, v) for w in span if (v := _of(w, node, key)) is not None]
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
            per_node: dict[str, NodeFigures] = {}
            for node in steady[0].nodes or {}:
                per_node[node] = {}
                for key in PER_WRITE:
                    got = [v for w in steady if (v := _of(w, node, key)) is not None]
                    per_node[node][key] = round(statistics.fmean(got), 3) if got else None
            return Equilibrium(reached=True, from_s=steady[0].from_s, windows=len(steady), per_write=per_node)
    last = windows[-FLAT_WINDOWS:] if len(windows) >= FLAT_WINDOWS else []
    return Equilibrium(reached=False, from_s=None, windows=0, per_write=None,
                       moving=flat(last) if last else [f"fewer than {FLAT_WINDOWS} windows"])


def _weighted(windows: Sequence[SoakWindow], node: str) -> NodeFigures:
    """A node's per-write figures over windows: each window's weighted by its writes (a window without the figure
    left out of that figure's mean)."""
    out: NodeFigures = {}
    for key in PER_WRITE:
        got = [(float(v), w.writes or 0) for w in windows if (v := _of(w, node, key)) is not None]
        writes = sum(n for _, n in got)
        out[key] = round(sum(v * n for v, n in got) / writes, 3) if writes else None
    return out


def bursts(windows: Sequence[SoakWindow], node: str) -> list[range]:
    """A node's flushing bursts, as index ranges into `windows`: runs of consecutive windows that flushed pages, one
    of which flushed at least BURST_SHARE of its busiest window's pages per write (a burst's tail, spilling into the
    next window, stays in it; a stray page written between bursts makes none)."""
    flushed = [float(_of(w, node, "pages_flushed_per_write") or 0.0) for w in windows]
    runs: list[range] = []
    for i, pages in enumerate(flushed):
        if pages <= 0:
            continue
        if runs and runs[-1].stop == i:
            runs[-1] = range(runs[-1].start, i + 1)
        else:
            runs.append(range(i, i + 1))
    top = max(flushed, default=0.0)
    return [r for r in runs if max(flushed[i] for i in r) >= BURST_SHARE * top]


def cycles(windows: Sequence[SoakWindow]) -> dict[str, SoakCycles]:
    """Per node, its flushing bursts and the cycles between them: a cycle runs from the window after one burst to
    the last window of the next, so it holds the writes that dirtied the pages and the burst that wrote them back.
    A burst still under way in the soak's last window may not be whole and ends no cycle. The per-write figures over
    every whole cycle, weighted by writes, are such a node's steady state (a node flushing in every window is one
    burst, no cycle: the equilibrium prices it); those before the first burst hold no write-back."""
    out: dict[str, SoakCycles] = {}
    for node in (windows[0].nodes or {}) if windows else {}:
        found = bursts(windows, node)
        whole = [b for b in found if b.stop < len(windows)]
        starts: list[Num] = [windows[b.start].from_s or 0 for b in found]
        spans = [windows[a.stop:b.stop] for a, b in zip(whole, whole[1:])]
        over = windows[whole[0].stop:whole[-1].stop] if len(whole) >= 2 else []
        before = windows[:found[0].start] if found else windows
        out[node] = SoakCycles(
            bursts_from_s=starts,
            period_s=round((starts[-1] - starts[0]) / (len(starts) - 1)) if len(starts) >= 2 else None,
            cycles=len(spans), windows=len(over), per_write=_weighted(over, node) if over else None,
            before_windows=len(before), before=_weighted(before, node) if before else None)
    return out


@dataclass(frozen=True)
class SteadyState:
    """A soak's steady state as report.md states it (report/soaks): when InnoDB settled ("equilibrium", from
    `from_s`), or that it writes back in bursts ("cycles", priced over whole cycles), or "not reached" (with what
    still moved); per write, write-back included, the worse replica's figures (the larger CPU) and the master's."""

    scenario: str
    rate: int
    seconds: float
    how: str
    from_s: float | None
    replica: dict[str, Num | None] | None
    master: dict[str, Num | None] | None
    moving: tuple[str, ...]


def steady_state(soak: Soak, scenario: str, rate: int, seconds: float) -> SteadyState | None:
    """The steady state a soak's summary records (None: a soak recorded before its windows were)."""
    eq = soak.equilibrium
    if eq is None or not soak.windows:
        return None
    if eq.reached:
        per, how, from_s = eq.per_write or {}, "equilibrium", eq.from_s
    else:
        cycling = {node: c.per_write for node, c in (soak.cycles or {}).items() if c.per_write}
        per, how, from_s = cycling, ("cycles" if cycling else "not reached"), None
    worse = max(replicas_in(per), key=lambda n: per[n].get("cpu_ms_per_write_net") or 0.0, default=None)
    return SteadyState(scenario, rate, seconds, how, None if from_s is None else float(from_s),
                       per[worse] if worse is not None else None, per.get("master"),
                       tuple(eq.moving or ()) if how == "not reached" else ())
