"""Every committed verdict the one evaluator (replbench/analysis/rules.py) judges otherwise than it was recorded:
runs (their criteria guards, the status those would give, above the knee), sweep steps (`passed`) and study units
(`metrics.passed`), then the counts. It reads only the committed results files (results/readme-assets and
results/report-assets, the folders .gitignore lets into git), through core/results' codec: a file the codec
refuses is a finding too. Paths are printed relative to the repository's root. Run from the repository's root with
.venv's python."""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

ROOT = Path(__file__).resolve().parents[3]  # results/readme-assets/<this folder>/verdicts.py -> the repository
sys.path.insert(0, str(ROOT))
from replbench.analysis import rules, studymetrics, summary, verdicts  # noqa: E402
from replbench.core import results  # noqa: E402
from replbench.core.records import STATUS_OK, STATUS_WARNING  # noqa: E402
from replbench.core.results import Record, RunSummary  # noqa: E402
from replbench.core.scenario import PassCriteria  # noqa: E402

COMMITTED = ("results/readme-assets", "results/report-assets")  # results/* is ignored but for these (.gitignore)
DEFAULTS = PassCriteria()
# a recorded guard's text (after CRITERIA_GUARD) names its rule: the first of these it holds, in this order
GUARD_RULES = (("lag p99", "max_lag_p99"), ("lag grew", "max_lag_growth"), ("caught up", "max_catch_up"),
               ("p99", "max_p99"), ("success", "min_success"), ("sent ", "min_rate_ratio"),
               ("goodput ", "min_rate_ratio"))
COUNTS = ("runs", "runs judged by criteria guards", "runs with a legacy criteria guard (no prefix)",
          "runs: criteria guards differ", "runs: criteria guards differ by min_rate_ratio alone",
          "runs: ok -> ok-with-warnings",
          "runs: ok-with-warnings -> ok", "runs: above the knee differs",
          "runs: above the knee differs, no above_knee key recorded", "sweep steps", "sweep steps: checked",
          "sweep steps: passed differs", "sweep steps: not checkable", "sweep steps: no rate or passed recorded",
          "study units with metrics.passed", "study units: checked", "study units: passed differs",
          "study units: not checkable (only the metrics committed)",
          "study units: not checkable, but passed and the metrics alone break a criterion")
# the two criteria guards runs wrote before the guards had their CRITERIA_GUARD prefix (before commit eca55e2, in
# run.py's _guards): the rate sent and the client's success, against MIN_RATE_RATIO and MIN_SUCCESS, the limits
# PassCriteria's defaults still are: (how the text starts, words it holds, the rule)
LEGACY_GUARDS = (("sent rate ", "of the asked", "min_rate_ratio"), ("only ", "of requests succeeded", "min_success"))
RUN_LEAVES_OUT = ("max_catch_up",)  # a run says its replicas' catch-up in its own guard (judge._catch_up_guards)


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


# the verdicts the old judges recorded: every folder a result sits under is stamped with its start (YYYYMMDD-HHMMSS
# or YYYYMMDD in an asset folder's name); a result recorded from this day on was judged by the one evaluator, and is
# not re-judged here, so this text stays what it was when new results are committed
STAMP = re.compile(r"(?<!\d)(20\d{6})(?!\d)")
ONE_EVALUATOR_DAY = "20261202"


def before_the_one_evaluator(path: Path) -> bool:
    stamps = STAMP.findall(rel(path))
    return not stamps or max(stamps) < ONE_EVALUATOR_DAY


def committed(name: str) -> Iterator[Path]:
    """The committed files of that name (or ending so) recorded before the one evaluator, sorted."""
    for top in COMMITTED:
        yield from sorted(p for p in (ROOT / top).rglob(f"*{name}") if p.is_file() and before_the_one_evaluator(p))


@dataclass
class Findings:
    refused: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    summaries: dict[Path, RunSummary | None] = field(default_factory=dict)

    def refuse(self, path: Path, exc: Exception) -> None:
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            why = f"{exc.error_count()} error(s), first: {'.'.join(map(str, first['loc']))}: {first['msg']}"
        else:
            why = str(exc).replace(f"{ROOT}/", "").splitlines()[0]
        self.refused.append(f"{rel(path)}: {type(exc).__name__}: {why}")

    def summary(self, path: Path) -> RunSummary | None:
        """The committed summary at path, through the codec (None: refused; said once)."""
        if path not in self.summaries:
            try:
                self.summaries[path] = results.summary_of(results.load(path))
            except (OSError, ValueError) as exc:
                self.refuse(path, exc)
                self.summaries[path] = None
        return self.summaries[path]


