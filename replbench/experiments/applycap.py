"""Replica apply capacity, the DBA's method (Percona 2008; Zaitsev 2010; K. Nielsen): stop the SQL thread on every
replica, write a known backlog through the app with vegeta, note the master's GTID position, then time
MASTER_GTID_WAIT while a replica applies it. By default each replica applies the backlog alone, the others' SQL
threads held until it has finished, as a DBA measures a replica on its own host (on a 2-core box two replicas
draining at once share the cores and each looks about half as fast); `together` starts them all at once and
times them in parallel (the earlier method, kept under its own name). Apply rate = transactions (and rows)
applied ÷ the time it took; the replica's CPU per transaction is net of its idle CPU (measured with its SQL thread
stopped, just before); the capacity ratio is the rate ÷ the rate the master committed the backlog at (above 1:
the replica can keep up with that workload). The SQL threads are started again whatever happens."""

from __future__ import annotations

import csv
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

from ..analysis import livewindow
from ..analysis import writeback as writeback_figures
from ..core import harnesslog, sql
from ..core.config import LIVE_MIN_WINDOW_S, LIVE_SAMPLE_S, Node, Settings
from ..core.progress import Progress
from ..core.records import STATUS_INTERRUPTED, UNIT_FAILED, UNIT_OK
from ..core.results import (
    ApplyMaster,
    ApplyRecord,
    ApplyReplica,
    KnobSetting,
    LiveCpu,
    LiveWindow,
    Readback,
    merged,
    write_record,
)
from ..core.scenario import Scenario
from ..core.workload import Workload
from ..load import attack, cpus, external
from ..measure import counters, nodeexporter, writeback
from ..topology import appserver, knobs, links, nodes
from ..topology.bringup import ensure_topology
from ..topology.install import ensure_vegeta
from . import prepare

DRAIN_TIMEOUT = 1800.0  # seconds a replica may take to apply the backlog
IDLE_SECONDS = 2.0  # a replica's idle CPU, its SQL thread stopped, measured before it drains

@dataclass(frozen=True)
class Committed:
    """What the master committed of the backlog (a replay: what the files hold), each replica's drain set against
    it: its application transactions, the rows they changed, and the rates it committed them at (None: unknown)."""

    transactions: int
    rows_changed: int
    transactions_per_s: float | None
    rows_per_s: float | None = None

    def record(self) -> ApplyMaster:
        return ApplyMaster(transactions=self.transactions, rows_changed=self.rows_changed,
                           commit_rate_trx_per_s=self.transactions_per_s, rows_per_s=self.rows_per_s)


@dataclass(frozen=True)
class Backlog:
    """vegeta's figures of the backlog's writing (its sending time, in seconds) and the master's position once it
    was written."""

    requests: int
    success: float  # as vegeta wrote it: an int stays an int (`1`), so apply.json keeps its byte
    gtid: str
    write_seconds: float

    def record(self) -> ApplyRecord:
        return ApplyRecord(requests=self.requests, success=self.success, gtid=self.gtid,
                           write_seconds=self.write_seconds)


def _sql_thread(settings: Settings, start: bool, replicas: tuple[Node, ...] | None = None) -> None:
    verb = sql.start_replica_sql(settings.flavour) if start else sql.stop_replica_sql(settings.flavour)
    for replica in settings.replicas if replicas is None else replicas:
        with sql.admin(replica, settings) as cur:
            cur.execute(verb + " SQL_THREAD")


def _cpu(node: Node) -> float | None:
    """The node's cumulative CPU seconds: its mariadbd process, or (a topology file's server) its host's busy
    time from node_exporter; None when neither can be read (n/a)."""
    if node.external:
        return nodeexporter.host_busy(node.metrics) if node.metrics else None
    pid = nodes.node_pid(node)
    if not pid:
        return None
    try:
        t = psutil.Process(pid).cpu_times()
        return t.user + t.system
    except psutil.Error:
        return None


def measure(settings: Settings, scenario: Scenario, setting: knobs.Knobs, writes: int, rate: int,
            folder: Path, link_set: tuple[links.Link, ...] = (), together: bool = False,
            pinning: str = "") -> ApplyRecord:
    """The unit's apply.json, as written (whatever happened)."""
    progress = Progress(f"apply-capacity {scenario.name}")
    head = merged(ApplyRecord(scenario=scenario.name, schema=scenario.schema, writes_asked=writes, rate=rate),
                  _common(settings, setting, "together" if together else "alone"))

    def backlog(state: _Held) -> tuple[str, Committed]:
        vegeta = ensure_vegeta(settings)
        set_up = prepare.settings_and_data(settings, scenario, setting, link_set, progress).set_up
        state.add(ApplyRecord.model_validate(set_up.model_dump(by_alias=True, exclude_unset=True)))
        state.add(ApplyRecord(targets=prepare.app_and_targets(
            settings, scenario, folder / "targets.json", progress, rate=rate, duration=writes / rate,
            catch_up_timeout=DRAIN_TIMEOUT)))
        progress.say("stopping the replicas' SQL threads")
        state.stop()
        before = counters.snapshot(settings, state.pids)
        gtid, begin = _write_backlog(settings, vegeta, scenario, folder, writes, rate, progress)
        state.queued = counters.snapshot(settings, state.pids)
        written = _backlog_report(vegeta, folder, begin, gtid)
        state.add(written.record())
        return gtid, _master(before, state.queued, written.write_seconds)

    return _held_and_drained(settings, head, folder, progress, backlog, together, pinning=pinning)


