"""Verdicts: a sweep step judged against its scenario's pass criteria (from the median of its repeats), a sweep's
max sustainable rate as a reader should take it, and the smallest separated difference worth a finding. Pure
functions over summary dicts."""

from __future__ import annotations

from typing import Any

from ..core.records import STATUS_FAILED
from ..core.stats import median

FINDING_MIN_FACTOR = 1.10  # a separated difference smaller than 10 % is real but not worth a headline


def breaches(summary: dict[str, Any], criteria: Any, rate: int) -> list[str]:
    """The scenario's pass criteria that a run (or a step's median of repeats) breaks: the one evaluator behind
    both a run's guards and a sweep step's verdict, so the two never disagree. Success is judged server-side
    (client-side errors are a load-generator limit); a replica that never caught up breaks the catch-up limit."""
    reasons: list[str] = []
    success = summary.get("server_success", summary.get("success"))
    if success is None or success < criteria.min_success:
        reasons.append(f"success {_pct(success)} < {criteria.min_success:.1%}")
    sent = summary.get("rate_sent", summary.get("rate_achieved")) or 0.0
    if sent < criteria.min_rate_ratio * rate:
        reasons.append(f"sent {sent:.1f}/s < {criteria.min_rate_ratio:.0%} of {rate}/s")
    p99 = (summary.get("latency_ms") or {}).get("p99")
    if p99 is None or p99 > criteria.max_p99 * 1000:
        reasons.append(f"p99 {p99} ms > {criteria.max_p99 * 1000:g} ms")
    catch = summary.get("catch_up_s") or {}
    if not catch or any(v is None or v > criteria.max_catch_up for v in catch.values()):
        reasons.append(f"replicas caught up {catch or 'never measured'} (limit {criteria.max_catch_up:g} s)")
    return reasons


def evaluate(summary: dict[str, Any], criteria: Any, rate: int) -> tuple[bool, list[str], list[str]]:
    """Verdict of one step from its (median) summary: passed?, the reasons it failed, and the notes that qualify a
    pass (PASS*: the host or the load generator was saturated, or the load generator itself failed requests)."""
    reasons = (["run failed (see its guards)"] if summary.get("status") == STATUS_FAILED else []) + \
        breaches(summary, criteria, rate)
    notes = list(summary.get("saturation") or [])
    if summary.get("client_errors"):
        notes.append(f"{summary['client_errors']:,} client-side errors (load generator limit)")
    return not reasons, reasons, notes


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2%}"


MEDIAN_FIGURES = ("success", "server_success", "rate_achieved", "rate_sent", "goodput")


def median_summary(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of repeats for the figures a verdict uses (a failed repeat keeps the step failed)."""
    if len(summaries) == 1:
        return summaries[0]
    med = dict(summaries[len(summaries) // 2])
    for key in MEDIAN_FIGURES:
        if any(key in s for s in summaries):
            med[key] = median([s.get(key) for s in summaries])
    med["latency_ms"] = {k: median([(s.get("latency_ms") or {}).get(k) for s in summaries])
                         for k in ("min", "mean", "p50", "p90", "p95", "p99", "max")}
    replicas = {r for s in summaries for r in (s.get("catch_up_s") or {})}
    med["catch_up_s"] = {r: (None if any((s.get("catch_up_s") or {}).get(r) is None for s in summaries)
                             else median([s["catch_up_s"][r] for s in summaries])) for r in replicas}
    med["saturation"] = sorted({n for s in summaries for n in (s.get("saturation") or [])})
    med["client_errors"] = median([s.get("client_errors") or 0 for s in summaries])
    if any(s.get("status") == STATUS_FAILED for s in summaries):
        med["status"] = STATUS_FAILED
    return med


def describe_max(data: dict[str, Any]) -> str:
    """The max sustainable rate of a sweep.json as a reader should take it: exact, a lower bound when no step
    failed (the ladder ended first), or an upper bound when no step passed."""
    steps = data.get("steps") or []
    if not steps:
        return "–"
    best = data.get("max_sustainable_rate")
    if best is None:
        return f"below {min(s['rate'] for s in steps)} rps (no step passed)"
    if all(s["passed"] for s in steps):
        return f"≥ {best} rps (no step failed: the ladder ended first)"
    return f"{best} rps"
