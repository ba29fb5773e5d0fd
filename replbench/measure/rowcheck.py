"""Row check: whether a write run's row changes really changed the columns its scenario says it changes.

An UPDATE that sets the values a row already holds changes nothing an index sees (only updated_at moves), and a
run of such updates measures "touch a timestamp", not index maintenance. So every write run counts, of its row
changes, how many changed every column its update sets (first_name, last_name, city for update_user; interests
for the wide and bulk updates; in a mix of both, each row by its own kind):

- under ROW with binlog_row_image FULL, from the row images themselves: the master's binlog between the run's two
  snapshots, decoded with mariadb-binlog (--read-from-remote-server, so a topology file's master works too), each
  UPDATE's before image (WHERE) compared with its after image (SET); up to DECODE_LIMIT rows;
- under any other format or image, from a sample: the first SAMPLE_ROWS target rows read on the master before the
  attack and again after it.

A guard trips when the share falls below MIN_CHANGED (of the updates that succeeded, for the sample). A planned
big transaction (fault bigtx) is not the workload: its rows, told by the value it wrote, are left out and counted.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..core import sql
from ..core.config import Settings
from ..core.results import RowsChecked
from ..core.scenario import Scenario
from ..load.targets import write_bodies
from ..topology.knobs import Knobs
from .binlog import BinlogSnapshot

MIN_CHANGED = 0.99  # below this share of row changes that changed their columns, a guard trips
DECODE_LIMIT = 200_000  # rows decoded from the binlog at most (a bulk run's first ones beyond that)
SAMPLE_ROWS = 2000  # target rows read back before and after a run where the binlog cannot tell
DECODE_TIMEOUT = 300.0  # seconds for mariadb-binlog to decode a run's range
_VALUE = re.compile(r"^###\s+@(\d+)=(.*)$")


def column_sets(scenario: Scenario) -> tuple[tuple[str, ...], ...]:
    """The columns each kind of update of the scenario sets (updated_at aside): update_user's fields, and
    interests for the bulk and wide updates; () for a scenario without updates. A row change counts as changed
    when it changed every column of one of these sets (a mix of both kinds checks each row by its own kind)."""
    endpoints = {r.endpoint for r in scenario.requests}
    sets = []
    if "update_user" in endpoints:
        sets.append(tuple(scenario.update_fields))
    if "update_users" in endpoints:
        sets.append(("interests",))
    return tuple(sets)


def checked_columns(scenario: Scenario) -> tuple[str, ...]:
    """Every column the scenario's updates set, once each, or () for a scenario without updates."""
    return tuple(dict.fromkeys(c for columns in column_sets(scenario) for c in columns))


def _changed(old: dict[Any, Any] | tuple, new: dict[Any, Any] | tuple, sets: list[list[Any]]) -> bool:
    """Every column of one set differs between the two images (keys: column numbers or positions)."""
    return any(all(old[k] != new[k] for k in keys) for keys in sets)


def method(knobs: Knobs) -> str:
    return "binlog" if knobs.binlog_format == "ROW" and knobs.binlog_row_image == "FULL" else "sample"


def table_columns(settings: Settings, schema: str) -> tuple[dict[str, int], set[str]]:
    """Column name -> position (the binlog's @N) and the columns in a secondary index, as the master has them."""
    with sql.admin(settings.master, settings) as cur:
        cur.execute("SELECT COLUMN_NAME, ORDINAL_POSITION FROM information_schema.COLUMNS "
                    "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = 'accounts'", (schema,))
        positions = {str(name): int(pos) for name, pos in sql.fetch_all(cur)}
        cur.execute("SELECT DISTINCT COLUMN_NAME FROM information_schema.STATISTICS "
                    "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = 'accounts' AND INDEX_NAME <> 'PRIMARY'", (schema,))
        indexed = {str(row[0]) for row in sql.fetch_all(cur)}
    return positions, indexed


# ---- from the binlog's row images -----------------------------------------------------------------------------

