"""A native replica kept at one GTID position and put back there before each replay of a captured binlog
(docs/apply-capacity.md, "Replays repeated"): its datadir copied while the server is stopped cleanly, and copied
back before each repeat, so that serial and parallel apply can be timed on the same files, interleaved.

The buffer pool is part of what is put back: a restarted replica starts with an empty pool, and a replay into a cold
pool would time disk reads the live replica never did. So before the copy the server is told to list every page of
its pool at shutdown (innodb_buffer_pool_dump_pct = 100; innodb_buffer_pool_dump_at_shutdown is on by default), the
list travels with the copy, and each restore waits until the server has read those pages back in
(innodb_buffer_pool_load_at_startup, on by default) before the replay starts.

A replica restarts with its replication threads stopped (skip_slave_start) and its relay logs discarded
(relay_log_recovery): the replay copies its files in afterwards, and whoever restores puts replication back."""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..core import sql
from ..core.config import Node, ReplbenchError, Settings
from . import nodes

POOL_LOAD_TIMEOUT_S = 900.0  # an 8M dataset's 4G pool reads back in well under a minute; a slow disk gets room


class SnapshotError(ReplbenchError):
    """A snapshot cannot be taken or put back: one line saying why."""


@dataclass(frozen=True)
class Snapshot:
    """A replica's datadir as it stood at `gtid` (its gtid_slave_pos), with the list of its buffer pool's pages."""

    node: str
    folder: Path
    gtid: str


def folder_of(settings: Settings, node: Node) -> Path:
    return settings.state / "snapshots" / node.name


def take(settings: Settings, node: Node) -> Snapshot:
    """The replica stopped cleanly (its pool's page list written at shutdown), its datadir copied, the replica started
    again with its pool read back in; its replication threads stay stopped (skip_slave_start)."""
    if node.external or node.role != "replica":
        raise SnapshotError(f"{node.name}: only a replica of the native topology can be snapshotted")
    with sql.admin(node, settings) as cur:
        cur.execute("SELECT @@gtid_slave_pos")
        gtid = str(sql.one_row(cur)[0] or "")
        cur.execute("SET GLOBAL innodb_buffer_pool_dump_pct = 100")
    folder = folder_of(settings, node)
    nodes.stop_node(node)
    try:
        shutil.rmtree(folder, ignore_errors=True)
        folder.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-a", str(node.datadir), str(folder)], check=True)
    finally:
        nodes.start_node(node, settings)
        wait_pool_loaded(node, settings)
    return Snapshot(node.name, folder, gtid)


def restore(settings: Settings, snap: Snapshot) -> None:
    """The replica stopped, its datadir replaced by the snapshot's, started with the snapshot's pool read back in;
    SnapshotError unless it then stands at the snapshot's GTID position."""
    node = settings.node(snap.node)
    if not snap.folder.is_dir():
        raise SnapshotError(f"no snapshot of {snap.node} at {snap.folder}")
    nodes.stop_node(node)
    shutil.rmtree(node.datadir, ignore_errors=True)
    subprocess.run(["cp", "-a", str(snap.folder), str(node.datadir)], check=True)
    nodes.start_node(node, settings)
    wait_pool_loaded(node, settings)
    with sql.admin(node, settings) as cur:
        cur.execute("SELECT @@gtid_slave_pos")
        gtid = str(sql.one_row(cur)[0] or "")
    if gtid != snap.gtid:
        raise SnapshotError(f"{snap.node} restored at {gtid or 'nothing'}, not at the snapshot's {snap.gtid}")


def restart(settings: Settings, node: Node, extra: dict[str, str] | None = None) -> None:
    """The replica restarted with its buffer pool read back in (its page list written at shutdown, as `take` does),
    with `extra` settings for this start only (a setting that is not dynamic: a re-logging replica's
    log_slave_updates, experiments/replay.relog); its replication threads stay stopped (skip_slave_start) and its
    relay logs are discarded (relay_log_recovery): whoever restarts it puts replication back."""
    with sql.admin(node, settings) as cur:
        cur.execute("SET GLOBAL innodb_buffer_pool_dump_pct = 100")
    nodes.stop_node(node)
    nodes.start_node(node, settings, extra)
    wait_pool_loaded(node, settings)


def drop(snap: Snapshot) -> None:
    shutil.rmtree(snap.folder, ignore_errors=True)


def wait_pool_loaded(node: Node, settings: Settings, timeout: float = POOL_LOAD_TIMEOUT_S) -> str:
    """Innodb_buffer_pool_load_status once the server has read its page list back in ('… load completed at …',
    or 'not started' when it had none to read); SnapshotError after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        with sql.admin(node, settings) as cur:
            cur.execute("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_load_status'")
            status = str(sql.one_row(cur)[1] or "")
        if "completed" in status or "not started" in status.lower():
            return status
        if "aborted" in status.lower() or time.monotonic() > deadline:
            raise SnapshotError(f"{node.name}'s buffer pool did not load back ({status or 'no status'}); see "
                                f"{node.log_file}")
        time.sleep(1.0)
