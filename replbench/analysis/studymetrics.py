"""What a study measures and how its cells compare: each metric taken from one run's summary.json (or one
apply-capacity's apply.json, or one big transaction's bigtx.json), then per cell and scenario the median and
min–max over repeats, the ratio to the baseline cell, and the verdict recorded in study.json: "different" when the
repeats' ranges do not overlap, else "within noise" (a description of the ranges: what a reader is told of a
difference is core/stats.judgement's, docs/metrics.md "Comparing two figures"). Which metrics are counts (compared
exactly, never tested) and which have a floor is declared here, once, in METRICS. Shared by the study runner
(study.json, the terminal table) and report.md."""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..core.config import LAG_FLOOR_MS, Word, index_names
from ..core.nodenames import replicas_in
from ..core.records import STATUS_FAILED, UNIT_FAILED
from ..core.results import (
    ApplyRecord,
    ApplyReplica,
    BigTxRecord,
    BigTxReplica,
    BigTxTransaction,
    Binlog,
    Comparison,
    ComparisonRow,
    Latency,
    NodeCounters,
    Num,
    RowsChecked,
    RunSummary,
    StudyCell,
    StudyRecord,
    StudyUnit,
    UnitMetrics,
    WritebackNode,
)
from ..core.scenario import PassCriteria
from ..core.stats import below_floor, floor_text, judgement, median, ratio, separated, spread
from ..topology.knobs import recorded as recorded_knobs
from . import rules
from .costmodel import node_counters

SOURCE_OF_MEASURE = {"run": "run", "apply-capacity": "apply", "big-transaction": "bigtx",  # a unit's data file
                     "live": "apply",  # a live window's apply.json: its drain, and its window's figures
                     "replay": "apply"}  # a replay's apply.json: its one replica's drain of the files

# the record a metric reads, its source's: a RunSummary (run), an ApplyRecord (apply) or a BigTxRecord (bigtx)
D = TypeVar("D", RunSummary, ApplyRecord, BigTxRecord)
N = TypeVar("N")  # what a node's figure is read from (_worse_replica)
V = TypeVar("V")  # a study file's value of a cell key (grid_cells)


@dataclass(frozen=True)
class Metric(Generic[D]):
    key: str
    label: str
    unit: str
    get: Callable[[D], float | None]
    lower_is_better: bool = True
    source: str = "run"  # run (summary.json), apply (apply.json) or bigtx (bigtx.json): D's file
    never: Callable[[D], bool] | None = None  # a unit whose figure never came (counted, not dropped)
    resolution: Callable[[D], float | None] | None = None  # below it the figure cannot be told from 0
    # a count of the workload (bytes, rows, pages, syncs, threads, requests), not a timing or CPU: why its repeats
    # can differ, printed where they do; compared exactly with its spread, never tested (core/stats.judgement)
    count: str = ""
    floor: float | None = None  # in the metric's unit: below it nothing is resolved, printed "< floor" (the lag's)


# why a count's repeats can differ (printed beside a count whose repeats do, in place of a test): docs/metrics.md,
# "Comparing two figures"
BYTES_VARY = "row images follow the data, rewritten each run"
PAGES_VARY = "the pool's state sets them"
SYNCS_VARY = "syncs per write follow how many commits shared a group commit, which follows their timing"
ROWS_VARY = "the new values are drawn afresh each run, and an update that leaves a row as it was changes nothing"
THREADS_VARY = "a dump thread lives as long as its replica's connection"
SHED_VARY = "what the app sheds follows when its queue reached its bound"
SPILLS_VARY = "a transaction spills once its events outgrow the binlog cache, and its row images follow the data"


def _wrote(summary: RunSummary) -> bool:
    """The run's own requests changed data: a read run's per-write figures would come from a handful of stray
    transactions (the tail of the write run before it), so they are left out."""
    return bool(_binlog(summary).successful_writes)


def _binlog(summary: RunSummary) -> Binlog:
    return summary.binlog or Binlog()


def _latency(summary: RunSummary) -> Latency:
    return summary.latency_ms or Latency()


def _nodes(summary: RunSummary) -> dict[str, NodeCounters | None]:
    return (summary.replication.nodes if summary.replication else None) or {}


def _net(node: NodeCounters, figure: str) -> Num | None:
    """A node's per-write count net of idle (analysis/summary.counters_net_of_idle), the gross one in a run recorded
    before the idle window's rate of that count was."""
    net = getattr(node, f"{figure}_net")
    return net if net is not None else getattr(node, figure)


def _per_trx(summary: RunSummary, node: str) -> float | None:
    """A node's CPU-ms per application transaction, net of idle (gross in summaries from before the idle window)."""
    if not _wrote(summary):
        return None
    cpu = (summary.cpu_seconds_net or {}).get(node)
    if cpu is None:
        cpu = (summary.cpu_seconds or {}).get(node)
    trx = node_counters(summary, node).transactions
    return round(1000 * cpu / trx, 4) if cpu is not None and trx else None


def _per_trx_resolution(summary: RunSummary, nodes: tuple[str, ...]) -> float | None:
    """The resolution of _per_trx's net figure (the widest of the nodes'): below it, a node's net CPU per
    transaction cannot be told from zero."""
    if not _wrote(summary):
        return None
    got = [1000 * r / trx for n in nodes
           if (r := (summary.cpu_seconds_net_resolution or {}).get(n)) is not None
           and (trx := node_counters(summary, n).transactions)]
    return round(max(got), 4) if got else None


def _replicas(summary: RunSummary) -> tuple[str, ...]:
    """The run's replicas, from its CPU and replication figures (two when it names none)."""
    names = [*(summary.cpu_seconds or {}), *_nodes(summary)]
    return replicas_in(names) or ("replica1", "replica2")


def _never_caught_up(summary: RunSummary) -> bool:
    """A replica did not catch up within the run's catch-up timeout: the unit's catch-up is "never", not absent."""
    return any(v is None for v in (summary.catch_up_s or {}).values())


# what "replica" means in every table of the report (each table says so): one replica's figure, the worse one's
REPLICA_MEANS = "the worse replica's figure (the larger CPU, lag or pages, the smaller apply rate)"