def binlog_tool() -> str | None:
    return shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")


def decode_command(settings: Settings, before: BinlogSnapshot, after: BinlogSnapshot) -> list[str]:
    """mariadb-binlog over the range between two snapshots: from the end of the file current at the first to the
    end of the file current at the second (every file in between whole)."""
    tool = binlog_tool()
    if tool is None:
        raise RuntimeError("mariadb-binlog (or mysqlbinlog) is not installed")
    first, start = before.files[-1]
    names = [name for name, _ in after.files]
    files = names[names.index(first):] if first in names else names[-1:]
    last_size = after.files[-1][1]
    node = settings.master
    where = ([f"--host={node.host}", f"--port={node.port}", f"--user={settings.db_user}"] if node.external else
             [f"--socket={node.socket}", f"--user={sql.ADMIN_USER}"])
    return [tool, "--read-from-remote-server", *where, "--base64-output=DECODE-ROWS", "--verbose",
            f"--start-position={start}", f"--stop-position={last_size}", *files]


def parse_updates(lines: Iterable[str], schema: str, limit: int | None = DECODE_LIMIT) -> Iterator[
        tuple[dict[int, str], dict[int, str]]]:
    """(before image, after image) of each row an UPDATE on <schema>.accounts changed, as mariadb-binlog -v
    prints them (### UPDATE `s`.`t` / ### WHERE / ###   @N=value / ### SET / ###   @N=value)."""
    wanted = f"### UPDATE `{schema}`.`accounts`"
    image: dict[int, str] | None = None
    before: dict[int, str] = {}
    in_table = False
    count = 0
    for raw in lines:
        line = raw.rstrip("\n")
        if line.startswith("### UPDATE ") or not line.startswith("###"):
            if image is not None and image is not before:
                yield before, image
                count += 1
                if limit is not None and count >= limit:
                    return
            image = None
            in_table = line.startswith(wanted)
            continue
        if not in_table:
            continue
        if line == "### WHERE":
            before = {}
            image = before
        elif line == "### SET":
            image = {}
        elif image is not None and (m := _VALUE.match(line)):
            image[int(m.group(1))] = m.group(2)
    if image is not None and image is not before and (limit is None or count < limit):
        yield before, image


def _planned(old: dict[int, str], new: dict[int, str], values: tuple[str, ...]) -> bool:
    """The row change wrote a value a planned big transaction writes (mariadb-binlog prints it quoted); a later
    update of the same row keeps that value and is the workload's."""
    return any(v.strip("'") in values and old.get(k) != v for k, v in new.items())


def from_binlog(settings: Settings, scenario: Scenario, before: BinlogSnapshot, after: BinlogSnapshot,
                log: Path | None = None, planned_values: tuple[str, ...] = ()) -> dict[str, Any]:
    """The row check from the row images; rows whose after image holds one of planned_values (what a bigtx fault
    wrote) are left out and counted, and do not use up DECODE_LIMIT."""
    positions, indexed = table_columns(settings, scenario.schema)
    columns = checked_columns(scenario)
    sets = [[positions[c] for c in cols] for cols in column_sets(scenario)]
    command = decode_command(settings, before, after)
    env = {"MYSQL_PWD": settings.db_password if settings.master.external else settings.admin_password}
    checked = changed = left_out = 0
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                          env=env) as proc:
        assert proc.stdout is not None
        try:
            for old, new in parse_updates(proc.stdout, scenario.schema, limit=None):
                if planned_values and _planned(old, new, planned_values):
                    left_out += 1
                    continue
                checked += 1
                changed += _changed({n: old.get(n) for s in sets for n in s}, {n: new.get(n) for s in sets for n in s},
                                    sets)
                if checked >= DECODE_LIMIT:
                    break
        finally:
            if proc.poll() is None:  # stopped at DECODE_LIMIT (or interrupted): the rest is not needed
                proc.kill()
            _, err = proc.communicate(timeout=DECODE_TIMEOUT)
    if proc.returncode not in (0, -9) and not checked:
        raise RuntimeError(f"mariadb-binlog failed ({proc.returncode}): {err.strip()[:300]}")
    return {**_result("binlog", columns, indexed, checked, changed, partial=checked >= DECODE_LIMIT),
            "planned_rows_left_out": left_out}


