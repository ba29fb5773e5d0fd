"""Bringing the native topology to the state a command needs: MariaDB installed, the dataset built (first use,
with progress), as many replicas as asked (fanout), every node started and replicating, the app serving. Below
run/sweep/study and the commands, above topology, dataset and appserver."""

from __future__ import annotations

import sys

from ..core.config import Settings
from ..core.progress import Progress
from . import appserver, dataset, fanout, links, nodes


def ensure_topology(settings: Settings, *, with_app: bool = True, pool_size: str = "") -> None:
    """Everything a run needs: MariaDB installed, dataset built (first use), nodes replicating, app serving.
    A topology file's servers are only checked (answering, replicating, holding the dataset): never built on
    implicitly, started or re-pointed. pool_size: the buffer pool the coming run sets (--buffer-pool), so that the
    memory warning of a change of replicas counts that one."""
    if settings.external:
        nodes.start_all(settings)  # checks: every server answers, both replicas replicate
        dataset.check_matches(settings)
        if with_app:
            appserver.start(settings)
        return
    if dataset.dataset_info(settings) is None:
        print(f"replbench: no dataset in {settings.state}: building {settings.accounts:,} accounts "
              "(first use)", file=sys.stderr)
        progress = Progress("dataset")
        dataset.build(settings, progress)
        print("dataset phases:\n" + progress.summary(), file=sys.stderr)
    dataset.check_matches(settings)
    changes = fanout.reconcile(settings, pool_size=pool_size)
    for change in changes:
        print(f"replbench: {change}", file=sys.stderr)
    if changes and with_app:
        appserver.stop(settings)  # its pools name the replicas it had
    started = nodes.start_all(settings, replicate=False)
    moved = links.repair(settings)  # never replicate from a dead proxy
    if moved:
        print(f"replbench: {', '.join(moved)} replicated through a proxy that is gone: back on the direct "
              "connection", file=sys.stderr)
    for replica in settings.replicas:
        nodes.ensure_replicating(replica, settings)
    if started:
        print(f"replbench: started {', '.join(started)}", file=sys.stderr)
    if dataset.ensure_grants(settings):
        print("replbench: granted the app the privileges users.sql now lists", file=sys.stderr)
    if with_app:
        appserver.start(settings)
