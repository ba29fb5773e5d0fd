"""One benchmark run: a constant-rate vegeta attack of one scenario against the running topology, and a complete,
self-describing results folder (meta.json, targets, results.bin, vegeta reports, cpu.csv, io.csv, lag.csv,
positions.csv, memory.csv, latency.png, summary.json, block.txt, harness.log when something went wrong).

Order of a run: topology ready → every knob applied and read back → warm-up → app restarted → replicas caught up →
targets → heartbeat on and its binlog cost calibrated → counters snapshotted → attack (live progress; at the moment
the last request is sent the master's GTID position is taken and each replica's catch-up timed from it, in
parallel) → counters snapshotted → vegeta reports → consistency check on the surviving nodes (writes) → guards →
summary and printed block. Every sampler runs on one clock whose zero is set once, before any of them starts.

A lost node never loses the run: each phase after the attack is guarded, the samplers record the node's loss
(faults), and every report that the recorded data allow is written. Ctrl-C stops vegeta gracefully, keeps the
partial results, reports them marked "interrupted" and exits 130.
"""

from __future__ import annotations

import os
import platform
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import TypeVar

import psutil

from ..analysis import judge, limits, soak, summary
from ..analysis import writeback as writeback_figures
from ..core import harnesslog, processes, results, sql
from ..core.config import (
    CATCH_UP_TIMEOUT,
    PROGRESS_INTERVAL,
    REQUEST_TIMEOUT,
    ROOT,
    SEARCH_GUARD_MIN_PREFIX,
    Node,
    Settings,
    idle_window,
)
from ..core.progress import Progress
from ..core.records import (
    RESULTS_SCHEMA,
    STATUS_FAILED,
    STATUS_INTERRUPTED,
    STATUS_OK,
    STATUS_RUNNING,
    exit_code,
    without_machine_paths,
)
from ..core.results import write_refused
from ..core.scenario import Scenario
from ..load import attack, cpus, faults, remote, targets
from ..measure import binlog, counters, cpu, nodeexporter, rowcheck, samplers, timeline, writeback
from ..report.block import render_block
from ..topology import appserver, dataset, knobs, links, nodes, servervars
from ..topology.install import VEGETA_VERSION, ensure_vegeta, mariadb_binaries
from . import prepare

T = TypeVar("T")


@dataclass(frozen=True)
class RunOptions:
    duration: float
    timeout: float = REQUEST_TIMEOUT
    knobs: knobs.Knobs = field(default_factory=knobs.Knobs)
    catch_up_timeout: float = CATCH_UP_TIMEOUT
    strict: bool = False  # a tripped guard makes the run exit 1
    faults: tuple[faults.Fault, ...] = ()  # carried out on purpose during the attack
    links: tuple[links.Link, ...] = ()  # replication (or app) connections through a toxiproxy latency
    attackers: int = 1  # vegeta attack processes sharing the rate
    cpus: str = ""  # --cpus: each group pinned to its cores ("" = every group on every core)
    nonce: str = ""  # --nonce: the values the updates write (a new one per run unless replaying a run)
    # the consistency check after a write run: "table" (CHECKSUM TABLE, ~14 s for 8M rows on 3 nodes) or "rows"
    # (the rows the targets write, every column; a study's runs but the last of each stretch, which checks the table)
    checksum: str = "table"
    soak_window: float | None = None  # a soak (./run.sh soak): InnoDB's counters every second, lag growth per window
    clients: int | None = None  # --clients N: a closed loop of N clients, the rate only sizing the targets


@dataclass(frozen=True)
class Plan:
    """What one run is asked to do, fixed before it starts: the settings it runs with (a scenario's lag-aware reads,
    the app's nodes reached by proxy), the scenario, the rate, the options (the knobs among them as
    topology/knobs.Knobs, whose defaults are the reference setup) and vegeta's options derived from them."""

    settings: Settings
    scenario: Scenario
    rate: int
    options: RunOptions
    attack: attack.AttackOptions

    @classmethod
    def of(cls, settings: Settings, scenario: Scenario, rate: int, options: RunOptions) -> Plan:
        # a scenario may switch lag-aware reads on for the app it runs against
        s = settings if scenario.max_lag is None else settings.with_overrides(max_lag=scenario.max_lag)
        if any(link.name.startswith("app-") for link in options.links):  # the app reaches those nodes by proxy
            s = s.with_overrides(db_hosts=links.app_hosts(s, options.links))
        return cls(s, scenario, rate, options, attack.AttackOptions(
            rate, options.duration, options.timeout, attackers=options.attackers,
            max_connections=attack.connection_cap(s.client_connection_cap),  # computed once
            clients=options.clients))


@dataclass(frozen=True)
class Clock:
    """The run's one clock: monotonic seconds, zero set once before any sampler starts; the marks on it are the
    idle window's start, the attack's start and end, and the moment its last request was sent."""

    zero: float
    created: float  # the harness's own time around the attack is stated in the block
    started_up_s: float | None  # the process's start-up, when the run is the process's command
    idle: float | None = None
    start: float | None = None
    end: float | None = None
    send_end: float | None = None

    def wall(self, mark: float) -> float:
        """A mark on this clock as seconds since the epoch (time.time()'s), through the monotonic clock now."""
        return time.time() - (time.monotonic() - (self.zero + mark))

    def now(self) -> float:
        """Now, as a mark on this clock."""
        return time.monotonic() - self.zero


@dataclass(frozen=True)
class Outcome:
    """How the run stands: its status and the errors recorded so far, in order."""

    status: str = STATUS_OK
    errors: tuple[str, ...] = ()

    def with_error(self, text: str, status: str | None = None) -> Outcome:
        return Outcome(status or self.status, (*self.errors, text))

    def with_status(self, status: str) -> Outcome:
        return Outcome(status, self.errors)


@dataclass(frozen=True)
class Written:
    """meta.json and summary.json as written (no summary before the run's finish), the meta the run goes on with
    (refused: marked failed) and the outcome (refused: failed, the error recorded)."""

    meta: results.RunMeta
    summary: results.RunSummary | None
    kept: results.RunMeta
    outcome: Outcome


@dataclass(frozen=True)
class Prepared:
    """What preparing set up: meta.json's record so far, vegeta, the row check's sample taken before the attack;
    ready once every step ran (else the outcome says why not)."""

    meta: results.RunMeta
    outcome: Outcome = Outcome()
    vegeta: Path | None = None
    row_sample: tuple[list[int], dict[int, tuple[object, ...]]] | None = None
    ready: bool = False


