"""Apply capacity of a captured binlog (`apply-capacity --binlog FILE…`, docs/apply-capacity.md): the files applied
by the SQL thread of one replica, as its relay logs, timed with MASTER_GTID_WAIT.

Before anything runs, the replica's GTID position is checked against the files (read from their event headers,
measure/binlogfile.gtid_map): it must be the state at one of their transaction boundaries — the state before the
first file's first transaction, or after any transaction they hold — so the SQL thread applies exactly what follows
and nothing twice; else the command is refused in one line. Events written with the replica's own server_id would
be skipped by its SQL thread: refused too. Then the replica's threads are stopped, the files are copied into its
datadir over relay logs it has just opened and listed itself (FLUSH RELAY LOGS: _point), and `CHANGE MASTER TO
MASTER_USE_GTID=no, RELAY_LOG_FILE=…, RELAY_LOG_POS=…` points the SQL thread at the first transaction to apply (a
CHANGE MASTER with neither would delete the relay logs; the IO thread is never started meanwhile, as it would
fetch from the master instead). Its idle CPU, then the drain to the files' last GTID, its CPU net of idle and its
write-back, as `apply-capacity` measures a backlog (experiments/applycap). At the end `CHANGE MASTER TO
MASTER_USE_GTID=slave_pos` deletes the copies with the other relay logs and the replica replicates from the master
again, from the position the files left it at.

On the native topology only: the files must reach the replica's datadir. On your own servers copy them into the
replica's relay-log directory yourself and run the same statements (docs/apply-capacity.md)."""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from ..core import harnesslog, sql
from ..core.config import Node, ReplbenchError, Settings
from ..core.progress import Progress
from ..core.records import STATUS_INTERRUPTED, UNIT_FAILED, UNIT_OK
from ..core.results import ApplyRecord, Readback, Relog, Replay, ReplayFile, merged, write_record
from ..load import cpus
from ..measure import counters, writeback
from ..measure.binlogfile import GtidMap, gtid_map
from ..topology import knobs, nodes, snapshot
from .applycap import DRAIN_TIMEOUT, Committed, Drains, _common, _cpu, _idle_cpu, _replica_entry, unpin


class ReplayRefused(ReplbenchError):
    """The files cannot be replayed on that replica as it stands: one line saying why and what to do."""


@dataclass(frozen=True)
class Start:
    """Where the replica's SQL thread starts: the file (its index in the list) and byte offset of the first
    transaction to apply, and how many application transactions (GTID domain 0) follow to the files' end."""

    file: int
    at: int
    transactions: int
    first_time: int | None
    last_time: int | None


def check(maps: list[GtidMap], position: dict[int, int], replica: str, server_id: int) -> Start:
    """The boundary of the files the replica's GTID position stands at; ReplayRefused (one line) otherwise."""
    for before, after in zip(maps, maps[1:]):
        if after.start != before.end():
            raise ReplayRefused(f"{after.path.name} does not follow {before.path.name}: it starts after "
                                f"{_gtids(after.start)}, the other ends at {_gtids(before.end())}; give the files "
                                "in order with none missing")
    own = sorted({g.server for m in maps for g in m.groups if g.server == server_id})
    if own:
        raise ReplayRefused(f"the files hold transactions of server_id {own[0]}, {replica}'s own: its SQL thread "
                            "would skip them (replicate_same_server_id); replay them on a replica of another id")
    domains = set(maps[0].start) | {g.domain for m in maps for g in m.groups}
    mine = {d: position.get(d, 0) for d in domains}
    state = {d: maps[0].start.get(d, 0) for d in domains}
    boundaries = [(i, g) for i, m in enumerate(maps) for g in m.groups]
    for k, (i, g) in enumerate(boundaries):
        if state == mine:
            rest = [b for _, b in boundaries[k:] if b.domain == counters.APP_DOMAIN]
            return Start(i, g.at, len(rest), rest[0].time if rest else None, rest[-1].time if rest else None)
        state[g.domain] = g.seq
    if state == mine:
        raise ReplayRefused(f"{replica} has applied every transaction the files hold ({_gtids(state)}): nothing to "
                            "replay; restore it at the files' first GTID")
    first = {d: maps[0].start.get(d, 0) for d in domains}
    raise ReplayRefused(f"{replica} is at {_gtids(mine)}, which is no transaction boundary of the files (they go "
                        f"from {_gtids(first)} to {_gtids(state)}): restore it at the files' first GTID, or give "
                        "the files that hold its position")


def _gtids(state: dict[int, int]) -> str:
    return ",".join(f"{d}-{s}" for d, s in sorted(state.items())) or "nothing"


