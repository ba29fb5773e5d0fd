"""The preparation every measurement shares (a run, an apply-capacity drain): the topology up, bench_idx's
secondary indexes as the settings ask (topology/indexes), every setting applied and read back, links in place,
counters on, the buffer pools warmed (or said why not), the app restarted, the replicas caught up, and the targets
written. What one run adds (versions, disk, server variables, pinned cores, the row check's sample) stays in
experiments/run.py."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

import psutil

from ..core import sql
from ..core.config import (
    SETTLE_HOST_SAMPLE,
    SETTLE_HOST_WAIT,
    SETTLE_INNODB_WAIT,
    SETTLE_TIME_WAIT_SHARE,
    SETTLE_TIMEOUT,
    Settings,
)
from ..core.progress import Progress
from ..core.results import Readback, Settle, SetUp, Targets
from ..core.scenario import Scenario
from ..load import targets
from ..measure import counters
from ..topology import appserver, dataset, indexes, innodbrest, knobs, links, nodes
from ..topology.bringup import ensure_topology


@dataclass(frozen=True)
class Settled:
    """What settle waited for, as meta.json records it, and what `alongside` returned (None: none given)."""

    settle: Settle
    alongside: float | None = None


@dataclass(frozen=True)
class Prepared:
    """What settings_and_data set up, as meta.json records it, and what `alongside` returned (None: none given)."""

    set_up: SetUp
    alongside: float | None = None


def settle(settings: Settings, progress: Progress, timeout: float = SETTLE_TIMEOUT,
           alongside: Callable[[], float] | None = None) -> Settled:
    """Wait until the previous unit's work has drained before this one starts: the app has nothing in flight, no
    client statement runs on the master, every replica has applied the master's position, the previous unit's
    connections to the app have left TIME_WAIT (below SETTLE_TIME_WAIT_SHARE of the ephemeral ports; at most `timeout`),
    then every node's InnoDB is at rest (the earlier units' dirty pages flushed, their undo purged: at most
    SETTLE_INNODB_WAIT; topology/innodbrest.py), then the host is back near idle (at most SETTLE_HOST_WAIT more).
    Past any bound the unit starts anyway, marked unsettled with the reasons. `alongside` runs during the first
    look at the host (whose figure leaves out this process's own CPU): the run's calibration loop, which would
    otherwise cost its own half second; its result is returned beside the record."""
    begin = time.monotonic()
    reasons = _drains(settings)
    first = list(reasons)
    while reasons and time.monotonic() - begin < timeout:
        progress.say(f"settling before the run ({time.monotonic() - begin:.0f} s): {'; '.join(reasons)}", tick=True)
        time.sleep(0.5)
        reasons = _drains(settings)
    innodb = innodbrest.rest(settings, SETTLE_INNODB_WAIT) if not reasons else None
    if innodb is not None:
        first += [w for name, values in (innodb.nodes or {}).items() if (w := innodbrest.waited(name, values))]
        reasons += innodb.why or []
    host_since = time.monotonic()
    done: list[float] = []
    busy = _host_busy(settings.host_busy, lambda: done.append(alongside()) if alongside else None)
    if busy:
        first.append(busy)
    while busy and time.monotonic() - host_since < SETTLE_HOST_WAIT:
        progress.say(f"settling before the run ({time.monotonic() - begin:.0f} s): {busy}", tick=True)
        busy = _host_busy(settings.host_busy)
    reasons += [busy] if busy else []
    record = Settle(settled=not reasons, waited_s=round(time.monotonic() - begin, 1), why=reasons,
                    waited_for=first, timeout_s=timeout, host_wait_s=SETTLE_HOST_WAIT)
    if innodb is not None:  # set only where it ran: a settle that never got there records no `innodb` key
        record = record.model_copy(update={"innodb": innodb})
    return Settled(record, done[0] if done else None)


def _drains(settings: Settings) -> list[str]:
    """What of the previous unit's own work has not drained yet."""
    reasons = []
    if appserver.app_processes(settings):
        counted = appserver.admission(settings)
        in_flight = counted["admitted"] + counted["shed"] - counted["answered"]
        if counted["workers"] and in_flight > 0:
            reasons.append(f"the app has {in_flight:,} requests in flight")
    closing = time_wait_reason(urlsplit(appserver.base_url(settings)).port or 80)
    if closing:
        reasons.append(closing)
    try:
        with sql.admin(settings.master, settings, timeout=3.0) as cur:
            cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND IN ('Query', 'Execute') "
                        "AND ID <> CONNECTION_ID() AND USER NOT IN ('system user', 'event_scheduler')")
            row = cur.fetchone()
            assert isinstance(row, tuple) and isinstance(row[0], int)  # a plain cursor's row; COUNT(*): a whole number
            running = row[0]
        if running:
            reasons.append(f"{running} statements still running on the master")
        behind = [name for name, took in nodes.wait_caught_up(settings, 0.5).items() if took is None]
        if behind:
            reasons.append(f"{', '.join(behind)} not yet at the master's position")
    except sql.MySQLError as exc:
        reasons.append(f"the master does not answer ({exc.args[-1] if exc.args else exc})")
    return reasons


