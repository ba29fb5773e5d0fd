"""Large transactions, the classic row-based replication incident: one UPDATE of an id range (10^3 to 10^6 rows) on
the master, one transaction each, spaced so that each has drained before the next (every replica has applied it).

Per transaction: the binlog bytes it wrote (the master's binlog growth) and whether its binlog cache spilled to
disk (Binlog_cache_disk_use); the master's execution and commit time (the statement's wall time, autocommit); each
replica's apply, timed from the master's commit until MASTER_GTID_WAIT returns on every replica at once (a replica
starts only once the master has committed, and applies the transaction as one, whatever its parallel threads);
the lag's peak and how long it stayed above twice its floor (GTID positions every 10 ms, measure/poslag.py); and,
with semi-sync on, MariaDB's own wait counter for the commit (labelled as MariaDB's).

Every row really changes: each transaction writes a fresh tag into `interests` (a TEXT column no index covers), so
the table keeps its size and shape and a repeat costs what the first did; the rows are checked afterwards. Nothing
has to be reset between transactions.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path

from ..core import harnesslog, sql
from ..core.config import Settings
from ..core.progress import Progress
from ..core.records import STATUS_INTERRUPTED, UNIT_FAILED, UNIT_OK
from ..core.results import BigTxRecord, BigTxReplica, BigTxTransaction, KnobSetting, merged, write_record
from ..core.scenario import Scenario
from ..measure import binlog
from ..measure.poslag import PositionLag
from ..topology import knobs, nodes
from . import prepare

DEFAULT_ROWS = (1_000, 10_000, 100_000, 1_000_000)
TABLES = {"idx": "bench_idx", "noidx": "bench_noidx"}  # bench_nopk: each row event a full scan on every replica
SCENARIO_OF = {"idx": "write-bulk", "noidx": "write-noindex"}  # whose warm-up and settings preparation it shares
DRAIN_TIMEOUT = 3600.0  # seconds a replica may take to apply one transaction
STATUS = ("Binlog_cache_disk_use", "Binlog_cache_use", "Rpl_semi_sync_master_tx_wait_time",
          "Rpl_semi_sync_master_tx_waits")


def _status(settings: Settings) -> dict[str, int]:
    with sql.admin(settings.master, settings) as cur:
        cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN (" + ", ".join(["%s"] * len(STATUS)) + ")", STATUS)
        return {str(name): int(str(value)) for name, value in cur.fetchall()}  # two text columns: str already


def _lag(sampler: PositionLag, replica: str, start: float, end: float, floor_ms: float) -> BigTxReplica:
    """The lag's peak within [start, end] and how long it stayed above twice the floor."""
    series = sampler.series(replica, start, end)
    above = sum(b[0] - a[0] for a, b in zip(series, series[1:]) if a[1] > 2 * floor_ms)
    return BigTxReplica(peak_ms=max((v for _, v in series), default=None), above_floor_s=round(above, 3),
                        samples=len(series))


def one(settings: Settings, sampler: PositionLag, schema: str, rows: int, first_id: int, tag: str,
        progress: Progress) -> BigTxTransaction:
    """One transaction of `rows` rows, measured; returns its record."""
    last_id = first_id + rows - 1
    before_log, before = binlog.snapshot(settings), _status(settings)
    zero = sampler.zero
    progress.say(f"{rows:,} rows: UPDATE {schema}.accounts … WHERE id BETWEEN {first_id} AND {last_id}", final=True)
    start = time.monotonic()
    with sql.admin(settings.master, settings) as cur:
        cur.execute("SET SESSION max_statement_time = 0")  # the incident's statement runs to its end
        cur.execute(f"UPDATE {schema}.accounts SET interests = %s, updated_at = NOW() WHERE id BETWEEN %s AND %s",
                    (tag, first_id, last_id))
        changed = cur.rowcount
    committed = time.monotonic()
    gtid = nodes.master_gtid(settings)
    after_log, after = binlog.snapshot(settings), _status(settings)
    progress.say(f"{rows:,} rows: committed on the master in {committed - start:.2f} s; timing the replicas")
    called = time.monotonic()
    applied = nodes.wait_caught_up(settings, DRAIN_TIMEOUT, gtid)  # seconds from the call, every replica at once
    end = time.monotonic()
    time.sleep(0.1)  # one more position read after the last replica applied it
    floor = sampler.floor_ms(start - zero, end - zero) or 10.0
    with sql.admin(settings.master, settings) as cur:
        cur.execute(f"SELECT COUNT(*) FROM {schema}.accounts WHERE id BETWEEN %s AND %s AND interests = %s",
                    (first_id, last_id, tag))
        row = cur.fetchone()
        assert isinstance(row, tuple) and isinstance(row[0], int)  # a plain cursor's row; COUNT(*): a whole number
        holding = row[0]
    d = {k: after.get(k, 0) - before.get(k, 0) for k in STATUS}
    written = binlog.written_bytes(before_log, after_log)
    replicas: dict[str, BigTxReplica] = {}
    for replica in settings.replicas:
        took = applied.get(replica.name)
        replicas[replica.name] = merged(
            BigTxReplica(applied_after_commit_s=None if took is None else round(took + called - committed, 3)),
            _lag(sampler, replica.name, start - zero, end - zero, floor))
    record = BigTxTransaction(
        rows=rows, first_id=first_id, rows_changed=changed, rows_holding_the_new_value=holding, binlog_bytes=written,
        binlog_cache_spilled=d["Binlog_cache_disk_use"] > 0, binlog_cache_disk_use=d["Binlog_cache_disk_use"],
        master_seconds=round(committed - start, 3), gtid=gtid, lag_floor_ms=floor, replicas=replicas,
        bytes_per_row=round(written / rows, 1) if rows else None)
    if not d["Rpl_semi_sync_master_tx_waits"]:  # no semi-sync wait: the key stays out of bigtx.json
        return record
    return merged(record, BigTxTransaction(mariadb_semi_sync_wait_us=round(
        d["Rpl_semi_sync_master_tx_wait_time"] / d["Rpl_semi_sync_master_tx_waits"])))


