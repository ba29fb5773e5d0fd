"""Server counters of every node, snapshotted before and after an attack (or an apply-capacity drain): what the
master committed and what each replica applied, in statements, transactions and rows, plus fsyncs, group
commits, bytes written to disk and the semi-sync acknowledgements.

Transactions are counted exactly from the GTID positions (domain 0: the application; the heartbeat writes in
its own domain and is left out). Rows changed come, on MariaDB, from userstat's per-table ROWS_CHANGED of every
table outside mysql and the heartbeat's schema (switched on by enable()): one figure read in one statement, so a
heartbeat committing while the snapshot is taken cannot shift it by a row, as it can the handler counters and the
GTID position, read apart (docs/metrics.md). Elsewhere (MySQL) they come from
the handler counters (Handler_update/_write/_delete) less the heartbeat's row per beat. Either way a row whose
values do not change is not counted; the SQL thread's row events are. Rows read come from the Handler_read_*
counters (a full scan shows as Handler_read_rnd_next). Bytes written come from the mariadbd process's
/proc/<pid>/io. A node that does not answer gets None and the snapshot
goes on: a lost node never loses the run its figures."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import psutil

from ..core import sql
from ..core.config import HEARTBEAT_DOMAIN_ID, META_SCHEMA, Node, Settings
from ..core.results import SemiSync

# MariaDB 10.11 has no Innodb_rows_* nor Innodb_os_log_fsyncs: rows changed come from userstat's per-table figures
# (the handler counters where userstat is off), InnoDB's fsyncs (data and redo files) from Innodb_data_fsyncs
STATUS = ("Com_update", "Com_insert", "Com_delete", "Binlog_commits", "Binlog_group_commits", "Handler_update",
          "Handler_write", "Handler_delete", "Handler_read_key", "Handler_read_next", "Handler_read_prev",
          "Handler_read_first", "Handler_read_last", "Handler_read_rnd", "Handler_read_rnd_next",
          "Innodb_data_fsyncs", "Innodb_log_writes", "Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_requests",
          "Innodb_buffer_pool_pages_flushed", "Innodb_data_read", "Innodb_pages_read", "Innodb_pages_written",
          "Innodb_data_written", "Innodb_dblwr_pages_written", "Innodb_os_log_written",
          "Rpl_semi_sync_master_yes_tx", "Rpl_semi_sync_master_no_tx", "Rpl_semi_sync_master_tx_wait_time",
          "Rpl_semi_sync_master_tx_waits", "Rpl_semi_sync_master_net_wait_time", "Rpl_semi_sync_master_net_waits",
          "Rpl_semi_sync_master_status", "Binlog_bytes_written")  # the last MariaDB's only (MySQL 8 has none)
APP_DOMAIN = 0
APP_ROWS = "app_rows_changed"  # userstat's ROWS_CHANGED summed over the application's tables (MariaDB)


def enable(settings: Settings) -> None:
    """Per-table row statistics on every node (MariaDB's userstat; cheap counters, on for every run)."""
    if settings.flavour != "mariadb":
        return
    for node in settings.nodes:
        with sql.admin(node, settings) as cur:
            cur.execute("SET GLOBAL userstat = ON")


@dataclass
class NodeCounters:
    status: dict[str, float] = field(default_factory=dict)
    seq: dict[int, int] = field(default_factory=dict)  # GTID domain -> applied/written seq_no
    write_bytes: int | None = None
    at: float = 0.0


def node_snapshot(node: Node, settings: Settings, pid: int | None) -> NodeCounters | None:
    try:
        with sql.admin(node, settings, timeout=3.0) as cur:
            spelled = {sql.status_name(settings.flavour, n): n for n in STATUS}  # MySQL: Rpl_semi_sync_source_*
            cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN (" + ",".join(["%s"] * len(spelled)) + ")",
                        tuple(spelled))
            status: dict[str, float] = {}
            spelled_name: str  # Variable_name
            for spelled_name, value in sql.fetch_all(cur):
                name = spelled.get(spelled_name, spelled_name)
                try:
                    status[name] = float(value)
                except (TypeError, ValueError):
                    status[name] = 1.0 if str(value).upper() == "ON" else 0.0
            cur.execute("SELECT @@gtid_binlog_pos" if node.role == "master" else "SELECT @@gtid_slave_pos")
            seq = sql.gtid_seq(str(sql.one_row(cur)[0] or ""))
            if settings.flavour == "mariadb":
                # userstat off (switched off since enable()): no figure, and describe() counts by the handlers
                cur.execute("SELECT @@userstat, (SELECT COALESCE(SUM(ROWS_CHANGED), 0) FROM "
                            "information_schema.TABLE_STATISTICS WHERE TABLE_SCHEMA NOT IN ('mysql', %s))",
                            (META_SCHEMA,))
                on, rows = sql.one_row(cur)
                if on:
                    status[APP_ROWS] = float(rows)
    except sql.MySQLError:
        return None
    return NodeCounters(status, seq, process_write_bytes(pid), time.monotonic())