def measure_live(settings: Settings, setting: knobs.Knobs, window: float, folder: Path,
                 only: str | None = None, pinning: str = "", driver: external.Driver | None = None) -> ApplyRecord:
    """The replicas' SQL threads held for `window` seconds while whatever writes to the master writes (the DBA's
    application, a benchmark tool: nothing of ours), then each replica times its catch-up to the master's position
    at the window's end. The window's mean rate and busiest minute are set against each replica's capacity.
    `only`: that replica alone is held and drained, the others left as they are (one held at the window's start
    for a replay of the same window: experiments/replay). `driver`: a workload file's tool, started as the window
    opens and waited for as it closes (a study's live unit). The unit's apply.json, as written (whatever happened)."""
    progress = Progress("apply-capacity --live")
    head = merged(ApplyRecord(scenario=None), _common(settings, setting, "live"))

    chosen = settings.replicas if only is None else (settings.node(only),)

    def window_of(state: _Held) -> tuple[str, Committed]:
        if only is None:
            ensure_topology(settings, with_app=False, pool_size=setting.buffer_pool)
        else:  # the other replicas as they stand: starting the topology would start their replication
            for node in (settings.master, *chosen):
                nodes.check_reachable(node, settings)
        progress.say(f"applying settings: {setting.describe()}")
        readback = knobs.apply(settings, setting, None if only is None else (settings.master, *chosen))
        state.add(ApplyRecord(knobs_readback={name: Readback.model_validate(back) for name, back in readback.items()},
                              knob_mismatches=knobs.mismatches(setting, readback, settings)))
        counters.enable(settings)
        progress.say("holding the replicas' SQL threads; their dirty pages forced out first, so that what each "
                     "flushes after its drain is the window's own")
        # the replicas that go on applying as the client writes: their CPU per transaction is a following
        # replica's (a drain's, below, is a catch-up's: batched, cheaper per transaction)
        roles = {settings.master.name: "master",
                 **{r.name: "following" for r in settings.replicas if r not in chosen and _applying(settings, r)}}
        state.stop()
        pre_flush = writeback.flush_nodes(settings, state.chosen, _cpu)
        idle, idle_trx = _idle_before(settings, roles)
        gtid_start = nodes.master_gtid(settings)
        before = counters.snapshot(settings, state.pids)
        opened = time.monotonic()
        try:
            if driver is not None:
                driver.start()
            samples, cpu = _watch(settings, window, progress, opened, _app_trx(before["master"]), roles)
            if driver is not None:
                driver.wait()
        finally:  # a window cut short (Ctrl-C, a failure) leaves no tool writing
            if driver is not None:
                driver.stop()
        gtid = nodes.master_gtid(settings)  # the drains' target: what the replicas must have applied at least
        state.queued = counters.snapshot(settings, state.pids)
        ended = _app_trx(state.queued["master"])
        if ended is not None:  # the window's last count is the snapshot's, as its first is
            samples.append((round(time.monotonic() - opened, 3), ended))
            cpu.append(_cpus(settings, roles))
        _write_samples(folder / "window.csv", samples, cpu, roles)
        window_cpu = livewindow.cpu_of(samples, cpu, idle, roles)
        if driver is not None:  # the suite's own tool has stopped: what the nodes hold dirty is the window's
            window_cpu = _window_writeback(settings, window_cpu, idle, gtid, before, state.queued)
        live = merged(livewindow.rates(samples, window), LiveWindow(
            gtid_start=gtid_start, pre_flush_s=round(pre_flush.seconds, 3), cpu=window_cpu, idle_trx=idle_trx))
        live = merged(live, _binlog_written(before["master"], state.queued["master"]))
        state.add(ApplyRecord(live=live, gtid=gtid, write_seconds=live.window_s))
        master = _master(before, state.queued, live.window_s or window)
        if not master.transactions:
            raise LiveWindowEmpty(f"no transaction reached the master's binlog in the {window:g} s window: nothing "
                                  "to apply (start the client that writes before or as the window opens)")
        return gtid, master

    return _held_and_drained(settings, head, folder, progress, window_of, together=False, chosen=chosen,
                             pinning=pinning)


