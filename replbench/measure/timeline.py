"""Latency over time from decoded vegeta results: per-second percentiles, a bounded sample for the scatter, and
per-endpoint outcome counts, all computed in one streaming pass with bounded memory (long soaks stay flat).
Drawn as latency.png; the per-second figures are kept as timeline.csv beside it."""

from __future__ import annotations

import csv
import random
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from ..core.stats import percentile
from ..load.attack import ResultRow

SCATTER_POINTS = 20_000
# errors the load generator made itself (out of ports, files or buffers): no request reached the server, so they
# say nothing about it; a timeout awaiting the response, a refused connection or an HTTP error are the server's
CLIENT_ERROR_MARKERS = ("bind: address already in use", "too many open files", "cannot assign requested address",
                        "no buffer space available")
OPEN_SECONDS = 120  # a second's bucket is closed once results 120 s newer arrive (longer than any timeout)


class Routing(TypedDict):
    """One node outage (seconds from the first request): when the node went down and came back (None: not within
    the run), the last request it served after going down and the first it served once back (None: none)."""

    node: str
    down_at_s: float
    back_at_s: float | None
    last_served_s: float | None
    first_served_back_s: float | None


@dataclass
class Timeline:
    # a row of timeline.csv per second: numbers, None for a percentile of no request, "" for a lag of no sample
    seconds: list[dict[str, Any]] = field(default_factory=list)
    scatter: list[tuple[float, float, bool]] = field(default_factory=list)  # (t s, latency ms, ok)
    outcomes: dict[str, dict[str, int]] = field(default_factory=dict)  # endpoint -> code -> count
    total: int = 0
    client_errors: int = 0  # failures of the load generator itself (see CLIENT_ERROR_MARKERS)
    windows: dict[str, dict[str, Any]] = field(default_factory=dict)  # before/during/after faults
    served: dict[str, int] = field(default_factory=dict)  # node -> successful responses it served
    routing: list[Routing] = field(default_factory=list)  # per node outage: last/first use
    last_sent_s: float = 0.0  # when the last request was sent, seconds after the first

    def ok_count(self, endpoint: str) -> int:
        return sum(n for code, n in self.outcomes.get(endpoint, {}).items() if code.startswith("2"))


def is_client_error(error: str) -> bool:
    text = error.lower()
    return any(marker in text for marker in CLIENT_ERROR_MARKERS)


def endpoint_of(method: str, url: str) -> str:
    path = urllib.parse.urlsplit(url).path
    if path.startswith("/users/"):
        return "get_user"
    return path.strip("/") or method


def build(rows: Iterable[ResultRow], windows: list[tuple[str, float, float]] | None = None,
          outages: list[tuple[str, float, float | None]] | None = None) -> Timeline:
    """One pass over the results; windows (name, start s, end s from the first request) get their own figures;
    for each outage (node, down at, back at) the last request the node served after going down and the first
    it served once back — how long the app kept sending to it, and how soon it used it again."""
    timeline = Timeline()
    routing: list[Routing] = [{"node": n, "down_at_s": down, "back_at_s": back, "last_served_s": None,
                               "first_served_back_s": None} for n, down, back in outages or []]
    in_window: dict[str, list[float]] = {name: [] for name, _, _ in windows or []}
    window_errors: dict[str, int] = {name: 0 for name, _, _ in windows or []}
    window_served: dict[str, dict[str, int]] = {name: {} for name, _, _ in windows or []}
    rng = random.Random(0)
    buckets: dict[int, list[float]] = {}
    errors: dict[int, int] = {}
    start_ns: int | None = None
    newest = 0

    def close(second: int) -> None:
        lat = buckets.pop(second)
        timeline.seconds.append({"second": second, "requests": len(lat), "errors": errors.pop(second, 0),
                                 "p50_ms": percentile(lat, 50), "p99_ms": percentile(lat, 99), "max_ms": max(lat)})

    for row in rows:
        if start_ns is None:
            start_ns = row.timestamp_ns
        t = (row.timestamp_ns - start_ns) / 1e9
        second = int(t)
        ms = row.latency_ns / 1e6
        ok = 200 <= row.code < 300
        buckets.setdefault(second, []).append(ms)
        if not ok:
            errors[second] = errors.get(second, 0) + 1
            if row.code == 0 and is_client_error(row.error):
                timeline.client_errors += 1
        timeline.last_sent_s = max(timeline.last_sent_s, t)
        if ok and row.served_by:
            timeline.served[row.served_by] = timeline.served.get(row.served_by, 0) + 1
            for r in routing:
                if r["node"] != row.served_by:
                    continue
                if t >= r["down_at_s"] and (r["back_at_s"] is None or t < r["back_at_s"]):
                    r["last_served_s"] = t if r["last_served_s"] is None else max(r["last_served_s"], t)
                elif r["back_at_s"] is not None and t >= r["back_at_s"]:
                    first = r["first_served_back_s"]
                    r["first_served_back_s"] = t if first is None else min(first, t)
        for name, begin, end in windows or []:
            if begin <= t < end:
                in_window[name].append(ms)
                window_errors[name] += 0 if ok else 1
                if ok and row.served_by:
                    window_served[name][row.served_by] = window_served[name].get(row.served_by, 0) + 1
        endpoint = endpoint_of(row.method, row.url)
        codes = timeline.outcomes.setdefault(endpoint, {})
        codes[str(row.code)] = codes.get(str(row.code), 0) + 1
        timeline.total += 1
        if len(timeline.scatter) < SCATTER_POINTS:
            timeline.scatter.append((t, ms, ok))
        else:
            slot = rng.randrange(timeline.total)
            if slot < SCATTER_POINTS:
                timeline.scatter[slot] = (t, ms, ok)
        if second > newest:
            newest = second
            for old in [s for s in buckets if s < newest - OPEN_SECONDS]:
                close(old)
    for second in sorted(buckets):
        close(second)
    timeline.routing = routing
    for name, begin, end in windows or []:
        lat = in_window[name]
        timeline.windows[name] = {
            "start_s": round(begin, 3), "end_s": round(end, 3), "requests": len(lat),
            "rate": round(len(lat) / (end - begin), 1) if end > begin else None,
            "error_pct": round(100 * window_errors[name] / len(lat), 2) if lat else None,
            "p50_ms": percentile(lat, 50), "p99_ms": percentile(lat, 99),
            "served_by": dict(sorted(window_served[name].items()))}
    timeline.seconds.sort(key=lambda s: s["second"])
    return timeline


