"""Binlog cost: bytes the master writes to its binary log, and bytes each replica's IO thread receives into its
relay log, between two snapshots; the master's statement counters for cross-checks.

Offsets are made cumulative over the master's binlog files (SHOW BINARY LOGS sizes), so a rotation between the
snapshots is counted correctly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core import sql
from ..core.config import Settings


@dataclass
class BinlogSnapshot:
    files: list[tuple[str, int]]  # (name, size) in order
    com_update: int
    com_insert: int
    replica_read: dict[str, tuple[str, int]] = field(default_factory=dict)  # replica -> (master file, pos)
    dump_threads: int | None = None  # the master's binlog dump threads (one per connected replica)

    def offset(self, file_name: str, pos: int, files: list[tuple[str, int]] | None = None) -> int:
        """Cumulative byte offset of (file, pos) over the master's binlog files."""
        total = 0
        for name, size in files or self.files:
            if name == file_name:
                return total + pos
            total += size
        return total + pos

    @property
    def total_bytes(self) -> int:
        return sum(size for _, size in self.files)


def snapshot(settings: Settings) -> BinlogSnapshot:
    with sql.admin(settings.master, settings) as cur:
        cur.execute("SHOW BINARY LOGS")
        files = [(row[0], int(row[1])) for row in sql.fetch_all(cur)]
        cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_update', 'Com_insert')")
        counters = {name: int(value) for name, value in sql.fetch_all(cur)}
        cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'")
        dumps = int(sql.one_row(cur)[0])
    snap = BinlogSnapshot(files, counters.get("Com_update", 0), counters.get("Com_insert", 0), dump_threads=dumps)
    for replica in settings.replicas:
        try:
            with sql.admin(replica, settings) as cur:
                cur.execute(sql.replica_status_sql(settings.flavour))
                rows = sql.dict_rows(cur)
        except sql.MySQLError:  # a replica that is down (the health sampler records it): its bytes received are
            continue  # missing, the master's binlog figures are not
        if rows:
            row = rows[0]
            name = row.get("Master_Log_File") or row.get("Source_Log_File") or ""
            pos = row.get("Read_Master_Log_Pos") or row.get("Read_Source_Log_Pos") or 0
            snap.replica_read[replica.name] = (name, int(pos))
    return snap


def written_bytes(before: BinlogSnapshot, after: BinlogSnapshot) -> int:
    """Bytes appended to the master's binlog between the snapshots (files purged meanwhile are not expected)."""
    sizes_before = dict(before.files)
    return sum(size - sizes_before.get(name, 0) for name, size in after.files)


def received_bytes(before: BinlogSnapshot, after: BinlogSnapshot) -> dict[str, int]:
    """Per replica: bytes of the master's binlog its IO thread read between the snapshots."""
    out: dict[str, int] = {}
    for name, (file_after, pos_after) in after.replica_read.items():
        if name not in before.replica_read:
            continue
        file_before, pos_before = before.replica_read[name]
        out[name] = after.offset(file_after, pos_after) - after.offset(file_before, pos_before)
    return out


def per_write(bytes_written: int, heartbeat_bytes: float, writes: int) -> float | None:
    if writes <= 0:
        return None
    return round(max(0.0, bytes_written - heartbeat_bytes) / writes, 1)


def describe(before: BinlogSnapshot, after: BinlogSnapshot, heartbeats: int, bytes_per_beat: float,
             successful_writes: int, rows_changed: int = 0) -> dict[str, Any]:
    """Master binlog bytes during the attack, per successful write and per row changed (heartbeats excluded)."""
    written = written_bytes(before, after)
    heartbeat_bytes = heartbeats * bytes_per_beat
    received = received_bytes(before, after)
    return {
        "master_binlog_bytes": written,
        "heartbeat_writes": heartbeats,
        "heartbeat_bytes_per_write": round(bytes_per_beat, 1),
        "heartbeat_bytes_estimated": round(heartbeat_bytes),
        "successful_writes": successful_writes,
        "bytes_per_write": per_write(written, heartbeat_bytes, successful_writes),
        "rows_changed": rows_changed,
        "bytes_per_row": per_write(written, heartbeat_bytes, rows_changed),
        "master_com_update": after.com_update - before.com_update,
        "master_com_insert": after.com_insert - before.com_insert,
        "replica_received_bytes": received,
        # what the master's dump threads sent, all replicas together (each receives its own copy)
        "sent_bytes_per_write": per_write(sum(received.values()), heartbeat_bytes * len(received),
                                          successful_writes) if received else None,
        "dump_threads": after.dump_threads,
        "files_opened": new_files(before, after),
    }


def new_files(before: BinlogSnapshot, after: BinlogSnapshot) -> list[str]:
    """Binlog files the master opened between the snapshots: a rotation (max_binlog_size) happened in the run."""
    known = {name for name, _ in before.files}
    return [name for name, _ in after.files if name not in known]