@dataclass(frozen=True)
class Standing:
    """What a replica stands at against the files: their maps, where its SQL thread starts, and the paths of its
    relay logs (the server's own, read as it stands)."""

    maps: list[GtidMap]
    start: Start
    slave_pos: str
    basename: Path
    index: Path


def check_replica(settings: Settings, files: list[Path], replica_name: str) -> Standing:
    """The native replica `replica_name` as it stands, against the files: ReplayRefused (one line) unless it is a
    replica of this topology standing at one of their transaction boundaries."""
    replica = settings.node(replica_name)
    if replica.external:
        raise ReplayRefused(f"{replica_name} is a topology file's server: copy the files into its relay-log "
                            "directory yourself (docs/apply-capacity.md, 'From a captured binlog')")
    maps = [gtid_map(f) for f in files]
    try:  # the replica as it stands: starting the topology would start its replication and move it on
        with sql.admin(replica, settings) as cur:
            cur.execute("SELECT @@gtid_slave_pos, @@server_id, @@relay_log_basename, @@relay_log_index")
            slave_pos, server_id, basename, index = sql.one_row(cur)
    except sql.MySQLError as exc:
        raise ReplayRefused(f"{replica_name} does not answer ({exc.args[-1] if exc.args else exc}): start it "
                            "(./run.sh up starts its replication too: hold it again with STOP SLAVE)") from None
    start = check(maps, sql.gtid_seq(str(slave_pos or "")), replica_name, int(server_id))
    return Standing(maps, start, str(slave_pos), Path(str(basename)), Path(str(index)))


def events_bytes(maps: list[GtidMap], start: Start) -> int:
    """The files' bytes from the first transaction applied to their end: each file's headers (its format
    description and Gtid list) left out, so files of another writer (a re-logging replica's) compare byte for byte."""
    total = 0
    for i, m in enumerate(maps[start.file:], start.file):
        first = start.at if i == start.file else (m.groups[0].at if m.groups else m.size)
        total += max(0, m.size - first)
    return total


def measure(settings: Settings, setting: knobs.Knobs, files: list[Path], replica_name: str,
            folder: Path, pinning: str = "", relogged: Relog | None = None) -> ApplyRecord:
    """The replay's apply.json, as written (whatever happens); ReplayRefused before anything ran. `relogged`: the
    files are a re-logging replica's (relog), recorded with them."""
    progress = Progress("apply-capacity --binlog")
    replica = settings.node(replica_name)
    standing = check_replica(settings, files, replica_name)
    maps, start, slave_pos = standing.maps, standing.start, standing.slave_pos
    basename, index = standing.basename, standing.index
    log = folder / "harness.log"
    harnesslog.use(log)
    span = None if start.first_time is None or start.last_time is None else start.last_time - start.first_time
    record = merged(_common(settings, setting, "binlog"), ApplyRecord(
        scenario=None, knobs_readback={replica_name: Readback.model_validate(knobs.replica_variables(setting))},
        replay=Replay(files=[ReplayFile(name=m.path.name, bytes=m.size) for m in maps], replica=replica_name,
                      start=str(slave_pos), end=_gtids(maps[-1].end()), transactions=start.transactions,
                      span_s=span, events_bytes=events_bytes(maps, start), relog=relogged)))
    pointed = False
    try:
        counters.enable(settings)
        progress.say(f"copying {len(files)} file(s) into {replica_name}'s relay logs; its threads stopped, its "
                     f"apply set: {setting.describe()}")
        pointed = True
        _point(settings, replica, maps, start, basename, index, setting)
        end = ",".join(f"{d}-{s}-{q}" for d, (s, q) in _end_gtids(maps).items())
        pid = nodes.node_pid(replica)
        queued = counters.node_snapshot(replica, settings, pid)
        record = merged(record, ApplyRecord(cpus=cpus.pin_groups(settings, pinning)))
        drains = Drains(settings, end)
        progress.say(f"{replica_name} applies {start.transactions:,} transactions from the files alone, timing "
                     "MASTER_GTID_WAIT")
        _drain(settings, replica, drains, _idle_cpu(replica))
        _sql(settings, replica, "STOP SLAVE SQL_THREAD")
        drains.flushes[replica_name] = writeback.flush_nodes(settings, (replica,), _cpu)
        after = counters.node_snapshot(replica, settings, pid)
        own = counters.describe({"r": queued}, {"r": after}, 1.0, 0, 1)["nodes"]["r"] if queued else None
        master = Committed(start.transactions, own["rows_changed"] if own else 0,
                           round(start.transactions / span, 1) if span else None)
        entry = _replica_entry(drains, replica_name, queued, after, master)
        record = merged(record, ApplyRecord(replicas={replica_name: entry},
                                            status=UNIT_OK if entry.seconds else UNIT_FAILED))
    except KeyboardInterrupt:
        record = merged(record, ApplyRecord(status=STATUS_INTERRUPTED))
    except Exception as exc:  # noqa: BLE001 — recorded, then the replica replicates from the master again
        record = merged(record, ApplyRecord(status=UNIT_FAILED, error=f"{type(exc).__name__}: {exc}"))
        harnesslog.write(f"apply-capacity --binlog failed: {exc}", exc)
    finally:
        unpin(settings, pinning)
        problem = _back_to_master(settings, replica) if pointed else None
        if problem is not None and record.error is None:  # the replay's own failure first
            record = merged(record, ApplyRecord(error=problem))
        harnesslog.done(log)
        record = merged(record, ApplyRecord(folder=folder.name))
        write_record(folder / "apply.json", record)
    return record