def measure_workload(settings: Settings, setting: knobs.Knobs, work: Workload, rate: int, window: float,
                     folder: Path, pinning: str = "") -> ApplyRecord:
    """A live window written by a workload file's tool at `rate` per second (a study's live unit): the topology up
    with the settings on every node, the workload's database ready, then measure_live with the first replica held
    and the others following (their CPU per transaction is a following replica's; with one replica, it alone is
    held). The tool's output is driver.txt beside apply.json."""
    ensure_topology(settings, with_app=False, pool_size=setting.buffer_pool)
    knobs.apply(settings, setting)  # every node, the followers too (measure_live sets the master and the held one)
    log = folder / "driver.txt"
    external.ensure_prepared(settings, work, log)
    driver = external.Driver(settings, work, rate, window, log)
    held = settings.replicas[0].name if len(settings.replicas) > 1 else None
    return measure_live(settings, setting, window, folder, only=held, pinning=pinning, driver=driver)


def _binlog_written(opened: counters.NodeCounters | None, closed: counters.NodeCounters | None) -> LiveWindow:
    """The master's binlog bytes over the window and per application transaction (none where the server keeps no
    count: MySQL 8)."""
    if opened is None or closed is None or BINLOG_WRITTEN not in closed.status:
        return LiveWindow()
    written = int(closed.status[BINLOG_WRITTEN] - opened.status.get(BINLOG_WRITTEN, 0.0))
    trx = closed.seq.get(counters.APP_DOMAIN, 0) - opened.seq.get(counters.APP_DOMAIN, 0)
    return LiveWindow(binlog_bytes=written, binlog_bytes_per_trx=round(written / trx, 1) if trx > 0 else None)


BINLOG_WRITTEN = "Binlog_bytes_written"
PAGES_FLUSHED = "Innodb_buffer_pool_pages_flushed"  # what the page cleaner wrote within the window itself


def _window_writeback(settings: Settings, window_cpu: dict[str, LiveCpu], idle: dict[str, float | None], gtid: str,
                      opened: dict[str, counters.NodeCounters | None],
                      closed: dict[str, counters.NodeCounters | None]) -> dict[str, LiveCpu]:
    """After a window a workload file's tool wrote (and has stopped writing): the following replicas caught up to
    the window's end, then the master's and their dirty pages forced out and counted, per window transaction, with
    the window's own CPU, KB written and pages flushed per transaction beside (analysis/writeback): what a drained
    replica's flush is to its drain. With a client of the DBA's still writing, a flush would take its writes too:
    not done then (docs/apply-capacity.md)."""
    following = tuple(settings.node(n) for n, c in window_cpu.items() if c.role == "following")
    if following:
        nodes.wait_caught_up(settings, DRAIN_TIMEOUT, gtid, following)
    flush = writeback.flush_nodes(settings, (settings.master, *following), _cpu)
    out = dict(window_cpu)
    for name, c in window_cpu.items():
        trx, a, b = c.transactions, opened.get(name), closed.get(name)
        if not trx or a is None or b is None:
            continue
        written = None if a.write_bytes is None or b.write_bytes is None else b.write_bytes - a.write_bytes
        pages = b.status.get(PAGES_FLUSHED, 0.0) - a.status.get(PAGES_FLUSHED, 0.0)
        back = writeback_figures.node_figures(
            flush, name, idle.get(name), trx,
            writeback_figures.InRun(cpu_ms_per_write_net=c.cpu_ms_per_trx,
                                    kb_written_per_write=None if written is None else round(written / 1024 / trx, 1),
                                    pages_flushed_per_write=round(pages / trx, 2)))
        if back is not None:
            out[name] = merged(c, LiveCpu(writeback=back))
    return out


class LiveWindowEmpty(Exception):
    """Nothing was written to the master while the replicas were held."""


class MasterUnread(Exception):
    """The master's counters could not be read at one end of the backlog: what it committed is not known."""


def _common(settings: Settings, setting: knobs.Knobs, method: str) -> ApplyRecord:
    """What every apply.json records before anything runs: the settings, the method, the topology and its cores."""
    return ApplyRecord(knobs=KnobSetting.model_validate(setting.as_dict()),
                       knobs_changed=KnobSetting.model_validate(setting.changed()), status="running",
                       topology=settings.topology_name, method=method,
                       cpu_sources={n.name: n.cpu_source for n in settings.nodes},
                       cores=None if settings.external else os.cpu_count())


class _Held:
    """The replicas' SQL threads, stopped once the backlog starts queuing (restarted whatever happens), the
    counters' snapshot once it has queued, and apply.json as far as the unit got (each phase adds its part as it
    has it, so a failure or a Ctrl-C leaves what was measured before it in the file)."""

    def __init__(self, settings: Settings, chosen: tuple[Node, ...], record: ApplyRecord) -> None:
        self.settings, self.chosen = settings, chosen
        self.stopped = False
        self.pids = {n.name: nodes.node_pid(n) for n in settings.nodes}
        self.queued: dict[str, counters.NodeCounters | None] = {}
        self.record = record

    def add(self, part: ApplyRecord) -> None:
        self.record = merged(self.record, part)

    def stop(self) -> None:
        self.pids = {n.name: nodes.node_pid(n) for n in self.settings.nodes}
        _sql_thread(self.settings, start=False, replicas=self.chosen)
        self.stopped = True


