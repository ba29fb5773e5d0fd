"""The statistics every reader of results shares (sweep, study, report, compare, the app's histogram, the cost
model): percentiles, medians and ranges of repeats, whether two sets of repeats are told apart, a bootstrap noise
interval, a mean's t interval and a new value's (prediction), the pooled run-to-run variance of repeats and a
bootstrap that resamples whole groups; and the one rule by which two sets of repeats are compared and worded
(`judgement`: docs/metrics.md, "Comparing two figures"), with Welch's test and Holm's correction it calls for. Pure
functions: no I/O; the one project import is core/config's thresholds."""

from __future__ import annotations

import math
import random
import statistics
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .config import COUNT_SPREAD, FINDING_ALPHA, FINDING_MIN_REPEATS

BOOTSTRAP_ROUNDS = 2000
BOOTSTRAP_SEED = 7  # deterministic: the same data give the same interval


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


def pooled_variance(groups: Sequence[Sequence[float]]) -> tuple[float, int] | None:
    """The pooled within-group variance of repeats, with its degrees of freedom: Σ_g Σ_i (x_gi − mean_g)² /
    Σ_g (n_g − 1) — how far one repeat strays from its own group's mean, whatever the groups' means are. A group of
    one value adds nothing; None when no group has two."""
    dof = sum(len(g) - 1 for g in groups if len(g) > 1)
    if dof <= 0:
        return None
    squares = 0.0
    for g in groups:
        if len(g) > 1:
            mean = statistics.fmean(g)
            squares += sum((x - mean) ** 2 for x in g)
    return squares / dof, dof


