"""One benchmark run: a constant-rate vegeta attack of one scenario against the running topology, and a complete,
self-describing results folder (meta.json, targets, results.bin, vegeta reports, cpu.csv, io.csv, lag.csv,
memory.csv, latency.png, summary.json, block.txt, harness.log when something went wrong).

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

import json
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
from typing import Any

import psutil

from . import (
    appserver,
    attack,
    binlog,
    counters,
    cpus,
    dataset,
    faults,
    harnesslog,
    knobs,
    lag,
    links,
    nodeexporter,
    nodesampler,
    rowcheck,
    sampling,
    servervars,
    sql,
    targets,
    timeline,
    topology,
)
from .bringup import ensure_topology
from .config import (
    CATCH_UP_TIMEOUT,
    HEARTBEAT_CALIBRATION,
    HOST_SATURATED,
    MIN_RATE_RATIO,
    MIN_SUCCESS,
    PROGRESS_INTERVAL,
    REQUEST_TIMEOUT,
    ROOT,
    VEGETA_SATURATED,
    Settings,
)
from .install import VEGETA_VERSION, ensure_vegeta, mariadb_binaries
from .progress import Progress
from .scenario import WRITE_ENDPOINTS, Scenario

ERROR_LINES_SHOWN = 8
STATUS_OK = "ok"
STATUS_WARNING = "ok-with-warnings"
STATUS_FAILED = "FAILED"
STATUS_INTERRUPTED = "interrupted"
STATUS_RUNNING = "running"
STATUS_INCOMPLETE = "incomplete"
DB_NODES = ("master", "replica1", "replica2")


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


def new_folder(settings: Settings, scenario: Scenario, rate: int, parent: Path | None = None) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    base = parent or settings.results
    folder = base / f"{stamp}-{scenario.name}-{rate}"
    n = 1
    while folder.exists():
        n += 1
        folder = base / f"{stamp}-{scenario.name}-{rate}-{n}"
    folder.mkdir(parents=True)
    return folder


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


def shown_path(folder: Path) -> str:
    """A results folder as printed: relative to the repository when inside it (no machine path in committed
    output), else as given."""
    try:
        return str(folder.resolve().relative_to(ROOT))
    except ValueError:
        return str(folder)


class Run:
    """State of one run while it executes; execute() returns the summary dict."""

    def __init__(self, settings: Settings, scenario: Scenario, rate: int, options: RunOptions, folder: Path,
                 progress: Progress | None = None) -> None:
        # a scenario may switch lag-aware reads on for the app it runs against
        self.settings = settings if scenario.max_lag is None else settings.with_overrides(max_lag=scenario.max_lag)
        if any(link.name.startswith("app-") for link in options.links):  # the app reaches those nodes by proxy
            self.settings = self.settings.with_overrides(db_hosts=links.app_hosts(self.settings, options.links))
        self.scenario = scenario
        self.rate = rate
        self.options = options
        self.folder = folder
        self.log = folder / "harness.log"
        self.progress = progress or Progress(f"{scenario.name}@{rate}")
        self.status = STATUS_OK
        self.meta: dict[str, Any] = {}
        self.summary: dict[str, Any] = {"scenario": scenario.name, "rate": rate, "duration_s": options.duration,
                                        "schema": scenario.schema, "folder": folder.name}
        self.errors: list[str] = []
        self.attack_options = attack.AttackOptions(rate, options.duration, options.timeout,
                                                   attackers=options.attackers)  # computed once
        self.zero = time.monotonic()  # the one clock of every sampler: set again, once, before they start
        self.monitor: lag.LagMonitor | None = None
        self.sampler: sampling.CpuSampler | None = None
        self.nodes: nodesampler.NodeSampler | None = None
        self.fault_runner: faults.FaultRunner | None = None
        self.attack: attack.Attack | None = None
        self.vegeta: Path | None = None
        self.timeline: timeline.Timeline | None = None
        self.t_start: float | None = None
        self.t_end: float | None = None
        self.t_send_end: float | None = None
        self.bytes_per_beat = 0.0
        self.binlog_before: binlog.BinlogSnapshot | None = None
        self.binlog_after: binlog.BinlogSnapshot | None = None
        self.counters_before: dict[str, Any] = {}
        self.counters_after: dict[str, Any] = {}
        self.cpu_before: dict[str, float] = {}
        self.cpu_after: dict[str, float] = {}
        self.own_cpu_before = 0.0
        self.own_cpu_after = 0.0
        self.beats_before = 0
        self.beats_during = 0
        self.catch_up: dict[str, float | None] | None = None
        self.catch_up_gtid: str | None = None
        self._catch_thread: threading.Thread | None = None
        self._attack_done = threading.Event()
        self.admission_before: dict[str, Any] = {}
        self.row_sample: tuple[list[int], dict[int, tuple]] | None = None  # the row check's sample, before

    # ---- phases ----

    def execute(self) -> dict[str, Any]:
        harnesslog.use(self.log)
        try:
            self.meta = self._base_meta()
            write_json(self.folder / "meta.json", self.meta)
            try:
                self._prepare()
                self._attack_and_measure()
            except KeyboardInterrupt:
                self.status = STATUS_INTERRUPTED
                if self.attack is not None:
                    self.attack.interrupt()
            except Exception as exc:  # noqa: BLE001 — an operational failure: keep what was measured
                self._record_error("run", exc)
                self.status = STATUS_FAILED
            finally:
                self._stop_background()
            try:
                self._finish()
            except KeyboardInterrupt:
                self.status = STATUS_INTERRUPTED
                self._finish(skip_waits=True)
        finally:
            harnesslog.done(self.log)
        return self.summary

    def _record_error(self, phase: str, exc: BaseException) -> None:
        text = f"{phase}: {type(exc).__name__}: {exc}"
        self.errors.append(text)
        harnesslog.write(text, exc)
        self.progress.say(f"{text} (details in {self.log.name})", final=True)

    def _safely(self, phase: str, fn: Callable[[], Any], default: Any = None) -> Any:
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
        self.vegeta = ensure_vegeta(s)
        ensure_topology(s, with_app=False)
        self.meta["versions"] = versions(s)
        self.meta["disk"] = None if s.external else \
            self._safely("disk probe", lambda: servervars.describe_disk(s.state))  # a remote server's: not visible
        self.progress.say(f"applying settings: {self.options.knobs.describe()}")
        self.meta["knobs_readback"] = knobs.apply(s, self.options.knobs)
        self.meta["knob_mismatches"] = knobs.mismatches(self.options.knobs, self.meta["knobs_readback"], s)
        self.meta["links"] = links.apply(s, self.options.links)
        counters.enable(s)
        self.meta["server_variables_not_default"] = self._safely(
            "server variables", lambda: servervars.non_default(s, mariadb_binaries().get("mariadbd")))
        self.meta["warm_up_s"] = dataset.warm_up(s, self.scenario.schema, self.progress)
        self.meta["buffer_pools"] = self._safely("buffer pools", lambda: dataset.pool_fit(s, self.scenario.schema))
        appserver.stop(s)  # restart: fresh connections see the knobs, and the run's app settings apply
        appserver.start(s)
        self.meta["cpus"] = self._pin()
        self.progress.say("waiting for the replicas to be caught up before the attack")
        before = topology.wait_caught_up(s, self.options.catch_up_timeout)
        if any(v is None for v in before.values()):
            raise topology.TopologyError(f"replicas not caught up before the run: {before}")
        self.progress.say("generating targets from the dataset")
        self.meta["targets"] = targets.generate(s, self.scenario, appserver.base_url(s), self.folder / "targets.json",
                                                rate=self.rate, duration=self.options.duration,
                                                nonce=self.options.nonce or None)
        if rowcheck.checked_columns(self.scenario) and rowcheck.method(self.options.knobs) == "sample":
            ids = rowcheck.sample_ids(self.folder / "targets.json")
            self.row_sample = (ids, rowcheck.read_values(s, self.scenario.schema,
                                                         rowcheck.checked_columns(self.scenario), ids))
        write_json(self.folder / "meta.json", self.meta)

    def _pin(self) -> dict[str, Any]:
        """Every group on its cores (--cpus), or on all of them: no run inherits another's pinning."""
        pinning = cpus.parse(self.options.cpus)
        everything = cpus.all_cpus()
        groups = {"app": [p.pid for p in appserver.app_processes(self.settings)],
                  **{n.name: [pid] if (pid := topology.node_pid(n)) else [] for n in self.settings.nodes}}
        for group, pids in groups.items():
            cpus.pin(pids, pinning.get(group, everything))
        return {"requested": self.options.cpus or None, "pinned": {g: sorted(c) for g, c in pinning.items()},
                "read_back": {g: cpus.read_back(pids) for g, pids in groups.items()}}

    def _pid_of(self, name: str) -> int | None:
        return topology.node_pid(self.settings.node(name))

    def _attack_and_measure(self) -> None:
        s = self.settings
        self.zero = time.monotonic()
        self.monitor = lag.LagMonitor(s, self.folder / "lag.csv", self.zero)
        self.nodes = nodesampler.NodeSampler(s, self.folder / "io.csv", self.zero, self._pid_of)
        self.nodes.planned = {f.node for f in self.options.faults if f.action == "kill"}
        self.fault_runner = faults.FaultRunner(s, self.options.faults, self.zero)
        groups = {
            **({} if s.app_url else {"app": lambda: [p.pid for p in appserver.app_processes(s)]}),
            **{n.name: (lambda n=n: [pid] if (pid := topology.node_pid(n)) else []) for n in s.nodes
               if not n.external},
            "vegeta": lambda: self.attack.pids if self.attack else [],
            "harness": lambda: [os.getpid()],
        }
        # a topology file's node: its host's busy CPU from its node_exporter, or no CPU figure at all
        remote = {n.name: (lambda n=n: nodeexporter.host_busy(n.metrics)) for n in s.nodes
                  if n.external and n.metrics}
        self.sampler = sampling.CpuSampler(groups, self.folder / "cpu.csv", self.folder / "memory.csv", self.zero,
                                           counters=remote)
        self.monitor.start()
        self.nodes.start()
        self.sampler.start()
        self.progress.say(f"calibrating heartbeat binlog cost ({HEARTBEAT_CALIBRATION:g} s)")
        cal_before, beats_before = binlog.snapshot(s), self.monitor.beats
        time.sleep(HEARTBEAT_CALIBRATION)
        cal_after, beats_after = binlog.snapshot(s), self.monitor.beats
        self.bytes_per_beat = binlog.written_bytes(cal_before, cal_after) / max(1, beats_after - beats_before)

        pids = {n.name: topology.node_pid(n) for n in s.nodes}
        self.binlog_before = binlog.snapshot(s)
        self.counters_before = counters.snapshot(s, pids)
        self.cpu_before = self.sampler.totals()
        self.own_cpu_before = _own_cpu()
        self.beats_before = self.monitor.beats
        self.admission_before = appserver.admission(s)
        self.attack = attack.Attack(self.vegeta, self.folder, self.folder / "targets.json", self.attack_options,
                                    f"{self.scenario.name}-{self.rate}",
                                    cpus.taskset_prefix(cpus.parse(self.options.cpus).get("vegeta")))
        self.meta["attack_command"] = self.attack.command
        self.meta["started_at"] = _now()
        self.t_start = time.monotonic() - self.zero
        self.attack.start()
        self.fault_runner.start(self.t_start)
        self._catch_thread = threading.Thread(target=self._time_catch_up, daemon=True)
        self._catch_thread.start()
        try:
            self._show_progress()
        except KeyboardInterrupt:
            self.status = STATUS_INTERRUPTED
            self.progress.say("interrupted: stopping vegeta, keeping the partial results", final=True)
            self.attack.interrupt()
        self.attack.wait()
        self._attack_done.set()
        self.t_end = time.monotonic() - self.zero
        self.meta["attack_ended_at"] = _now()
        time.sleep(appserver.ADMISSION_SETTLE)  # the workers publish their counters every second
        after = appserver.admission(s)
        self.summary["app_admission"] = {**after, **{k: after[k] - self.admission_before.get(k, 0)
                                                    for k in ("admitted", "shed")}}
        pids = {n.name: topology.node_pid(n) for n in s.nodes}
        self.counters_after = counters.snapshot(s, pids)
        self.binlog_after = self._safely("binlog snapshot after the attack", lambda: binlog.snapshot(s))
        self.cpu_after = self.sampler.totals()
        self.own_cpu_after = _own_cpu()
        self.beats_during = self.monitor.beats - self.beats_before
        if self.status != STATUS_INTERRUPTED:
            self.progress.say("waiting for the replicas' catch-up (timed from the last request sent)")
            self._catch_thread.join()

    def _show_progress(self) -> None:
        assert self.attack and self.sampler and self.t_start is not None
        while self.attack.running():
            time.sleep(PROGRESS_INTERVAL)
            elapsed = time.monotonic() - self.zero - self.t_start
            counted = appserver.admission(self.settings)
            app = appserver.answered_since(self.admission_before, counted)
            answers = (f"app answered {app['requests']:,}, {app['failed']:,} failed, app p99 ≤{app['p99_ms'] or 0:g} ms"
                       if counted["workers"] else "app counters n/a (an app not started here)")
            cpu = self.sampler.rows[-1] if self.sampler.rows else {}
            # "–": nothing measures that group (a topology file's node without node_exporter)
            core = {g: f"{cpu[g]:.0f}" if g in cpu else "–" for g in ("app", *DB_NODES, "vegeta")}
            lost = ", ".join(f["node"] + " LOST" for f in self.nodes.open_faults()) if self.nodes else ""
            self.progress.say(
                f"{min(elapsed, self.options.duration):5.0f}/{self.options.duration:.0f} s, {answers} | cpu app "
                f"{core['app']} master {core['master']} r1 {core['replica1']} r2 {core['replica2']} "
                f"vegeta {core['vegeta']}" + (f" | {lost}" if lost else ""))
        self.progress.say("attack finished", final=True)

    def _time_catch_up(self) -> None:
        """At the moment vegeta sends its last request (attack start + duration), take the master's GTID position
        and time each replica's MASTER_GTID_WAIT for it from that instant, in parallel. Runs beside vegeta's
        wait for the responses still in flight, so it measures the replicas, not the load generator's tail."""
        assert self.t_start is not None
        send_end = self.zero + self.t_start + self.options.duration
        while time.monotonic() < send_end and not self._attack_done.is_set():
            time.sleep(min(0.05, max(0.0, send_end - time.monotonic())))
        if self.status == STATUS_INTERRUPTED or (self._attack_done.is_set() and time.monotonic() < send_end - 1):
            return  # interrupted: the send never reached its end
        self.t_send_end = time.monotonic() - self.zero
        try:
            self.catch_up_gtid = topology.master_gtid(self.settings)
        except sql.MySQLError as exc:
            self._record_error("catch-up (master's GTID position)", exc)
            self.catch_up = {r.name: None for r in self.settings.replicas}
            return
        self.catch_up = topology.wait_caught_up(self.settings, self.options.catch_up_timeout, self.catch_up_gtid)

    def _stop_background(self) -> None:
        if self.attack is not None and self.attack.running():
            self.attack.interrupt()
            self.attack.wait()
        self._attack_done.set()
        if self.fault_runner is not None:
            self.fault_runner.stop()
        for sampler in (self.sampler, self.nodes, self.monitor):
            if sampler is not None:
                sampler.stop()

    # ---- results ----

    def _finish(self, skip_waits: bool = False) -> None:
        files = attack.result_files(self.folder)
        if self.vegeta is not None and any(f.stat().st_size > 0 for f in files):
            self._safely("vegeta reports", lambda: attack.write_reports(self.vegeta, self.folder))
            if (self.folder / "report.json").exists():
                self._safely("summary", self._summarize)
            if (self.options.faults or (self.nodes and self.nodes.faults)) and not skip_waits:
                self.progress.say("bringing every node back after the faults")
                started = self._safely("bringing the topology back", lambda: topology.start_all(self.settings))
                self.summary["restarted_after_run"] = started or []
            if self.scenario.writes and self.status != STATUS_INTERRUPTED and not skip_waits:
                self._safely("consistency check", self._check_consistency)
            if rowcheck.checked_columns(self.scenario) and not skip_waits:
                self.progress.say("checking that the writes changed their rows")
                self._safely("row check", self._check_rows)
        elif self.status == STATUS_OK:
            self.status = STATUS_FAILED
            self.errors.append("vegeta produced no results")
        self._guards()
        if self.timeline is not None:
            seen = self.summary.get("faults") or []
            planned = self.summary.get("planned_faults") or []
            self._safely("latency plot", lambda: timeline.plot(
                self.timeline, self.folder / "latency.png",
                f"{self.scenario.name} @ {self.rate} rps — latency over time ({self.status})",
                [(f["lost_at_s"] - (self.t_start or 0), f"{f['node']} lost") for f in seen]
                + [(f["back_at_s"] - (self.t_start or 0), f"{f['node']} back") for f in seen
                   if f["back_at_s"] is not None]
                + [(p["at_s"], p["fault"]) for p in planned if p["action"] not in ("kill", "start")]))
        self.summary["status"] = self.status
        self.summary["errors"] = self.errors
        self.meta.update(finished_at=_now(), status=self.status, exit_code=exit_code(self.status, self.options.strict))
        write_json(self.folder / "meta.json", self.meta)
        write_json(self.folder / "summary.json", self.summary)
        if (self.folder / "report.txt").exists():
            (self.folder / "block.txt").write_text(render_block(self.summary, self.folder))

    def _summarize(self) -> None:
        assert self.vegeta is not None
        report = attack.read_report(self.folder)
        lat = report["latencies"]
        done = self.fault_runner.done if self.fault_runner else []
        tl = timeline.build(attack.decode(self.vegeta, attack.result_files(self.folder)),
                            faults.windows(done, self.options.duration), faults.outages(done))
        self.summary["served_by"] = tl.served
        self.summary["app_admission"] = {**(self.summary.get("app_admission") or {}),
                                         "limit_per_worker": self.settings.max_inflight,
                                         "queue_ms": self.settings.max_queue_ms}
        self.summary["cpus"] = self.meta.get("cpus") or {}
        self.summary["buffer_pools"] = self.meta.get("buffer_pools") or {}
        self.summary["links"] = self.meta.get("links") or {}
        if done:
            self.summary.update(planned_faults=done, fault_windows=tl.windows, routing=tl.routing)
        timeline.write_csv(tl, self.folder / "timeline.csv")
        self.timeline = tl  # plotted once the status is final
        requests = report["requests"]
        successes = round(report["success"] * requests)
        server_requests = max(1, requests - tl.client_errors)
        self.summary.update(
            requests=requests, successes=successes, rate_sent=round(report["rate"], 2),
            goodput=round(report["throughput"], 2), success=report["success"],
            server_success=round(successes / server_requests, 6), client_errors=tl.client_errors,
            status_codes=report["status_codes"], errors_seen=report["errors"][:10], outcomes=tl.outcomes,
            latency_ms={k: round(lat[q] / 1e6, 3) for k, q in
                        (("min", "min"), ("mean", "mean"), ("p50", "50th"), ("p90", "90th"), ("p95", "95th"),
                         ("p99", "99th"), ("max", "max"))})
        if self.t_end is None or self.t_start is None or self.sampler is None:
            return  # interrupted before the attack's counters were read
        assert self.monitor is not None and self.nodes is not None and self.attack is not None
        cpu_s = sampling.cpu_seconds(self.cpu_before, self.cpu_after)
        cpu_s["vegeta"] = self.attack.cpu_seconds.get("vegeta", cpu_s.get("vegeta", 0.0))  # exact: wait4
        self.summary["pipeline_cpu_s"] = dict(self.attack.cpu_seconds)  # the attack process(es), exact
        cpu_s["harness"] = round(self.own_cpu_after - self.own_cpu_before, 3)
        groups = [g for g in sampling.GROUPS if g in cpu_s]
        busy = cpu_s.get("host_busy") or 0.0
        # the databases' share of this host: only when they run on it (a topology file's servers do not)
        db = None if self.settings.external else sum(cpu_s.get(n, 0.0) for n in DB_NODES)
        self.summary.update(
            cpu_sources={"app": self.settings.app_cpu_source,
                         **{n.name: n.cpu_source for n in self.settings.nodes}},
            cpu_mean_percent=sampling.steady_means(self.sampler.rows, self.t_start, self.t_end),
            cpu_seconds=cpu_s,
            cpu_ms_per_request={k: round(1000 * cpu_s[k] / max(1, requests), 3) for k in groups},
            cpu_ms_per_success={k: round(1000 * cpu_s[k] / successes, 3) for k in groups} if successes else {},
            db_share_of_host=round(db / busy, 3) if busy and db is not None else None, cores=os.cpu_count(),
            memory_mb=sampling.memory_summary(self.sampler.memory_rows))
        self.summary["lag"] = self.monitor.summarize(self.t_start, self.t_end)
        self.summary["lag_floor_ms"] = self.settings.heartbeat_ms
        self.summary["catch_up_s"] = self.catch_up
        self.summary["catch_up_timeout_s"] = self.options.catch_up_timeout
        if self.t_send_end is not None:
            self.summary["lag_settled_s"] = self.monitor.settled_after(self.t_send_end)
        self.summary["replicas_not_replicating"] = sorted(self.monitor.not_replicating)
        self.summary["faults"] = self.nodes.faults
        self.summary["attack_start_s"] = round(self.t_start, 3)
        writes = sum(tl.ok_count(e) for e in WRITE_ENDPOINTS)
        seconds = report["duration"] / 1e9 or (self.t_end - self.t_start)  # vegeta's sending time
        rep = counters.describe(self.counters_before, self.counters_after, seconds, self.beats_during, writes)
        self.summary["replication"] = rep
        if self.binlog_before is not None and self.binlog_after is not None:
            rows = (rep["nodes"].get("master") or {}).get("rows_changed") or 0
            self.summary["binlog"] = binlog.describe(self.binlog_before, self.binlog_after, self.beats_during,
                                                     self.bytes_per_beat, writes, rows)

    def _check_rows(self) -> None:
        s = self.settings
        if self.row_sample is not None:
            ids, before = self.row_sample
            check = rowcheck.from_sample(s, self.scenario, ids, before, self.summary.get("requests", 0))
        elif self.binlog_before is not None and self.binlog_after is not None:
            check = rowcheck.from_binlog(s, self.scenario, self.binlog_before, self.binlog_after)
        else:
            return
        self.summary["rows_checked"] = check

    def _check_consistency(self) -> None:
        s = self.settings
        table = f"{self.scenario.schema}.accounts"
        behind = [name for name, took in (self.catch_up or {}).items() if took is None]
        missing = [n.name for n in s.nodes if not topology.node_up(n, s)]
        if behind:
            self.summary["consistency"] = {"table": table, "checked": False, "equal": None,
                                           "reason": f"{', '.join(behind)} did not catch up within "
                                                     f"{self.options.catch_up_timeout:g} s"}
            return
        alive = tuple(n for n in s.nodes if n.name not in missing)
        self.progress.say("waiting for the replicas, then CHECKSUM TABLE on the nodes that answer")
        waited = topology.wait_caught_up(s, self.options.catch_up_timeout,
                                         replicas=tuple(n for n in alive if n.role == "replica"))
        sums: dict[str, int | None] = {}

        def checksum(node: Any) -> None:
            try:
                sums[node.name] = sql.checksum(node, s, table)
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
        self.summary["consistency"] = {"table": table, "checked": True, "checksums": sums, "caught_up_s": waited,
                                       "equal": equal, "missing": sorted(set(missing))}
        if not equal:
            self.status = STATUS_FAILED

    def _guards(self) -> None:
        guards = self.summary.setdefault("guards", [])
        saturation = self.summary.setdefault("saturation", [])
        asked, got = self.rate, self.summary.get("rate_sent", 0)
        if "rate_sent" in self.summary and got < MIN_RATE_RATIO * asked:
            guards.append(f"sent rate {got:.1f}/s is below {MIN_RATE_RATIO:.0%} of the asked {asked}/s")
        success = self.summary.get("success")
        if success is not None and success < MIN_SUCCESS:
            guards.append(f"only {success:.2%} of requests succeeded (see the status codes and report.txt)")
        if self.summary.get("client_errors"):
            guards.append(f"{self.summary['client_errors']:,} requests failed inside the load generator "
                          "(ports/files): a client-side limit, not the server's")
        means = self.summary.get("cpu_mean_percent", {})
        cores = os.cpu_count() or 1
        if means.get("host_busy", 0) > HOST_SATURATED * 100 * cores:
            text = f"host CPU saturated ({means['host_busy']:.0f} % of {100 * cores} %)"
            saturation.append(text)
            guards.append(text + ": latencies include queueing for CPU; the numbers describe this box, not only "
                                 "the database")
        if means.get("vegeta", 0) > VEGETA_SATURATED:
            text = f"vegeta at {means['vegeta']:.0f} % of a core"
            saturation.append(text)
            guards.append(text + ": the load generator competes for CPU")
        stopped_on_purpose = {f.node for f in self.options.faults}
        for name in self.summary.get("replicas_not_replicating", []):
            guards.append(f"{name} was not replicating during the run"
                          + (" (a planned fault)" if name in stopped_on_purpose else ""))
        if self.summary.get("rows_checked"):
            unchanged = rowcheck.guard(self.summary["rows_checked"], self.summary.get("success"))
            if unchanged:
                guards.append(unchanged)
        for mismatch in self.meta.get("knob_mismatches") or []:
            guards.append(f"setting not in effect: {mismatch}")
        semi = ((self.summary.get("replication") or {}).get("nodes", {}).get("master") or {}).get("semi_sync")
        if semi and semi["fell_back"]:
            guards.append(f"semi-sync fell back to async for {semi['fell_back']:,} transactions")
        for replica, took in (self.summary.get("catch_up_s") or {}).items():
            if took is None:
                growth = ((self.summary.get("lag") or {}).get(replica) or {}).get("growth_s_per_s")
                guards.append(f"{replica} did not catch up within {self.options.catch_up_timeout:g} s"
                              + (f"; lag grew {growth:.2f} s per s during the attack" if growth is not None else ""))
        seen = self.summary.get("faults") or []
        for text, fault in zip(nodesampler.describe_faults(seen, self.t_start or 0), seen):
            guards.append(f"fault: {text}")
            if not fault.get("planned"):
                self.status = STATUS_FAILED if self.status != STATUS_INTERRUPTED else self.status
        consistency = self.summary.get("consistency") or {}
        if consistency.get("equal") is False:
            guards.append("CHECKSUM TABLE differs between nodes after catch-up: replicas diverged — RUN FAILED")
        if consistency.get("missing"):
            guards.append(f"consistency checked without {', '.join(consistency['missing'])} (not answering)")
        for error in self.errors:
            guards.append(f"error: {error}")
        if self.errors and self.status in (STATUS_OK, STATUS_WARNING):
            self.status = STATUS_FAILED
        if guards and self.status == STATUS_OK:
            self.status = STATUS_WARNING

    def _base_meta(self) -> dict[str, Any]:
        s = self.settings
        info = dataset.dataset_info(s) or {}
        return {
            "scenario": self.scenario.name, "scenario_file": self.scenario.source, "rate": self.rate,
            "duration_s": self.options.duration, "timeout_s": self.options.timeout,
            "attack_options": self.attack_options.as_dict(),
            "knobs": self.options.knobs.as_dict(), "knobs_changed": self.options.knobs.changed(),
            "links_requested": [link.spec for link in self.options.links],
            "dataset": {"accounts": info.get("accounts"), "seed": info.get("seed"), "built_at": info.get("built_at"),
                        "nopk_rows": info.get("nopk_rows")},
            "app": {"workers": s.app_workers, "driver": s.driver, "worker_class": s.worker_class,
                    "pool_size": s.pool_size, "statement_timeout_s": s.statement_timeout,
                    "max_inflight": s.max_inflight, "max_queue_ms": s.max_queue_ms,
                    "transport": "unix socket" if s.app_socket("master") else "tcp"},
            "topology": {n.name: {"port": n.port, "server_id": n.server_id, "host": n.host, "external": n.external,
                                  "cpu_source": n.cpu_source} for n in s.nodes},
            "topology_file": s.topology_name if s.external else None,
            "buffer_pool": s.buffer_pool, "flavour": s.flavour, "catch_up_timeout_s": self.options.catch_up_timeout,
            "host": {**sampling.describe_host(), "platform": platform.platform()},
            "created_at": _now(), "command": sys.argv, "status": STATUS_RUNNING, "pid": os.getpid(),
        }