def _master(before: dict[str, counters.NodeCounters | None], queued: dict[str, counters.NodeCounters | None],
            seconds: float) -> Committed:
    """What the master committed of the backlog, as counters.describe counts it."""
    figures = counters.describe({"master": before["master"]}, {"master": queued["master"]}, seconds, 0, 1)["nodes"]
    if figures["master"] is None:
        raise MasterUnread("the master's counters could not be read at one end of the backlog (--live: of the "
                           "window): what it committed is not known")
    master = figures["master"]
    return Committed(master["transactions"], master["rows_changed"], master["transactions_per_s"],
                     master["rows_per_s"])


def _held_and_drained(settings: Settings, head: ApplyRecord, folder: Path, progress: Progress,
                      queue: Callable[[_Held], tuple[str, Committed]], together: bool,
                      chosen: tuple[Node, ...] | None = None, pinning: str = "") -> ApplyRecord:
    """`queue` builds the backlog with the SQL threads held (adding what it measured to the record, and returning
    the master's position at its end and what the master committed); then each replica drains it alone (or all at
    once), timed, every group on the cores `pinning` gives it (--cpus; all of them by default, and again
    afterwards); apply.json (`head` and what followed) written whatever happens, and returned, the SQL threads
    started again."""
    log = folder / "harness.log"
    harnesslog.use(log)
    state = _Held(settings, settings.replicas if chosen is None else chosen, head)
    try:
        gtid, master = queue(state)
        state.add(ApplyRecord(master=master.record()))
        state.add(ApplyRecord(cpus=cpus.pin_groups(settings, pinning)))
        drains = Drains(settings, gtid)
        if together:
            progress.say(f"backlog queued: {master.transactions:,} transactions; starting every SQL thread at "
                         "once and timing MASTER_GTID_WAIT on each replica (--together)")
            drains.together()
            state.stopped = False
        else:
            for replica in state.chosen:
                progress.say(f"backlog queued: {master.transactions:,} transactions; {replica.name} applies it "
                             "alone (the other replicas' SQL threads held), timing MASTER_GTID_WAIT")
                drains.alone(replica)
        after = counters.snapshot(settings, state.pids)
        live = state.record.live
        busiest = None if live is None else live.busiest_minute_trx_per_s
        replicas = {r.name: _replica_entry(drains, r.name, state.queued[r.name], after[r.name], master, busiest)
                    for r in state.chosen}
        state.add(ApplyRecord(replicas=dict(replicas)))  # dict(): the record's map may hold None (mypy: invariant)
        drained, ended = _app_trx(after["master"]), _app_trx(state.queued["master"])
        if live is not None and drained is not None and ended is not None:
            # the client may have gone on writing
            state.add(ApplyRecord(live=merged(live, LiveWindow(master_trx_during_drains=drained - ended))))
        state.add(ApplyRecord(status=UNIT_OK if all(e.seconds for e in replicas.values()) else UNIT_FAILED))
    except KeyboardInterrupt:
        state.add(ApplyRecord(status=STATUS_INTERRUPTED))
    except LiveWindowEmpty as exc:
        state.add(ApplyRecord(status=UNIT_FAILED, error=str(exc)))
    except Exception as exc:  # noqa: BLE001 — recorded, then the SQL threads are restarted
        state.add(ApplyRecord(status=UNIT_FAILED, error=f"{type(exc).__name__}: {exc}"))
        harnesslog.write(f"apply-capacity failed: {exc}", exc)
    finally:
        unpin(settings, pinning)
        problem = _restore(settings, state.stopped, state.chosen)
        if problem is not None and state.record.error is None:  # the unit's own failure first
            state.add(ApplyRecord(error=problem))
        harnesslog.done(log)
        state.add(ApplyRecord(folder=folder.name))
        write_record(folder / "apply.json", state.record)
    return state.record


def unpin(settings: Settings, pinning: str) -> None:
    """Every group on every core again after pinned drains: the DBA's own processes (--live, --binlog) and the next
    command run as they did before."""
    if pinning:
        try:
            cpus.pin_groups(settings, "")
        except OSError as exc:
            harnesslog.write(f"apply-capacity: giving every group its cores back failed: {exc}", exc)


def _app_trx(snap: counters.NodeCounters | None) -> int | None:
    return None if snap is None else snap.seq.get(counters.APP_DOMAIN, 0)


def _cpus(settings: Settings, roles: dict[str, str]) -> dict[str, float | None]:
    return {name: _cpu(settings.node(name)) for name in roles}


