"""model validate: the cost model against runs it was not fitted on. Each held-out case (the mixed scenario and a
mix of single-row and 100-row updates, each at two rates, the latter under ROW FULL and ROW MINIMAL) runs as an
ordinary run under its setting; the model is then asked what that run should have cost two ways
(analysis/validation): from the run's own transactions and rows, and from the master's binlog over the run's attack
window, copied, profiled and priced as `model predict --profile` prices a profile (the heartbeat left out). The table
sets each predicted beside measured for binlog bytes and master and replica CPU (net of idle), with the error and
whether the measurement falls in the prediction's interval (the replicas' CPU where they also served reads only
when the fit prices a read, and never from a profile: a binlog shows no reads; else the case says why not), and
whether the run's rate lay outside the fit's domain.

Then the lag onset: the model's rate at which one replica (one SQL thread, on its own host) starts falling behind
under transactions of ONSET_ROWS rows (a row count no fitted drain had), checked twice. Drained: a backlog of such
transactions (written at ONSET_FILL_ROWS_PER_S rows/s, below the master's knee) applied by each replica alone, the
rate the model's premise names. Live: write-bulk runs of that many rows at ONSET_LOADS of it, with every replica but
replica1 stopped for the run (the model's replica has its host to itself; on one small box two replicas applying at
once share its cores). A run whose replica1 lag grows by FALLING_BEHIND s per s or more fell behind, and then its
apply rate is the master's transactions/s × (1 − that growth); where no run fell behind because the master could
not commit the rate, the table says so.

Every case runs MODEL_VALIDATE_REPEATS times (--repeat), in rounds: each round runs every case, the order rotated
by one a round (so no case always runs first or last); each run is a run of its own (its folder, its profile), and
the case's figures are its repeats' sums (the error of the mean; analysis/validation.case_of). The drained onset
drains its backlog once after each round (as many times as the repeats, at least MODEL_ONSET_DRAIN_REPEATS, the rest
after the last round), so its drains sample the host over the whole validation as the fit's drains sampled it over
its study, not in one stretch at the end (docs/decisions/cost-model-rate.md, "A monotone shape"); it takes the
median of every replica's rate over them.

The control (--control, CONTROL by default) is a cell the model was fitted on, run in every round as a case is and
reported apart from them: what the model says of a cell it saw, measured now, is mostly how far the host has
drifted since the fit (on a shared host, several per cent either way; the rest is the fit's residual on that cell
and the runs' noise). Beside the held-out CPU errors, the coverage gives them again with each prediction scaled by
the control's measured/predicted; the bounds judge the errors as measured.

The runs stay in results/model/validate-<time>/ (each case's profile.json beside its run) and are never fitted on
(model fit skips that folder).

Or in two steps, so that a campaign can interleave the held-out runs with the fit's studies (campaign model-check):
`--record` (record) runs rounds of the cases and the control and profiles each run with no model, into a
validate-<time>/ folder with RECORDING; after `model fit`, `--recorded` (priced_recordings) prices every complete
recording not priced yet through the same path as a validation's own runs (_priced), then the onset."""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ..analysis import costmodel, validation
from ..analysis.profile import ProfileError, Window, profile_files, source_of
from ..analysis.profile import read as read_profile
from ..core import scenario as scenarios
from ..core.config import (
    FALLING_BEHIND,
    IDLE_WINDOW_MAX,
    MODEL_ONSET_DRAIN_REPEATS,
    MODEL_VALIDATE_REPEATS,
    ReplbenchError,
    Settings,
)
from ..core.progress import Progress
from ..core.records import new_folder, shown_path
from ..core.results import (
    CostModel,
    Onset,
    OnsetDrain,
    OnsetRun,
    ProfileCheck,
    RecordedCase,
    RecordedProfile,
    RecordedRun,
    RecordingRecord,
    Validation,
    ValidationRun,
    read_meta,
    read_summary,
    recording_of,
    validation_of,
    write_record,
)
from ..core.results import load as load_json
from ..load import faults
from ..measure import binlogfile
from ..topology import knobs
from . import applycap
from .run import Clock, Run, RunOptions
from .study import RUN_OVERHEAD, TABLE_CHECKSUM_SECONDS, apply_seconds, run_seconds


