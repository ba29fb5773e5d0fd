"""Findings that hold: a study states a difference only for the metrics its file declares primary, each
non-baseline cell against its baseline (the first cell, or the first with its values of the file's baseline_per),
when it survives the number of comparisons the study makes and is large enough to matter. Everything else stays in
the tables, without a verdict.

Per comparison: Welch's t-test on the logarithms of the repeats (scipy.stats.ttest_ind, equal_var=False: costs
are positive and their noise multiplicative, so a ratio is what is tested); over the whole study at once: Holm's
step-down correction (statsmodels' multipletests), family-wise error ALPHA; and an effect of at least
FINDING_MIN_FACTOR either way. With fewer than two repeats on a side, or no spread on both, nothing is tested; nor
is a cell whose net-of-idle figure is below its resolution (a ratio to a figure that cannot be told from zero).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from ..core.results import StudyRecord, has, study_of
from ..core.stats import median
from .studymetrics import BY_KEY, below_resolution, fmt, row_of
from .verdicts import FINDING_MIN_FACTOR

ALPHA = 0.05  # the study's family-wise error rate, over all its comparisons
MAX_FINDINGS = 15  # the report's first page states at most this many, the largest effects first


def comparisons(data: dict[str, Any] | StudyRecord, primary: list[str]) -> list[dict[str, Any]]:
    """Every (group, primary metric, cell) against the baseline, with its effect and raw p-value."""
    out = []
    for group, per_metric in (study_of(data).comparison or {}).items():
        for key in primary:
            rows = {cell: row_of(r) for cell, r in (per_metric.get(key) or {}).items()}
            first = next((c for c, r in rows.items() if r.verdict == "baseline"), None)
            for cell, row in rows.items():
                # studies from before baseline_per name no baseline per row: the first cell is every row's
                base_name = row.baseline if has(row, "baseline") else first
                base = rows.get(base_name) if base_name is not None else None
                if base is None or row is base or below_resolution(base) or below_resolution(row):
                    continue
                a = [v for v in row.values or [] if v is not None and v > 0]
                b = [v for v in base.values or [] if v is not None and v > 0]
                if not a or not b:
                    continue
                factor = median(a) / median(b)  # type: ignore[operator]
                out.append({"group": group, "metric": key, "cell": cell, "baseline": base_name,
                            "factor": round(factor, 4), "p": _p_value(a, b), "n": (len(a), len(b))})
    return out


def _p_value(a: list[float], b: list[float]) -> float | None:
    if len(a) < 2 or len(b) < 2:
        return None
    from scipy import stats as scipy_stats  # heavy (0.8 s with statsmodels): imported when findings are computed,
    #                                         not by every ./run.sh command that imports the report

    la, lb = [math.log(v) for v in a], [math.log(v) for v in b]
    if len(set(la)) == 1 and len(set(lb)) == 1:
        return None  # no spread on either side: nothing to test against
    with warnings.catch_warnings():  # nearly identical repeats: scipy warns, and the p-value says so itself
        warnings.simplefilter("ignore", RuntimeWarning)
        p = float(scipy_stats.ttest_ind(la, lb, equal_var=False).pvalue)
    return None if math.isnan(p) else p


def study_findings(data: dict[str, Any] | StudyRecord, primary: list[str]) -> list[dict[str, Any]]:
    """The comparisons that hold after Holm's correction over the whole study and are at least a 10 % effect,
    each with its corrected p-value and the number of comparisons it was corrected for."""
    from statsmodels.stats.multitest import multipletests  # heavy: see _p_value

    tested = [c for c in comparisons(data, primary) if c["p"] is not None]
    if not tested:
        return []
    reject, corrected, _, _ = multipletests([c["p"] for c in tested], alpha=ALPHA, method="holm")
    found = []
    for c, holds, p in zip(tested, reject, corrected):
        effect = max(c["factor"], 1 / c["factor"])
        if holds and effect >= FINDING_MIN_FACTOR:
            found.append({**c, "p_holm": float(p), "comparisons": len(tested), "effect": round(effect, 3)})
    return sorted(found, key=lambda f: -f["effect"])


def nothing_held(data: dict[str, Any] | StudyRecord, primary: list[str]) -> str:
    """What the report says when no comparison holds: how many were tested and, with two repeats on a side, that
    Welch's test then has one to two degrees of freedom, so "none holds" is not "no difference"."""
    tested = [c for c in comparisons(data, primary) if c["p"] is not None]
    if not tested:
        return "none tested (fewer than two repeats on a side, or no spread)"
    fewest = min(min(c["n"]) for c in tested)
    return (f"none holds over the study's {len(tested)} comparisons"
            + (f" — with {fewest} repeats on a side Welch's test has one to two degrees of freedom, so a difference "
               f"survives the correction only with almost no spread: this says too few repeats, not no difference "
               f"(`--repeat 5` tests it)" if fewest < 3 else ""))


def brief(finding: dict[str, Any]) -> str:
    """A finding inside its study's own section, where the study and the test are said once for all of them."""
    return (f"{BY_KEY[finding['metric']].label} of `{finding['cell']}` {fmt(finding['factor'])}× "
            f"`{finding['baseline']}`'s on `{finding['group']}` (p = {finding['p_holm']:.3g})")


def sentence(study: str, finding: dict[str, Any]) -> str:
    metric = BY_KEY[finding["metric"]]
    more = finding["factor"] > 1
    return (f"`{study}` on `{finding['group']}`: {metric.label} of `{finding['cell']}` is {fmt(finding['factor'])}× "
            f"`{finding['baseline']}`'s ({'more' if more else 'less'}; Welch on log values, Holm-corrected "
            f"p = {finding['p_holm']:.3g} over the study's {finding['comparisons']} comparisons, "
            f"{finding['n'][0]} and {finding['n'][1]} repeats)")
