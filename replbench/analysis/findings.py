"""Findings that hold: a study states a difference only for the metrics its file declares primary, only between
two cells that differ in one setting (its baseline, the first cell or the first with its values of the file's
baseline_per, when the two differ in one; else each cell that differs from it in one setting, that setting at the
baseline's value), and only when it is large enough to matter (FINDING_MIN_FACTOR either way). How each comparison
is judged and worded is the one rule set, core/stats.judgement (docs/metrics.md, "Comparing two figures"):

- a count (studymetrics.Metric.count: bytes, rows, pages, syncs, threads) is compared exactly with its spread and
  never tested: it holds when the two sides' ranges are disjoint; a side whose repeats differ says why they can;
- a net-of-idle figure, or a lag, against a baseline below its resolution or floor: a lower bound (the figure over
  the resolution, "≥ 40×") when every repeat is above it, a finding only from FINDING_MIN_REPEATS repeats a side
  (a measured quantity: with fewer, "a lower bound, n = 2, not tested");
- a measured quantity with FINDING_MIN_REPEATS repeats on each side: Welch's t-test on the logarithms of the repeats
  (core/stats.welch_log_p), over the whole study at once Holm's step-down correction, family-wise error
  FINDING_ALPHA;
- a measured quantity with fewer repeats: not tested, and no finding; its effect is described ("disjoint ranges,
  n = 2, not tested" or "not tested (n = 2)"), never called "not shown".
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from ..core.config import FINDING_MIN_FACTOR, FINDING_MIN_REPEATS
from ..core.results import ComparisonRow, StudyCell, StudyRecord
from ..core.stats import holm, judgement, present, testable, welch_log_p
from .studymetrics import BY_KEY, FLOOR, figure_text, fmt, setting_value, unresolved

MAX_FINDINGS = 15  # the report's first page states at most this many, the largest effects first
MAX_UNTESTED_SAID = 1  # a study's section names at most this many untested effects with disjoint ranges

# how a comparison is judged (core/stats.judgement's `how`, and the lower bound)
TESTED, COUNT, BOUND, UNTESTED = "Welch", "count", "lower bound", "untested"


@dataclass(frozen=True)
class Compared:
    """One cell against a cell it differs from in one setting, on one primary metric (comparisons'): how it is
    judged (`kind`), the factor (its median over the other's), the repeats it is judged on (`a`, `b`: every repeat's,
    zeros included) and, for a tested one, its raw p-value; and once judged (judged's), its effect (the factor either
    way), the rule's words, whether it holds, and for a tested one the Holm-corrected p-value and how many were
    tested."""

    group: str
    metric: str
    cell: str
    baseline: str
    kind: str  # TESTED, COUNT, BOUND or UNTESTED
    factor: float
    p: float | None
    a: list[float]
    b: list[float]
    text: tuple[str, str]  # both sides' figures as the report prints them
    effect: float = 0.0
    holds: bool = False
    words: str = ""
    p_holm: float | None = None
    comparisons: int | None = None

    @property
    def n(self) -> tuple[int, int]:
        """The repeats on each side."""
        return len(self.a), len(self.b)


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


def _compared(key: str, row: ComparisonRow, base: ComparisonRow) -> tuple[str, float, float | None, list[float],
                                                                           list[float]] | None:
    """One comparison of a cell's row with its baseline's, before the study-wide correction: its kind, factor, the
    values it was judged on (every repeat's, zeros included) and, for a tested one, its raw p-value (on the
    positive repeats: the test is on their logarithms); None where nothing can be said (a cell that cannot be told
    from zero or its floor, or no figure)."""
    metric = BY_KEY[key]
    if unresolved(row, key) is not None:
        return None  # no finding from a cell that cannot be told from zero (or from its floor)
    a, b = present(row.values or []), present(base.values or [])
    if not a:
        return None
    bound = unresolved(base, key)
    if bound is not None:
        if min(a) <= bound[1]:
            return None
        return BOUND, round(statistics.median(a) / bound[1], 4), None, a, b
    if not b or not statistics.median(b):
        return None
    factor = round(statistics.median(a) / statistics.median(b), 4)
    if metric.count:
        return COUNT, factor, None, a, b
    p = welch_log_p([v for v in a if v > 0], [v for v in b if v > 0]) if testable(a, b) else None
    return TESTED if p is not None else UNTESTED, factor, p, a, b


def comparisons(study: StudyRecord, primary: list[str]) -> list[Compared]:
    """Every (group, primary metric, cell, the cell it is compared with), with its effect, how it is judged and,
    for a tested one, its raw p-value."""
    out = []
    for group, per_metric in (study.comparison or {}).items():
        for key in primary:
            rows = per_metric.get(key) or {}
            first = next((c for c, r in rows.items() if r.verdict == "baseline"), None)
            for cell, row in rows.items():
                # studies from before baseline_per name no baseline per row (compare_cells writes a name, never
                # null): the first cell is every row's
                stored = row.baseline if row.baseline is not None else first
                for base_name in pairs(study, cell, stored):
                    base = rows.get(base_name)
                    found = _compared(key, row, base) if base is not None else None
                    if found is None:
                        continue
                    assert base is not None
                    kind, factor, p, a, b = found
                    out.append(Compared(group=group, metric=key, cell=cell, baseline=base_name, kind=kind,
                                        factor=factor, p=p, a=a, b=b,
                                        text=(figure_text(row, key), figure_text(base, key))))
    return out


def judged(study: StudyRecord, primary: list[str]) -> list[Compared]:
    """Every comparison of comparisons() judged by the rule: the tested ones after Holm's correction over the study's
    tested comparisons (`p_holm`, `comparisons`), each with `words` (core/stats.judgement's, or "a lower bound"),
    `effect` (the factor either way) and `holds` (a finding: it holds by its kind's rule and is at least a 10 %
    effect)."""
    everything = comparisons(study, primary)
    tested = [c for c in everything if c.kind == TESTED]
    corrected = dict(zip((id(c) for c in tested), holm([c.p for c in tested if c.p is not None])))
    out = []
    for c in everything:
        effect = round(max(c.factor, 1 / c.factor), 3) if c.factor else 0.0
        big = effect >= FINDING_MIN_FACTOR
        if c.kind == BOUND:  # a lag or CPU figure: measured, so a finding only from FINDING_MIN_REPEATS a side
            enough = min(c.n) >= FINDING_MIN_REPEATS
            out.append(replace(c, effect=effect, holds=big and enough,
                               words=BOUND if enough else f"a {BOUND}, n = {min(c.n)}, not tested"))
            continue
        if c.kind == TESTED:
            rejected, p_holm = corrected[id(c)]
            said = judgement(c.a, c.b, test=(p_holm, rejected))
            out.append(replace(c, effect=effect, holds=rejected and big, words=said.text, p_holm=p_holm,
                               comparisons=len(tested)))
            continue
        said = judgement(c.a, c.b, count=BY_KEY[c.metric].count)
        out.append(replace(c, effect=effect, holds=bool(said.disjoint) and big and c.kind == COUNT, words=said.text))
    return out


def study_findings(data: StudyRecord, primary: list[str]) -> list[Compared]:
    """The comparisons that hold and are at least a 10 % effect: the tested ones after Holm's correction over the
    study's tested comparisons (with the corrected p-value and how many were tested), the counts whose ranges are
    disjoint and the lower bounds. Largest effect first."""
    return sorted((c for c in judged(data, primary) if c.holds), key=lambda f: -f.effect)


def untested_effects(data: StudyRecord, primary: list[str]) -> list[Compared]:
    """The measured comparisons left untested (fewer than FINDING_MIN_REPEATS repeats a side) whose ranges are
    disjoint and whose effect is at least 10 %: no finding, but not nothing either. Largest first."""
    return sorted((c for c in judged(data, primary) if c.effect >= FINDING_MIN_FACTOR and (
        (c.kind == UNTESTED and c.words.startswith("disjoint")) or (c.kind == BOUND and not c.holds))),
        key=lambda f: -f.effect)


def nothing_held(data: StudyRecord, primary: list[str]) -> str:
    """What the report says when no comparison holds: how many were tested, and how many had too few repeats to
    be (a test without power says nothing, so "none holds" is never said of them)."""
    every = judged(data, primary)
    if not every:
        return "none compared (no cell against a baseline that differs from it in one setting)"
    tested = sum(c.kind == TESTED for c in every)
    untested = sum(c.kind == UNTESTED for c in every)
    said = [f"none holds over the study's {tested} tested comparisons" if tested else "none stated"]
    if untested:
        fewest = min(min(c.n) for c in every if c.kind == UNTESTED)
        said.append(f"{untested} not tested: {fewest} repeat{'' if fewest == 1 else 's'} on a side, where a finding "
                    f"needs {FINDING_MIN_REPEATS} (`--repeat {FINDING_MIN_REPEATS}` tests them)")
    return "; ".join(said)


def untested_text(data: StudyRecord, primary: list[str]) -> str:
    """The untested effects with disjoint ranges, as a study's section names them (the largest few): '' for none."""
    effects = untested_effects(data, primary)
    if not effects:
        return ""
    more = len(effects) - MAX_UNTESTED_SAID
    return "; ".join(f"{BY_KEY[c.metric].label} of `{c.cell}` {fmt(c.factor)}× `{c.baseline}`'s on "
                     f"`{c.group}` ({c.text[0]} against {c.text[1]}: {c.words})"
                     for c in effects[:MAX_UNTESTED_SAID]) + (f"; {more} more in its study.md" if more > 0 else "")


def _how(finding: Compared) -> str:
    """How a finding holds, in its own words: the counts with their spread, the lower bound, or the test."""
    a, b = finding.text
    if finding.kind in (COUNT, BOUND):
        return f"{a} against {b}: {finding.words}"
    return finding.words


def _factor(finding: Compared) -> str:
    return ("≥ " if finding.kind == BOUND else "") + f"{fmt(finding.factor)}×"


def brief(finding: Compared) -> str:
    """A finding inside its study's own section, where the study and the test are said once for all of them."""
    return (f"{BY_KEY[finding.metric].label} of `{finding.cell}` {_factor(finding)} "
            f"`{finding.baseline}`'s on `{finding.group}` ({_how(finding)})")


def headline(finding: Compared) -> str:
    """A finding (or an untested effect) as a study's one line in report.md words it, its figures on the study's
    page: what differs, by how much, and how the rule judged it."""
    how = {COUNT: "counts, compared exactly", BOUND: "a lower bound" if finding.holds else finding.words}.get(
        finding.kind) or (
        f"p = {finding.p_holm:.3g}, Holm" if finding.kind == TESTED else finding.words)
    return (f"{BY_KEY[finding.metric].label} of `{finding.cell}` {_factor(finding)} `{finding.baseline}`'s "
            f"on `{finding.group}` ({how})")


def sentence(study: str, finding: Compared) -> str:
    metric = BY_KEY[finding.metric]
    more = finding.factor > 1
    if finding.kind == TESTED:
        how = (f"{'more' if more else 'less'}; p = {finding.p_holm:.3g}, Holm over {finding.comparisons} "
               f"tested comparisons, {finding.n[0]} and {finding.n[1]} repeats")
    else:
        how = f"{'more' if more else 'less'}; {_how(finding)}"
    return (f"`{study}` on `{finding.group}`: {metric.label} of `{finding.cell}` is {_factor(finding)} "
            f"`{finding.baseline}`'s ({how})")


def words_of(every: list[Compared], study: StudyRecord, group: str, key: str, cell: str,
             baseline: str) -> tuple[bool, str]:
    """(holds, words) for one comparison as the rule judges it: the study's own judgement (judged(), passed as
    `every`) where the metric is primary and the pair one it compares; else the rule's words without a test
    (core/stats.judgement: a comparison outside the study's tested family is described, never tested), or
    "not compared" where a side has no row."""
    which = (group, key, cell, baseline)
    hit = next((c for c in every if (c.group, c.metric, c.cell, c.baseline) == which), None)
    if hit is not None:
        return hit.holds, hit.words
    rows = ((study.comparison or {}).get(group) or {}).get(key) or {}
    a, b = rows.get(cell), rows.get(baseline)
    if not a or not b:
        return False, "not compared"
    bounds = [bound for r in (a, b) if (bound := unresolved(r, key)) is not None]
    if bounds:  # a figure that is not a value is compared with nothing
        return False, "not compared: " + ("under its floor" if bounds[0][0] == FLOOR else "below its resolution")
    return False, judgement(a.values or [], b.values or [], count=BY_KEY[key].count).text
