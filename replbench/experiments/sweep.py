"""Rate sweeps: a ladder of full runs of one scenario, each in its own folder under one sweep folder, a verdict per
step from the scenario's pass criteria, the stop rule (stop after two failing steps in a row: one failing step
followed by a pass was a dip, not the knee), optional refinement by bisection, the max sustainable rate, and with
`--confirm N` that maximum confirmed by N rounds at the boundary, interleaved with the first failing rate above it.

sweep.json in the sweep folder is rewritten after every step, so an interrupted sweep keeps what it measured.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..analysis.verdicts import step_verdict
from ..core.config import SWEEP_CONFIRM_SHARE, Settings
from ..core.progress import Progress
from ..core.records import COMPLETE, STATUS_INTERRUPTED, new_folder
from ..core.results import BoundaryRun, KnobSetting, SweepBoundary, SweepRecord, SweepStep, write_record
from ..core.scenario import Scenario
from .run import Run, RunOptions

REFINE_STEPS = 6  # extra steps --refine may add (bisection, or halving when even the first step failed)
REFINE_RESOLUTION = 0.05  # stop refining when the gap is below this share of the passing rate


@dataclass
class StepResult:
    rate: int
    folders: list[str]
    passed: bool
    reasons: list[str]
    refined: bool = False
    notes: list[str] | None = None  # what qualifies a pass (PASS*): saturation, client-side errors

    def record(self) -> SweepStep:
        """The step as sweep.json records it."""
        return SweepStep(rate=self.rate, folders=self.folders, passed=self.passed, reasons=self.reasons,
                         refined=self.refined, notes=self.notes or [])

    @property
    def verdict(self) -> str:
        if not self.passed:
            return "FAIL (" + "; ".join(self.reasons) + ")"
        return "PASS* (" + "; ".join(self.notes) + ")" if self.notes else "PASS"


def max_sustainable(steps: list[StepResult]) -> int | None:
    passing = [s.rate for s in steps if s.passed]
    return max(passing) if passing else None


def next_refine_rate(steps: list[StepResult]) -> int | None:
    """The next bisection rate between the highest pass and the lowest fail above it (or below the lowest fail
    when nothing passed), or None when the gap is resolved."""
    fails = sorted(s.rate for s in steps if not s.passed)
    if not fails:
        return None
    best = max_sustainable(steps)
    low = best or 0
    above = [f for f in fails if f > low]
    if not above:
        return None
    high = above[0]
    candidate = (low + high) // 2 if low else max(1, high // 2)
    if candidate <= low or candidate >= high:
        return None
    if low and (high - low) <= max(1, REFINE_RESOLUTION * low):
        return None
    return candidate


def boundary_rates(steps: list[StepResult]) -> tuple[int, int | None] | None:
    """The rates `--confirm` runs: the highest passing one and the first failing one above it (None where no step
    above it failed: the ladder ended first); None where no step passed (there is no maximum to confirm)."""
    best = max_sustainable(steps)
    if best is None:
        return None
    above = sorted(s.rate for s in steps if not s.passed and s.rate > best)
    return best, above[0] if above else None


def rounds_order(rates: tuple[int, int | None], rounds: int) -> list[tuple[int, int]]:
    """(round, rate) in the order the boundary's runs go: the two rates alternate which comes first from round to
    round, so a drift of the host over the rounds falls on both alike."""
    pair = [r for r in rates if r is not None]
    return [(n, rate) for n in range(rounds) for rate in (pair if n % 2 == 0 else pair[::-1])]


def needed(rounds: int) -> int:
    """Passes of `rounds` that confirm a rate: SWEEP_CONFIRM_SHARE of them, rounded up (2 of 3)."""
    return math.ceil(SWEEP_CONFIRM_SHARE * rounds - 1e-9)


def boundary_of(rates: tuple[int, int | None], rounds: int, runs: list[BoundaryRun]) -> SweepBoundary:
    """The boundary's record: the maximum is confirmed when it passed in needed(rounds) of its runs and the failing
    rate above it (if any) did not; an interrupted confirmation (fewer runs than planned) confirms nothing."""
    best, fail = rates
    got = SweepBoundary(pass_rate=best, rounds=rounds, needed=needed(rounds), runs=runs)
    if fail is not None:  # a ladder that ended before a step failed above the maximum: no fail_rate key, not null
        got = got.model_copy(update={"fail_rate": fail})
    whole = len(runs) == len(rounds_order(rates, rounds))
    confirmed = whole and got.ran(best, passed=True) >= needed(rounds) and \
        (fail is None or got.ran(fail, passed=True) < needed(rounds))
    return got.model_copy(update={"confirmed": confirmed})


class Sweep:
    def __init__(self, settings: Settings, scenario: Scenario, rates: list[int], options: RunOptions,
                 repeat: int = 1, refine: bool = False, folder: Path | None = None, confirm: int = 0) -> None:
        self.settings = settings
        self.scenario = scenario
        self.rates = sorted(set(rates))
        self.options = options
        self.repeat = repeat
        self.refine = refine
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        self.folder = folder or settings.results / f"sweep-{stamp}-{scenario.name}"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.steps: list[StepResult] = []
        self.confirm = confirm  # rounds at the boundary after the ladder (0: none)
        self.boundary: SweepBoundary | None = None
        self.interrupted = False
        self.progress = Progress(f"sweep {scenario.name}")

    def execute(self) -> SweepRecord:
        plan = list(self.rates)
        index = 0
        while index < len(plan) and not self.interrupted:
            rate = plan[index]
            self._step(rate, f"{index + 1}/{len(plan)}", refined=False)
            index += 1
            if len(self.steps) >= 2 and not self.steps[-1].passed and not self.steps[-2].passed:
                break  # two failing steps in a row: past the knee
        if self.refine:
            rounds = 0
            while not self.interrupted and rounds < REFINE_STEPS:
                next_rate = next_refine_rate(self.steps)
                if next_rate is None:
                    break
                rounds += 1
                self._step(next_rate, f"refine {rounds}", refined=True)
        if self.confirm and not self.interrupted:
            self._confirm()
        return self._write()

    def _confirm(self) -> None:
        """The maximum and the first failing rate above it, run in `confirm` interleaved rounds, one run each per
        round (each settles first, as every run does); sweep.json rewritten after each run."""
        rates = boundary_rates(self.steps)
        if rates is None:
            self.progress.say("no step passed: no maximum to confirm", final=True)
            return
        runs: list[BoundaryRun] = []
        plan = rounds_order(rates, self.confirm)
        for n, rate in plan:
            folder = new_folder(self.settings, self.scenario, rate, parent=self.folder)
            self.progress.say(f"confirm {len(runs) + 1}/{len(plan)} (round {n + 1}): {rate} rps → {folder.name}",
                              final=True)
            summary = Run(self.settings, self.scenario, rate, self.options, folder).execute().summary
            if summary.status == STATUS_INTERRUPTED:
                self.interrupted = True
                break
            verdict = step_verdict([summary], self.scenario.criteria, rate)
            runs.append(BoundaryRun(round=n + 1, rate=rate, folder=folder.name, passed=verdict.passed,
                                    reasons=list(verdict.reasons)))
            self.boundary = boundary_of(rates, self.confirm, runs)
            self._write()

    def _step(self, rate: int, label: str, refined: bool) -> None:
        summaries = []
        folders = []
        for r in range(self.repeat):  # each run settles first: the last step's work drained, the host near idle
            folder = new_folder(self.settings, self.scenario, rate, parent=self.folder)
            folders.append(folder.name)
            repeat_label = f" repeat {r + 1}/{self.repeat}" if self.repeat > 1 else ""
            self.progress.say(f"step {label}: {rate} rps{repeat_label} → {folder.name}", final=True)
            summary = Run(self.settings, self.scenario, rate, self.options, folder).execute().summary
            summaries.append(summary)
            if summary.status == STATUS_INTERRUPTED:
                self.interrupted = True
                break
        if self.interrupted:
            self.steps.append(StepResult(rate, folders, False, ["interrupted"], refined))
        else:
            verdict = step_verdict(summaries, self.scenario.criteria, rate)
            self.steps.append(StepResult(rate, folders, verdict.passed, verdict.reasons, refined,
                                         [note.text for note in verdict.notes]))
        last = self.steps[-1]
        self.progress.say(f"step {label}: {rate} rps → {last.verdict}", final=True)
        self._write()

    def _write(self) -> SweepRecord:
        record = SweepRecord(
            scenario=self.scenario.name, ladder=self.rates, repeat=self.repeat, refine=self.refine,
            duration_s=self.options.duration, knobs=KnobSetting.model_validate(self.options.knobs.as_dict()),
            criteria=asdict(self.scenario.criteria), criteria_text=self.scenario.criteria.describe(),
            steps=[s.record() for s in sorted(self.steps, key=lambda s: s.rate)],
            max_sustainable_rate=max_sustainable(self.steps),
            status=STATUS_INTERRUPTED if self.interrupted else COMPLETE)
        if self.boundary is not None:  # `--confirm N`'s, once a run of it has finished
            record = record.model_copy(update={"boundary": self.boundary})
        write_record(self.folder / "sweep.json", record)
        return record
