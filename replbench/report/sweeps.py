"""The sweeps' sections: one table per sweep (a row per rate, medians [range] of repeats), its plots and a linked
page of per-step blocks; the indexed-against-bare pairs; the reference write-up's write steps beside ours.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..analysis.verdicts import criteria_of, describe_max, kept_up_to
from ..core.nodenames import replicas_in
from ..core.results import RunSummary, SweepStep, at, document, has, load, sweep_of, value, write_json
from ..core.stats import median
from ..topology import appserver
from ..topology.knobs import Knobs
from . import reference
from .assets import Writer
from .figures import fig, num
from .plots import plot_sweep
from .provenance import rows_verified, scenarios_write
from .sources import ShownStep, load_steps, step_median, sweep_key

PAIRS = (("read", "read-noindex"), ("write", "write-noindex"), ("write-nopk", "write-nopk-keyed"))


def verdict_of(doc: dict[str, Any] | SweepStep) -> str:
    step = doc if isinstance(doc, SweepStep) else SweepStep.model_validate(doc)
    if not step.passed:
        return "FAIL: " + "; ".join(step.reasons)
    notes = step.notes or []
    return "PASS* (" + "; ".join(notes) + ")" if notes else "PASS"


TABLE_HEADER = ("| rate asked | sent/s | goodput/s | p50 ms | p99 ms | max ms | success | app % | master % | "
                "replica % (each) | app CPU-ms/ok | master CPU-ms/ok | replica CPU-ms/ok | db share | "
                "lag p99 ms | catch-up s | binlog B/write | shed / peak in flight (bound) | verdict |\n"
                + "|" + "---|" * 19)


def step_row(step: ShownStep) -> str:
    sums = [r.summary for r in step.repeats]

    def get(*path: str) -> list[float | None]:
        return [at(s, path) for s in sums]

    def either(new: str, old: str) -> list[float | None]:
        # a summary from before the rename holds the older key (left to this reader: see results.RENAMED_BEFORE_V1)
        return [value(s, new) if has(s, new) else value(s, old) for s in sums]

    per_ok = [s.cpu_ms_per_success or s.cpu_ms_per_request or {} for s in sums]
    replicas = replicas_in(k for s in sums for k in s.cpu_mean_percent or {}) or ("replica1", "replica2")
    lag_p99 = [max([v.p99_ms or 0 for v in (s.lag or {}).values()] or [0]) for s in sums]
    catch = [max([v if v is not None else float("inf") for v in (s.catch_up_s or {}).values()] or [0])
             for s in sums]
    cells = [
        f"{step.rate}{' (refine)' if step.refined else ''}",
        fig(either("rate_sent", "rate_achieved"), "{:.1f}"), fig(either("goodput", "throughput"), "{:.1f}"),
        fig(get("latency_ms", "p50"), "{:.1f}"), fig(get("latency_ms", "p99"), "{:.1f}"),
        fig(get("latency_ms", "max"), "{:.0f}"),
        fig([None if v is None else 100 * v for v in get("success")], "{:.2f}%"),
        *(fig(get("cpu_mean_percent", n)) for n in ("app", "master")),
        " / ".join(fig(get("cpu_mean_percent", r)) for r in replicas),
        fig([p.get("app") for p in per_ok], "{:.3f}"), fig([p.get("master") for p in per_ok], "{:.3f}"),
        fig([busier(p, replicas) for p in per_ok], "{:.3f}"),
        fig([None if s.db_share_of_host is None else 100 * s.db_share_of_host for s in sums], "{:.0f}%"),
        fig(lag_p99), fig([None if c == float("inf") else c for c in catch], "{:.1f}"),
        fig(get("binlog", "bytes_per_write"), "{:.0f}"),
        _shed(sums),
        verdict_of(step),
    ]
    return "| " + " | ".join(cells) + " |"


def busier(per_node: dict[str, Any], replicas: tuple[str, ...] | list[str]) -> float | None:
    """The busier replica's figure (the larger of the replicas'): what "replica" means in every table."""
    got = [v for r in replicas if (v := per_node.get(r)) is not None]
    return max(got) if got else None


def _shed(sums: list[RunSummary]) -> str:
    """Requests the app shed over its in-flight bound and its workers' peaks in flight summed (medians of the
    repeats), and the bound per worker."""
    bounded = [s for s in sums if s.app_admission is not None and s.app_admission.limit_per_worker is not None]
    if not bounded:
        return "–"
    bound = "/".join(sorted({appserver.bound_text(document(s.app_admission), taken=False, pool=s.client_connections)
                             for s in bounded}))
    shed = fig([s.app_admission.shed if s.app_admission else None for s in sums])
    peak = fig([s.app_admission.peak_in_flight if s.app_admission else None for s in sums])
    return f"{shed} / {peak} ({bound})"


def sweep_section(sweep_dir: Path, writer: Writer) -> tuple[list[str], dict[str, Any]]:
    doc = load(sweep_dir / "sweep.json")
    sweep = sweep_of(doc)
    steps = load_steps(sweep_dir, sweep)
    name = sweep.scenario
    lines = [f"### Sweep `{sweep_key(sweep)}` — `{sweep_dir.name}`", ""]
    if not steps:
        return lines + ["No completed step.", ""], {"scenario": name, "max": None, "max_text": "–", "steps": []}
    assets = writer.folder(sweep_dir)
    write_json(assets / "sweep.json", doc)
    first = steps[0].repeats[0]
    meta = first.meta
    for source in (sweep_dir / first.name / "meta.json", sweep_dir / "meta.json"):
        if source.exists():  # kept, so a rebuild from the assets still has it
            writer.keep_meta(source, assets / "meta.json")
            break
    criteria = criteria_of(sweep)
    kept = kept_up_to([(s.rate, [r.summary for r in s.repeats]) for s in steps], criteria)
    reference = Knobs()  # a sweep rebuilt from assets without its meta: the knobs that differ from the reference
    # knobs_changed: never null in a meta.json
    knobs = meta.knobs_changed if meta.knobs_changed is not None else {
        k: v for k, v in (sweep.knobs or {}).items() if getattr(reference, k, None) != v}
    lines += [
        f"- **Settings**: {', '.join(f'{k}={v}' for k, v in knobs.items()) or 'reference'}; "
        f"{sweep.duration_s:g} s per step" + (f", {sweep.repeat} repeats per step (median [range])"
                                              if sweep.repeat > 1 else ""),
        f"- **Pass criteria**: {sweep.criteria_text}",
        f"- **Status**: {sweep.status}; **max sustainable rate: {describe_max(doc)}**" + (
            "" if "max_lag_p99" in (sweep.criteria or {}) else " (judged by the criteria above: the replicas' lag "
            "during a step was not one of them)"),
        f"- **The replicas kept up** (lag p99 ≤ {criteria.max_lag_p99 * 1000:g} ms and not growing by "
        f"{criteria.max_lag_growth:g} s per s or more during the step, caught up ≤ {criteria.max_catch_up:g} s "
        f"after it; from the steps' own lag): {kept_text(kept)}",
        rows_verified([None if at(r.summary, ("rows_checked", "share")) is None
                       else round(100 * r.summary.rows_checked.share, 2)
                       for s in steps for r in s.repeats], scenarios_write(name)),
        "",
        TABLE_HEADER, *(step_row(s) for s in steps), "",
    ]
    for file in plot_sweep(steps, assets, name):
        lines.append(f"![{name} {file[:-4]}]({writer.rel(assets / file)})")
    blocks = [f"# Per-step blocks of `{sweep_dir.name}`", ""]
    for step in steps:
        for r in step.repeats:
            tag = r.name
            for src, path in r.files.items():
                if path.exists():
                    writer.copy(path, assets / f"{tag}-{src}")
            block = (assets / f"{tag}-block.txt").read_text().rstrip("\n") if r.files["block.txt"].exists() \
                else "(none)"
            blocks += [f"## {step.rate} rps — `{tag}`", "", "```", block, "```", "",
                       f"![latency over time]({tag}-latency.png)", ""]
    (assets / "blocks.md").write_text("\n".join(blocks))
    lines += ["", f"Per-step blocks and latency over time: [{sweep_dir.name}/blocks.md]"
                  f"({writer.rel(assets / 'blocks.md')})", ""]
    return lines, {"scenario": name, "key": sweep_key(sweep), "max": sweep.max_sustainable_rate, "kept_up": kept,
                   "max_text": describe_max(doc), "steps": steps, "folder": sweep_dir.name, "meta": meta}


def kept_text(kept: dict[str, Any]) -> str:
    """'to 1200 rps (at 1600 rps: replica2's lag grew 0.14 s per s …)', 'at every step it ran, to …', 'at no
    step'."""
    if kept["rate"] is None:
        return "at no step" + (f" ({'; '.join(kept['why'])})" if kept["why"] else "")
    if kept["all"]:
        return f"at every step it ran, to {kept['rate']} rps (a lower bound)"
    return f"to {kept['rate']} rps" + (f" (at {kept['first_behind']} rps: {'; '.join(kept['why'])})"
                                        if kept["first_behind"] else "")


