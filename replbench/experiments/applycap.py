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

import os
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from ..analysis import writeback as writeback_figures
from ..core import harnesslog, sql
from ..core.config import Node, Settings
from ..core.progress import Progress
from ..core.records import STATUS_INTERRUPTED, UNIT_FAILED, UNIT_OK
from ..core.results import ApplyRecord, apply_of, write_record
from ..core.scenario import Scenario
from ..load import attack
from ..measure import counters, nodeexporter, writeback
from ..topology import appserver, knobs, links, nodes
from ..topology.install import ensure_vegeta
from . import prepare

DRAIN_TIMEOUT = 1800.0  # seconds a replica may take to apply the backlog
IDLE_SECONDS = 2.0  # a replica's idle CPU, its SQL thread stopped, measured before it drains


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
            folder: Path, link_set: tuple[links.Link, ...] = (), together: bool = False) -> dict[str, Any]:
    progress = Progress(f"apply-capacity {scenario.name}")
    log = folder / "harness.log"
    harnesslog.use(log)
    data: dict[str, Any] = {"scenario": scenario.name, "schema": scenario.schema, "writes_asked": writes,
                            "rate": rate, "knobs": setting.as_dict(), "knobs_changed": setting.changed(),
                            "status": "running", "topology": settings.topology_name,
                            "method": "together" if together else "alone",
                            "cpu_sources": {n.name: n.cpu_source for n in settings.nodes},
                            "cores": None if settings.external else os.cpu_count()}
    stopped = False
    try:
        vegeta = ensure_vegeta(settings)
        data.update(prepare.settings_and_data(settings, scenario, setting, link_set, progress))
        data["targets"] = prepare.app_and_targets(settings, scenario, folder / "targets.json", progress, rate=rate,
                                                  duration=writes / rate, catch_up_timeout=DRAIN_TIMEOUT)
        progress.say("stopping the replicas' SQL threads")
        _sql_thread(settings, start=False)
        stopped = True
        pids = {n.name: nodes.node_pid(n) for n in settings.nodes}
        before = counters.snapshot(settings, pids)
        gtid, begin = _write_backlog(settings, vegeta, scenario, folder, writes, rate, progress)
        queued = counters.snapshot(settings, pids)
        backlog = _backlog_report(vegeta, folder, begin, gtid)
        master = counters.describe({"master": before["master"]}, {"master": queued["master"]},
                                   backlog["write_seconds"], 0, 1)["nodes"]["master"]
        data.update(**backlog, master={"transactions": master["transactions"], "rows_changed": master["rows_changed"],
                                       "commit_rate_trx_per_s": master["transactions_per_s"],
                                       "rows_per_s": master["rows_per_s"]})
        drains = Drains(settings, backlog["gtid"])
        if together:
            progress.say(f"backlog queued: {master['transactions']:,} transactions; starting every SQL thread at "
                         "once and timing MASTER_GTID_WAIT on each replica (--together)")
            drains.together()
            stopped = False
        else:
            for replica in settings.replicas:
                progress.say(f"backlog queued: {master['transactions']:,} transactions; {replica.name} applies it "
                             "alone (the other replicas' SQL threads held), timing MASTER_GTID_WAIT")
                drains.alone(replica)
        after = counters.snapshot(settings, pids)
        data["replicas"] = {r.name: _replica_entry(drains, r.name, queued[r.name], after[r.name], master)
                            for r in settings.replicas}
        data["status"] = UNIT_OK if all(e["seconds"] for e in data["replicas"].values()) else UNIT_FAILED
    except KeyboardInterrupt:
        data["status"] = STATUS_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 — recorded, then the SQL threads are restarted
        data["status"] = UNIT_FAILED
        data["error"] = f"{type(exc).__name__}: {exc}"
        harnesslog.write(f"apply-capacity failed: {exc}", exc)
    finally:
        _restore(settings, data, stopped)
        harnesslog.done(log)
        data["folder"] = folder.name
        write_record(folder / "apply.json", apply_of(data))
    return data


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