def lag_floor_ms(summaries: list[RunSummary]) -> float:
    """The floor of these runs' lag figures (docs/metrics.md, "Lag"): the widest any recorded (summary.json
    lag_floor_ms: the positions' achieved read interval, or the heartbeat's period in runs measured before them),
    LAG_FLOOR_MS where none recorded one."""
    return float(max((s.lag_floor_ms for s in summaries if s.lag_floor_ms is not None), default=LAG_FLOOR_MS))


def _worse_replica(per_node: Mapping[str, N | None], figure: Callable[[N], Num | None]) -> float | None:
    """The worse (larger) of the replicas' figure: per_node maps node names to records (None where a node has none)."""
    values = [figure(v) for r in replicas_in(per_node) if (v := per_node[r]) is not None]
    got = [v for v in values if v is not None]
    return max(got) if got else None


def _writeback(summary: RunSummary, names: tuple[str, ...], figure: Callable[[WritebackNode], Num | None]) -> \
        float | None:
    """The larger of these nodes' write-back figure (one node's, or the worse replica's), None without one."""
    nodes = (summary.writeback.nodes if summary.writeback else None) or {}
    got = [v for n in names if (node := nodes.get(n)) is not None and (v := figure(node)) is not None]
    return max(got) if got and _wrote(summary) else None


def _per_ok(summary: RunSummary, group: str) -> float | None:
    """A group's CPU-ms per successful request, net of idle where the summary has it."""
    net = (summary.cpu_ms_per_success_net or {}).get(group)
    return net if net is not None else (summary.cpu_ms_per_success or {}).get(group)


def _db_per_ok(summary: RunSummary) -> float | None:
    values = [_per_ok(summary, n) for n in ("master", *_replicas(summary))]
    return None if None in values else round(sum(values), 4)  # type: ignore[arg-type]


def _rows_changed_pct(summary: RunSummary) -> float | None:
    share = (summary.rows_checked or RowsChecked()).share
    return None if share is None else round(100 * share, 2)


def _semi_sync_wait_us(summary: RunSummary) -> float | None:
    """MariaDB's own semi-sync wait counter on the master (counters.describe writes every key of the table)."""
    semi = node_counters(summary, "master").semi_sync
    return semi.avg_tx_wait_us if semi else None


def _replication_rtt_ms(summary: RunSummary) -> float | None:
    """The slowest replication link's round trip as the run measured it through its proxy (topology/links
    .measure_rtt, kept in the summary's `links`; the app's links, app-<node>, left out: a semi-sync acknowledgement
    does not cross them); None without a replication link."""
    got = [float(v.measured_rtt_ms) for name, v in (summary.links or {}).items()
           if not name.startswith("app-") and v.measured_rtt_ms is not None]
    return max(got) if got else None


def _apply(data: ApplyRecord, figure: Callable[[ApplyReplica], Num | None], cost: bool = False) -> float | None:
    """The worse replica's figure of a drain, as "replica" means in every table: the smaller rate (the slower
    replica bounds the topology), or with cost the larger CPU per transaction."""
    replicas = data.replicas or {}
    values = [figure(e) for r in replicas_in(replicas) if (e := replicas[r]) is not None]
    got = [v for v in values if v is not None]
    return (max(got) if cost else min(got)) if got else None


def _per(total: Num | None, count: Num | None) -> float | None:
    return None if total is None or not count else round(total / count, 1)


def _live_cpu(data: ApplyRecord, role: str) -> float | None:
    """A live window's CPU per transaction of the nodes in a role (master, following), the larger of them (net of
    idle where the idle sample saw no transaction: LiveCpu.net)."""
    got = [c.cpu_ms_per_trx for c in ((data.live.cpu if data.live else None) or {}).values()
           if c.role == role and c.cpu_ms_per_trx is not None]
    return max(got) if got else None


def _live_back(data: ApplyRecord, role: str, figure: Callable[[WritebackNode], Num | None]) -> float | None:
    """A live window's figure with the write-back it left on the nodes of a role (forced out after it: a workload
    file's windows only), the larger of them."""
    got = [v for c in ((data.live.cpu if data.live else None) or {}).values()
           if c.role == role and c.writeback is not None and (v := figure(c.writeback)) is not None]
    return max(got) if got else None


def _bigtx(data: BigTxRecord, figure: Callable[[BigTxTransaction], Num | None], scale: float = 1.0) -> float | None:
    """One big-transaction unit's figure (its one transaction; the median when it ran several)."""
    values = [v * scale for t in data.transactions or [] if (v := figure(t)) is not None]
    return round(statistics.median(values), 4) if values else None


def _bigtx_replica(data: BigTxRecord, figure: Callable[[BigTxReplica], Num | None],
                   scale: float = 1.0) -> float | None:
    values = [max(vals) * scale for t in data.transactions or []
              if (vals := [v for r in (t.replicas or {}).values() if (v := figure(r)) is not None])]
    return round(statistics.median(values), 4) if values else None


