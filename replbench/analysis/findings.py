"""Findings that hold: a study states a difference only for the metrics its file declares primary, only between
two cells that differ in one setting (its baseline, the first cell or the first with its values of the file's
baseline_per, when the two differ in one; else each cell that differs from it in one setting, that setting at the
baseline's value), and only when it is large enough to matter (FINDING_MIN_FACTOR either way). How it holds depends
on the quantity:

- a count the server keeps (bytes per write, dump threads, spills) whose repeats (two or more) agree within
  COUNT_SPREAD is compared exactly: the ratio of the medians with their spread, no test (a t-test on a
  deterministic count says nothing a ratio does not);
- a net-of-idle figure against a baseline below its resolution: a lower bound (the figure over the resolution,
  "≥ 40×") when every repeat is above the resolution;
- anything else: Welch's t-test on the logarithms of the repeats (scipy.stats.ttest_ind, equal_var=False: costs
  are positive and their noise multiplicative, so a ratio is what is tested), over the whole study at once Holm's
  step-down correction (statsmodels' multipletests), family-wise error ALPHA. With fewer than two repeats on a side,
  or no spread on both, nothing is tested.
"""

from __future__ import annotations

import math
import statistics
import warnings
from typing import Any

from ..core.results import StudyCell, StudyRecord
from .studymetrics import BY_KEY, figure_text, fmt, row_of, setting_value, unresolved
from .verdicts import FINDING_MIN_FACTOR

ALPHA = 0.05  # the study's family-wise error rate, over all its tested comparisons
MAX_FINDINGS = 15  # the report's first page states at most this many, the largest effects first
COUNT_SPREAD = 0.005  # a count whose repeats span at most this share of their median is deterministic: not tested

TESTED, COUNT, BOUND = "Welch", "count", "lower bound"  # how a comparison is judged


def factors(a: StudyCell, b: StudyCell) -> list[str]:
    """The settings (and scenario) two recorded cells differ in."""
    keys = sorted({"scenario", *(a.changed or {}), *(b.changed or {})})
    return [k for k in keys if setting_value(a, k) != setting_value(b, k)]


def pairs(data: StudyRecord, cell: str, stored: str | None) -> list[str]:
    """The cells a cell is compared with: its stored baseline when the two differ in one setting (or when the study
    kept no cell records to tell); else each cell that differs from it in one setting, at the baseline's value."""
    if stored is None or stored == cell:
        return []
    cells = {c.name: c for c in data.cells or [] if c.name is not None}
    if cell not in cells or stored not in cells:
        return [stored]
    mine, base = cells[cell], cells[stored]
    if len(factors(mine, base)) == 1:
        return [stored]
    out = []
    for name, other in cells.items():
        differ = factors(mine, other)
        if name != cell and len(differ) == 1 and setting_value(other, differ[0]) == setting_value(base, differ[0]):
            out.append(name)
    return out


def _deterministic(values: list[float]) -> bool:
    """Repeats (two at least: one shows no spread) that agree within COUNT_SPREAD of their median."""
    if len(values) < 2:
        return False
    mid = statistics.median(values)
    return bool(mid) and (max(values) - min(values)) <= COUNT_SPREAD * abs(mid)