# ---- from a sample read back ----------------------------------------------------------------------------------

def sample_ids(targets: Path, limit: int = SAMPLE_ROWS) -> list[int]:
    """The rows the first updates of a targets file change (in the order vegeta sends them)."""
    ids: list[int] = []
    for body in write_bodies(targets):
        ids.append(int(body["id"] if "id" in body else body["from_id"]))
        if len(ids) >= limit:
            break
    return ids


def read_values(settings: Settings, schema: str, columns: tuple[str, ...], ids: list[int]) -> dict[int, tuple]:
    if not ids or not columns:
        return {}
    with sql.admin(settings.master, settings) as cur:
        cur.execute(f"SELECT id, {', '.join(columns)} FROM {schema}.accounts WHERE id IN "
                    f"({','.join(['%s'] * len(set(ids)))})", sorted(set(ids)))
        return {int(row[0]): tuple(row[1:]) for row in sql.fetch_all(cur)}


def from_sample(settings: Settings, scenario: Scenario, ids: list[int], before: dict[int, tuple],
                sent: int) -> dict[str, Any]:
    """Of the sampled targets that were sent (the first `sent`), how many rows now differ in every column."""
    _, indexed = table_columns(settings, scenario.schema)
    columns = checked_columns(scenario)
    sets = [[columns.index(c) for c in cols] for cols in column_sets(scenario)]
    used = sorted(set(ids[:max(0, sent)]) & set(before))
    after = read_values(settings, scenario.schema, columns, used)
    changed = sum(1 for i in used if i in after and _changed(before[i], after[i], sets))
    return _result("sample", columns, indexed, len(used), changed)


def _result(how: str, columns: tuple[str, ...], indexed: set[str], checked: int, changed: int,
            partial: bool = False) -> dict[str, Any]:
    return {"method": how, "columns": list(columns), "indexed": bool(columns) and set(columns) <= indexed,
            "checked": checked, "changed": changed, "share": round(changed / checked, 5) if checked else None,
            "first_rows_only": partial}


def describe(check: RowsChecked) -> str:
    """'indexed columns (first_name, last_name, city) changed in 7,996 of 8,000 row updates (99.95 %; ...)'"""
    what = "indexed columns" if check.indexed else "updated columns"
    where = ("decoded from the master's binlog" + (f", the run's first {check.checked:,}"
                                                   if check.first_rows_only else "")
             if check.method == "binlog" else "a sample of target rows read back before and after")
    if check.planned_rows_left_out:
        where += f"; {check.planned_rows_left_out:,} rows of the planned big transaction left out"
    columns = ", ".join(check.columns or [])  # _result writes every key
    if not check.checked:
        return f"{what} ({columns}): no row update to check ({where})"
    assert check.changed is not None and check.share is not None  # _result writes both with a count checked
    return (f"{what} ({columns}) changed in {check.changed:,} of {check.checked:,} row "
            f"updates ({100 * check.share:.2f} %; {where})")


def guard(check: RowsChecked, success: float | None) -> str | None:
    """A warning when too few row changes changed their columns (the sample counts failed requests too, so it is
    held to MIN_CHANGED of the success ratio)."""
    if not check.checked or check.share is None:
        return None
    floor = MIN_CHANGED * (success if check.method == "sample" and success is not None else 1.0)
    if check.share >= floor:
        return None
    return (f"only {100 * check.share:.1f} % of row updates changed their "
            f"{'indexed' if check.indexed else 'updated'} columns (below {100 * floor:.0f} %): "
            "the run measured rows that did not change")