RUN_METRICS: tuple[Metric[RunSummary], ...] = (
    Metric("bytes_per_write", "binlog B/write", "B", lambda s: _binlog(s).bytes_per_write, count=BYTES_VARY),
    Metric("bytes_per_row", "binlog B/row", "B", lambda s: _binlog(s).bytes_per_row if _wrote(s) else None,
           count=BYTES_VARY),
    Metric("master_ms_per_write", "master CPU-ms/write", "ms", lambda s: _per_trx(s, "master"),
           resolution=lambda s: _per_trx_resolution(s, ("master",))),
    Metric("sent_per_write", "bytes sent to all replicas/write", "B", lambda s: _binlog(s).sent_bytes_per_write,
           count=BYTES_VARY),
    Metric("dump_threads", "master binlog dump threads", "", lambda s: _binlog(s).dump_threads, count=THREADS_VARY),
    Metric("replica_ms_per_write", "replica CPU-ms/applied write", "ms",
           lambda s: max([v for v in (_per_trx(s, r) for r in _replicas(s)) if v is not None], default=None),
           resolution=lambda s: _per_trx_resolution(s, _replicas(s))),
    Metric("rows_changed_pct", "rows changed %", "%", _rows_changed_pct, lower_is_better=False, count=ROWS_VARY),
    Metric("replica_disk_reads_per_write", "replica pages read from disk/write", "",
           lambda s: _worse_replica(_nodes(s), lambda n: _net(n, "pool_disk_reads_per_write")) if _wrote(s) else None,
           count=PAGES_VARY),
    Metric("replica_pages_read_per_write", "replica InnoDB pages read/write", "",
           lambda s: _worse_replica(_nodes(s), lambda n: _net(n, "pages_read_per_write")) if _wrote(s) else None,
           count=PAGES_VARY),
    Metric("replica_pages_written_per_write", "replica InnoDB pages written/write", "",
           lambda s: _worse_replica(_nodes(s), lambda n: _net(n, "pages_written_per_write")) if _wrote(s) else None,
           count=PAGES_VARY),
    Metric("replica_pages_flushed_per_write", "replica pages flushed/write", "",
           lambda s: _worse_replica(_nodes(s), lambda n: _net(n, "pages_flushed_per_write")) if _wrote(s) else None,
           count=PAGES_VARY),
    Metric("master_kb_written_per_write", "master KB written/write", "KB",
           lambda s: _net(node_counters(s, "master"), "kb_written_per_write") if _wrote(s) else None,
           count=PAGES_VARY),
    Metric("replica_kb_written_per_write", "replica KB written/write", "KB",
           lambda s: _worse_replica(_nodes(s), lambda n: _net(n, "kb_written_per_write")) if _wrote(s) else None,
           count=PAGES_VARY),
    # the run's figure with its write-back (its own dirty pages forced out after it: analysis/writeback), absent in
    # runs recorded before it was measured
    Metric("master_ms_per_write_with_writeback", "master CPU-ms/write with write-back", "ms",
           lambda s: _writeback(s, ("master",), lambda n: n.cpu_ms_per_write_net_with_writeback)),
    Metric("replica_ms_per_write_with_writeback", "replica CPU-ms/write with write-back", "ms",
           lambda s: _writeback(s, _replicas(s), lambda n: n.cpu_ms_per_write_net_with_writeback)),
    Metric("replica_kb_written_per_write_with_writeback", "replica KB written/write with write-back", "KB",
           lambda s: _writeback(s, _replicas(s), lambda n: n.kb_written_per_write_with_writeback), count=PAGES_VARY),
    Metric("replica_pages_flushed_per_write_with_writeback", "replica pages flushed/write with write-back", "",
           lambda s: _writeback(s, _replicas(s), lambda n: n.pages_flushed_per_write_with_writeback),
           count=PAGES_VARY),
    Metric("binlog_syncs_per_write", "master binlog syncs/write", "",
           lambda s: _net(node_counters(s, "master"), "binlog_syncs_per_write") if _wrote(s) else None,
           count=SYNCS_VARY),
    Metric("fsyncs_per_write", "master InnoDB fsyncs/write", "",
           lambda s: _net(node_counters(s, "master"), "fsyncs_per_write"), count=SYNCS_VARY),
    Metric("lag_p99_ms", "lag p99 ms", "ms", lambda s: _worse_replica(s.lag or {}, lambda lag: lag.p99_ms),
           floor=LAG_FLOOR_MS),
    Metric("catch_up_s", "catch-up s", "s", lambda s: None if _never_caught_up(s) else
           max([v for v in (s.catch_up_s or {}).values() if v is not None], default=None),
           never=lambda s: _never_caught_up(s)),
    Metric("p99_ms", "client p99 ms", "ms", lambda s: _latency(s).p99),
    Metric("commit_p50_ms", "write p50 ms", "ms", lambda s: _latency(s).p50 if _wrote(s) else None),
    Metric("commit_mean_ms", "write mean ms", "ms", lambda s: _latency(s).mean if _wrote(s) else None),
    Metric("goodput", "goodput/s", "/s", lambda s: s.goodput, lower_is_better=False),
    Metric("shed", "requests shed by the app", "", lambda s: s.app_admission.shed if s.app_admission else None,
           count=SHED_VARY),
    Metric("app_ms_per_ok", "app CPU-ms/ok", "ms", lambda s: _per_ok(s, "app")),
    Metric("db_ms_per_ok", "db CPU-ms/ok", "ms", lambda s: _db_per_ok(s)),
    Metric("db_share", "db share of host", "", lambda s: s.db_share_of_host, lower_is_better=False),
    Metric("semi_sync_wait_us", "MariaDB's semi-sync avg wait µs (its counter)", "µs", _semi_sync_wait_us),
    Metric("link_rtt_ms", "replication link's round trip ms (measured)", "ms", _replication_rtt_ms),
)
APPLY_METRICS: tuple[Metric[ApplyRecord], ...] = (
    Metric("apply_trx_per_s", "apply trx/s", "/s", lambda d: _apply(d, lambda r: r.apply_rate_trx_per_s),
           lower_is_better=False, source="apply"),
    Metric("apply_rows_per_s", "apply rows/s", "/s", lambda d: _apply(d, lambda r: r.apply_rate_rows_per_s),
           lower_is_better=False, source="apply"),
    Metric("apply_ms_per_trx", "replica CPU-ms/trx (apply)", "ms",
           lambda d: _apply(d, lambda r: r.cpu_ms_per_trx, cost=True), source="apply"),
    Metric("replay_binlog_bytes_per_trx", "binlog bytes/trx (the files replayed)", "B",
           lambda d: _per(d.replay.events_bytes, d.replay.transactions) if d.replay else None, source="apply",
           count=BYTES_VARY),
    Metric("live_trx_per_s", "window trx/s (the workload's)", "/s",
           lambda d: d.live.mean_trx_per_s if d.live else None, lower_is_better=False, source="apply"),
    Metric("live_binlog_bytes_per_trx", "binlog bytes/trx (window)", "B",
           lambda d: d.live.binlog_bytes_per_trx if d.live else None, source="apply", count=BYTES_VARY),
    Metric("live_master_ms_per_trx", "master CPU-ms/trx (window)", "ms", lambda d: _live_cpu(d, "master"),
           source="apply"),
    Metric("live_following_ms_per_trx", "following replica CPU-ms/trx (window)", "ms",
           lambda d: _live_cpu(d, "following"), source="apply"),
    Metric("live_master_ms_per_trx_with_writeback", "master CPU-ms/trx with write-back (window)", "ms",
           lambda d: _live_back(d, "master", lambda w: w.cpu_ms_per_write_net_with_writeback), source="apply"),
    Metric("live_following_ms_per_trx_with_writeback", "following replica CPU-ms/trx with write-back (window)", "ms",
           lambda d: _live_back(d, "following", lambda w: w.cpu_ms_per_write_net_with_writeback), source="apply"),
    Metric("live_master_kb_written_per_trx_with_writeback", "master KB written/trx with write-back (window)", "KB",
           lambda d: _live_back(d, "master", lambda w: w.kb_written_per_write_with_writeback), source="apply",
           count=PAGES_VARY),
    Metric("live_following_kb_written_per_trx_with_writeback",
           "following replica KB written/trx with write-back (window)", "KB",
           lambda d: _live_back(d, "following", lambda w: w.kb_written_per_write_with_writeback), source="apply",
           count=PAGES_VARY),
)
BIGTX_METRICS: tuple[Metric[BigTxRecord], ...] = (
    Metric("bigtx_binlog_mb", "binlog MB per transaction", "MB", lambda d: _bigtx(d, lambda t: t.binlog_bytes, 1e-6),
           source="bigtx", count=BYTES_VARY),
    Metric("bigtx_master_s", "master s (execute + commit)", "s", lambda d: _bigtx(d, lambda t: t.master_seconds),
           source="bigtx"),
    Metric("bigtx_applied_s", "slowest replica applied, s after commit", "s",
           lambda d: _bigtx_replica(d, lambda r: r.applied_after_commit_s), source="bigtx"),
    Metric("bigtx_lag_peak_s", "lag peak s", "s", lambda d: _bigtx_replica(d, lambda r: r.peak_ms, 1e-3),
           source="bigtx", floor=LAG_FLOOR_MS / 1000),
    Metric("bigtx_lag_above_s", "lag above its floor, s", "s",
           lambda d: _bigtx_replica(d, lambda r: r.above_floor_s), source="bigtx"),
    Metric("bigtx_cache_spills", "binlog cache spills to disk", "",
           lambda d: _bigtx(d, lambda t: t.binlog_cache_disk_use), source="bigtx",
           count=SPILLS_VARY),
)
SourceMetric = Metric[RunSummary] | Metric[ApplyRecord] | Metric[BigTxRecord]  # a metric of one of the sources
METRICS: tuple[SourceMetric, ...] = (*RUN_METRICS, *APPLY_METRICS, *BIGTX_METRICS)  # the registry, in this order
BY_KEY: dict[str, SourceMetric] = {m.key: m for m in METRICS}
RUN_BY_KEY = {m.key: m for m in RUN_METRICS}  # a run's metrics, for a reader of summaries (analysis/reference)


