"""What a study measures and how its cells compare: each metric taken from one run's summary.json (or one
apply-capacity's apply.json, or one big transaction's bigtx.json), then per cell and scenario the median and
min–max over repeats, the ratio to the baseline cell, and the verdict: a difference only when the repeats' ranges
do not overlap, else "within noise". Shared by the study runner (study.json, the terminal table) and report.md."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.nodenames import replicas_in
from ..core.records import STATUS_FAILED
from ..core.stats import lookup, median, ratio, separated, spread

SOURCE_OF_MEASURE = {"run": "run", "apply-capacity": "apply", "big-transaction": "bigtx"}  # a unit's data file


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: str
    get: Callable[[dict[str, Any]], float | None]
    lower_is_better: bool = True
    source: str = "run"  # run (summary.json), apply (apply.json) or bigtx (bigtx.json)
    never: Callable[[dict[str, Any]], bool] | None = None  # a unit whose figure never came (counted, not dropped)
    resolution: Callable[[dict[str, Any]], float | None] | None = None  # below it the figure cannot be told from 0


def _wrote(summary: dict[str, Any]) -> bool:
    """The run's own requests changed data: a read run's per-write figures would come from a handful of stray
    transactions (the tail of the write run before it), so they are left out."""
    return bool(lookup(summary, ("binlog", "successful_writes")))


def _per_trx(summary: dict[str, Any], node: str) -> float | None:
    """A node's CPU-ms per application transaction, net of idle (gross in summaries from before the idle window)."""
    if not _wrote(summary):
        return None
    cpu = lookup(summary, ("cpu_seconds_net", node))
    if cpu is None:
        cpu = lookup(summary, ("cpu_seconds", node))
    trx = lookup(summary, ("replication", "nodes", node, "transactions"))
    return round(1000 * cpu / trx, 4) if cpu is not None and trx else None


def _per_trx_resolution(summary: dict[str, Any], nodes: tuple[str, ...]) -> float | None:
    """The resolution of _per_trx's net figure (the widest of the nodes'): below it, a node's net CPU per
    transaction cannot be told from zero."""
    if not _wrote(summary):
        return None
    got = [1000 * r / trx for n in nodes
           if (r := lookup(summary, ("cpu_seconds_net_resolution", n))) is not None
           and (trx := lookup(summary, ("replication", "nodes", n, "transactions")))]
    return round(max(got), 4) if got else None


def _replicas(summary: dict[str, Any]) -> tuple[str, ...]:
    """The run's replicas, from its CPU and replication figures (two when it names none)."""
    names = [*(summary.get("cpu_seconds") or {}), *(lookup(summary, ("replication", "nodes")) or {})]
    return replicas_in(names) or ("replica1", "replica2")


def _never_caught_up(summary: dict[str, Any]) -> bool:
    """A replica did not catch up within the run's catch-up timeout: the unit's catch-up is "never", not absent."""
    return any(v is None for v in (summary.get("catch_up_s") or {}).values())


def _worse_replica(summary: dict[str, Any], path: tuple[str, ...]) -> float | None:
    values = [lookup(summary, (r, *path)) for r in replicas_in(summary)]
    got = [v for v in values if v is not None]
    return max(got) if got else None


def _per_ok(summary: dict[str, Any], group: str) -> float | None:
    """A group's CPU-ms per successful request, net of idle where the summary has it."""
    net = lookup(summary, ("cpu_ms_per_success_net", group))
    return net if net is not None else lookup(summary, ("cpu_ms_per_success", group))


def _db_per_ok(summary: dict[str, Any]) -> float | None:
    values = [_per_ok(summary, n) for n in ("master", *_replicas(summary))]
    return None if None in values else round(sum(values), 4)  # type: ignore[arg-type]


def _apply(data: dict[str, Any], key: str) -> float | None:
    values = [lookup(data, ("replicas", r, key)) for r in replicas_in(data.get("replicas") or {})]
    got = [v for v in values if v is not None]
    return min(got) if got else None  # the slower replica bounds the topology


def _bigtx(data: dict[str, Any], key: str, scale: float = 1.0) -> float | None:
    """One big-transaction unit's figure (its one transaction; the median when it ran several)."""
    values = [t[key] * scale for t in data.get("transactions") or [] if t.get(key) is not None]
    return round(median(values), 4) if values else None


def _bigtx_replica(data: dict[str, Any], key: str, scale: float = 1.0) -> float | None:
    values = [max(vals) * scale for t in data.get("transactions") or []
              if (vals := [r[key] for r in t["replicas"].values() if r.get(key) is not None])]
    return round(median(values), 4) if values else None