def comparison(latest: dict[str, dict[str, Any]]) -> list[str]:
    lines: list[str] = []
    for indexed, plain in PAIRS:
        if indexed not in latest or plain not in latest:
            continue
        a, b = latest[indexed], latest[plain]
        if not lines:
            lines += ["## Paired sweeps: what the indexes (and the primary key) cost", ""]
        lines += [f"### `{indexed}` vs `{plain}`", "", "| | " + f"`{indexed}` | `{plain}` |", "|---|---|---|",
                  f"| max sustainable rate | {a['max_text']} | {b['max_text']} |"]
        common = sorted({s.rate for s in a["steps"]} & {s.rate for s in b["steps"]})
        if common:
            lines += ["", "Per successful request at the rates both sweeps ran (median of repeats):", "",
                      "| rate | metric | " + f"`{indexed}` | `{plain}` | ratio |", "|---|---|---|---|---|"]
            by_a = {s.rate: s for s in a["steps"]}
            by_b = {s.rate: s for s in b["steps"]}
            for rate in common:
                for label, path in (("master CPU-ms/ok", ("cpu_ms_per_success", "master")),
                                    ("replica CPU-ms/ok", ("cpu_ms_per_success", REPLICA)),
                                    ("binlog bytes/write", ("binlog", "bytes_per_write")),
                                    ("p99 latency ms", ("latency_ms", "p99"))):
                    va, vb = step_figure(by_a[rate], path), step_figure(by_b[rate], path)
                    ratio = f"{va / vb:.2f}×" if va and vb else "–"
                    lines.append(f"| {rate} | {label} | {num(va)} | {num(vb)} | {ratio} |")
        lines.append("")
    return lines


