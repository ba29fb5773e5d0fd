"""A run's summary figures, computed in one place from what the run recorded: vegeta's report and the decoded
timeline (the client's view), and the window the samplers and snapshots recorded on the run's clock (the servers'
view). Pure functions: no I/O, so every figure can be checked against hand-computed values."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from ..core.config import NET_RESOLUTION_Z
from ..core.nodenames import is_node, nodes_in
from ..core.results import (
    AboveKnee,
    Admission,
    AttackCpu,
    Binlog,
    Fault,
    LagOf,
    Latency,
    Memory,
    NodeCounters,
    NodeFigures,
    Num,
    Record,
    Replication,
    RunSummary,
    VegetaReport,
)
from ..core.scenario import WRITE_ENDPOINTS, PassCriteria
from ..core.stats import net_resolution
from ..measure import binlog, counters, cpu
from ..measure.timeline import Timeline
from . import rules

LATENCY_KEYS = (("min", "min"), ("mean", "mean"), ("p50", "50th"), ("p90", "90th"), ("p95", "95th"),
                ("p99", "99th"), ("max", "max"))

R = TypeVar("R", bound=Record)

# A node's counts per second in the idle window, as measure/counters.idle_rates gives them (None: a node either
# snapshot missed; within a node, None for a count it could not read, kb_written_per_s without the process's bytes)
IdleCounts = Mapping[str, float | None]


def joined(first: R, *more: R) -> R:
    """The records' keys in one (a later record's key over an earlier one's), each as it was set: how the parts of
    a summary are put together, so a key a part set to None is kept (written null) and one it never set stays
    absent, as a dictionary's update kept them."""
    doc = first.model_dump(by_alias=True, exclude_unset=True)
    for part in more:
        doc.update(part.model_dump(by_alias=True, exclude_unset=True))
    return type(first).model_validate(doc)


def client(report: VegetaReport, tl: Timeline) -> RunSummary:
    """What vegeta saw: requests, successes, rates, latency percentiles, status codes, outcomes; server-side
    success leaves out the load generator's own failures. The summary's keys it derives, and only those."""
    requests = report.requests
    successes = round(report.success * requests)
    lat = report.latencies
    return RunSummary(
        served_by=tl.served, requests=requests, successes=successes,
        rate_sent=round(report.rate, 2), goodput=round(report.throughput, 2), success=report.success,
        server_success=round(successes / max(1, requests - tl.client_errors), 6),
        client_errors=tl.client_errors, status_codes=report.status_codes, errors_seen=report.errors[:10],
        outcomes=tl.outcomes, latency_ms=Latency.model_validate({k: round(lat[q] / 1e6, 3) for k, q in LATENCY_KEYS}))


@dataclass(frozen=True)
class Window:
    """What the samplers and the before/after snapshots recorded over one attack, on the run's one clock."""

    t_start: float
    t_end: float
    cpu_before: dict[str, float]
    cpu_after: dict[str, float]
    attack_cpu_s: AttackCpu  # the attack process(es), exact (wait4)
    harness_cpu_s: float
    cpu_rows: list[dict[str, float]]
    memory_rows: list[dict[str, float]]
    lag: dict[str, LagOf | None]
    not_replicating: list[str]
    nodes_lost: list[Fault]
    counters_before: dict[str, counters.NodeCounters | None]
    counters_after: dict[str, counters.NodeCounters | None]
    heartbeats: int
    binlog_before: binlog.BinlogSnapshot | None = None
    binlog_after: binlog.BinlogSnapshot | None = None
    bytes_per_beat: float = 0.0
    idle_cpu_per_s: dict[str, float] = field(default_factory=dict)  # each group's CPU s/s, only the measurement running
    seconds: float = 0.0  # between the two snapshots: the span the CPU totals cover
    lag_settled_s: dict[str, float | None] | None = None
    sources: dict[str, str] = field(default_factory=dict)  # where each group's CPU comes from
    sync_binlog: dict[str, int] = field(default_factory=dict)  # each node's sync_binlog, as read back
    idle_start: float | None = None  # when the idle window began (sampler clock): its cpu_rows give the idle spread
    # each node's counts per second in the idle window (measure/counters.idle_rates): its counters net of idle
    idle_counters_per_s: Mapping[str, IdleCounts | None] = field(default_factory=dict)