METRICS: tuple[Metric, ...] = (
    Metric("bytes_per_write", "binlog B/write", "B", lambda s: lookup(s, ("binlog", "bytes_per_write"))),
    Metric("bytes_per_row", "binlog B/row", "B",
           lambda s: lookup(s, ("binlog", "bytes_per_row")) if _wrote(s) else None),
    Metric("master_ms_per_write", "master CPU-ms/write", "ms", lambda s: _per_trx(s, "master"),
           resolution=lambda s: _per_trx_resolution(s, ("master",))),
    Metric("sent_per_write", "bytes sent to all replicas/write", "B",
           lambda s: lookup(s, ("binlog", "sent_bytes_per_write"))),
    Metric("dump_threads", "master binlog dump threads", "", lambda s: lookup(s, ("binlog", "dump_threads"))),
    Metric("replica_ms_per_write", "replica CPU-ms/applied write", "ms",
           lambda s: max([v for v in (_per_trx(s, r) for r in _replicas(s)) if v is not None], default=None),
           resolution=lambda s: _per_trx_resolution(s, _replicas(s))),
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
    Metric("binlog_syncs_per_write", "master binlog syncs/write", "",
           lambda s: lookup(s, ("replication", "nodes", "master", "binlog_syncs_per_write")) if _wrote(s) else None),
    Metric("fsyncs_per_write", "master InnoDB fsyncs/write", "", lambda s: lookup(s, ("replication", "nodes", "master",
                                                                             "fsyncs_per_write"))),
    Metric("lag_p99_ms", "lag p99 ms", "ms", lambda s: _worse_replica(s.get("lag") or {}, ("p99_ms",))),
    Metric("catch_up_s", "catch-up s", "s", lambda s: None if _never_caught_up(s) else
           max((s.get("catch_up_s") or {}).values(), default=None), never=lambda s: _never_caught_up(s)),
    Metric("p99_ms", "client p99 ms", "ms", lambda s: lookup(s, ("latency_ms", "p99"))),
    Metric("commit_p50_ms", "write p50 ms", "ms", lambda s: lookup(s, ("latency_ms", "p50")) if _wrote(s) else None),
    Metric("commit_mean_ms", "write mean ms", "ms",
           lambda s: lookup(s, ("latency_ms", "mean")) if _wrote(s) else None),
    Metric("goodput", "goodput/s", "/s", lambda s: s.get("goodput"), lower_is_better=False),
    Metric("shed", "requests shed by the app", "", lambda s: lookup(s, ("app_admission", "shed"))),
    Metric("app_ms_per_ok", "app CPU-ms/ok", "ms", lambda s: _per_ok(s, "app")),
    Metric("db_ms_per_ok", "db CPU-ms/ok", "ms", lambda s: _db_per_ok(s)),
    Metric("db_share", "db share of host", "", lambda s: s.get("db_share_of_host"), lower_is_better=False),
    Metric("semi_sync_wait_us", "MariaDB's semi-sync avg wait µs (its counter)", "µs",
           lambda s: lookup(s, ("replication", "nodes", "master", "semi_sync", "avg_tx_wait_us"))),
    Metric("apply_trx_per_s", "apply trx/s", "/s", lambda d: _apply(d, "apply_rate_trx_per_s"),
           lower_is_better=False, source="apply"),
    Metric("apply_rows_per_s", "apply rows/s", "/s", lambda d: _apply(d, "apply_rate_rows_per_s"),
           lower_is_better=False, source="apply"),
    Metric("apply_ms_per_trx", "replica CPU-ms/trx (apply)", "ms", lambda d: _apply(d, "cpu_ms_per_trx"),
           source="apply"),
    Metric("bigtx_binlog_mb", "binlog MB per transaction", "MB", lambda d: _bigtx(d, "binlog_bytes", 1e-6),
           source="bigtx"),
    Metric("bigtx_master_s", "master s (execute + commit)", "s", lambda d: _bigtx(d, "master_seconds"),
           source="bigtx"),
    Metric("bigtx_applied_s", "slowest replica applied, s after commit", "s",
           lambda d: _bigtx_replica(d, "applied_after_commit_s"), source="bigtx"),
    Metric("bigtx_lag_peak_s", "lag peak s", "s", lambda d: _bigtx_replica(d, "peak_ms", 1e-3), source="bigtx"),
    Metric("bigtx_lag_above_s", "lag above its floor, s", "s", lambda d: _bigtx_replica(d, "above_floor_s"),
           source="bigtx"),
    Metric("bigtx_cache_spills", "binlog cache spills to disk", "", lambda d: _bigtx(d, "binlog_cache_disk_use"),
           source="bigtx"),
)
BY_KEY = {m.key: m for m in METRICS}


