"""The report's first page for a DBA: what row-based replication costs against its alternatives, per workload.

One table per workload (single-row update by primary key, 100-row update, wide row, no primary key), a row per
setting (ROW FULL / MINIMAL / NOBLOB, STATEMENT, MIXED, annotate off, compression on), columns: binlog bytes per
write, bytes each replica received per write, master CPU-ms per write, replica CPU-ms per applied write (net of
idle), one replica's apply capacity alone (serial, 4 threads), write latency p50; each the median [min–max] over a
study's interleaved repeats. A row's run figures come from one study only (the first in SHEET_STUDIES that has the
setting: rows of one study were measured interleaved, rows of two studies were not), and a row of another study
than the ROW FULL row's is scaled by its own study's ROW FULL (scales). Then the large transactions.
"""

from __future__ import annotations

from collections.abc import Callable

from ..analysis.answers import CompressionEffect, compression_effects
from ..analysis.studymetrics import figure_text, fmt, metrics_of, row_of, unit_source
from ..core import scenario as scenarios
from ..core.results import StudyCell, StudyRecord, UnitMetrics
from ..core.stats import median
from ..topology.knobs import Knobs, recorded

SHEET_STUDIES = ("binlog-format", "annotate", "compression", "nopk")  # run figures, in order of precedence
APPLY_STUDIES = ("parallel-apply", "cost-model")  # one replica's apply capacity alone, in order of precedence
WORKLOADS = ("write", "write-bulk", "write-wide", "write-nopk-keyed", "write-nopk")
BIG_TRANSACTIONS = "big-transaction"
FOUR_THREADS = (4, "optimistic")  # the parallel column: MariaDB's default mode

Metrics = UnitMetrics  # a unit's metrics, by analysis/studymetrics' keys
Studies = list[StudyRecord]  # study.json's records


def setting(knobs: Knobs) -> str:
    """'ROW FULL', 'STATEMENT', 'ROW MINIMAL, compressed from 10 B', 'ROW FULL, annotate off' from a cell's knobs
    (compression with its threshold, log_bin_compress_min_len: the server's default where a cell records none)."""
    label = f"ROW {knobs.binlog_row_image}" if knobs.binlog_format == "ROW" else knobs.binlog_format
    if knobs.binlog_annotate == "off":
        label += ", annotate off"
    if knobs.binlog_compress == "on":
        label += f", compressed from {knobs.binlog_compress_min_len} B"
    return label


def compressed_text(effects: list[CompressionEffect]) -> str:
    """Which events compression shrank, per table (analysis/answers.compression_effects' rows), in one sentence;
    empty without a compressed cell."""
    if not effects:
        return ""
    per_group: dict[str, list[str]] = {}
    for e in effects:
        what = "compressed" if e.compressed else "none reached it"
        label = setting(recorded(e.knobs)).replace(", compressed", "")
        per_group.setdefault(e.group, []).append(f"{label}: {fmt(e.off)} → {fmt(e.on)} B a write, {what}")
    return (f"MariaDB compresses a row event only when its row data (a query event: its statement) is at least "
            f"log_bin_compress_min_len bytes ({Knobs().binlog_compress_min_len} by default), no other event. "
            + "; ".join(f"`{group}`: " + ", ".join(said) for group, said in per_group.items()) + ".")


def _received(m: Metrics) -> float | None:
    sent, threads = m.sent_per_write, m.dump_threads
    return sent / threads if sent is not None and threads else None


DEFINITIONS = "#how-to-read-the-columns"  # report/page.definitions' heading: every term the tables use
RECEIVED = "received_per_write"  # no metric of studymetrics: the sheet's own key, for its scale
# (header, the metric's key where it has one, the figure): a net-of-idle CPU figure below its resolution is printed
# as that, never as a cost
COLUMNS: tuple[tuple[str, str | None, Callable[[Metrics], float | None]], ...] = (
    ("binlog B/write", "bytes_per_write", lambda m: m.bytes_per_write),
    ("B each replica received/write", RECEIVED, _received),
    ("master CPU-ms/write", "master_ms_per_write", lambda m: m.master_ms_per_write),
    ("replica CPU-ms/applied write", "replica_ms_per_write", lambda m: m.replica_ms_per_write),
)
# each replica figure with the write it defers: the run's own dirty pages forced out after it, per write (analysis/
# writeback); shown where any run of the sheet recorded it (runs before 2026-12-02 did not). A forced flush writes
# each dirty page once: an upper bound on the pages and bytes a page cleaner writes at steady state, not on its CPU
# (docs/decisions/write-back.md)
WRITEBACK_COLUMNS: tuple[tuple[str, str | None, Callable[[Metrics], float | None]], ...] = (
    ("replica CPU-ms/write with write-back", "replica_ms_per_write_with_writeback",
     lambda m: m.replica_ms_per_write_with_writeback),
    ("replica KB written/write with write-back", "replica_kb_written_per_write_with_writeback",
     lambda m: m.replica_kb_written_per_write_with_writeback),
)
LATENCY = ("write p50 ms", lambda m: m.commit_p50_ms)
APPLY_HEADS = {"serial": "apply alone trx/s", "4 threads": "apply alone, 4 threads"}
CONTROL = "ROW FULL"  # the setting every study of the sheet runs beside its others: a row's scale (scales)
# the columns a row of another study is scaled on: every one (time and CPU follow the host's speed that round, bytes
# the data each study's runs wrote: write-bulk's row images drift with it; issue 73)
SCALED: dict[str, Callable[[Metrics], float | None]] = {
    "bytes_per_write": lambda m: m.bytes_per_write, RECEIVED: _received,
    "master_ms_per_write": lambda m: m.master_ms_per_write, "replica_ms_per_write": lambda m: m.replica_ms_per_write,
    "replica_ms_per_write_with_writeback": lambda m: m.replica_ms_per_write_with_writeback,
    "replica_kb_written_per_write_with_writeback": lambda m: m.replica_kb_written_per_write_with_writeback,
    "commit_p50_ms": LATENCY[1]}