class CaseError(ValueError):
    """A held-out case spelled wrong: the message says which and how to spell it."""


@dataclass(frozen=True)
class Case:
    """A held-out case: a scenario at a rate (requests/s) under one of the model's settings (costmodel.SETTINGS)."""

    scenario: str
    rate: int
    setting: str = "ROW-FULL"

    @property
    def text(self) -> str:
        """As --cases spells it: scenario@rate, and :SETTING where it is not ROW-FULL."""
        return f"{self.scenario}@{self.rate}" + ("" if self.setting == "ROW-FULL" else f":{self.setting}")

    @property
    def knobs(self) -> knobs.Knobs:
        return knobs.Knobs.from_values(costmodel.SETTINGS[self.setting].given())


CASE_FORMAT = "scenario@rate[:SETTING], e.g. write-mix@200:ROW-MINIMAL"


def parse_cases(text: str) -> tuple[Case, ...]:
    """--cases: 'mixed@200,write-mix@200:ROW-MINIMAL' as cases; CaseError (one line) for a bad spelling. The
    scenarios' names are not looked up here."""
    items = [part.strip() for part in text.split(",")]
    if not text.strip() or not all(items):
        raise CaseError(f"{text!r}: an empty case; write {CASE_FORMAT}, comma-separated")
    out = []
    for item in items:
        name, at, rest = item.partition("@")
        rate, colon, setting = rest.partition(":")
        if not name or not at:
            raise CaseError(f"{item!r}: write {CASE_FORMAT}")
        if not rate.isdigit() or int(rate) < 1:
            raise CaseError(f"{item!r}: the rate must be a whole number of requests/s, 1 or more")
        setting = setting.upper() if colon else "ROW-FULL"
        if setting not in costmodel.SETTINGS:
            raise CaseError(f"{item!r}: unknown setting {setting or '(none)'}; settings: "
                            f"{', '.join(costmodel.SETTINGS)}")
        out.append(Case(name, int(rate), setting))
    return tuple(out)


# below the knee at 8M on 2 cores; write-mix under ROW MINIMAL too (issue 50: the held-out mix under both images)
CASES = parse_cases("mixed@200,mixed@400,write-mix@100,write-mix@200,write-mix@100:ROW-MINIMAL,"
                    "write-mix@200:ROW-MINIMAL")
# the control: a cell the model was fitted on (study cost-model's single-row updates at 200/s, ROW FULL, 30 s runs),
# run in every round beside the held-out cases. Its error is mostly the host's drift since the fit, not the model's
# reach: the coverage scales the held-out CPU predictions by it to tell one from the other (docs/cost-model.md,
# "Validate")
CONTROL = Case("write", 200)
DURATION = 30.0
# copying the master's newest binlog(s) and decoding the run's window, per case: an estimate, not timed yet (one
# file of up to max_binlog_size, 256 MB, is copied and read whole by the decoder, which prints only the window; a
# 149 MB binlog decoded whole in 2.3 s here: docs/profile.md, "Speed")
PROFILE_SECONDS = 10.0
ONSET_ROWS = 500  # rows per transaction of the onset runs: between the fitted drains' 100 and 1,000
ONSET_LOADS = (0.8, 1.25)  # of the predicted onset: just below (lag bounded) and just above (falling behind)
ONSET_DURATION = 60.0
ONSET_REPLICA = "replica1"
ONSET_FILL_ROWS_PER_S = 3000  # the drain's backlog is written at this many rows/s: below the master's knee at 8M
ONSET_DRAIN_S = 3.0  # the drain's backlog: about this many seconds of apply at the predicted onset
ONSET_MIN_WRITES = 50
RECORDING = "recording.json"  # a validate-<time>/ folder of runs recorded by `--record`, not priced yet