CRITERIA_GUARD = "beyond the scenario's pass criteria"  # how a run's guards name a breach (experiments/run)


def measured(unit: dict[str, Any]) -> bool:
    """Did a study unit measure anything? A failed run keeps its (empty) metrics in study.json but measured nothing."""
    return bool(unit.get("metrics")) and unit.get("status") != STATUS_FAILED


def passed(summary: dict[str, Any]) -> bool | None:
    """Did the run stay within its scenario's pass criteria, as a sweep step would judge it? None: not judged."""
    if "guards" not in summary:
        return None
    return summary.get("status") != STATUS_FAILED and not any(g.startswith(CRITERIA_GUARD) for g in summary["guards"])


def load_table(units: list[dict[str, Any]], cells: list[dict[str, Any]],
               rates: dict[str, int]) -> list[dict[str, Any]]:
    """For a study whose cells run at multiples of its rates (the max): per scenario and cell, the runs within
    the pass criteria and the goodput as a share of the max (median, min, max)."""
    out = []
    for scenario, top in rates.items():
        for cell in cells:
            mine = [u["metrics"] for u in units if u["cell"] == cell["name"] and u["scenario"] == scenario
                    and u.get("metrics")]
            if not mine:
                continue
            share = spread([None if m.get("goodput") is None else 100 * m["goodput"] / top for m in mine])
            out.append({"scenario": scenario, "cell": cell["name"], "runs": len(mine),
                        "passed": sum(bool(m.get("passed")) for m in mine),
                        "goodput_pct_of_max": share})
    return out


def unit_metrics(kind: str, data: dict[str, Any]) -> dict[str, float | None]:
    """Every metric of one unit (a run's summary, or an apply.json)."""
    source = SOURCE_OF_MEASURE.get(kind, "run")
    out: dict[str, Any] = {m.key: m.get(data) for m in METRICS if m.source == source}
    out["never"] = [m.key for m in METRICS if m.source == source and m.never and m.never(data)]
    out["resolution"] = {m.key: r for m in METRICS if m.source == source and m.resolution
                         and (r := m.resolution(data)) is not None}
    if source == "run":
        out["passed"] = passed(data)
    out["cpu_net_of_idle"] = "cpu_seconds_net" in data or any("idle_cpu_per_s" in (r or {}) for r in
                                                                 (data.get("replicas") or {}).values())
    return out


def _value(cell: dict[str, Any], key: str) -> Any:
    """A recorded cell's value of a knob or a cell key ("" where the cell leaves it at the reference)."""
    if key in cell.get("knobs", {}):
        return cell["knobs"][key]
    if key == "scenario":
        return cell.get("scenario") or ""
    return cell.get("changed", {}).get(key, "")


def baselines(cells: list[dict[str, Any]], per: list[str]) -> dict[str, str]:
    """Each cell's baseline: the first cell with the same values of `per` (itself, if it is that first one); with
    nothing in `per`, the first cell of all."""
    out: dict[str, str] = {}
    first: dict[tuple[Any, ...], str] = {}
    for cell in cells:
        key = tuple(_value(cell, k) for k in per)
        out[cell["name"]] = first.setdefault(key, cell["name"])
    return out


def baseline_words(data: dict[str, Any]) -> str:
    """What a study's ratios are to: its first cell, or per value of its baseline_per, the first cell with it."""
    cells = [c["name"] for c in data["cells"]]
    per = data.get("baseline_per") or []
    if not per:
        return f"`{cells[0]}`"
    bases = sorted(set(data["baselines"].values()), key=cells.index)
    return f"the first cell with the same {', '.join(per)}: " + ", ".join(f"`{b}`" for b in bases)


