"""One benchmark run: a constant-rate vegeta attack of one scenario against the running topology, and a complete,
self-describing results folder (meta.json, targets, results.bin, vegeta reports, cpu.csv, lag.csv, latency.png,
summary.json, block.txt).

Order of a run: topology and app ready (knobs applied, app restarted) → targets from the dataset → heartbeat on and
its binlog cost calibrated → counters snapshotted → attack (live progress) → counters snapshotted → replicas'
catch-up timed → vegeta reports → consistency check (writes) → honesty guards → summary and printed block.
Ctrl-C stops vegeta gracefully, keeps the partial results, reports them marked "interrupted" and exits 130.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from . import appserver, attack, binlog, dataset, knobs, lag, sampling, sql, targets, timeline, topology
from .config import (
    CATCH_UP_TIMEOUT,
    HEARTBEAT_CALIBRATION,
    HOST_SATURATED,
    MIN_RATE_RATIO,
    MIN_SUCCESS,
    PROGRESS_INTERVAL,
    ROOT,
    VEGETA_SATURATED,
    Settings,
)
from .install import VEGETA_VERSION, ensure_vegeta
from .progress import Progress
from .scenario import Scenario

ERROR_LINES_SHOWN = 8
STATUS_OK = "ok"
STATUS_WARNING = "ok-with-warnings"
STATUS_FAILED = "FAILED"
STATUS_INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class RunOptions:
    duration: float
    timeout: float = 30.0
    knobs: knobs.Knobs = field(default_factory=knobs.Knobs)
    catch_up_timeout: float = CATCH_UP_TIMEOUT


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


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Run:
    """State of one run while it executes; execute() returns the summary dict."""

    def __init__(self, settings: Settings, scenario: Scenario, rate: int, options: RunOptions, folder: Path,
                 progress: Progress | None = None) -> None:
        self.settings = settings
        self.scenario = scenario
        self.rate = rate
        self.options = options
        self.folder = folder
        self.progress = progress or Progress(f"{scenario.name}@{rate}")
        self.status = STATUS_OK
        self.meta: dict[str, Any] = {}
        self.summary: dict[str, Any] = {"scenario": scenario.name, "rate": rate, "duration_s": options.duration,
                                        "schema": scenario.schema, "folder": str(folder)}
        self.zero = time.monotonic()
        self.monitor: lag.LagMonitor | None = None
        self.sampler: sampling.CpuSampler | None = None
        self.attack: attack.Attack | None = None
        self.vegeta: Path | None = None
        self.timeline: timeline.Timeline | None = None

    # ---- phases ----

    def execute(self) -> dict[str, Any]:
        self.meta = self._base_meta()
        write_json(self.folder / "meta.json", self.meta)
        try:
            self._prepare()
            self._attack_and_measure()
        except KeyboardInterrupt:
            self.status = STATUS_INTERRUPTED
            if self.attack is not None:
                self.attack.interrupt()
        finally:
            self._stop_background()
        try:
            self._finish()
        except KeyboardInterrupt:
            self.status = STATUS_INTERRUPTED
            self._finish(skip_waits=True)
        return self.summary

    def _prepare(self) -> None:
        from .commands import ensure_topology

        s = self.settings
        self.vegeta = ensure_vegeta(s)
        ensure_topology(s, with_app=False)
        self.meta["versions"] = versions(s)
        self.meta["knobs_readback"] = knobs.apply(s, self.options.knobs)
        self.meta["warm_up_s"] = dataset.warm_up(s, self.scenario.schema, self.progress)
        appserver.stop(s)  # restart: fresh connections see the knobs, and the run's app settings apply
        appserver.start(s)
        self.progress.say("waiting for the replicas to be caught up before the attack")
        before = topology.wait_caught_up(s, self.options.catch_up_timeout)
        if any(v is None for v in before.values()):
            raise topology.TopologyError(f"replicas not caught up before the run: {before}")
        self.progress.say("generating targets from the dataset")
        self.meta["targets"] = targets.generate(s, self.scenario, appserver.base_url(s), self.folder / "targets.json")
        write_json(self.folder / "meta.json", self.meta)

    def _attack_and_measure(self) -> None:
        s = self.settings
        self.zero = time.monotonic()
        self.monitor = lag.LagMonitor(s, self.folder / "lag.csv", self.zero)
        self.monitor.start()
        self.progress.say(f"calibrating heartbeat binlog cost ({HEARTBEAT_CALIBRATION:g} s)")
        cal_before, beats_before = binlog.snapshot(s), self.monitor.beats
        time.sleep(HEARTBEAT_CALIBRATION)
        cal_after, beats_after = binlog.snapshot(s), self.monitor.beats
        beats = max(1, beats_after - beats_before)
        self.bytes_per_beat = binlog.written_bytes(cal_before, cal_after) / beats

        groups = {
            "app": lambda: [p.pid for p in appserver.app_processes(s)],
            **{n.name: (lambda n=n: [pid] if (pid := topology.node_pid(n)) else []) for n in s.nodes},
            "vegeta": lambda: self.attack.pids if self.attack else [],
        }
        self.sampler = sampling.CpuSampler(groups, self.folder / "cpu.csv", self.folder / "memory.csv")
        self.sampler.started = self.zero
        self.sampler.start()
        self.binlog_before = binlog.snapshot(s)
        self.cpu_before = self.sampler.totals()
        self.children_before = children_cpu()
        self.beats_before = self.monitor.beats
        self.attack = attack.Attack(self.vegeta, self.folder, self.folder / "targets.json",
                                    attack.AttackOptions(self.rate, self.options.duration, self.options.timeout),
                                    f"{self.scenario.name}-{self.rate}")
        self.t_start = time.monotonic() - self.zero
        self.meta["attack_command"] = self.attack.command
        self.meta["started_at"] = _now()
        self.attack.start()
        try:
            self._show_progress()
        except KeyboardInterrupt:
            self.status = STATUS_INTERRUPTED
            self.progress.say("interrupted: stopping vegeta, keeping the partial results", final=True)
            self.attack.interrupt()
        self.attack.wait()
        self.t_end = time.monotonic() - self.zero
        self.meta["attack_ended_at"] = _now()
        self.binlog_after = binlog.snapshot(s)
        self.cpu_after = self.sampler.totals()
        self.children_after = children_cpu()
        self.beats_during = self.monitor.beats - self.beats_before
        if self.status != STATUS_INTERRUPTED:
            self.catch_up = self._time_catch_up()

    def _show_progress(self) -> None:
        assert self.attack and self.sampler
        while self.attack.running():
            time.sleep(PROGRESS_INTERVAL)
            elapsed = time.monotonic() - self.zero - self.t_start
            live = self.attack.latest
            cpu = self.sampler.rows[-1] if self.sampler.rows else {}
            errors = live.get("requests", 0) - round(live.get("requests", 0) * live.get("success", 1))
            self.progress.say(
                f"{min(elapsed, self.options.duration):5.0f}/{self.options.duration:.0f} s, "
                f"{live.get('requests', 0):,} requests, {errors:,} errors, "
                f"p99 {live.get('latencies', {}).get('99th', 0) / 1e6:.1f} ms | cpu app {cpu.get('app', 0):.0f} "
                f"master {cpu.get('master', 0):.0f} r1 {cpu.get('replica1', 0):.0f} r2 {cpu.get('replica2', 0):.0f} "
                f"vegeta {cpu.get('vegeta', 0):.0f}")
        self.progress.say("attack finished", final=True)

    def _time_catch_up(self) -> dict[str, float | None]:
        """Seconds after the attack until each replica has applied everything the master had at its end."""
        s = self.settings
        gtid = topology.master_gtid(s)
        taken: dict[str, float | None] = {}
        begin = time.monotonic()

        def wait(replica_name: str) -> None:
            result = sql.query_one(s.node(replica_name), s, sql.wait_gtid_sql(s.flavour),
                                   (gtid, self.options.catch_up_timeout))
            taken[replica_name] = round(time.monotonic() - begin, 3) if result == 0 else None

        self.progress.say("timing the replicas' catch-up")
        threads = [threading.Thread(target=wait, args=(r.name,)) for r in s.replicas]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return taken

    def _stop_background(self) -> None:
        if self.attack is not None and self.attack.running():
            self.attack.interrupt()
            self.attack.wait()
        if self.sampler is not None:
            self.sampler.stop()
        if self.monitor is not None:
            self.monitor.stop()

    # ---- results ----

    def _finish(self, skip_waits: bool = False) -> None:
        results = self.folder / "results.bin"
        if self.vegeta is not None and results.exists() and results.stat().st_size > 0:
            attack.write_reports(self.vegeta, self.folder)
            self._summarize()
            if self.scenario.writes and self.status != STATUS_INTERRUPTED and not skip_waits:
                self._check_consistency()
            self._guards()
            if self.timeline is not None:
                timeline.plot(self.timeline, self.folder / "latency.png",
                              f"{self.scenario.name} @ {self.rate} rps — latency over time ({self.status})")
        elif self.status == STATUS_OK:
            self.status = STATUS_FAILED
            self.summary.setdefault("guards", []).append("vegeta produced no results")
        self.summary["status"] = self.status
        self.meta.update(finished_at=_now(), status=self.status, exit_code=exit_code(self.status))
        write_json(self.folder / "meta.json", self.meta)
        write_json(self.folder / "summary.json", self.summary)
        if (self.folder / "report.txt").exists():
            (self.folder / "block.txt").write_text(render_block(self.summary, self.folder))

    def _summarize(self) -> None:
        assert self.vegeta is not None
        report = attack.read_report(self.folder)
        lat = report["latencies"]
        self.summary.update(
            requests=report["requests"], rate_achieved=round(report["rate"], 2),
            throughput=round(report["throughput"], 2), success=report["success"],
            status_codes=report["status_codes"], errors=report["errors"][:10],
            latency_ms={k: round(lat[q] / 1e6, 3) for k, q in
                        (("min", "min"), ("mean", "mean"), ("p50", "50th"), ("p90", "90th"), ("p95", "95th"),
                         ("p99", "99th"), ("max", "max"))})
        tl = timeline.build(attack.decode(self.vegeta, self.folder / "results.bin"))
        timeline.write_csv(tl, self.folder / "timeline.csv")
        self.timeline = tl  # plotted once the status is final
        self.summary["outcomes"] = tl.outcomes
        if not hasattr(self, "cpu_after"):  # interrupted before the attack's counters were read
            return
        cpu_s = sampling.cpu_seconds(self.cpu_before, self.cpu_after)
        cpu_s["vegeta"] = round(self.children_after - self.children_before, 3)  # exact: waited children
        requests = max(1, report["requests"])
        assert self.sampler is not None
        means = sampling.steady_means(self.sampler.rows, self.t_start, self.t_end)
        self.summary.update(
            cpu_mean_percent=means, cpu_seconds=cpu_s,
            cpu_ms_per_request={k: round(1000 * v / requests, 3) for k, v in cpu_s.items()
                                if k in sampling.GROUPS},
            cores=os.cpu_count())
        self.summary["memory_mb"] = sampling.memory_summary(self.sampler.memory_rows)
        assert self.monitor is not None
        self.summary["lag"] = self.monitor.summarize(self.t_start, self.t_end)
        self.summary["catch_up_s"] = getattr(self, "catch_up", None)
        self.summary["replicas_not_replicating"] = sorted(self.monitor.not_replicating)
        writes = sum(tl.ok_count(e) for e in ("update_user",))
        self.summary["binlog"] = binlog.describe(self.binlog_before, self.binlog_after, self.beats_during,
                                                 self.bytes_per_beat, writes)

    def _check_consistency(self) -> None:
        s = self.settings
        self.progress.say("waiting for the replicas, then CHECKSUM TABLE on all three nodes")
        waited = topology.wait_caught_up(s, self.options.catch_up_timeout)
        table = f"{self.scenario.schema}.accounts"
        sums: dict[str, int | None] = {}
        threads = [threading.Thread(target=lambda n=n: sums.__setitem__(n.name, sql.checksum(n, s, table)))
                   for n in s.nodes]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        equal = len(set(sums.values())) == 1 and all(v is not None for v in waited.values())
        self.summary["consistency"] = {"table": table, "checksums": sums, "caught_up_s": waited, "equal": equal}
        if not equal:
            self.status = STATUS_FAILED

    def _guards(self) -> None:
        guards = self.summary.setdefault("guards", [])
        asked, got = self.rate, self.summary.get("rate_achieved", 0)
        if got < MIN_RATE_RATIO * asked:
            guards.append(f"achieved rate {got:.1f}/s is below {MIN_RATE_RATIO:.0%} of the asked {asked}/s")
        success = self.summary.get("success", 0)
        if success < MIN_SUCCESS:
            guards.append(f"only {success:.2%} of requests succeeded (see the status codes and report.txt)")
        means = self.summary.get("cpu_mean_percent", {})
        cores = os.cpu_count() or 1
        if means.get("host_busy", 0) > HOST_SATURATED * 100 * cores:
            guards.append(f"host CPU saturated ({means['host_busy']:.0f} % of {100 * cores} %): latencies include "
                          "queueing for CPU; the numbers describe this box, not only the database")
        if means.get("vegeta", 0) > VEGETA_SATURATED:
            guards.append(f"vegeta used {means['vegeta']:.0f} % of a core: the load generator competes for CPU")
        for name in self.summary.get("replicas_not_replicating", []):
            guards.append(f"{name} was not replicating during the run")
        if self.summary.get("consistency", {}).get("equal") is False:
            guards.append("CHECKSUM TABLE differs between nodes after catch-up: replicas diverged — RUN FAILED")
        if guards and self.status == STATUS_OK:
            self.status = STATUS_WARNING

    def _base_meta(self) -> dict[str, Any]:
        s = self.settings
        info = dataset.dataset_info(s) or {}
        return {
            "scenario": self.scenario.name, "scenario_file": self.scenario.source, "rate": self.rate,
            "duration_s": self.options.duration, "timeout_s": self.options.timeout,
            "attack_options": attack.AttackOptions(self.rate, self.options.duration, self.options.timeout).as_dict(),
            "knobs": self.options.knobs.as_dict(),
            "dataset": {"accounts": info.get("accounts"), "seed": info.get("seed"), "built_at": info.get("built_at")},
            "app": {"workers": s.app_workers, "driver": s.driver, "worker_class": s.worker_class,
                    "pool_size": s.pool_size, "statement_timeout_s": s.statement_timeout},
            "topology": {n.name: {"port": n.port, "server_id": n.server_id} for n in s.nodes},
            "buffer_pool": s.buffer_pool, "flavour": s.flavour,
            "versions": versions(s), "host": {**sampling.describe_host(), "platform": platform.platform()},
            "created_at": _now(), "command": sys.argv, "status": "running",
        }


def exit_code(status: str) -> int:
    return {STATUS_OK: 0, STATUS_WARNING: 0, STATUS_FAILED: 1, STATUS_INTERRUPTED: 130}[status]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def versions(settings: Settings) -> dict[str, Any]:
    out: dict[str, Any] = {"vegeta": VEGETA_VERSION, "python": platform.python_version()}
    try:
        out["mariadb"] = sql.query_one(settings.master, settings, "SELECT VERSION()")
    except Exception:  # the master may not be up yet at this point
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
        r1, r2 = means.get("replica1", 0), means.get("replica2", 0)
        lines += [f"Gunicorn cpu: {means.get('app', 0):.0f}",
                  f"Mysql cpu: {means.get('master', 0):.0f} + 2 * {(r1 + r2) / 2:.0f}"
                  f"          (master {means.get('master', 0):.0f}, replica1 {r1:.0f}, replica2 {r2:.0f})",
                  f"vegeta cpu: {means.get('vegeta', 0):.0f}",
                  f"Host cpu: {means.get('host_busy', 0):.0f} of {100 * (summary.get('cores') or 1)}"
                  f" (steal {means.get('host_steal', 0):.0f})   [% of one core, mean over the steady part]"]
    lines.append(vegeta_text(folder / "report.txt"))
    per_req = summary.get("cpu_ms_per_request")
    if per_req:
        lines.append("CPU-ms per request: " + ", ".join(f"{k} {v:.3f}" for k, v in per_req.items()))
    for name, lag_of in (summary.get("lag") or {}).items():
        catch = (summary.get("catch_up_s") or {}).get(name)
        catch_text = "not measured" if catch is None and summary.get("status") == STATUS_INTERRUPTED else (
            "NOT caught up" if catch is None else f"caught up {catch:.2f} s after the attack")
        lines.append(f"Lag {name}: heartbeat p50 {_ms(lag_of['p50_ms'])}, p99 {_ms(lag_of['p99_ms'])}, "
                     f"max {_ms(lag_of['max_ms'])}; Seconds_Behind_Master max "
                     f"{lag_of['max_seconds_behind_master']}; {catch_text}")
    b = summary.get("binlog")
    if b:
        per_write = "n/a (no writes)" if b["bytes_per_write"] is None else f"{b['bytes_per_write']:.1f} bytes per write"
        lines.append(f"Binlog: {b['master_binlog_bytes']:,} bytes on the master during the attack; {per_write} "
                     f"({b['successful_writes']:,} successful writes; {b['heartbeat_writes']} heartbeats × "
                     f"{b['heartbeat_bytes_per_write']:.0f} B excluded)")
        if b.get("files_opened"):
            lines.append(f"Binlog rotated during the attack (max_binlog_size): opened {', '.join(b['files_opened'])}")
        relay = ", ".join(f"{k} {v:,}" for k, v in b["replica_received_bytes"].items())
        lines.append(f"Relay log bytes received: {relay}")
    memory = summary.get("memory_mb")
    if memory:
        lines.append("Memory RSS MiB (first → last sample, max): " + ", ".join(
            f"{k} {v['first']:.0f} → {v['last']:.0f} ({v['max']:.0f})" for k, v in memory.items()))
    c = summary.get("consistency")
    if c:
        verdict = "equal on all three nodes" if c["equal"] else "DIFFERENT — replicas diverged, RUN FAILED"
        lines.append(f"Consistency: CHECKSUM TABLE {c['table']} {verdict} {c['checksums']}")
    guards = summary.get("guards") or []
    lines.append("Guards: " + ("none tripped" if not guards else "; ".join(f"WARNING {g}" for g in guards)))
    lines.append(f"Status: {summary.get('status')}    Results: {folder}")
    return "\n".join(lines) + "\n"


def vegeta_text(path: Path, max_errors: int = ERROR_LINES_SHOWN) -> str:
    """vegeta's text report verbatim, except that a long Error Set is cut (the whole one stays in report.txt)."""
    lines = path.read_text().rstrip("\n").splitlines()
    if "Error Set:" not in lines:
        return "\n".join(lines)
    head = lines.index("Error Set:") + 1
    errors = lines[head:]
    if len(errors) <= max_errors:
        return "\n".join(lines)
    return "\n".join(lines[:head + max_errors] + [f"... {len(errors) - max_errors} more distinct errors in {path}"])


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"