def estimate(cases: tuple[Case, ...] = CASES, duration: float = DURATION,
             repeats: int = MODEL_VALIDATE_REPEATS, control: Case | None = CONTROL, runs: bool = True,
             onset: bool = True) -> float:
    """Seconds model validate should take: its runs (each case's repeats and the control's) with their profiles,
    the onset's drains, and the onset runs with their stopped replicas' catch-up; `--record` has the runs alone,
    `--recorded` the onset alone (drained as for `repeats` rounds)."""
    drain = apply_seconds(60, 1)  # about a minute of writing the backlog, then a few seconds per replica
    live = ONSET_DURATION + IDLE_WINDOW_MAX + RUN_OVERHEAD + TABLE_CHECKSUM_SECONDS  # faults: the whole table
    every = (*cases, control) if control else cases
    return ((repeats * sum(run_seconds(duration, c.rate) + PROFILE_SECONDS for c in every) if runs else 0.0)
            + ((drain_count(repeats) * drain + len(ONSET_LOADS) * live) if onset else 0.0))


def drain_count(repeats: int) -> int:
    """How many times the onset's backlog is drained: once a round, at least MODEL_ONSET_DRAIN_REPEATS."""
    return max(MODEL_ONSET_DRAIN_REPEATS, repeats)


def validate(settings: Settings, model: CostModel, cases: tuple[Case, ...] = CASES,
             duration: float = DURATION, onset_rows: int = ONSET_ROWS,
             onset_duration: float = ONSET_DURATION, onset_backlog: float = ONSET_DRAIN_S,
             repeats: int = MODEL_VALIDATE_REPEATS, control: Case | None = None) -> Validation:
    """The held-out cases (and the control, a fitted cell, where one is given) in rotated rounds, the onset drained
    after each round, then the live onset runs; validate.json rewritten after each run and drain; the validation
    as last written."""
    folder = _new_folder(settings)
    progress = Progress("model validate")
    out = Validation(folder=folder.name, repeats=repeats, cases=[])
    every = (*cases, control) if control else cases  # the control rotates with the cases, one run a round
    runs: list[list[ValidationRun]] = [[] for _ in every]
    order = validation.rounds(len(every), repeats)
    onset = _onset_plan(model, onset_rows, onset_backlog) if onset_rows else None
    drains = drain_count(repeats) if onset and onset.predicted is not None else 0
    for r, round_ in enumerate(order):
        for position, index in enumerate(round_):
            # the rows each run wrote; the whole table by the very last run (the onset runs have faults: they
            # check it)
            last = r == len(order) - 1 and position == len(round_) - 1 and not onset_rows
            _say_run(progress, r, len(order), every[index], index == len(cases))
            runs[index].append(_case(settings, model, every[index], duration, "table" if last else "rows", folder,
                                     progress))
            out = _filled(out, cases, control, runs)
            write_record(folder / "validate.json", out)
        if r < drains:
            out = _drained(settings, onset, folder, out, r, drains, progress)
    for n in range(len(order), drains):
        out = _drained(settings, onset, folder, out, n, drains, progress)
    if onset:
        out = _onset_end(settings, onset, onset_duration, folder, out, progress)
    return out