# the large transactions' columns, after the transaction's name
BIG_COLUMNS: tuple[Callable[[Metrics], float | None], ...] = (
    lambda m: m.bigtx_binlog_mb, lambda m: m.bigtx_master_s, lambda m: m.bigtx_applied_s,
    lambda m: m.bigtx_cache_spills)


def _figure(values: list[float | None], runs: list[Metrics] | None = None, key: str | None = None,
            scale: float = 1.0) -> str:
    """The repeats' median [min–max]; with the runs and the metric's key, 'below resolution (< r)' where a net
    figure cannot be told from zero; every value and the resolution times `scale` (scales')."""
    values = [None if v is None else v * scale for v in values]
    resolution = median([(m.resolution or {}).get(key) for m in runs or []]) if key else None
    resolution = None if resolution is None else resolution * scale
    return figure_text(row_of(values, resolution), key)


def _usable(cell: StudyCell, scenario: str) -> bool:
    """A cell that runs the workload as its scenario file defines it (not another row count or rate)."""
    changed = cell.changed or {}
    rows = changed.get("rows")
    try:
        default_rows = scenarios.load(scenario).bulk_rows
    except (OSError, ValueError):
        return False
    return "load" not in changed and (rows is None or str(rows).replace(",", "") == str(default_rows))


def _units(data: StudyRecord) -> list[tuple[str, StudyCell, str, Metrics]]:
    """(scenario, cell, source, metrics) of each measured unit of a study: its source (studymetrics.SOURCE_OF_MEASURE)
    says which of the metrics its map holds, a run's, an apply-capacity's or a big transaction's."""
    assert data.cells is not None and data.units is not None  # experiments/study.py writes both
    cells = {c.name: c for c in data.cells}
    found = []
    for u in data.units:
        if (metrics := metrics_of(u)) is not None and u.cell in cells:
            assert u.scenario is not None  # experiments/study.py writes every unit's
            found.append((u.scenario, cells[u.cell], unit_source(u), metrics))
    return found


def _knobs(cell: StudyCell) -> Knobs:
    """A cell's settings: studyfile.cell_records writes every cell's."""
    assert cell.knobs is not None
    return recorded(cell.knobs)


def controls(studies: Studies) -> dict[tuple[str, str], list[Metrics]]:
    """(workload, study) -> that study's own ROW FULL runs of the workload: the control each of its rows was
    measured beside, in the same rounds."""
    out: dict[tuple[str, str], list[Metrics]] = {}
    for data in studies:
        if data.name not in SHEET_STUDIES:
            continue
        for scenario, cell, source, metrics in _units(data):
            if source == "run" and _usable(cell, scenario) and setting(_knobs(cell)) == CONTROL:
                out.setdefault((scenario, data.name), []).append(metrics)
    return out


def scales(studies: Studies, rows: dict[str, list[tuple[str, str, list[Metrics]]]]
           ) -> dict[tuple[str, str], dict[str, float]]:
    """(workload, study) -> per scaled column, the factor that puts a row of that study on the ROW FULL row's
    footing: the ROW FULL row's median over the study's own ROW FULL median (both measured; docs/studies.md). None
    for the ROW FULL row's own study, and for a study without a ROW FULL cell of the workload (left as measured)."""
    own = controls(studies)
    out: dict[tuple[str, str], dict[str, float]] = {}
    for workload, settings in rows.items():
        base = next(((study, runs) for label, study, runs in settings if label == CONTROL), None)
        if base is None:
            continue
        for study in {study for _, study, _ in settings if study != base[0]}:
            control = own.get((workload, study))
            if not control:
                continue
            factors = {}
            for key, get in SCALED.items():
                mine, theirs = median([get(m) for m in base[1]]), median([get(m) for m in control])
                if mine is not None and theirs:
                    factors[key] = mine / theirs
            out[(workload, study)] = factors
    return out