def _idle_before(settings: Settings, roles: dict[str, str]) -> tuple[dict[str, float | None], int | None]:
    """Each watched node's CPU per second over IDLE_SECONDS before the window opens, and the application
    transactions the master committed meanwhile: any, and the client was already writing, so no node was idle
    (every figure None: the window's CPU is then given gross)."""
    first, cpu = sql.gtid_seq(nodes.master_gtid(settings)).get(counters.APP_DOMAIN, 0), _cpus(settings, roles)
    time.sleep(IDLE_SECONDS)
    trx, after = sql.gtid_seq(nodes.master_gtid(settings)).get(counters.APP_DOMAIN, 0) - first, _cpus(settings, roles)
    idle = {name: None if trx or (a := cpu[name]) is None or (b := after[name]) is None
            else round(max(0.0, b - a) / IDLE_SECONDS, 5) for name in roles}
    return idle, trx


def _watch(settings: Settings, window: float, progress: Progress, opened: float, first: int | None,
           roles: dict[str, str]) -> tuple[list[tuple[float, int]], list[dict[str, float | None]]]:
    """The master's application transactions counted every LIVE_SAMPLE_S until `window` seconds after `opened`:
    (seconds since then, its count), from `first` (the window's opening snapshot's count; None: not read); with
    each, the watched nodes' cumulative CPU seconds (`roles`' nodes)."""
    samples: list[tuple[float, int]] = [] if first is None else [(0.0, first)]
    cpu: list[dict[str, float | None]] = [] if first is None else [_cpus(settings, roles)]
    while (now := time.monotonic() - opened) < window:
        time.sleep(max(0.0, min(LIVE_SAMPLE_S * (len(samples) + (first is None)) - now, window - now)))
        now = time.monotonic() - opened
        if now >= window:
            break
        count = sql.gtid_seq(nodes.master_gtid(settings)).get(counters.APP_DOMAIN, 0)
        samples.append((round(now, 3), count))
        cpu.append(_cpus(settings, roles))
        trx = count - samples[0][1]
        progress.say(f"{now:5.0f}/{window:.0f} s of the window: the master committed {trx:,} transactions "
                     f"({trx / max(now, 1e-9):,.1f}/s)", tick=True)
    return samples, cpu


def _write_samples(path: Path, samples: list[tuple[float, int]], cpu: list[dict[str, float | None]],
                   roles: dict[str, str]) -> None:
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(("t_s", "master_app_trx", *(f"cpu_s_{name}" for name in roles)))
        out.writerows((*sample, *("" if (v := row.get(name)) is None else round(v, 3) for name in roles))
                      for sample, row in zip(samples, cpu, strict=True))


def _write_backlog(settings: Settings, vegeta: Path, scenario: Scenario, folder: Path, writes: int, rate: int,
                   progress: Progress) -> tuple[str, float]:
    """The backlog written through the app while the replicas' SQL threads are stopped: the master's GTID position
    once it is written, and when the writing began."""
    duration = writes / rate
    run = attack.Attack(vegeta, folder, folder / "targets.json", attack.AttackOptions(rate, duration),
                        f"apply-{scenario.name}")
    progress.say(f"writing the backlog: {writes:,} requests at {rate}/s ({duration:g} s)")
    begin = time.monotonic()
    answered_before = appserver.admission(settings)
    run.start()
    try:
        while run.running():
            time.sleep(1)
            app = appserver.answered_since(answered_before, appserver.admission(settings))
            progress.say(f"{time.monotonic() - begin:5.0f}/{duration:.0f} s, app answered {app['requests']:,}, "
                         f"{app['failed']:,} failed", tick=True)
    finally:  # vegeta runs in its own session: a Ctrl-C here does not reach it, so it is stopped and reaped
        run.interrupt()
        run.wait()
    return nodes.master_gtid(settings), begin


def _backlog_report(vegeta: Path, folder: Path, begin: float, gtid: str) -> Backlog:
    """vegeta's figures of the backlog's writing."""
    attack.write_reports(vegeta, folder)
    report = attack.read_report(folder)
    write_seconds = report["duration"] / 1e9 or (time.monotonic() - begin)  # vegeta's sending time
    return Backlog(report["requests"], report["success"], gtid, round(write_seconds, 3))