def record(settings: Settings, cases: tuple[Case, ...] = CASES, duration: float = DURATION,
           repeats: int = 1, control: Case | None = None) -> RecordingRecord:
    """`model validate --record`: the cases (and the control) run and profiled in rotated rounds as validate runs
    them, with no model yet: each run and its profile.json kept in a validate-<time>/ folder with RECORDING, priced
    later by priced_recordings (`--recorded`) once the model is fitted. So a campaign can interleave the held-out
    rounds with the fit's own studies, and the model's fit and its validation sample the same hours of a drifting
    host (docs/decisions/cost-model-rate.md, "Interleaved"). The rounds go on rotating where the newest recording
    not yet priced left off (its first round plus the rounds it completed); RECORDING says `complete` once every
    round ran (an interrupted recording is left out of the pricing). The recording as last written."""
    pending = pending_recordings(settings)
    last = _recording(pending[-1]) if pending else RecordingRecord()
    first = (last.first_round or 0) + _rounds_done(last)
    folder = _new_folder(settings)
    progress = Progress("model validate --record")
    every = (*cases, control) if control else cases
    runs: list[list[RecordedRun]] = [[] for _ in every]
    out = RecordingRecord(folder=folder.name, first_round=first, repeats=repeats, rounds_done=0, complete=False)
    for r, round_ in enumerate(validation.rounds(len(every), repeats, first)):
        for index in round_:
            _say_run(progress, first + r, first + repeats, every[index], index == len(cases))
            runs[index].append(_recorded_run(settings, every[index], duration, "rows", folder, progress))
            out = out.model_copy(update={"cases": [_recorded_case(c, got) for c, got in zip(cases, runs, strict=False)
                                                   if got]})
            if control and runs[-1]:
                out = out.model_copy(update={"control": _recorded_case(control, runs[-1])})
            write_record(folder / RECORDING, out)
        out = out.model_copy(update={"rounds_done": r + 1, "complete": r + 1 == repeats})
        write_record(folder / RECORDING, out)
    return out


def _rounds_done(recording: RecordingRecord) -> int:
    """The rounds a recording ran (one written before `rounds_done` was kept ran its `repeats`)."""
    done = recording.rounds_done  # record writes it as a number once kept, never null
    return int(done if done is not None else recording.repeats or 0)


def _recording(folder: Path) -> RecordingRecord:
    """A recording's RECORDING as its record; ReplbenchError (one line) where it cannot be read (a record that does
    not validate too: pydantic's error is a ValueError)."""
    try:
        return recording_of(load_json(folder / RECORDING))
    except (OSError, ValueError) as exc:
        raise ReplbenchError(f"{shown_path(folder / RECORDING)}: not a recording ({exc})") from None


def pending_recordings(settings: Settings) -> list[Path]:
    """The recordings under results/model that no complete validation has priced yet, oldest first (a `--recorded`
    interrupted before its end leaves them to the next)."""
    model = settings.results / "model"
    priced: set[str] = set()
    for path in model.glob(f"{costmodel.HELD_OUT}*/validate.json"):
        try:
            doc = validation_of(load_json(path))
        except (OSError, ValueError) as exc:
            raise ReplbenchError(f"{shown_path(path)}: not a validation ({str(exc).splitlines()[0]})") from None
        if doc.complete is not False:  # absent: written before the key, by a `--recorded` that ran to its end
            priced.update(doc.recordings or [])
    return [path.parent for path in sorted(model.glob(f"{costmodel.HELD_OUT}*/{RECORDING}"))
            if path.parent.name not in priced]


