"""What a study measures and how its cells compare: each metric taken from one run's summary.json (or one
apply-capacity's apply.json), then per cell and scenario the median and min–max over repeats, the ratio to the
baseline cell, and the verdict: a difference only when the repeats' ranges do not overlap, else "within noise".
Shared by the study runner (study.json, the terminal table) and report.md."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .stats import FINDING_MIN_FACTOR, lookup, ratio, separated, spread


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: str
    get: Callable[[dict[str, Any]], float | None]
    lower_is_better: bool = True
    source: str = "run"  # run (summary.json) or apply (apply.json)


def _wrote(summary: dict[str, Any]) -> bool:
    """The run's own requests changed data: a read run's per-write figures would come from a handful of stray
    transactions (the tail of the write run before it), so they are left out."""
    return bool(lookup(summary, ("binlog", "successful_writes")))


def _per_trx(summary: dict[str, Any], node: str) -> float | None:
    if not _wrote(summary):
        return None
    cpu = lookup(summary, ("cpu_seconds", node))
    trx = lookup(summary, ("replication", "nodes", node, "transactions"))
    return round(1000 * cpu / trx, 4) if cpu is not None and trx else None


def _worse_replica(summary: dict[str, Any], path: tuple[str, ...]) -> float | None:
    values = [lookup(summary, (r, *path)) for r in ("replica1", "replica2")]
    got = [v for v in values if v is not None]
    return max(got) if got else None


def _db_per_ok(summary: dict[str, Any]) -> float | None:
    values = [lookup(summary, ("cpu_ms_per_success", n)) for n in ("master", "replica1", "replica2")]
    return None if None in values else round(sum(values), 4)  # type: ignore[arg-type]


def _apply(data: dict[str, Any], key: str) -> float | None:
    values = [lookup(data, ("replicas", r, key)) for r in ("replica1", "replica2")]
    got = [v for v in values if v is not None]
    return min(got) if got else None  # the slower replica bounds the topology


METRICS: tuple[Metric, ...] = (
    Metric("bytes_per_write", "binlog B/write", "B", lambda s: lookup(s, ("binlog", "bytes_per_write"))),
    Metric("bytes_per_row", "binlog B/row", "B",
           lambda s: lookup(s, ("binlog", "bytes_per_row")) if _wrote(s) else None),
    Metric("master_ms_per_write", "master CPU-ms/write", "ms", lambda s: _per_trx(s, "master")),
    Metric("replica_ms_per_write", "replica CPU-ms/applied write", "ms",
           lambda s: max([v for v in (_per_trx(s, "replica1"), _per_trx(s, "replica2")) if v is not None],
                         default=None)),
    Metric("rows_changed_pct", "rows changed %", "%",
           lambda s: None if lookup(s, ("rows_checked", "share")) is None else
           round(100 * s["rows_checked"]["share"], 2), lower_is_better=False),
    Metric("replica_disk_reads_per_write", "replica pages read from disk/write", "",
           lambda s: _worse_replica(lookup(s, ("replication", "nodes")) or {}, ("pool_disk_reads_per_write",))
           if _wrote(s) else None),
    Metric("master_kb_written_per_write", "master KB written/write", "KB",
           lambda s: lookup(s, ("replication", "nodes", "master", "kb_written_per_write")) if _wrote(s) else None),
    Metric("replica_kb_written_per_write", "replica KB written/write", "KB",
           lambda s: _worse_replica(lookup(s, ("replication", "nodes")) or {}, ("kb_written_per_write",))
           if _wrote(s) else None),
    Metric("fsyncs_per_write", "master fsyncs/write", "", lambda s: lookup(s, ("replication", "nodes", "master",
                                                                             "fsyncs_per_write"))),
    Metric("lag_p99_ms", "lag p99 ms", "ms", lambda s: _worse_replica(s.get("lag") or {}, ("p99_ms",))),
    Metric("catch_up_s", "catch-up s", "s", lambda s: max([v for v in (s.get("catch_up_s") or {}).values()
                                                           if v is not None], default=None)),
    Metric("p99_ms", "client p99 ms", "ms", lambda s: lookup(s, ("latency_ms", "p99"))),
    Metric("goodput", "goodput/s", "/s", lambda s: s.get("goodput"), lower_is_better=False),
    Metric("shed", "requests shed by the app", "", lambda s: lookup(s, ("app_admission", "shed"))),
    Metric("app_ms_per_ok", "app CPU-ms/ok", "ms", lambda s: lookup(s, ("cpu_ms_per_success", "app"))),
    Metric("db_ms_per_ok", "db CPU-ms/ok", "ms", lambda s: _db_per_ok(s)),
    Metric("db_share", "db share of host", "", lambda s: s.get("db_share_of_host"), lower_is_better=False),
    Metric("semi_sync_wait_us", "semi-sync wait µs", "µs",
           lambda s: lookup(s, ("replication", "nodes", "master", "semi_sync", "avg_tx_wait_us"))),
    Metric("apply_trx_per_s", "apply trx/s", "/s", lambda d: _apply(d, "apply_rate_trx_per_s"),
           lower_is_better=False, source="apply"),
    Metric("apply_rows_per_s", "apply rows/s", "/s", lambda d: _apply(d, "apply_rate_rows_per_s"),
           lower_is_better=False, source="apply"),
    Metric("apply_ms_per_trx", "replica CPU-ms/trx (apply)", "ms", lambda d: _apply(d, "cpu_ms_per_trx"),
           source="apply"),
)
BY_KEY = {m.key: m for m in METRICS}


def unit_metrics(kind: str, data: dict[str, Any]) -> dict[str, float | None]:
    """Every metric of one unit (a run's summary, or an apply.json)."""
    source = "apply" if kind == "apply-capacity" else "run"
    return {m.key: m.get(data) for m in METRICS if m.source == source}


def compare_cells(units: list[dict[str, Any]], cells: list[str]) -> dict[str, Any]:
    """Per group (a scenario, or the cells' scenarios) and metric: each cell's spread, ratio to the baseline
    (first cell) and verdict."""
    out: dict[str, Any] = {}
    groups = sorted({u.get("group", u["scenario"]) for u in units})
    for scenario in groups:
        per_metric: dict[str, Any] = {}
        for metric in METRICS:
            values = {cell: [u["metrics"].get(metric.key) for u in units
                             if u["cell"] == cell and u.get("group", u["scenario"]) == scenario
                             and u.get("metrics")]
                      for cell in cells}
            if not any(v is not None for vs in values.values() for v in vs):
                continue
            base = values[cells[0]]
            rows = {}
            for cell in cells:
                sp = spread(values[cell])
                apart = None if cell == cells[0] else separated(values[cell], base)
                rows[cell] = {**sp, "values": values[cell],
                              "ratio": None if cell == cells[0] else _round(ratio(sp["median"],
                                                                                  spread(base)["median"])),
                              "verdict": "baseline" if cell == cells[0] else
                              ("n/a" if apart is None else ("different" if apart else "within noise"))}
            per_metric[metric.key] = rows
        out[scenario] = per_metric
    return out


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


def cell_text(row: dict[str, Any]) -> str:
    if row["median"] is None:
        return "–"
    text = fmt(row["median"])
    if row["n"] > 1 and row["min"] != row["max"]:
        text += f" [{fmt(row['min'])}–{fmt(row['max'])}]"
    if row["ratio"] is not None:
        text += f" ({row['ratio']:.2f}×{'' if row['verdict'] == 'different' else ', noise'})"
    return text


def extremes(per_metric: dict[str, Any], metric_key: str) -> tuple[str, str, float] | None:
    """(cheapest cell, most expensive cell, factor) for one metric when the repeats separate them, else None."""
    rows = per_metric.get(metric_key)
    if not rows:
        return None
    metric = BY_KEY[metric_key]
    ranked = sorted(((r["median"], cell, r) for cell, r in rows.items() if r["median"] is not None),
                    key=lambda x: x[0], reverse=not metric.lower_is_better)
    if len(ranked) < 2:
        return None
    (best_v, best, best_row), (worst_v, worst, worst_row) = ranked[0], ranked[-1]
    if not separated(best_row["values"], worst_row["values"]) or not best_v:
        return None
    factor = worst_v / best_v if metric.lower_is_better else best_v / worst_v
    return (best, worst, factor) if factor >= FINDING_MIN_FACTOR else None