def say(lines: list[str]) -> None:
    print("\n".join(lines) if lines else "(none)")


def legacy_rule(text: str) -> str | None:
    return next((rule for start, words, rule in LEGACY_GUARDS if text.startswith(start) and words in text), None)


def is_criteria_guard(text: str) -> bool:
    return text.startswith(rules.CRITERIA_GUARD) or legacy_rule(text) is not None


def guard_rule(text: str) -> str | None:
    """The rule a recorded criteria guard names (None: none found in its text)."""
    if not text.startswith(rules.CRITERIA_GUARD):
        return legacy_rule(text)
    body = text[len(rules.CRITERIA_GUARD):]
    return next((rule for words, rule in GUARD_RULES if words in body), None)


def names(rule_names: set[str]) -> str:
    return "{" + ", ".join(sorted(rule_names, key=rules.CRITERIA.index)) + "}"


def runs(found: Findings) -> None:
    guards_out: list[str] = []
    status_out: list[str] = []
    knee_out: list[str] = []
    for path in committed("summary.json"):
        s = found.summary(path)
        found.counts["runs"] += 1
        if s is None:
            continue
        # (a) the criteria guards, where the run judged them (a summary with rate_sent, as judge._criteria_guards)
        if "rate_sent" in s.model_fields_set and s.rate is not None:
            found.counts["runs judged by criteria guards"] += 1
            recorded: set[str] = set()
            found.counts["runs with a legacy criteria guard (no prefix)"] += any(map(legacy_rule, s.guards or []))
            for text in s.guards or []:
                if is_criteria_guard(text):
                    rule = guard_rule(text)
                    if rule is None:
                        guards_out.append(f"{rel(path)}: a criteria guard no rule is found in: {text!r}")
                    elif rule not in RUN_LEAVES_OUT:
                        recorded.add(rule)
            now = rules.judge(s, DEFAULTS, s.rate, leave_out=RUN_LEAVES_OUT)
            tripped = {t.rule for t in now.tripped}
            if tripped != recorded:
                found.counts["runs: criteria guards differ"] += 1
                found.counts["runs: criteria guards differ by min_rate_ratio alone"] += (
                    tripped ^ recorded == {"min_rate_ratio"})
                added = [t.text for t in now.tripped if t.rule not in recorded]
                found.counts.update(f"runs: criteria guards now add {t.rule}" for t in now.tripped
                                    if t.rule not in recorded)
                found.counts.update(f"runs: criteria guards now drop {rule}" for rule in recorded - tripped)
                gone = sorted(recorded - tripped, key=rules.CRITERIA.index)
                guards_out.append(f"{rel(path)} [{s.status}]: recorded {names(recorded)}, now {names(tripped)}"
                                  + (f"; now trips: {'; '.join(added)}" if added else "")
                                  + (f"; no longer: {', '.join(gone)}" if gone else ""))
            # (b) the status the run's guards would give it now
            others = [g for g in s.guards or []
                      if not is_criteria_guard(g) or guard_rule(g) in RUN_LEAVES_OUT]
            if s.status == STATUS_OK and tripped:
                found.counts["runs: ok -> ok-with-warnings"] += 1
                status_out.append(f"{rel(path)}: ok -> ok-with-warnings ({names(tripped)})")
            elif s.status == STATUS_WARNING and not tripped and not others and recorded:
                found.counts["runs: ok-with-warnings -> ok"] += 1
                status_out.append(f"{rel(path)}: ok-with-warnings -> ok (recorded {names(recorded)})")
        # (c) above the knee
        was = s.above_knee is not None
        knee = summary.above_knee(s, DEFAULTS)
        if was != (knee is not None):
            found.counts["runs: above the knee differs"] += 1
            if "above_knee" not in s.model_fields_set:
                found.counts["runs: above the knee differs, no above_knee key recorded"] += 1
            recorded_as = "above" if was else ("not above" if "above_knee" in s.model_fields_set
                                               else "not above (no above_knee key: recorded before it existed)")
            figures = (f"goodput {knee.served}/s of {knee.asked}/s, success {s.success}, server success "
                       f"{s.server_success}" if knee else f"goodput {s.goodput}/s of {s.rate}/s, success "
                       f"{s.success}, server success {s.server_success}")
            knee_out.append(f"{rel(path)}: recorded {recorded_as}, now {'above' if knee else 'not above'} "
                            f"({figures})")
    print(f"== runs: criteria guards recorded vs rules.judge(s, PassCriteria(), s.rate, leave_out={RUN_LEAVES_OUT})"
          f" ({found.counts['runs judged by criteria guards']} summaries with rate_sent of {found.counts['runs']})")
    say(guards_out)
    print("\n== runs: the status their guards would give now")
    say(status_out)
    print("\n== runs: above the knee, recorded vs summary.above_knee(s, PassCriteria()) (every summary)")
    say(knee_out)


