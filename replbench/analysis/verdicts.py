"""Verdicts: a sweep step judged against its scenario's pass criteria (from the median of its repeats), a sweep's
max sustainable rate as a reader should take it, and the smallest separated difference worth a finding. Pure
functions over summary dicts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.records import STATUS_FAILED
from ..core.results import RunSummary, SweepRecord, has, summary_of, sweep_of
from ..core.scenario import PassCriteria
from ..core.stats import median

FINDING_MIN_FACTOR = 1.10  # a separated difference smaller than 10 % is real but not worth a headline


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2%}"


def _success(s: RunSummary) -> float | None:
    """Success judged server-side (client-side errors are a load-generator limit)."""
    return s.server_success if has(s, "server_success") else s.success


def _worst_lag(s: RunSummary, figure: str) -> tuple[str, float] | None:
    """(replica, figure) of the replica whose lag figure is the largest; None when no replica has it."""
    got = [(name, float(v)) for name, lag in sorted((s.lag or {}).items())
           if lag is not None and (v := getattr(lag, figure)) is not None]
    return max(got, key=lambda item: item[1]) if got else None


KEPT_UP = ("max_lag_p99", "max_lag_growth")  # the criteria that say the replicas kept up during a step


@dataclass(frozen=True)
class Criterion:
    """One pass criterion of a scenario (core/scenario.PassCriteria holds its limit): the figure it judges, whether
    the figure breaks the limit, and the sentence that says so."""

    name: str
    figure: Callable[[RunSummary, int], Any]
    broken: Callable[[Any, Any, int], bool]
    text: Callable[[Any, Any, int], str]


# the pass criteria, in the order a step's reasons list them: a run's guards and a sweep step's verdict read this
# one table (docs/runs.md, "Pass criteria")
CRITERIA: tuple[Criterion, ...] = (
    Criterion("min_success", lambda s, rate: _success(s),
              lambda v, lim, rate: v is None or v < lim,
              lambda v, lim, rate: f"success {_pct(v)} < {lim:.1%}"),
    Criterion("min_rate_ratio", lambda s, rate: (s.rate_sent if has(s, "rate_sent") else s.rate_achieved) or 0.0,
              lambda v, lim, rate: v < lim * rate,
              lambda v, lim, rate: f"sent {v:.1f}/s < {lim:.0%} of {rate}/s"),
    Criterion("max_p99", lambda s, rate: s.latency_ms.p99 if s.latency_ms else None,
              lambda v, lim, rate: v is None or v > lim * 1000,
              lambda v, lim, rate: f"p99 {v} ms > {lim * 1000:g} ms"),
    Criterion("max_lag_p99", lambda s, rate: _worst_lag(s, "p99_ms"),
              lambda v, lim, rate: v is not None and v[1] > lim * 1000,
              lambda v, lim, rate: f"{v[0]}'s lag p99 {v[1]:g} ms > {lim * 1000:g} ms"),
    Criterion("max_lag_growth", lambda s, rate: _worst_lag(s, "growth_s_per_s"),
              lambda v, lim, rate: v is not None and v[1] >= lim,
              lambda v, lim, rate: f"{v[0]}'s lag grew {v[1]:g} s per s (limit {lim:g}: falling behind)"),
    Criterion("max_catch_up", lambda s, rate: s.catch_up_s or {},
              lambda v, lim, rate: not v or any(t is None or t > lim for t in v.values()),
              lambda v, lim, rate: f"replicas caught up {v or 'never measured'} (limit {lim:g} s)"),
)


def breaches(summary: dict[str, Any] | RunSummary, criteria: Any, rate: int,
             leave_out: tuple[str, ...] = ()) -> list[str]:
    """The scenario's pass criteria that a run (or a step's median of repeats) breaks: the one evaluator behind
    both a run's guards and a sweep step's verdict, so the two never disagree. A replica that never caught up
    breaks the catch-up limit. leave_out: criteria judged elsewhere (a run says its catch-up per replica)."""
    s = summary_of(summary)
    reasons = []
    for c in CRITERIA:
        limit = getattr(criteria, c.name, None)  # None: criteria recorded before this one existed
        if c.name in leave_out or limit is None:
            continue
        value = c.figure(s, rate)
        if c.broken(value, limit, rate):
            reasons.append(c.text(value, limit, rate))
    return reasons


def evaluate(summary: dict[str, Any] | RunSummary, criteria: Any, rate: int) -> tuple[bool, list[str], list[str]]:
    """Verdict of one step from its (median) summary: passed?, the reasons it failed, and the notes that qualify a
    pass (PASS*: the host or the load generator was saturated, or the load generator itself failed requests)."""
    s = summary_of(summary)
    reasons = (["run failed (see its guards)"] if s.status == STATUS_FAILED else []) + breaches(s, criteria, rate)
    notes = list(s.saturation or [])
    if s.client_errors:
        notes.append(f"{s.client_errors:,} client-side errors (load generator limit)")
    return not reasons, reasons, notes


MEDIAN_FIGURES = ("success", "server_success", "rate_achieved", "rate_sent", "goodput")
LATENCY_FIGURES = ("min", "mean", "p50", "p90", "p95", "p99", "max")
LAG_FIGURES = ("p99_ms", "growth_s_per_s")  # each replica's, as the kept-up criteria judge them


def median_summary(summaries: list[dict[str, Any]] | list[RunSummary]) -> RunSummary:
    """The median of repeats for the figures a verdict uses (a failed repeat keeps the step failed)."""
    runs = [summary_of(s) for s in summaries]
    if len(runs) == 1:
        return runs[0]
    med = runs[len(runs) // 2].model_dump(by_alias=True, exclude_unset=True)
    for key in MEDIAN_FIGURES:
        if any(has(s, key) for s in runs):
            med[key] = median([getattr(s, key) for s in runs])
    med["latency_ms"] = {k: median([getattr(s.latency_ms, k) if s.latency_ms else None for s in runs])
                         for k in LATENCY_FIGURES}
    replicas = {r for s in runs for r in (s.catch_up_s or {})}
    med["catch_up_s"] = {r: (None if any((s.catch_up_s or {}).get(r) is None for s in runs)
                             else median([(s.catch_up_s or {})[r] for s in runs])) for r in replicas}
    lags: dict[str, Any] = {}
    for name in sorted({r for s in runs for r in (s.lag or {})}):
        mine = [lag for s in runs if (lag := (s.lag or {}).get(name)) is not None]
        lags[name] = {**mine[len(mine) // 2].model_dump(exclude_unset=True),
                      **{k: median([getattr(lag, k) for lag in mine]) for k in LAG_FIGURES}}
    if lags:
        med["lag"] = lags
    med["saturation"] = sorted({n for s in runs for n in (s.saturation or [])})
    med["client_errors"] = median([s.client_errors or 0 for s in runs])
    if any(s.status == STATUS_FAILED for s in runs):
        med["status"] = STATUS_FAILED
    return summary_of(med)


def describe_max(data: dict[str, Any] | SweepRecord) -> str:
    """The max sustainable rate of a sweep.json as a reader should take it: exact, a lower bound when no step
    failed (the ladder ended first), or an upper bound when no step passed."""
    sweep = sweep_of(data)
    steps = sweep.steps or []
    if not steps:
        return "–"
    best = sweep.max_sustainable_rate
    if best is None:
        return f"below {min(s.rate or 0 for s in steps)} rps (no step passed)"
    if all(s.passed for s in steps):
        return f"≥ {best} rps (no step failed: the ladder ended first)"
    return f"{best} rps"


def criteria_of(data: dict[str, Any] | SweepRecord) -> PassCriteria:
    """A sweep's pass criteria as it recorded them, the ones it predates at their defaults."""
    recorded = sweep_of(data).criteria or {}
    known = PassCriteria.__dataclass_fields__
    return PassCriteria(**{k: float(v) for k, v in recorded.items() if k in known})


