"""Database access for the harness: admin connections to a node (mysql-connector-python, the driver the project
card names; the app keeps its async drivers), a light reader for samplers that read one value a hundred times a
second (PyMySQL: about 40 µs of client CPU per read against mysql-connector's 110), SQL files from mysql/, and the
few statements whose spelling differs between MariaDB and MySQL 8 (the flavour)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import mysql.connector
import pymysql
from mysql.connector.abstracts import MySQLConnectionAbstract, MySQLCursorAbstract

from .config import MYSQL_DIR, Node, Settings

ADMIN_USER = "replbench_admin"
MySQLError = mysql.connector.Error  # every error a node can answer with (or a lost connection); args[0] = errno
ReaderError = pymysql.err.Error  # the light reader's errors
Connection = MySQLConnectionAbstract
Cursor = MySQLCursorAbstract
Row = tuple[Any, ...]  # a row as the harness's cursors give it: a tuple (none of them is a dictionary cursor)


def connect(node: Node, settings: Settings, *, user: str = ADMIN_USER, password: str | None = None,
            database: str | None = None, autocommit: bool = True, timeout: float = 10.0,
            tcp: bool = False, port: int | None = None, local_infile: bool = False) -> Connection:
    """Open a connection to a node: over its socket as the admin user, or over TCP (tcp=True; port= reaches it
    through another port, e.g. a toxiproxy link). A topology file's server: always TCP to its host, as
    REPLBENCH_DB_USER unless another user is named."""
    if node.external:
        if user == ADMIN_USER:
            user, password = settings.db_user, settings.db_password if password is None else password
        where: dict[str, Any] = {"host": node.host, "port": port or node.port}
    else:
        where = {"host": "127.0.0.1", "port": port or node.port} if tcp else {"unix_socket": str(node.socket)}
    if password is None:
        password = settings.admin_password
    # buffered: every result is read at once (a statement whose rows are not all fetched never blocks the next);
    # the timeout is the connect's only: long statements (LOAD DATA, ALTER, MASTER_GTID_WAIT) run to their end
    conn = mysql.connector.connect(user=user, password=password, database=database, autocommit=autocommit,
                                   connection_timeout=max(1, round(timeout)), charset="utf8mb4",
                                   collation="utf8mb4_general_ci", buffered=True, use_pure=True,
                                   allow_local_infile=local_infile, **where)
    assert isinstance(conn, MySQLConnectionAbstract)  # no pool_* argument: a plain connection, never a pooled one
    return conn


def reader(node: Node, settings: Settings, timeout: float = 2.0) -> pymysql.connections.Connection:
    """A light admin connection for a sampler's frequent one-value reads (autocommit, no buffering options), with a
    read timeout so that a node that stops answering cannot hold its sampler for long."""
    if node.external:
        where: dict[str, Any] = {"host": node.host, "port": node.port, "user": settings.db_user,
                                 "password": settings.db_password}
    else:
        where = {"unix_socket": str(node.socket), "user": ADMIN_USER, "password": settings.admin_password}
    return pymysql.connect(connect_timeout=timeout, read_timeout=timeout, autocommit=True, **where)


def close_quietly(conn: Any) -> None:
    """Close a connection that may already be dead (a sampler's, after a node went away)."""
    if conn is not None:
        try:
            conn.close()
        except Exception:  # noqa: BLE001 — a dead connection
            pass


@contextmanager
def admin(node: Node, settings: Settings, **kwargs: Any) -> Iterator[Cursor]:
    """A cursor on the node as the admin user, closed afterwards."""
    conn = connect(node, settings, **kwargs)
    try:
        with conn.cursor() as cur:
            yield cur
    finally:
        conn.close()


def query_one(node: Node, settings: Settings, sql: str, args: Any = None) -> Any:
    with admin(node, settings) as cur:
        cur.execute(sql, args)
        row = fetch_one(cur)
    return None if row is None else row[0]


def _row(row: Row | dict[str, Any]) -> Row:
    if isinstance(row, dict):  # only a cursor opened with dictionary=True gives these: the harness opens none
        raise TypeError("a dictionary row where a tuple was expected")
    return row


def fetch_one(cur: Cursor) -> Row | None:
    """The result's next row (None when there is none)."""
    row = cur.fetchone()
    return None if row is None else _row(row)


def one_row(cur: Cursor) -> Row:
    """The only row of a statement that always answers exactly one: a SELECT of expressions (@@variables,
    functions) or of aggregates without GROUP BY."""
    row = fetch_one(cur)
    assert row is not None, "a SELECT of expressions answers one row"
    return row


def fetch_all(cur: Cursor) -> list[Row]:
    """Every remaining row of the result."""
    return [_row(row) for row in cur.fetchall()]


def dict_rows(cur: Cursor) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description or ()]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def split_statements(text: str) -> list[str]:
    """Split a SQL file into statements (no procedures here, so ';' at end of line is enough)."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def render_sql_file(name: str, values: dict[str, str] | None = None) -> list[str]:
    """Read mysql/<name>, replace :placeholders by quoted literals, and split it into statements."""
    text = (MYSQL_DIR / name).read_text()
    values = values or {}

    def literal(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise KeyError(f"{name}: no value for placeholder :{key}")
        return "'" + escape_string(values[key]) + "'"

    return [re.sub(r":([a-z_]+)\b", literal, s) for s in split_statements(text)]


def escape_string(value: str) -> str:
    """A value made safe inside single quotes (backslash, quote, NUL and line breaks escaped, as the server reads)."""
    table = {"\\": "\\\\", "'": "\\'", "\0": "\\0", "\n": "\\n", "\r": "\\r", "\x1a": "\\Z", '"': '\\"'}
    return "".join(table.get(ch, ch) for ch in value)


def run_statements(cur: Cursor, statements: list[str]) -> None:
    for statement in statements:
        cur.execute(statement)


# ---- flavour: the statements MariaDB and MySQL 8 spell differently ------------------------------------------

def change_master_sql(flavour: str, master_port: int, user: str, password: str) -> tuple[str, tuple[Any, ...]]:
    if flavour == "mariadb":
        return ("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%s, MASTER_USER=%s, MASTER_PASSWORD=%s, "
                "MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1", (master_port, user, password))
    return ("CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=%s, SOURCE_USER=%s, "
            "SOURCE_PASSWORD=%s, SOURCE_AUTO_POSITION=1, GET_SOURCE_PUBLIC_KEY=1, SOURCE_CONNECT_RETRY=1",
            (master_port, user, password))


# MariaDB variable -> its MySQL 8 spelling (None: MySQL has no such variable; a knob that needs it is refused)
MYSQL_VARIABLES: dict[str, str | None] = {
    "binlog_annotate_row_events": "binlog_rows_query_log_events",
    "log_bin_compress": "binlog_transaction_compression",
    "log_bin_compress_min_len": None,
    "slave_parallel_threads": "replica_parallel_workers",
    "slave_parallel_mode": "replica_preserve_commit_order",
    "rpl_semi_sync_master_enabled": "rpl_semi_sync_source_enabled",
    "rpl_semi_sync_master_wait_point": "rpl_semi_sync_source_wait_point",
    "rpl_semi_sync_master_timeout": "rpl_semi_sync_source_timeout",
    "rpl_semi_sync_slave_enabled": "rpl_semi_sync_replica_enabled",
}
MYSQL_STATUS = {"Rpl_semi_sync_master_": "Rpl_semi_sync_source_"}


def variable(flavour: str, name: str) -> str | None:
    """A server variable's name in this flavour (MariaDB's names are the harness's own)."""
    return name if flavour == "mariadb" else MYSQL_VARIABLES.get(name, name)