REPLICA = "replica"  # a path's node that means the busier replica


def step_figure(step: ShownStep, path: tuple[str, ...]) -> float | None:
    """A step's median of repeats; a path naming REPLICA takes each repeat's busier replica."""
    if REPLICA not in path:
        return step_median(step, path)
    at_node = path.index(REPLICA)
    values = []
    for r in step.repeats:
        per_node = at(r.summary, path[:at_node]) or {}
        values.append(busier(per_node, replicas_in(per_node)) if isinstance(per_node, dict) else None)
    return median(values)


REFERENCE_POOLS = ("", "128M")  # our sweeps set beside the reference's: the reference pool, and the write-up's


def _not_ours(info: dict[str, Any] | None, rate: int) -> str:
    """Why our side of a reference row is empty: no such sweep in this report's data, a rate above the steps the
    sweep ran (it stops after two failing steps in a row), or a rate its ladder does not hold."""
    if info is None:
        return "*not in this campaign*"
    if rate > max((s.rate for s in info["steps"]), default=0):
        return "*not reached*: the sweep stopped after two failing steps in a row"
    return "*not on its ladder*"


def reference_comparison(latest: dict[str, dict[str, Any]], verdict: str = "") -> list[str]:
    """The reference write-up's write steps beside ours at the same rates, per request: its "Gunicorn cpu / Mysql
    cpu: master + 2 * replica" line as CPU-ms per write, and its p50/p95/p99, against our sweeps with the
    reference pool (the whole set in memory) and with a 128M pool (the image default: the write-up states no pool),
    opened by the verdict (report/answers.reference_verdict)."""
    found = {(scenario, pool): latest.get(scenario + (f" [buffer_pool={pool}]" if pool else ""))
             for scenario in reference.WRITES for pool in REFERENCE_POOLS}
    if not any(found.values()):
        return []
    lines = ["## The reference experiment's write steps beside ours", "",
             *([f"**Verdict**: {verdict}", ""] if verdict else []),
             f"The write-up ({reference.SOURCE}: 16 vCPU, 12 gunicorn workers; it does not state its pool, 128M is "
             "the image default) against our sweeps of the same rates on this 2-core box, per successful write so "
             "that the hosts compare (its CPU % × 10 ÷ rate). Ours: median of repeats; replica as everywhere, the "
             "busier one.", ""]
    for scenario, steps in reference.WRITES.items():
        lines += [f"### `{scenario}`", "",
                  "| rate | source | app CPU-ms/write | master CPU-ms/write | replica CPU-ms/write | p50 ms | "
                  "p95 ms | p99 ms | replica lag p99 ms |", "|---|---|---|---|---|---|---|---|---|"]
        for ref in steps:
            lines.append(f"| {ref.rate} | the write-up{f' ({ref.note})' if ref.note else ''} | "
                         f"{num(ref.cpu_ms(ref.gunicorn))} | {num(ref.cpu_ms(ref.master))} | {ref.replica_text()} | "
                         f"{num(ref.p50_ms)} | {num(ref.p95_ms)} | {num(ref.p99_ms)} | – |")
            for pool in REFERENCE_POOLS:
                info = found[(scenario, pool)]
                step = next((s for s in (info["steps"] if info else []) if s.rate == ref.rate), None)
                label = f"ours, {pool or 'reference'} pool"
                if step is None:
                    lines.append(f"| {ref.rate} | {label} | {_not_ours(info, ref.rate)} | | | | | | |")
                    continue
                lines.append(f"| {ref.rate} | {label} | "
                             + " | ".join(num(step_figure(step, ("cpu_ms_per_success", n)))
                                          for n in ("app", "master", REPLICA)) + " | "
                             + " | ".join(num(step_median(step, ("latency_ms", q))) for q in ("p50", "p95", "p99"))
                             + f" | {num(lag_p99(step))} |")
        lines.append("")
    return lines


def lag_p99(step: ShownStep) -> float | None:
    """The busier replica's lag p99 (median of repeats)."""
    return median([max([lag.p99_ms for lag in (r.summary.lag or {}).values() if lag and lag.p99_ms is not None],
                       default=None) for r in step.repeats])