def priced_recordings(settings: Settings, model: CostModel, onset_rows: int = ONSET_ROWS,
                      onset_duration: float = ONSET_DURATION,
                      onset_backlog: float = ONSET_DRAIN_S) -> Validation:
    """`model validate --recorded`: every complete recording not yet priced (record's), its runs priced by the model
    as validate prices a run it has just made, the cases' repeats gathered over the recordings in their order (an
    interrupted recording is named and left out: a resumed campaign recorded its round again); then the onset,
    drained drain_count(the most repeats a case has) times in one stretch (its backlog is sized by the model, so it
    cannot come before the fit) and run live. validate.json names the recordings it priced and says `complete` at
    its end: each recording is priced once by a validation that ran to its end; the validation as last written.
    ReplbenchError where there is none, or where the recordings have different controls."""
    pending = pending_recordings(settings)
    docs = {folder: _recording(folder) for folder in pending}
    recordings = [folder for folder in pending if docs[folder].complete is not False]  # absent: before the key
    if not recordings:
        raise ReplbenchError("no recorded runs to price: record them first with `./run.sh model validate --record` "
                             "(each recording is priced once" + (f"; {len(pending)} interrupted, left out)"
                                                                  if pending else ")"))
    controls_named = {_case_key(c) for folder in recordings if (c := docs[folder].control) is not None}
    if len(controls_named) > 1:
        raise ReplbenchError("the recordings have different controls ("
                             + ", ".join(sorted(f"{c.scenario}@{c.rate}:{c.setting}" for c in controls_named))
                             + "): price recordings of one control together")
    folder = _new_folder(settings)
    progress = Progress("model validate --recorded")
    left_out = [f.name for f in pending if f not in recordings]
    out = Validation(folder=folder.name, recordings=[r.name for r in recordings], complete=False,
                     rounds=sum(_rounds_done(docs[r]) for r in recordings), cases=[], left_out=left_out)
    for name in left_out:
        progress.say(f"{name}: an interrupted recording, left out", final=True)
    cases: dict[validation.Identity, list[ValidationRun]] = {}
    controls: list[ValidationRun] = []
    for recording in recordings:
        doc = docs[recording]
        progress.say(f"pricing {recording.name}'s runs", final=True)
        for entry in doc.cases or []:
            cases.setdefault(_case_key(entry), []).extend(_priced(model, recording, run, f"../{recording.name}/")
                                                          for run in _repeats(entry))
        if doc.control is not None:
            controls.extend(_priced(model, recording, run, f"../{recording.name}/") for run in _repeats(doc.control))
    out = out.model_copy(update={"cases": [validation.case_of(key, got) for key, got in cases.items()]})
    if controls:
        out = out.model_copy(update={"control": validation.case_of(next(iter(controls_named)), controls)})
    repeats = max((len(got) for got in (*cases.values(), controls)), default=0)
    out = _covered(out.model_copy(update={"repeats": repeats}))
    write_record(folder / "validate.json", out)
    onset = _onset_plan(model, onset_rows, onset_backlog) if onset_rows else None
    if onset and onset.predicted is not None:
        drains = drain_count(repeats)
        for n in range(drains):
            out = _drained(settings, onset, folder, out, n, drains, progress)
    if onset:
        out = _onset_end(settings, onset, onset_duration, folder, out, progress)
    out = out.model_copy(update={"complete": True})
    write_record(folder / "validate.json", out)
    return out


def _case_key(case: RecordedCase) -> validation.Identity:
    """A recorded case's identity: scenario, rate and setting (ROW-FULL in a recording of before settings)."""
    return validation.Identity(case.scenario, case.rate, case.setting if case.setting is not None else "ROW-FULL")


def _repeats(case: RecordedCase) -> list[RecordedRun]:
    """A recorded case's runs (record writes them with every case)."""
    assert case.repeats is not None
    return case.repeats


def _new_folder(settings: Settings) -> Path:
    """results/model/validate-<time>/, new (-2, -3, … after the time where one of that second exists)."""
    base = settings.results / "model" / f"{costmodel.HELD_OUT}{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"
    base.parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, 100):
        folder = base.with_name(base.name + (f"-{n}" if n > 1 else ""))
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        return folder
    raise ReplbenchError(f"{shown_path(base)}: 99 validation folders of one second already")


def _say_run(progress: Progress, r: int, rounds: int, case: Case, control: bool) -> None:
    progress.say(f"round {r + 1} of {rounds}: {case.text}" + (" (the control: a cell of the fit)" if control else ""),
                 final=True)


def _covered(out: Validation) -> Validation:
    """The validation with its coverage (its summary) over what it holds now."""
    return out.model_copy(update={"summary": validation.coverage(out)})


