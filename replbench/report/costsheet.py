"""The report's first page for a DBA: what row-based replication costs against its alternatives, per workload.

One table per workload (single-row update by primary key, 100-row update, wide row, no primary key), a row per
setting (ROW FULL / MINIMAL / NOBLOB, STATEMENT, MIXED, annotate off, compression on), columns: binlog bytes per
write, bytes each replica received per write, master CPU-ms per write, replica CPU-ms per applied write (net of
idle), one replica's apply capacity alone (serial, 4 threads), write latency p50; each the median [min–max] over a
study's interleaved repeats. A row's run figures come from one study only (the first in SHEET_STUDIES that has the
setting: rows of one study were measured interleaved, rows of two studies were not). Then the large transactions,
and when the replicas fall behind: lag against write rate from the write sweep beside one replica's apply capacity.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..analysis.studymetrics import fmt
from ..core import scenario as scenarios
from ..core.results import StudyCell, StudyRecord, UnitMetrics, filled, has, study_of, value
from ..core.stats import spread
from .assets import Writer

SHEET_STUDIES = ("binlog-format", "annotate", "compression", "nopk")  # run figures, in order of precedence
APPLY_STUDIES = ("parallel-apply", "cost-model")  # one replica's apply capacity alone, in order of precedence
WORKLOADS = ("write", "write-bulk", "write-wide", "write-nopk-keyed", "write-nopk")
BIG_TRANSACTIONS = "big-transaction"
FOUR_THREADS = (4, "optimistic")  # the parallel column: MariaDB's default mode

Metrics = UnitMetrics  # a unit's metrics, by analysis/studymetrics' keys
Studies = list[dict[str, Any]] | list[StudyRecord]  # study.json's dictionaries, or their records


def setting(knobs: dict[str, Any]) -> str:
    """'ROW FULL', 'STATEMENT', 'ROW MINIMAL, compression on', 'ROW FULL, annotate off' from a cell's knobs."""
    fmt_ = str(knobs.get("binlog_format", "ROW"))
    label = f"ROW {knobs.get('binlog_row_image', 'FULL')}" if fmt_ == "ROW" else fmt_
    if knobs.get("binlog_annotate") == "off":
        label += ", annotate off"
    if knobs.get("binlog_compress") == "on":
        label += ", compression on"
    return label


def _received(m: Metrics) -> float | None:
    sent, threads = m.sent_per_write, m.dump_threads
    return sent / threads if sent is not None and threads else None


COLUMNS: tuple[tuple[str, Callable[[Metrics], float | None]], ...] = (
    ("binlog B/write", lambda m: m.bytes_per_write),
    ("B each replica received/write", _received),
    ("master CPU-ms/write", lambda m: m.master_ms_per_write),
    ("replica CPU-ms/applied write", lambda m: m.replica_ms_per_write),
)
LATENCY = ("write p50 ms", lambda m: m.commit_p50_ms)


def _figure(values: list[float | None]) -> str:
    got = spread(values)
    if got["median"] is None:
        return "–"
    text, low, high = fmt(got["median"]), fmt(got["min"]), fmt(got["max"])
    return text if low == high else f"{text} [{low}–{high}]"


def _usable(cell: StudyCell, scenario: str) -> bool:
    """A cell that runs the workload as its scenario file defines it (not another row count or rate)."""
    changed = cell.changed or {}
    rows = changed.get("rows")
    try:
        default_rows = scenarios.load(scenario).bulk_rows
    except (OSError, ValueError):
        return False
    return "load" not in changed and (rows is None or str(rows).replace(",", "") == str(default_rows))


def _units(data: StudyRecord) -> list[tuple[str, StudyCell, Metrics]]:
    """(scenario, cell, metrics) of each measured unit of a study."""
    cells = {c.name: c for c in data.cells}
    return [(u.scenario, cells[u.cell], u.metrics) for u in data.units if filled(u.metrics) and u.cell in cells]


def sheet_rows(studies: Studies) -> dict[str, list[tuple[str, str, list[Metrics]]]]:
    """Per workload, (setting, study, each repeat's metrics) in the order the studies list them."""
    by_name = {d.name: d for d in map(study_of, studies)}
    rows: dict[str, dict[str, tuple[str, list[Metrics]]]] = {}
    for name in SHEET_STUDIES:
        if name not in by_name:
            continue
        mine: dict[tuple[str, str], list[Metrics]] = {}
        for scenario, cell, metrics in _units(by_name[name]):
            if scenario in WORKLOADS and _usable(cell, scenario) and has(metrics, "bytes_per_write"):
                mine.setdefault((scenario, setting(cell.knobs)), []).append(metrics)
        for (scenario, label), runs in mine.items():
            rows.setdefault(scenario, {}).setdefault(label, (name, runs))
    return {w: [(label, study, runs) for label, (study, runs) in rows[w].items()] for w in WORKLOADS if w in rows}


def apply_rates(studies: Studies) -> dict[tuple[str, str, str], tuple[str, list[float | None]]]:
    """(workload, setting, 'serial' | '4 threads') -> (study, each repeat's apply trx/s of the slower replica)."""
    by_name = {d.name: d for d in map(study_of, studies)}
    out: dict[tuple[str, str, str], tuple[str, list[float | None]]] = {}
    for name in APPLY_STUDIES:
        if name not in by_name:
            continue
        mine: dict[tuple[str, str, str], list[float | None]] = {}
        for scenario, cell, metrics in _units(by_name[name]):
            if not has(metrics, "apply_trx_per_s") or not _usable(cell, scenario):
                continue
            knobs = cell.knobs  # a map of settings
            threads = (int(knobs.get("parallel_threads") or 0), knobs.get("parallel_mode"))
            column = "serial" if threads[0] == 0 else "4 threads" if threads == FOUR_THREADS else None
            if column:
                mine.setdefault((scenario, setting(knobs), column), []).append(metrics.apply_trx_per_s)
        for key, values in mine.items():
            out.setdefault(key, (name, values))
    return out