def _own_cpu() -> float:
    t = psutil.Process().cpu_times()
    return t.user + t.system


def exit_code(status: str, strict: bool = False) -> int:
    if strict and status == STATUS_WARNING:
        return 1
    return {STATUS_OK: 0, STATUS_WARNING: 0, STATUS_FAILED: 1, STATUS_INTERRUPTED: 130}.get(status, 1)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def versions(settings: Settings) -> dict[str, Any]:
    out: dict[str, Any] = {"vegeta": VEGETA_VERSION, "python": platform.python_version()}
    try:
        out["mariadb"] = sql.query_one(settings.master, settings, "SELECT VERSION()")
    except sql.MySQLError:  # the master may not be up
        out["mariadb"] = None
    wanted = ("aiohttp", "aiomysql", "asyncmy", "gunicorn", "uvloop", "orjson", "PyMySQL", "psutil", "matplotlib")
    out["packages"] = {name: _pkg_version(name) for name in wanted}
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
        out["git_commit"] = commit + ("-dirty" if dirty.strip() else "")
    except OSError:
        out["git_commit"] = None
    return out


def _pkg_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


# ---- the printed block ----------------------------------------------------------------------------------------

def render_block(summary: dict[str, Any], folder: Path) -> str:
    """The reference write-up's block: CPU lines, vegeta's text report verbatim, then our measurements."""
    lines: list[str] = []
    means = summary.get("cpu_mean_percent") or {}
    if means:
        def pct(key: str) -> str:
            return f"{means[key]:.0f}" if key in means else "n/a"

        replicas = f"{(means['replica1'] + means['replica2']) / 2:.0f}" \
            if "replica1" in means and "replica2" in means else "n/a"
        sources = summary.get("cpu_sources") or {}
        remote = any(v != "process" for k, v in sources.items() if k in DB_NODES)
        lines += [f"Gunicorn cpu: {pct('app')}",
                  f"Mysql cpu: {pct('master')} + 2 * {replicas}"
                  f"          (master {pct('master')}, replica1 {pct('replica1')}, replica2 {pct('replica2')}"
                  + (f"; database CPU: {', '.join(f'{k} {v}' for k, v in sources.items() if k in DB_NODES)}"
                     if remote else "") + ")",
                  f"vegeta cpu: {means.get('vegeta', 0):.0f}          ("
                  + (f"{len(summary['pipeline_cpu_s']['per_attacker'])} attack processes, CPU s each: "
                     + ", ".join(f"{s:.1f}" for s in summary["pipeline_cpu_s"]["per_attacker"])
                     if (summary.get("pipeline_cpu_s") or {}).get("per_attacker") else "the attack process only")
                  + ")",
                  f"Harness cpu: {means.get('harness', 0):.0f}          (this harness process)",
                  f"Host cpu: {means.get('host_busy', 0):.0f} of {100 * (summary.get('cores') or 1)}"
                  f" (steal {means.get('host_steal', 0):.0f})   [% of one core, mean over the steady part]"]
    if summary.get("links"):
        lines.append("Links: " + links.describe_text(summary["links"]))
    pinned = (summary.get("cpus") or {}).get("pinned") or {}
    if pinned and means:
        lines.append("Pinned cores: " + "; ".join(
            f"{g} {','.join(map(str, c))} ({means.get(g, 0) / len(c):.0f} % of its {len(c)} core"
            f"{'s' if len(c) > 1 else ''})" for g, c in pinned.items()))
    lines.append(vegeta_text(folder / "report.txt"))
    if "rate_sent" in summary:
        lines.append(f"Sent {summary['rate_sent']:.2f}/s, goodput {summary['goodput']:.2f}/s "
                     f"({summary['success']:.2%} succeeded; server-side success {summary['server_success']:.2%}, "
                     f"{summary.get('client_errors', 0):,} client-side errors)")
    for key, label in (("cpu_ms_per_success", "CPU-ms per successful request"),
                       ("cpu_ms_per_request", "CPU-ms per request (failed ones included)")):
        figures = summary.get(key)
        if figures:
            lines.append(f"{label}: " + ", ".join(f"{k} {v:.3f}" for k, v in figures.items()))
    if summary.get("db_share_of_host") is not None:
        lines.append(f"Databases' share of the busy host CPU: {summary['db_share_of_host']:.0%}")
    floor = summary.get("lag_floor_ms")
    for name, lag_of in (summary.get("lag") or {}).items():
        catch = (summary.get("catch_up_s") or {}).get(name) if summary.get("catch_up_s") is not None else "-"
        if catch == "-":
            catch_text = "catch-up not measured"
        elif catch is None:
            growth = lag_of.get("growth_s_per_s")
            catch_text = (f"did NOT catch up within {summary.get('catch_up_timeout_s', 0):g} s"
                          + (f"; lag grew {growth:.2f} s per s" if growth is not None else ""))
        else:
            catch_text = f"caught up {catch:.2f} s after the last request was sent"
        settled = (summary.get("lag_settled_s") or {}).get(name)
        settled_text = "" if settled is None else \
            f", heartbeat lag back under {2 * (floor or 100)} ms after {settled:.2f} s"
        lines.append(f"Lag {name}: heartbeat p50 {_ms(lag_of['p50_ms'])}, p99 {_ms(lag_of['p99_ms'])}, "
                     f"max {_ms(lag_of['max_ms'])}; Seconds_Behind_Master max "
                     f"{lag_of['max_seconds_behind_master']}; {catch_text}{settled_text}")
    if floor:
        lines.append(f"Lag floor: the heartbeat is written every {floor} ms, so an idle replica reads 0–{floor} ms")
    rep = summary.get("replication") or {}
    master = (rep.get("nodes") or {}).get("master")
    if master and master["transactions"]:
        cpu = summary.get("cpu_seconds") or {}
        parts = []
        for name in DB_NODES:
            node = rep["nodes"].get(name)
            if node is None:
                parts.append(f"{name} n/a")
                continue
            text = f"{name} {node['transactions_per_s']:,.1f} trx/s, {node['rows_per_s']:,.1f} rows/s"
            if cpu.get(name) is not None and node["rows_changed"]:
                text += f", {1000 * cpu[name] / node['rows_changed']:.3f} CPU-ms per row"
            if node.get("rows_read_per_row_changed") is not None:
                text += f", {node['rows_read_per_row_changed']:,.1f} rows read per row changed"
            parts.append(text)
        lines.append("Replication (app transactions, rows changed and CPU per row, during the attack): "
                     + "; ".join(parts))
        disk = []
        for name, node in rep["nodes"].items():
            if node is None:
                continue
            kb = node.get("kb_written_per_write")
            fsyncs = "-" if node["fsyncs_per_write"] is None else node["fsyncs_per_write"]
            disk.append(f"{name} {fsyncs} InnoDB fsyncs, {'-' if kb is None else f'{kb:.1f}'} KB written")
        lines.append("Disk per successful write: " + "; ".join(disk)
                     + (f"; master group commit {master['commits_per_group']} commits per group"
                        if master.get("commits_per_group") else ""))
        semi = master.get("semi_sync")
        if semi:
            lines.append(f"Semi-sync: {semi['acked']:,} acked, {semi['fell_back']:,} fell back to async, avg wait "
                         f"{_us(semi['avg_tx_wait_us'])} (network {_us(semi['avg_net_wait_us'])})")
    if summary.get("rows_checked"):
        lines.append("Rows: " + rowcheck.describe(summary["rows_checked"]))
    pools = summary.get("buffer_pools") or {}
    if pools:
        lines.append(pool_text(pools, summary.get("schema", "")))
    if master and master["transactions"] and master.get("pool_disk_reads_per_write") is not None:
        lines.append("Buffer pool per successful write: " + "; ".join(
            f"{name} {node['pool_disk_reads_per_write']:g} pages read from disk, "
            f"{node['pages_flushed_per_write']:g} pages flushed, {node['kb_read_per_write']:g} KB read"
            for name, node in rep["nodes"].items() if node is not None and node.get("kb_read_per_write") is not None))
    b = summary.get("binlog")
    if b:
        per_write = "n/a (no writes)" if b["bytes_per_write"] is None else f"{b['bytes_per_write']:.1f} bytes per write"
        per_row = "" if b.get("bytes_per_row") is None else f", {b['bytes_per_row']:.1f} bytes per row changed"
        lines.append(f"Binlog: {b['master_binlog_bytes']:,} bytes on the master during the attack; "
                     f"{per_write}{per_row} "
                     f"({b['successful_writes']:,} successful writes; {b['heartbeat_writes']} heartbeats × "
                     f"{b['heartbeat_bytes_per_write']:.0f} B excluded)")
        if b.get("files_opened"):
            lines.append(f"Binlog rotated during the attack (max_binlog_size): opened {', '.join(b['files_opened'])}")
        relay = ", ".join(f"{k} {v:,}" for k, v in b["replica_received_bytes"].items())
        lines.append(f"Relay log bytes received: {relay}")
    adm = summary.get("app_admission") or {}
    if adm.get("workers"):
        lines.append(f"App admission: {adm['admitted']:,} admitted, {adm['shed']:,} shed at once with 503 "
                     f"(bound {appserver.bound_text(adm)} in flight per worker; peaks in flight summed over "
                     f"{adm['workers']} workers: {adm['peak_in_flight']:,})")
    memory = summary.get("memory_mb")
    if memory:
        lines.append("Memory RSS MiB (first → last sample, max): " + ", ".join(
            f"{k} {v['first']:.0f} → {v['last']:.0f} ({v['max']:.0f})" for k, v in memory.items()))
    c = summary.get("consistency")
    if c:
        if not c.get("checked", True):
            lines.append(f"Consistency: not checked — {c['reason']}")
        else:
            verdict = "equal on the nodes checked" if c["equal"] else "DIFFERENT — replicas diverged, RUN FAILED"
            if c["equal"] and not c.get("missing"):
                verdict = "equal on all three nodes"
            lines.append(f"Consistency: CHECKSUM TABLE {c['table']} {verdict} {c['checksums']}"
                         + (f"; not checked on {', '.join(c['missing'])}" if c.get("missing") else ""))
    planned = summary.get("planned_faults") or []
    if planned:
        lines.append("Planned faults: " + "; ".join(
            f"{p['fault']} done at {p['at_s']:.1f} s"
            + (f" (began {p['began_at_s']:.1f} s)" if p.get("began_at_s") is not None
               and p["at_s"] - p["began_at_s"] >= 0.5 else "")
            + (f" (FAILED: {p['error']})" if p.get("error") else "")
            for p in planned))
        for name, w in (summary.get("fault_windows") or {}).items():
            lines.append(f"  {name:<34} {w['start_s']:6.1f}–{w['end_s']:<6.1f} s  {w['requests']:>7,} requests, "
                         f"{_num(w['rate'])}/s, errors {_num(w['error_pct'])} %, p50 {_num(w['p50_ms'])} ms, "
                         f"p99 {_num(w['p99_ms'])} ms")
    for r in summary.get("routing") or []:
        if r["node"] not in (summary.get("served_by") or {}) and r["last_served_s"] is None:
            continue  # a node that serves no request of this scenario (the master of a read run)
        stopped = "no request after it went down" if r["last_served_s"] is None else \
            f"its last request {r['last_served_s'] - r['down_at_s']:.2f} s after it went down"
        back = "" if r["back_at_s"] is None else ("; not used again before the end" if r["first_served_back_s"] is None
                                                  else f"; used again {r['first_served_back_s'] - r['back_at_s']:.2f}"
                                                       " s after it was back")
        lines.append(f"Routing around {r['node']}: {stopped}{back}")
    if summary.get("served_by"):
        lines.append("Served by: " + ", ".join(f"{k} {v:,}" for k, v in sorted(summary["served_by"].items())))
    lost = summary.get("faults") or []
    if lost:
        lines.append("Faults seen: " + "; ".join(nodesampler.describe_faults(lost, summary.get("attack_start_s", 0.0))))
    guards = summary.get("guards") or []
    lines.append("Guards: " + ("none tripped" if not guards else "; ".join(f"WARNING {g}" for g in guards)))
    lines.append(f"Status: {summary.get('status')}    Results: {shown_path(folder)}")
    return "\n".join(lines) + "\n"