def _filled(out: Validation, cases: tuple[Case, ...], control: Case | None,
            runs: list[list[ValidationRun]]) -> Validation:
    """validate.json's cases, control and coverage from the runs priced so far."""
    out = out.model_copy(update={"cases": [validation.case_of(_case_identity(c), got)
                                           for c, got in zip(cases, runs[:len(cases)], strict=True) if got]})
    if control and runs[-1]:
        out = out.model_copy(update={"control": validation.case_of(_case_identity(control), runs[-1])})
    return _covered(out)


def _drained(settings: Settings, onset: OnsetPlan | None, folder: Path, out: Validation, n: int,
             drains: int, progress: Progress) -> Validation:
    """The onset's backlog drained once more (drain n + 1 of `drains`), validate.json rewritten with it and the
    drains' median so far (an interrupted validation keeps them)."""
    assert onset is not None
    progress.say(f"onset drain {n + 1} of {drains}: a backlog of {onset.writes:,} transactions of "
                 f"{onset.first.rows} rows", final=True)
    so_far = _onset_so_far(out, onset)
    drain = _drain(settings, onset, folder)
    got = _drain_median(so_far.model_copy(update={"drains": [*(so_far.drains or []), drain]}), onset)
    out = out.model_copy(update={"onset": got})
    write_record(folder / "validate.json", out)
    return out


def _onset_end(settings: Settings, onset: OnsetPlan, duration: float, folder: Path, out: Validation,
               progress: Progress) -> Validation:
    """After the drains: the live onset runs, then the coverage over every figure, validate.json rewritten."""
    out = _covered(out.model_copy(update={
        "onset": _onset_live(settings, onset, _onset_so_far(out, onset), duration, folder, progress)}))
    write_record(folder / "validate.json", out)
    return out


def _onset_so_far(out: Validation, onset: OnsetPlan) -> Onset:
    """The onset as the validation holds it (its drains so far), or as planned where nothing was drained yet."""
    return out.onset if out.onset is not None else onset.first


def _recorded_case(case: Case, runs: list[RecordedRun]) -> RecordedCase:
    """A case of a recording: its identity and its runs so far (a copy: the caller goes on appending)."""
    return RecordedCase(scenario=case.scenario, rate=case.rate, setting=case.setting, repeats=list(runs))


def _case_identity(case: Case) -> validation.Identity:
    return validation.Identity(case.scenario, case.rate, case.setting)


def _case(settings: Settings, model: CostModel, case: Case, duration: float, checksum: str, folder: Path,
          progress: Progress) -> ValidationRun:
    """One run of a held-out case under its setting, predicted from its counts and from its binlog's profile."""
    return _priced(model, folder, _recorded_run(settings, case, duration, checksum, folder, progress))


def _recorded_run(settings: Settings, case: Case, duration: float, checksum: str, folder: Path,
                  progress: Progress) -> RecordedRun:
    """One run of a case under its setting, and (where the run is usable) the master's binlog over its attack
    window profiled into <run>/profile.json: what _priced prices, at once or after a fit."""
    sc = scenarios.load(case.scenario)
    run_folder = new_folder(settings, sc, case.rate, parent=folder)
    run = Run(settings, sc, case.rate, RunOptions(duration=duration, knobs=case.knobs, checksum=checksum),
              run_folder, progress)
    result = run.execute()
    if costmodel.observation(result.summary, read_meta(run_folder)) is None:
        return RecordedRun(run=run_folder.name)  # not usable by the model: not profiled, no profile key
    return RecordedRun(run=run_folder.name, profile=_profiled(settings, result.clock, run_folder, progress))