def comparisons(study: StudyRecord, primary: list[str]) -> list[dict[str, Any]]:
    """Every (group, primary metric, cell, the cell it is compared with), with its effect, how it is judged and,
    for a tested one, its raw p-value."""
    out = []
    for group, per_metric in (study.comparison or {}).items():
        for key in primary:
            rows = {cell: row_of(r) for cell, r in (per_metric.get(key) or {}).items()}
            first = next((c for c, r in rows.items() if r.verdict == "baseline"), None)
            for cell, row in rows.items():
                # studies from before baseline_per name no baseline per row (compare_cells writes a name, never
                # null): the first cell is every row's
                stored = row.baseline if row.baseline is not None else first
                for base_name in pairs(study, cell, stored):
                    base = rows.get(base_name)
                    if base is None or unresolved(row, key) is not None:
                        continue  # no finding from a cell that cannot be told from zero
                    a = [v for v in row.values or [] if v is not None and v > 0]
                    b = [v for v in base.values or [] if v is not None and v > 0]
                    if not a:
                        continue
                    found = {"group": group, "metric": key, "cell": cell, "baseline": base_name,
                             "n": (len(a), len(b)), "text": (figure_text(row, key), figure_text(base, key))}
                    bound = unresolved(base, key)
                    if bound is not None:
                        if min(a) > bound[1]:
                            out.append({**found, "kind": BOUND, "factor": round(statistics.median(a) / bound[1], 4),
                                        "p": None})
                        continue
                    if not b:
                        continue
                    factor = round(statistics.median(a) / statistics.median(b), 4)
                    if BY_KEY[key].count and _deterministic(a) and _deterministic(b):
                        out.append({**found, "kind": COUNT, "factor": factor, "p": None})
                    else:
                        out.append({**found, "kind": TESTED, "factor": factor, "p": _p_value(a, b)})
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


def study_findings(data: StudyRecord, primary: list[str]) -> list[dict[str, Any]]:
    """The comparisons that hold and are at least a 10 % effect: the tested ones after Holm's correction over the
    study's tested comparisons (with the corrected p-value and how many were tested), the counts compared exactly
    and the lower bounds as they are. Largest effect first."""
    everything = comparisons(data, primary)
    tested = [c for c in everything if c["kind"] == TESTED and c["p"] is not None]
    held: list[dict[str, Any]] = []
    if tested:
        from statsmodels.stats.multitest import multipletests  # heavy: see _p_value

        reject, corrected, _, _ = multipletests([c["p"] for c in tested], alpha=ALPHA, method="holm")
        held = [{**c, "p_holm": float(p), "comparisons": len(tested)} for c, holds, p in zip(tested, reject, corrected)
                if holds]
    held += [c for c in everything if c["kind"] in (COUNT, BOUND)]
    found = []
    for c in held:
        effect = max(c["factor"], 1 / c["factor"]) if c["factor"] else 0.0
        if effect >= FINDING_MIN_FACTOR:
            found.append({**c, "effect": round(effect, 3)})
    return sorted(found, key=lambda f: -f["effect"])


def nothing_held(data: StudyRecord, primary: list[str]) -> str:
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


def _how(finding: dict[str, Any]) -> str:
    """How a finding holds, in its own words: the counts with their spread, the lower bound, or the test."""
    a, b = finding["text"]
    if finding["kind"] == COUNT:
        return f"{a} against {b}: counts, compared exactly, no test"
    if finding["kind"] == BOUND:
        return f"{a} against {b}: a lower bound"
    return f"p = {finding['p_holm']:.3g}"


def _factor(finding: dict[str, Any]) -> str:
    return ("≥ " if finding["kind"] == BOUND else "") + f"{fmt(finding['factor'])}×"


def brief(finding: dict[str, Any]) -> str:
    """A finding inside its study's own section, where the study and the test are said once for all of them."""
    return (f"{BY_KEY[finding['metric']].label} of `{finding['cell']}` {_factor(finding)} "
            f"`{finding['baseline']}`'s on `{finding['group']}` ({_how(finding)})")


def sentence(study: str, finding: dict[str, Any]) -> str:
    metric = BY_KEY[finding["metric"]]
    more = finding["factor"] > 1
    if finding["kind"] == TESTED:
        how = (f"{'more' if more else 'less'}; p = {finding['p_holm']:.3g}, Holm over {finding['comparisons']} "
               f"tested comparisons, {finding['n'][0]} and {finding['n'][1]} repeats")
    else:
        how = f"{'more' if more else 'less'}; {_how(finding)}"
    return (f"`{study}` on `{finding['group']}`: {metric.label} of `{finding['cell']}` is {_factor(finding)} "
            f"`{finding['baseline']}`'s ({how})")