class Drains:
    """Each replica's drain of the backlog up to `gtid`: seconds (None: not within DRAIN_TIMEOUT), CPU seconds and
    idle CPU per second, when it ran (seconds after the backlog was queued) and which others applied meanwhile."""

    def __init__(self, settings: Settings, gtid: str) -> None:
        self.settings, self.gtid = settings, gtid
        self.finished: dict[str, tuple[float | None, float | None, float | None]] = {}  # seconds, CPU s, idle/s
        self.spans: dict[str, tuple[float, float]] = {}
        self.others: dict[str, list[str]] = {}  # the other replicas whose SQL thread ran as each drain began
        self.flushes: dict[str, writeback.Flush] = {}  # each replica's own dirty pages forced out after its drain
        self.queued_at = time.monotonic()

    def alone(self, replica: Node) -> None:
        """One replica applies while the others' SQL threads stay stopped (held again after it)."""
        idle_rate = _idle_cpu(replica)
        _sql_thread(self.settings, start=True, replicas=(replica,))
        self.drain(replica, idle_rate)
        _sql_thread(self.settings, start=False, replicas=(replica,))
        self.flushes[replica.name] = writeback.flush_nodes(self.settings, (replica,), _cpu)

    def together(self) -> None:
        """Every SQL thread started at once, each replica's wait timed in its own thread."""
        idle = {r.name: _idle_cpu(r) for r in self.settings.replicas}
        threads = [threading.Thread(target=self.drain, args=(r, idle[r.name]), daemon=True)
                   for r in self.settings.replicas]
        _sql_thread(self.settings, start=True)
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        flushed = writeback.flush_nodes(self.settings, self.settings.replicas, _cpu)
        self.flushes = {r.name: flushed for r in self.settings.replicas}

    def drain(self, replica: Node, idle: float | None) -> None:
        s = self.settings
        self.others[replica.name] = [r.name for r in s.replicas if r.name != replica.name and _applying(s, r)]
        cpu_before = _cpu(replica)
        t0 = time.monotonic()
        try:
            result = sql.query_one(replica, s, sql.wait_gtid_sql(s.flavour), (self.gtid, DRAIN_TIMEOUT))
        except sql.MySQLError:
            result = None
        took = time.monotonic() - t0
        self.spans[replica.name] = (round(t0 - self.queued_at, 3), round(t0 + took - self.queued_at, 3))
        cpu_after = _cpu(replica)
        cpu = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
        self.finished[replica.name] = (round(took, 3) if result == 0 else None, cpu, idle)


def _replica_entry(drains: Drains, name: str, queued: counters.NodeCounters | None,
                   after: counters.NodeCounters | None, master: Committed,
                   busiest: float | None = None) -> ApplyReplica:
    """One replica's line of apply.json: its drain and what it applied, per transaction net of its idle CPU."""
    took, cpu, idle = drains.finished.get(name, (None, None, None))
    applied = counters.describe({"r": queued}, {"r": after}, took or 1.0, 0, 1)["nodes"]["r"] if queued else None
    target = sql.gtid_seq(drains.gtid).get(counters.APP_DOMAIN)
    if applied and queued and target is not None and applied["transactions"] is not None:
        # what it applied up to the position waited for: a client still writing (--live) gives the SQL thread more
        # between the wait's return and its stop, outside the time measured
        applied["transactions"] = min(applied["transactions"], target - queued.seq.get(counters.APP_DOMAIN, 0))
    span = drains.spans.get(name)
    entry = ApplyReplica(seconds=took, drain_span_s=None if span is None else list(span),
                         others_applying_at_start=drains.others.get(name))
    if not (took and applied):
        return entry
    trx = applied["transactions"]
    net = None if cpu is None else max(0.0, cpu - (idle or 0.0) * took)
    trx_rate = trx / took
    # the replica applies the master's very transactions (same GTIDs), hence the master's rows (measure/counters: a
    # replica's own count is kept beside)
    rows = master.rows_changed * trx / max(1, master.transactions)
    entry = merged(entry, ApplyReplica(
        transactions=trx, rows=round(rows), apply_rate_trx_per_s=round(trx_rate, 1),
        apply_rate_rows_per_s=round(rows / took, 1),
        cpu_ms_per_trx=round(1000 * net / trx, 3) if net is not None and trx else None,
        cpu_ms_per_trx_gross=round(1000 * cpu / trx, 3) if cpu is not None and trx else None,
        idle_cpu_per_s=idle,
        capacity_ratio=round(trx_rate / master.transactions_per_s, 2) if master.transactions_per_s else None))
    if busiest:  # a live window's: absent from a backlog's drain
        entry = merged(entry, ApplyReplica(busiest_minute_ratio=round(trx_rate / busiest, 2)))
    flushed = drains.flushes.get(name)
    if flushed is not None:  # per applied transaction, with the drain's own figures beside
        written = applied["write_bytes"]
        back = writeback_figures.node_figures(
            flushed, name, idle, trx,
            writeback_figures.InRun(
                cpu_ms_per_write_net=entry.cpu_ms_per_trx,
                kb_written_per_write=None if written is None or not trx else round(written / 1024 / trx, 1),
                pages_flushed_per_write=round(applied["pages_flushed_per_write"] / trx, 2) if trx else None))
        entry = merged(entry, ApplyReplica(writeback=back))
    return entry


def _restore(settings: Settings, stopped: bool, chosen: tuple[Node, ...]) -> str | None:
    """The replicas held replicating again after the drains, whatever happened; the first failure to, in words
    (None: none). The others were never touched."""
    problem = None
    if stopped:
        try:
            _sql_thread(settings, start=True, replicas=chosen)
        except sql.MySQLError as exc:
            problem = f"could not restart the SQL threads: {exc}"
    for replica in chosen:
        try:
            nodes.wait_replicating(replica, settings)
        except Exception as exc:  # noqa: BLE001
            problem = problem or f"{replica.name} not replicating afterwards: {exc}"
    return problem