def step_summaries(found: Findings, folder: Path, step: results.SweepStep) -> list[RunSummary] | None:
    """A step's runs' committed summaries (None: one is not committed, or the codec refuses it)."""
    got = []
    for name in step.folders or []:
        path = next((p for p in (folder / name / "summary.json", folder / f"{name}-summary.json") if p.is_file()),
                    None)
        s = found.summary(path) if path else None
        if s is None:
            return None
        got.append(s)
    return got or None


R = TypeVar("R", bound=Record)


def readable(name: str, read: Callable[[Path], R], found: Findings) -> Iterator[tuple[Path, R]]:
    """Each committed file of that name as its record, read from its folder; one the codec refuses is a finding."""
    for path in committed(name):
        try:
            yield path, read(path.parent)
        except (OSError, ValueError) as exc:
            found.refuse(path, exc)


def sweeps(found: Findings) -> None:
    out: list[str] = []
    unchecked: dict[str, list[int]] = defaultdict(list)
    for path, sweep in readable("sweep.json", results.read_sweep, found):
        criteria = verdicts.criteria_of(sweep)
        best_now: list[int] = []
        flipped = False
        for step in sweep.steps or []:
            found.counts["sweep steps"] += 1
            if step.rate is None or step.passed is None:
                found.counts["sweep steps: no rate or passed recorded"] += 1
                continue
            got = step_summaries(found, path.parent, step)
            if got is None:
                found.counts["sweep steps: not checkable"] += 1
                unchecked[rel(path)].append(step.rate)
                if step.passed:
                    best_now.append(step.rate)
                continue
            found.counts["sweep steps: checked"] += 1
            now = verdicts.step_verdict(got, criteria, step.rate)
            if now.passed:
                best_now.append(step.rate)
            if now.passed != step.passed:
                flipped = True
                found.counts["sweep steps: passed differs"] += 1
                said = "PASS" if now.passed else f"FAIL ({'; '.join(now.reasons)})"
                predates = [t.rule for t in now.tripped if t.rule not in (sweep.criteria or {})]
                if predates:
                    said += f" [criteria the sweep.json did not record: {', '.join(predates)}]"
                out.append(f"{rel(path)} step {step.rate}/s ({len(got)} run(s)): recorded "
                           f"{'PASS' if step.passed else 'FAIL (' + '; '.join(step.reasons or []) + ')'}, "
                           f"now {said}")
        if flipped:
            now_max = max(best_now, default=None)
            out.append(f"{rel(path)}: max_sustainable_rate recorded {sweep.max_sustainable_rate}, now "
                       f"{'none (no step passes)' if now_max is None else now_max}")
    print("\n== sweep steps: recorded passed vs verdicts.step_verdict(its runs' summaries, "
          "verdicts.criteria_of(sweep.json), step rate)")
    say(out)
    print(f"not checkable (a run's summary not committed): {found.counts['sweep steps: not checkable']} steps")
    for sweep_path, rates in sorted(unchecked.items()):
        print(f"  {sweep_path}: {len(rates)} steps ({', '.join(map(str, sorted(rates)))}/s)")


def metrics_breaches(unit: results.StudyUnit) -> list[str]:
    """The criteria a unit's recorded metrics alone show broken (the figures rules.judge reads, as unit_metrics
    recorded them from the run's summary; success and lag growth are not among them): enough to say the unit now
    fails, never that it passes."""
    m, c = unit.metrics, DEFAULTS
    if m is None or unit.rate is None:
        return []
    broken = []
    if m.goodput is not None and m.goodput < c.min_rate_ratio * unit.rate:
        broken.append(f"min_rate_ratio (goodput {m.goodput}/s < {c.min_rate_ratio:.0%} of {unit.rate}/s)")
    if m.p99_ms is not None and m.p99_ms > c.max_p99 * 1000:
        broken.append(f"max_p99 (p99 {m.p99_ms} ms > {c.max_p99 * 1000:g} ms)")
    if m.lag_p99_ms is not None and m.lag_p99_ms > c.max_lag_p99 * 1000:
        broken.append(f"max_lag_p99 (worse replica's lag p99 {m.lag_p99_ms} ms > {c.max_lag_p99 * 1000:g} ms)")
    if "catch_up_s" in (m.never or []) or (m.catch_up_s is not None and m.catch_up_s > c.max_catch_up):
        broken.append(f"max_catch_up (caught up {m.catch_up_s if m.catch_up_s is not None else 'never'}, limit "
                      f"{c.max_catch_up:g} s)")
    return broken


