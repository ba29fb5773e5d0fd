"""The secondary indexes of bench_idx.accounts a measurement runs without (REPLBENCH_DROP_INDEXES, a study cell's
`drop_indexes`): what the table has on every node (information_schema, never assumed), and the changes that give
it what the setting asks for.

Every change is made on the master and replicates as a statement, so each replica makes it too: ALTER TABLE …
DROP INDEX is metadata only in InnoDB (a second at 8M), ADD INDEX is built in place without locking writes
(ALGORITHM=INPLACE, LOCK=NONE), about a minute per index per node at 8M, the replicas starting once the master has
committed it. After each change the harness waits until every replica has applied it and checks that each one has
the master's indexes. An index mysql/indexes.sql builds and the setting does not name is re-created by the next
measurement, so a table left short by a study that was killed is whole again before anything measures it; a study
re-creates its cells' indexes at its end whatever happens (failure, Ctrl-C: restore())."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..core import sql
from ..core.config import INDEXED_TABLE, Node, ReplbenchError, Settings, index_names, secondary_indexes
from ..core.progress import Progress
from ..core.results import IndexChange, Indexes
from . import knobs, nodes

# seconds the replicas get to apply one change: re-creating every index of an 8M table takes each replica a few
# minutes on 2 cores (about a minute per index), well inside this
APPLY_TIMEOUT = 1800.0
DUP_KEY_NAME, CANT_DROP_KEY = 1061, 1091  # the index is there already / is gone already (a change made meanwhile)


class IndexChangeError(ReplbenchError):
    """A node refused an index change, or a replica did not apply it or ended with other indexes than the master."""


def read(node: Node, settings: Settings, table: str = INDEXED_TABLE) -> dict[str, list[str]]:
    """The table's indexes on one node as information_schema lists them: name -> columns in the index's order."""
    schema, name = table.split(".")
    with sql.admin(node, settings) as cur:
        cur.execute("SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s "
                    "AND TABLE_NAME = %s ORDER BY INDEX_NAME = 'PRIMARY' DESC, INDEX_NAME, SEQ_IN_INDEX",
                    (schema, name))
        out: dict[str, list[str]] = {}
        for index, column in cur.fetchall():
            out.setdefault(str(index), []).append(str(column))
    return out


def describe(settings: Settings, changed: dict[str, Any], table: str = INDEXED_TABLE) -> Indexes:
    """What meta.json records: the table and, per node, its indexes (None for a node that does not answer), the
    indexes the settings drop, and what `changed` (reconcile's) changed, where it changed any."""
    per_node: dict[str, dict[str, list[str]] | None] = {}
    for node in settings.nodes:
        try:
            per_node[node.name] = read(node, settings, table)
        except sql.MySQLError:
            per_node[node.name] = None
    if changed["dropped"] or changed["created"]:
        return Indexes(table=table, nodes=per_node, drop_indexes=settings.drop_indexes,
                       changed=IndexChange.model_validate(changed))
    return Indexes(table=table, nodes=per_node, drop_indexes=settings.drop_indexes)


def changes(present: set[str] | dict[str, Any], drop: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(to create, to drop): what gives a table with these indexes present mysql/indexes.sql's secondary indexes
    less the ones in `drop`, each list in that file's order."""
    declared = secondary_indexes()
    return ([n for n in declared if n not in drop and n not in present],
            [n for n in declared if n in drop and n in present])


def statements(create: list[str], drop: list[str], table: str = INDEXED_TABLE) -> list[str]:
    """The ALTERs that make those changes: the drops in one (metadata only), the indexes built in another (one
    scan of the table for all of them), both in place and without locking writes."""
    declared = secondary_indexes()
    out = []
    if drop:
        out.append(f"ALTER TABLE {table} " + ", ".join(f"DROP INDEX {n}" for n in drop)
                   + ", ALGORITHM=INPLACE, LOCK=NONE")
    if create:
        out.append(f"ALTER TABLE {table} " + ", ".join(f"ADD {declared[n]}" for n in create)
                   + ", ALGORITHM=INPLACE, LOCK=NONE")
    return out


def rebuilt(before: str, after: str) -> int:
    """How many indexes going from one drop_indexes value to another re-creates (what such a change costs)."""
    return len(set(index_names(before)) - set(index_names(after)))


def reconcile(settings: Settings, progress: Progress | None = None, drop: str | None = None) -> dict[str, Any]:
    """Give the table mysql/indexes.sql's secondary indexes less the ones `drop` names (default: the settings'
    drop_indexes), on the master, then wait until every replica has applied it and has the master's indexes.
    Returns what changed: the indexes dropped and created, and the seconds the master and each replica took."""
    wanted = index_names(settings.drop_indexes if drop is None else drop)
    master = settings.master
    out: dict[str, Any] = {"dropped": [], "created": []}
    retried = False
    for attempt in range(2):
        create, remove = changes(read(master, settings), wanted)
        if not create and not remove:
            break
        try:
            _change(settings, create, remove, progress, out)
        except sql.MySQLError as exc:
            if attempt or getattr(exc, "errno", None) not in (DUP_KEY_NAME, CANT_DROP_KEY):
                raise IndexChangeError(f"the master refused to change the indexes of {INDEXED_TABLE}: "
                                       f"{getattr(exc, 'msg', None) or exc}") from exc
            retried = True  # another session's change got there first (a killed study's ALTER, still running)
    if out["dropped"] or out["created"] or retried:
        check_replicas(settings)
    if out["created"]:  # the next warm-up reads the new indexes too, whatever of them the build left in the pools
        knobs.forget_warm(settings, [n.name for n in settings.nodes])
    return out


def _change(settings: Settings, create: list[str], remove: list[str], progress: Progress | None,
            out: dict[str, Any]) -> None:
    what = "; ".join(part for part in (f"dropping {', '.join(remove)}" if remove else "",
                                       f"re-creating {', '.join(create)}" if create else "") if part)
    say = progress.say if progress is not None else (lambda *_a, **_k: None)
    say(f"{INDEXED_TABLE}: {what} on the master (replicated)", final=True)
    begin = time.monotonic()
    with sql.admin(settings.master, settings) as cur:
        for key, names in (("dropped", remove), ("created", create)):  # statements()' order
            for statement in statements(create if key == "created" else [], remove if key == "dropped" else []):
                cur.execute(statement)
                out[key] += names
    out["master_s"] = round(out.get("master_s", 0.0) + time.monotonic() - begin, 1)
    say(f"{INDEXED_TABLE}: {what} took the master {time.monotonic() - begin:.1f} s; waiting for the replicas",
        final=True)
    waited = nodes.wait_caught_up(settings, APPLY_TIMEOUT)
    late = [name for name, took in waited.items() if took is None]
    if late:
        raise IndexChangeError(f"{', '.join(late)} did not apply the change of {INDEXED_TABLE}'s indexes ({what}) "
                               f"within {APPLY_TIMEOUT:g} s: see ./run.sh status")
    out["replicas_s"] = waited
    say(f"{INDEXED_TABLE}: every replica applied it ({', '.join(f'{n} {s:.1f} s' for n, s in waited.items())})",
        final=True)


def check_replicas(settings: Settings) -> None:
    """Every replica has applied the master's position and has its indexes on the table (names and columns), or
    IndexChangeError naming it."""
    late = [name for name, took in nodes.wait_caught_up(settings, APPLY_TIMEOUT).items() if took is None]
    if late:
        raise IndexChangeError(f"{', '.join(late)} did not reach the master's position within {APPLY_TIMEOUT:g} s "
                               f"after a change of {INDEXED_TABLE}'s indexes: see ./run.sh status")
    master = read(settings.master, settings)
    for replica in settings.replicas:
        got = read(replica, settings)
        if got != master:
            raise IndexChangeError(f"{replica.name} has other indexes on {INDEXED_TABLE} than the master: "
                                   f"{', '.join(sorted(got))} against {', '.join(sorted(master))}")


def restore(settings: Settings, progress: Progress | None = None) -> dict[str, Any]:
    """Re-create every index mysql/indexes.sql builds that the table lacks, on the master and the replicas, with
    Ctrl-C and SIGTERM held off until it is done: the table is the dataset's, not one study's."""
    with _signals_held():
        return reconcile(settings, progress, drop="")


@contextmanager
def _signals_held() -> Iterator[None]:
    """While the body runs, an interrupt is noted (and said) instead of raised: half a restore would leave the
    table without an index the next measurement then re-creates anyway, after the user thought it was done."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def note(signum: int, _frame: Any) -> None:  # not through Progress: its lock may be held by the code it stops
        os.write(2, f"\n{signal.Signals(signum).name}: re-creating the indexes of {INDEXED_TABLE} first\n".encode())

    held = {s: signal.signal(s, note) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in held.items():
            signal.signal(s, handler)