def process_write_bytes(pid: int | None) -> int | None:
    if not pid:
        return None
    try:
        return psutil.Process(pid).io_counters().write_bytes
    except (psutil.Error, AttributeError):
        return None


def snapshot(settings: Settings, pids: dict[str, int | None]) -> dict[str, NodeCounters | None]:
    return {n.name: node_snapshot(n, settings, pids.get(n.name)) for n in settings.nodes}


def _d(after: NodeCounters, before: NodeCounters, name: str) -> float:
    return after.status.get(name, 0.0) - before.status.get(name, 0.0)


def _per(value: float, writes: int, digits: int) -> float | None:
    return round(value / writes, digits) if writes else None


# the counts a run's per-write figures are netted of (analysis/summary.counters_net_of_idle): each one's rate in the
# idle window, by the status counter it comes from (a byte counter in KB)
IDLE_COUNTS = {"fsyncs_per_s": "Innodb_data_fsyncs", "binlog_group_commits_per_s": "Binlog_group_commits",
               "pool_disk_reads_per_s": "Innodb_buffer_pool_reads", "pages_read_per_s": "Innodb_pages_read",
               "pages_written_per_s": "Innodb_pages_written", "pages_flushed_per_s": "Innodb_buffer_pool_pages_flushed",
               "kb_read_per_s": "Innodb_data_read"}
KB_COUNTS = ("Innodb_data_read",)


def idle_rates(first: dict[str, NodeCounters | None], second: dict[str, NodeCounters | None]) -> dict[str, Any]:
    """Each node's counts per second between two snapshots taken with only the measurement running (the idle
    window: the heartbeat's commits, the background's flushing and reads): InnoDB fsyncs, binlog group commits,
    pages read from disk, read, written and flushed, KB read and KB the process wrote to disk. What a run's counts
    net of idle subtract, as its CPU is net of the same window's. None for a node either snapshot missed."""
    out: dict[str, Any] = {}
    for name, b in first.items():
        a = second.get(name)
        if a is None or b is None or a.at <= b.at:
            out[name] = None
            continue
        seconds = a.at - b.at
        rates = {key: round(max(0.0, _d(a, b, status) / (1024 if status in KB_COUNTS else 1)) / seconds, 4)
                 for key, status in IDLE_COUNTS.items()}
        written = None if a.write_bytes is None or b.write_bytes is None else a.write_bytes - b.write_bytes
        out[name] = {**rates, "kb_written_per_s": None if written is None else
                     round(max(0, written) / 1024 / seconds, 4)}
    return out


