"""A campaign: the studies, sweeps, apply-capacity drains, big transactions and runs that make a report, run at one
commit, one after another, into one folder (results/campaign-<name>-<time>/), so that a report can come from it
alone. A campaign file (campaigns/*.toml) lists its units as ./run.sh command lines:

    description = "one cell set per question"
    [[units]]
    command = "study semi-sync --repeat 2"
    [[units]]
    command = "sweep read --duration 30s"
    minutes = 6          # an estimate where the harness has none of its own (sweeps stop at their first failure)
    [[units]]
    command = "sweep read --duration 30s"
    env = { REPLBENCH_ADMISSION = "none" }   # settings for this unit only (REPLBENCH_* names, checked)

The runner refuses a dirty tree unless told (--allow-dirty), records the commit, the versions and the machine's
calibration before and after each unit (campaign.json), shows elapsed time and an ETA, and --resume continues the
newest unfinished campaign of that name at the same commit without redoing the units that finished (a unit that
failed, say after a lost node, runs again). Each unit runs as its own ./run.sh process with REPLBENCH_RESULTS set
to the campaign's folder; its output goes to units/<n>.log, whose last line says the command returned. --resume
first re-judges units recorded as failed from their logs (recorded in campaign.json); at another commit it may
only finish a campaign that way, never run a unit.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from ..core import named, processes
from ..core import scenario as scenarios
from ..core.config import IDLE_WINDOW_MAX, ROOT, SETTING_LIST, Settings, parse_duration
from ..core.progress import Progress
from ..core.records import DONE, EXIT_INTERRUPTED, STATUS_INTERRUPTED, UNIT_FAILED
from ..core.results import CampaignRecord, CampaignUnit, Rejudged, merged, read_campaign, write_record
from ..core.schema import FileModel, located, validate
from ..measure.cpu import calibrate
from . import modelcheck, studyfile
from .study import RUN_OVERHEAD, TABLE_CHECKSUM_SECONDS, Plan

CAMPAIGN_DIR = ROOT / "campaigns"
FAILED, INTERRUPTED = UNIT_FAILED, STATUS_INTERRUPTED  # a unit's status in campaign.json
UNIT_ENV = "REPLBENCH_CAMPAIGN_UNIT"  # set for a unit's command: it then prints UNIT_FINISHED as its last line
UNIT_FINISHED = "replbench: unit finished"  # printed by the command (cli.main) once it returned, exit 0 or 1
# What each kind of unit printed at its end before UNIT_FINISHED existed (for units logged by older commits): a run,
# a study, a sweep, apply capacity, big transactions, `model fit` (its model's path) and `model validate` (its table).
FINISHED_MARKS = ("Results:", "study folder:", "max sustainable", "Apply capacity", "Big transactions",
                  "\nmodel: ", "| case | transactions | rows |")


class CampaignError(Exception):
    """A campaign file is missing or invalid, or a campaign cannot start; the message says why."""


@dataclass(frozen=True)
class Unit:
    command: tuple[str, ...]
    estimate_s: float
    env: tuple[tuple[str, str], ...] = ()  # REPLBENCH_* settings for this unit only

    @property
    def text(self) -> str:
        return " ".join(shlex.quote(a) for a in self.command)

    @property
    def shell(self) -> str:
        """The unit as a user would type it: its settings, then ./run.sh and the command."""
        return "".join(f"{k}={shlex.quote(v)} " for k, v in self.env) + f"./run.sh {self.text}"


@dataclass(frozen=True)
class Campaign:
    name: str
    description: str
    units: tuple[Unit, ...]

    def estimate(self) -> float:
        return sum(u.estimate_s for u in self.units)

    def describe(self) -> str:
        lines = [f"campaign {self.name}: {self.description}"]
        for i, unit in enumerate(self.units, 1):
            lines.append(f"  {i:2d}. {unit.shell}  (about {unit.estimate_s / 60:.0f} min)")
        lines.append(f"  {len(self.units)} units, estimated {self.estimate() / 60:.0f} min")
        return "\n".join(lines)


def available() -> list[str]:
    return named.available(CAMPAIGN_DIR)


def resolve(name: str) -> Path:
    path = named.find(name, CAMPAIGN_DIR)
    if path is None:
        raise CampaignError(f"no campaign file {name!r}; campaigns: {', '.join(available()) or 'none'}")
    return path


IDLE_SETTING = next(s for s in SETTING_LIST if s.name == "idle_window")  # a unit's env may fix its idle window


def _estimate(args: list[str], minutes: float | None, env: dict[str, str] | None = None) -> float:
    """Seconds a unit should take: the file's estimate, else the study's own (with the unit's fixed idle window,
    REPLBENCH_IDLE_WINDOW in its env, where it sets one), else a rough one per command."""
    if minutes is not None:
        return 60.0 * minutes
    def flag(name: str) -> str | None:
        return next((args[i + 1] for i, a in enumerate(args[:-1]) if a == name), None)

    idle = IDLE_SETTING.parse(env[IDLE_SETTING.env]) if env and IDLE_SETTING.env in env else 0.0
    if args[0] == "study":
        repeat, rate, duration = flag("--repeat"), flag("--rate"), flag("--duration")
        only = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--only"]
        plan = Plan.of(studyfile.only(studyfile.load(args[1]), only), int(repeat) if repeat else None,
                       int(rate) if rate else None, parse_duration(duration) if duration else None, idle)
        return plan.estimate()
    if args[0] == "big-transaction":
        return 15 * 60.0
    if args[0] in ("sweep", "apply-capacity"):
        return 10 * 60.0
    if args[0] == "model":
        if args[1:2] != ["validate"]:
            return 30.0
        repeat = flag("--repeat")
        runs, onset = "--recorded" not in args, "--record" not in args
        if repeat and runs:
            return modelcheck.estimate(repeats=int(repeat), runs=runs, onset=onset)
        return modelcheck.estimate(runs=runs, onset=onset)
    duration = flag("--duration")
    return (parse_duration(duration) if duration else 60.0) + (idle or IDLE_WINDOW_MAX) + RUN_OVERHEAD + \
        TABLE_CHECKSUM_SECONDS


def _check(args: list[str]) -> None:
    """A unit's command names something that exists (the command itself checks its flags when it runs)."""
    if not args:
        raise ValueError("a unit's command is empty")
    if args[0] == "study":
        if len(args) < 2:
            raise ValueError("'study' needs a study name")
        studyfile.load(args[1])
    elif args[0] in ("sweep", "apply-capacity"):
        if len(args) < 2:
            raise ValueError(f"'{args[0]}' needs a scenario")
        scenarios.load(args[1])
    elif args[0] == "model":
        if args[1:2] not in (["fit"], ["validate"]):
            raise ValueError("a campaign's 'model' unit is 'model fit' or 'model validate'")
    elif args[0] != "big-transaction":
        scenarios.load(args[0])  # `<scenario> <rate>`
        if len(args) < 2 or not args[1].isdigit():
            raise ValueError(f"a run needs a rate: '{' '.join(args)}'")


