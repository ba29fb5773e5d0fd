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
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

import psutil

from ..analysis import judge, limits, soak, summary
from ..analysis import writeback as writeback_figures
from ..core import harnesslog, results, sql
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


@dataclass
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


@dataclass
class Live:
    """What runs while the attack does: vegeta, the samplers (lag, health, CPU on one clock), the faults, and the
    catch-up timer."""

    attack_options: attack.AttackOptions
    vegeta: Path | None = None
    samplers: samplers.Samplers | None = None
    fault_runner: faults.FaultRunner | None = None
    attack: attack.Attack | remote.RemoteAttack | None = None
    hosts: list[remote.HostCheck] | None = None  # a topology file's attacker hosts, checked (None: vegeta here)
    catch_thread: threading.Thread | None = None
    attack_done: threading.Event = field(default_factory=threading.Event)


@dataclass
class Measured:
    """What the phases measured, before the summary derives its figures from it."""

    bytes_per_beat: float = 0.0  # the heartbeat's binlog bytes per beat, from the idle window
    idle: dict[str, float] = field(default_factory=dict)  # each group's CPU seconds per second before the attack
    idle_counters: dict[str, summary.IdleCounts | None] = field(default_factory=dict)  # each node's counts per second
    before: samplers.Snapshot | None = None  # every counter, before and after the attack
    after: samplers.Snapshot | None = None
    catch_up: dict[str, float | None] | None = None
    catch_up_gtid: str | None = None
    row_sample: tuple[list[int], dict[int, tuple]] | None = None  # the row check's sample, before the attack
    writeback: writeback.Flush | None = None  # the run's own dirty pages forced out after the drain, counted
    timeline: timeline.Timeline | None = None


@dataclass
class Record:
    """The run's record as it is filled: status, errors, meta.json and summary.json's records, and the printed block.
    Each phase adds its part of them as a RunMeta or a RunSummary: a field it set (None too) is kept, one it never
    set stays absent, as meta.json and summary.json write them."""

    meta: results.RunMeta
    summary: results.RunSummary
    status: str = STATUS_OK
    errors: list[str] = field(default_factory=list)
    block: str = ""  # the printed block, once the run has results to show (also block.txt)
    # the catch-up timer adds its part from its own thread while the main thread adds others
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, part: results.RunSummary) -> None:
        with self.lock:
            self.summary = summary.joined(self.summary, part)

    def describe(self, part: results.RunMeta) -> None:
        with self.lock:
            self.meta = summary.joined(self.meta, part)


@dataclass(frozen=True)
class RunResult:
    """A finished run as its callers use it: the typed summary and meta, the block, the exit code."""

    folder: Path
    summary: results.RunSummary
    meta: results.RunMeta
    block: str
    exit_code: int

    @property
    def status(self) -> str:
        return self.summary.status or STATUS_FAILED