def compare_cells(units: list[dict[str, Any]], cells: list[str],
                  base_of: dict[str, str] | None = None) -> dict[str, Any]:
    """Per group (a scenario, or the cells' scenarios) and metric: each cell's spread, ratio to its baseline (the
    first cell, or base_of's) and verdict."""
    base_of = base_of or {c: cells[0] for c in cells}
    out: dict[str, Any] = {}
    groups = sorted({u.get("group", u["scenario"]) for u in units})
    for scenario in groups:
        per_metric: dict[str, Any] = {}
        for metric in METRICS:
            mine = {cell: [u["metrics"] for u in units if u["cell"] == cell
                           and u.get("group", u["scenario"]) == scenario and u.get("metrics")] for cell in cells}
            values = {cell: [m.get(metric.key) for m in ms] for cell, ms in mine.items()}
            never = {cell: sum(metric.key in (m.get("never") or ()) for m in ms) for cell, ms in mine.items()}
            if not any(v is not None for vs in values.values() for v in vs) and not any(never.values()):
                continue
            rows = {}
            for cell in cells:
                sp, own, base = spread(values[cell]), base_of[cell], values[base_of[cell]]
                rows[cell] = {**sp, "values": values[cell], "never": never[cell], "baseline": own,
                              "ratio": None if cell == own else _round(ratio(sp["median"], spread(base)["median"])),
                              "verdict": "baseline" if cell == own else verdict(values[cell], base)}
                resolution = median([(m.get("resolution") or {}).get(metric.key) for m in mine[cell]])
                if resolution is not None:
                    rows[cell]["resolution"] = resolution
            for cell in cells:  # no ratio to, or from, a figure that cannot be told from zero
                if cell != base_of[cell] and (below_resolution(rows[base_of[cell]]) or below_resolution(rows[cell])):
                    rows[cell].update(ratio=None, verdict="n/a")
            per_metric[metric.key] = rows
        out[scenario] = per_metric
    return out


def verdict(values: list[float | None], base: list[float | None]) -> str:
    """'different' when the repeats' ranges do not overlap, 'within noise' when they do, 'n/a' without figures:
    the one wording of a study's cells and of bench-app's comparisons."""
    apart = separated(values, base)
    return "n/a" if apart is None else ("different" if apart else "within noise")


VERDICT_TEXT = {"different": "different (the repeats separate them)",
                "within noise": "within noise (the repeats overlap)", "n/a": "not comparable"}


def verdict_text(values: list[float | None], base: list[float | None]) -> str:
    return VERDICT_TEXT[verdict(values, base)]


def below_resolution(row: dict[str, Any]) -> bool:
    """A cell whose median net figure is below its runs' median resolution: no cost can be read from it."""
    return row.get("resolution") is not None and row["median"] is not None and row["median"] < row["resolution"]


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


def cell_text(row: dict[str, Any], judged: str | None = "") -> str:
    """'median [min–max] (ratio×, verdict)': the verdict given (a primary metric's test), the repeats' overlap by
    default, or none at all (judged=None: a metric the study states no finding for)."""
    never = f"{row['never']} of {len(row['values'])} did not catch up" if row.get("never") else ""
    if row["median"] is None:
        return never or "–"
    if below_resolution(row):
        return f"< {fmt(row['resolution'])} (below resolution)"
    text = fmt(row["median"])
    if row["n"] > 1 and row["min"] != row["max"]:
        text += f" [{fmt(row['min'])}–{fmt(row['max'])}]"
    if row["ratio"] is not None:
        if judged is None:
            text += f" ({row['ratio']:.2f}×)"
        elif judged:
            text += f" ({row['ratio']:.2f}×, {judged})"
        else:
            text += f" ({row['ratio']:.2f}×{'' if row['verdict'] == 'different' else ', noise'})"
    return text + (f"; {never}" if never else "")


SEMI_SYNC_KNOBS = ("semi_sync", "semi_sync_timeout_ms")


def semi_sync_cost(cells: list[dict[str, Any]], comparison: dict[str, Any]) -> list[dict[str, Any]]:
    """What semi-sync costs a commit: each semi-sync cell's write p50 and mean against the cell that differs only
    in having semi-sync off (the same link, the same other settings), per group. MariaDB's own wait counter is
    not this: it starts when the commit is flushed and leaves out the rest of the round trip."""
    out = []
    for group, per_metric in comparison.items():
        for cell in cells:
            if cell["knobs"].get("semi_sync", "off") == "off":
                continue
            same = {k: v for k, v in cell["changed"].items() if k not in SEMI_SYNC_KNOBS}
            base = next((c for c in cells if c["knobs"].get("semi_sync", "off") == "off"
                         and {k: v for k, v in c["changed"].items() if k not in SEMI_SYNC_KNOBS} == same), None)
            if base is None:
                continue
            row: dict[str, Any] = {"group": group, "cell": cell["name"], "baseline": base["name"],
                                   "semi_sync": cell["knobs"]["semi_sync"], "link": cell["changed"].get("link", "none")}
            for key in ("commit_p50_ms", "commit_mean_ms"):
                rows = per_metric.get(key) or {}
                a, b = rows.get(cell["name"]), rows.get(base["name"])
                if not a or not b or a["median"] is None or b["median"] is None:
                    row[key] = None
                    continue
                row[key] = {"cost_ms": round(a["median"] - b["median"], 3), "with": a["median"],
                            "without": b["median"], "verdict": verdict(a["values"], b["values"])}
            out.append(row)
    return out