def time_wait_reason(port: int) -> str:
    """'' unless more connections to or from this port sit in TIME_WAIT than SETTLE_TIME_WAIT_SHARE of the ephemeral
    port range: a new client then spends its first seconds finding free ports (config.py has the measurement)."""
    waiting = _time_wait_count(port)
    limit = int(SETTLE_TIME_WAIT_SHARE * _ephemeral_ports())
    return "" if waiting <= limit else \
        f"{waiting:,} connections to the app in TIME_WAIT (the last unit's; near drained at {limit:,} or fewer)"


def _time_wait_count(port: int) -> int:
    """Connections to or from `port` in TIME_WAIT, read from the kernel's socket tables (/proc/net/tcp and tcp6:
    state 06), which costs milliseconds where psutil's pid mapping scans /proc for seconds at ~20,000 sockets."""
    tables = [Path("/proc/net/tcp"), Path("/proc/net/tcp6")]
    if not any(t.exists() for t in tables):
        return sum(1 for c in psutil.net_connections(kind="tcp")
                   if c.status == psutil.CONN_TIME_WAIT and port in (c.laddr.port if c.laddr else None,
                                                                      c.raddr.port if c.raddr else None))
    wanted, count = f"{port:04X}", 0
    for table in tables:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 3 and fields[3] == "06" and wanted in (fields[1][-4:], fields[2][-4:]):
                count += 1
    return count


def _ephemeral_ports() -> int:
    """How many local ports the kernel hands out to outgoing connections."""
    try:
        low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
        return high - low + 1
    except (OSError, ValueError):
        return 28_232  # Linux's default range, 32768-60999


def _host_busy(threshold: float, work: Callable[[], object] | None = None) -> str:
    """'' when the host is near idle (at most `threshold` % of one core busy) over SETTLE_HOST_SAMPLE seconds (or
    while `work` runs, if longer), leaving out this process's own CPU, else why not."""
    me = psutil.Process()
    host, own, began = _busy_seconds(psutil.cpu_times()), sum(me.cpu_times()[:2]), time.monotonic()
    if work is not None:
        work()
    time.sleep(max(0.0, SETTLE_HOST_SAMPLE - (time.monotonic() - began)))
    elapsed = time.monotonic() - began
    others = (_busy_seconds(psutil.cpu_times()) - host) - (sum(me.cpu_times()[:2]) - own)
    busy = max(0.0, 100 * others / elapsed)
    return "" if busy <= threshold else f"host {busy:.0f} % busy (% of one core; near idle below {threshold:g})"


class _CpuTimes(Protocol):
    """psutil.cpu_times()'s named tuple, as _busy_seconds reads it: its fields differ by platform (iowait, guest and
    guest_nice are Linux's, read with getattr), idle is everywhere."""

    @property
    def idle(self) -> float: ...

    def __iter__(self) -> Iterator[float]: ...


def _busy_seconds(times: _CpuTimes) -> float:
    """CPU seconds the host's cores spent busy (as psutil.cpu_percent counts: all but idle and iowait)."""
    total = sum(times) - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0)  # inside user already
    return total - times.idle - getattr(times, "iowait", 0.0)


def settings_and_data(settings: Settings, scenario: Scenario, setting: knobs.Knobs,
                      link_set: tuple[links.Link, ...], progress: Progress,
                      alongside: Callable[[], float] | None = None) -> Prepared:
    """Topology up, bench_idx's secondary indexes as the settings ask, the previous work drained (settle, with
    `alongside` run during it), settings applied and read back, links, counters, warm-up: what meta.json records of
    it (the indexes as every node has them)."""
    ensure_topology(settings, with_app=False, pool_size=setting.buffer_pool)
    # the secondary indexes the settings leave bench_idx, before the settle: it waits out what their builds leave
    changed = indexes.reconcile(settings, progress)
    settled = settle(settings, progress, alongside=alongside)
    progress.say(f"applying settings: {setting.describe()}")
    readback = knobs.apply(settings, setting)
    mismatched = knobs.mismatches(setting, readback, settings)
    linked = links.apply(settings, link_set)
    described = indexes.describe(settings, changed)
    counters.enable(settings)
    warmed = dataset.warm_up(settings, scenario.schema, progress)
    return Prepared(SetUp(settle=settled.settle, knob_mismatches=mismatched, links=linked,
                          knobs_readback={name: Readback.model_validate(back) for name, back in readback.items()},
                          indexes=described, warm_up_s=dict(warmed),
                          buffer_pools=dataset.pool_fit(settings, scenario.schema)), settled.alongside)


def app_and_targets(settings: Settings, scenario: Scenario, path: Path, progress: Progress, *, rate: int,
                    duration: float, catch_up_timeout: float, nonce: str | None = None) -> Targets:
    """The app with fresh workers (fresh connections see the settings), the replicas caught up (or a
    TopologyError), then the targets written; returns their description."""
    app_ready = appserver.renew(settings)  # its workers are replaced while the targets are written
    progress.say("waiting for the replicas to be caught up before the attack")
    before = nodes.wait_caught_up(settings, catch_up_timeout)
    if any(v is None for v in before.values()):
        app_ready()
        raise nodes.TopologyError(f"replicas not caught up before the measurement: {before}")
    progress.say("generating targets from the dataset")
    written = targets.generate(settings, scenario, appserver.base_url(settings), path, rate=rate, duration=duration,
                               nonce=nonce)
    app_ready()
    return written