class Run:
    """One run carried out in phases (prepare → idle window and attack → finish: summarize, check, judge, render);
    execute() returns the typed RunResult, its summary and meta as written."""

    def __init__(self, settings: Settings, scenario: Scenario, rate: int, options: RunOptions, folder: Path,
                 progress: Progress | None = None, own_process: bool = False) -> None:
        """own_process: the run is its process's whole command (./run.sh <scenario> <rate>), so the process's
        start-up is the run's too; a sweep's, study's or campaign's runs share their process and leave it out."""
        # a scenario may switch lag-aware reads on for the app it runs against
        self.settings = settings if scenario.max_lag is None else settings.with_overrides(max_lag=scenario.max_lag)
        if any(link.name.startswith("app-") for link in options.links):  # the app reaches those nodes by proxy
            self.settings = self.settings.with_overrides(db_hosts=links.app_hosts(self.settings, options.links))
        self.scenario = scenario
        self.rate = rate
        self.options = options
        self.folder = folder
        self.progress = progress or Progress(f"{scenario.name}@{rate}")
        self.record = Record(meta=results.RunMeta(), summary=results.RunSummary(
            scenario=scenario.name, rate=rate, duration_s=options.duration, schema=scenario.schema, folder=folder.name,
            schema_version=RESULTS_SCHEMA))
        if options.clients is not None:
            self.record.add(results.RunSummary(clients=options.clients))
        self.live = Live(attack.AttackOptions(
            rate, options.duration, options.timeout, attackers=options.attackers,
            max_connections=attack.connection_cap(self.settings.client_connection_cap),  # computed once
            clients=options.clients))
        now = time.monotonic()
        self.clock = Clock(zero=now, created=now, started_up_s=round(
            max(0.0, time.time() - psutil.Process().create_time()), 2) if own_process else None)
        self.measured = Measured()
        self.written: tuple[results.RunMeta, results.RunSummary | None] = (results.meta_of({}), None)

    @property
    def log(self) -> Path:
        return self.folder / "harness.log"

    @property
    def block(self) -> str:
        return self.record.block

    # ---- phases ----

    def execute(self) -> RunResult:
        harnesslog.use(self.log)
        try:
            self.record.meta = self._base_meta()
            self._write()
            try:
                self._prepare()
                self._attack_and_measure()
            except KeyboardInterrupt:
                self.record.status = STATUS_INTERRUPTED
                if self.live.attack is not None:
                    self.live.attack.interrupt()
            except Exception as exc:  # noqa: BLE001 — an operational failure: keep what was measured
                self._record_error("run", exc)
                self.record.status = STATUS_FAILED
            finally:
                self._stop_background()
            try:
                self._finish()
            except KeyboardInterrupt:
                self.record.status = STATUS_INTERRUPTED
                self._finish(skip_waits=True)
        finally:
            harnesslog.done(self.log)
        meta, written = self.written
        if written is None:  # no summary written: the run stopped before its finish
            written = results.RunSummary(schema_version=RESULTS_SCHEMA, status=STATUS_FAILED, errors=self.record.errors)
        return RunResult(self.folder, written, meta, self.record.block,
                         exit_code(written.status or STATUS_FAILED, self.options.strict))

    def _write(self, with_summary: bool = False) -> None:
        """meta.json (and summary.json) through their records (core/results.write_run). A summary its record refuses
        (one that says the run finished but lacks what every finished run records) is a bug of the harness: the run
        fails, the error is recorded, and the documents being written are kept beside as <name>.refused.json with
        that status and error, so what they hold is not lost."""
        try:
            self.written = results.write_run(self.folder, self.record.meta,
                                             self.record.summary if with_summary else None)
        except ValueError as exc:
            self._record_error("writing the results", exc)
            self.record.status = STATUS_FAILED
            self.record.describe(results.RunMeta(status=STATUS_FAILED,
                                                 exit_code=exit_code(STATUS_FAILED, self.options.strict)))
            failed = summary.joined(self.record.summary, results.RunSummary(status=STATUS_FAILED,
                                                                            errors=self.record.errors))
            kept = [("meta", results.document_of(self.record.meta))] + \
                ([("summary", results.document_of(failed))] if with_summary else [])
            for name, doc in kept:
                write_refused(self.folder / f"{name}.refused.json", doc)
            self.written = self._write_failed(with_summary)

    def _write_failed(self, with_summary: bool) -> tuple[results.RunMeta, results.RunSummary | None]:
        """What a run whose records were refused leaves as its meta.json (and summary.json): failed, with its errors,
        so no reader takes it for a finished run or one still running."""
        meta = results.RunMeta(scenario=self.scenario.name, rate=self.rate, status=STATUS_FAILED,
                               exit_code=exit_code(STATUS_FAILED))
        failed = results.RunSummary(scenario=self.scenario.name, rate=self.rate, folder=self.folder.name,
                                    status=STATUS_FAILED, errors=self.record.errors) if with_summary else None
        return results.write_run(self.folder, meta, failed)

    def _record_error(self, phase: str, exc: BaseException) -> None:
        text = f"{phase}: {type(exc).__name__}: {exc}"
        self.record.errors.append(text)
        harnesslog.write(text, exc)
        self.progress.say(f"{text} (details in {self.log.name})", final=True)

    def _safely(self, phase: str, fn: Callable[[], T], default: T | None = None) -> T | None:
        """Run one phase; an operational failure is recorded (errors, harness.log) and the run goes on."""
        try:
            return fn()
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001
            self._record_error(phase, exc)
            return default

    def _prepare(self) -> None:
        s = self.settings
        self.live.vegeta = ensure_vegeta(s)
        # the topology is checked once, there (ensure_topology), before anything reads the servers
        prepared = prepare.settings_and_data(s, self.scenario, self.options.knobs, self.options.links, self.progress,
                                             alongside=cpu.calibrate)
        score = prepared.alongside  # the calibration's, taken while it settled
        # the record's keys merged as a dictionary's were (a key set to None kept, one never set absent)
        self.record.describe(results.RunMeta.model_validate(prepared.set_up.model_dump(by_alias=True,
                                                                                       exclude_unset=True)))
        self.record.describe(results.RunMeta(
            host=summary.joined(self.record.meta.host or results.Host(), results.Host(calibration_score=score))))
        self.record.describe(results.RunMeta(dataset=_dataset_meta(s)))  # read again: a first use has just built it
        self.record.describe(results.RunMeta(versions=versions(s)))
        self.record.describe(results.RunMeta(disk=None if s.external else  # a remote server's: not visible
                                             self._safely("disk probe", lambda: servervars.describe_disk(s.state))))
        self.record.describe(results.RunMeta(server_variables_not_default=self._safely(
            "server variables", lambda: servervars.non_default(s, mariadb_binaries().get("mariadbd")))))
        self.record.describe(results.RunMeta(targets=prepare.app_and_targets(
            s, self.scenario, self.folder / "targets.json", self.progress, rate=self.rate,
            duration=self.options.duration, catch_up_timeout=self.options.catch_up_timeout,
            nonce=self.options.nonce or None)))
        # after the app's restart: its new processes are pinned; every field written, None too, as meta.json has it
        pinned = cpus.pin_groups(self.settings, self.options.cpus)
        self.record.describe(results.RunMeta(cpus=results.Cpus.model_validate(pinned.model_dump())))
        if s.attacker_hosts:
            self.progress.say(f"checking {len(s.attacker_hosts)} attacker host(s) over ssh (vegeta, clock skew), "
                              "copying the targets there")
            self.live.hosts = remote.check(s, self.live.vegeta, self.folder / "targets.json",
                                           self.live.attack_options)
            self.record.describe(results.RunMeta(attacker_hosts=[c.as_dict() for c in self.live.hosts]))
        if rowcheck.checked_columns(self.scenario) and rowcheck.method(self.options.knobs) == "sample":
            ids = rowcheck.sample_ids(self.folder / "targets.json")
            self.measured.row_sample = (ids, rowcheck.read_values(s, self.scenario.schema,
                                                         rowcheck.checked_columns(self.scenario), ids))
        self._write()

    def _attack_and_measure(self) -> None:
        s = self.settings
        self.clock.zero = time.monotonic()
        live = self.live
        live.samplers = watch = samplers.Samplers(s, self.folder, self.clock.zero,
                                                  lambda: live.attack.pids if live.attack else [],
                                                  {f.node for f in self.options.faults if f.action == "kill"},
                                                  soak=self.options.soak_window is not None)
        self.live.fault_runner = faults.FaultRunner(s, self.options.faults, self.clock.zero, self.scenario.schema)
        watch.start()
        window = idle_window(self.rate, s.idle_window)
        self.record.add(results.RunSummary(idle_window_s=window))
        self.progress.say(f"measuring the idle cost: heartbeat binlog bytes and each group's CPU ({window:g} s)")
        self.clock.idle = time.monotonic() - self.clock.zero
        idle_start = samplers.snapshot(s, watch)
        time.sleep(window)
        self.measured.before = samplers.snapshot(s, watch)
        self.measured.idle = samplers.idle_rates(idle_start, self.measured.before)
        self.measured.idle_counters = counters.idle_rates(idle_start.counters, self.measured.before.counters)
        if idle_start.binlog and self.measured.before.binlog:
            self.measured.bytes_per_beat = binlog.written_bytes(idle_start.binlog, self.measured.before.binlog) / \
                max(1, self.measured.before.beats - idle_start.beats)
        name = f"{self.scenario.name}-{self.rate}"
        if self.live.hosts is not None:
            self.live.attack = remote.RemoteAttack(s, self.live.hosts, self.folder, self.live.attack_options, name,
                                                     nodeexporter.host_busy)
        else:
            assert self.live.vegeta is not None  # _prepare's first step, done before the attack
            self.live.attack = attack.Attack(self.live.vegeta, self.folder, self.folder / "targets.json",
                                             self.live.attack_options, name,
                                             cpus.taskset_prefix(cpus.parse(self.options.cpus).get("vegeta")))
        self.record.describe(results.RunMeta(started_at=_now()))
        self.clock.start = time.monotonic() - self.clock.zero
        self.live.attack.start()
        if self.live.hosts is not None:  # start() returned at the agreed instant: the attack's start on our clock
            self.clock.start = time.monotonic() - self.clock.zero
            self.record.describe(results.RunMeta(
                attack_start_agreed=self.live.attack.start_text() + " UTC"))  # type: ignore[union-attr]
        self.record.describe(results.RunMeta(attack_command=self.live.attack.command))
        self.live.fault_runner.start(self.clock.start)
        self.live.catch_thread = threading.Thread(target=self._time_catch_up, daemon=True)
        self.live.catch_thread.start()
        try:
            self._show_progress()
        except KeyboardInterrupt:
            self.record.status = STATUS_INTERRUPTED
            self.progress.say("interrupted: stopping vegeta, keeping the partial results", final=True)
            self.live.attack.interrupt()
        self.live.attack.wait()
        self.live.attack_done.set()
        self.clock.end = time.monotonic() - self.clock.zero
        self.record.describe(results.RunMeta(attack_ended_at=_now()))
        appserver.wait_published(self.settings, time.time())  # the workers' counters, once more after the attack
        self.measured.after = samplers.snapshot(s, watch)
        if isinstance(self.live.attack, remote.RemoteAttack):
            self._collect_remote(self.live.attack)
        for error in self.measured.after.errors:  # a lost master: its figures are missing, the run goes on
            self._record_error("snapshot after the attack", RuntimeError(error))
        after, before = self.measured.after.admission, self.measured.before.admission
        self.record.add(results.RunSummary(app_admission=results.Admission.model_validate(
            {**after, **{k: after[k] - before.get(k, 0) for k in ("admitted", "shed", "episodes")}})))
        # the app's final count (its workers published once more), so even an attack shorter than a tick shows it
        self.progress.say(self._app_answers(after) + " in all", final=True)
        if self.record.status != STATUS_INTERRUPTED:
            self.progress.say("waiting for the replicas' catch-up (timed from the last request sent)", final=True)
            self.live.catch_thread.join()
            if self.scenario.writes:  # a read run's few pages (the heartbeat's) are left to the next settle
                self.progress.say("flushing the run's dirty pages on every node, counted as its write-back",
                                  final=True)
                self.measured.writeback = self._safely("write-back", lambda: writeback.flush(s, watch))
        # the plot's imports while the reports and checks wait on vegeta and the servers (after every figure is read)
        threading.Thread(target=timeline.preload_plotting, daemon=True).start()

    def _collect_remote(self, hosts: remote.RemoteAttack) -> None:
        """The attacker hosts' result files back here, each host's part recorded (the block's Attackers lines,
        judge's guards); their folders there removed."""
        vegeta = self.live.vegeta
        assert vegeta is not None
        self.progress.say("copying the attacker hosts' results back", final=True)
        parts = self._safely("attackers' results", lambda: [results.RemoteAttacker.model_validate(part)
                                                            for part in hosts.collect(vegeta)], default=None)
        self.live.hosts = None  # their folders are gone: nothing left to discard
        if parts is not None:
            self.record.add(results.RunSummary(remote_attackers=parts, attack_start_agreed=hosts.start_text() + " UTC"))

    def _show_progress(self) -> None:
        assert self.live.attack and self.live.samplers and self.measured.before and self.clock.start is not None
        while self.live.attack.still_running_after(PROGRESS_INTERVAL):
            elapsed = time.monotonic() - self.clock.zero - self.clock.start
            answers = self._app_answers()
            latest = self.live.samplers.cpu.rows[-1] if self.live.samplers.cpu.rows else {}
            # "–": nothing measures that group (a topology file's node without node_exporter)
            core = {g: f"{latest[g]:.0f}" if g in latest else "–" for g in ("app", *self.settings.node_names, "vegeta")}
            lost = ", ".join(f["node"] + " LOST" for f in self.live.samplers.health.open_faults())
            self.progress.say(
                f"{min(elapsed, self.options.duration):5.0f}/{self.options.duration:.0f} s, {answers} | cpu app "
                f"{core['app']} master {core['master']} "
                + "".join(f"r{r.removeprefix('replica')} {core[r]} " for r in self.settings.node_names[1:]) +
                f"vegeta {core['vegeta']}" + (f" | {lost}" if lost else ""), tick=True)
        self.progress.say("attack finished", final=True)

    def _app_answers(self, counted: dict[str, Any] | None = None) -> str:
        """The progress line's app part: what the app answered since the attack began, from its workers' counters
        (read now, or as given)."""
        assert self.measured.before
        counted = appserver.admission(self.settings) if counted is None else counted
        app = appserver.answered_since(self.measured.before.admission, counted)
        return (f"app answered {app['requests']:,}, {app['failed']:,} failed, app p99 ≤{app['p99_ms'] or 0:g} ms"
                if counted["workers"] else "app counters n/a (an app not started here)")

    def _time_catch_up(self) -> None:
        """At the moment vegeta sends its last request (attack start + duration), take the master's GTID position
        and time each replica's MASTER_GTID_WAIT for it from that instant, in parallel. Runs beside vegeta's
        wait for the responses still in flight, so it measures the replicas, not the load generator's tail."""
        assert self.clock.start is not None
        send_end = self.clock.zero + self.clock.start + self.options.duration
        while time.monotonic() < send_end and not self.live.attack_done.is_set():
            time.sleep(min(0.05, max(0.0, send_end - time.monotonic())))
        if self.record.status == STATUS_INTERRUPTED or (self.live.attack_done.is_set()
                                                        and time.monotonic() < send_end - 1):
            return  # interrupted: the send never reached its end
        self.clock.send_end = time.monotonic() - self.clock.zero
        try:
            self.measured.catch_up_gtid = nodes.master_gtid(self.settings)
        except sql.MySQLError as exc:
            self._record_error("catch-up (master's GTID position)", exc)
            self.measured.catch_up = {r.name: None for r in self.settings.replicas}
            return
        unreachable: set[str] = set()
        runner = self.live.fault_runner
        held = faults.held(list(runner.done), {r.name for r in self.settings.replicas}) \
            if runner is not None and runner.done else {}
        waited = tuple(r for r in self.settings.replicas if r.name not in held) if held else None
        self.measured.catch_up = {} if waited == () else nodes.wait_caught_up(
            self.settings, self.options.catch_up_timeout, self.measured.catch_up_gtid, replicas=waited,
            unreachable=unreachable)
        self.measured.catch_up.update({name: None for name in held})
        # unreachable: no wait took place, so not "behind"; held: stopped on purpose and not yet given back, no
        # wait either
        self.record.add(results.RunSummary(catch_up_unreachable=sorted(unreachable), catch_up_held=held))

    def _stop_background(self) -> None:
        if self.live.attack is not None and self.live.attack.running():
            self.live.attack.interrupt()
            self.live.attack.wait()
        if self.live.hosts is not None:  # checked, never collected (a failure before or during the attack)
            if isinstance(self.live.attack, remote.RemoteAttack):
                self._collect_remote(self.live.attack)
            else:
                remote.discard(self.settings, self.live.hosts)
                self.live.hosts = None
        self.live.attack_done.set()
        if self.live.fault_runner is not None:
            self.live.fault_runner.stop()
        if self.live.samplers is not None:
            self.live.samplers.stop()

    # ---- results ----

    def _finish(self, skip_waits: bool = False) -> None:
        files = attack.result_files(self.folder)
        vegeta = self.live.vegeta
        if vegeta is not None and any(f.stat().st_size > 0 for f in files):
            self._safely("vegeta reports", lambda: attack.write_reports(vegeta, self.folder))
            if (self.folder / "report.json").exists():
                self._safely("summary", self._summarize)
            if (self.options.faults or (self.live.samplers and self.live.samplers.health.faults)) and not skip_waits:
                self.progress.say("bringing every node back after the faults")
                started = self._safely("bringing the topology back", lambda: nodes.start_all(self.settings))
                self.record.add(results.RunSummary(restarted_after_run=started or []))
            if self.scenario.writes and self.record.status != STATUS_INTERRUPTED and not skip_waits:
                self._safely("consistency check", self._check_consistency)
            if rowcheck.checked_columns(self.scenario) and not skip_waits:
                self.progress.say("checking that the writes changed their rows")
                self._safely("row check", self._check_rows)
        elif self.record.status == STATUS_OK:
            self.record.status = STATUS_FAILED
            self.record.errors.append("vegeta produced no results")
        self._guards()
        tl = self.measured.timeline
        if tl is not None:
            self._safely("latency plot", lambda: self._plot(tl))
        self.record.add(results.RunSummary(harness_time_s=self._harness_time(), status=self.record.status,
                                           errors=self.record.errors))
        self.record.describe(results.RunMeta(finished_at=_now(), status=self.record.status,
                                             exit_code=exit_code(self.record.status, self.options.strict)))
        self._write(with_summary=True)
        if (self.folder / "report.txt").exists() and self.written[1] is not None:
            self.record.block = render_block(self.written[1], self.folder)
            (self.folder / "block.txt").write_text(self.block)

    def _plot(self, tl: timeline.Timeline) -> None:
        """latency.png: latency over the run, the nodes lost and back and the planned faults marked, the lag beside."""
        seen = self.record.summary.nodes_lost or []
        planned = self.live.fault_runner.done if self.live.fault_runner else []
        timeline.plot(
            tl, self.folder / "latency.png",
            f"{self.scenario.name} @ {self.rate} rps — latency over time ({self.record.status})",
            [((f.lost_at_s or 0) - (self.clock.start or 0), f"{f.node} lost") for f in seen]
            + [(f.back_at_s - (self.clock.start or 0), f"{f.node} back") for f in seen if f.back_at_s is not None]
            + [(p["at_s"], p["fault"]) for p in planned if p["action"] not in ("kill", "start")],
            lag=(*self._lag_series(), self.clock.start) if self.live.samplers and self.clock.start else None)

    def _lag_series(self) -> tuple[dict[str, list[tuple[float, float]]], dict[str, list[tuple[float, float, float]]]]:
        """Each replica's lag samples and its split over the attack (and its catch-up), on the run's clock."""
        assert self.live.samplers is not None and self.clock.start is not None
        positions = self.live.samplers.lag.positions
        start, end = self.clock.start, time.monotonic() - self.clock.zero
        names = [r.name for r in self.settings.replicas]
        return ({n: positions.series(n, start, end) for n in names}, {n: positions.split(n, start, end) for n in names})

    def _harness_time(self) -> results.HarnessTime:
        """Wall seconds of the run's parts: the process's start-up (interpreter, imports, arguments), preparing
        (topology check, settle, settings, warm-up, app, targets), the idle window, the attack (to its last
        answer), and what follows it (catch-up, reports, checks, plot); a part the run never reached is absent."""
        now, clock = time.monotonic(), self.clock
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

    def _summarize(self) -> None:
        assert self.live.vegeta is not None
        report = results.VegetaReport.model_validate(attack.read_report(self.folder))
        done = self.live.fault_runner.done if self.live.fault_runner else []
        tl = timeline.build(attack.decode(self.live.vegeta, attack.result_files(self.folder)),
                            faults.windows(done, self.options.duration), faults.outages(done))
        self.record.add(summary.client(report, tl))
        written = self.record.meta.targets
        if written is not None and written.count is not None:  # what vegeta was given: a guard checks it looped none
            self.record.add(results.RunSummary(targets=written.count))
        self.record.add(results.RunSummary(app_admission=summary.joined(
            self.record.summary.app_admission or results.Admission(),
            results.Admission.model_validate(appserver.admission_settings(self.settings)))))
        # what the run was set up with, beside its figures
        meta = self.record.meta
        self.record.add(results.RunSummary(cpus=meta.cpus or results.Cpus(), buffer_pools=meta.buffer_pools or {},
                                           settle=meta.settle or results.Settle(), links=meta.links or {}))
        if done:
            self.record.add(results.RunSummary(
                planned_faults=[results.PlannedFault.model_validate(fault) for fault in done],
                fault_windows={name: results.FaultWindow.model_validate(w) for name, w in tl.windows.items()},
                routing=[results.Routing.model_validate(outage) for outage in tl.routing]))
        if self.live.samplers is not None and self.clock.start is not None:
            timeline.add_lag(tl, *self._lag_series(), self.clock.start)
        timeline.write_csv(tl, self.folder / "timeline.csv")
        self.measured.timeline = tl  # plotted once the status is final
        if self.clock.end is None or self.clock.start is None or self.live.samplers is None \
                or self.measured.after is None:
            return  # interrupted before the attack's counters were read
        self._summarize_servers(report, tl)

    def _summarize_servers(self, report: results.VegetaReport, tl: timeline.Timeline) -> None:
        """The servers' figures over the attack's window, what limited the run, and a soak's windows."""
        assert self.live.attack is not None and self.measured.before is not None and self.measured.after is not None
        assert self.live.samplers is not None and self.clock.start is not None and self.clock.end is not None
        s, b, a, watch = self.settings, self.measured.before, self.measured.after, self.live.samplers
        readback = self.record.meta.knobs_readback or {}
        window = summary.Window(
            t_start=self.clock.start, t_end=self.clock.end, cpu_before=b.cpu, cpu_after=a.cpu,
            attack_cpu_s=results.AttackCpu.model_validate(self.live.attack.cpu_seconds),
            harness_cpu_s=a.own_cpu - b.own_cpu,
            cpu_rows=watch.cpu.rows, memory_rows=watch.cpu.memory_rows,
            lag={name: results.LagOf.model_validate(figures)
                 for name, figures in watch.lag.summarize(self.clock.start, self.clock.end).items()},
            not_replicating=list(watch.lag.not_replicating),
            nodes_lost=[results.Fault.model_validate(fault) for fault in watch.health.faults],
            counters_before=b.counters, counters_after=a.counters,
            heartbeats=a.beats - b.beats, binlog_before=b.binlog, binlog_after=a.binlog,
            bytes_per_beat=self.measured.bytes_per_beat, idle_cpu_per_s=self.measured.idle, seconds=a.at - b.at,
            lag_settled_s=None if self.clock.send_end is None else watch.lag.settled_after(self.clock.send_end),
            sources={"app": s.app_cpu_source, **{n.name: n.cpu_source for n in s.nodes}},
            sync_binlog={name: int(sync) for name, back in readback.items()
                         if (sync := back.sync_binlog) is not None and sync.isdigit()},
            idle_start=self.clock.idle, idle_counters_per_s=self.measured.idle_counters)
        client = self.record.summary
        assert client.requests is not None and client.successes is not None  # summary.client's, always set
        self.record.add(summary.servers(
            window, requests=client.requests, successes=client.successes,
            writes=summary.writes_of(tl), sending_s=report.duration / 1e9 or (self.clock.end - self.clock.start),
            databases_here=not s.external, cores=os.cpu_count()))
        self.record.add(results.RunSummary(
            lag_floor_ms=watch.lag.floor_ms(self.clock.start, self.clock.end), heartbeat_ms=s.heartbeat_ms,
            catch_up_s=self.measured.catch_up, catch_up_timeout_s=self.options.catch_up_timeout,
            client_connections=self.live.attack_options.max_connections,
            client_connections_setting=s.client_connections))  # auto, N or unlimited
        if self.measured.writeback is not None and self.clock.idle is not None:
            replication = self.record.summary.replication or results.Replication()
            self.record.add(results.RunSummary(writeback=writeback_figures.derive(
                self.measured.writeback, self.measured.idle, summary.writes_of(tl),
                self.record.summary.cpu_seconds_net or {}, replication.nodes or {},
                cpu.per_second_within(watch.cpu.rows, self.clock.idle, self.clock.start))))
        self.record.add(results.RunSummary(above_knee=summary.above_knee(self.record.summary, self.scenario.criteria)))
        self.record.add(results.RunSummary(limit=limits.limiting(self.record.summary,
                                                                 self.options.knobs.parallel_threads)))
        if watch.innodb is not None and self.options.soak_window is not None:
            lags = {r.name: watch.lag.positions.series(r.name, self.clock.start, self.clock.end) for r in s.replicas}
            successes = self.record.summary.successes or 0
            costs = soak.Costs(write_share=summary.writes_of(tl) / successes if successes else 0.0,
                               cpu_rows=watch.cpu.rows, idle_cpu_per_s=self.measured.idle, io_rows=watch.health.rows)
            self.record.add(results.RunSummary(soak=soak.analyse(
                tl.seconds, lags, watch.innodb.rows, self.clock.start, self.clock.end, self.options.soak_window,
                costs)))

    def _check_rows(self) -> None:
        s = self.settings
        if self.measured.row_sample is not None:
            ids, before = self.measured.row_sample
            check = rowcheck.from_sample(s, self.scenario, ids, before,
                                         self.record.summary.requests or 0)
        elif (m := self.measured).before and m.after and m.before.binlog and m.after.binlog:
            done = self.live.fault_runner.done if self.live.fault_runner else []
            planned = tuple(f["bigtx"]["value"] for f in done if (f.get("bigtx") or {}).get("value"))
            check = rowcheck.from_binlog(s, self.scenario, m.before.binlog, m.after.binlog, planned_values=planned)
        else:
            return
        self.record.add(results.RunSummary(rows_checked=results.RowsChecked.model_validate(check)))

    def _check_consistency(self) -> None:
        s = self.settings
        table = f"{self.scenario.schema}.accounts"
        held = self.record.summary.catch_up_held or {}
        behind = not_caught_up(self.measured.catch_up or {}, held)
        missing = [n.name for n in s.nodes if not nodes.node_up(n, s)]
        if behind:
            self.record.add(results.RunSummary(consistency=results.Consistency(
                table=table, checked=False, equal=None,
                reason=f"{', '.join(behind)} did not catch up within {self.options.catch_up_timeout:g} s")))
            return
        # a replica a planned fault held at the send's end was never waited for: left out, and said so
        alive = tuple(n for n in s.nodes if n.name not in missing and n.name not in held)
        ids = self._checksum_rows(table)
        self.progress.say("waiting for the replicas, then " + ("CHECKSUM TABLE" if ids is None else
                          f"a checksum of the {len(set(ids)):,} rows written") + " on the nodes that answer")
        waited = nodes.wait_caught_up(s, self.options.catch_up_timeout,
                                         replicas=tuple(n for n in alive if n.role == "replica"))
        sums: dict[str, int | None] = {}

        def checksum(node: Node) -> None:
            try:
                sums[node.name] = sql.checksum(node, s, table) if ids is None else \
                    sql.rows_checksum(node, s, table, ids)
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
        self.record.add(results.RunSummary(consistency=checked))
        if not equal:
            self.record.status = STATUS_FAILED

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

    def _guards(self) -> None:
        facts = judge.RunFacts(criteria=self.scenario.criteria, rate=self.rate,
                               catch_up_timeout=self.options.catch_up_timeout, cores=os.cpu_count() or 1,
                               planned_nodes=frozenset(f.node for f in self.options.faults),
                               attack_start_s=self.clock.start or 0, errors=tuple(self.record.errors),
                               searched=self._searched())
        rec = self.record
        guards, saturation, rec.status = judge.judge(rec.summary, rec.meta, facts, rec.status)
        rec.add(results.RunSummary(guards=guards, saturation=saturation))

    def _base_meta(self) -> results.RunMeta:
        s = self.settings
        base = results.RunMeta(
            schema_version=RESULTS_SCHEMA,
            scenario=self.scenario.name, scenario_file=self.scenario.source, rate=self.rate,
            duration_s=self.options.duration, timeout_s=self.options.timeout,
            attack_options={**self.live.attack_options.as_dict(),
                            "client_connections": f"{s.client_connections} (REPLBENCH_CLIENT_CONNECTIONS)"},
            knobs=results.KnobSetting.model_validate(self.options.knobs.as_dict()),
            knobs_changed=results.KnobSetting.model_validate(self.options.knobs.changed()),
            links_requested=[link.spec for link in self.options.links],
            dataset=_dataset_meta(s),
            app={"workers": s.app_workers, "driver": s.driver, "worker_class": s.worker_class,
                 "pool_size": s.pool_size, "statement_timeout_s": s.statement_timeout,
                 "max_inflight": s.max_inflight, "max_queue_ms": s.max_queue_ms,
                 "admission": appserver.admission_settings(s),
                 "transport": "unix socket" if s.app_socket("master") else "tcp"},
            topology={n.name: {"port": n.port, "server_id": n.server_id, "host": n.host, "external": n.external,
                               "cpu_source": n.cpu_source} for n in s.nodes},
            topology_file=s.topology_name if s.external else None,
            buffer_pool=s.buffer_pool, flavour=s.flavour, catch_up_timeout_s=self.options.catch_up_timeout,
            idle_window={"setting": s.idle_window or "auto", "seconds": idle_window(self.rate, s.idle_window)},
            host=results.Host.model_validate({**cpu.describe_host(calibrated=False), "platform": platform.platform()}),
            created_at=_now(), command=[without_machine_paths(a) for a in sys.argv],  # no machine path
            status=STATUS_RUNNING, pid=os.getpid())
        if any(r.endpoint == "update_users" for r in self.scenario.requests):  # a bulk scenario's rows per request
            base = summary.joined(base, results.RunMeta(bulk_rows=self.scenario.bulk_rows))
        return base


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
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
        git_commit: str | None = commit + ("-dirty" if dirty.strip() else "")
    except OSError:
        git_commit = None
    return results.Versions(vegeta=VEGETA_VERSION, python=platform.python_version(), mariadb=mariadb,
                            packages={name: _pkg_version(name) for name in wanted}, git_commit=git_commit)


def _pkg_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