def kept_up(summaries: list[dict[str, Any]] | list[RunSummary], criteria: PassCriteria,
            rate: int) -> tuple[bool, list[str]]:
    """Did the replicas keep up during a step (the median of its repeats)? Their lag did not grow, its p99 stayed
    within bound and they caught up in time: the kept-up criteria and catch-up alone, whatever the client saw."""
    reasons = [r for r in breaches(median_summary(summaries), criteria, rate,
                                   leave_out=tuple(c.name for c in CRITERIA
                                                   if c.name not in (*KEPT_UP, "max_catch_up")))]
    return not reasons, reasons


def kept_up_to(steps: list[tuple[int, list[RunSummary]]], criteria: PassCriteria) -> dict[str, Any]:
    """The highest rate of a sweep at which the replicas kept up (None: at no step), and the lowest rate above it
    where they did not, with why: what "the replicas keep up to" means, apart from the master's max."""
    judged = sorted((rate, *kept_up(runs, criteria, rate)) for rate, runs in steps if runs)
    best = max((rate for rate, ok, _ in judged if ok), default=None)
    above = next(((rate, why) for rate, ok, why in judged if not ok and (best is None or rate > best)), None)
    return {"rate": best, "all": bool(judged) and all(ok for _, ok, _ in judged),
            "first_behind": above[0] if above else None, "why": above[1] if above else []}
