"""A unit's own write-back, measured in its tail: once the attack is over and the replicas have applied it (or a
replica has drained an apply-capacity backlog), the nodes' dirty pages are forced out as the settle does
(topology/innodbrest: innodb_max_dirty_pages_pct 0, the I/O capacity raised) between two snapshots of every counter,
so the pages, the bytes written (/proc I/O, the doublewrite buffer included) and the CPU of that flush are the
unit's, not the next unit's settle's. A 10-30 s run never flushes its own pages
(docs/decisions/settle-innodb-rest.md); docs/decisions/write-back.md has why a forced flush bounds the steady
state's pages and bytes from above, but not its CPU. analysis/writeback derives the per-write figures."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ..core.config import SETTLE_INNODB_WAIT, Node, Settings
from ..core.results import InnodbRest
from ..topology import innodbrest, nodes
from . import counters, samplers


@dataclass(frozen=True)
class Flush:
    """Each node's counters and cumulative CPU seconds just before and just after the forced flush, the seconds
    between, and what the flush found and how long it took (innodbrest.rest's record: per node the dirty pages it
    found and the seconds to rest; `why`: what was not at rest)."""

    counters_before: dict[str, counters.NodeCounters | None]
    counters_after: dict[str, counters.NodeCounters | None]
    cpu_before: dict[str, float]
    cpu_after: dict[str, float]
    seconds: float
    rest: InnodbRest


def flush(settings: Settings, watch: samplers.Samplers) -> Flush:
    """A run's: every node's dirty pages forced out, the run's samplers' snapshots on each side (the same CPU totals
    and counters its figures come from)."""
    before = samplers.snapshot(settings, watch)
    rest = innodbrest.rest(settings, SETTLE_INNODB_WAIT, purge=False)  # the pages: purge is the next settle's
    after = samplers.snapshot(settings, watch)
    return Flush(before.counters, after.counters, before.cpu, after.cpu, after.at - before.at, rest)


def flush_nodes(settings: Settings, chosen: tuple[Node, ...], cpu_of: Callable[[Node], float | None]) -> Flush:
    """These nodes' dirty pages forced out (a replica's after it drained a backlog), `cpu_of` reading a node's
    cumulative CPU seconds."""
    pids = {n.name: nodes.node_pid(n) for n in chosen}

    def look() -> tuple[dict[str, counters.NodeCounters | None], dict[str, float], float]:
        cpu = {n.name: c for n in chosen if (c := cpu_of(n)) is not None}
        return {n.name: counters.node_snapshot(n, settings, pids[n.name]) for n in chosen}, cpu, time.monotonic()

    before, cpu_before, began = look()
    rest = innodbrest.rest(settings, SETTLE_INNODB_WAIT, only=chosen, purge=False)
    after, cpu_after, ended = look()
    return Flush(before, after, cpu_before, cpu_after, ended - began, rest)