def _priced(model: CostModel, folder: Path, entry: RecordedRun, prefix: str = "") -> ValidationRun:
    """A recorded run (_recorded_run's, under folder) predicted from its counts and from its profile; its run and
    profile named with prefix (the way from the validation's folder to the recording's)."""
    assert entry.run is not None  # _recorded_run writes it
    run_folder = folder / entry.run
    obs = costmodel.observation(read_summary(run_folder), read_meta(run_folder))
    if not obs:
        return ValidationRun(run=prefix + entry.run, usable=False)
    # model_copy's update marks the fields set: validate.json writes the run's name beside its figures
    out = validation.from_counts(model, obs).model_copy(update={"run": prefix + entry.run, "usable": True})
    captured = entry.profile
    if captured is None:
        return out
    if captured.error:
        return out.model_copy(update={"profile": ProfileCheck(error=captured.error)})
    try:
        profile = read_profile(run_folder / "profile.json")
    except ProfileError as exc:
        return out.model_copy(update={"profile": ProfileCheck(error=str(exc).splitlines()[0])})
    assert captured.file is not None  # _profiled writes the file, or an error
    # the profile's file (named from the validation's folder) and window beside its figures
    priced = validation.from_profile(model, profile, obs).model_copy(
        update={**captured.model_dump(exclude_unset=True), "file": prefix + captured.file})
    return out.model_copy(update={"profile": priced})


def attack_window(clock: Clock) -> Window:
    """The run's attack, from its start to its end on its one clock, as a profile's window: whole seconds of the
    decoder's clock that hold it (the second it started in to the one it ended in)."""
    assert clock.start is not None and clock.end is not None
    return Window(binlogfile.local_second(clock.wall(clock.start)), binlogfile.local_second(clock.wall(clock.end)) + 1)


def _profiled(settings: Settings, clock: Clock, run_folder: Path, progress: Progress) -> RecordedProfile:
    """The master's binlogs copied as `./run.sh profile` copies them (--read-from-remote-server: a topology file's
    master, or the native one), profiled over the attack window into <run>/profile.json; its file and window, or
    the error (one line)."""
    window = attack_window(clock)
    copies = Path(tempfile.mkdtemp(prefix="replbench-binlogs-"))
    try:
        files, listed = binlogfile.copy_from_server(settings, copies, window.since, progress)
        progress.say(f"profiling the master's binlog over the run ({binlogfile.clock(window.since or 0)} to "
                     f"{binlogfile.clock(window.until or 0)})", final=True)
        profile = profile_files(files, window, source_of("server", listed.where, window),
                                covered=binlogfile.local_second(listed.now))
    except (ReplbenchError, ProfileError) as exc:
        return RecordedProfile(error=str(exc).splitlines()[0])
    finally:
        shutil.rmtree(copies, ignore_errors=True)
    write_record(run_folder / "profile.json", profile)
    source = profile.source
    # the window given even where the profile has none: recording.json writes it as null
    return RecordedProfile(file=f"{run_folder.name}/profile.json", since=source.since if source else None,
                           until=source.until if source else None)


@dataclass(frozen=True)
class OnsetPlan:
    """The onset's check as validate plans it: its record before any drain or run (first: the prediction, and
    the figures still to measure given as null, as validate.json writes them until then), and the backlog each
    drain writes (write-bulk of the onset's rows, `writes` of them at `fill` a second)."""
    first: Onset
    sc: scenarios.Scenario
    fill: int
    writes: int

    @property
    def predicted(self) -> float | None:
        """The predicted onset (transactions/s); None where the model cannot say (nothing is drained or run)."""
        return None if self.first.predicted is None else self.first.predicted.value