def studies(found: Findings) -> None:
    out: list[str] = []
    partial: list[str] = []
    for path, study in readable("study.json", results.read_study, found):
        for unit in study.units or []:
            recorded = unit.metrics.passed if unit.metrics else None
            if recorded is None:
                continue
            found.counts["study units with metrics.passed"] += 1
            summary_path = path.parent / unit.folder / "summary.json" if unit.folder else None
            if summary_path is None or not summary_path.is_file():
                found.counts["study units: not checkable (only the metrics committed)"] += 1
                broken = metrics_breaches(unit) if recorded else []
                if broken:
                    found.counts["study units: not checkable, but passed and the metrics alone break a criterion"] += 1
                    partial.append(f"{rel(path)} unit {unit.folder} (cell {unit.cell!r}, {unit.scenario} at "
                                   f"{unit.rate}/s, repeat {unit.repeat}): recorded True, the metrics break "
                                   f"{'; '.join(broken)}")
                continue
            s = found.summary(summary_path)
            if s is None:
                found.counts["study units: not checkable (only the metrics committed)"] += 1
                continue
            found.counts["study units: checked"] += 1
            now = studymetrics.passed(s, DEFAULTS)
            if now != recorded:
                found.counts["study units: passed differs"] += 1
                why = "; ".join(rules.judge(s, DEFAULTS, s.rate).reasons) if s.rate is not None else ""
                out.append(f"{rel(path)} unit {unit.folder} (cell {unit.cell!r}, {unit.scenario} at {unit.rate}/s, "
                           f"repeat {unit.repeat}): recorded {recorded}, now {now}" + (f" ({why})" if why else ""))
    print("\n== study units: recorded metrics.passed vs studymetrics.passed(its run's summary, PassCriteria())")
    say(out)
    print(f"not checkable (only the metrics committed, no summary.json): "
          f"{found.counts['study units: not checkable (only the metrics committed)']} units; of those, recorded "
          "passed while the recorded metrics alone break a criterion now (goodput, p99, lag p99, catch-up: they "
          "would fail; success and lag growth are not in the metrics, so the others stay unknown):")
    say(partial)


def main() -> None:
    print("One evaluator (replbench/analysis/rules.py) against the verdicts committed under results/ "
          f"({', '.join(COMMITTED)})")
    print("The rate is judged on goodput (older summaries: throughput) against the rate asked, success server-side "
          "(server_success, else success).")
    print("No scenario sets a [pass] table: sweep steps are judged by the criteria their sweep.json recorded "
          "(verdicts.criteria_of: the criteria a sweep predates at their defaults), runs and study units by "
          f"PassCriteria()'s defaults: {DEFAULTS.describe()}.")
    print("A run's recorded criteria guards (those starting with rules.CRITERIA_GUARD, and the two older guards "
          "written before that prefix: 'sent rate ... is below ... of the asked ...' and 'only ...% of requests "
          "succeeded') are matched to rules by their text; its catch-up guard is left out (judge._catch_up_guards "
          "says it, as judged then).\n")
    found = Findings()
    runs(found)
    sweeps(found)
    studies(found)
    print(f"\n== files the codec refuses ({len(found.refused)})")
    say(sorted(found.refused))
    print("\n== counts")
    for key in COUNTS:
        print(f"{key}: {found.counts[key]}")
        if key == "runs: criteria guards differ by min_rate_ratio alone":  # by rule: what the others add or drop
            for rule_key in sorted(k for k in found.counts if k.startswith("runs: criteria guards now ")):
                print(f"  differing runs whose guards {rule_key.removeprefix('runs: criteria guards ')}: "
                      f"{found.counts[rule_key]}")
    print(f"files the codec refuses: {len(found.refused)}")


if __name__ == "__main__":
    main()