def _unit_env(raw: object) -> object:
    """A unit's env table as text: known REPLBENCH_* settings only (the settings table's), each value (any TOML
    value: what it reads as in the environment) valid for its setting; in the file's order. Anything but a table is
    left as it is, for the field's own check to refuse."""
    if not isinstance(raw, dict):
        return raw
    known = {s.env: s for s in SETTING_LIST}
    for key, value in raw.items():
        if key not in known:
            raise ValueError(f"{key} is not a replbench setting (see docs/settings.md)")
        try:
            known[key].parse(str(value))
        except ValueError as exc:
            raise ValueError(f"{key}={value}: {exc}") from None
    return {key: str(value) for key, value in raw.items()}


def _command(text: str) -> str:
    try:
        _check(shlex.split(text))
    except (studyfile.StudyError, scenarios.ScenarioError) as exc:
        raise ValueError(str(exc)) from None
    return text


class UnitTable(FileModel):
    command: Annotated[str, AfterValidator(_command)]  # ./run.sh's arguments, checked to name what exists
    minutes: Annotated[float, Field(gt=0)] | None = None  # the estimate, where the harness has none of its own
    env: Annotated[dict[str, str], BeforeValidator(_unit_env)] = {}  # TOML values, checked, held as their text


class CampaignTables(FileModel):
    description: str = ""
    units: list[UnitTable] = []

    @model_validator(mode="after")
    def _some_units(self) -> CampaignTables:
        if not self.units:
            raise ValueError("no [[units]]: nothing to run")
        return self