@dataclass(frozen=True)
class CatchUp:
    """The replicas' catch-up, timed from the last request sent (the send's end on the run's clock): each one's
    seconds (None: not caught up, or held by a planned fault), what the summary records of it, and the error."""

    send_end: float
    seconds: dict[str, float | None]
    part: results.RunSummary | None = None
    error: str | None = None


@dataclass(frozen=True)
class Recording:
    """What the idle window and the attack measured, as the summary derives its figures from it: the clock's marks,
    the idle cost, the counters before and after, the catch-up, the write-back, the samplers' series (stopped) and
    the faults carried out; meta.json's record and the summary's keys the attack itself recorded."""

    clock: Clock
    outcome: Outcome
    meta: results.RunMeta
    parts: results.RunSummary = results.RunSummary()  # idle_window_s, the app's admission, the attackers' parts…
    bytes_per_beat: float = 0.0  # the heartbeat's binlog bytes per beat, from the idle window
    idle: dict[str, float] = field(default_factory=dict)  # each group's CPU seconds per second before the attack
    idle_counters: dict[str, summary.IdleCounts | None] = field(default_factory=dict)  # each node's counts per second
    before: samplers.Snapshot | None = None  # every counter, before and after the attack
    after: samplers.Snapshot | None = None
    catch_up: CatchUp | None = None
    writeback: writeback.Flush | None = None  # the run's own dirty pages forced out after the drain, counted
    watch: samplers.Samplers | None = None
    planned: tuple[faults.CarriedOut, ...] = ()  # the planned faults carried out (faults.FaultRunner.done)

    def add(self, part: results.RunSummary) -> Recording:
        return replace(self, parts=summary.joined(self.parts, part))

    def describe(self, part: results.RunMeta) -> Recording:
        return replace(self, meta=summary.joined(self.meta, part))


@dataclass
class Handles:
    """What runs in the background while the run does, stopped (or discarded) however the run ends: the samplers,
    the planned faults, vegeta, a topology file's attacker hosts, the catch-up timer."""

    samplers: samplers.Samplers | None = None
    fault_runner: faults.FaultRunner | None = None
    attack: attack.Attack | remote.RemoteAttack | None = None
    hosts: list[remote.HostCheck] | None = None  # a topology file's attacker hosts, checked (None: vegeta here)
    catch_up: Future[CatchUp | None] | None = None
    attack_done: threading.Event = field(default_factory=threading.Event)
    interrupted: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class RunResult:
    """A finished run as its callers use it: the typed summary and meta, the block, the exit code, its clock."""

    folder: Path
    summary: results.RunSummary
    meta: results.RunMeta
    block: str
    exit_code: int
    clock: Clock

    @property
    def status(self) -> str:
        return self.summary.status or STATUS_FAILED


Step = Callable[[Recording], Recording]