def cost_sheet(studies: Studies) -> list[str]:
    rows = sheet_rows(studies)
    if not rows:
        return ["## What each replication setting costs", "",
                "No binlog-format, annotate, compression or nopk study here yet: `./run.sh campaign report` "
                "runs them all.", ""]
    applied = apply_rates(studies)
    lines = ["## What each replication setting costs", "",
             "Per workload, a row per setting; each figure is the median [min–max] over one study's interleaved "
             "repeats (rows of one study were measured side by side; compare across studies with care). CPU is net "
             "of each node's idle; the replica figure is the busier replica's. *apply alone*: transactions/s one "
             "replica applies from a queued backlog with the other replicas stopped (serial SQL thread, and 4 "
             "threads in MariaDB's default optimistic mode), the slower replica's; measured under ROW FULL only. "
             "*write p50*: the client's median latency of a write request (app, master commit, fsyncs).", ""]
    for workload, settings in rows.items():
        try:
            title = scenarios.load(workload).description
        except (OSError, ValueError):
            title = workload
        lines += [f"### `{workload}`: {title}", "",
                  "| setting | " + " | ".join(c for c, _ in COLUMNS)
                  + " | apply alone trx/s | apply alone, 4 threads | " + LATENCY[0] + " | study |",
                  "|---|" + "---|" * (len(COLUMNS) + 4)]
        for label, study, runs in settings:
            cells = [_figure([get(m) for m in runs]) for _, get in COLUMNS]
            found = [applied.get((workload, label, column)) for column in ("serial", "4 threads")]
            cells += [_figure(f[1]) if f else "–" for f in found]
            cells.append(_figure([LATENCY[1](m) for m in runs]))
            sources = sorted({f[0] for f in found if f})
            lines.append(f"| {label} | " + " | ".join(cells) + f" | {study}"
                         + (f"; apply: {', '.join(sources)}" if sources else "") + " |")
        lines.append("")
    return lines


def big_transactions(studies: Studies) -> list[str]:
    """One row per cell of study big-transaction: binlog MB, the master's execute + commit, the slowest replica."""
    data = next((d for d in map(study_of, studies) if d.name == BIG_TRANSACTIONS), None)
    if not data:
        return []
    runs: dict[str, list[Metrics]] = {}
    for _, cell, metrics in _units(data):
        runs.setdefault(cell.name, []).append(metrics)
    if not runs:
        return []
    lines = ["### Large transactions: one UPDATE of many rows", "",
             "Study `big-transaction`: one transaction per unit, drained before the next; median [min–max] over "
             f"{data.repeat} interleaved repeats. *applied after commit*: from the master's commit until the "
             "slowest replica applied it (a replica starts only when the master has committed; 4 parallel threads "
             "do not split one transaction).", "",
             "| transaction | binlog MB | master s (execute + commit) | slowest replica applied, s after commit | "
             "binlog cache spills |", "|---|---|---|---|---|"]
    order = [c.name for c in data.cells if c.name in runs]  # the file's order: by size, then setting
    for name, mine in ((n, runs[n]) for n in order):
        lines.append(f"| {name} | " + " | ".join(_figure([value(m, k) for m in mine]) for k in (
            "bigtx_binlog_mb", "bigtx_master_s", "bigtx_applied_s", "bigtx_cache_spills")) + " |")
    return lines + [""]


def falling_behind(studies: Studies, latest: dict[str, dict[str, Any]], writer: Writer) -> list[str]:
    """Lag against write rate from the write sweep, beside one replica's apply capacity alone: one plot, one
    sentence (latest: the sweeps' sections as report/sweeps.py gives them, by sweep key)."""
    sweep = latest.get("write")
    if not sweep or not sweep.get("steps"):
        return []
    lines = ["## When do the replicas fall behind?", ""]
    apply = apply_rates(studies).get(("write", "ROW FULL", "serial"))
    capacity = spread(apply[1])["median"] if apply else None
    lags = []
    for step in sweep["steps"]:
        values = [max([v.p99_ms or 0 for v in (r.summary.lag or {}).values()] or [0]) for r in step.repeats]
        lags.append((step.rate, spread(values)["median"], step.passed))
    passing = sorted((rate, lag) for rate, lag, ok in lags if ok)
    sentence = f"`write` (single-row updates, ROW FULL): the master sustained {sweep['max_text']} here"
    if passing:
        rate, lag = passing[-1]
        sentence += f"; at {rate}/s, the highest passing step, the busier replica's lag p99 was {fmt(lag)} ms"
    if capacity:
        sentence += (f"; one replica applying alone keeps up with {fmt(capacity)} transactions/s ("
                     f"`{apply[0]}`, serial SQL thread)")
        if sweep.get("max") and capacity > sweep["max"]:
            sentence += (f", {capacity / sweep['max']:.1f}× what the master could commit: on this box the master "
                         "saturates first, and lag rises with the shared CPU, not because the SQL thread is too slow")
        elif sweep.get("max"):
            sentence += ": below the master's ceiling, so the replicas fall behind from about that rate"
    lines += [sentence + ".", ""]
    plot = writer.root / sweep["folder"] / "lag.png"
    if plot.exists():
        lines += [f"![lag against write rate]({writer.rel(plot)})", ""]
    return lines
