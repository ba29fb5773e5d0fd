"""Verdicts: a sweep step's median of repeats (judged by analysis/rules, the one evaluator), a sweep's max
sustainable rate as a reader should take it, and whether its replicas kept up. Pure functions over summaries."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..core.records import STATUS_FAILED
from ..core.results import LagOf, RunSummary, SweepBoundary, SweepRecord, merged, summary_of
from ..core.scenario import PassCriteria
from ..core.stats import median
from . import limits, rules

MEDIAN_FIGURES = ("success", "server_success", "rate_achieved", "rate_sent", "goodput", "throughput")
LATENCY_FIGURES = ("min", "mean", "p50", "p90", "p95", "p99", "max")
LAG_FIGURES = ("p99_ms", "growth_s_per_s")  # each replica's, as the kept-up criteria judge them


def median_summary(summaries: list[RunSummary]) -> RunSummary:
    """The median of repeats for the figures a verdict uses (a failed repeat keeps the step failed)."""
    runs = list(summaries)
    if len(runs) == 1:
        return runs[0]
    med = runs[len(runs) // 2].model_dump(by_alias=True, exclude_unset=True)
    for key in MEDIAN_FIGURES:
        values = [getattr(s, key) for s in runs]
        if any(v is not None for v in values):
            med[key] = median(values)
    med["latency_ms"] = {k: median([getattr(s.latency_ms, k) if s.latency_ms else None for s in runs])
                         for k in LATENCY_FIGURES}
    replicas = {r for s in runs for r in (s.catch_up_s or {})}
    med["catch_up_s"] = {r: (None if any((s.catch_up_s or {}).get(r) is None for s in runs)
                             else median([(s.catch_up_s or {})[r] for s in runs])) for r in replicas}
    lags: dict[str, LagOf] = {}
    for name in sorted({r for s in runs for r in (s.lag or {})}):
        mine = [lag for s in runs if (lag := (s.lag or {}).get(name)) is not None]
        lags[name] = merged(mine[len(mine) // 2],
                            LagOf.model_validate({k: median([getattr(lag, k) for lag in mine]) for k in LAG_FIGURES}))
    if lags:
        med["lag"] = lags
    med["saturation"] = sorted({n for s in runs for n in (s.saturation or [])})
    med["client_errors"] = round(statistics.median([s.client_errors or 0 for s in runs]))  # a count: never 1.5
    if any(s.status == STATUS_FAILED for s in runs):
        med["status"] = STATUS_FAILED
    return summary_of(med)


def step_verdict(summaries: list[RunSummary], criteria: PassCriteria,
                 rate: int) -> rules.Verdict:
    """A sweep step's verdict: its median of repeats judged by the one evaluator."""
    return rules.judge(median_summary(summaries), criteria, rate)


def describe_max(sweep: SweepRecord, brief: bool = False) -> str:
    """The max sustainable rate of a sweep.json as a reader should take it: exact, a lower bound when no step
    failed (the ladder ended first), or an upper bound when no step passed; `brief`, without the why in
    parentheses ('1600 rps, confirmed'), for a line that points at the sweep's own section."""
    steps = sweep.steps or []
    if not steps:
        return "–"
    best = sweep.max_sustainable_rate
    if best is None:
        return f"below {min(s.rate or 0 for s in steps)} rps" + ("" if brief else " (no step passed)")
    if all(s.passed for s in steps):
        return (f"≥ {best} rps" + ("" if brief else " (no step failed: the ladder ended first)")
                + confirmation_text(sweep.boundary, brief))
    return f"{best} rps" + confirmation_text(sweep.boundary, brief)