def unit_source(unit: StudyUnit) -> str:
    """Which data file the unit's metrics come from (run, apply or bigtx), hence which keys its map holds."""
    return SOURCE_OF_MEASURE.get(unit.measure or "run", "run")


def metrics_of(unit: StudyUnit) -> UnitMetrics | None:
    """The unit's metrics, None where it has none: a unit that failed with an exception has no map, an interrupted
    unit's is empty ({}: experiments/study.py). unit_metrics writes every key of its source and the qualifiers, a
    figure it has not as null, so a measured unit's map is never empty."""
    got = unit.metrics
    return got if got is not None and got.model_fields_set else None


def figure_of(metrics: UnitMetrics, key: str) -> Num | None:
    """A unit's figure of one metric of the registry, by its key: UnitMetrics declares a field per metric, named by
    its key (tests/test_study.py checks every one). The one place a unit's figure is read by a name chosen at run
    time; a key the registry does not hold is a KeyError."""
    figure: Num | None = getattr(metrics, BY_KEY[key].key)
    return figure


def measured(u: StudyUnit) -> bool:
    """Did a study unit measure anything? A failed run keeps its (empty) metrics in study.json but measured nothing."""
    return metrics_of(u) is not None and u.status != STATUS_FAILED


def passed(s: RunSummary, criteria: PassCriteria) -> bool | None:
    """Did the run stay within its scenario's pass criteria? Judged by analysis/rules as a sweep step is (a replica
    that never caught up fails both). None: not judged (a run that never reached its guards)."""
    if s.guards is None or s.rate is None:
        return None
    return rules.judge(s, criteria, s.rate).passed


@dataclass(frozen=True)
class LoadRow:
    """One scenario and cell of a study whose cells run at multiples of its rates (load_table's)."""

    scenario: str
    cell: str | None
    runs: int
    passed: int  # of the runs, those within the scenario's pass criteria
    goodput_pct_of_max: dict[str, Num | None]  # the goodput as a % of the max: core/stats.spread's median, min, max, n


def load_table(units: list[StudyUnit], cells: list[StudyCell], rates: dict[str, int]) -> list[LoadRow]:
    """For a study whose cells run at multiples of its rates (the max): per scenario and cell, the runs within
    the pass criteria and the goodput as a share of the max (median, min, max)."""
    out = []
    for scenario, top in rates.items():
        for cell in cells:
            # an apply-capacity or big-transaction unit has no goodput nor a pass
            mine = [m for u in units
                    if u.cell == cell.name and u.scenario == scenario and (m := metrics_of(u)) is not None]
            if not mine:
                continue
            share = spread([None if m.goodput is None else 100 * m.goodput / top for m in mine])
            out.append(LoadRow(scenario=scenario, cell=cell.name, runs=len(mine),
                               passed=sum(bool(m.passed) for m in mine), goodput_pct_of_max=share))
    return out