def servers(w: Window, *, requests: int, successes: int, writes: int, sending_s: float, databases_here: bool,
            cores: int | None) -> RunSummary:
    """CPU per group (seconds, per request and per success, steady means), the databases' share of the host,
    memory, lag, replication counters and binlog bytes over the window: the summary's keys it derives, and only
    those (lag_settled_s only where it was read, binlog only with both binlog snapshots)."""
    cpu_s = cpu.cpu_seconds(w.cpu_before, w.cpu_after)
    vegeta = w.attack_cpu_s.vegeta
    cpu_s["vegeta"] = cpu_s.get("vegeta", 0.0) if vegeta is None else vegeta
    cpu_s["harness"] = round(w.harness_cpu_s, 3)
    groups = cpu.ordered_groups(cpu_s)
    busy = cpu_s.get("host_busy") or 0.0
    db = sum(cpu_s[n] for n in nodes_in(cpu_s)) if databases_here else None  # a topology file's: not here
    figures: NodeFigures = dict(cpu_s)
    gross = RunSummary(
        pipeline_cpu_s=w.attack_cpu_s, cpu_sources=w.sources,
        cpu_mean_percent=dict(cpu.steady_means(w.cpu_rows, w.t_start, w.t_end)), cpu_seconds=figures,
        cpu_ms_per_request={k: round(1000 * cpu_s[k] / max(1, requests), 3) for k in groups},
        cpu_ms_per_success={k: round(1000 * cpu_s[k] / successes, 3) for k in groups} if successes else {},
        db_share_of_host=round(db / busy, 3) if busy and db is not None else None, cores=cores)
    net = net_of_idle(cpu_s, w.idle_cpu_per_s, w.seconds, groups, requests, successes,
                      idle_per_second=None if w.idle_start is None else
                      cpu.per_second_within(w.cpu_rows, w.idle_start, w.t_start))
    rep = replication(w, sending_s, writes)
    master = (rep.nodes or {}).get("master")
    rest = RunSummary(
        memory_mb={g: Memory.model_validate(m) for g, m in cpu.memory_summary(w.memory_rows).items()}, lag=w.lag,
        replicas_not_replicating=sorted(w.not_replicating), nodes_lost=w.nodes_lost,
        attack_start_s=round(w.t_start, 3), replication=rep)
    parts = [gross, net, rest]
    if w.lag_settled_s is not None:
        parts.append(RunSummary(lag_settled_s=dict(w.lag_settled_s)))
    if w.binlog_before is not None and w.binlog_after is not None:
        rows = (master.rows_changed if master is not None else None) or 0
        parts.append(RunSummary(binlog=Binlog.model_validate(binlog.describe(
            w.binlog_before, w.binlog_after, w.heartbeats, w.bytes_per_beat, writes, rows))))
    return joined(*parts)


def replication(w: Window, sending_s: float, writes: int) -> Replication:
    """The replication counters over the window (measure/counters.describe), each node that answered with its
    binlog syncs (where its sync_binlog was read back) and its counts net of idle."""
    described = counters.describe(w.counters_before, w.counters_after, sending_s, w.heartbeats, writes)
    nodes: dict[str, NodeCounters | None] = {}
    for name, figures in described["nodes"].items():
        node = None if figures is None else NodeCounters.model_validate(figures)
        if node is not None and name in w.sync_binlog:
            assert node.binlog_group_commits is not None  # measure/counters.describe counts it for every node
            node = joined(node, binlog_syncs(node.binlog_group_commits, w.sync_binlog[name], writes))
        if node is not None:
            node = joined(node, counters_net_of_idle(node, w.idle_counters_per_s.get(name), w.seconds, writes))
        nodes[name] = node
    return Replication(seconds=described["seconds"], nodes=nodes)