def pool_text(pools: dict[str, dict[str, Any]], schema: str) -> str:
    """'Buffer pool: 128 MiB on every node, smaller than bench_idx (2.0 GiB) ...' (flush method included)."""
    sizes = sorted({p["pool_bytes"] for p in pools.values()})
    table = max(p["table_bytes"] for p in pools.values())
    where = "on every node" if len(sizes) == 1 else "(" + ", ".join(
        f"{n} {p['pool_bytes'] / 2**20:,.0f} MiB" for n, p in pools.items()) + ")"
    size = f"{sizes[0] / 2**20:,.0f} MiB " if len(sizes) == 1 else ""
    flush = ", ".join(sorted({str(p["flush_method"]) for p in pools.values()}))
    if all(p["fits"] for p in pools.values()):
        return (f"Buffer pool: {size}{where}, holding {schema} ({table / 2**30:.1f} GiB with its indexes); "
                f"warmed before the run; innodb_flush_method {flush}")
    return (f"Buffer pool: {size}{where}, smaller than {schema} ({table / 2**30:.1f} GiB with its indexes): not "
            f"warmed, since uniformly random ids never warm a pool smaller than the data (the misses are what this "
            f"run measures); innodb_flush_method {flush}, so a miss goes to the disk, not the OS page cache")


def vegeta_text(path: Path, max_errors: int = ERROR_LINES_SHOWN) -> str:
    """vegeta's text report verbatim, except that a long Error Set is cut (the whole one stays in report.txt)."""
    lines = path.read_text().rstrip("\n").splitlines()
    if "Error Set:" not in lines:
        return "\n".join(lines)
    head = lines.index("Error Set:") + 1
    errors = lines[head:]
    if len(errors) <= max_errors:
        return "\n".join(lines)
    return "\n".join(lines[:head + max_errors] + [f"... {len(errors) - max_errors} more distinct errors in "
                                                  f"{path.name}"])


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} µs"