def load(name: str) -> Campaign:
    path = resolve(name)
    source = path.read_text()
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        raise CampaignError(f"{path}: {exc}") from None
    checked = validate(CampaignTables, data, str(path), source, CampaignError)
    units = []
    for i, table in enumerate(checked.units):
        args = shlex.split(table.command)
        try:  # the study's own estimate reads the command's flags (--repeat 2)
            estimate = _estimate(args, table.minutes, table.env)
        except (ValueError, studyfile.StudyError) as exc:
            raise CampaignError(located(str(path), source, ("units", i, "command"), str(exc))) from None
        units.append(Unit(tuple(args), estimate, tuple(table.env.items())))
    return Campaign(path.stem, checked.description, tuple(units))


def git_state(root: Path = ROOT) -> tuple[str, bool]:
    """(short commit, dirty) of the checkout (core/processes.git_state: results/'s own files leave it clean)."""
    commit, dirty = processes.git_state(root)
    return (commit[:7] if commit else "unknown"), dirty


def _unfinished(results: Path, name: str, commit: str | None) -> Path | None:
    """The newest campaign folder of that name (at that commit, unless None) that has units left to run."""
    for folder in sorted(results.glob(f"campaign-{name}-*"), reverse=True):
        try:
            data = read_campaign(folder)
        except (OSError, ValueError):
            continue
        if (commit is None or data.commit == commit) and data.status != DONE:
            return folder
    return None


def _check_same_units(folder: Path, data: CampaignRecord, campaign: Campaign) -> None:
    # a unit recorded without its settings (campaign.json from before units had them) had none
    if ([(u.command, u.env if u.env is not None else {}) for u in data.units or []]
            != [(u.text, dict(u.env)) for u in campaign.units]):
        raise CampaignError(f"{folder.name} was started from another version of the campaign file")


def _with_unit(data: CampaignRecord, i: int, part: CampaignUnit) -> CampaignRecord:
    """campaign.json with its unit `i` (1-based) given the fields `part` was given."""
    units = list(data.units or [])
    units[i - 1] = merged(units[i - 1], part)
    return data.model_copy(update={"units": units})


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def rejudge(folder: Path, data: CampaignRecord, commit: str) -> CampaignRecord:
    """campaign.json with its units recorded as failed that ran to their end by the completion check of this commit
    (their log shows it, exit 0 or 1) marked done, nothing rerun, and recorded in its `rejudged` (which units, at
    which commit, why)."""
    units = [i for i, r in enumerate(data.units or [], 1)
             if r.status == FAILED and r.exit_code in (0, 1) and r.log
             and (folder / r.log).exists() and _finished(folder / r.log)]
    if not units:
        return data
    for i in units:
        data = _with_unit(data, i, CampaignUnit(status=DONE))
    judged = Rejudged(commit=commit, units=units, at=_now(),
                      why="ran to their end (exit 0 or 1, results printed) but the completion check of the commit "
                          "that ran them missed it; nothing was rerun")
    return data.model_copy(update={"rejudged": [*(data.rejudged or []), judged]})