def mean_error(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """The standard error of the values' mean and the half-width of its two-sided Student t interval (n − 1
    degrees of freedom) at `confidence`; None with fewer than two values."""
    from scipy.stats import t  # imported where an interval is asked for, not by every command's start

    if len(values) < 2:
        return None
    se = statistics.stdev(values) / len(values) ** 0.5
    return se, float(t.ppf(0.5 + confidence / 2, len(values) - 1)) * se


def prediction_half_width(values: Sequence[float], confidence: float = 0.95) -> float | None:
    """The half-width of the two-sided Student t interval at `confidence` for one more value drawn as these were:
    t(n − 1) × their standard deviation × √(1 + 1/n) (a new value's own spread and their mean's); None with fewer
    than two values."""
    from scipy.stats import t

    if len(values) < 2:
        return None
    n = len(values)
    return float(t.ppf(0.5 + confidence / 2, n - 1)) * statistics.stdev(values) * math.sqrt(1 + 1 / n)


def group_bootstrap(n_groups: int, rounds: int, seed: int = BOOTSTRAP_SEED) -> list[list[int]]:
    """The groups each bootstrap round draws (n_groups of them, with replacement): a resample of whole groups
    (the repeats of one cell go together), so the spread it gives includes the groups' scatter, not only the
    repeats'. Deterministic for a seed."""
    rng = random.Random(seed)
    return [[rng.randrange(n_groups) for _ in range(n_groups)] for _ in range(rounds)] if n_groups > 0 else []


def net_resolution(idle_per_second: Sequence[float], seconds: float, z: float) -> float | None:
    """How far a total net of a background rate can be trusted: z standard errors of (total over `seconds`) -
    (the rate estimated from n per-second idle samples) × seconds, with the background varying second to second
    as it did in the idle window: z·σ·sqrt(seconds²/n + seconds). None with fewer than two samples."""
    import numpy as np

    if len(idle_per_second) < 2 or seconds <= 0:
        return None
    sigma = float(np.std(np.asarray(idle_per_second, dtype=float), ddof=1))
    return z * sigma * float(np.sqrt(seconds ** 2 / len(idle_per_second) + seconds))


def lookup(data: Any, path: Sequence[str]) -> Any:
    """data[path[0]][path[1]]..., or None where a level is missing."""
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


# --- comparing two sets of repeats: the one rule set (docs/metrics.md, "Comparing two figures") -------------------

COUNTED = "counts, compared exactly, no test"
COUNTS_OVERLAP = "counts whose ranges overlap, no test"


@dataclass(frozen=True)
class Judgement:
    """How a cell's repeats compare with its baseline's under the rule: `how` is "count" (compared exactly, never
    tested), "tested" (a measured quantity with FINDING_MIN_REPEATS a side, its test's corrected p given) or
    "untested" (a measured quantity with fewer repeats, or no test asked for); `text` is what every output prints."""

    how: str
    disjoint: bool | None  # the two sides' ranges do not overlap (None: a side has no figure)
    text: str


def repeats_text(a: Sequence[float | None], b: Sequence[float | None]) -> str:
    """'n = 2' (as many repeats on each side), 'n = 2 and 3' otherwise."""
    na, nb = len(present(a)), len(present(b))
    return f"n = {na}" if na == nb else f"n = {na} and {nb}"


def testable(a: Sequence[float | None], b: Sequence[float | None]) -> bool:
    """A measured quantity may be tested, and a finding stated, only with FINDING_MIN_REPEATS repeats on each side."""
    return min(len(present(a)), len(present(b))) >= FINDING_MIN_REPEATS


def count_differs(values: Sequence[float | None]) -> bool:
    """A count whose repeats span more than COUNT_SPREAD of their median: its range is shown, and why it can differ."""
    got = present(values)
    if len(got) < 2:
        return False
    mid = statistics.median(got)
    return (max(got) - min(got)) > COUNT_SPREAD * abs(mid) if mid else max(got) != min(got)


def judgement(a: Sequence[float | None], b: Sequence[float | None], count: str = "",
              test: tuple[float, bool] | None = None) -> Judgement:
    """The rule, for a cell's repeats `a` against its baseline's `b`:
    - a count (`count` is why its repeats can differ, non-empty for every count): compared exactly with its spread,
      never tested — COUNTED when the ranges are disjoint, COUNTS_OVERLAP when not; where a side's repeats differ
      (count_differs), why they can;
    - a measured quantity with its test's result (`test`: the corrected p-value and whether it holds, only ever
      computed with FINDING_MIN_REPEATS a side): 'p = 0.013', or 'not shown (p = 0.21)';
    - a measured quantity otherwise: 'disjoint ranges, n = 2, not tested' or 'not tested (n = 2)' — a test without
      power says nothing, so its "not shown" is never printed; 'one run a side, not tested' where neither side has
      two (a single value has no range)."""
    disjoint = separated(a, b)
    if count:
        said = COUNTED if disjoint else COUNTS_OVERLAP
        if count_differs(a) or count_differs(b):
            said += f"; the repeats differ: {count}"
        return Judgement("count", disjoint, said)
    if test is not None:
        p, holds = test
        return Judgement("tested", disjoint, f"p = {p:.3g}" if holds else f"not shown (p = {p:.3g})")
    n = repeats_text(a, b)
    if max(len([v for v in a if v is not None]), len([v for v in b if v is not None])) <= 1:
        return Judgement("untested", disjoint, "one run a side, not tested")  # one value has no range to be apart
    return Judgement("untested", disjoint, f"disjoint ranges, {n}, not tested" if disjoint else f"not tested ({n})")


def welch_log_p(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Welch's t-test on the logarithms of two sets of positive repeats (scipy.stats.ttest_ind, equal_var=False:
    costs are positive and their noise multiplicative, so a ratio is what is tested); None unless both sides have
    FINDING_MIN_REPEATS repeats (the rule: fewer are described, not tested) and either has some spread."""
    if not testable(a, b) or min(*a, *b) <= 0:
        return None
    from scipy import stats as scipy_stats  # heavy (0.8 s with statsmodels): imported when a test is run, not by
    #                                         every ./run.sh command that imports the report

    la, lb = [math.log(v) for v in a], [math.log(v) for v in b]
    if len(set(la)) == 1 and len(set(lb)) == 1:
        return None  # no spread on either side: nothing to test against
    with warnings.catch_warnings():  # nearly identical repeats: scipy warns, and the p-value says so itself
        warnings.simplefilter("ignore", RuntimeWarning)
        p = float(scipy_stats.ttest_ind(la, lb, equal_var=False).pvalue)
    return None if math.isnan(p) else p


def sign_test(below: int, above: int) -> float | None:
    """The two-sided sign test (scipy.stats.binomtest, p = 1/2): how likely a split of signs at least this uneven
    is were each sign as likely as the other, as for errors that are noise around zero; None without any sign."""
    if below + above == 0:
        return None
    from scipy.stats import binomtest  # heavy: see welch_log_p

    return float(binomtest(below, below + above, 0.5).pvalue)


def holm(p_values: Sequence[float], alpha: float = FINDING_ALPHA) -> list[tuple[bool, float]]:
    """Holm's step-down correction over a family of p-values (statsmodels' multipletests): per p, whether it holds
    at family-wise error `alpha`, and its corrected value."""
    if not p_values:
        return []
    from statsmodels.stats.multitest import multipletests  # heavy: see welch_log_p

    reject, corrected, _, _ = multipletests(list(p_values), alpha=alpha, method="holm")
    return [(bool(r), float(p)) for r, p in zip(reject, corrected)]


def below_floor(value: float | None, floor: float | None) -> bool:
    """A figure under what its measurement resolves (the lag's floor: docs/metrics.md, "Lag"): printed as
    floor_text, never as a value."""
    return value is not None and floor is not None and value < floor


def floor_text(floor: float) -> str:
    """How a figure under its floor prints: '< 10' (the caller adds the unit, as its column or sentence does)."""
    return f"< {floor:g}"