COLUMNS = ["second", "requests", "errors", "p50_ms", "p99_ms", "max_ms"]
# each replica's lag samples (time, ms), its split samples (time, total ms, not yet received ms), the attack's start
LagSeries = tuple[dict[str, list[tuple[float, float]]], dict[str, list[tuple[float, float, float]]], float]


def add_lag(timeline: Timeline, lags: dict[str, list[tuple[float, float]]],
            splits: dict[str, list[tuple[float, float, float]]], t0: float) -> None:
    """Each replica's mean lag in each second of the timeline (`replicaN_lag_ms`) and the mean of its share not yet
    received (`replicaN_io_lag_ms`, the IO side of the split: docs/metrics.md), from samples on the run's clock
    whose attack started at t0."""
    rows = {int(row["second"]): row for row in timeline.seconds}
    for name in sorted(lags):
        for key, points in ((f"{name}_lag_ms", lags[name]),
                            (f"{name}_io_lag_ms", [(t, io) for t, _, io in splits.get(name, [])])):
            per_second: dict[int, list[float]] = {}
            for t, value in points:
                per_second.setdefault(int(t - t0), []).append(value)
            for second, row in rows.items():
                values = per_second.get(second)
                row[key] = round(sum(values) / len(values), 1) if values else ""


def write_csv(timeline: Timeline, path: Path) -> None:
    extra = sorted({k for row in timeline.seconds for k in row} - set(COLUMNS))
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS + extra, restval="")
        writer.writeheader()
        writer.writerows(timeline.seconds)


def preload_plotting() -> None:
    """Import what plot() needs (about half a second), meant for a thread while the harness waits on others."""
    from matplotlib import figure  # noqa: F401
    from matplotlib.backends import backend_agg  # noqa: F401


def plot(timeline: Timeline, path: Path, title: str, markers: list[tuple[float, str]] | None = None,
         lag: LagSeries | None = None) -> None:
    """latency.png: sampled points, per-second p50/p99/max, and a vertical line per marker (faults); below it, when
    the lag series are given, each replica's lag and its share not yet received (one figure: one savefig)."""
    # the Figure API without pyplot (no backend or global state to import): a run waits for this plot
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 7.5 if lag else 4.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(2, 1, 1) if lag else fig.add_subplot()
    ok = [(t, ms) for t, ms, good in timeline.scatter if good]
    bad = [(t, ms) for t, ms, good in timeline.scatter if not good]
    if ok:
        ok_t, ok_ms = zip(*ok)
        ax.scatter(ok_t, ok_ms, s=2, alpha=0.25, color="tab:blue", label="requests (sample)", rasterized=True)
    if bad:
        bad_t, bad_ms = zip(*bad)
        ax.scatter(bad_t, bad_ms, s=8, marker="x", color="tab:red", label="errors (sample)")
    secs = [s["second"] + 0.5 for s in timeline.seconds]
    for key, color in (("p50_ms", "black"), ("p99_ms", "tab:orange"), ("max_ms", "tab:red")):
        ax.plot(secs, [s[key] for s in timeline.seconds], color=color, linewidth=1.2, label=key.replace("_ms", ""))
    _mark(ax, markers)
    ax.set_yscale("log")
    ax.set_xlabel("time since attack start (s)")
    ax.set_ylabel("latency (ms, log scale)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8, ncol=5)
    if lag:
        _lag_panel(fig.add_subplot(2, 1, 2, sharex=ax), lag, markers)
    fig.subplots_adjust(left=0.08, right=0.98, top=0.94 if lag else 0.92, bottom=0.08 if lag else 0.12,
                        hspace=0.3)  # tight_layout's result, without its cost
    fig.savefig(path)


def _mark(ax: Any, markers: list[tuple[float, str]] | None) -> None:
    for x, label in markers or []:
        ax.axvline(x, color="tab:purple", linestyle="--", linewidth=1)
        ax.annotate(label, (x, 1), xycoords=("data", "axes fraction"), rotation=90, va="top", ha="right",
                    fontsize=8, color="tab:purple")


def _lag_panel(ax: Any, lag: LagSeries, markers: list[tuple[float, str]] | None) -> None:
    """Each replica's lag (solid) and its share not yet received (dashed: the IO side; the gap between them is
    received, not applied: the SQL thread's share)."""
    lags, splits, t0 = lag
    for i, name in enumerate(sorted(lags)):
        if lags[name]:
            ax.plot([t - t0 for t, _ in lags[name]], [v for _, v in lags[name]], color=f"C{i}", linewidth=1,
                    label=f"{name} lag")
        if splits.get(name):
            ax.plot([t - t0 for t, _, _ in splits[name]], [io for _, _, io in splits[name]], color=f"C{i}",
                    linestyle="--", linewidth=1, label=f"{name} not yet received (IO)")
    _mark(ax, markers)
    ax.set_xlabel("time since attack start (s)")
    ax.set_ylabel("replication lag (ms)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=8, ncol=2)