def run(settings: Settings, campaign: Campaign, *, resume: bool = False, allow_dirty: bool = False) -> CampaignRecord:
    """Run every unit not yet finished; returns campaign.json's record, as written last."""
    commit, dirty = git_state()
    if dirty and not allow_dirty:
        raise CampaignError("the working tree has uncommitted changes: a campaign's figures must come from one "
                            "commit (commit first, or --allow-dirty to run anyway, recorded as such)")
    folder = _unfinished(settings.results, campaign.name, commit) if resume else None
    if resume and folder is None:
        other = _unfinished(settings.results, campaign.name, None)
        if other is None:
            raise CampaignError(f"no unfinished campaign {campaign.name!r} at commit {commit} to resume")
        data = read_campaign(other)  # re-judged, and written back only if that leaves no unit to run
        _check_same_units(other, data, campaign)
        judged = rejudge(other, data, commit)
        if any(r.status != DONE for r in judged.units or []):
            raise CampaignError(f"{other.name} was started at commit {data.commit} and has units to run: "
                                "resume it at that commit (its figures must come from one commit)")
        judged = judged.model_copy(update={"status": DONE, "finished_at": _now()})
        write_record(other / "campaign.json", judged)
        return judged
    if folder is None:
        folder = settings.results / f"campaign-{campaign.name}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"
        (folder / "units").mkdir(parents=True)
        data = CampaignRecord(name=campaign.name, description=campaign.description, commit=commit, dirty=dirty,
                              started_at=_now(),
                              units=[CampaignUnit(command=u.text, env=dict(u.env), estimate_s=u.estimate_s,
                                                  status="pending") for u in campaign.units])
    else:
        data = read_campaign(folder)  # the run goes on recording in it, keeping every key it holds
        _check_same_units(folder, data, campaign)
        data = rejudge(folder, data, commit)
    data = data.model_copy(update={"status": "running", "folder": folder.name})
    write_record(folder / "campaign.json", data)
    progress = Progress(f"campaign {campaign.name}")
    begin = time.monotonic()
    env = {**os.environ, **settings.as_env(), "REPLBENCH_RESULTS": str(folder), UNIT_ENV: "1"}
    try:
        for i, unit in enumerate(campaign.units, 1):  # as many as data's units: _check_same_units saw to it
            if (data.units or [])[i - 1].status == DONE:
                continue
            left = sum(u.estimate_s for u, r in zip(campaign.units, data.units or []) if r.status != DONE)
            progress.say(f"unit {i}/{len(campaign.units)}: {unit.shell} — elapsed "
                         f"{(time.monotonic() - begin) / 60:.0f} min, about {left / 60:.0f} min left", final=True)
            data = _with_unit(data, i, CampaignUnit(calibration_before=calibrate(),
                                                    started_at=time.strftime("%H:%M:%S", time.gmtime())))
            started = time.monotonic()
            with open(folder / "units" / f"{i}.log", "w") as log:
                proc = subprocess.run([sys.executable, "-m", "replbench", *unit.command], cwd=ROOT,
                                      env={**env, **dict(unit.env)},
                                      stdout=log, stderr=subprocess.STDOUT)
            took = round(time.monotonic() - started, 1)
            status = (DONE if proc.returncode in (0, 1) and _finished(folder / "units" / f"{i}.log")
                      else INTERRUPTED if proc.returncode == EXIT_INTERRUPTED else FAILED)
            data = _with_unit(data, i, CampaignUnit(seconds=took, exit_code=proc.returncode,
                                                    calibration_after=calibrate(), log=f"units/{i}.log",
                                                    status=status))
            write_record(folder / "campaign.json", data)
            if status == INTERRUPTED:
                raise KeyboardInterrupt
    except KeyboardInterrupt:
        data = data.model_copy(update={"status": INTERRUPTED})
    else:
        data = data.model_copy(update={"status": DONE if all(r.status == DONE for r in data.units or []) else FAILED})
    data = data.model_copy(update={"finished_at": _now()})
    write_record(folder / "campaign.json", data)
    return data


def _finished(log: Path) -> bool:
    """A unit that ran to its end: its command returned (exit 1 may still mean a measured failure, e.g. a guard
    under --strict, which is a result, not a reason to run the unit again) and said so last, or, logged by an older
    commit, printed its results."""
    text = log.read_text(errors="replace")
    lines = text.rstrip().splitlines()
    return "Traceback" not in text and ((bool(lines) and lines[-1].startswith(UNIT_FINISHED))
                                        or any(mark in text for mark in FINISHED_MARKS))


def render(c: CampaignRecord) -> str:
    lines = [f"campaign {c.name} at {c.commit}{' (dirty)' if c.dirty else ''}: {c.status} — {c.folder}"]
    for i, r in enumerate(c.units or [], 1):
        calib = (f", calibration {r.calibration_before:g} → {r.calibration_after:g}"
                 if r.calibration_after is not None else "")
        took = f", {r.seconds / 60:.1f} min" if r.seconds is not None else ""
        env = "".join(f"{k}={shlex.quote(str(v))} " for k, v in (r.env or {}).items())
        lines.append(f"  {i:2d}. {r.status:<11} {env}./run.sh {r.command}{took}{calib}")
    return "\n".join(lines)