def unit_metrics(kind: str, record: RunSummary | ApplyRecord | BigTxRecord,
                 criteria: PassCriteria | None = None) -> UnitMetrics:
    """Every metric of one unit (a run's summary, an apply.json or a bigtx.json, as its record: the one its kind
    measures), a figure it has not as None; a run's `passed` judged against its scenario's criteria (None without
    them)."""
    source = SOURCE_OF_MEASURE.get(kind, "run")
    if isinstance(record, RunSummary):
        figures = _figures(RUN_METRICS, record, source) | {
            "passed": None if criteria is None else passed(record, criteria)}
    elif isinstance(record, ApplyRecord):
        figures = _figures(APPLY_METRICS, record, source)
    else:
        figures = _figures(BIGTX_METRICS, record, source)
    return UnitMetrics.model_validate(figures | {"cpu_net_of_idle": _net_of_idle(record)})


def _figures(metrics: tuple[Metric[D], ...], record: D, source: str) -> dict[str, object]:
    """One source's metrics read from its record (unit_metrics' map): every figure, and what qualifies them. A
    record of another source than the unit's kind measures is refused (its metrics would read what it has not)."""
    if metrics[0].source != source:
        raise TypeError(f"a unit whose metrics come from its {source} record got a {type(record).__name__}")
    return {**{m.key: m.get(record) for m in metrics},
            "never": [m.key for m in metrics if m.never and m.never(record)],
            "resolution": {m.key: r for m in metrics if m.resolution and (r := m.resolution(record)) is not None}}


def _net_of_idle(record: RunSummary | ApplyRecord | BigTxRecord) -> bool:
    """Whether the unit's CPU figures are net of idle: a run's when its summary has the net figures, an
    apply-capacity's when a replica's idle CPU was measured before its drain."""
    if isinstance(record, RunSummary):
        return record.cpu_seconds_net is not None  # analysis/summary.net_of_idle writes a map or nothing, never null
    if isinstance(record, ApplyRecord):
        # a replica's idle CPU key, even null: experiments/applycap._replica_entry writes null where the replica's CPU
        # could not be read before its drain, and such a unit has always counted as net of idle (kept as it was)
        return any("idle_cpu_per_s" in r.model_fields_set for r in (record.replicas or {}).values() if r is not None)
    return False


def setting_value(cell: StudyCell, key: str) -> Word:
    """A recorded cell's value of a knob or a cell key ("" where the cell leaves it at the reference)."""
    knobs = cell.knobs.given() if cell.knobs is not None else {}  # a study file names a knob by its name
    if key in knobs:
        return knobs[key]
    if key == "scenario":
        return cell.scenario or ""
    return (cell.changed or {}).get(key, "")


def baselines(cells: list[StudyCell], per: list[str]) -> dict[str, str]:
    """Each cell's baseline: the first cell with the same values of `per` (itself, if it is that first one); with
    nothing in `per`, the first cell of all."""
    out: dict[str, str] = {}
    first: dict[tuple[Word, ...], str] = {}
    for cell in cells:
        key = tuple(setting_value(cell, k) for k in per)
        assert cell.name is not None  # studyfile.cell_records writes every cell's
        out[cell.name] = first.setdefault(key, cell.name)
    return out


def baseline_words(study: StudyRecord) -> str:
    """What a study's ratios are to: its first cell, or per value of its baseline_per, the first cell with it."""
    cells = [c.name for c in study.cells or []]
    per = study.baseline_per or []
    if not per:
        return f"`{cells[0]}`"
    bases = sorted(set((study.baselines or {}).values()), key=cells.index)
    return f"the first cell with the same {', '.join(per)}: " + ", ".join(f"`{b}`" for b in bases)


def grid_cells(grid: Mapping[str, list[V]]) -> list[dict[str, V]]:
    """A [vary] table's cells: the product of its lists, keys and values in the file's order (the first the
    baseline)."""
    return [dict(zip(grid, values)) for values in itertools.product(*grid.values())]


def cell_label(given: Mapping[str, object]) -> str:
    """A study file's cell by name: its `name`, else what it sets as the file writes it, in the file's order
    ('drop_indexes=none buffer_pool=4G'; a list of names as one comma string). The one naming rule: the cells a study
    runs are named so (experiments/studyfile), and the cells a report says a study did not run (file_cells)."""
    if given.get("name"):
        return str(given["name"])
    return " ".join(f"{k}={','.join(map(str, v)) if isinstance(v, list) else v}" for k, v in given.items()
                    if k != "name")


def file_cells(doc: Mapping[str, object]) -> list[str]:
    """The names of the cells a study file's document declares, unchecked: [vary]'s grid (grid_cells) or each of
    [[cells]]. For a study.json written before it recorded the cells --only cut (cells_cut)."""
    vary, cells = doc.get("vary"), doc.get("cells")
    if isinstance(vary, dict) and all(isinstance(v, list) for v in vary.values()):
        return [cell_label(c) for c in grid_cells(vary)]
    return [cell_label(c) for c in cells if isinstance(c, dict)] if isinstance(cells, list) else []


def ran_cells(data: StudyRecord, group: str | None = None) -> list[str]:
    """The cells of a study that ran, in its order: each with a unit that measured something (measured), in `group`
    where given. A cell --only cut is not in study.json; one whose every unit failed, or that an interrupted study
    never reached, is, and did not run (docs/studies.md, "Report and compare": a study's tables, chart and
    description show the cells that ran). A record without units (one made by hand) keeps every cell."""
    names = [c.name for c in data.cells or [] if c.name is not None]
    if data.units is None:
        return names
    done = {u.cell for u in data.units if measured(u) and (group is None or _group(u) == group)}
    return [n for n in names if n in done]


CUT, FAILED, NOT_REACHED = "cut", "failed", "not reached"  # why a cell did not run (cells_not_run)


def cells_not_run(data: StudyRecord, declared: list[str] | None = None) -> dict[str, list[str]]:
    """A study's cells that did not run, by name, per reason: CUT (its command's --only left them out: study.json's
    cells_cut, or where a study.json predates that key, the `declared` cells it does not hold), FAILED (in
    study.json, every unit that ran failed), NOT_REACHED (in study.json, no unit measured and none failed: an
    interrupted study's)."""
    recorded = [c.name for c in data.cells or [] if c.name is not None]
    cut = list(data.cells_cut) if data.cells_cut is not None else \
        [n for n in declared or [] if n not in recorded]
    ran = set(ran_cells(data))
    failed = {u.cell for u in data.units or [] if u.status in (UNIT_FAILED, STATUS_FAILED)}
    left = [n for n in recorded if n not in ran]
    return {CUT: cut, FAILED: [n for n in left if n in failed], NOT_REACHED: [n for n in left if n not in failed]}