def _drain(settings: Settings, replica: Node, drains: Drains, idle: float | None) -> None:
    """The SQL thread started and timed to the files' last GTID, its CPU beside (as Drains.drain records a drain),
    waiting a second at a time so that a SQL thread that stops on an error (a row the replica does not hold: the
    files do not belong to its data) ends the replay with that error, not a wait of DRAIN_TIMEOUT."""
    cpu_before = _cpu(replica)
    began = time.monotonic()
    with sql.admin(replica, settings) as cur:
        cur.execute("START SLAVE SQL_THREAD")
        while True:
            cur.execute(sql.wait_gtid_sql(settings.flavour), (drains.gtid, 1))
            if sql.one_row(cur)[0] == 0:
                break
            state = sql.replica_threads(cur, settings.flavour)
            if state.get("sql") != "Yes":
                raise ReplbenchError(f"{replica.name}'s SQL thread stopped replaying the files: "
                                     f"{state.get('error') or 'no error given'}")
            if time.monotonic() - began > DRAIN_TIMEOUT:
                drains.finished[replica.name] = (None, None, idle)
                return
    took = time.monotonic() - began
    cpu_after = _cpu(replica)
    drains.spans[replica.name] = (0.0, round(took, 3))
    drains.others[replica.name] = []
    drains.finished[replica.name] = (round(took, 3), None if cpu_before is None or cpu_after is None
                                     else cpu_after - cpu_before, idle)


def _end_gtids(maps: list[GtidMap]) -> dict[int, tuple[int, int]]:
    """Each domain's last GTID in the files (server, seq), the position the drain waits for."""
    last: dict[int, tuple[int, int]] = {}
    for m in maps:
        for g in m.groups:
            last[g.domain] = (g.server, g.seq)
    return last


def _sql(settings: Settings, replica: Node, statement: str) -> None:
    with sql.admin(replica, settings) as cur:
        cur.execute(statement)


def _apply_set(settings: Settings, replica: Node, setting: knobs.Knobs) -> None:
    """The replica's parallel apply as `setting` asks, its threads stopped (what a replay's apply reads of the
    knobs; knobs.apply would restart its threads, and the IO thread would fetch from the master)."""
    wanted = knobs.replica_variables(setting)
    with sql.admin(replica, settings) as cur:
        for variable in ("slave_parallel_threads", "slave_parallel_mode"):
            statement = sql.set_global_sql(settings.flavour, variable)
            if statement is not None:
                cur.execute(statement, (knobs.mysql_value(settings.flavour, variable, wanted[variable]),))


def _point(settings: Settings, replica: Node, maps: list[GtidMap], start: Start, basename: Path,
           index: Path, setting: knobs.Knobs) -> None:
    """The replica's threads stopped, its apply set, the files in relay logs of its own naming, its SQL thread
    pointed at the first transaction to apply. The server reads its relay-log index only up to what it wrote
    itself, so it is made to list the files: FLUSH RELAY LOGS once per file and once more (each opens a relay log
    and lists it), then the first of those new, closed logs are overwritten with the files (the last stays the
    open one: the SQL thread reads an open log only as far as the server wrote it)."""
    _sql(settings, replica, "STOP SLAVE")
    _apply_set(settings, replica, setting)
    listed = len(index.read_text().splitlines())
    with sql.admin(replica, settings) as cur:
        for _ in range(len(maps) + 1):
            cur.execute("FLUSH RELAY LOGS")
    names = [line.rsplit("/", 1)[-1] for line in index.read_text().splitlines()[listed:]][:len(maps)]
    if len(names) < len(maps):
        raise ReplbenchError(f"{replica.name} listed {len(names)} new relay logs for {len(maps)} files")
    for m, name in zip(maps, names):
        shutil.copyfile(m.path, basename.parent / name)
    with sql.admin(replica, settings) as cur:
        # the bare name: the server puts its relay logs' folder before it, as its index lists them
        cur.execute("CHANGE MASTER TO MASTER_USE_GTID=no, RELAY_LOG_FILE=%s, RELAY_LOG_POS=%s",
                    (names[start.file], start.at))