def confirmation_text(b: SweepBoundary | None, brief: bool = False) -> str:
    """What `--confirm`'s interleaved rounds at the boundary say of the maximum ("" where none ran; `brief`: only
    whether they confirmed it)."""
    if b is None or not b.runs or b.pass_rate is None:
        return ""
    if brief:
        return ", confirmed" if b.confirmed else ", not confirmed"
    rates = [rate for rate in (b.pass_rate, b.fail_rate) if rate is not None]
    said = f"{b.pass_rate} rps passed {b.ran(b.pass_rate, passed=True)} of {b.ran(b.pass_rate)}"
    if b.fail_rate is not None:
        said += f", {b.fail_rate} rps {b.ran(b.fail_rate, passed=True)} of {b.ran(b.fail_rate)}"
    rounds = f"{b.rounds} interleaved round{'s' if b.rounds != 1 else ''} at the boundary"
    if b.confirmed:
        return f", confirmed ({said} in {rounds}; {b.needed} needed)"
    if len(b.runs) < (b.rounds or 0) * len(rates):
        why = "the rounds were interrupted"
    elif b.ran(b.pass_rate, passed=True) < (b.needed or 0):
        why = f"it passed fewer than {b.needed}: the maximum may lie lower"
    else:
        why = f"{b.fail_rate} rps passed {b.needed} or more: the maximum may lie higher"
    return f", not confirmed ({said} in {rounds}; {why})"


def criteria_of(sweep: SweepRecord) -> PassCriteria:
    """A sweep's pass criteria as it recorded them, the ones it predates at their defaults."""
    recorded = sweep.criteria or {}
    known = PassCriteria.__dataclass_fields__
    return PassCriteria(**{k: float(v) for k, v in recorded.items() if k in known})


def kept_up(summaries: list[RunSummary], criteria: PassCriteria,
            rate: int) -> tuple[bool, list[str]]:
    """Did the replicas keep up during a step (the median of its repeats)? Their lag did not grow, its p99 stayed
    within bound and they caught up in time: the kept-up criteria alone, whatever the client saw."""
    verdict = rules.judge(median_summary(summaries), criteria, rate, only=rules.KEPT_UP)
    reasons = [t.text for t in verdict.tripped]
    return not reasons, reasons


@dataclass(frozen=True)
class HostFirst:
    """The lowest step at which a resource other than a replica saturated (kept_up_to's): the limit there is this
    box's, not the replicas'."""

    rate: int
    resource: str  # analysis/limits' label: "host CPU", "master", "app", "vegeta"…
    share: float  # of that resource's capacity
    replica_share: float | None  # the busier replica's share of its capacity there (None: no replica measured)
    replica_saturated: bool


@dataclass(frozen=True)
class KeptUp:
    """Up to which rate of a sweep the replicas kept up (kept_up_to's)."""

    rate: int | None  # the highest rate up to which every step kept up; None: not at the lowest
    every_step: bool  # every step the sweep ran kept up (the rate is a lower bound)
    first_behind: int | None  # the lowest rate where they did not
    why: tuple[str, ...]  # what tripped there
    host_first: HostFirst | None


def kept_up_to(steps: list[tuple[int, list[RunSummary]]], criteria: PassCriteria,
               cores: int | None = None) -> KeptUp:
    """The highest rate of a sweep up to which the replicas kept up at every step (None: not at its lowest), the
    lowest rate where they did not, with why: what "the replicas keep up to" means, apart from the master's max. And
    whether that was the replicas' limit: `host_first`, the lowest step at or below the first one they fell behind
    at where a resource other than a replica saturated (analysis/limits: the host's CPU, the master, the app,
    vegeta), with the resource and the busier replica's share of its capacity there; None when the replicas' own
    limit came first or nothing saturated."""
    judged = sorted((rate, *kept_up(runs, criteria, rate)) for rate, runs in steps if runs)
    best = None
    for rate, ok, _ in judged:  # every step up to it kept up, not merely the highest one that did
        if not ok:
            break
        best = rate
    above = next(((rate, why) for rate, ok, why in judged if not ok), None)
    host_first: HostFirst | None = None
    for rate, runs in sorted(steps, key=lambda step: step[0]):
        if not runs or (above and rate > above[0]):
            continue
        used = limits.utilisation(median_summary(runs), cores=cores)
        full = [(label, u) for label, u in used.items() if u.share >= u.saturates_at]
        other = [(label, u) for label, u in full if not u.group.startswith("replica")]
        if other:
            replicas = [u.share for u in used.values() if u.group.startswith("replica")]
            host_first = HostFirst(rate=rate, resource=other[0][0], share=other[0][1].share,
                                   replica_share=max(replicas) if replicas else None,
                                   replica_saturated=any(u.group.startswith("replica") for _, u in full))
            break
    return KeptUp(rate=best, every_step=bool(judged) and all(ok for _, ok, _ in judged),
                  first_behind=above[0] if above else None, why=tuple(above[1]) if above else (),
                  host_first=host_first)