LINK, NO_LINK, DEFAULT = "link", "none", "default"  # cell_factors' words for a cell key a cell leaves unset


def cell_factors(cells: list[StudyCell]) -> tuple[dict[str, list[str]], dict[str, str]]:
    """What cells vary and what they share: per key any of them sets (its own scenario, where cells name one; every
    key a cell changes from the reference), the values the cells take, in their order; a cell that leaves a key at
    the reference takes its knob's value there, or for a cell key 'none' (a link) or 'default'. A key of one value
    is shared."""
    keys = dict.fromkeys(["scenario"] if any(c.scenario for c in cells) else [])
    keys.update(dict.fromkeys(k for c in cells for k in c.changed or {}))

    def value(cell: StudyCell, key: str) -> str:
        if key == "scenario":
            return cell.scenario or DEFAULT
        if key in (cell.changed or {}):
            return str((cell.changed or {})[key])
        if key in (knobs := cell.knobs.given() if cell.knobs is not None else {}):
            return str(knobs[key])
        return NO_LINK if key == LINK else DEFAULT

    values = {k: list(dict.fromkeys(value(c, k) for c in cells)) for k in keys}
    return ({k: v for k, v in values.items() if len(v) > 1}, {k: v[0] for k, v in values.items() if len(v) == 1})


def _group(unit: StudyUnit) -> str:
    """The table a unit belongs to; units recorded before groups existed belong to their scenario's."""
    group = unit.group if unit.group is not None else unit.scenario
    assert group is not None  # experiments/study.py writes both (Plan.group_of: a str)
    return group


def compare_cells(units: list[StudyUnit], cells: list[str],
                  base_of: dict[str, str] | None = None) -> Comparison:
    """Per group (a scenario, or the cells' scenarios) and metric: each cell's spread, ratio to its baseline (the
    first cell, or base_of's) and verdict."""
    base_of = base_of or {c: cells[0] for c in cells}
    out: Comparison = {}
    groups = sorted({_group(u) for u in units})
    for scenario in groups:
        per_metric: dict[str, dict[str, ComparisonRow]] = {}
        for metric in METRICS:
            mine = {cell: [m for u in units
                           if u.cell == cell and _group(u) == scenario and (m := metrics_of(u)) is not None]
                    for cell in cells}
            values = {cell: [figure_of(m, metric.key) for m in ms] for cell, ms in mine.items()}
            never = {cell: sum(metric.key in (m.never or ()) for m in ms) for cell, ms in mine.items()}
            if not any(v is not None for vs in values.values() for v in vs) and not any(never.values()):
                continue
            rows: dict[str, ComparisonRow] = {}
            for cell in cells:
                sp, own, base = spread(values[cell]), base_of[cell], values[base_of[cell]]
                rows[cell] = ComparisonRow(**sp, values=values[cell], never=never[cell], baseline=own,
                                           ratio=None if cell == own else _round(ratio(sp["median"],
                                                                                       spread(base)["median"])),
                                           verdict="baseline" if cell == own else verdict(values[cell], base))
                resolution = median([(m.resolution or {}).get(metric.key) for m in mine[cell]])
                if resolution is not None:  # only where the figure has one: absent from the row otherwise
                    rows[cell] = rows[cell].model_copy(update={"resolution": resolution})
            for cell in cells:  # no ratio to, or from, a figure that cannot be told from zero or from its floor
                if cell != base_of[cell] and any(below_resolution(rows[c]) or under_floor(rows[c], metric)
                                                 for c in (cell, base_of[cell])):
                    rows[cell] = rows[cell].model_copy(update={"ratio": None, "verdict": "n/a"})
            per_metric[metric.key] = rows
        out[scenario] = per_metric
    return out


def verdict(values: list[float | None], base: list[float | None]) -> str:
    """'different' when the repeats' ranges do not overlap, 'within noise' when they do, 'n/a' without figures:
    the one wording of a study's cells and of bench-app's comparisons."""
    apart = separated(values, base)
    return "n/a" if apart is None else ("different" if apart else "within noise")


def verdict_text(values: list[float | None], base: list[float | None]) -> str:
    """Two sets of repeats in the one rule's words, no test (core/stats.judgement: 'disjoint ranges, n = 3, not
    tested', 'not tested (n = 2)'); 'not comparable' without figures. bench-app's comparisons."""
    return "not comparable" if verdict(values, base) == "n/a" else judgement(values, base).text


def row_of(values: Sequence[float | None], resolution: float | None = None) -> ComparisonRow:
    """The spread of figures (core/stats.spread's median, min, max and n, with the values) as a comparison's row,
    with their resolution where they have one, to be worded as one (figure_text): the answers' and the cost sheet's
    figures that are no study cell's."""
    return ComparisonRow(**spread(values), values=list(values), resolution=resolution)


def under_floor(r: ComparisonRow, metric: SourceMetric | None) -> bool:
    """A cell whose median is under its metric's floor (the lag's: docs/metrics.md, "Lag"): printed "< floor", with
    no ratio and no finding."""
    return metric is not None and below_floor(r.median, metric.floor)


def below_resolution(r: ComparisonRow, key: str | None = None) -> bool:
    """A cell whose median net figure is below its runs' median resolution: no cost can be read from it (with the
    metric's key, also a net figure recorded without its resolution that unresolved() bounds)."""
    if r.resolution is not None and r.median is not None and r.median < r.resolution:
        return True
    return key is not None and unresolved(r, key) is not None


FLOOR = "floor"  # unresolved()'s kind for a figure under its metric's floor