def sheet_rows(studies: Studies) -> dict[str, list[tuple[str, str, list[Metrics]]]]:
    """Per workload, (setting, study, each repeat's metrics) in the order the studies list them."""
    by_name = {d.name: d for d in studies}
    rows: dict[str, dict[str, tuple[str, list[Metrics]]]] = {}
    for name in SHEET_STUDIES:
        if name not in by_name:
            continue
        mine: dict[tuple[str, str], list[Metrics]] = {}
        for scenario, cell, source, metrics in _units(by_name[name]):
            if scenario in WORKLOADS and _usable(cell, scenario) and source == "run":
                mine.setdefault((scenario, setting(_knobs(cell))), []).append(metrics)
        for (scenario, label), runs in mine.items():
            rows.setdefault(scenario, {}).setdefault(label, (name, runs))
    return {w: [(label, study, runs) for label, (study, runs) in rows[w].items()] for w in WORKLOADS if w in rows}


def apply_rates(studies: Studies) -> dict[tuple[str, str, str], tuple[str, list[float | None]]]:
    """(workload, setting, 'serial' | '4 threads') -> (study, each repeat's apply trx/s of the slower replica)."""
    by_name = {d.name: d for d in studies}
    out: dict[tuple[str, str, str], tuple[str, list[float | None]]] = {}
    for name in APPLY_STUDIES:
        if name not in by_name:
            continue
        mine: dict[tuple[str, str, str], list[float | None]] = {}
        for scenario, cell, source, metrics in _units(by_name[name]):
            if source != "apply" or not _usable(cell, scenario):
                continue
            knobs = _knobs(cell)
            threads = (knobs.parallel_threads, knobs.parallel_mode)
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
    applied, scaled = apply_rates(studies), scales(studies, rows)
    backed = any(get(m) is not None for settings in rows.values() for _, _, runs in settings for m in runs
                 for _, _, get in WRITEBACK_COLUMNS)
    columns = COLUMNS + (WRITEBACK_COLUMNS if backed else ())
    lines = ["## What each replication setting costs", "",
             "Per workload, a row per setting; each figure is the median [min–max] over one study's interleaved "
             "repeats. A row *scaled* came from another study than ROW FULL's: every figure is scaled by its "
             "study's own ROW FULL, run in the same rounds. CPU is net "
             "of each node's idle; *replica* as defined above. *apply alone*: transactions/s one "
             "replica applies from a queued backlog, the others stopped (serial, and 4 threads in MariaDB's default "
             "optimistic mode); ROW FULL only. *write p50*: a write request's median latency (app, commit, "
             "fsyncs)." + (" *with write-back*: the run's figure with its own dirty pages forced out after it, per "
                           "write the master took: an upper bound on the pages and bytes written at steady state, "
                           "not on the CPU ([decisions/write-back.md](docs/decisions/write-back.md))."
                           if backed else ""), ""]
    for workload, settings in rows.items():
        try:
            title = scenarios.load(workload).description
        except (OSError, ValueError):
            title = workload
        # the apply-alone columns only where a drain of this workload ran (a study of the same campaign)
        drains = [c for c in APPLY_HEADS if any((workload, label, c) in applied for label, _, _ in settings)]
        lines += [f"### `{workload}`: {title}", "",
                  "| setting | " + " | ".join(c for c, _, _ in columns)
                  + "".join(f" | {APPLY_HEADS[c]}" for c in drains) + " | " + LATENCY[0] + " | study |",
                  "|---|" + "---|" * (len(columns) + len(drains) + 2)]
        for label, study, runs in settings:
            factors = scaled.get((workload, study), {})
            cells = [_figure([get(m) for m in runs], runs, key, factors.get(key or "", 1.0))
                     for _, key, get in columns]
            found = [applied.get((workload, label, column)) for column in drains]
            cells += [_figure(f[1]) if f else "–" for f in found]
            cells.append(_figure([LATENCY[1](m) for m in runs], scale=factors.get("commit_p50_ms", 1.0)))
            sources = sorted({f[0] for f in found if f})
            lines.append(f"| {label} | " + " | ".join(cells) + f" | {study}" + (", scaled" if factors else "")
                         + (f"; apply: {', '.join(sources)}" if sources else "") + " |")
        lines.append("")
    compression = next((d for d in studies if d.name == "compression"), None)
    said = compressed_text(compression_effects(compression)) if compression else ""
    return lines + ([f"*compressed from N B* (study compression): {said}", ""] if said else [])


def big_transactions(studies: Studies) -> list[str]:
    """One row per cell of study big-transaction: binlog MB, the master's execute + commit, the slowest replica."""
    data = next((d for d in studies if d.name == BIG_TRANSACTIONS), None)
    if not data:
        return []
    runs: dict[str, list[Metrics]] = {}
    for _, cell, _, metrics in _units(data):
        assert cell.name is not None  # studyfile.cell_records writes every cell's
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
    order = [c.name for c in data.cells or [] if c.name in runs]  # the file's order: by size, then setting
    for name, mine in ((n, runs[n]) for n in order):
        lines.append(f"| {name} | " + " | ".join(_figure([get(m) for m in mine]) for get in BIG_COLUMNS) + " |")
    return lines + [""]