def measure(settings: Settings, table: str, rows: tuple[int, ...], setting: knobs.Knobs, scenario: Scenario,
            folder: Path, repeat: int = 1) -> BigTxRecord:
    """Each size in `rows`, `repeat` times (sizes interleaved), on `table` ('idx' or 'noidx'); writes bigtx.json
    (after each transaction, and once more at the end, whatever happened) and returns the record it wrote last."""
    progress = Progress(f"big-transaction {table}")
    log = folder / "harness.log"
    harnesslog.use(log)
    schema = TABLES[table]
    data = BigTxRecord(table=schema, rows_asked=list(rows), repeat=repeat,
                       knobs=KnobSetting.model_validate(setting.as_dict()),
                       knobs_changed=KnobSetting.model_validate(setting.changed()), status="running", transactions=[],
                       nonce=secrets.token_hex(4))
    sampler: PositionLag | None = None
    try:
        set_up = prepare.settings_and_data(settings, scenario, setting, (), progress).set_up
        data = merged(data, BigTxRecord.model_validate(set_up.model_dump(by_alias=True, exclude_unset=True)))
        with sql.admin(settings.master, settings) as cur:
            cur.execute(f"SELECT MIN(id), MAX(id) FROM {schema}.accounts")
            row = cur.fetchone()
        assert isinstance(row, tuple)  # a plain cursor's row: MIN and MAX always answer one
        low, high = row
        if not isinstance(low, int) or not isinstance(high, int):  # NULL: the table is empty
            raise ValueError(f"{schema} holds no rows")
        too_big = [n for n in rows if n > high - low + 1]
        if too_big:
            raise ValueError(f"{schema} holds {high - low + 1:,} rows; cannot update {too_big[0]:,} in one range")
        sampler = PositionLag(settings, folder / "positions.csv", time.monotonic())
        sampler.start()
        time.sleep(0.5)  # the master's position seen before the first transaction
        for r in range(repeat):
            for i, n in enumerate(rows):
                tag = f"bigtx-{data.nonce}-{r}-{i}"  # fresh: every row of the range really changes
                record = merged(one(settings, sampler, schema, n, low, tag, progress), BigTxTransaction(repeat=r + 1))
                data = data.model_copy(update={"transactions": [*(data.transactions or []), record]})
                write_record(folder / "bigtx.json", data)
        data = data.model_copy(update={"status": UNIT_OK if all(t.rows_holding_the_new_value == t.rows and all(
            v.applied_after_commit_s is not None for v in (t.replicas or {}).values())
            for t in data.transactions or []) else UNIT_FAILED})
    except KeyboardInterrupt:
        data = data.model_copy(update={"status": STATUS_INTERRUPTED})
    except (ValueError, sql.MySQLError, nodes.TopologyError) as exc:
        data = data.model_copy(update={"status": UNIT_FAILED, "error": f"{type(exc).__name__}: {exc}"})
        harnesslog.write(f"big-transaction failed: {exc}", exc)
    finally:
        if sampler is not None:
            sampler.stop()
        harnesslog.done(log)
        data = data.model_copy(update={"folder": folder.name})
        write_record(folder / "bigtx.json", data)
    return data


def render(b: BigTxRecord) -> str:
    """The table a DBA reads: per transaction, rows × binlog, master, each replica, lag and the cache spill."""
    transactions = b.transactions or []
    changed = b.knobs_changed.given() if b.knobs_changed is not None else {}
    setting = ", ".join(f"{k}={v}" for k, v in changed.items()) or "reference settings"
    lines = [f"Big transactions — {b.table} ({setting}); status {b.status}"]
    if b.error:
        lines.append(f"Error: {b.error}")
    names = sorted({name for t in transactions for name in t.replicas or {}})
    lines.append("| rows | binlog MB | B/row | cache spilled | master s | " + " | ".join(
        f"{n} applied s after commit | {n} lag peak s | {n} lag above floor s" for n in names) + " |")
    lines.append("|---" * (5 + 3 * len(names)) + "|")
    for t in transactions:
        cells = [f"{t.rows:,}", f"{t.binlog_bytes / 1e6:.2f}", f"{t.bytes_per_row:g}",  # type: ignore[operator]
                 "yes" if t.binlog_cache_spilled else "no", f"{t.master_seconds:.2f}"]
        for n in names:
            r = (t.replicas or {})[n]
            cells += ["–" if r.applied_after_commit_s is None else f"{r.applied_after_commit_s:.2f}",
                      "–" if r.peak_ms is None else f"{r.peak_ms / 1000:.2f}", f"{r.above_floor_s:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    if transactions:
        ok = sum(t.rows_holding_the_new_value == t.rows for t in transactions)
        lines.append(f"Rows: {ok} of {len(transactions)} transactions left every row of their range holding the new "
                     "value (checked on the master afterwards)")
    # MariaDB's wait counter is there only for a transaction that waited for a semi-sync acknowledgement
    waited = [t for t in transactions if t.mariadb_semi_sync_wait_us is not None]  # written only where it waited
    if waited:
        lines.append("Semi-sync (MariaDB's own counter, not what a commit pays): " + ", ".join(
            f"{t.rows:,} rows {t.mariadb_semi_sync_wait_us:,} µs" for t in waited))
    return "\n".join(lines)