def unresolved(r: ComparisonRow, key: str) -> tuple[str, float] | None:
    """('<', resolution) for a net figure whose median is below its resolution; ('≤', the largest repeat) for one
    recorded without its resolution where a repeat reads exactly 0 (net of idle, clamped: that repeat could not be
    told from the idle, so neither can the median); (FLOOR, floor) for a figure under its metric's floor (a lag);
    None for a figure that is resolved, or not a net figure."""
    if r.median is None:
        return None
    metric = BY_KEY.get(key)
    if metric is not None and metric.floor is not None and under_floor(r, metric):
        return FLOOR, metric.floor
    if r.resolution is not None:
        return ("<", float(r.resolution)) if r.median < r.resolution else None
    got = [v for v in r.values or [] if v is not None]
    if metric is not None and metric.resolution is not None and got and min(got) == 0:
        return "≤", float(max(got))
    return None


def figure_text(r: ComparisonRow, key: str | None = None) -> str:
    """A cell's figure as every table prints it: 'median [min–max]', or 'below resolution (< r)' / 'not resolved
    (≤ m)' for a net figure that cannot be told from zero (never printed as a cost), or '< 10' for a figure under
    its metric's floor (a repeat under it, in the range: '20.0 [< 10–31.0]')."""
    if r.median is None:
        return "–"
    bound = unresolved(r, key) if key is not None else (
        ("<", float(r.resolution)) if r.resolution is not None and r.median < r.resolution else None)
    if bound is not None:
        return (floor_text(bound[1]) if bound[0] == FLOOR else f"below resolution (< {fmt(bound[1])})"
                if bound[0] == "<" else f"not resolved (≤ {fmt(bound[1])})")
    floor = BY_KEY[key].floor if key in BY_KEY else None
    low, high = (floor_text(floor) if floor is not None and below_floor(v, floor) else fmt(v) for v in (r.min, r.max))
    return fmt(r.median) + (f" [{low}–{high}]" if (r.n or 0) > 1 and low != high else "")


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def fmt(value: float | None) -> str:
    if value is None:
        return "–"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


def cell_text(r: ComparisonRow, judged: str | None = None, key: str | None = None,
              base: ComparisonRow | None = None) -> str:
    """'median [min–max] (ratio×, judgement)': the judgement given (analysis/findings.judged's words for a primary
    metric), else with the baseline's row the rule's words for the two (core/stats.judgement: no test), else the
    ratio alone. With the metric's key, a net figure recorded without its resolution, or a figure under its floor,
    prints as such (unresolved), with no ratio."""
    never = f"{r.never} of {len(r.values or [])} did not catch up" if r.never else ""
    if r.median is None:
        return never or "–"
    if below_resolution(r, key):
        return figure_text(r, key)
    text = figure_text(r, key)
    if r.ratio is not None and not (base is not None and key is not None and below_resolution(base, key)):
        if judged is None and base is not None:
            metric = BY_KEY.get(key) if key is not None else None
            judged = judgement(r.values or [], base.values or [], count=metric.count if metric else "").text
        text += f" ({r.ratio:.2f}×" + (f", {judged})" if judged else ")")
    elif judged:  # no ratio against a baseline under its resolution or floor: a lower bound at most
        text += f" ({judged})"
    return text + (f"; {never}" if never else "")


SEMI_SYNC_KNOBS = ("semi_sync", "semi_sync_timeout_ms")


@dataclass(frozen=True)
class CoreBound:
    """A study cell whose threads or processes reach its host's cores (core_bound's)."""

    cell: str
    what: str  # "4 applier threads", "5 mariadbd (the master and 4 replicas)"


def core_bound(cells: list[StudyCell], cores: int | None) -> list[CoreBound]:
    """The cells whose parallel applier threads reach the host's cores (as the apply-capacity block judges them), or
    whose mariadbd processes (the master and the cell's replicas) outnumber them: every role shares one host's
    cores, so what such a cell measures is bounded by the cores, not by replication (docs/studies.md, "Core
    ceiling"). None without the host's cores (a study recorded before them, or a topology file's databases)."""
    if not cores:
        return []
    out = []
    for cell in cells:
        threads = recorded_knobs(cell.knobs).parallel_threads
        replicas = int((cell.changed or {}).get("replicas") or 0)
        if threads and threads >= cores:
            out.append(CoreBound(cell.name or "", f"{threads} applier threads"))
        elif replicas + 1 > cores:
            out.append(CoreBound(cell.name or "", f"{replicas + 1} mariadbd (the master and {replicas} replicas)"))
    return out


def study_cores(study: StudyRecord) -> int | None:
    """The cores of the host a study ran on: its own record's, else its kept meta's (a study from before it
    recorded them)."""
    host = study.meta.host if study.meta is not None else None
    return study.cores or (host.cores if host is not None else None)


def core_ceiling_text(study: StudyRecord, brief: bool = False) -> str | None:
    """The study's core-bound cells in words (core_bound), the whole sentence or (brief) a clause for a one-line
    summary; None where none is, or the host's cores are not recorded."""
    cores = study_cores(study)
    bound = core_bound(study.cells or [], cores)
    if not bound:
        return None
    if brief:
        return f"core-bound: {' / '.join(dict.fromkeys(b.what.split(' (')[0] for b in bound))} on {cores} cores"
    cells: dict[str, list[str]] = {}
    for b in bound:
        cells.setdefault(b.what, []).append(f"`{b.cell}`")
    return (f"on this host's {cores} cores, which every role shares, "
            + "; ".join(f"{' and '.join(names)} run{'s' if len(names) == 1 else ''} {what}"
                        for what, names in cells.items())
            + ": their CPU, latency and lag figures are bounded by the cores, not by replication (their counts, such "
            "as bytes, are not); cores to spare per role, or the roles pinned with --cpus, would measure the setting "
            "itself")


COMMIT_FIGURES = ("commit_p50_ms", "commit_mean_ms")  # what a semi-sync commit's cost is read from


@dataclass(frozen=True)
class CommitCost:
    """A write latency figure with semi-sync against without it, on the same link (medians over the repeats)."""

    cost_ms: float
    with_ms: float
    without_ms: float
    verdict: str  # verdict()'s: "different", "within noise" or "n/a"