def _onset_plan(model: CostModel, rows: int, backlog_s: float) -> OnsetPlan:
    """The predicted onset, and the held-out drain's backlog: each replica alone applying that many transactions of
    such rows (its rate is the onset under the model's own premise)."""
    predicted = validation.interval_of(costmodel.onset(model, rows))
    # every figure still to measure given (null): validate.json writes the keys from the first drain on
    first = Onset(rows=rows, replica=ONSET_REPLICA, predicted=predicted, runs=[], drains=[], drain_measured=None,
                  drain_error_pct=None, measured=None, error_pct=None, live_note=None)
    rate = None if predicted is None else predicted.value
    writes = max(ONSET_MIN_WRITES, round(backlog_s * rate)) if rate is not None else 0
    fill = max(1, round(ONSET_FILL_ROWS_PER_S / rows))
    return OnsetPlan(first, replace(scenarios.load("write-bulk"), bulk_rows=rows), fill, writes)


def _drain(settings: Settings, onset: OnsetPlan, folder: Path) -> OnsetDrain:
    """One drain of the onset's backlog, each replica alone."""
    drain_folder = new_folder(settings, onset.sc, onset.fill, parent=folder / "apply")
    data = applycap.measure(settings, onset.sc, knobs.Knobs(), onset.writes, onset.fill, drain_folder)
    return OnsetDrain(folder=f"apply/{drain_folder.name}", writes=onset.writes, fill_rate=onset.fill,
                      status=data.status, apply_rate_trx_per_s=[
                          r.apply_rate_trx_per_s for r in (data.replicas or {}).values()
                          if r is not None and r.apply_rate_trx_per_s])


def _drain_median(got: Onset, onset: OnsetPlan) -> Onset:
    """The drains so far against the predicted onset: the median of every replica's rate over them (the record as
    it was where there is no rate or no prediction)."""
    rates = [rate for d in got.drains or [] for rate in d.apply_rate_trx_per_s or []]
    if not rates or onset.predicted is None:
        return got
    measured = statistics.median(rates)
    return got.model_copy(update={"drain_measured": measured,
                                  "drain_error_pct": validation.error_pct(onset.predicted, measured)})


def _onset_live(settings: Settings, onset: OnsetPlan, got: Onset, duration: float, folder: Path,
                progress: Progress) -> Onset:
    """The drains' median against the predicted onset (got: the onset with its drains), and live runs just below
    and just above it."""
    sc, predicted = onset.sc, onset.predicted
    if predicted is None:
        return got
    got = _drain_median(got, onset)
    runs = list(got.runs or [])
    # live: the other replicas stop at the start and replicate again one second before the last request (the
    # run's catch-up then times their backlog too, instead of waiting its timeout out on a stopped replica)
    others = [n.name for n in settings.replicas if n.name != ONSET_REPLICA]
    alone = tuple(sorted((faults.parse(f"{action}:{name}@{at:g}s") for name in others
                         for action, at in (("stop-replication", 0), ("start-replication", max(0.5, duration - 1)))),
                         key=lambda f: f.at))
    for load in ONSET_LOADS:
        rate = max(1, round(load * predicted))
        run_folder = new_folder(settings, sc, rate, parent=folder)
        summary = Run(settings, sc, rate, RunOptions(duration=duration, faults=alone), run_folder,
                      progress).execute().summary
        lag = (summary.lag or {}).get(ONSET_REPLICA)
        growth = lag.growth_s_per_s if lag else None
        tps = costmodel.node_counters(summary, "master").transactions_per_s
        behind = growth is not None and growth >= FALLING_BEHIND
        runs.append(OnsetRun(load=load, rate=rate, run=run_folder.name, status=summary.status,
                             success=summary.success, master_transactions_per_s=tps,
                             lag_growth_s_per_s=growth, fell_behind=behind,
                             applied_per_s=round(tps * (1 - growth), 2)
                             if behind and tps and growth is not None else None,
                             replica_room_cores=None if settings.topology else
                             validation.replica_room(summary, os.cpu_count() or 1, ONSET_REPLICA)))
    live = validation.live_onset(runs, predicted, ONSET_REPLICA)
    return got.model_copy(update={"runs": runs, "measured": live.measured, "error_pct": live.error_pct,
                                  "live_note": live.live_note})
