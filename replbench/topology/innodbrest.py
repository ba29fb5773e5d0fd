"""Every node's InnoDB back at rest before a unit: the previous units' dirty pages flushed and their undo purged.

Left alone, the pages earlier units dirtied stay in the pool (no flushing while a node is idle) until the redo written
since the last checkpoint passes innodb_adaptive_flushing_lwm; then the next writes (the heartbeat of an idle window
is enough) start adaptive flushing, which lands in whichever window comes next. Flushed here, every unit starts from
the same state and its idle window is idle. docs/decisions/settle-innodb-rest.md has the measurements."""

from __future__ import annotations

import time
from typing import Any

from ..core import sql
from ..core.config import (
    SETTLE_DIRTY_PAGES,
    SETTLE_FLUSH_IO_CAPACITY,
    SETTLE_HISTORY_LENGTH,
    SETTLE_INNODB_POLL,
    Node,
    Settings,
)
from ..core.results import InnodbNodeRest, InnodbRest
from .nodes import TopologyError

# read in both spellings: Innodb_buffer_pool_pages_dirty is a status variable in MariaDB and MySQL 8 alike, and the
# history list length is in INNODB_METRICS in both (enabled by default)
STATE_SQL = ("SELECT (SELECT VARIABLE_VALUE FROM {status} WHERE VARIABLE_NAME = 'Innodb_buffer_pool_pages_dirty'), "
             "(SELECT `COUNT` FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len')")
FLUSH_VARIABLES = ("innodb_io_capacity_max", "innodb_io_capacity", "innodb_max_dirty_pages_pct")


def state(node: Node, settings: Settings) -> tuple[int, int]:
    """(dirty pages, history list length) of one node now."""
    table = ("information_schema.GLOBAL_STATUS" if settings.flavour == "mariadb"
             else "performance_schema.global_status")
    with sql.admin(node, settings, timeout=3.0) as cur:
        cur.execute(STATE_SQL.format(status=table))
        dirty, history = sql.one_row(cur)
    return int(dirty or 0), int(history or 0)


def at_rest(dirty: int, history: int) -> bool:
    return dirty <= SETTLE_DIRTY_PAGES and history <= SETTLE_HISTORY_LENGTH


def _left(dirty: int, history: int, done: bool) -> list[str]:
    """What of a node's InnoDB is above its rest, in words: as found and since dealt with (done), or still left."""
    return ([f"{dirty:,} dirty pages" + (" flushed" if done else "")] if dirty > SETTLE_DIRTY_PAGES else []) + \
        ([f"a history list of {history:,}" + (" purged" if done else "")] if history > SETTLE_HISTORY_LENGTH else [])


def why_not(name: str, dirty: int, history: int) -> str:
    """'' when a node's InnoDB is at rest, else why not, in words."""
    parts = _left(dirty, history, done=False)
    return f"{name}: {', '.join(parts)}" if parts else ""


def waited(name: str, values: InnodbNodeRest) -> str:
    """What the settle waited for on one node, in words ('' if it was at rest already)."""
    parts = _left(values.dirty_pages or 0, values.history_length or 0, done=True)
    return f"{name}: {' and '.join(parts)}" if parts else ""


def rest(settings: Settings, wait: float, only: tuple[Node, ...] | None = None, purge: bool = True) -> InnodbRest:
    """Flush every node's dirty pages (innodb_max_dirty_pages_pct 0, its I/O capacity raised) and wait for its purge,
    at most `wait` seconds, then put its settings back. Returns, per node, the pages and history it started with and
    the seconds it took; `why`: what was not at rest when the wait ran out (or a node that did not answer). `only`:
    these nodes alone (a replica's write-back after its drain); purge=False: the dirty pages alone, the undo left to
    purge at its pace (a unit's write-back: a node restarted by a fault may purge its recovered undo for minutes)."""
    began = time.monotonic()
    nodes: dict[str, Any] = {}
    saved: dict[str, dict[str, Any]] = {}
    why: list[str] = []
    chosen = settings.nodes if only is None else only
    try:
        for node in chosen:
            try:
                dirty, history = state(node, settings)
            except sql.MySQLError as exc:
                why.append(f"{node.name}: does not answer ({exc.args[-1] if exc.args else exc})")
                continue
            nodes[node.name] = {"dirty_pages": dirty, "history_length": history}
            if dirty > SETTLE_DIRTY_PAGES:
                try:
                    _flush_fast(node, settings, saved)
                except sql.MySQLError as exc:  # left to flush at its own pace: the wait below says if it did
                    why.append(f"{node.name}: could not start its flush ({exc.args[-1] if exc.args else exc})")
        pending = {n.name: n for n in chosen if n.name in nodes}
        while pending:
            for name, node in list(pending.items()):
                try:
                    dirty, history = state(node, settings)
                except sql.MySQLError:
                    continue
                if at_rest(dirty, history if purge else 0):
                    nodes[name]["rest_s"] = round(time.monotonic() - began, 1)
                    del pending[name]
                else:
                    nodes[name]["left"] = why_not(name, dirty, history if purge else 0)
            if not pending or time.monotonic() - began >= wait:
                break
            time.sleep(SETTLE_INNODB_POLL)
        why += [f"{nodes[name].pop('left')} left after {wait:g} s" for name in pending if nodes[name].get("left")]
    finally:
        for node in chosen:
            if node.name in saved:
                _restore(node, settings, saved[node.name])
    for values in nodes.values():
        values.pop("left", None)
    return InnodbRest(nodes={name: InnodbNodeRest.model_validate(values) for name, values in nodes.items()},
                      waited_s=round(time.monotonic() - began, 1), why=why)


def _flush_fast(node: Node, settings: Settings, saved: dict[str, dict[str, Any]]) -> None:
    """Tell a node to flush every dirty page as fast as its disk allows, its settings kept in `saved` first (so a
    failure between two SETs still puts back the one that was made)."""
    with sql.admin(node, settings, timeout=3.0) as cur:
        names = [sql.variable(settings.flavour, v) or v for v in FLUSH_VARIABLES]
        cur.execute("SELECT " + ", ".join(f"@@GLOBAL.{n}" for n in names))
        old = saved[node.name] = dict(zip(names, sql.one_row(cur)))
        capacity_max, capacity, pct = names
        # raised in this order: innodb_io_capacity may never exceed innodb_io_capacity_max
        cur.execute(f"SET GLOBAL {capacity_max} = %s", (max(SETTLE_FLUSH_IO_CAPACITY, int(old[capacity_max])),))
        cur.execute(f"SET GLOBAL {capacity} = %s", (max(SETTLE_FLUSH_IO_CAPACITY, int(old[capacity])),))
        cur.execute(f"SET GLOBAL {pct} = 0")


def _restore(node: Node, settings: Settings, old: dict[str, Any]) -> None:
    """Put back what _flush_fast changed (lowered in the reverse order), on a connection of its own; a node that
    keeps them is a TopologyError: every later unit would measure its flushing."""
    capacity_max, capacity, pct = old
    try:
        with sql.admin(node, settings, timeout=10.0) as cur:
            cur.execute(f"SET GLOBAL {pct} = %s", (old[pct],))
            cur.execute(f"SET GLOBAL {capacity} = %s", (old[capacity],))
            cur.execute(f"SET GLOBAL {capacity_max} = %s", (old[capacity_max],))
    except sql.MySQLError as exc:
        settings_text = ", ".join(f"{k} = {v}" for k, v in old.items())
        raise TopologyError(f"{node.name}: could not put back its flushing settings ({settings_text}): "
                            f"{exc.args[-1] if exc.args else exc}") from exc
