"""What limited a run, named from measured utilisation against capacity (docs/metrics.md, "Limited by"): the host's
CPU (its busy time against all its cores), each node's mariadbd (a replica applying serially against one core: the
whole process, an upper bound on its SQL thread's, which is not told apart here), the app (its workers, one core
each), vegeta (its one core, as the load-generator note judges it) - each its steady mean over the attack - and
beside them what is not a CPU:
the app's admission shedding, pages read from disk per write (a pool that does not hold the working set), a replica
falling behind. The resource nearest its saturation share (LIMIT_SHARE; vegeta's VEGETA_SATURATED) limited the run
when it reached it; below it on every resource, nothing measured here saturated and the run says which came
closest. report/answers words the same utilisation for a sweep's steps. Pure: figures only."""

from __future__ import annotations

from ..core.config import FALLING_BEHIND, LIMIT_SHARE, VEGETA_SATURATED
from ..core.nodenames import nodes_in, replicas_in
from ..core.results import Limit, RunSummary, Utilisation

COLD_POOL_READS = 1.0  # pages read from disk per write at or above which the pool is named as read-limited


def utilisation(s: RunSummary, parallel_threads: int = 0, cores: int | None = None) -> dict[str, Utilisation]:
    """Each CPU resource's steady mean (% of one core), its capacity (% of one core), their ratio (`share`) and the
    share at which it saturates (`saturates_at`: vegeta's VEGETA_SATURATED of its one core, as the load-generator
    note judges it; every other LIMIT_SHARE). `cores`: the host's, where the summary lacks them (older runs)."""
    means = s.cpu_mean_percent or {}
    cores = cores or s.cores or 1
    workers = (s.app_admission.workers if s.app_admission else None) or cores
    capacity: dict[str, tuple[float, str]] = {"host CPU": (100.0 * cores, "host_busy")}
    for node in nodes_in(means):
        if node in replicas_in([node]):
            threads = min(parallel_threads, cores) if parallel_threads else 1
            label = (f"{node}'s mariadbd (serial apply: one core)" if not parallel_threads else
                     f"{node}'s mariadbd ({parallel_threads} applier threads on {threads} core(s))")
            capacity[label] = (100.0 * threads, node)
        else:
            capacity[f"{node}'s mariadbd"] = (100.0 * cores, node)
    capacity[f"the app ({workers} worker{'s' if workers > 1 else ''}, one core each)"] = (100.0 * workers, "app")
    capacity["vegeta (its one core)"] = (100.0, "vegeta")
    out = {}
    for label, (cap, group) in capacity.items():
        used = means.get(group)
        if used is not None:
            out[label] = Utilisation(group=group, percent=round(used, 1), capacity_percent=cap,
                                     share=round(used / cap, 3),
                                     saturates_at=VEGETA_SATURATED / 100 if group == "vegeta" else LIMIT_SHARE)
    return out


def limiting(s: RunSummary, parallel_threads: int = 0) -> Limit | None:
    """The run's limit: the most utilised CPU resource (`resource`, `share`; `saturated` at or above LIMIT_SHARE),
    every resource's utilisation, and what else held the run back (`also`: shedding, disk reads, falling
    behind). None for a run without CPU figures."""
    used = utilisation(s, parallel_threads)
    if not used:
        return None
    top = max(used, key=lambda label: used[label].share / used[label].saturates_at)
    also = []
    admission = s.app_admission
    if admission and admission.shed and s.requests:
        also.append(f"the app's admission shed {admission.shed:,} of {s.requests:,} requests")
    nodes = (s.replication.nodes if s.replication else None) or {}
    reads = {name: node.pool_disk_reads_per_write for name, node in nodes.items()
             if node is not None and node.pool_disk_reads_per_write is not None
             and node.pool_disk_reads_per_write >= COLD_POOL_READS}
    if reads:
        also.append("disk reads (" + ", ".join(f"{n} {v:g} pages read from disk per write"
                                                for n, v in reads.items()) + ")")
    behind = [name for name, lag in sorted((s.lag or {}).items())
              if lag is not None and lag.growth_s_per_s is not None and lag.growth_s_per_s >= FALLING_BEHIND]
    if behind:
        also.append(f"{', '.join(behind)} falling behind")
    return Limit(resource=top, share=used[top].share, saturated=used[top].share >= used[top].saturates_at,
                 limit_share=used[top].saturates_at, utilisation=used, also=also)


def text(limit: Limit) -> str:
    """One line: what limited the run, or that nothing measured here saturated and what came closest."""
    top, used = limit.resource, limit.utilisation
    shown = "; ".join(f"{label} {u.percent:.0f} % of {u.capacity_percent:.0f} %" for label, u in
                      sorted(used.items(), key=lambda item: -item[1].share))
    head = (f"{top} saturated ({limit.share:.0%} of its capacity)" if limit.saturated else
            f"no CPU resource saturated (the closest: {top} at {limit.share:.0%} of its capacity; "
            f"saturated: {limit.limit_share:.0%})")
    also = f"; also: {'; '.join(limit.also)}" if limit.also else ""
    return f"{head}{also}. Steady CPU against capacity: {shown}"
