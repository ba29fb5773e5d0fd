"""The statistics every reader of results shares (sweep, study, report, compare): percentiles, medians and ranges
of repeats, whether two sets of repeats are told apart, a bootstrap noise interval, and the verdict of a step
against a scenario's pass criteria. Pure functions over summary dicts: no I/O, no imports above config."""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Sequence
from typing import Any

BOOTSTRAP_ROUNDS = 2000
BOOTSTRAP_SEED = 7  # deterministic: the same data give the same interval
FINDING_MIN_FACTOR = 1.10  # a separated difference smaller than 10 % is real but not worth a headline


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100) of recorded values; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-q * len(ordered) // 100))))
    return ordered[rank - 1]


def histogram_percentile(counts: Sequence[int], bounds: Sequence[float], q: float) -> float | None:
    """The q-th percentile of a histogram as the upper bound of the bucket it falls in (counts has one more entry
    than bounds: the last bucket is open, reported as the last bound); None when the histogram is empty."""
    total = sum(counts)
    if total <= 0:
        return None
    rank = max(1, int(-(-q * total // 100)))
    seen = 0
    for index, count in enumerate(counts):
        seen += count
        if seen >= rank:
            return bounds[min(index, len(bounds) - 1)]
    return bounds[-1]


def present(values: Sequence[float | None]) -> list[float]:
    return [v for v in values if v is not None]


def median(values: Sequence[float | None]) -> float | None:
    got = present(values)
    return statistics.median(got) if got else None


def spread(values: Sequence[float | None]) -> dict[str, Any]:
    """median, min, max and n of the repeats that have the figure (all None when none has it)."""
    got = present(values)
    if not got:
        return {"median": None, "min": None, "max": None, "n": 0}
    return {"median": statistics.median(got), "min": min(got), "max": max(got), "n": len(got)}


def spread_text(values: Sequence[float | None], fmt: str = "{:.0f}", missing: str = "–") -> str:
    """The repeats as printed: median, with [min–max] when they differ; `missing` when none has the figure."""
    got = spread(values)
    if got["median"] is None:
        return missing
    if got["min"] == got["max"]:
        return fmt.format(got["median"])
    return f"{fmt.format(got['median'])} [{fmt.format(got['min'])}–{fmt.format(got['max'])}]"


def separated(a: Sequence[float | None], b: Sequence[float | None]) -> bool | None:
    """True when the repeats' ranges do not overlap (a difference beyond the noise seen), False when they do,
    None when either side has no value."""
    xa, xb = present(a), present(b)
    if not xa or not xb:
        return None
    return max(xa) < min(xb) or max(xb) < min(xa)


def ratio(value: float | None, base: float | None) -> float | None:
    if value is None or not base:
        return None
    return value / base


def bootstrap_interval(a: Sequence[float], b: Sequence[float], stat: Callable[[Sequence[float]], float] | None = None,
                       level: float = 0.95) -> tuple[float, float] | None:
    """Percentile-bootstrap interval of stat(b) - stat(a), resampling each side's samples (per-second values of a
    run, or repeats). None with fewer than two samples on a side: no noise can be estimated from one value."""
    if len(a) < 2 or len(b) < 2:
        return None
    stat = stat or statistics.fmean
    rng = random.Random(BOOTSTRAP_SEED)
    diffs = sorted(stat(rng.choices(b, k=len(b))) - stat(rng.choices(a, k=len(a))) for _ in range(BOOTSTRAP_ROUNDS))
    low = diffs[int((1 - level) / 2 * BOOTSTRAP_ROUNDS)]
    high = diffs[min(BOOTSTRAP_ROUNDS - 1, int((1 + level) / 2 * BOOTSTRAP_ROUNDS))]
    return low, high


def lookup(data: Any, path: Sequence[str]) -> Any:
    """data[path[0]][path[1]]..., or None where a level is missing."""
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


# ---- the verdict of a step ----------------------------------------------------------------------------------

def evaluate(summary: dict[str, Any], criteria: Any, rate: int) -> tuple[bool, list[str], list[str]]:
    """Verdict of one step from its (median) summary: passed?, the reasons it failed, and the notes that qualify a
    pass (PASS*: the host or the load generator was saturated, or the load generator itself failed requests).
    The server is judged on server-side outcomes; client-side errors are a load-generator limit."""
    reasons: list[str] = []
    if summary.get("status") == "FAILED":
        reasons.append("run failed (see its guards)")
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
    if any(s.get("status") == "FAILED" for s in summaries):
        med["status"] = "FAILED"
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