@dataclass(frozen=True)
class SemiSyncCost:
    """One semi-sync cell against the cell that differs only in having semi-sync off (semi_sync_cost's)."""

    group: str
    cell: str
    baseline: str
    semi_sync: str  # its wait point
    link: str  # the cell's link setting ("none" without one)
    rtt_measured_ms: float | None  # the link's round trip as its runs measured it (the link_rtt_ms metric)
    costs: dict[str, CommitCost | None]  # per COMMIT_FIGURES key; None where a side has no figure


def semi_sync_cost(cells: list[StudyCell], comparison: Comparison) -> list[SemiSyncCost]:
    """What semi-sync costs a commit: each semi-sync cell's write p50 and mean against the cell that differs only
    in having semi-sync off (the same link, the same other settings), per group. MariaDB's own wait counter is
    not this: it starts when the commit is flushed and leaves out the rest of the round trip."""
    out = []
    for group, per_metric in comparison.items():
        for cell in cells:
            semi_sync = recorded_knobs(cell.knobs).semi_sync
            if semi_sync == "off":
                continue
            same = _without_semi_sync(cell)
            base = next((c for c in cells if recorded_knobs(c.knobs).semi_sync == "off"
                         and _without_semi_sync(c) == same), None)
            if base is None:
                continue
            link = str((cell.changed or {}).get("link", "none"))  # what the cell changes: settings, not results
            measured = (per_metric.get("link_rtt_ms") or {}).get(cell.name or "")
            costs: dict[str, CommitCost | None] = {}
            for key in COMMIT_FIGURES:
                rows = per_metric.get(key) or {}
                a, b = rows.get(cell.name or ""), rows.get(base.name or "")
                costs[key] = None if not a or not b or a.median is None or b.median is None else CommitCost(
                    cost_ms=round(a.median - b.median, 3), with_ms=a.median, without_ms=b.median,
                    verdict=verdict(a.values or [], b.values or []))
            out.append(SemiSyncCost(group=group, cell=cell.name or "", baseline=base.name or "",
                                    semi_sync=semi_sync, link=link,
                                    rtt_measured_ms=measured.median if measured is not None else None, costs=costs))
    return out


@dataclass(frozen=True)
class ClosedLoop:
    """Commits per second a closed loop of clients made (goodput: each client sends its next write when its last
    is answered), per semi-sync wait point (and `off`), per client count: (min, max) over the cell's repeats; and
    the link's round trip as the runs measured it (study semi-sync-clients; docs/runs.md, "Closed loop")."""

    commits_per_s: dict[str, dict[int, tuple[float, float]]]
    rtt_ms: float | None


def closed_loop(cells: list[StudyCell], comparison: Comparison) -> ClosedLoop | None:
    """The goodput of every cell that ran a closed loop (a `clients` knob), by wait point and clients; None
    where no cell did or none has a goodput."""
    got: dict[str, dict[int, tuple[float, float]]] = {}
    rtts: list[float] = []
    for per_metric in comparison.values():
        for cell in cells:
            clients = (cell.changed or {}).get("clients")  # a measure knob: what the cell changes, not a setting
            row = (per_metric.get("goodput") or {}).get(cell.name or "")
            if clients is None or row is None or row.min is None or row.max is None:
                continue
            got.setdefault(recorded_knobs(cell.knobs).semi_sync, {})[int(clients)] = (float(row.min), float(row.max))
            rtt = (per_metric.get("link_rtt_ms") or {}).get(cell.name or "")
            if rtt is not None and rtt.median is not None:
                rtts.append(float(rtt.median))
    if not got:
        return None
    return ClosedLoop(commits_per_s={mode: dict(sorted(by.items())) for mode, by in got.items()},
                      rtt_ms=statistics.median(rtts) if rtts else None)


def _without_semi_sync(cell: StudyCell) -> dict[str, Word]:
    """What the cell changes from the reference, semi-sync aside."""
    return {k: v for k, v in (cell.changed or {}).items() if k not in SEMI_SYNC_KNOBS}


DROP_INDEXES = "drop_indexes"  # the cell key of the secondary indexes a cell runs without (core/config)


@dataclass(frozen=True)
class IndexCost:
    """What one secondary index costs: the cell without it against the cell with every index (index_costs')."""

    group: str
    cell: str  # the cell without the index
    baseline: str  # the cell with every index and the same other settings
    index: str
    settings: dict[str, Word]  # the other settings both cells change
    with_: float  # the metric's median with the index (the baseline's)
    without: float
    cost: float  # with − without
    increase: float | None  # cost ÷ without (None where without is 0)
    verdict: str


def index_costs(cells: list[StudyCell], comparison: Comparison,
                metric: str = "replica_ms_per_write") -> list[IndexCost]:
    """What each secondary index costs: every cell that runs without exactly one index against the cell with every
    index and the same other settings (one thing changed per comparison), per group, most costly first within each
    group and setting. cost = the metric's median with the index less its median without it; increase = cost ÷
    without, what the index adds to the figure without it (None where that is 0): a DBA reads "+45 %" as what adding
    the index does, not as a share of the figure with it (docs/studies.md, "Report and compare")."""
    out = []

    def dropped(cell: StudyCell) -> tuple[str, ...]:
        return index_names(str((cell.changed or {}).get(DROP_INDEXES, "")))

    def others(cell: StudyCell) -> dict[str, Word]:
        return {k: v for k, v in (cell.changed or {}).items() if k != DROP_INDEXES}

    for group, per_metric in comparison.items():
        rows = per_metric.get(metric) or {}
        found: list[IndexCost] = []
        for cell in cells:
            if len(dropped(cell)) != 1:
                continue
            base = next((c for c in cells if not dropped(c) and others(c) == others(cell)), None)
            a, b = rows.get(cell.name or ""), rows.get(base.name or "") if base else None
            if base is None or not a or not b or a.median is None or not b.median:
                continue
            cost = b.median - a.median
            found.append(IndexCost(group=group, cell=cell.name or "", baseline=base.name or "", index=dropped(cell)[0],
                                   settings=others(cell), with_=b.median, without=a.median, cost=round(cost, 4),
                                   increase=round(cost / a.median, 4) if a.median else None,
                                   verdict=verdict(a.values or [], b.values or [])))
        out += sorted(found, key=lambda r: (sorted(r.settings.items()), -r.cost))
    return out