def _backlog_report(vegeta: Path, folder: Path, begin: float, gtid: str) -> dict[str, Any]:
    """vegeta's figures of the backlog's writing."""
    attack.write_reports(vegeta, folder)
    report = attack.read_report(folder)
    write_seconds = report["duration"] / 1e9 or (time.monotonic() - begin)  # vegeta's sending time
    return {"requests": report["requests"], "success": report["success"], "gtid": gtid,
            "write_seconds": round(write_seconds, 3)}


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
                   after: counters.NodeCounters | None, master: dict[str, Any]) -> dict[str, Any]:
    """One replica's line of apply.json: its drain and what it applied, per transaction net of its idle CPU."""
    took, cpu, idle = drains.finished.get(name, (None, None, None))
    applied = counters.describe({"r": queued}, {"r": after}, took or 1.0, 0, 1)["nodes"]["r"] if queued else None
    entry: dict[str, Any] = {"seconds": took, "drain_span_s": drains.spans.get(name),
                             "others_applying_at_start": drains.others.get(name)}
    if took and applied:
        net = None if cpu is None else max(0.0, cpu - (idle or 0.0) * took)
        trx_rate = applied["transactions"] / took
        # the replica applies the master's very transactions (same GTIDs), hence the master's rows (measure/counters:
        # a replica's own count is kept beside)
        rows = master["rows_changed"] * applied["transactions"] / max(1, master["transactions"])
        entry.update(transactions=applied["transactions"], rows=round(rows),
                     apply_rate_trx_per_s=round(trx_rate, 1), apply_rate_rows_per_s=round(rows / took, 1),
                     cpu_ms_per_trx=round(1000 * net / applied["transactions"], 3)
                     if net is not None and applied["transactions"] else None,
                     cpu_ms_per_trx_gross=round(1000 * cpu / applied["transactions"], 3)
                     if cpu is not None and applied["transactions"] else None,
                     idle_cpu_per_s=idle,
                     capacity_ratio=round(trx_rate / master["transactions_per_s"], 2)
                     if master["transactions_per_s"] else None)
        flushed = drains.flushes.get(name)
        if flushed is not None:  # per applied transaction, with the drain's own figures beside
            trx = applied["transactions"]
            written = applied["write_bytes"]
            entry["writeback"] = writeback_figures.node_figures(
                flushed, name, idle, trx,
                {"cpu_ms_per_write_net": entry["cpu_ms_per_trx"],
                 "kb_written_per_write": None if written is None or not trx else round(written / 1024 / trx, 1),
                 "pages_flushed_per_write": round(applied["pages_flushed_per_write"] / trx, 2) if trx else None})
    return entry


def _restore(settings: Settings, data: dict[str, Any], stopped: bool) -> None:
    """Every replica replicating again after the drains, whatever happened (a failure is recorded in data)."""
    if stopped:
        try:
            _sql_thread(settings, start=True)
        except sql.MySQLError as exc:
            data.setdefault("error", f"could not restart the SQL threads: {exc}")
    for replica in settings.replicas:
        try:
            nodes.wait_replicating(replica, settings)
        except Exception as exc:  # noqa: BLE001
            data.setdefault("error", f"{replica.name} not replicating afterwards: {exc}")


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
    setting = ", ".join(f"{k}={v}" for k, v in (a.knobs_changed or {}).items()) or "reference settings"
    how = ("every replica at once (--together: on a shared host they share its cores)"
           if a.method == "together" else "each replica alone, the others' SQL threads held")
    lines = [f"Apply capacity — {a.scenario} ({setting}); {how}; status {a.status}"]
    threads = int((a.knobs or {}).get("parallel_threads") or 0)
    if a.cores and threads >= a.cores:
        lines.append(f"Core ceiling: {threads} applier threads on this host's {a.cores} cores, shared with the other "
                     "mariadbd processes: a parallel speed-up measured here is bounded by the cores, not by "
                     "replication (pin the replica to cores of its own with --cpus to measure the threads)")
    if a.error:
        lines.append(f"Error: {a.error}")
    master = a.master  # absent when the backlog was never written
    if master is not None:
        lines.append(f"Master: {master.transactions:,} transactions ({master.rows_changed:,} rows) committed "
                     f"at {master.commit_rate_trx_per_s:,.1f} trx/s, {master.rows_per_s:,.1f} rows/s "
                     f"({a.requests:,} requests, {a.success:.2%} succeeded)")
    for name, e in (a.replicas or {}).items():
        if e is None or not e.seconds:
            lines.append(f"{name}: did not apply the backlog within {DRAIN_TIMEOUT:g} s")
            continue
        cpu = "n/a" if e.cpu_ms_per_trx is None else f"{e.cpu_ms_per_trx:.3f}"
        source = (a.cpu_sources or {}).get(name, "process")
        lines.append(f"{name}: applied {e.transactions:,} trx in {e.seconds:.2f} s = "
                     f"{e.apply_rate_trx_per_s:,.1f} trx/s, {e.apply_rate_rows_per_s:,.1f} rows/s; "
                     f"{cpu} CPU-ms per applied trx net of idle" + ("" if source == "process" else f" ({source})")
                     + f"; capacity ratio {e.capacity_ratio}")
        back = e.writeback
        if back is not None and back.pages_flushed is not None:
            cpu_back = "n/a" if back.cpu_ms_per_write_net is None else f"{back.cpu_ms_per_write_net:.3f}"
            lines.append(f"{name} write-back (its dirty pages forced out after the drain: an upper bound on the "
                         f"steady state's pages and bytes, not on its CPU): {back.pages_flushed_per_write:g} pages, "
                         f"{back.kb_written_per_write} KB written, {cpu_back} CPU-ms per applied trx; with it "
                         f"{back.cpu_ms_per_write_net_with_writeback} CPU-ms and "
                         f"{back.kb_written_per_write_with_writeback} KB written per applied trx")
    return "\n".join(lines)
