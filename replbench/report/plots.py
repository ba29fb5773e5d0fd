"""The report's charts (matplotlib, headless): a sweep's latency, throughput, CPU and lag against the rate asked;
a study's key metrics per cell with their range over repeats.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from ..analysis.studymetrics import BY_KEY, ran_cells, setting_value
from ..core.nodenames import replicas_in
from ..core.results import ComparisonRow, RunSummary, StudyPlot, StudyRecord
from .sources import Figure, ShownStep, latency_of, step_median

if TYPE_CHECKING:  # matplotlib is imported where a chart is drawn, not by every command's start
    from matplotlib.axes import Axes


def pyplot() -> ModuleType:
    """matplotlib.pyplot, headless (Agg), imported where a chart is drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_sweep(steps: list[ShownStep], assets: Path, title: str) -> list[str]:
    plt = pyplot()
    rates = [s.rate for s in steps]
    files = []
    replicas = replicas_in(k for s in steps for r in s.repeats for k in r.summary.lag or {}) \
        or ("replica1", "replica2")
    # (file, what, y label, log scale, [(label, the figure of a run's summary)])
    specs: list[tuple[str, str, str, bool, list[tuple[str, Figure]]]] = [
        ("latency.png", "latency percentiles vs rate", "latency (ms, log scale)", True,
         [("p50", lambda s: latency_of(s).p50), ("p95", lambda s: latency_of(s).p95),
          ("p99", lambda s: latency_of(s).p99), ("max", lambda s: latency_of(s).max)]),
        ("throughput.png", "sent rate and goodput vs asked rate", "requests/s", False,
         [("sent", lambda s: s.rate_sent), ("goodput", lambda s: s.goodput)]),
        ("cpu.png", "CPU per process group vs rate", "CPU (% of one core, steady mean)", False,
         [(n, _cpu_percent(n)) for n in ("app", "master", *replicas, "vegeta", "harness", "host_busy")]),
        ("lag.png", "replication lag vs rate", "lag p99 (ms, log scale)", True,
         [(r, _lag_p99(r)) for r in replicas]),
    ]
    for name, what, ylabel, log, series in specs:
        fig_, ax = plt.subplots(figsize=(8, 4), dpi=100)
        for label, figure in series:
            points = [(x, y) for x, y in zip(rates, (step_median(s, figure) for s in steps))
                      if y is not None and (not log or y > 0)]
            if points:
                ax.plot(*zip(*points), marker="o", label=label)
        if log:
            ax.set_yscale("log")
        ax.set_xlabel("rate asked (requests/s)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title}: {what}")
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:  # a panel whose series had no point draws no (empty) legend
            ax.legend(fontsize=8)
        fig_.tight_layout()
        fig_.savefig(assets / name, metadata={"Software": None})
        plt.close(fig_)
        files.append(name)
    return files


def _cpu_percent(group: str) -> Figure:
    """A process group's mean CPU % (of one core) over the run's steady part."""
    return lambda s: (s.cpu_mean_percent or {}).get(group)


def _lag_p99(replica: str) -> Figure:
    """A replica's lag p99 (ms)."""
    def figure(s: RunSummary) -> float | None:
        lag = (s.lag or {}).get(replica)
        return lag.p99_ms if lag is not None else None
    return figure


STUDY_CHART = ("bytes_per_write", "master_ms_per_write", "replica_ms_per_write", "lag_p99_ms", "p99_ms",
               "apply_trx_per_s", "semi_sync_wait_us", "shed", "app_ms_per_ok", "db_share")


def plot_study(data: StudyRecord, assets: Path, primary: list[str], plot: StudyPlot | None = None) -> str | None:
    """One chart per study, one panel per primary metric (the study's questions; a study that declares none: its
    STUDY_CHART metrics) and group, each over the cells that ran in its group (analysis/studymetrics.ran_cells: a
    cell --only cut is not in study.json, and one whose every unit failed would otherwise stand as a point of 0;
    docs/studies.md, "Report and compare"): the metric against the cells' value of the file's [plot] x, a line per
    value of its `lines`, or without [plot] a bar per cell; each point the median, its bar min–max."""
    assert data.comparison is not None and data.cells is not None  # experiments/study.py writes both
    shown = primary or STUDY_CHART
    panels = [(scenario, key, per_metric[key], cells) for scenario, per_metric in data.comparison.items()
              if (cells := ran_cells(data, scenario)) for key in shown if key in per_metric]
    if not panels:
        return None
    plt = pyplot()
    cols = min(3, len(panels))
    nrows = -(-len(panels) // cols)
    fig_, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.2 * nrows), dpi=90, squeeze=False)
    for ax, (scenario, key, rows, cells) in zip(axes.flat, panels):
        if plot is not None and plot.x is not None:
            _lines(ax, line_points(data, rows, cells, plot), plot)
        else:
            meds = [rows[c].median or 0 for c in cells]
            low = [m - (low_ if (low_ := rows[c].min) is not None else m) for m, c in zip(meds, cells)]
            high = [(high_ if (high_ := rows[c].max) is not None else m) - m for m, c in zip(meds, cells)]
            ax.bar(range(len(cells)), meds, yerr=[low, high], capsize=3, color="tab:blue", alpha=0.8)
            ax.set_xticks(range(len(cells)))
            ax.set_xticklabels(cells, rotation=30, ha="right", fontsize=7)
        ax.set_title(f"{scenario}: {BY_KEY[key].label}", fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig_.tight_layout()
    fig_.savefig(assets / "study.png", metadata={"Software": None})
    plt.close(fig_)
    return "study.png"


@dataclass(frozen=True)
class LinePoints:
    """A panel's lines: the x values in the cells' order, and per line (its label) each point's x index, median,
    min and max."""

    xs: list[str]
    lines: dict[str, list[tuple[int, float, float, float]]]


def line_points(data: StudyRecord, rows: dict[str, ComparisonRow], cells: list[str], plot: StudyPlot) -> LinePoints:
    """The cells' figures placed by their value of the plot's x and lines (a cell that leaves a key at the
    reference: "reference"); a cell without a median is no point."""
    assert plot.x is not None
    by_name = {c.name: c for c in data.cells or []}
    xs: list[str] = []
    lines: dict[str, list[tuple[int, float, float, float]]] = {}
    for name in cells:
        row, cell = rows.get(name), by_name.get(name)
        if row is None or cell is None or row.median is None:
            continue
        x = str(setting_value(cell, plot.x)) or "reference"
        line = (str(setting_value(cell, plot.lines)) or "reference") if plot.lines else ""
        if x not in xs:
            xs.append(x)
        low = row.min if row.min is not None else row.median
        high = row.max if row.max is not None else row.median
        lines.setdefault(line, []).append((xs.index(x), row.median, low, high))
    return LinePoints(xs, lines)


def _lines(ax: Axes, points: LinePoints, plot: StudyPlot) -> None:
    for label, got in points.lines.items():
        ax.errorbar([p[0] for p in got], [p[1] for p in got], yerr=[[p[1] - p[2] for p in got],
                    [p[3] - p[1] for p in got]], marker="o", capsize=3, label=label or None)
    ax.set_xticks(range(len(points.xs)))
    ax.set_xticklabels(points.xs, rotation=30, ha="right", fontsize=7)
    ax.set_xlabel(plot.x or "", fontsize=8)
    if plot.lines and ax.get_legend_handles_labels()[0]:
        ax.legend(title=plot.lines, fontsize=7, title_fontsize=7)
