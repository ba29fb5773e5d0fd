"""A unit's write-back per write (measure/writeback recorded the forced flush of its own dirty pages): per node the
pages flushed, the bytes written (/proc I/O, the doublewrite buffer included) and the CPU net of idle, each per
successful write, and the unit's figure with its write-back beside the figure in the run. Pure: figures only.

A forced flush writes each dirty page once, so its pages and bytes bound from above what the page cleaner writes
at steady state (where a page is changed many times before it is written); its CPU does not bound the steady
state's (flushing under way costs more per write). docs/decisions/write-back.md has the measurements."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..core import results
from ..core.config import NET_RESOLUTION_Z
from ..core.stats import net_resolution
from ..measure import counters
from ..measure.writeback import Flush

BOUND = "forced flush: an upper bound on the steady state's pages and bytes per write, not on its CPU"


def _delta(after: counters.NodeCounters, before: counters.NodeCounters, name: str) -> float:
    return after.status.get(name, 0.0) - before.status.get(name, 0.0)


def _per(value: float | None, writes: int, scale: float = 1.0, digits: int = 3) -> float | None:
    return None if value is None or not writes else round(scale * value / writes, digits)


@dataclass(frozen=True)
class InRun:
    """A node's figures in the unit itself, per write (an apply-capacity drain: per applied transaction), which the
    flush's are added to."""

    cpu_ms_per_write_net: results.Num | None
    kb_written_per_write: results.Num | None
    pages_flushed_per_write: results.Num | None


def derive(flush: Flush, idle_cpu_per_s: dict[str, float], writes: int, run_cpu_net: Mapping[str, results.Num | None],
           run_nodes: Mapping[str, results.NodeCounters | None],
           idle_per_second: dict[str, list[float]] | None = None) -> results.Writeback:
    """A run's `writeback`: the flush's span and whether every node reached rest, and per node the flush's counts,
    per successful write, and the run's per-write figure beside it (`run_*`) and with it (`*_with_writeback`): net
    CPU, KB written and pages flushed. `run_cpu_net` is the run's cpu_seconds_net (over its successful writes: in a
    mix, the reads' CPU too), `run_nodes` its replication nodes (their `_net` per-write figures); the flush's CPU is
    net of the same idle window's rate, with its resolution (z standard errors of that idle cost)."""
    nodes: dict[str, results.WritebackNode | None] = {}
    for name in flush.counters_before:
        run = run_nodes.get(name) or results.NodeCounters()
        nodes[name] = node_figures(flush, name, idle_cpu_per_s.get(name), writes,
                                   InRun(cpu_ms_per_write_net=_per(run_cpu_net.get(name), writes, 1000),
                                         kb_written_per_write=run.kb_written_per_write_net,
                                         pages_flushed_per_write=run.pages_flushed_per_write_net),
                                   (idle_per_second or {}).get(name))
    return results.Writeback(method=BOUND, seconds=round(flush.seconds, 2), writes=writes,
                             at_rest=not flush.rest.why, why=list(flush.rest.why or []),
                             net_resolution_z=NET_RESOLUTION_Z, nodes=nodes)


def node_figures(flush: Flush, name: str, idle_rate: float | None, writes: int, in_run: InRun,
                 idle_per_second: list[float] | None = None) -> results.WritebackNode | None:
    """One node's flush: its counts, per write (an apply-capacity drain: per applied transaction), its CPU net of
    `idle_rate` and the figures of `in_run` with the flush's added. None for a node a snapshot missed."""
    before, after = flush.counters_before.get(name), flush.counters_after.get(name)
    if before is None or after is None:
        return None
    seconds = max(1e-9, flush.seconds)
    gross = None if name not in flush.cpu_after or name not in flush.cpu_before else \
        max(0.0, flush.cpu_after[name] - flush.cpu_before[name])
    net = None if gross is None else max(0.0, gross - (idle_rate or 0.0) * seconds)
    resolution = net_resolution(idle_per_second or [], seconds, NET_RESOLUTION_Z)
    written = None if after.write_bytes is None or before.write_bytes is None else \
        max(0, after.write_bytes - before.write_bytes)
    flushed = _delta(after, before, "Innodb_buffer_pool_pages_flushed")
    cpu, kb, pages = _per(net, writes, 1000), _per(written, writes, 1 / 1024, 1), _per(flushed, writes, digits=2)
    return results.WritebackNode(
        dirty_pages=rest.dirty_pages if (rest := (flush.rest.nodes or {}).get(name)) is not None else None,
        pages_flushed=int(flushed), pages_written=int(_delta(after, before, "Innodb_pages_written")),
        doublewrite_pages=int(_delta(after, before, "Innodb_dblwr_pages_written")),
        data_written_kb=round(_delta(after, before, "Innodb_data_written") / 1024, 1),
        redo_written_kb=round(_delta(after, before, "Innodb_os_log_written") / 1024, 1),
        write_bytes=written, cpu_s=None if gross is None else round(gross, 3),
        cpu_s_net=None if net is None else round(net, 3),
        cpu_s_net_resolution=None if resolution is None else round(resolution, 4),
        pages_flushed_per_write=pages, kb_written_per_write=kb, cpu_ms_per_write_net=cpu,
        cpu_ms_per_write_net_resolution=_per(resolution, writes, 1000, 4),
        run_cpu_ms_per_write_net=in_run.cpu_ms_per_write_net, run_kb_written_per_write=in_run.kb_written_per_write,
        run_pages_flushed_per_write=in_run.pages_flushed_per_write,
        cpu_ms_per_write_net_with_writeback=_sum(in_run.cpu_ms_per_write_net, cpu, 3),
        kb_written_per_write_with_writeback=_sum(in_run.kb_written_per_write, kb, 1),
        pages_flushed_per_write_with_writeback=_sum(in_run.pages_flushed_per_write, pages, 2))


def _sum(run: float | None, flush: float | None, digits: int) -> float | None:
    """The run's figure with the flush's added, at the flush's digits; a flush that adds nothing leaves the run's
    figure as it is (rounding it to fewer digits would print it with its write-back below itself)."""
    if run is None or flush is None:
        return None
    return run if flush == 0 else round(run + flush, digits)