def status_name(flavour: str, name: str) -> str:
    if flavour == "mariadb":
        return name
    for old, new in MYSQL_STATUS.items():
        if name.startswith(old):
            return new + name[len(old):]
    return name


def set_global_sql(flavour: str, name: str) -> str | None:
    spelled = variable(flavour, name)
    return None if spelled is None else f"SET GLOBAL {spelled} = %s"


def change_port_sql(flavour: str) -> str:
    """Point a stopped replica at another port of 127.0.0.1, keeping every other replication setting."""
    if flavour == "mariadb":
        return "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%s"
    return "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=%s"


def start_replica_sql(flavour: str) -> str:
    return "START SLAVE" if flavour == "mariadb" else "START REPLICA"


def stop_replica_sql(flavour: str) -> str:
    return "STOP SLAVE" if flavour == "mariadb" else "STOP REPLICA"


def replica_status_sql(flavour: str) -> str:
    return "SHOW SLAVE STATUS" if flavour == "mariadb" else "SHOW REPLICA STATUS"


def master_gtid_sql(flavour: str) -> str:
    return "SELECT @@gtid_binlog_pos" if flavour == "mariadb" else "SELECT @@gtid_executed"


def gtid_seq(position: str) -> dict[int, int]:
    """'0-1-100,99-1-7' -> {0: 100, 99: 7} (the highest seq_no per domain; MariaDB's spelling: MySQL's uuid sets
    give {})."""
    out: dict[int, int] = {}
    for part in (position or "").split(","):
        pieces = part.strip().split("-")
        if len(pieces) == 3 and all(p.isdigit() for p in pieces):
            domain, seq = int(pieces[0]), int(pieces[2])
            out[domain] = max(out.get(domain, 0), seq)
    return out


