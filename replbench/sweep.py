"""Rate sweeps: a ladder of full runs of one scenario, each in its own folder under one sweep folder, a verdict per
step from the scenario's pass criteria, the stop rule (stop one step after the first failing step), optional
refinement by bisection, and the max sustainable rate.

sweep.json in the sweep folder is rewritten after every step, so an interrupted sweep keeps what it measured.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from .config import Settings
from .progress import Progress
from .run import STATUS_FAILED, STATUS_INTERRUPTED, Run, RunOptions, new_folder, write_json
from .scenario import PassCriteria, Scenario

SETTLE_TIMEOUT = 30.0  # seconds to wait for the host CPU to settle between steps
SETTLE_BUSY = 0.25  # settled: host busy below this share of all cores
REFINE_STEPS = 6  # extra steps --refine may add (bisection, or halving when even the first step failed)
REFINE_RESOLUTION = 0.05  # stop refining when the gap is below this share of the passing rate


def evaluate(summary: dict[str, Any], criteria: PassCriteria, rate: int) -> tuple[bool, list[str]]:
    """Verdict of one step from its (median) summary: passed?, and the reasons it failed."""
    reasons: list[str] = []
    if summary.get("status") == STATUS_FAILED:
        reasons.append("run failed (see its guards)")
    success = summary.get("success")
    if success is None or success < criteria.min_success:
        reasons.append(f"success {_pct(success)} < {criteria.min_success:.1%}")
    achieved = summary.get("rate_achieved") or 0.0
    if achieved < criteria.min_rate_ratio * rate:
        reasons.append(f"achieved {achieved:.1f}/s < {criteria.min_rate_ratio:.0%} of {rate}/s")
    p99 = (summary.get("latency_ms") or {}).get("p99")
    if p99 is None or p99 > criteria.max_p99 * 1000:
        reasons.append(f"p99 {p99} ms > {criteria.max_p99 * 1000:g} ms")
    catch = summary.get("catch_up_s") or {}
    if not catch or any(v is None or v > criteria.max_catch_up for v in catch.values()):
        reasons.append(f"replicas caught up {catch or 'never measured'} (limit {criteria.max_catch_up:g} s)")
    return not reasons, reasons


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2%}"


def median_summary(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of repeats for the figures a verdict uses (a failed repeat keeps the step failed)."""
    if len(summaries) == 1:
        return summaries[0]
    med = dict(summaries[len(summaries) // 2])

    def median_of(get) -> Any:
        values = [v for v in (get(s) for s in summaries) if v is not None]
        return statistics.median(values) if values else None

    med["success"] = median_of(lambda s: s.get("success"))
    med["rate_achieved"] = median_of(lambda s: s.get("rate_achieved"))
    med["latency_ms"] = {k: median_of(lambda s, k=k: (s.get("latency_ms") or {}).get(k))
                         for k in ("min", "mean", "p50", "p90", "p95", "p99", "max")}
    replicas = {r for s in summaries for r in (s.get("catch_up_s") or {})}
    med["catch_up_s"] = {r: (None if any((s.get("catch_up_s") or {}).get(r) is None for s in summaries)
                             else median_of(lambda s, r=r: s["catch_up_s"][r])) for r in replicas}
    if any(s.get("status") == STATUS_FAILED for s in summaries):
        med["status"] = STATUS_FAILED
    return med


@dataclass
class StepResult:
    rate: int
    folders: list[str]
    passed: bool
    reasons: list[str]
    refined: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"rate": self.rate, "folders": self.folders, "passed": self.passed, "reasons": self.reasons,
                "refined": self.refined}


def max_sustainable(steps: list[StepResult]) -> int | None:
    passing = [s.rate for s in steps if s.passed]
    return max(passing) if passing else None


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


def wait_settled(progress: Progress) -> float:
    """Wait (bounded) until the host CPU is quiet, so one step does not bleed into the next."""
    begin = time.monotonic()
    cores = psutil.cpu_count() or 1
    psutil.cpu_percent(None)
    while time.monotonic() - begin < SETTLE_TIMEOUT:
        time.sleep(1.0)
        busy = psutil.cpu_percent(None) / 100.0
        if busy < SETTLE_BUSY:
            break
        progress.say(f"waiting for the CPU to settle ({busy * 100 * cores:.0f} % busy)")
    return round(time.monotonic() - begin, 1)


class Sweep:
    def __init__(self, settings: Settings, scenario: Scenario, rates: list[int], options: RunOptions,
                 repeat: int = 1, refine: bool = False, folder: Path | None = None) -> None:
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
        self.interrupted = False
        self.progress = Progress(f"sweep {scenario.name}")

    def execute(self) -> dict[str, Any]:
        plan = list(self.rates)
        index = 0
        while index < len(plan) and not self.interrupted:
            rate = plan[index]
            self._step(rate, f"{index + 1}/{len(plan)}", refined=False)
            index += 1
            failed = [s for s in self.steps if not s.passed]
            if failed and self.steps[-1] is not failed[0]:
                break  # stop one step after the first failing step
        if self.refine:
            rounds = 0
            while not self.interrupted and rounds < REFINE_STEPS:
                rate = next_refine_rate(self.steps)
                if rate is None:
                    break
                rounds += 1
                self._step(rate, f"refine {rounds}", refined=True)
        return self._write()

    def _step(self, rate: int, label: str, refined: bool) -> None:
        summaries = []
        folders = []
        for r in range(self.repeat):
            wait_settled(self.progress)
            folder = new_folder(self.settings, self.scenario, rate, parent=self.folder)
            folders.append(folder.name)
            repeat_label = f" repeat {r + 1}/{self.repeat}" if self.repeat > 1 else ""
            self.progress.say(f"step {label}: {rate} rps{repeat_label} → {folder.name}", final=True)
            summary = Run(self.settings, self.scenario, rate, self.options, folder).execute()
            summaries.append(summary)
            if summary.get("status") == STATUS_INTERRUPTED:
                self.interrupted = True
                break
        if self.interrupted:
            self.steps.append(StepResult(rate, folders, False, ["interrupted"], refined))
        else:
            passed, reasons = evaluate(median_summary(summaries), self.scenario.criteria, rate)
            self.steps.append(StepResult(rate, folders, passed, reasons, refined))
        last = self.steps[-1]
        self.progress.say(f"step {label}: {rate} rps → {'PASS' if last.passed else 'FAIL'}"
                          + ("" if last.passed else f" ({'; '.join(last.reasons)})"), final=True)
        self._write()

    def _write(self) -> dict[str, Any]:
        data = {
            "scenario": self.scenario.name, "ladder": self.rates, "repeat": self.repeat, "refine": self.refine,
            "duration_s": self.options.duration, "knobs": self.options.knobs.as_dict(),
            "criteria": self.scenario.criteria.__dict__, "criteria_text": self.scenario.criteria.describe(),
            "steps": [s.as_dict() for s in sorted(self.steps, key=lambda s: s.rate)],
            "max_sustainable_rate": max_sustainable(self.steps),
            "status": STATUS_INTERRUPTED if self.interrupted else "complete",
        }
        write_json(self.folder / "sweep.json", data)
        return data


def load(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "sweep.json").read_text())
