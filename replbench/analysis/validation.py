"""model validate's comparisons (experiments/modelcheck runs the cases, docs/cost-model.md "Validate"): a held-out
run's binlog bytes and master and replica CPU (net of idle) as the cost model predicts them along two paths, each
beside the measured figure with its error and whether the measurement lies in the prediction's 95 % interval:

- from the run's counts: its own transactions and rows (and reads served) through costmodel.expected;
- from its binlog profile: the master's binlog over the run's attack window profiled and priced as
  `model predict --profile` prices a profile (profile.workload_mixes, costmodel.predict under the run's setting),
  but for the binlog bytes: the model's price from the profile's transactions and rows, not the profile's own
  bytes (the plan's), which would check the binlog against itself: each plan figure is per second over the
  profile's span, so times the span it is the total over the window, the unit the run's figures are in.

A case runs several times (its repeats, core/config MODEL_VALIDATE_REPEATS): case_of() sums its repeats' figures
(the error of the sums is the error of the mean) and counts how many of the repeats' own figures their own intervals
hold.

Then the coverage (coverage()): per path how many predicted run figures their intervals hold (each repeat's figure
against its own interval: the interval is a prediction interval for one run, docs/cost-model.md "Intervals"), and
per kind of figure the worst error of a case's mean against its bound (core/config MODEL_BINLOG_BOUND_PCT,
MODEL_CPU_BOUND_PCT, MODEL_ONSET_BOUND_PCT), the lag onset's, and the control's: a fitted cell measured beside the
cases, whose CPU error is mostly the host's drift since the fit (the held-out CPU errors are also given scaled by
it, beside the errors as measured, never instead of them)."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..core.config import (
    FINDING_ALPHA,
    MODEL_BINLOG_BOUND_PCT,
    MODEL_COVERAGE_GOAL,
    MODEL_CPU_BOUND_PCT,
    MODEL_ONSET_BOUND_PCT,
    MODEL_REPLICA_CORES,
)
from ..core.results import (
    Checked,
    ControlCoverage,
    CostModel,
    Coverage,
    CpuSigns,
    Interval,
    Num,
    Observation,
    Onset,
    OnsetCheck,
    OnsetCoverage,
    OnsetDrain,
    OnsetRun,
    PathCoverage,
    ProfileCheck,
    RunSummary,
    Validation,
    ValidationCase,
    ValidationRun,
    Worst,
)
from ..core.stats import sign_test
from ..measure.cpu import HOST_COLUMNS
from . import costmodel
from .costmodel import Band, Plan
from .profile import NoWorkload, Profile, Sheet, model_tables, price, workload_mixes

PATHS = (("counts", "from the run's counts"), ("profile", "from its binlog profile"))
# each kind of figure: the parts it holds and the bound its worst error is judged against
KINDS = (("binlog", ("binlog_bytes",), MODEL_BINLOG_BOUND_PCT),
         ("CPU", ("master_cpu_s", "replica_cpu_s"), MODEL_CPU_BOUND_PCT))
CPU = next(parts for kind, parts, _ in KINDS if kind == "CPU")
FIGURES = {"binlog_bytes": "binlog bytes", "master_cpu_s": "master CPU", "replica_cpu_s": "replica CPU"}
# each checked figure's plan figure: the binlog's bytes per second (every replica gets them), CPU seconds per second
PLAN: dict[str, Callable[[Plan], Band | None]] = {"binlog_bytes": lambda p: p.bytes_per_s_to_each_replica,
                                                  "master_cpu_s": lambda p: p.master_cpu_cores,
                                                  "replica_cpu_s": lambda p: p.replica_cpu_cores}
GOAL = MODEL_COVERAGE_GOAL


@dataclass(frozen=True)
class Identity:
    """A held-out case's identity, as validate.json's case holds it beside its figures: experiments/modelcheck's
    Case's, or a recorded case's (a recording of before settings: ROW-FULL)."""

    scenario: str | None
    rate: Num | None
    setting: str | None


@dataclass(frozen=True)
class LiveOnset:
    """The live onset's part of validate.json's onset (live_onset's): the rate, its error, or why none tells."""

    measured: float | None
    error_pct: float | None
    live_note: str | None


def error_pct(predicted: float, measured: float | None) -> float | None:
    return round(100 * (predicted - measured) / measured, 1) if measured else None


def interval_of(band: Band | None) -> Interval | None:
    """analysis/costmodel's figure with its interval as the record validate.json holds it (its keys as they are)."""
    return None if band is None else Interval.model_validate(band)


def checked(predicted: Interval | None, measured: float | None, resolution: float | None = None) -> Checked:
    """One figure: predicted (with its interval) against measured, the error and whether it is inside. A net
    figure below its resolution (the idle window's noise: docs/metrics.md#net-of-idle) is not a measurement: it is
    kept beside the prediction, compared with nothing, and says so."""
    if measured is not None and resolution is not None and measured < resolution:
        return Checked(measured=None, predicted=predicted, error_pct=None, inside=None,
                       below_resolution={"net": measured, "resolution": resolution})
    return Checked(measured=measured, predicted=predicted,
                   error_pct=None if predicted is None else error_pct(_end(predicted.value), measured),
                   inside=None if predicted is None or measured is None else
                   _end(predicted.low) <= measured <= _end(predicted.high))


def _end(value: Num | None) -> float:
    """A prediction's value or an end of its interval: analysis/costmodel gives each of them (checked's and
    _summed's predictions are its)."""
    assert value is not None
    return value


def from_counts(model: CostModel, obs: Observation) -> ValidationRun:
    """A run (costmodel.observation's) predicted from its own transactions and rows: each figure checked, why any
    is not predicted, and whether its rate lay outside the fit's domain (a run's record but for its name and
    usable, the caller's)."""
    predicted = costmodel.expected(model, obs)
    fitted = (model.settings or {}).get(costmodel.key(obs.setting, obs.table or ""))
    # the replicas' CPU: with their reads where a read is priced
    parts = {part: checked(interval_of(predicted[part]), obs.figure(part), (obs.resolution or {}).get(part))
             for part in costmodel.EXPECTED}
    return ValidationRun(transactions=obs.transactions, rows=obs.rows, replica_reads=obs.replica_reads,
                         not_predicted=costmodel.not_predicted(model, obs),
                         outside_domain=costmodel.outside_domain(
                             fitted, obs.transactions / obs.seconds, obs.rows / obs.seconds)
                         if fitted is not None and obs.seconds else None,
                         binlog_bytes=parts["binlog_bytes"], master_cpu_s=parts["master_cpu_s"],
                         replica_cpu_s=parts["replica_cpu_s"])


def from_profile(model: CostModel, profile: Profile, obs: Observation) -> ProfileCheck:
    """The same run predicted from its binlog's profile under its setting, as `model predict --profile` prices it:
    each plan's figure per second times the profile's span (the total over the window), summed over the model
    tables the profiled tables map to; beside the run's measured figures (obs: costmodel.observation's). The
    profile's file and window are the caller's to add."""
    w = profile.workload
    notes: list[str] = []
    not_predicted: dict[str, str] = {}
    try:
        mixes, mapped, notes = workload_mixes(profile, model_tables(model))
        # the model's binlog price, not the binlog's own bytes (predict's plan): this checks the model's fit, and
        # the binlog's bytes would check the binlog against itself
        sheets = price(model, profile, mixes, mapped, obs.setting, alone=True, model_binlog=True)
    except NoWorkload as exc:
        sheets, not_predicted = [], {part: str(exc) for part in costmodel.EXPECTED}
    parts: dict[str, Checked] = {}
    for part in costmodel.EXPECTED:
        total, why = _total(model, sheets, part, profile.span_s)
        if part == "replica_cpu_s" and obs.replica_reads:
            total, why = None, (f"the replicas also served {obs.replica_reads:,} reads, which no binlog shows "
                                "(a profile prices the writes alone)")
        elif part == "master_cpu_s" and obs.replica_reads:
            total, why = None, costmodel.AMID_READS
        if why and part not in not_predicted:
            not_predicted[part] = why
        parts[part] = checked(total, obs.figure(part), (obs.resolution or {}).get(part))
    return ProfileCheck(span_s=profile.span_s, transactions=w.transactions, rows=w.rows,
                        heartbeat_transactions=profile.heartbeat.transactions if profile.heartbeat else 0,
                        bytes_as_written=w.bytes, notes=notes, not_predicted=not_predicted,
                        outside_domain=next((s.plan.outside_domain for s in sheets
                                             if s.plan is not None and s.plan.outside_domain), None),
                        binlog_bytes=parts["binlog_bytes"], master_cpu_s=parts["master_cpu_s"],
                        replica_cpu_s=parts["replica_cpu_s"])


def _total(model: CostModel, sheets: list[Sheet], part: str, span: float) -> tuple[Interval | None, str | None]:
    """A figure's total over the span, summed over the sheets (value and the interval's ends alike), or None and
    why (a sheet without a plan, or a plan without the figure: costmodel.not_predicted's reason)."""
    if not sheets:
        return None, None
    total = {"value": 0.0, "low": 0.0, "high": 0.0}
    for sheet in sheets:
        plan = sheet.plan
        if plan is None:
            return None, f"{sheet.setting} on {sheet.table}: {sheet.error}"
        figure = PLAN[part](plan)
        if figure is None:
            as_run = Observation(setting=plan.setting, table=plan.table, folder=None, scenario=None,
                                 transactions=plan.transactions_per_s * span, rows=plan.rows_per_s * span,
                                 seconds=span, master_cpu_s=None, replica_cpu_s=None, replica_reads=0,
                                 binlog_bytes=None, fsyncs_per_commit=None)
            return None, costmodel.not_predicted(model, as_run).get(part, "the model cannot say")
        for end in total:
            total[end] += figure[end] * span
    return Interval(value=total["value"], low=total["low"], high=total["high"]), None


# --- a case over its repeats ----------------------------------------------------------------------------------

def rounds(cases: int, repeats: int, first: int = 0) -> list[list[int]]:
    """The order of a case list's runs: round r runs every case, in the list's order rotated by r (round 0: A B C,
    round 1: B C A, …), so no case always runs first or last in a round; from round `first` on (a recording that
    goes on from earlier ones)."""
    return [[(r + i) % cases for i in range(cases)] for r in range(first, first + repeats)] if cases else []


def _summed(runs: list[Checked]) -> Checked:
    """One figure over a case's repeats (each checked()'s): predicted and measured the repeats' sums, the interval's
    ends summed too (conservative: it treats the runs' errors as moving together, wider than independent runs'
    would be), the error of the sums (the error of the mean), and how many repeats lie inside their own interval.
    A repeat whose figure lay below its resolution is left out of the sums (counted as such); a figure that any
    other repeat has no prediction or measurement of: none over the case either."""
    below = [r for r in runs if r.below_resolution]
    runs = [r for r in runs if not r.below_resolution]
    predicted = [p for r in runs if (p := r.predicted) is not None]
    measured = [m for r in runs if (m := r.measured) is not None]
    total = (Interval(value=sum(_end(p.value) for p in predicted), low=sum(_end(p.low) for p in predicted),
                      high=sum(_end(p.high) for p in predicted))
             if runs and len(predicted) == len(runs) else None)
    got = sum(measured) if runs and len(measured) == len(runs) else None
    summed = Checked(predicted=total, measured=got,
                     error_pct=None if total is None else error_pct(_end(total.value), got),
                     runs=len(runs), inside_runs=None if total is None or got is None else
                     sum(1 for r in runs if r.inside))
    if not below:
        return summed
    return summed.model_copy(update={"runs_below_resolution": len(below),
                                     "below_resolution": below[0].below_resolution})


def _first(values: Iterable[str | None]) -> str | None:
    return next((v for v in values if v), None)


def _merged(reasons: Iterable[dict[str, str] | None]) -> dict[str, str]:
    """The repeats' reasons per figure, the first repeat's where they differ."""
    out: dict[str, str] = {}
    for got in reasons:
        for part, why in (got or {}).items():
            out.setdefault(part, why)
    return out


def _part(source: ValidationRun | ProfileCheck, part: str) -> Checked | None:
    """One checked figure of a run or its profile by its name (costmodel.EXPECTED's)."""
    value: Checked | None = getattr(source, part)
    return value


def _summed_parts(sources: Sequence[ValidationRun | ProfileCheck]) -> dict[str, Checked]:
    """Each figure over the sources that have it (_summed's); a figure none of them has is left out."""
    return {part: _summed(got) for part in costmodel.EXPECTED
            if (got := [v for s in sources if (v := _part(s, part)) is not None])}


def case_of(identity: Identity, repeats: list[ValidationRun]) -> ValidationCase:
    """A case's entry: its identity (scenario, rate, setting), its repeats (each as modelcheck's _case gives a run)
    and its figures over the usable ones (_summed), for the counts path and, over the repeats profiled without
    error, the profile path. A figure no repeat has stays absent from the case (model_copy's update: the fields
    validate.json writes are the ones set)."""
    usable = [r for r in repeats if r.usable]
    case = ValidationCase(scenario=identity.scenario, rate=identity.rate, setting=identity.setting,
                          usable=bool(usable), repeats=repeats)
    if not usable:
        return case
    case = case.model_copy(update={
        "transactions": sum(r.transactions or 0 for r in usable), "rows": sum(r.rows or 0 for r in usable),
        "replica_reads": sum(r.replica_reads or 0 for r in usable),
        "not_predicted": _merged(r.not_predicted for r in usable),
        "outside_domain": _first(r.outside_domain for r in usable), **_summed_parts(usable)})
    profile = _profile_over(usable)
    return case if profile is None else case.model_copy(update={"profile": profile})


def _profile_over(usable: list[ValidationRun]) -> ProfileCheck | None:
    """A case's profile path over its usable repeats: the figures over those profiled without error, or the first
    repeat's error where every profile failed; None where none was profiled."""
    profiled = [r.profile for r in usable if r.profile is not None]
    if not profiled:
        return None
    good = [p for p in profiled if not p.error]
    if not good:
        return ProfileCheck(error=profiled[0].error)
    profile = ProfileCheck(span_s=sum(p.span_s or 0 for p in good),
                           transactions=sum(p.transactions or 0 for p in good), rows=sum(p.rows or 0 for p in good),
                           heartbeat_transactions=sum(p.heartbeat_transactions or 0 for p in good),
                           bytes_as_written=sum(p.bytes_as_written or 0 for p in good),
                           not_predicted=_merged(p.not_predicted for p in good),
                           notes=next((p.notes for p in good if p.notes), None) or [],
                           outside_domain=_first(p.outside_domain for p in good))
    return profile.model_copy(update=_summed_parts(good))


def repeats_of(c: ValidationCase) -> list[ValidationRun]:
    """A case's runs: its repeats, or (a validate.json of before repeats) the case itself, its own single run."""
    return list(c.repeats) if c.repeats else [c]


def drains_of(o: Onset) -> list[OnsetDrain]:
    """The onset's drains: its list, or (a validate.json of before the drain's repeats) its one drain."""
    return list(o.drains) if o.drains else [o.drain] if o.drain is not None else []  # modelcheck wrote it whole


def drained(o: Onset) -> tuple[float | None, float | None]:
    """The drained onset's measured rate (the median of every drain's rates) and the prediction's error."""
    if o.drains:
        return o.drain_measured, o.drain_error_pct
    return (o.drain.measured, o.drain.error_pct) if o.drain is not None else (None, None)


# --- the coverage ----------------------------------------------------------------------------------------------

def case_label(c: ValidationCase) -> str:
    """'write-mix @ 200/s ROW-MINIMAL' (a validate.json of before settings: without one)."""
    return f"{c.scenario} @ {c.rate}/s" + (f" {c.setting}" if c.setting else "")


def figures(c: ValidationRun, path: str) -> dict[str, Checked]:
    """A usable case's (or run's) checked figures along one path ({} where it has none: not profiled, or
    failed)."""
    if not c.usable:
        return {}
    source = c if path == "counts" else c.profile
    if source is None or (path == "profile" and isinstance(source, ProfileCheck) and source.error):
        return {}
    return {part: v for part in costmodel.EXPECTED if (v := _part(source, part)) is not None}


def coverage(data: Validation) -> Coverage:
    """Per path: the run figures predicted and measured (every repeat's), how many lie inside their own 95 %
    interval (a prediction interval for one run), those not predicted, those below their resolution, the usable
    cases without any (not profiled, or the profile failed), and per kind the worst error of a case's mean over its
    repeats (the largest in size) with its case, figure and bound; the most repeats a case had; the lag onset's
    errors (drained and live) against their bound; and the bounds and the coverage goal themselves."""
    cases = data.cases or []
    paths = {}
    for path, _ in PATHS:
        runs = [v for c in cases for r in repeats_of(c) for v in figures(r, path).values()]
        counted = [v for v in runs if v.predicted is not None and v.measured is not None]
        shown = [(case_label(c), part, v) for c in cases for part, v in figures(c, path).items()
                 if v.predicted is not None and v.measured is not None]
        worst = {kind: w for kind, parts, bound in KINDS
                 if (w := _worst([(v.error_pct, case, part) for case, part, v in shown
                                  if part in parts and v.error_pct is not None], bound))}
        paths[path] = PathCoverage(figures=len(counted), inside=sum(1 for v in counted if v.inside),
                                   not_predicted=sum(1 for v in runs if v.predicted is None),
                                   below_resolution=sum(1 for v in runs if v.below_resolution), worst=worst,
                                   cases_without=sum(1 for c in cases if c.usable and not figures(c, path)),
                                   cpu_signs=_signs([v.error_pct for _, part, v in shown if part in CPU]))
    return Coverage(paths=paths, repeats=max((len(repeats_of(c)) for c in cases), default=0), onset=_onset(data),
                    control=_control(data), goal=GOAL,
                    bounds_pct={**{kind: bound for kind, _, bound in KINDS}, "onset": MODEL_ONSET_BOUND_PCT})


def _signs(errors: list[Num | None]) -> CpuSigns | None:
    """The signs of the CPU errors of the cases' means (predicted below the measured: negative): how many each way
    and the sign test's p, which says whether the split is more uneven than noise around zero would make it (a bias
    of the model, or of the host since the fit: the control says which); None without any error."""
    got = [e for e in errors if e is not None and e != 0]
    below, above = sum(1 for e in got if e < 0), sum(1 for e in got if e > 0)
    p = sign_test(below, above)
    return None if p is None else CpuSigns(below=below, above=above, p=p, biased=p < FINDING_ALPHA)


def _worst(errors: list[tuple[Num, str, str]], bound: float) -> Worst | None:
    """The largest of (error %, case, figure part) in size, against the bound; None without any."""
    if not errors:
        return None
    err, case, part = max(errors, key=lambda e: (abs(e[0]), e))
    return Worst(error_pct=err, case=case, figure=FIGURES[part], bound_pct=bound, within=abs(err) <= bound)


def _control(data: Validation) -> ControlCoverage | None:
    """The control (a fitted cell run in every round): per path, its CPU figures' measured/predicted over its runs
    (mostly the host's drift since the fit; the rest the fit's residual on that cell and the runs' noise; where the
    runs were recorded in the fit's hours, `interleaved`, the fit's residual and the noise alone), and the
    held-out cases' worst CPU error of a case's mean once each prediction is scaled by the control's ratio for the
    same figure on the same path; None without a usable control that has a ratio."""
    c = data.control
    if c is None or not c.usable:
        return None
    ratios = {path: {part: v.measured / v.predicted.value for part, v in figures(c, path).items()
                     if part in CPU and v.predicted is not None and v.predicted.value and v.measured}
              for path, _ in PATHS}
    if not ratios["counts"]:
        return None
    scaled = {}
    for path, _ in PATHS:
        ratio = ratios[path]
        errors = [(err, case_label(case), part) for case in data.cases or []
                  for part, v in figures(case, path).items()
                  if part in ratio and v.predicted is not None and v.predicted.value is not None and v.measured
                  and (err := error_pct(v.predicted.value * ratio[part], v.measured)) is not None]
        if w := _worst(errors, MODEL_CPU_BOUND_PCT):
            scaled[path] = w
    return ControlCoverage(case=case_label(c), runs=len(repeats_of(c)),
                           ratio={path: {FIGURES[part]: round(r, 4) for part, r in ratio.items()}
                                  for path, ratio in ratios.items() if ratio},
                           scaled_worst=scaled, interleaved=bool(data.recordings))


def replica_room(summary: RunSummary, cores: int, replica: str) -> float:
    """A host's cores less the mean CPU of every group on it but `replica`: the most the replica could have had."""
    taken = sum(v or 0 for k, v in (summary.cpu_mean_percent or {}).items()
                if k != replica and k not in HOST_COLUMNS)
    return round((cores * 100 - taken) / 100, 2)


def live_onset(runs: list[OnsetRun], predicted: float, replica: str) -> LiveOnset:
    """The live onset from the runs at shares of the predicted one: the median rate the replica applied in the runs
    where it fell behind with MODEL_REPLICA_CORES left to it (the premise the onset is priced on), or why none
    tells: the replica starved of CPU by the other groups on its host, a master too slow to outrun it, or no run
    that fell behind."""
    premise = [r for r in runs if r.replica_room_cores is None or r.replica_room_cores >= MODEL_REPLICA_CORES]
    applied = [r.applied_per_s for r in premise if r.applied_per_s]
    if applied:
        measured = statistics.median(applied)
        return LiveOnset(measured=measured, error_pct=error_pct(predicted, measured), live_note=None)
    starved = [r for r in runs if r not in premise and r.applied_per_s]
    committed = max((r.master_transactions_per_s or 0 for r in runs), default=0)
    if starved:
        r = starved[0]
        assert r.applied_per_s is not None and r.replica_room_cores is not None  # starved: both, as filtered above
        note = (f"{replica} fell behind at {r.applied_per_s:,.1f} transactions/s with at most "
                f"{r.replica_room_cores:.2f} of a core left to it by the master, app, load generator and harness "
                f"on this host: the onset is priced for a replica with {MODEL_REPLICA_CORES:g} core to itself, so "
                "this run does not test it")
    elif committed < predicted:
        note = (f"the master committed at most {committed:,.1f} of these transactions/s here, below the predicted "
                "onset: a replica cannot fall behind a master that slow")
    else:
        note = f"{replica} kept up at {committed:,.1f} transactions/s: the onset is above it"
    return LiveOnset(measured=None, error_pct=None, live_note=note)


def _onset(data: Validation) -> OnsetCoverage | None:
    """The lag onset's error, drained and live, against its bound, and whether each lies in the interval (a kind
    of onset without a measured error is left out of the record, as validate.json writes it)."""
    o = data.onset
    if o is None or o.predicted is None:
        return None
    checks = {}
    for name, (measured, err) in (("drained", drained(o)), ("live", (o.measured, o.error_pct))):
        if measured is not None and err is not None:
            checks[name] = OnsetCheck(error_pct=err, within=abs(err) <= MODEL_ONSET_BOUND_PCT,
                                      inside=_inside(o.predicted, measured))
    return OnsetCoverage.model_validate(checks) if checks else None


def _inside(p: Interval, measured: float) -> bool | None:
    return None if p.low is None or p.high is None else p.low <= measured <= p.high