def set_replica_gtid_sql(flavour: str) -> str:
    return "SET GLOBAL gtid_slave_pos = %s" if flavour == "mariadb" else "SET GLOBAL gtid_purged = %s"


def wait_gtid_sql(flavour: str) -> str:
    """Block on a replica until it has applied the given GTID set, or the timeout (seconds) passes."""
    if flavour == "mariadb":
        return "SELECT MASTER_GTID_WAIT(%s, %s)"  # 0 = reached, -1 = timeout
    return "SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, %s)"


def replica_threads(cur: Cursor, flavour: str) -> dict[str, Any]:
    """IO/SQL thread state, lag and last error of a replica, with flavour-neutral keys ({} if not a replica)."""
    cur.execute(replica_status_sql(flavour))
    rows = dict_rows(cur)
    if not rows:
        return {}
    row = rows[0]

    def pick(*names: str) -> Any:
        return next((row[n] for n in names if n in row), None)

    return {
        "io": pick("Slave_IO_Running", "Replica_IO_Running"),
        "sql": pick("Slave_SQL_Running", "Replica_SQL_Running"),
        "lag": pick("Seconds_Behind_Master", "Seconds_Behind_Source"),
        "error": pick("Last_Error", "Last_SQL_Error") or pick("Last_IO_Error") or "",
        "relay_log_space": pick("Relay_Log_Space"),
    }


def checksum(node: Node, settings: Settings, table: str) -> int | None:
    with admin(node, settings) as cur:
        cur.execute(f"CHECKSUM TABLE {table}")
        row = fetch_one(cur)
    return None if row is None else row[1]


ROWS_CHECKSUM_BATCH = 5000  # ids per statement of rows_checksum


def has_primary_key(node: Node, settings: Settings, table: str) -> bool:
    schema, name = table.split(".")
    return bool(query_one(node, settings, "SELECT COUNT(*) FROM information_schema.STATISTICS WHERE "
                                          "TABLE_SCHEMA = %s AND TABLE_NAME = %s AND INDEX_NAME = 'PRIMARY'",
                          (schema, name)))


def rows_checksum(node: Node, settings: Settings, table: str, ids: list[int]) -> int:
    """A checksum of the given rows (by primary key id), every column and its NULL-ness included, as
    pt-table-checksum computes one per chunk: BIT_XOR of each row's CRC32, with the row count in the high bits
    (a missing row changes it)."""
    schema, name = table.split(".")
    wanted = sorted(set(ids))
    count, crc = 0, 0
    with admin(node, settings) as cur:
        cur.execute("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s "
                    "ORDER BY ORDINAL_POSITION", (schema, name))
        columns = [str(row[0]) for row in fetch_all(cur)]
        row_crc = "CRC32(CONCAT_WS('#', " + ", ".join(f"`{c}`, ISNULL(`{c}`)" for c in columns) + "))"
        for start in range(0, len(wanted), ROWS_CHECKSUM_BATCH):
            batch = wanted[start:start + ROWS_CHECKSUM_BATCH]
            cur.execute(f"SELECT COUNT(*), COALESCE(BIT_XOR({row_crc}), 0) FROM {table} WHERE id IN "
                        f"({','.join(['%s'] * len(batch))})", batch)
            got, xor = one_row(cur)
            count, crc = count + int(got), crc ^ int(xor)
    return (count << 32) | crc