def describe(before: dict[str, NodeCounters | None], after: dict[str, NodeCounters | None], seconds: float,
             heartbeats: int, writes: int) -> dict[str, Any]:
    """Per node: transactions (app domain), rows changed (heartbeat rows excluded), statements, fsyncs, bytes
    written, group commits; per write and per second; the master's semi-sync figures. Missing nodes: None."""
    seconds = max(seconds, 1e-9)
    out: dict[str, Any] = {"seconds": round(seconds, 3), "nodes": {}}
    for name, b in before.items():
        a = after.get(name)
        if a is None or b is None:
            out["nodes"][name] = None
            continue
        trx = a.seq.get(APP_DOMAIN, 0) - b.seq.get(APP_DOMAIN, 0)
        beats = a.seq.get(HEARTBEAT_DOMAIN_ID, 0) - b.seq.get(HEARTBEAT_DOMAIN_ID, 0) or heartbeats
        if APP_ROWS in a.status and APP_ROWS in b.status:
            rows = max(0.0, _d(a, b, APP_ROWS))
        else:  # no userstat: every handler change less the heartbeat's row per beat
            changed = _d(a, b, "Handler_update") + _d(a, b, "Handler_write") + _d(a, b, "Handler_delete")
            rows = max(0.0, changed - beats)
        rows_read = sum(_d(a, b, name) for name in STATUS if name.startswith("Handler_read"))
        fsyncs = _d(a, b, "Innodb_data_fsyncs")
        written = None if a.write_bytes is None or b.write_bytes is None else a.write_bytes - b.write_bytes
        commits, groups = _d(a, b, "Binlog_commits"), _d(a, b, "Binlog_group_commits")
        node: dict[str, Any] = {
            "transactions": trx, "rows_changed": int(rows),
            "rows_read": int(rows_read), "rows_read_per_row_changed": round(rows_read / rows, 1) if rows else None,
            "statements": int(_d(a, b, "Com_update") + _d(a, b, "Com_insert") + _d(a, b, "Com_delete")),
            "transactions_per_s": round(trx / seconds, 1), "rows_per_s": round(rows / seconds, 1),
            "innodb_fsyncs": int(fsyncs), "redo_log_writes": int(_d(a, b, "Innodb_log_writes")),
            "fsyncs_per_write": round(fsyncs / writes, 3) if writes else None,
            "write_bytes": written, "kb_written_per_write": round(written / 1024 / writes, 3)
            if written is not None and writes else None,
            "pool_disk_reads": int(_d(a, b, "Innodb_buffer_pool_reads")),
            "pool_disk_reads_per_write": _per(_d(a, b, "Innodb_buffer_pool_reads"), writes, 2),
            "pool_miss_ratio": round(_d(a, b, "Innodb_buffer_pool_reads") / requests, 5)
            if (requests := _d(a, b, "Innodb_buffer_pool_read_requests")) else None,
            "pages_flushed_per_write": _per(_d(a, b, "Innodb_buffer_pool_pages_flushed"), writes, 2),
            # every page InnoDB read from and wrote to its files (read-ahead and the doublewrite buffer included)
            "pages_read_per_write": _per(_d(a, b, "Innodb_pages_read"), writes, 2),
            "pages_written_per_write": _per(_d(a, b, "Innodb_pages_written"), writes, 2),
            "kb_read_per_write": _per(_d(a, b, "Innodb_data_read") / 1024, writes, 3),
            "binlog_commits": int(commits), "binlog_group_commits": int(groups),
            "commits_per_group": round(commits / groups, 2) if groups else None,
        }
        semi_on = a.status.get("Rpl_semi_sync_master_status") or _d(a, b, "Rpl_semi_sync_master_yes_tx")
        if name == "master" and semi_on:
            waits = _d(a, b, "Rpl_semi_sync_master_tx_waits")
            net_waits = _d(a, b, "Rpl_semi_sync_master_net_waits")
            node["semi_sync"] = SemiSync(
                acked=int(_d(a, b, "Rpl_semi_sync_master_yes_tx")),
                fell_back=int(_d(a, b, "Rpl_semi_sync_master_no_tx")),
                avg_tx_wait_us=round(_d(a, b, "Rpl_semi_sync_master_tx_wait_time") / waits) if waits else None,
                avg_net_wait_us=round(_d(a, b, "Rpl_semi_sync_master_net_wait_time") / net_waits)
                if net_waits else None,
                on_at_end=bool(a.status.get("Rpl_semi_sync_master_status")))
        out["nodes"][name] = node
    master = out["nodes"].get("master")
    for name, node in out["nodes"].items():
        if name == "master" or node is None or not master or not master["transactions"]:
            continue
        # a replica applies the master's very transactions (same GTIDs), hence the master's rows; its own count
        # (userstat's, or without it the handler counters, which miss what parallel workers did) is kept beside
        node["rows_changed_counted"] = node["rows_changed"]
        node["rows_changed"] = round(master["rows_changed"] * node["transactions"] / master["transactions"])
        node["rows_per_s"] = round(node["rows_changed"] / seconds, 1)
        rows_read = node["rows_read"]
        node["rows_read_per_row_changed"] = round(rows_read / node["rows_changed"], 1) if node["rows_changed"] \
            else None
    return out