def binlog_syncs(group_commits: int, sync_binlog: int, writes: int) -> NodeCounters:
    """The binlog's own fsyncs, which Innodb_data_fsyncs does not count: with sync_binlog=N the server syncs the
    binlog after every N group commits (Binlog_group_commits), never with 0 (the OS flushes it). A node's figures
    holding only these."""
    syncs = group_commits // sync_binlog if sync_binlog > 0 else 0
    return NodeCounters(sync_binlog=sync_binlog, binlog_syncs=syncs,
                        binlog_syncs_per_write=round(syncs / writes, 3) if writes else None)


# a node's per-write figures netted of the idle window's rate of the same count (measure/counters.idle_rates:
# "<count>_per_s" beside "<count>_per_write")
NETTED_PER_WRITE = ("pool_disk_reads_per_write", "pages_read_per_write", "pages_written_per_write",
                    "pages_flushed_per_write", "kb_read_per_write", "kb_written_per_write")


def _rate(idle: IdleCounts, key: str) -> float:
    """An idle rate every node's idle_rates holds: a missing one raises the KeyError or TypeError that arithmetic on
    it raised."""
    rate = idle[key]
    if rate is None:
        raise TypeError(f"the idle window's {key} is None")
    return rate


def counters_net_of_idle(node: NodeCounters, idle: IdleCounts | None, seconds: float, writes: int) -> NodeCounters:
    """A node's counts net of idle, as its CPU is: each count over the run less what the idle window's rate (the
    heartbeat and the background alone) gives over the span the counts cover (rate × seconds), never below zero;
    per write like the gross (`<figure>_net`): fsyncs and binlog syncs, pages read from disk, read, written and
    flushed, KB read and written. A heartbeat commit that joins an application's group commit syncs nothing of its
    own, so a net sync count may be a little low at high rates, never high. A node's figures holding only these:
    none without idle rates (a run recorded before they were, or a node the idle window missed); a figure whose
    idle rate was not recorded (an older run) gets no net figure."""
    if not idle or seconds <= 0:
        return NodeCounters()
    fsyncs = max(0.0, (node.innodb_fsyncs or 0) - _rate(idle, "fsyncs_per_s") * seconds)
    parts = [NodeCounters(idle_fsyncs_per_s=_rate(idle, "fsyncs_per_s"), innodb_fsyncs_net=round(fsyncs),
                          fsyncs_per_write_net=round(fsyncs / writes, 3) if writes else None)]
    if node.sync_binlog:  # sync_binlog=N: one binlog sync per N group commits, the idle ones too
        idle_syncs = _rate(idle, "binlog_group_commits_per_s") / node.sync_binlog
        syncs = max(0.0, (node.binlog_syncs or 0) - idle_syncs * seconds)
        parts.append(NodeCounters(idle_binlog_syncs_per_s=round(idle_syncs, 4), binlog_syncs_net=round(syncs),
                                  binlog_syncs_per_write_net=round(syncs / writes, 3) if writes else None))
    netted: dict[str, float] = {}
    for figure in NETTED_PER_WRITE:
        gross: Num | None = getattr(node, figure)
        per_s = idle.get(figure.replace("_per_write", "_per_s"))
        if gross is not None and per_s is not None and writes:
            netted[f"{figure}_net"] = round(max(0.0, gross - per_s * seconds / writes), 3)
    return joined(*parts, NodeCounters.model_validate(netted))