def _applying(settings: Settings, replica: Node) -> bool:
    with sql.admin(replica, settings) as cur:
        return sql.replica_threads(cur, settings.flavour).get("sql") == "Yes"


def _idle_cpu(node: Node) -> float | None:
    """The replica's CPU seconds per second with its SQL thread stopped (what it burns whatever it applies)."""
    first = _cpu(node)
    time.sleep(IDLE_SECONDS)
    second = _cpu(node)
    return None if first is None or second is None else round(max(0.0, second - first) / IDLE_SECONDS, 5)


def render(a: ApplyRecord) -> str:
    changed = a.knobs_changed.given() if a.knobs_changed is not None else {}
    setting = ", ".join(f"{k}={v}" for k, v in changed.items()) or "reference settings"
    how = ("every replica at once (--together: on a shared host they share its cores)"
           if a.method == "together" else "one replica, from the files" if a.method == "binlog"
           else "each replica alone, the others' SQL threads held")
    live, replay = a.live, a.replay
    what = (f"what the master was written by over a {live.asked_s:g} s window" if live is not None else
            f"{len(replay.files or [])} binlog file(s) replayed as {replay.replica}'s relay logs"
            if replay is not None else a.scenario)
    lines = [f"Apply capacity — {what} ({setting}); {how}; status {a.status}"]
    pinned = (a.cpus.pinned if a.cpus else None) or {}
    if pinned:
        lines.append("Pinned during the drains (--cpus): " + "; ".join(
            f"{group} on core(s) {','.join(str(c) for c in cores)}" for group, cores in pinned.items())
            + "; every other group on every core")
    threads = (a.knobs.parallel_threads if a.knobs is not None else None) or 0
    own = [len(pinned[r]) for r in a.replicas or {} if r in pinned]  # a pinned replica's cores are its own
    if own and threads >= min(own):
        lines.append(f"Core ceiling: {threads} applier threads on a replica's {min(own)} pinned core(s): a parallel "
                     "speed-up measured here is bounded by its cores, not by replication")
    elif a.cores and threads >= a.cores and not own:
        lines.append(f"Core ceiling: {threads} applier threads on this host's {a.cores} cores, shared with the other "
                     "mariadbd processes: a parallel speed-up measured here is bounded by the cores, not by "
                     "replication (pin the replica to cores of its own with --cpus to measure the threads)")
    if a.error:
        lines.append(f"Error: {a.error}")
    master = a.master  # absent when the backlog was never written
    if master is not None and live is None:
        lines.append(f"Master: {master.transactions:,} transactions ({master.rows_changed:,} rows) committed "
                     f"at {master.commit_rate_trx_per_s:,.1f} trx/s, {master.rows_per_s:,.1f} rows/s "
                     f"({a.requests:,} requests, {a.success:.2%} succeeded)")
    if master is not None and live is not None:
        lines += _live_lines(master, live)
    if replay is not None:
        mb = sum(f.bytes or 0 for f in replay.files or []) / 1e6
        rate = f" ({replay.transactions / replay.span_s:,.1f} trx/s as written)" if replay.span_s and \
            replay.transactions else ""
        lines.append(f"Files: {', '.join(f.name or '' for f in replay.files or [])} ({mb:,.1f} MB): "
                     f"{replay.transactions:,} application transactions after {replay.replica}'s position "
                     f"{replay.start}, to {replay.end}, spanning {replay.span_s} s of the files' clock{rate}")
    for name, e in (a.replicas or {}).items():
        if e is None or not e.seconds:
            lines.append(f"{name}: did not apply the backlog within {DRAIN_TIMEOUT:g} s")
            continue
        if not e.transactions:  # its SQL thread was not held: nothing left to time
            lines.append(f"{name}: had no transaction of the backlog left to apply when its drain began")
            continue
        cpu = "n/a" if e.cpu_ms_per_trx is None else f"{e.cpu_ms_per_trx:.3f}"
        source = (a.cpu_sources or {}).get(name, "process")
        lines.append(f"{name}: applied {e.transactions:,} trx in {e.seconds:.2f} s = "
                     f"{e.apply_rate_trx_per_s:,.1f} trx/s, {e.apply_rate_rows_per_s:,.1f} rows/s; "
                     f"{cpu} CPU-ms per applied trx net of idle" + ("" if source == "process" else f" ({source})")
                     + f"; capacity ratio {e.capacity_ratio}" + _busiest_text(e.busiest_minute_ratio)
                     + _busy_text(e, pinned.get(name)))
        back = e.writeback
        if back is not None and back.pages_flushed is not None and back.pages_flushed_per_write is not None:
            cpu_back = "n/a" if back.cpu_ms_per_write_net is None else f"{back.cpu_ms_per_write_net:.3f}"
            lines.append(f"{name} write-back (its dirty pages forced out after the drain: an upper bound on the "
                         f"steady state's pages and bytes, not on its CPU): {back.pages_flushed_per_write:g} pages, "
                         f"{back.kb_written_per_write} KB written, {cpu_back} CPU-ms per applied trx; with it "
                         f"{back.cpu_ms_per_write_net_with_writeback} CPU-ms and "
                         f"{back.kb_written_per_write_with_writeback} KB written per applied trx")
    return "\n".join(lines)