def _back_to_master(settings: Settings, replica: Node) -> str | None:
    """The copies deleted with the other relay logs, the replica replicating from the master by GTID again; what
    failed, in words (None: nothing)."""
    try:
        _sql(settings, replica, "STOP SLAVE")
        _apply_set(settings, replica, knobs.Knobs())  # the reference apply: no later command inherits the replay's
        with sql.admin(replica, settings) as cur:
            cur.execute("CHANGE MASTER TO MASTER_USE_GTID=slave_pos")
            cur.execute("START SLAVE")
        nodes.wait_replicating(replica, settings)
    except Exception as exc:  # noqa: BLE001
        return f"{replica.name} not replicating from the master afterwards: {exc}"
    return None



# how far a re-logging replica writes the row image asked (analysis of its files: relog-20261203/by_hand.txt): a
# FULL re-log of FULL files is FULL; under MINIMAL and NOBLOB its before images are the image's, but its after images
# carry every column the files' did (a master under MINIMAL writes only the changed ones)
RELOG_IMAGE = {"FULL": "measured", "MINIMAL": "partial", "NOBLOB": "partial"}


def relog(settings: Settings, files: list[Path], replica_name: str, image: str,
          folder: Path) -> tuple[list[Path], Relog]:
    """The files re-logged under `image` by the replica (which must stand at one of their transaction boundaries,
    as a replay's): restarted with log_slave_updates (not dynamic in 10.11) and that binlog_row_image, its binlog
    emptied and started at its GTID position (RESET MASTER, gtid_binlog_state: the re-logged files then begin where
    the source files' transactions do), the files applied as relay logs by its SQL thread, its binlog closed and the
    files it wrote copied into `folder`. The replica is left at the files' end with its threads stopped, still
    re-logging: put it back (snapshot.restore, which restarts it without) before replaying what it wrote.
    docs/apply-capacity.md, "Other row images"."""
    replica = settings.node(replica_name)
    standing = check_replica(settings, files, replica_name)
    snapshot.restart(settings, replica, {"log_slave_updates": "ON", "binlog_row_image": image})
    try:
        return _relogged(settings, replica, standing, image, folder)
    except BaseException:  # a failed or interrupted re-log leaves no later command a re-logging replica
        snapshot.restart(settings, replica)
        raise


def _relogged(settings: Settings, replica: Node, standing: Standing, image: str,
              folder: Path) -> tuple[list[Path], Relog]:
    """relog's steps once the replica re-logs: its binlog started at its position, the files applied, what it wrote
    copied out."""
    replica_name = replica.name
    with sql.admin(replica, settings) as cur:
        cur.execute("RESET MASTER")
        cur.execute("SET GLOBAL gtid_binlog_state = %s", (standing.slave_pos,))
        cur.execute("SELECT @@log_bin_basename")
        base = Path(str(sql.one_row(cur)[0]))
    _point(settings, replica, standing.maps, standing.start, standing.basename, standing.index, knobs.Knobs())
    drains = Drains(settings, ",".join(f"{d}-{s}-{q}" for d, (s, q) in _end_gtids(standing.maps).items()))
    _drain(settings, replica, drains, None)
    took = drains.finished.get(replica_name, (None, None, None))[0]
    if took is None:
        raise ReplbenchError(f"{replica_name} did not re-log the files within {DRAIN_TIMEOUT:.0f} s")
    with sql.admin(replica, settings) as cur:
        cur.execute("STOP SLAVE SQL_THREAD")
        cur.execute("FLUSH BINARY LOGS")
        cur.execute("SHOW BINARY LOGS")
        names = [str(row[0]) for row in sql.fetch_all(cur)][:-1]  # the last is the one just opened, empty
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name in names:
        shutil.copyfile(base.parent / name, folder / name)
        out.append(folder / name)
    return out, Relog(row_image=image, image=RELOG_IMAGE.get(image, "partial"),
                      source_files=[ReplayFile(name=m.path.name, bytes=m.size) for m in standing.maps],
                      source_transactions=standing.start.transactions,
                      source_events_bytes=events_bytes(standing.maps, standing.start), relog_s=took)