def net_of_idle(cpu_s: dict[str, float], idle: dict[str, float], seconds: float, groups: list[str],
                requests: int, successes: int, idle_per_second: dict[str, list[float]] | None = None) -> RunSummary:
    """CPU net of idle: each group's CPU over the run less what it burns with only the measurement running
    (idle rate × the span the totals cover), never below zero; per request and per success like the gross. With
    the idle window's per-second samples, each group's resolution (CPU seconds, and per success): a net figure
    below it cannot be told from zero. The summary's keys it derives, and only those: none without an idle
    window, no resolution without its samples."""
    if not idle or seconds <= 0:
        return RunSummary()
    net = {g: round(max(0.0, cpu_s[g] - idle.get(g, 0.0) * seconds), 3) for g in groups}
    out = RunSummary(
        cpu_idle_per_s=dict(idle), cpu_seconds_net=dict(net), cpu_span_s=round(seconds, 3),
        cpu_ms_per_request_net={g: round(1000 * net[g] / max(1, requests), 3) for g in groups},
        cpu_ms_per_success_net={g: round(1000 * net[g] / successes, 3) for g in groups} if successes else {})
    if not idle_per_second:
        return out
    resolution = {g: net_resolution(idle_per_second.get(g) or [], seconds, NET_RESOLUTION_Z) for g in groups
                  if g in idle}
    got = {g: round(r, 4) for g, r in resolution.items() if r is not None}
    if not got:
        return out
    out = joined(out, RunSummary(cpu_seconds_net_resolution=dict(got), net_resolution_z=NET_RESOLUTION_Z,
                                 idle_samples=max(len(v) for v in idle_per_second.values())))
    if not successes:
        return out
    return joined(out, RunSummary(
        cpu_ms_per_success_net_resolution={g: round(1000 * r / successes, 4) for g, r in got.items()}))


def writes_of(tl: Timeline) -> int:
    """Successful writes: the per-write figures' denominator."""
    return sum(tl.ok_count(e) for e in WRITE_ENDPOINTS)


def above_knee(summary: RunSummary, criteria: PassCriteria | None = None) -> AboveKnee | None:
    """What happened when a run asked more than this machine served (the scenario's min_success or min_rate_ratio
    broken, as analysis/rules judges them: success server-side, goodput against the rate asked): goodput against
    the rate asked, per second what the app's admission shed and what failed otherwise, how busy the host was and
    who used it, and whether vegeta's connections were all in use (requests then also waited in the client, where
    the app's admission cannot see them), and the cores each role (app, nodes, vegeta) would need to serve the rate
    asked at this run's CPU per successful request (net of idle; above the knee a request costs more than below it,
    so these bound the need from above). None below the knee."""
    s = summary
    asked, goodput, success = s.rate, rules.goodput(s), s.success
    if not asked or goodput is None or success is None:
        return None
    knee = rules.judge(s, criteria or PassCriteria(), asked, only=rules.KNEE)
    if not knee.tripped:
        return None
    seconds = s.duration_s or 1
    failed = (s.requests or 0) - (s.successes or 0)
    admission = s.app_admission or Admission()
    shed = min(failed, admission.shed or 0)
    cpu_s = s.cpu_seconds or {}
    busy = cpu_s.get("host_busy") or 0.0
    cores = s.cores or 0
    busy_pct = (s.cpu_mean_percent or {}).get("host_busy")
    shares: dict[str, float] = {g: round(cpu_s[g] / busy, 3) for g in ("app", "vegeta") if busy and g in cpu_s}  # type: ignore[operator]
    if busy and s.db_share_of_host is not None:
        shares["databases"] = s.db_share_of_host
    pool, peak = s.client_connections, admission.peak_in_flight
    per_ok = s.cpu_ms_per_success_net or s.cpu_ms_per_success or {}
    needed = {g: round(ms * asked / 1000, 2) for g, ms in per_ok.items()
              if ms is not None and (g in ("app", "vegeta") or is_node(g))}
    return AboveKnee(cores_needed=dict(needed), asked=asked, served=round(goodput, 1),
                     share=round(goodput / asked, 3), client_connections=pool,
                     client_pool_full=bool(pool and peak and peak >= pool), shed_per_s=round(shed / seconds, 1),
                     failed_otherwise_per_s=round((failed - shed) / seconds, 1), host_busy_percent=busy_pct,
                     cores=cores, saturated=any(n.rule == "host_saturated" for n in knee.notes),
                     shares_of_busy=dict(shares))