def _busy_text(e: ApplyReplica, cores: list[int] | None) -> str:
    """A pinned replica's drain as a share of its cores (its CPU net of idle over the drain): near 1 a core, the
    cores bound its apply; well below, its SQL thread or its disk do (docs/apply-capacity.md, "Pinned")."""
    if not cores or e.cpu_ms_per_trx is None or not e.transactions or not e.seconds:
        return ""
    busy = e.cpu_ms_per_trx * e.transactions / 1000 / e.seconds
    return f"; busy {busy:.2f} of its {len(cores)} pinned core(s)"


def _live_lines(master: ApplyMaster, live: LiveWindow) -> list[str]:
    """A live window's lines: what the master committed in it, its busiest minute, and what ran beside the drains."""
    busiest = ("shorter than a minute: no busiest minute" if live.busiest_minute_trx_per_s is None else
               f"busiest minute {live.busiest_minute_trx_per_s:,.1f} trx/s (from {live.busiest_minute_from_s:g} s)")
    lines = [f"Window: {master.transactions:,} transactions ({master.rows_changed:,} rows) committed on the master "
             f"in {live.window_s:g} s: mean {master.commit_rate_trx_per_s:,.1f} trx/s, {busiest}"]
    if live.short:
        lines.append(f"Short window: under {LIVE_MIN_WINDOW_S / 60:g} minutes, it may hold none of the "
                     "application's busy minutes")
    if live.binlog_bytes is not None:
        per = "" if live.binlog_bytes_per_trx is None else f", {live.binlog_bytes_per_trx:,.1f} per transaction"
        lines.append(f"Binlog over the window: {live.binlog_bytes:,} bytes{per} (the server's Binlog_bytes_written, "
                     "the heartbeat's few bytes a second included)")
    lines += _live_cpu_lines(live)
    if live.master_trx_during_drains:
        lines.append(f"The client went on writing while the replicas drained ({live.master_trx_during_drains:,} "
                     "transactions on the master meanwhile): where they share a host, the drains shared its cores")
    return lines


def _live_cpu_lines(live: LiveWindow) -> list[str]:
    """Each watched node's CPU per transaction over the window: the workload's own figures, which `model predict
    --profile --own-runs` prices it with (docs/apply-capacity.md, "Live")."""
    lines = []
    for name, c in (live.cpu or {}).items():
        who = "the master" if c.role == "master" else f"{name} (following it, its SQL thread not held)"
        if c.below_idle:
            spent = _figure(c.cpu_s, ".3f")
            lines.append(f"CPU over the window, {who}: no more than its idle would have spent ({spent} s in all): "
                         "below what the idle subtraction resolves, so no CPU per transaction")
            continue
        if c.cpu_ms_per_trx is None:
            continue
        spread = (f" [{c.ci95_ms_per_trx[0]:.3f}–{c.ci95_ms_per_trx[1]:.3f}, the 95 % interval over its "
                  f"{len(c.minutes_ms_per_trx or [])} whole minutes]" if c.ci95_ms_per_trx else
                  " (under two whole minutes: no interval)")
        basis = "net of its idle" if c.net else (
            "gross: the client was already writing when the window opened, so no idle was measured")
        back = c.writeback
        tail = ("the window's own, without the write-back it left (its dirty pages are not forced out after it, as a "
                "drained replica's are: a client of yours may still be writing)") if back is None else (
            f"with the write-back it left, forced out after the window ({writeback_figures.BOUND}): "
            f"{_figure(back.cpu_ms_per_write_net_with_writeback, '.3f')} CPU-ms, "
            f"{_figure(back.kb_written_per_write_with_writeback, '.1f')} KB written and "
            f"{_figure(back.pages_flushed_per_write_with_writeback, '.2f')} pages flushed per transaction")
        lines.append(f"CPU over the window, {who}: {c.cpu_ms_per_trx:.3f} CPU-ms per transaction{spread}, {basis}; "
                     f"{tail}")
    return lines


def _figure(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


def _busiest_text(ratio: float | None) -> str:
    """A replica's apply rate against a live window's busiest minute."""
    if ratio is None:
        return ""
    if ratio < 1:
        return f", {ratio} of the busiest minute's rate: it falls behind in such a minute"
    return (f", {ratio} of the busiest minute's: it would fall behind near {ratio}× that rate (an extrapolation: "
            "the window never drove it that fast, and on a shared host the master's own load would take cores "
            "from it first)")
