"""The accounts dataset: generate, load, index, clone to the replicas, verify, and reset to pristine.

Fast path (no 8M rows through the binlog): datagen writes a TSV; LOAD DATA fills bench_idx.accounts on the
master with sql_log_bin=0; then bench_idx's four indexes are built in one ALTER while bench_noidx is loaded in
parallel (two cores, two jobs); the master is shut down cleanly and its datadir copied to both replicas and to a
pristine snapshot; the replicas start GTID replication from the master's position at the copy.
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..core import sql
from ..core.config import META_SCHEMA, NOPK_ACCOUNTS, SCHEMAS, Node, ReplbenchError, Settings
from ..core.progress import Progress
from ..core.results import BufferPool
from . import nodes
from .install import ensure_datagen

COLUMNS = "id, email, first_name, last_name, birth_date, gender, city, interests, created_at, updated_at"
PROGRESS_POLL = 1.0  # seconds between progress polls of long statements
EXTERNAL_CHUNK_ROWS = 50_000  # rows per LOAD DATA LOCAL statement on a topology file's master
EXTERNAL_CATCH_UP_TIMEOUT = 3600.0  # seconds the replicas get to apply the whole load


class DatasetError(ReplbenchError):
    """The dataset is missing, of another size than asked, or could not be built; the message says what to do."""


def marker(settings: Settings) -> Path:
    return settings.dataset_dir / "built.json"


def dataset_info(settings: Settings) -> dict[str, Any] | None:
    """What dataset the topology holds: the marker in the state folder (native), or (a topology file's servers)
    the row the load wrote into replbench_meta.dataset on the master, so any machine pointed at them knows."""
    if settings.external:
        try:
            with sql.admin(settings.master, settings) as cur:
                cur.execute(f"SELECT accounts, seed, built_at FROM {META_SCHEMA}.dataset WHERE id = 1")
                row = sql.fetch_one(cur)
        except sql.MySQLError:
            return None
        if row is None:
            return None
        accounts = int(row[0])
        return {"accounts": accounts, "seed": int(row[1]), "built_at": str(row[2]), "external": True,
                "nopk_rows": min(NOPK_ACCOUNTS, accounts)}
    try:
        return json.loads(marker(settings).read_text())
    except (OSError, ValueError):
        return None


def check_matches(settings: Settings) -> dict[str, Any]:
    """The built dataset's description, or a clear error if none is built or it differs from what is asked."""
    info = dataset_info(settings)
    if info is None and settings.external:
        raise DatasetError(f"no replbench dataset on the servers of {settings.topology_name}: run ./run.sh dataset "
                           "--topology FILE (it creates bench_idx, bench_noidx, bench_nopk and replbench_meta there "
                           "and loads them through SQL on the master)")
    if info is None:
        raise DatasetError(f"no dataset is built in {settings.state}: run ./run.sh dataset")
    if info["accounts"] != settings.accounts or info["seed"] != settings.seed:
        raise DatasetError(
            f"the dataset in {settings.state} has {info['accounts']:,} accounts (seed {info['seed']}), but "
            f"{settings.accounts:,} (seed {settings.seed}) were asked: run ./run.sh dataset --rebuild "
            f"--accounts {settings.accounts}, or ask for --accounts {info['accounts']}")
    return info


# ---- build ------------------------------------------------------------------------------------------------------

def build(settings: Settings, progress: Progress) -> dict[str, Any]:
    """Build the dataset from scratch on every node; returns the marker written (with phase timings)."""
    if settings.external:
        return build_external(settings, progress)
    with progress.phase("stop nodes, wipe state"):
        nodes.stop_all(settings)
        marker(settings).unlink(missing_ok=True)
        nodes.remove_strays(settings)
        for folder in [n.home for n in settings.nodes] + [settings.pristine_dir]:
            shutil.rmtree(folder, ignore_errors=True)
        settings.dataset_dir.mkdir(parents=True, exist_ok=True)
    master = settings.master
    with progress.phase("init master datadir, start, schema and users"):
        nodes.init_datadir(master, settings)
        nodes.start_node(master, settings)
        statements = sql.render_sql_file("schema.sql") + sql.render_sql_file("users.sql", {
            "admin_password": settings.admin_password, "repl_password": settings.repl_password,
            "app_password": settings.app_password})
        nodes.bootstrap_sql(master, statements)
    tsv = settings.dataset_dir / f"accounts-{settings.accounts}-{settings.seed}.tsv"
    with progress.phase(f"generate {settings.accounts:,} accounts (TSV)"):
        generate_tsv(settings, tsv, progress)
    try:
        with progress.phase("load bench_idx (LOAD DATA, binlog off)"):
            load_tsv(settings, tsv, "bench_idx", progress)
        with progress.phase("build bench_idx indexes ‖ load bench_noidx"):
            with ThreadPoolExecutor(2) as pool:
                alter = pool.submit(build_indexes, settings, progress)
                load = pool.submit(load_tsv, settings, tsv, "bench_noidx", None)
                alter.result()
                load.result()
    finally:
        tsv.unlink(missing_ok=True)
    nopk_rows = min(NOPK_ACCOUNTS, settings.accounts)
    with progress.phase(f"fill bench_nopk ({nopk_rows:,} rows, no primary key)"):
        fill_nopk(settings, nopk_rows)
    with sql.admin(master, settings) as cur:
        cur.execute(f"REPLACE INTO {META_SCHEMA}.dataset VALUES (1, %s, %s, NOW())",
                    (settings.accounts, settings.seed))
        cur.execute(f"REPLACE INTO {META_SCHEMA}.heartbeat VALUES (1, NOW(6))")
    gtid = nodes.master_gtid(settings)
    if not gtid:
        raise DatasetError("the master's GTID position is empty after the load; refusing to clone")
    with progress.phase("clone master to replicas and pristine snapshot"):
        nodes.stop_node(master)
        clone_datadir(master, settings)
    with progress.phase("start nodes, GTID replication"):
        start_from_clone(settings, gtid)
    nodes.record_replicas(settings)
    info = {"accounts": settings.accounts, "seed": settings.seed, "gtid": gtid, "nopk_rows": nopk_rows,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "phases": {name: round(took, 1) for name, took in progress.phases}}
    with progress.phase("verify CHECKSUM TABLE on all nodes"):
        info["checksums"] = verify_checksums(settings)
    marker(settings).write_text(json.dumps(info, indent=2) + "\n")
    return info


def build_external(settings: Settings, progress: Progress) -> dict[str, Any]:
    """A topology file's servers: everything through SQL on the master, binlogged, so the replicas receive it by
    their own replication (nothing is stopped, copied or reconfigured): the schemas, the accounts by LOAD DATA
    LOCAL INFILE in chunks, bench_idx's indexes, bench_nopk; then the replicas' catch-up and CHECKSUM TABLE."""
    master = settings.master
    with progress.phase("check the servers (SQL over TCP) and their replication"):
        nodes.start_all(settings)  # checks only: every node answers, both replicas replicate
        marker(settings).unlink(missing_ok=True)
        settings.dataset_dir.mkdir(parents=True, exist_ok=True)
    with progress.phase("schemas on the master (dropped and created again, binlogged)"):
        with sql.admin(master, settings) as cur:
            for schema in SCHEMAS:
                cur.execute(f"DROP TABLE IF EXISTS {schema}.accounts")
            sql.run_statements(cur, sql.render_sql_file("schema.sql"))
    tsv = settings.dataset_dir / f"accounts-{settings.accounts}-{settings.seed}.tsv"
    with progress.phase(f"generate {settings.accounts:,} accounts (TSV)"):
        generate_tsv(settings, tsv, progress)
    try:
        for schema in ("bench_idx", "bench_noidx"):
            with progress.phase(f"load {schema} (LOAD DATA LOCAL in chunks of {EXTERNAL_CHUNK_ROWS:,}, binlogged)"):
                load_tsv_in_chunks(settings, tsv, schema, progress)
    finally:
        tsv.unlink(missing_ok=True)
    with progress.phase("build bench_idx indexes (one ALTER, replicated as a statement)"):
        with sql.admin(master, settings) as cur:
            cur.execute(sql.render_sql_file("indexes.sql")[0])
    nopk_rows = min(NOPK_ACCOUNTS, settings.accounts)
    with progress.phase(f"fill bench_nopk ({nopk_rows:,} rows, no primary key)"):
        with sql.admin(master, settings) as cur:
            cur.execute(f"INSERT INTO bench_nopk.accounts ({COLUMNS}) SELECT {COLUMNS} FROM bench_noidx.accounts "
                        "WHERE id <= %s", (nopk_rows,))
            cur.execute(f"REPLACE INTO {META_SCHEMA}.dataset VALUES (1, %s, %s, NOW())",
                        (settings.accounts, settings.seed))
            cur.execute(f"REPLACE INTO {META_SCHEMA}.heartbeat VALUES (1, NOW(6))")
    gtid = nodes.master_gtid(settings)
    with progress.phase("replicas apply everything (MASTER_GTID_WAIT)"):
        waited = _wait_with_progress(settings, gtid, progress)
        late = [name for name, took in waited.items() if took is None]
        if late:
            raise DatasetError(f"{', '.join(late)} did not apply the load within {EXTERNAL_CATCH_UP_TIMEOUT:.0f} s; "
                               "check their replication (./run.sh status)")
    info = {"accounts": settings.accounts, "seed": settings.seed, "gtid": gtid, "nopk_rows": nopk_rows,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "external": True,
            "phases": {name: round(took, 1) for name, took in progress.phases}}
    with progress.phase("verify CHECKSUM TABLE on all nodes"):
        info["checksums"] = verify_checksums(settings)
    marker(settings).write_text(json.dumps(info, indent=2) + "\n")
    return info


def _wait_with_progress(settings: Settings, gtid: str, progress: Progress) -> dict[str, float | None]:
    """The replicas' MASTER_GTID_WAIT for the load, showing what each replica's SQL thread is doing meanwhile
    (replaying the index ALTER alone takes as long as it took on the master)."""
    result: dict[str, dict[str, float | None]] = {}
    waiter = threading.Thread(target=lambda: result.update(
        waited=nodes.wait_caught_up(settings, EXTERNAL_CATCH_UP_TIMEOUT, gtid)), daemon=True)
    waiter.start()
    while waiter.is_alive():
        waiter.join(PROGRESS_POLL * 5)
        if waiter.is_alive():
            states = []
            for replica in settings.replicas:
                try:
                    with sql.admin(replica, settings) as cur:
                        cur.execute(sql.replica_status_sql(settings.flavour))
                        row = (sql.dict_rows(cur) or [{}])[0]
                    doing = row.get('Slave_SQL_Running_State') or row.get('Replica_SQL_Running_State')
                    states.append(f"{replica.name}: {doing or 'applying'}")
                except sql.MySQLError:
                    states.append(f"{replica.name}: not answering")
            progress.say("waiting for the replicas — " + "; ".join(states), tick=True)
    return result.get("waited", {})


def load_tsv_in_chunks(settings: Settings, tsv: Path, schema: str, progress: Progress) -> None:
    """LOAD DATA LOCAL INFILE on the master, EXTERNAL_CHUNK_ROWS rows per statement (each one transaction in the
    binlog, so a replica applies the load in pieces, not as one giant event)."""
    statement = (f"LOAD DATA LOCAL INFILE %s INTO TABLE {schema}.accounts FIELDS TERMINATED BY '\\t' "
                 f"LINES TERMINATED BY '\\n' ({COLUMNS})")
    chunk = settings.dataset_dir / f"chunk-{schema}.tsv"
    conn = sql.connect(settings.master, settings, local_infile=True)
    loaded = 0
    try:
        with conn.cursor() as cur, open(tsv, "rb") as source:
            while True:
                lines = list(itertools.islice(source, EXTERNAL_CHUNK_ROWS))
                if not lines:
                    break
                chunk.write_bytes(b"".join(lines))
                cur.execute(statement, (str(chunk),))
                loaded += len(lines)
                progress.say(f"loading {schema}: {loaded:,} / {settings.accounts:,} rows", tick=True)
    finally:
        conn.close()
        chunk.unlink(missing_ok=True)


def generate_tsv(settings: Settings, tsv: Path, progress: Progress) -> None:
    datagen = ensure_datagen(settings)
    proc = subprocess.Popen([str(datagen), "-rows", str(settings.accounts), "-seed", str(settings.seed),
                             "-out", str(tsv), "-progress"], stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    errors = []
    for line in proc.stderr:
        if line.startswith("rows "):
            progress.say(f"generated {int(line.split()[1]):,} / {settings.accounts:,} rows", tick=True)
        else:
            errors.append(line)
    if proc.wait() != 0:
        raise DatasetError(f"datagen failed: {''.join(errors).strip()}")


def load_tsv(settings: Settings, tsv: Path, schema: str, progress: Progress | None) -> None:
    """LOAD DATA the TSV into schema.accounts on the master, with the binlog off for this session."""
    statement = (f"LOAD DATA INFILE %s INTO TABLE {schema}.accounts FIELDS TERMINATED BY '\\t' "
                 f"LINES TERMINATED BY '\\n' ({COLUMNS})")
    _run_long(settings, ["SET SESSION sql_log_bin = 0", "SET SESSION unique_checks = 0"],
              statement, (str(tsv),), progress, f"loading {schema}")


def fill_nopk(settings: Settings, rows: int) -> None:
    """bench_nopk.accounts gets the first rows of bench_noidx (binlog off, like the loads)."""
    _run_long(settings, ["SET SESSION sql_log_bin = 0"],
              f"INSERT INTO bench_nopk.accounts ({COLUMNS}) SELECT {COLUMNS} FROM bench_noidx.accounts "
              "WHERE id <= %s", (rows,), None, "filling bench_nopk")


def build_indexes(settings: Settings, progress: Progress | None) -> None:
    statements = sql.render_sql_file("indexes.sql")
    _run_long(settings, ["SET SESSION sql_log_bin = 0"], statements[0], None, progress, "indexing bench_idx")


def _run_long(settings: Settings, setup: list[str], statement: str, args: Any, progress: Progress | None,
              label: str) -> None:
    """Run one long statement on the master, showing MariaDB's own PROGRESS column while it runs."""
    conn = sql.connect(settings.master, settings)
    try:
        with conn.cursor() as cur:
            for s in setup:
                cur.execute(s)
            cur.execute("SELECT CONNECTION_ID()")
            conn_id = sql.one_row(cur)[0]
            done = threading.Event()
            if progress is not None:
                threading.Thread(target=_watch_progress, args=(settings, conn_id, done, progress, label),
                                 daemon=True).start()
            try:
                cur.execute(statement, args)
            finally:
                done.set()
    finally:
        conn.close()


def _watch_progress(settings: Settings, conn_id: int, done: threading.Event, progress: Progress,
                    label: str) -> None:
    try:
        conn = sql.connect(settings.master, settings)
    except sql.MySQLError:
        return
    try:
        with conn.cursor() as cur:
            while not done.wait(PROGRESS_POLL):
                cur.execute("SELECT STAGE, MAX_STAGE, PROGRESS, STATE, TIME FROM information_schema.PROCESSLIST "
                            "WHERE ID = %s", (conn_id,))
                row = cur.fetchone()
                if row:
                    progress.say(f"{label}: {_describe_progress(*row)}", tick=True)
    except sql.MySQLError:
        pass
    finally:
        conn.close()


def _describe_progress(stage: int | None, max_stage: int | None, percent: Any, state: str | None,
                       seconds: int | None) -> str:
    """MariaDB's PROGRESS column when it reports one; an in-place index build reports none, so show its state."""
    if max_stage and percent:  # an in-place ALTER keeps it at 0
        stage_text = f"stage {stage}/{max_stage} " if max_stage > 1 else ""
        return f"{stage_text}{float(percent):5.1f} %"
    return f"{state or 'running'} for {seconds or 0} s (MariaDB reports no percentage for this step)"


def clone_datadir(master: Node, settings: Settings) -> None:
    """Copy the stopped master's datadir to the pristine snapshot and to each replica (binlogs stripped)."""
    targets = [settings.pristine_dir / "data"] + [r.datadir for r in settings.replicas]

    def copy(target: Path) -> None:
        shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-a", str(master.datadir), str(target)], check=True)

    with ThreadPoolExecutor(len(targets)) as pool:
        list(pool.map(copy, targets))
    for replica in settings.replicas:
        strip_binlogs(replica.datadir)


def strip_binlogs(datadir: Path) -> None:
    """A replica starts with no binlog of its own: the master's history stays on the master."""
    for path in datadir.glob("binlog.*"):
        path.unlink()


def strip_replication_state(datadir: Path) -> None:
    """A copied datadir forgets where it replicated from: no binlog, relay log or connection info of its own
    (configure_replica gives it its GTID position and its master)."""
    strip_binlogs(datadir)
    for stale in ("master.info", "relay-log.info"):
        (datadir / stale).unlink(missing_ok=True)
    for relay in datadir.glob("relay-bin.*"):
        relay.unlink()


def start_from_clone(settings: Settings, gtid: str) -> None:
    for node in settings.nodes:
        nodes.start_node(node, settings)
    for replica in settings.replicas:
        nodes.configure_replica(replica, settings, gtid)


def verify_checksums(settings: Settings) -> dict[str, dict[str, int | None]]:
    """CHECKSUM TABLE of both schemas on every node (one thread per node); raises if any differ."""
    def node_sums(node: Node) -> dict[str, int | None]:
        return {schema: sql.checksum(node, settings, f"{schema}.accounts") for schema in SCHEMAS}

    with ThreadPoolExecutor(len(settings.nodes)) as pool:
        sums = dict(zip([n.name for n in settings.nodes], pool.map(node_sums, settings.nodes)))
    for schema in SCHEMAS:
        values = {name: s[schema] for name, s in sums.items()}
        if len(set(values.values())) != 1:
            raise DatasetError(f"CHECKSUM TABLE {schema}.accounts differs between nodes: {values}")
    return sums


# ---- reset ------------------------------------------------------------------------------------------------------

def reset(settings: Settings, progress: Progress) -> dict[str, Any]:
    """Restore every node to the pristine post-load state and restart replication from its GTID. A topology
    file's servers are not ours to restore: there only replication is started again (the caller restores the
    replication settings); the data stays as the runs left it."""
    info = check_matches(settings)
    if settings.external:
        with progress.phase("check the servers and start replication where it is stopped"):
            nodes.start_all(settings)
        return info
    snapshot = settings.pristine_dir / "data"
    if not snapshot.is_dir():
        raise DatasetError(f"no pristine snapshot at {snapshot}: run ./run.sh dataset --rebuild")
    with progress.phase("stop nodes"):
        nodes.stop_all(settings)
        nodes.remove_strays(settings)  # replicas kept beyond the count would not match the restored master
    with progress.phase("restore datadirs from the pristine snapshot"):
        def restore(node: Node) -> None:
            shutil.rmtree(node.datadir, ignore_errors=True)
            subprocess.run(["cp", "-a", str(snapshot), str(node.datadir)], check=True)
            if node.role == "replica":
                strip_replication_state(node.datadir)

        with ThreadPoolExecutor(len(settings.nodes)) as pool:
            list(pool.map(restore, settings.nodes))
    with progress.phase("start nodes, GTID replication"):
        start_from_clone(settings, info["gtid"])
    return info


def ensure_grants(settings: Settings) -> bool:
    """A dataset built before a grant was added to users.sql gets it now, on the master (the replicas receive it
    by replication); True if anything was granted. A topology file's servers keep the grants their DBA gave."""
    if settings.external:
        return False
    with sql.admin(settings.master, settings) as cur:
        cur.execute("SHOW GRANTS FOR 'app_ro'@'%'")
        grants = " ".join(row[0] for row in sql.fetch_all(cur))
        if "replbench_meta" in grants and "bench_nopk" in grants:
            return False
        sql.run_statements(cur, sql.render_sql_file("users.sql", {
            "admin_password": settings.admin_password, "repl_password": settings.repl_password,
            "app_password": settings.app_password}))
    return True


def row_counts(settings: Settings) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for node in settings.nodes:
        with sql.admin(node, settings) as cur:
            counts[node.name] = {}
            for schema in SCHEMAS:
                cur.execute(f"SELECT COUNT(*) FROM {schema}.accounts")
                counts[node.name][schema] = int(sql.one_row(cur)[0])
    return counts


# ---- warm-up ----------------------------------------------------------------------------------------------------

def pool_fit(settings: Settings, schema: str) -> dict[str, BufferPool]:
    """Per node: its buffer pool, the schema's table with its indexes, the bytes of data the pool holds now, and
    whether the table fits (a pool smaller than the data is never warm under uniformly random ids)."""
    out: dict[str, BufferPool] = {}
    for node in settings.nodes:
        with sql.admin(node, settings) as cur:
            cur.execute("SELECT @@innodb_buffer_pool_size, @@innodb_flush_method, "
                        "(SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES "
                        " WHERE TABLE_SCHEMA = %s AND TABLE_NAME = 'accounts')", (schema,))
            pool, flush, table = sql.one_row(cur)
            cur.execute("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_bytes_data'")
            row = sql.fetch_one(cur)
        out[node.name] = BufferPool(pool_bytes=int(pool), table_bytes=int(table or 0), flush_method=flush,
                                    data_bytes=int(row[1]) if row else None, fits=int(pool) >= int(table or 0))
    return out


def warm_up(settings: Settings, schema: str, progress: Progress | None = None) -> dict[str, float]:
    """Read the schema's table and each of its indexes once on every node, so a run measures a warm buffer pool
    and not the first disk reads after a start. Skipped for nodes already warmed since they started (an online
    resize forgets a node's marks: knobs.resize_pools), and for nodes whose pool is smaller than the table:
    uniformly random ids never warm such a pool, which is what a run with it measures."""
    try:
        warmed = json.loads(settings.warm_marker.read_text())
    except (OSError, ValueError):
        warmed = {}
    fit = pool_fit(settings, schema)
    identity = {n.name: f"{nodes.node_identity(n, settings)}:pool={fit[n.name].pool_bytes}"
                for n in settings.nodes}
    todo = [n for n in settings.nodes if fit[n.name].fits and warmed.get(f"{n.name}:{schema}") != identity[n.name]]
    if not todo:
        return {}
    if progress:
        progress.say(f"warming the buffer pools ({schema} on {', '.join(n.name for n in todo)})")

    def warm(node: Node) -> float:
        begin = time.monotonic()
        with sql.admin(node, settings) as cur:
            cur.execute(f"SHOW INDEX FROM {schema}.accounts")
            names = {row[2] for row in sql.fetch_all(cur)}
            indexes = sorted(names - {"PRIMARY"})
            force = " FORCE INDEX (PRIMARY)" if "PRIMARY" in names else ""  # bench_nopk has none
            cur.execute(f"SELECT SUM(LENGTH(email)) FROM {schema}.accounts{force}")
            for index in indexes:
                cur.execute(f"SELECT COUNT(*) FROM {schema}.accounts FORCE INDEX ({index})")
        return round(time.monotonic() - begin, 1)

    with ThreadPoolExecutor(len(todo)) as pool:
        taken = dict(zip([n.name for n in todo], pool.map(warm, todo)))
    for node in todo:
        warmed[f"{node.name}:{schema}"] = identity[node.name]
    settings.warm_marker.write_text(json.dumps(warmed, indent=2) + "\n")
    return taken
