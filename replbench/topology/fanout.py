"""How many replicas the native topology has (`--replicas N`, 1 to 4): a replica added is a copy of replica1's
datadir taken with replica1 shut down cleanly at a known GTID position (`@@gtid_slave_pos` after STOP SLAVE), so it
starts replicating from the master exactly where its copy ends; a replica removed is stopped and its datadir kept
(each holds a full copy of the dataset: about 4.6 GB at 8M accounts) until a reset or rebuild deletes it. The count
is kept in the state folder (REPLICAS_FILE), so the next command without --replicas works with the same topology.

Memory: every node has its own buffer pool (REPLBENCH_BUFFER_POOL / --buffer-pool, 4G by default). Master plus N
replicas need (N + 1) × the pool plus about 0.5 GiB per mariadbd; with four replicas on 24 GiB the default 4G
pools leave too little for the app and vegeta, so reconcile warns and the fan-out study runs with a smaller pool.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil

from ..core import sql
from ..core.config import REPLICAS_FILE, RESUME_MAX_BEHIND, Node, Settings, recorded_replicas
from ..core.progress import Progress
from . import dataset, links, nodes
from .knobs import parse_size

NODE_OVERHEAD = 512 * 2**20  # bytes a mariadbd holds beside its buffer pool (threads, caches, log buffer)
MEMORY_HEADROOM = 0.25  # share of the host's memory left to the app, vegeta and the page cache


def memory_warning(settings: Settings, pool_size: str = "") -> str | None:
    """One line when the nodes' pools (pool_size, the run's --buffer-pool, else REPLBENCH_BUFFER_POOL) would take
    more than the host can spare, else None."""
    pool_size = pool_size or settings.buffer_pool
    try:
        pool = parse_size(pool_size)
    except ValueError:
        return None
    need = len(settings.nodes) * (pool + NODE_OVERHEAD)
    total = psutil.virtual_memory().total
    if need <= total * (1 - MEMORY_HEADROOM):
        return None
    fits = int(total * (1 - MEMORY_HEADROOM) / len(settings.nodes) - NODE_OVERHEAD) // 2**20
    return (f"{len(settings.nodes)} nodes × ({pool_size} pool + 0.5 GiB) = {need / 2**30:.1f} GiB of "
            f"this host's {total / 2**30:.1f} GiB; a pool of at most {fits:,}M each leaves a quarter for the app "
            "and vegeta (--buffer-pool)")


def reconcile(settings: Settings, progress: Progress | None = None, pool_size: str = "") -> list[str]:
    """Give the native topology settings.replica_count replicas; returns one line per change (nothing for a
    topology file's servers). A replica beyond the count is stopped and its datadir kept, so a study that
    alternates counts brings it back by catching up from the master (its binlog is kept a day); a replica with no
    datadir, whose position the master no longer holds, or more than RESUME_MAX_BEHIND transactions behind, is
    cloned from replica1. pool_size: the buffer pool the coming run resizes the nodes to ("": REPLBENCH_BUFFER_POOL's),
    for the memory warning."""
    if settings.external:
        return []
    say = progress.say if progress else (lambda text, **_: print(f"replbench: {text}", file=sys.stderr))
    before = recorded_replicas(settings.state)
    changes = []
    for extra in reversed(nodes.stray_replicas(settings)):
        if nodes.stop_node(extra):
            changes.append(f"stopped {extra.name} (its datadir is kept: {extra.home.name}, "
                           f"{_size_gb(extra.datadir):.1f} GB; a rebuild or reset deletes it)")
    back = [r for r in settings.replicas[before:] if (r.datadir / "mysql").is_dir() and not nodes.node_pid(r)]
    for replica in back:
        nodes.start_node(replica, settings)
    for name in links.repair(settings) if back else []:  # one stopped while on a link whose proxy is gone since
        changes.append(f"{name} replicated through a proxy that is gone: back on the direct connection")
    stale = []
    for replica in back:
        behind = nodes.transactions_behind(replica, settings)
        try:
            if behind > RESUME_MAX_BEHIND:
                raise nodes.TopologyError(f"{behind:,} transactions behind the master, more than the "
                                          f"{RESUME_MAX_BEHIND:,} it would catch up on sooner than a copy")
            nodes.ensure_replicating(replica, settings)
            changes.append(f"started {replica.name} again ({behind:,} transactions behind: it catches up from the "
                           "master)")
        except nodes.TopologyError as exc:
            say(f"{replica.name} cannot resume ({exc}): cloning it again")
            nodes.stop_node(replica)
            stale.append(replica)
    missing = [r for r in settings.replicas if not (r.datadir / "mysql").is_dir()] + stale
    if missing:
        source = settings.replicas[0]
        if source in missing:
            raise nodes.TopologyError(f"{source.name} has no datadir to clone from: run ./run.sh dataset --rebuild")
        say(f"cloning {source.name} to {', '.join(r.name for r in missing)} (its datadir copied while it is "
            "stopped; it replicates again right after)")
        clone(settings, source, missing)
        changes += [f"added {r.name} (a copy of {source.name}, port {r.port})" for r in missing]
    if before != settings.replica_count or not (settings.state / REPLICAS_FILE).exists():
        nodes.record_replicas(settings)
    if changes and (warning := memory_warning(settings, pool_size)):
        changes.append("memory: " + warning)
    return changes


def _size_gb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e9


def clone(settings: Settings, source: Node, targets: list[Node]) -> None:
    """Copy `source`'s datadir to each target at one GTID position and start them replicating from the master."""
    nodes.start_node(source, settings)
    with sql.admin(source, settings) as cur:
        cur.execute(sql.stop_replica_sql(settings.flavour))
        cur.execute("SELECT @@gtid_slave_pos")
        gtid = str(sql.one_row(cur)[0] or "")
    try:
        nodes.stop_node(source)

        def copy(target: Node) -> None:
            shutil.rmtree(target.home, ignore_errors=True)
            target.home.mkdir(parents=True)
            subprocess.run(["cp", "-a", str(source.datadir), str(target.datadir)], check=True)
            dataset.strip_replication_state(target.datadir)

        with ThreadPoolExecutor(len(targets)) as pool:
            list(pool.map(copy, targets))
    finally:
        nodes.start_node(source, settings)
        nodes.ensure_replicating(source, settings)
    for target in targets:
        nodes.start_node(target, settings)
        nodes.configure_replica(target, settings, gtid)
