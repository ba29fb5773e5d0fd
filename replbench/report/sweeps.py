"""The sweeps' sections: one table per sweep (a row per rate, medians [range] of repeats), its plots and a linked
page of per-step blocks; the indexed-against-bare pairs (the reference write-up's conclusions against our sweeps:
report/reference).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..analysis.studymetrics import REPLICA_MEANS, lag_floor_ms
from ..analysis.verdicts import HostFirst, KeptUp, criteria_of, describe_max, kept_up_to
from ..core.nodenames import replicas_in
from ..core.results import (
    Binlog,
    NodeFigures,
    RowsChecked,
    RunMeta,
    RunSummary,
    SweepBoundary,
    SweepRecord,
    SweepStep,
    read_sweep,
    write_record,
)
from ..core.stats import below_floor, floor_text, median
from ..topology import appserver
from ..topology.knobs import Knobs
from .assets import Writer
from .figures import fig, floored, num
from .plots import plot_sweep
from .provenance import rows_verified, scenarios_write
from .sources import Figure, ShownStep, latency_of, load_steps, step_median, sweep_key

PAIRS = (("read", "read-noindex"), ("write", "write-noindex"), ("write-nopk", "write-nopk-keyed"))


def verdict_of(step: SweepStep) -> str:
    if not step.passed:
        assert step.reasons is not None  # experiments/sweep.py writes every step's
        return "FAIL: " + "; ".join(step.reasons)
    notes = step.notes or []
    return "PASS* (" + "; ".join(notes) + ")" if notes else "PASS"


# the sweep's whole table, on its own page (blocks.md) beside the per-step blocks (report.md keeps the sweep's verdicts
# and charts and links it: docs/studies.md, "Report and compare")
TABLE_HEADER = ("| rate asked | sent/s | goodput/s | p50 ms | p99 ms | max ms | success | app % | master % | "
                "each replica's % | app CPU-ms/ok | master CPU-ms/ok | replica CPU-ms/ok | db share | "
                "lag p99 ms | catch-up s | binlog B/write | shed / peak in flight (bound) | verdict | limited by |\n"
                + "|" + "---|" * 20)
SWEEPS_PAGE = "report-sweeps.md"  # beside report.md: every shown sweep's section, which report.md lists a line each
PLOTS_SHOWN = ("latency", "lag")  # the charts report.md shows of a sweep; its page has every one


SHED_GUIDE = ("requests the app answered 503 at once because a worker already had its bound of requests in flight, "
              "and the workers' peaks in flight summed (bound: per worker, REPLBENCH_ADMISSION and "
              "REPLBENCH_MAX_INFLIGHT; *none in the app: vegeta's N connections* = nothing shed, the client's pool "
              "of N connections bounds what the app holds; *none* alone = unbounded).")


def step_row(step: ShownStep) -> str:
    return "| " + " | ".join(step_cells(step)) + " |"


def step_cells(step: ShownStep) -> list[str]:
    """A step's cells, in TABLE_HEADER's order."""
    sums = [r.summary for r in step.repeats]

    def each(figure: Figure) -> list[float | None]:
        return [figure(s) for s in sums]

    def cpu(node: str) -> list[float | None]:
        return [(s.cpu_mean_percent or {}).get(node) for s in sums]

    # a summary from before the rename holds the older key, one after it the newer only (left to this reader: see
    # results.RENAMED_BEFORE_V1)
    sent = each(lambda s: s.rate_sent if s.rate_sent is not None else s.rate_achieved)
    goodput = each(lambda s: s.goodput if s.goodput is not None else s.throughput)

    per_ok = [s.cpu_ms_per_success or s.cpu_ms_per_request or {} for s in sums]
    replicas = replicas_in(k for s in sums for k in s.cpu_mean_percent or {}) or ("replica1", "replica2")
    # measure/lag.summarize writes a record per replica: none is null
    lag_p99: list[float | None] = [max([v.p99_ms or 0 for v in (s.lag or {}).values() if v is not None] or [0])
                                   for s in sums]
    catch = [max([v if v is not None else float("inf") for v in (s.catch_up_s or {}).values()] or [0])
             for s in sums]
    cells = [
        f"{step.rate}{' (refine)' if step.refined else ''}",
        fig(sent, "{:.1f}"), fig(goodput, "{:.1f}"),
        fig(each(lambda s: latency_of(s).p50), "{:.1f}"), fig(each(lambda s: latency_of(s).p99), "{:.1f}"),
        fig(each(lambda s: latency_of(s).max), "{:.0f}"),
        fig([None if v is None else 100 * v for v in each(lambda s: s.success)], "{:.2f}%"),
        *(fig(cpu(n)) for n in ("app", "master")),
        " / ".join(fig(cpu(r)) for r in replicas),
        fig([p.get("app") for p in per_ok], "{:.3f}"), fig([p.get("master") for p in per_ok], "{:.3f}"),
        fig([busier(p, replicas) for p in per_ok], "{:.3f}"),
        fig([None if s.db_share_of_host is None else 100 * s.db_share_of_host for s in sums], "{:.0f}%"),
        floored(lag_p99, lag_floor_ms(sums)), fig([None if c == float("inf") else c for c in catch], "{:.1f}"),
        fig(each(lambda s: (s.binlog or Binlog()).bytes_per_write), "{:.0f}"),
        _shed(sums),
        verdict_of(step),
        _limited(sums),
    ]
    return cells


def _limited(sums: list[RunSummary]) -> str:
    """What limited the step, as each run recorded it (analysis/limits.limiting), from its middle repeat by share:
    the saturated resource and its share of its capacity, or the closest one when none saturated, and what else held
    it back; '–' for runs recorded before it was (docs/metrics.md, "Limited by")."""
    got = sorted((s.limit for s in sums if s.limit is not None), key=lambda limit: limit.share)
    if not got:
        return "–"
    limit = got[len(got) // 2]
    head = (f"{limit.resource} {limit.share:.0%}" if limit.saturated
            else f"none saturated (closest: {limit.resource} {limit.share:.0%})")
    return head + "".join(f"; {also}" for also in limit.also)


def busier(per_node: NodeFigures, replicas: tuple[str, ...] | list[str]) -> float | None:
    """The busier replica's figure (the larger of the replicas'): the worse one, what "replica" means in every
    table (analysis/studymetrics.REPLICA_MEANS)."""
    got = [v for r in replicas if (v := per_node.get(r)) is not None]
    return max(got) if got else None


def _shed(sums: list[RunSummary]) -> str:
    """Requests the app shed over its in-flight bound and its workers' peaks in flight summed (medians of the
    repeats), and the bound per worker."""
    bounded = [(s.app_admission, s.client_connections) for s in sums
               if s.app_admission is not None and s.app_admission.limit_per_worker is not None]
    if not bounded:
        return "–"
    bound = "/".join(sorted({appserver.bound_text(admission, taken=False, pool=pool)
                             for admission, pool in bounded}))
    shed = fig([s.app_admission.shed if s.app_admission else None for s in sums])
    peak = fig([s.app_admission.peak_in_flight if s.app_admission else None for s in sums])
    return f"{shed} / {peak} ({bound})"


def shared_criteria(sweep_dirs: list[Path]) -> tuple[str, str]:
    """The pass criteria and the rule of keeping up every one of these sweeps recorded, each when they all recorded
    the same ('' otherwise): said once above them instead of in each."""
    sweeps = [read_sweep(d) for d in sweep_dirs]
    texts, rules = {s.criteria_text or "" for s in sweeps}, {kept_rule(s) for s in sweeps}
    return (texts.pop() if len(texts) == 1 else "", rules.pop() if len(rules) == 1 else "")


def kept_rule(sweep: SweepRecord) -> str:
    """When the replicas kept up during a step, by a sweep's recorded criteria (the defaults where it predates
    them)."""
    c = criteria_of(sweep)
    return (f"lag p99 ≤ {c.max_lag_p99 * 1000:g} ms, growing less than {c.max_lag_growth:g} s per s, caught up ≤ "
            f"{c.max_catch_up:g} s after")


@dataclass(frozen=True)
class ShownSweep:
    """A sweep as its section shows it and the first page reads it (sweep_section's)."""

    scenario: str
    key: str  # sources.sweep_key: its scenario and the settings that set it apart
    max: int | None  # sweep.json's max_sustainable_rate
    max_text: str  # verdicts.describe_max: the maximum with its confirmation
    max_brief: str  # the same without its why, for lines that point at the sweep's section
    kept_up: KeptUp | None  # None: no completed step
    steps: list[ShownStep]
    folder: str
    meta: RunMeta | None  # its first step's (sources.load_steps: an empty record where not kept)
    earlier_max: tuple[str, ...] = ()  # what the other sweeps of its key found (report/markdown)
    behind_at_boundary: str = ""  # boundary_behind: where the rounds at the boundary saw the replicas fall behind


def boundary_behind(boundary: SweepBoundary | None, first_behind: int | None) -> str:
    """Where `--confirm`'s rounds at the boundary saw a replica fall behind below the ladder's first such step (the
    kept-up criteria's reasons: a lag, or no catch-up), as a clause; '' where they did not."""
    # a boundary run records only its reasons' words (rules' texts): the kept-up rules' name a lag or a catch-up
    late = [r.rate for r in (boundary.runs or [] if boundary else [])
            if r.rate is not None and any("'s lag " in why or "catch" in why for why in r.reasons or [])]
    below = sorted(rate for rate in set(late) if first_behind is None or rate < first_behind)
    if boundary is None or not below:
        return ""
    return (f"; in the rounds at the boundary they fell behind at {below[0]} rps in {late.count(below[0])} of "
            f"{boundary.ran(below[0])}")


def shown_sweep(sweep_dir: Path, sweep: SweepRecord, steps: list[ShownStep]) -> ShownSweep:
    """A sweep with its loaded steps as the first page reads it: its maximum, up to where the replicas kept up by
    its own criteria (a host's saturation judged on its first step's cores), its first step's meta."""
    assert sweep.scenario is not None  # experiments/sweep.py writes it
    meta = steps[0].repeats[0].meta if steps else None
    kept = kept_up_to([(_rate(s), [r.summary for r in s.repeats]) for s in steps], criteria_of(sweep),
                      meta.host.cores if meta is not None and meta.host else None) if steps else None
    return ShownSweep(scenario=sweep.scenario, key=sweep_key(sweep), max=sweep.max_sustainable_rate,
                      max_text=describe_max(sweep) if steps else "–",
                      max_brief=describe_max(sweep, brief=True) if steps else "–", kept_up=kept, steps=steps,
                      folder=sweep_dir.name, meta=meta,
                      behind_at_boundary=boundary_behind(sweep.boundary, kept.first_behind if kept else None))


def sweep_section(sweep_dir: Path, writer: Writer, shared: tuple[str, str] = ("", "")) -> tuple[list[str],
                                                                                                ShownSweep]:
    """A sweep's section in report.md (its pass criteria unless they are the shared ones said above it) and what the
    first page reads of it; its whole table, charts and per-step blocks on its own page (blocks.md)."""
    sweep = read_sweep(sweep_dir)
    steps = load_steps(sweep_dir, sweep)
    shown = shown_sweep(sweep_dir, sweep, steps)
    name = shown.scenario
    assert sweep.repeat is not None  # experiments/sweep.py writes it
    lines = [f"## {sweep_heading(sweep_key(sweep), sweep_dir.name)}", ""]
    if not steps or shown.kept_up is None:
        return lines + ["No completed step.", ""], shown
    assets = writer.folder(sweep_dir)
    write_record(assets / "sweep.json", sweep)
    first = steps[0].repeats[0]
    meta = first.meta
    for source in (sweep_dir / first.name / "meta.json", sweep_dir / "meta.json"):
        if source.exists():  # kept, so a rebuild from the assets still has it
            writer.keep_meta(source, assets / "meta.json")
            break
    kept = shown.kept_up
    reference = Knobs()  # a sweep rebuilt from assets without its meta: the knobs that differ from the reference
    # knobs_changed: never null in a meta.json
    knobs = meta.knobs_changed.given() if meta.knobs_changed is not None else {
        k: v for k, v in (sweep.knobs.given() if sweep.knobs is not None else {}).items()
        if getattr(reference, k, None) != v}
    lines += [
        f"- **Settings**: {', '.join(f'{k}={v}' for k, v in knobs.items()) or 'reference'}; "
        f"{sweep.duration_s:g} s per step" + (f", {sweep.repeat} repeats per step (median [range])"
                                              if sweep.repeat > 1 else ""),
        *([f"- **Pass criteria**: {sweep.criteria_text}"] if sweep.criteria_text != shared[0] else []),
        f"- **Status**: {sweep.status}; **max sustainable rate: {describe_max(sweep)}**" + (
            "" if "max_lag_p99" in (sweep.criteria or {}) else " (judged by the criteria above: the replicas' lag "
            "during a step was not one of them)"),
        "- **How far the replicas kept up**" + (f" ({kept_rule(sweep)})" if kept_rule(sweep) != shared[1] else "")
        + f": {kept_text(kept)}",
        rows_verified([None if (share := (r.summary.rows_checked or RowsChecked()).share) is None
                       else round(100 * share, 2) for s in steps for r in s.repeats], scenarios_write(name)),
        "",
    ]
    plots = plot_sweep(steps, assets, name)
    for file in plots:
        if file[:-4] in PLOTS_SHOWN:
            lines.append(f"![{name} {file[:-4]}]({writer.rel(assets / file)})")
    blocks = [f"# Per-step blocks of `{sweep_dir.name}`", "",
              f"Every figure of each step, median [range] of its repeats; *replica*: {REPLICA_MEANS}; *each "
              "replica's %* lists every one. *sent/s*: the rate vegeta sent requests at. *shed / peak in flight "
              "(bound)*: " + SHED_GUIDE + " *limited by*: the resource that saturated, with its share of its "
              "capacity, or the closest when none did, and what else held the step back (docs/metrics.md, "
              "\"Limited by\"). *PASS\\**: the step met every criterion but the host or the load generator was "
              "saturated (the reason is given): the figure describes this box, not only the databases.", "",
              TABLE_HEADER, *(step_row(s) for s in steps), "", *(f"![{name} {f[:-4]}]({f})" for f in plots), ""]
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
    page = writer.rel(assets / "blocks.md")
    lines += ["", f"[Each step: table, charts, blocks]({page})", ""]
    return lines, shown


def _rate(step: SweepStep) -> int:
    """A step's rate: experiments/sweep.py writes every step's."""
    assert step.rate is not None
    return step.rate


def kept_text(kept: KeptUp, why: bool = True) -> str:
    """How far the replicas kept up, as a clause: 'the replicas kept up to 1200 rps (at 1600 rps: replica2's lag grew
    0.14 s per s …)', '… at every step it ran, to …', '… at no step'; without why, only where they fell behind ('to
    1200 rps, not at 1600'). Where another resource saturated first (analysis/verdicts.kept_up_to's host_first) and
    no replica did, the limit was this box's: the clause names it and the replica's share of its core, and says no
    rate the replicas kept up to (docs/metrics.md, "Limited by")."""
    first = kept.host_first
    if first is not None and not first.replica_saturated:
        return _box_first(kept, first, why)
    return "the replicas kept up " + _kept(kept, why) + _host_first(first)


def _kept(kept: KeptUp, why: bool) -> str:
    reasons = f" ({'; '.join(kept.why)})" if why and kept.why else ""
    if kept.rate is None:
        return "at no step" + reasons
    if kept.every_step:
        return f"at every step it ran, to {kept.rate} rps (a lower bound)"
    if not kept.first_behind:
        return f"to {kept.rate} rps"
    return f"to {kept.rate} rps" + (f" (at {kept.first_behind} rps: {'; '.join(kept.why)})" if why
                                     else f", not at {kept.first_behind}")


def _saturated_at(first: HostFirst) -> str:
    replica = "" if first.replica_share is None else f", replica {first.replica_share:.0%} of a core"
    return f"this box saturated first, at {first.rate} rps ({first.resource} {first.share:.0%}{replica})"


def _host_first(first: HostFirst | None) -> str:
    return "" if first is None else "; " + _saturated_at(first)


def _box_first(kept: KeptUp, first: HostFirst, why: bool) -> str:
    if not why:  # the short form, where the sweep's own section says the rest (report/page.findings)
        return _saturated_at(first) + ", before the replicas" + (
            f"; they fell behind at {kept.first_behind} rps" if kept.first_behind is not None else "")
    text = _saturated_at(first) + ", before the replicas: their own limit is not measured here"
    if kept.first_behind is not None:
        reasons = f" ({'; '.join(kept.why)})" if why and kept.why else ""
        return text + f"; they fell behind at {kept.first_behind} rps{reasons}, on the saturated box"
    return text + ("; their lag met the criteria at every step it ran" if kept.every_step else "")


def comparison(latest: dict[str, ShownSweep]) -> list[str]:
    lines: list[str] = []
    for indexed, plain in PAIRS:
        if indexed not in latest or plain not in latest:
            continue
        a, b = latest[indexed], latest[plain]
        if not lines:
            lines += ["## Paired sweeps: what the indexes (and the primary key) cost", ""]
        lines += [f"### `{indexed}` vs `{plain}`", "", "| | " + f"`{indexed}` | `{plain}` |", "|---|---|---|",
                  f"| max sustainable rate | {a.max_brief} | {b.max_brief} |"]
        common = sorted({_rate(s) for s in a.steps} & {_rate(s) for s in b.steps})
        if common:
            runs = max(len(s.repeats) for s in (*a.steps, *b.steps))
            lines += ["", f"Per successful request at the rates both sweeps ran, `{indexed}` / `{plain}` (ratio), "
                      + ("median of repeats" if runs > 1 else "one run a step, not tested")
                      + "; CPU net of idle:", "",
                      "| rate | " + " | ".join(label for label, _ in PAIRED) + " |", "|---|" + "---|" * len(PAIRED)]
            by_a = {s.rate: s for s in a.steps}
            by_b = {s.rate: s for s in b.steps}
            for rate in common:
                said = []
                for _, figure in PAIRED:
                    va, vb = figure(by_a[rate]), figure(by_b[rate])
                    said.append(f"{num(va)} / {num(vb)}" + (f" ({va / vb:.2f}×)" if va and vb else ""))
                failed = [f"`{k}`" for k, step in ((indexed, by_a[rate]), (plain, by_b[rate])) if not step.passed]
                lines.append(f"| {rate}" + (f" (failed: {', '.join(failed)})" if failed else "") + " | "
                             + " | ".join(said) + " |")
        lines.append("")
    return lines


REPLICA = "replica"  # a node that means the busier replica


def step_per_ok(step: ShownStep, node: str) -> float | None:
    """A step's CPU-ms per successful request of one node, net of idle, the median of its repeats; REPLICA takes each
    repeat's busier replica."""
    if node != REPLICA:
        return step_median(step, lambda s: (s.cpu_ms_per_success_net or s.cpu_ms_per_success or {}).get(node))
    values = []
    for r in step.repeats:  # net of idle where the run recorded it (every run since net figures were)
        per_node = r.summary.cpu_ms_per_success_net or r.summary.cpu_ms_per_success or {}
        values.append(busier(per_node, replicas_in(per_node)))
    return median(values)


# the paired sweeps' columns: (label, a step's figure; "replica": the worse replica, as REPLICA means)
PAIRED: tuple[tuple[str, Callable[[ShownStep], float | None]], ...] = (
    ("master CPU-ms/ok", lambda step: step_per_ok(step, "master")),
    ("worse replica CPU-ms/ok", lambda step: step_per_ok(step, REPLICA)),
    ("binlog bytes/write", lambda step: step_median(step, lambda s: (s.binlog or Binlog()).bytes_per_write)),
    ("p99 latency ms", lambda step: step_median(step, lambda s: latency_of(s).p99)))


def lag_p99(step: ShownStep) -> float | None:
    """The busier replica's lag p99 (median of repeats)."""
    return median([max([lag.p99_ms for lag in (r.summary.lag or {}).values() if lag and lag.p99_ms is not None],
                       default=None) for r in step.repeats])


def lag_text(step: ShownStep, form: Callable[[float | None], str]) -> str:
    """The step's lag p99 as `form` prints a figure, or '< 10' under the runs' floor (docs/metrics.md, "Lag"):
    never a value the positions cannot resolve."""
    lag, floor = lag_p99(step), lag_floor_ms([r.summary for r in step.repeats])
    return floor_text(floor) if below_floor(lag, floor) else form(lag)


def heading_anchor(heading: str) -> str:
    """GitHub's anchor for a markdown heading: lowercased, punctuation but - and _ dropped, spaces to -."""
    return "".join(ch for ch in heading.replace("`", "").strip().lower() if ch.isalnum() or ch in " -_").replace(
        " ", "-")


def sweep_heading(key: str, folder: str) -> str:
    return f"Sweep `{key}` — `{folder}`"


def sweep_line(shown: ShownSweep) -> str:
    """A sweep's line in report.md: its maximum and how far the replicas kept up, linked to its section on
    SWEEPS_PAGE."""
    link = f"{SWEEPS_PAGE}#{heading_anchor(sweep_heading(shown.key, shown.folder))}"
    kept = kept_text(shown.kept_up) if shown.kept_up is not None else "the replicas: no completed step"
    return f"- [`{shown.key}`]({link}): **max sustainable rate {shown.max_text}**; {kept}{shown.behind_at_boundary}"