class Run:
    """One run carried out in phases, each returning its value: prepare (a Prepared), idle window and attack (a
    Recording), finish (the summary derived from the recording in one pass, checked, judged, written); execute()
    returns the typed RunResult, its summary and meta as written. The run keeps its inputs and the background
    handles an interrupt must stop, nothing it measured."""

    def __init__(self, settings: Settings, scenario: Scenario, rate: int, options: RunOptions, folder: Path,
                 progress: Progress | None = None, own_process: bool = False) -> None:
        """own_process: the run is its process's whole command (./run.sh <scenario> <rate>), so the process's
        start-up is the run's too; a sweep's, study's or campaign's runs share their process and leave it out."""
        self.plan = Plan.of(settings, scenario, rate, options)
        self.settings, self.scenario, self.rate, self.options = self.plan.settings, scenario, rate, options
        self.folder = folder
        self.progress = progress or Progress(f"{scenario.name}@{rate}")
        now = time.monotonic()
        self.clock = Clock(zero=now, created=now, started_up_s=round(
            max(0.0, time.time() - psutil.Process().create_time()), 2) if own_process else None)
        self.handles = Handles()

    @property
    def log(self) -> Path:
        return self.folder / "harness.log"

    # ---- phases ----

    def execute(self) -> RunResult:
        harnesslog.use(self.log)
        try:
            started = self._write(self._base_meta(), None, Outcome())
            prepared = self._prepare(Prepared(started.kept, started.outcome))
            rec = Recording(self.clock, prepared.outcome, prepared.meta)
            try:
                if prepared.ready:
                    rec = self._attack_and_measure(prepared.vegeta, rec)
            finally:
                rec = self._stop_background(rec, prepared.vegeta)
            try:
                return self._finish(prepared, rec)
            except KeyboardInterrupt:
                return self._finish(prepared, replace(rec, outcome=rec.outcome.with_status(STATUS_INTERRUPTED)),
                                    skip_waits=True)
        finally:
            harnesslog.done(self.log)

    def _write(self, meta: results.RunMeta, run: results.RunSummary | None, outcome: Outcome) -> Written:
        """meta.json (and summary.json) through their records (core/results.write_run). A summary its record refuses
        (one that says the run finished but lacks what every finished run records) is a bug of the harness: the run
        fails, the error is recorded, and the documents being written are kept beside as <name>.refused.json with
        that status and error, so what they hold is not lost."""
        try:
            return Written(*results.write_run(self.folder, meta, run), meta, outcome)
        except ValueError as exc:
            outcome = outcome.with_error(self._error("writing the results", exc), STATUS_FAILED)
            meta = summary.joined(meta, results.RunMeta(status=STATUS_FAILED,
                                                        exit_code=exit_code(STATUS_FAILED, self.options.strict)))
            kept = [("meta", results.document_of(meta))] + ([("summary", results.document_of(summary.joined(
                run, results.RunSummary(status=STATUS_FAILED, errors=list(outcome.errors)))))] if run else [])
            for name, doc in kept:
                write_refused(self.folder / f"{name}.refused.json", doc)
            return Written(*self._write_failed(run is not None, outcome), meta, outcome)

    def _write_failed(self, with_summary: bool, outcome: Outcome) -> tuple[results.RunMeta, results.RunSummary | None]:
        """What a run whose records were refused leaves as its meta.json (and summary.json): failed, with its errors,
        so no reader takes it for a finished run or one still running."""
        meta = results.RunMeta(scenario=self.scenario.name, rate=self.rate, status=STATUS_FAILED,
                               exit_code=exit_code(STATUS_FAILED))
        failed = results.RunSummary(scenario=self.scenario.name, rate=self.rate, folder=self.folder.name,
                                    status=STATUS_FAILED, errors=list(outcome.errors)) if with_summary else None
        return results.write_run(self.folder, meta, failed)

    def _error(self, phase: str, exc: BaseException) -> str:
        """An error as the run records it (harness.log with its traceback, said once), returned as its text."""
        text = f"{phase}: {type(exc).__name__}: {exc}"
        harnesslog.write(text, exc)
        self.progress.say(f"{text} (details in {self.log.name})", final=True)
        return text

    def _safely(self, phase: str, fn: Callable[[], T], outcome: Outcome, default: T | None = None,
                ) -> tuple[T | None, Outcome]:
        """Run one phase; an operational failure is recorded (errors, harness.log) and the run goes on."""
        try:
            return fn(), outcome
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001
            return default, outcome.with_error(self._error(phase, exc))

    def _prepare(self, prepared: Prepared) -> Prepared:
        """Every step of preparing in order, each adding to what the last left; a failure (or Ctrl-C) keeps what
        they recorded and leaves the run not ready."""
        try:
            for step in (self._settings_and_data, self._probed, self._targets_and_pins, self._row_sample):
                prepared = step(prepared)
        except KeyboardInterrupt:
            return replace(prepared, outcome=prepared.outcome.with_status(STATUS_INTERRUPTED))
        except Exception as exc:  # noqa: BLE001 — an operational failure: keep what was measured
            return replace(prepared, outcome=prepared.outcome.with_error(self._error("run", exc), STATUS_FAILED))
        written = self._write(prepared.meta, None, prepared.outcome)
        return replace(prepared, meta=written.kept, outcome=written.outcome, ready=True)

    def _settings_and_data(self, prepared: Prepared) -> Prepared:
        s = self.settings
        prepared = replace(prepared, vegeta=ensure_vegeta(s))
        # the topology is checked once, there (ensure_topology), before anything reads the servers
        got = prepare.settings_and_data(s, self.scenario, self.options.knobs, self.options.links, self.progress,
                                        alongside=cpu.calibrate)
        # the record's keys merged as a dictionary's were (a key set to None kept, one never set absent)
        meta = summary.joined(prepared.meta, results.RunMeta.model_validate(
            got.set_up.model_dump(by_alias=True, exclude_unset=True)))
        meta = summary.joined(meta, results.RunMeta(host=summary.joined(
            meta.host or results.Host(), results.Host(calibration_score=got.alongside))))  # taken while it settled
        return replace(prepared, meta=summary.joined(meta, results.RunMeta(dataset=_dataset_meta(s))))  # just built

    def _probed(self, prepared: Prepared) -> Prepared:
        s, outcome = self.settings, prepared.outcome
        meta = summary.joined(prepared.meta, results.RunMeta(versions=versions(s)))
        disk, outcome = (None, outcome) if s.external else \
            self._safely("disk probe", lambda: servervars.describe_disk(s.state), outcome)  # a remote one's: unseen
        variables, outcome = self._safely(
            "server variables", lambda: servervars.non_default(s, mariadb_binaries().get("mariadbd")), outcome)
        return replace(prepared, outcome=outcome, meta=summary.joined(meta, results.RunMeta(disk=disk),
                                                                      results.RunMeta(
                                                                          server_variables_not_default=variables)))

    def _targets_and_pins(self, prepared: Prepared) -> Prepared:
        s = self.settings
        meta = summary.joined(prepared.meta, results.RunMeta(targets=prepare.app_and_targets(
            s, self.scenario, self.folder / "targets.json", self.progress, rate=self.rate,
            duration=self.options.duration, catch_up_timeout=self.options.catch_up_timeout,
            nonce=self.options.nonce or None)))
        # after the app's restart: its new processes are pinned; every field written, None too, as meta.json has it
        pinned = cpus.pin_groups(s, self.options.cpus)
        meta = summary.joined(meta, results.RunMeta(cpus=results.Cpus.model_validate(pinned.model_dump())))
        if s.attacker_hosts:
            assert prepared.vegeta is not None  # _settings_and_data's first step
            self.progress.say(f"checking {len(s.attacker_hosts)} attacker host(s) over ssh (vegeta, clock skew), "
                              "copying the targets there")
            self.handles.hosts = remote.check(s, prepared.vegeta, self.folder / "targets.json", self.plan.attack)
            meta = summary.joined(meta, results.RunMeta(attacker_hosts=[c.record() for c in self.handles.hosts]))
        return replace(prepared, meta=meta)

    def _row_sample(self, prepared: Prepared) -> Prepared:
        if not (rowcheck.checked_columns(self.scenario) and rowcheck.method(self.options.knobs) == "sample"):
            return prepared
        ids = rowcheck.sample_ids(self.folder / "targets.json")
        return replace(prepared, row_sample=(ids, rowcheck.read_values(
            self.settings, self.scenario.schema, rowcheck.checked_columns(self.scenario), ids)))

    def _attack_and_measure(self, vegeta: Path | None, rec: Recording) -> Recording:
        """The idle window and the attack, step by step, each adding to the recording; a failure (or Ctrl-C) keeps
        what the steps before it recorded."""
        steps: tuple[Step, ...] = (self._start_samplers, self._idle_window, lambda r: self._start_attack(r, vegeta),
                                   self._wait_attack, lambda r: self._after_attack(r, vegeta))
        try:
            for step in steps:
                rec = step(rec)
        except KeyboardInterrupt:
            rec = replace(rec, outcome=rec.outcome.with_status(STATUS_INTERRUPTED))
            self.handles.interrupted.set()
            if self.handles.attack is not None:
                self.handles.attack.interrupt()
        except Exception as exc:  # noqa: BLE001 — an operational failure: keep what was measured
            rec = replace(rec, outcome=rec.outcome.with_error(self._error("run", exc), STATUS_FAILED))
        return rec

    def _start_samplers(self, rec: Recording) -> Recording:
        s, h = self.settings, self.handles
        clock = replace(rec.clock, zero=time.monotonic())
        h.samplers = samplers.Samplers(s, self.folder, clock.zero, lambda: h.attack.pids if h.attack else [],
                                       {f.node for f in self.options.faults if f.action == "kill"},
                                       soak=self.options.soak_window is not None)
        h.fault_runner = faults.FaultRunner(s, self.options.faults, clock.zero, self.scenario.schema)
        h.samplers.start()
        return replace(rec, clock=clock)

    def _idle_window(self, rec: Recording) -> Recording:
        s, watch = self.settings, self.handles.samplers
        assert watch is not None
        window = idle_window(self.rate, s.idle_window)
        rec = rec.add(results.RunSummary(idle_window_s=window))
        self.progress.say(f"measuring the idle cost: heartbeat binlog bytes and each group's CPU ({window:g} s)")
        rec = replace(rec, clock=replace(rec.clock, idle=rec.clock.now()))
        idle_start = samplers.snapshot(s, watch)
        time.sleep(window)
        before = samplers.snapshot(s, watch)
        per_beat = binlog.written_bytes(idle_start.binlog, before.binlog) / max(1, before.beats - idle_start.beats) \
            if idle_start.binlog and before.binlog else 0.0
        return replace(rec, before=before, idle=samplers.idle_rates(idle_start, before), bytes_per_beat=per_beat,
                       idle_counters=counters.idle_rates(idle_start.counters, before.counters))

    def _start_attack(self, rec: Recording, vegeta: Path | None) -> Recording:
        s, h = self.settings, self.handles
        name = f"{self.scenario.name}-{self.rate}"
        if h.hosts is not None:
            h.attack = remote.RemoteAttack(s, h.hosts, self.folder, self.plan.attack, name, nodeexporter.host_busy)
        else:
            assert vegeta is not None  # _prepare's first step, done before the attack
            h.attack = attack.Attack(vegeta, self.folder, self.folder / "targets.json", self.plan.attack, name,
                                     cpus.taskset_prefix(cpus.parse(self.options.cpus).get("vegeta")))
        rec = rec.describe(results.RunMeta(started_at=_now()))
        rec = replace(rec, clock=replace(rec.clock, start=rec.clock.now()))
        h.attack.start()
        if isinstance(h.attack, remote.RemoteAttack):  # start() returned at the agreed instant: the attack's start
            rec = replace(rec, clock=replace(rec.clock, start=rec.clock.now()))
            rec = rec.describe(results.RunMeta(attack_start_agreed=h.attack.start_text() + " UTC"))
        rec = rec.describe(results.RunMeta(attack_command=h.attack.command))
        assert h.fault_runner is not None and rec.clock.start is not None
        h.fault_runner.start(rec.clock.start)
        h.catch_up, clock = Future(), rec.clock
        threading.Thread(target=_into, args=(h.catch_up, lambda: self._time_catch_up(clock)), daemon=True).start()
        return rec

    def _wait_attack(self, rec: Recording) -> Recording:
        h = self.handles
        assert h.attack is not None and rec.before is not None
        try:
            self._show_progress(rec.clock, rec.before)
        except KeyboardInterrupt:
            rec = replace(rec, outcome=rec.outcome.with_status(STATUS_INTERRUPTED))
            h.interrupted.set()
            self.progress.say("interrupted: stopping vegeta, keeping the partial results", final=True)
            h.attack.interrupt()
        h.attack.wait()
        h.attack_done.set()
        rec = replace(rec, clock=replace(rec.clock, end=rec.clock.now()))
        return rec.describe(results.RunMeta(attack_ended_at=_now()))

    def _after_attack(self, rec: Recording, vegeta: Path | None) -> Recording:
        s, h = self.settings, self.handles
        assert h.samplers is not None and rec.before is not None
        appserver.wait_published(s, time.time())  # the workers' counters, once more after the attack
        after, before = samplers.snapshot(s, h.samplers), rec.before
        rec = replace(rec, after=after)
        if isinstance(h.attack, remote.RemoteAttack):
            rec = self._collect_remote(rec, h.attack, vegeta)
        outcome = rec.outcome
        for error in after.errors:  # a lost master: its figures are missing, the run goes on
            outcome = outcome.with_error(self._error("snapshot after the attack", RuntimeError(error)))
        rec = replace(rec, outcome=outcome)
        now, then = after.admission, before.admission  # admitted, shed and episodes: those of the attack's span
        rec = rec.add(results.RunSummary(app_admission=results.Admission.model_validate(
            {**now, "admitted": now["admitted"] - then["admitted"], "shed": now["shed"] - then["shed"],
             "episodes": now["episodes"] - then["episodes"]})))
        # the app's final count (its workers published once more), so even an attack shorter than a tick shows it
        self.progress.say(self._app_answers(before, after.admission) + " in all", final=True)
        if rec.outcome.status != STATUS_INTERRUPTED:
            self.progress.say("waiting for the replicas' catch-up (timed from the last request sent)", final=True)
            assert h.catch_up is not None
            rec = self._caught_up(rec, h.catch_up.result())
            if self.scenario.writes:  # a read run's few pages (the heartbeat's) are left to the next settle
                self.progress.say("flushing the run's dirty pages on every node, counted as its write-back",
                                  final=True)
                watch = h.samplers
                flushed, outcome = self._safely("write-back", lambda: writeback.flush(s, watch), rec.outcome)
                rec = replace(rec, writeback=flushed, outcome=outcome)
        # the plot's imports while the reports and checks wait on vegeta and the servers (after every figure is read)
        threading.Thread(target=timeline.preload_plotting, daemon=True).start()
        return rec

    @staticmethod
    def _caught_up(rec: Recording, got: CatchUp | None) -> Recording:
        """The catch-up timer's result in the recording (None: the send never reached its end)."""
        if got is None:
            return rec
        rec = replace(rec, catch_up=got, clock=replace(rec.clock, send_end=got.send_end))
        if got.error is not None:
            rec = replace(rec, outcome=rec.outcome.with_error(got.error))
        return rec if got.part is None else rec.add(got.part)

    def _collect_remote(self, rec: Recording, hosts: remote.RemoteAttack, vegeta: Path | None) -> Recording:
        """The attacker hosts' result files back here, each host's part recorded (the block's Attackers lines,
        judge's guards); their folders there removed."""
        assert vegeta is not None
        self.progress.say("copying the attacker hosts' results back", final=True)
        parts, outcome = self._safely("attackers' results", lambda: [
            results.RemoteAttacker.model_validate(part) for part in hosts.collect(vegeta)], rec.outcome, default=None)
        self.handles.hosts = None  # their folders are gone: nothing left to discard
        rec = replace(rec, outcome=outcome)
        if parts is not None:
            rec = rec.add(results.RunSummary(remote_attackers=parts, attack_start_agreed=hosts.start_text() + " UTC"))
        return rec

    def _show_progress(self, clock: Clock, before: samplers.Snapshot) -> None:
        h = self.handles
        assert h.attack and h.samplers and clock.start is not None
        while h.attack.still_running_after(PROGRESS_INTERVAL):
            elapsed = clock.now() - clock.start
            answers = self._app_answers(before)
            latest = h.samplers.cpu.rows[-1] if h.samplers.cpu.rows else {}
            # "–": nothing measures that group (a topology file's node without node_exporter)
            core = {g: f"{latest[g]:.0f}" if g in latest else "–" for g in ("app", *self.settings.node_names, "vegeta")}
            lost = ", ".join(f["node"] + " LOST" for f in h.samplers.health.open_faults())
            self.progress.say(
                f"{min(elapsed, self.options.duration):5.0f}/{self.options.duration:.0f} s, {answers} | cpu app "
                f"{core['app']} master {core['master']} "
                + "".join(f"r{r.removeprefix('replica')} {core[r]} " for r in self.settings.node_names[1:]) +
                f"vegeta {core['vegeta']}" + (f" | {lost}" if lost else ""), tick=True)
        self.progress.say("attack finished", final=True)

    def _app_answers(self, before: samplers.Snapshot, counted: appserver.AppCounters | None = None) -> str:
        """The progress line's app part: what the app answered since the attack began, from its workers' counters
        (read now, or as given)."""
        counted = appserver.admission(self.settings) if counted is None else counted
        app = appserver.answered_since(before.admission, counted)
        return (f"app answered {app['requests']:,}, {app['failed']:,} failed, app p99 ≤{app['p99_ms'] or 0:g} ms"
                if counted["workers"] else "app counters n/a (an app not started here)")

    def _time_catch_up(self, clock: Clock) -> CatchUp | None:
        """At the moment vegeta sends its last request (attack start + duration), take the master's GTID position
        and time each replica's MASTER_GTID_WAIT for it from that instant, in parallel. Runs beside vegeta's
        wait for the responses still in flight, so it measures the replicas, not the load generator's tail.
        None: interrupted, the send never reached its end."""
        assert clock.start is not None
        h, s = self.handles, self.settings
        send_end = clock.zero + clock.start + self.options.duration
        while time.monotonic() < send_end and not h.attack_done.is_set():
            time.sleep(min(0.05, max(0.0, send_end - time.monotonic())))
        if h.interrupted.is_set() or (h.attack_done.is_set() and time.monotonic() < send_end - 1):
            return None
        sent = clock.now()
        try:
            gtid = nodes.master_gtid(s)
        except sql.MySQLError as exc:
            return CatchUp(sent, {r.name: None for r in s.replicas},
                           error=self._error("catch-up (master's GTID position)", exc))
        unreachable: set[str] = set()
        runner = h.fault_runner
        held = faults.held(tuple(runner.done), {r.name for r in s.replicas}) if runner is not None and runner.done \
            else {}
        waited = tuple(r for r in s.replicas if r.name not in held) if held else None
        seconds = {} if waited == () else nodes.wait_caught_up(
            s, self.options.catch_up_timeout, gtid, replicas=waited, unreachable=unreachable)
        # unreachable: no wait took place, so not "behind"; held: stopped on purpose and not yet given back, no
        # wait either
        return CatchUp(sent, {**seconds, **{name: None for name in held}},
                       results.RunSummary(catch_up_unreachable=sorted(unreachable), catch_up_held=held))

    def _stop_background(self, rec: Recording, vegeta: Path | None) -> Recording:
        """Everything the run started stopped (an attacker host's results collected, or its folder discarded);
        the recording given the samplers' series and the faults carried out."""
        h = self.handles
        if h.attack is not None and h.attack.running():
            h.attack.interrupt()
            h.attack.wait()
        if h.hosts is not None:  # checked, never collected (a failure before or during the attack)
            if isinstance(h.attack, remote.RemoteAttack):
                rec = self._collect_remote(rec, h.attack, vegeta)
            else:
                remote.discard(self.settings, h.hosts)
                h.hosts = None
        h.attack_done.set()
        if h.fault_runner is not None:
            h.fault_runner.stop()
        if h.samplers is not None:
            h.samplers.stop()
        if rec.catch_up is None and h.catch_up is not None and h.catch_up.done() and h.catch_up.exception() is None:
            rec = self._caught_up(rec, h.catch_up.result())  # a timer that finished though nobody waited for it
        return replace(rec, watch=h.samplers, planned=tuple(h.fault_runner.done) if h.fault_runner else ())

    # ---- results ----

    def _finish(self, prepared: Prepared, rec: Recording, skip_waits: bool = False) -> RunResult:
        """The summary derived from the recording, checked, judged and written with the final meta.json; the
        block rendered from the summary as written."""
        s, outcome, tl = self._results(prepared, rec, skip_waits)
        guards, saturation, status = judge.judge(s, rec.meta, self._facts(rec, outcome), outcome.status)
        s = summary.joined(s, results.RunSummary(guards=guards, saturation=saturation))
        outcome = outcome.with_status(status)
        if tl is not None:
            _, outcome = self._safely("latency plot", lambda: self._plot(rec, tl, s, status), outcome)
        s = summary.joined(s, results.RunSummary(harness_time_s=self._harness_time(rec.clock), status=outcome.status,
                                                 errors=list(outcome.errors)))
        meta = summary.joined(rec.meta, results.RunMeta(finished_at=_now(), status=outcome.status,
                                                        exit_code=exit_code(outcome.status, self.options.strict)))
        written = self._write(meta, s, outcome)
        done = written.summary or results.RunSummary(schema_version=RESULTS_SCHEMA, status=STATUS_FAILED,
                                                     errors=list(written.outcome.errors))  # none written
        block = ""
        if (self.folder / "report.txt").exists() and written.summary is not None:
            block = render_block(written.summary, self.folder)
            (self.folder / "block.txt").write_text(block)
        return RunResult(self.folder, done, written.meta, block, exit_code(done.status or STATUS_FAILED,
                                                                           self.options.strict), rec.clock)

    def _results(self, prepared: Prepared, rec: Recording, skip_waits: bool,
                 ) -> tuple[results.RunSummary, Outcome, timeline.Timeline | None]:
        """The summary before its guards: the recording's figures, then what the checks after the run found."""
        s, outcome, tl = summary.joined(self._base_summary(), rec.parts), rec.outcome, None
        vegeta = prepared.vegeta
        if vegeta is None or not any(f.stat().st_size > 0 for f in attack.result_files(self.folder)):
            if outcome.status == STATUS_OK:
                outcome = Outcome(STATUS_FAILED, (*outcome.errors, "vegeta produced no results"))
            return s, outcome, tl
        _, outcome = self._safely("vegeta reports", lambda: attack.write_reports(vegeta, self.folder), outcome)
        if (self.folder / "report.json").exists():
            s, tl, outcome = self._summarize(rec, s, vegeta, outcome)
        if (self.options.faults or (rec.watch and rec.watch.health.faults)) and not skip_waits:
            self.progress.say("bringing every node back after the faults")
            started, outcome = self._safely("bringing the topology back", lambda: nodes.start_all(self.settings),
                                            outcome)
            s = summary.joined(s, results.RunSummary(restarted_after_run=started or []))
        if self.scenario.writes and outcome.status != STATUS_INTERRUPTED and not skip_waits:
            checked, outcome = self._safely("consistency check", lambda: self._check_consistency(rec, s), outcome)
            if checked is not None:
                s = summary.joined(s, results.RunSummary(consistency=checked))
                if checked.equal is False:  # checked and different (not: not checked, a replica behind)
                    outcome = outcome.with_status(STATUS_FAILED)
        if rowcheck.checked_columns(self.scenario) and not skip_waits:
            self.progress.say("checking that the writes changed their rows")
            rows, outcome = self._safely("row check", lambda: self._check_rows(prepared, rec, s), outcome)
            if rows is not None:
                s = summary.joined(s, results.RunSummary(rows_checked=rows))
        return s, outcome, tl

    def _base_summary(self) -> results.RunSummary:
        """The summary's keys every run has from its start: what was asked."""
        base = results.RunSummary(scenario=self.scenario.name, rate=self.rate, duration_s=self.options.duration,
                                  schema=self.scenario.schema, folder=self.folder.name, schema_version=RESULTS_SCHEMA)
        return base if self.options.clients is None else summary.joined(base, results.RunSummary(
            clients=self.options.clients))

    def _plot(self, rec: Recording, tl: timeline.Timeline, s: results.RunSummary, status: str) -> None:
        """latency.png: latency over the run, the nodes lost and back and the planned faults marked, the lag beside."""
        seen = s.nodes_lost or []
        start = rec.clock.start or 0
        timeline.plot(
            tl, self.folder / "latency.png", f"{self.scenario.name} @ {self.rate} rps — latency over time ({status})",
            [((f.lost_at_s or 0) - start, f"{f.node} lost") for f in seen]
            + [(f.back_at_s - start, f"{f.node} back") for f in seen if f.back_at_s is not None]
            + [(p.at_s, p.fault.spec) for p in rec.planned if p.action not in ("kill", "start")],
            lag=(*self._lag_series(rec), rec.clock.start) if rec.watch and rec.clock.start else None)

    def _lag_series(self, rec: Recording,
                    ) -> tuple[dict[str, list[tuple[float, float]]], dict[str, list[tuple[float, float, float]]]]:
        """Each replica's lag samples and its split over the attack (and its catch-up), on the run's clock."""
        assert rec.watch is not None and rec.clock.start is not None
        positions = rec.watch.lag.positions
        start, end = rec.clock.start, rec.clock.now()
        names = [r.name for r in self.settings.replicas]
        return ({n: positions.series(n, start, end) for n in names}, {n: positions.split(n, start, end) for n in names})

    @staticmethod
    def _harness_time(clock: Clock) -> results.HarnessTime:
        """Wall seconds of the run's parts: the process's start-up (interpreter, imports, arguments), preparing
        (topology check, settle, settings, warm-up, app, targets), the idle window, the attack (to its last
        answer), and what follows it (catch-up, reports, checks, plot); a part the run never reached is absent."""
        now = time.monotonic()
        start_up = results.HarnessTime() if clock.started_up_s is None else \
            results.HarnessTime(start_up=clock.started_up_s)
        if clock.idle is None:
            return summary.joined(start_up, results.HarnessTime(before_attack=round(now - clock.created, 2)))
        idle_at = clock.zero + clock.idle
        parts = summary.joined(start_up, results.HarnessTime(before_attack=round(idle_at - clock.created, 2)))
        if clock.start is not None:
            parts = summary.joined(parts, results.HarnessTime(idle_window=round(clock.start - clock.idle, 2)))
        if clock.start is not None and clock.end is not None:
            parts = summary.joined(parts, results.HarnessTime(attack=round(clock.end - clock.start, 2),
                                                              after_attack=round(now - (clock.zero + clock.end), 2)))
        return parts

    def _summarize(self, rec: Recording, s: results.RunSummary, vegeta: Path, outcome: Outcome,
                   ) -> tuple[results.RunSummary, timeline.Timeline | None, Outcome]:
        """The recording's figures in the summary, in one pass: what vegeta saw, what the run was set up with, the
        faults, and (once the attack's counters were read) the servers'; timeline.csv written on the way. A step
        that fails keeps what the steps before it added (and the timeline, once written, for the plot)."""
        tl: timeline.Timeline | None = None
        try:
            report = results.VegetaReport.model_validate(attack.read_report(self.folder))
            built = timeline.build(attack.decode(vegeta, attack.result_files(self.folder)),
                                   faults.windows(rec.planned, self.options.duration),
                                   faults.outages(rec.planned))
            for step in self._client_steps(rec, report, built):
                s = step(s)
            tl = built  # plotted once the status is final
            if rec.clock.end is None or rec.clock.start is None or rec.watch is None or rec.after is None:
                return s, tl, outcome  # interrupted before the attack's counters were read
            for step in self._server_steps(rec, report, built):
                s = step(s)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001
            outcome = outcome.with_error(self._error("summary", exc))
        return s, tl, outcome

    def _client_steps(self, rec: Recording, report: results.VegetaReport, tl: timeline.Timeline,
                      ) -> list[Callable[[results.RunSummary], results.RunSummary]]:
        """What vegeta saw, what the run was set up with and the faults, each a step adding its keys; the lag added
        to the timeline and timeline.csv written."""
        meta, done = rec.meta, rec.planned  # what the run was set up with, beside its figures
        written = meta.targets

        def lag(s: results.RunSummary) -> results.RunSummary:
            if rec.watch is not None and rec.clock.start is not None:
                timeline.add_lag(tl, *self._lag_series(rec), rec.clock.start)
            timeline.write_csv(tl, self.folder / "timeline.csv")
            return s

        return [
            lambda s: summary.joined(s, summary.client(report, tl)),
            # what vegeta was given: a guard checks it looped none
            lambda s: s if written is None or written.count is None else summary.joined(
                s, results.RunSummary(targets=written.count)),
            lambda s: summary.joined(s, results.RunSummary(app_admission=summary.joined(
                s.app_admission or results.Admission(),
                results.Admission.model_validate(appserver.admission_settings(self.settings))))),
            lambda s: summary.joined(s, results.RunSummary(
                cpus=meta.cpus or results.Cpus(), buffer_pools=meta.buffer_pools or {},
                settle=meta.settle or results.Settle(), links=meta.links or {})),
            lambda s: s if not done else summary.joined(s, results.RunSummary(
                planned_faults=[fault.record() for fault in done],
                fault_windows={name: results.FaultWindow.model_validate(w) for name, w in tl.windows.items()},
                routing=[results.Routing.model_validate(outage) for outage in tl.routing])),
            lag]

    def _window(self, rec: Recording) -> summary.Window:
        """The servers' measurements over the attack's window, as summary.servers reads them."""
        b, a, watch, clock = rec.before, rec.after, rec.watch, rec.clock
        assert b is not None and a is not None and watch is not None and self.handles.attack is not None
        assert clock.start is not None and clock.end is not None
        s, readback = self.settings, rec.meta.knobs_readback or {}
        return summary.Window(
            t_start=clock.start, t_end=clock.end, cpu_before=b.cpu, cpu_after=a.cpu,
            attack_cpu_s=results.AttackCpu.model_validate(self.handles.attack.cpu_seconds),
            harness_cpu_s=a.own_cpu - b.own_cpu,
            cpu_rows=watch.cpu.rows, memory_rows=watch.cpu.memory_rows,
            lag={name: results.LagOf.model_validate(figures)
                 for name, figures in watch.lag.summarize(clock.start, clock.end).items()},
            not_replicating=list(watch.lag.not_replicating),
            nodes_lost=[results.Fault.model_validate(fault) for fault in watch.health.faults],
            counters_before=b.counters, counters_after=a.counters,
            heartbeats=a.beats - b.beats, binlog_before=b.binlog, binlog_after=a.binlog,
            bytes_per_beat=rec.bytes_per_beat, idle_cpu_per_s=rec.idle, seconds=a.at - b.at,
            lag_settled_s=None if clock.send_end is None else watch.lag.settled_after(clock.send_end),
            sources={"app": s.app_cpu_source, **{n.name: n.cpu_source for n in s.nodes}},
            sync_binlog={name: int(sync) for name, back in readback.items()
                         if (sync := back.sync_binlog) is not None and sync.isdigit()},
            idle_start=clock.idle, idle_counters_per_s=rec.idle_counters)

    def _server_steps(self, rec: Recording, report: results.VegetaReport, tl: timeline.Timeline,
                      ) -> list[Callable[[results.RunSummary], results.RunSummary]]:
        """The servers' figures over the attack's window, what limited the run, and a soak's windows, each a step
        adding its keys to the summary so far."""
        watch, clock, settings = rec.watch, rec.clock, self.settings
        assert watch is not None and clock.start is not None and clock.end is not None
        start, end, idle = clock.start, clock.end, clock.idle

        def servers(s: results.RunSummary) -> results.RunSummary:
            assert s.requests is not None and s.successes is not None  # summary.client's, always set
            return summary.servers(self._window(rec), requests=s.requests, successes=s.successes,
                                   writes=summary.writes_of(tl), sending_s=report.duration / 1e9 or (end - start),
                                   databases_here=not settings.external, cores=os.cpu_count())

        def flushed(s: results.RunSummary) -> results.RunSummary:
            if rec.writeback is None or idle is None:
                return results.RunSummary()
            return results.RunSummary(writeback=writeback_figures.derive(
                rec.writeback, rec.idle, summary.writes_of(tl), s.cpu_seconds_net or {},
                (s.replication or results.Replication()).nodes or {},
                cpu.per_second_within(watch.cpu.rows, idle, start)))

        def soaked(s: results.RunSummary) -> results.RunSummary:
            if watch.innodb is None or self.options.soak_window is None:
                return results.RunSummary()
            lags = {r.name: watch.lag.positions.series(r.name, start, end) for r in settings.replicas}
            successes = s.successes or 0
            costs = soak.Costs(write_share=summary.writes_of(tl) / successes if successes else 0.0,
                               cpu_rows=watch.cpu.rows, idle_cpu_per_s=rec.idle, io_rows=watch.health.rows)
            return results.RunSummary(soak=soak.analyse(tl.seconds, lags, watch.innodb.rows, start, end,
                                                        self.options.soak_window, costs))

        parts: list[Callable[[results.RunSummary], results.RunSummary]] = [
            servers,
            lambda s: results.RunSummary(
                lag_floor_ms=watch.lag.floor_ms(start, end), heartbeat_ms=settings.heartbeat_ms,
                catch_up_s=None if rec.catch_up is None else rec.catch_up.seconds,
                catch_up_timeout_s=self.options.catch_up_timeout, client_connections=self.plan.attack.max_connections,
                client_connections_setting=settings.client_connections),  # auto, N or unlimited
            flushed,
            lambda s: results.RunSummary(above_knee=summary.above_knee(s, self.scenario.criteria)),
            lambda s: results.RunSummary(limit=limits.limiting(s, self.options.knobs.parallel_threads)),
            soaked]
        return [_adding(part) for part in parts]

    def _check_rows(self, prepared: Prepared, rec: Recording, s: results.RunSummary) -> results.RowsChecked | None:
        settings = self.settings
        if prepared.row_sample is not None:
            ids, before = prepared.row_sample
            check = rowcheck.from_sample(settings, self.scenario, ids, before, s.requests or 0)
        elif (b := rec.before) and (a := rec.after) and b.binlog and a.binlog:
            planned = tuple(f.bigtx.value for f in rec.planned if f.bigtx is not None and f.bigtx.value)
            check = rowcheck.from_binlog(settings, self.scenario, b.binlog, a.binlog, planned_values=planned)
        else:
            return None
        return results.RowsChecked.model_validate(check)

    def _check_consistency(self, rec: Recording, s: results.RunSummary) -> results.Consistency:
        settings = self.settings
        table = f"{self.scenario.schema}.accounts"
        held = s.catch_up_held or {}
        behind = not_caught_up({} if rec.catch_up is None else rec.catch_up.seconds, held)
        missing = [n.name for n in settings.nodes if not nodes.node_up(n, settings)]
        if behind:
            return results.Consistency(
                table=table, checked=False, equal=None,
                reason=f"{', '.join(behind)} did not catch up within {self.options.catch_up_timeout:g} s")
        # a replica a planned fault held at the send's end was never waited for: left out, and said so
        alive = tuple(n for n in settings.nodes if n.name not in missing and n.name not in held)
        ids = self._checksum_rows(table)
        self.progress.say("waiting for the replicas, then " + ("CHECKSUM TABLE" if ids is None else
                          f"a checksum of the {len(set(ids)):,} rows written") + " on the nodes that answer")
        waited = nodes.wait_caught_up(settings, self.options.catch_up_timeout,
                                      replicas=tuple(n for n in alive if n.role == "replica"))
        sums: dict[str, int | None] = {}

        def checksum(node: Node) -> None:
            try:
                sums[node.name] = sql.checksum(node, settings, table) if ids is None else \
                    sql.rows_checksum(node, settings, table, ids)
            except sql.MySQLError:
                sums[node.name] = None
                missing.append(node.name)

        threads = [threading.Thread(target=checksum, args=(n,)) for n in alive]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        got = {k: v for k, v in sums.items() if v is not None}
        equal = len(set(got.values())) == 1 and all(v is not None for v in waited.values())
        checked = results.Consistency(table=table, checked=True, checksums=sums, caught_up_s=waited, equal=equal,
                                      missing=sorted(set(missing)), scope="table" if ids is None else "rows", held=held)
        if ids is not None:  # a rows-scope check says how many rows it compared
            checked = summary.joined(checked, results.Consistency(rows=len(set(ids))))
        return checked

    def _checksum_rows(self, table: str) -> list[int] | None:
        """The ids a rows-scope check compares, or None for CHECKSUM TABLE: asked for, or needed when faults
        (a big transaction among them) wrote beyond the targets or the table has no primary key to look rows up."""
        if self.options.checksum != "rows" or self.options.faults or not (self.folder / "targets.json").exists():
            return None
        if not sql.has_primary_key(self.settings.master, self.settings, table):
            return None
        return targets.written_ids(self.folder / "targets.json")

    def _searched(self) -> str | None:
        """The schema this scenario's find_users searches, where its prefixes are long enough for the read-rows
        guard (judge._read_guards)."""
        endpoints = {r.endpoint for r in self.scenario.requests}
        if "find_users" in endpoints and self.scenario.first_prefix >= SEARCH_GUARD_MIN_PREFIX:
            return self.scenario.schema
        return None

    def _facts(self, rec: Recording, outcome: Outcome) -> judge.RunFacts:
        """What the one evaluator (analysis/judge) needs beside the summary and meta."""
        return judge.RunFacts(criteria=self.scenario.criteria, rate=self.rate,
                              catch_up_timeout=self.options.catch_up_timeout, cores=os.cpu_count() or 1,
                              planned_nodes=frozenset(f.node for f in self.options.faults),
                              attack_start_s=rec.clock.start or 0, errors=outcome.errors,
                              searched=self._searched())

    def _base_meta(self) -> results.RunMeta:
        s = self.settings
        base = results.RunMeta(
            schema_version=RESULTS_SCHEMA,
            scenario=self.scenario.name, scenario_file=self.scenario.source, rate=self.rate,
            duration_s=self.options.duration, timeout_s=self.options.timeout,
            attack_options=self.plan.attack.record(f"{s.client_connections} (REPLBENCH_CLIENT_CONNECTIONS)"),
            knobs=results.KnobSetting.model_validate(self.options.knobs.as_dict()),
            knobs_changed=results.KnobSetting.model_validate(self.options.knobs.changed()),
            links_requested=[link.spec for link in self.options.links],
            dataset=_dataset_meta(s),
            app=appserver.app_settings(s),
            topology={n.name: results.TopologyNode(port=n.port, server_id=n.server_id, host=n.host,
                                                   external=n.external, cpu_source=n.cpu_source) for n in s.nodes},
            topology_file=s.topology_name if s.external else None,
            buffer_pool=s.buffer_pool, flavour=s.flavour, catch_up_timeout_s=self.options.catch_up_timeout,
            idle_window=results.IdleWindow(setting=s.idle_window or "auto",
                                           seconds=idle_window(self.rate, s.idle_window)),
            host=results.Host.model_validate({**cpu.describe_host(calibrated=False), "platform": platform.platform()}),
            created_at=_now(), command=[without_machine_paths(a) for a in sys.argv],  # no machine path
            status=STATUS_RUNNING, pid=os.getpid())
        if any(r.endpoint == "update_users" for r in self.scenario.requests):  # a bulk scenario's rows per request
            base = summary.joined(base, results.RunMeta(bulk_rows=self.scenario.bulk_rows))
        return base


