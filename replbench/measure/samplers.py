"""Every sampler of one run as one bundle on one clock — the lag (GTID positions in positions.csv, the heartbeat in
lag.csv), each node's health and disk I/O (io.csv), CPU per group and memory (cpu.csv, memory.csv) — started and
stopped together; and the snapshot of
every counter a per-write figure needs, taken the same way before and after the attack (binlog bytes, server
counters, CPU totals, heartbeats, the app's admission counters)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import psutil

from ..core import sql
from ..core.config import Node, Settings
from ..topology import appserver, nodes
from . import binlog, counters, cpu, health, innodb, lag, nodeexporter


def _node_pids(node: Node) -> list[int]:
    """A native node's CPU group: its mariadbd's pid ([] when it is not running)."""
    pid = nodes.node_pid(node)
    return [pid] if pid else []


class Samplers:
    """The run's samplers, their zero set once (the clock every CSV and every figure of the run is on)."""

    def __init__(self, settings: Settings, folder: Path, zero: float, attack_pids: Callable[[], list[int]],
                 planned_kills: set[str], soak: bool = False) -> None:
        s = settings
        # a soak's InnoDB and binlog counters every second (innodb.csv); a run's own need only its snapshots
        self.innodb = innodb.InnodbSampler(s, folder / "innodb.csv", zero) if soak else None
        self.lag = lag.LagMonitor(s, folder / "lag.csv", zero)
        self.health = health.NodeSampler(s, folder / "io.csv", zero, lambda name: nodes.node_pid(s.node(name)))
        self.health.planned = planned_kills
        groups: dict[str, Callable[[], list[int]]] = {
            **({} if s.app_url else {"app": lambda: [p.pid for p in appserver.app_processes(s)]}),
            **{n.name: partial(_node_pids, n) for n in s.nodes if not n.external},
            "vegeta": attack_pids,
            "harness": lambda: [os.getpid()],
        }
        # a topology file's node: its host's busy CPU from its node_exporter, or no CPU figure at all
        remote: dict[str, Callable[[], float | None]] = {
            n.name: partial(nodeexporter.host_busy, n.metrics) for n in s.nodes if n.external and n.metrics}
        self.cpu = cpu.CpuSampler(groups, folder / "cpu.csv", folder / "memory.csv", zero, counters=remote)

    def start(self) -> None:
        for sampler in (self.lag, self.health, self.cpu, self.innodb):
            if sampler is not None:
                sampler.start()

    def stop(self) -> None:
        for sampler in (self.innodb, self.cpu, self.health, self.lag):
            if sampler is not None:
                sampler.stop()


@dataclass
class Snapshot:
    """Every counter at one moment; two of them (before, after) give a run's per-write figures."""

    binlog: binlog.BinlogSnapshot | None
    counters: dict[str, Any]
    cpu: dict[str, float]
    own_cpu: float
    beats: int
    admission: appserver.AppCounters
    at: float = 0.0  # monotonic time it was taken
    errors: list[str] = field(default_factory=list)  # what could not be read (a lost master: no binlog figures)


def snapshot(settings: Settings, samplers: Samplers) -> Snapshot:
    errors: list[str] = []
    try:
        binlog_at: binlog.BinlogSnapshot | None = binlog.snapshot(settings)
    except sql.MySQLError as exc:
        binlog_at = None
        errors.append(f"binlog snapshot: {type(exc).__name__}: {exc}")
    pids = {n.name: nodes.node_pid(n) for n in settings.nodes}
    own = psutil.Process().cpu_times()
    return Snapshot(binlog_at, counters.snapshot(settings, pids), samplers.cpu.totals(), own.user + own.system,
                    samplers.lag.beats, appserver.admission(settings), time.monotonic(), errors)


def idle_rates(first: Snapshot, second: Snapshot) -> dict[str, float]:
    """CPU seconds per second of each group between two snapshots taken with only the measurement running
    (heartbeat, position reads, the app's probes; the harness process included): what a group costs whether or
    not the app writes."""
    seconds = max(1e-9, second.at - first.at)
    rates = {g: max(0.0, second.cpu[g] - first.cpu[g]) / seconds for g in second.cpu if g in first.cpu}
    rates["harness"] = max(0.0, second.own_cpu - first.own_cpu) / seconds
    return {g: round(v, 5) for g, v in rates.items()}