def _adding(part: Callable[[results.RunSummary], results.RunSummary],
            ) -> Callable[[results.RunSummary], results.RunSummary]:
    """A step that adds the keys `part` derives from the summary so far."""
    return lambda s: summary.joined(s, part(s))


def _into(future: Future[T], fn: Callable[[], T]) -> None:
    """fn's result (or its exception) into the future: a background thread's value for the thread that waits."""
    try:
        future.set_result(fn())
    except BaseException as exc:
        future.set_exception(exc)
        raise


def _dataset_meta(settings: Settings) -> results.Dataset:
    """The dataset the run reads, as its state folder records it (every field None before it is built)."""
    info = dataset.dataset_info(settings) or {}
    return results.Dataset(accounts=info.get("accounts"), seed=info.get("seed"), built_at=info.get("built_at"),
                           nopk_rows=info.get("nopk_rows"))


def not_caught_up(catch_up: dict[str, float | None], held: dict[str, str]) -> list[str]:
    """The replicas whose catch-up wait ran out (no time), those a planned fault held aside: they were never
    waited for (faults.held), so they are not behind, only left out of the consistency check."""
    return [name for name, took in catch_up.items() if took is None and name not in held]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def versions(settings: Settings) -> results.Versions:
    try:
        mariadb: str | None = sql.query_one(settings.master, settings, "SELECT VERSION()")
    except sql.MySQLError:  # the master may not be up
        mariadb = None
    wanted = ("aiohttp", "aiomysql", "asyncmy", "gunicorn", "uvloop", "orjson", "PyMySQL", "psutil", "matplotlib")
    commit, dirty = processes.git_state(ROOT)
    git_commit = None if commit is None else commit + ("-dirty" if dirty else "")
    return results.Versions(vegeta=VEGETA_VERSION, python=platform.python_version(), mariadb=mariadb,
                            packages={name: _pkg_version(name) for name in wanted}, git_commit=git_commit)


def _pkg_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


