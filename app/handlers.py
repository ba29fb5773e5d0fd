"""HTTP handlers of the app: each validates its input, runs parameterised SQL through the router, and answers JSON.

find_users is the read of the reference experiment. To read tens of index entries instead of every entry under a
first-name prefix, it runs in two steps on one replica connection:
1. the distinct first names under the prefix, read by a loose index scan of (first_name, last_name) — one
   index dive per name, a few tens of them for a 3-letter prefix;
2. `first_name IN (those names) AND last_name LIKE 'prefix%'`, which the range optimizer turns into one narrow
   range per name on both index columns, read in index order until the LIMIT.
Without the index (bench_noidx) both steps are full scans: that collapse is the finding, not a bug.
Measured on the 8M set (replica CPU per find_users, 3000 sampled targets): two steps 0.43 ms, one step 4.4 ms.
Every shape names idx_first_last in FORCE INDEX where the table has it: left to itself, the optimizer at times read
step 2 through idx_last instead (every entry under the last-name prefix, thousands), so the same run measured two
different reads (docs/decisions/find-users-plan.md).
REPLBENCH_FIND_USERS=one-trip sends the same two steps as one statement (a derived table of the distinct names
joined back): one round trip instead of two, but another plan. REPLBENCH_FIND_USERS=server-steps keeps both steps
and their plans and sends them in one round trip: the first statement builds the second's text on the server (the
names QUOTE()d into its IN list, or the one-step query past MAX_PREFIX_NAMES) into a session variable, the next runs
it (EXECUTE IMMEDIATE; PREPARE/EXECUTE/DEALLOCATE on MySQL 8). `bench-app --find-users` measures the shapes side by
side.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import orjson
from aiohttp import web

from replbench.core.config import SEARCH_INDEX as FIND_INDEX

from . import validation as v
from .db import Database

# More distinct first names under a prefix than this: the one-step query. On the 8M set no 3-letter prefix has
# more than 274 names (row-weighted mean 129); a 4-letter prefix has 20 on average.
MAX_PREFIX_NAMES = 300
USER_COLUMNS = "id, email, first_name, last_name, birth_date, gender, city, interests, created_at, updated_at"
FIND_COLUMNS = "id, first_name, last_name, city, birth_date"
ONE_TRIP_COLUMNS = ", ".join(f"a.{c.strip()}" for c in FIND_COLUMNS.split(","))
FIND_INDEX_CHECK_S = 10.0  # seconds a schema's "has FIND_INDEX" answer is reused (a study drops and re-creates it)
ER_KEY_DOES_NOT_EXIST = 1176  # an index hint names an index the table no longer has


DB_KEY = web.AppKey("db", Database)
ADMISSION_KEY = web.AppKey("admission", dict)  # the in-flight bound's counters (main.admission)


def db_of(request: web.Request) -> Database:
    return request.app[DB_KEY]


def json_response(payload: Any, *, status: int = 200, served_by: str | None = None) -> web.Response:
    headers = {"X-Served-By": served_by} if served_by else None
    return web.Response(body=orjson.dumps(payload, default=_default), status=status,
                        content_type="application/json", headers=headers)


def _default(value: Any) -> Any:
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    raise TypeError(f"cannot encode {type(value).__name__}")


def row_dicts(cur: Any, rows: Any) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in rows]


def find_hint(present: bool) -> str:
    """The index hint of find_users' statements: FIND_INDEX where the table has it, none where it has not."""
    return f" FORCE INDEX ({FIND_INDEX})" if present else ""


def names_sql(schema: str, hint: str) -> str:
    """Step 1: the distinct first names under the prefix (a loose index scan); parameters: prefix, limit."""
    return f"SELECT first_name FROM {schema}.accounts{hint} WHERE first_name LIKE %s GROUP BY first_name LIMIT %s"


def in_names_sql(schema: str, hint: str, names: int) -> str:
    """Step 2: one narrow range per name; parameters: the names, last-name prefix, limit."""
    marks = ",".join(["%s"] * names)
    return (f"SELECT {FIND_COLUMNS} FROM {schema}.accounts{hint} WHERE first_name IN ({marks}) "
            "AND last_name LIKE %s ORDER BY first_name, last_name, id LIMIT %s")


def one_step_sql(schema: str, hint: str) -> str:
    """More names than MAX_PREFIX_NAMES: every entry under the first-name prefix; parameters: both prefixes, limit."""
    return (f"SELECT {FIND_COLUMNS} FROM {schema}.accounts{hint} WHERE first_name LIKE %s "
            "AND last_name LIKE %s ORDER BY first_name, last_name, id LIMIT %s")


async def find_index_present(db: Database, cur: Any, schema: str) -> bool:
    """Whether schema.accounts has FIND_INDEX, as information_schema says on this connection's node, asked at most
    once per FIND_INDEX_CHECK_S per schema (never assumed: a per-index study runs the app without it)."""
    known = db.find_index.get(schema)
    now = time.monotonic()
    if known is None or now - known[1] > FIND_INDEX_CHECK_S:
        await cur.execute("SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s "
                          "AND TABLE_NAME = 'accounts' AND INDEX_NAME = %s", (schema, FIND_INDEX))
        known = (bool((await cur.fetchone())[0]), now)
        db.find_index[schema] = known
    return known[0]


def server_steps_sql(schema: str, flavour: str, hint: str = "") -> str:
    """find_users' two steps as one multi-statement round trip; its parameters: first-name prefix, last-name prefix
    (twice each, for the two texts the first statement may build), the LIMIT (twice), and MAX_PREFIX_NAMES + 1. The
    names and prefixes reach the built text through QUOTE(), so it holds only literals, like the two-step's second
    statement; an empty prefix match gives `IN (NULL)`, no rows."""
    order = " ORDER BY first_name, last_name, id LIMIT "
    build = (f"SELECT IF(COUNT(*) > {MAX_PREFIX_NAMES}, "
             f"CONCAT('SELECT {FIND_COLUMNS} FROM {schema}.accounts{hint} WHERE first_name LIKE ', QUOTE(%s), "
             f"' AND last_name LIKE ', QUOTE(%s), '{order}', %s), "
             f"CONCAT('SELECT {FIND_COLUMNS} FROM {schema}.accounts{hint} WHERE first_name IN (', "
             "IFNULL(GROUP_CONCAT(QUOTE(first_name)), 'NULL'), ') AND last_name LIKE ', "
             f"QUOTE(%s), '{order}', %s)) "
             f"FROM (SELECT first_name FROM {schema}.accounts{hint} WHERE first_name LIKE %s GROUP BY first_name "
             "LIMIT %s) AS names INTO @replbench_find_users")
    if flavour == "mysql":  # no EXECUTE IMMEDIATE
        return (f"{build}; PREPARE replbench_find_users FROM @replbench_find_users; EXECUTE replbench_find_users; "
                "DEALLOCATE PREPARE replbench_find_users")
    return f"{build}; EXECUTE IMMEDIATE @replbench_find_users"


async def rows_of_statements(cur: Any) -> list[dict[str, Any]]:
    """The one result set of a multi-statement round trip (the other statements answer OK packets); every
    result is read, so the connection goes back to the pool with nothing pending."""
    rows: list[dict[str, Any]] = []
    while True:
        if cur.description is not None:
            rows = row_dicts(cur, await cur.fetchall())
        if not await cur.nextset():
            return rows


def like_prefix(prefix: str) -> str:
    return prefix + "%"  # validation allows no LIKE wildcards, so nothing needs escaping


async def find_users(request: web.Request) -> web.Response:
    schema, first, last, limit = v.find_users_params(v.single_values(request.query))

    db = db_of(request)
    try:
        return await _find_users(db, schema, first, last, limit, pinned=True)
    except Exception as exc:  # the index went between the check and the statement (a study dropping it)
        if not exc.args or exc.args[0] != ER_KEY_DOES_NOT_EXIST:
            raise
        db.find_index.pop(schema, None)
        return await _find_users(db, schema, first, last, limit, pinned=False)


async def _find_users(db: Database, schema: str, first: str, last: str, limit: int, pinned: bool) -> web.Response:
    shape = db.settings.find_users
    first_like, last_like = like_prefix(first), like_prefix(last)

    async def hint(cur: Any) -> str:
        return find_hint(pinned and await find_index_present(db, cur, schema))

    if shape == "server-steps":
        async def server_steps(cur: Any) -> list[dict[str, Any]]:
            await cur.execute(server_steps_sql(schema, db.settings.flavour, await hint(cur)),
                              (first_like, last_like, limit, last_like, limit, first_like, MAX_PREFIX_NAMES + 1))
            return await rows_of_statements(cur)

        users, node = await db.read(server_steps)
        return json_response({"users": users, "count": len(users)}, served_by=node)

    if shape == "one-trip":
        async def one_trip(cur: Any) -> list[dict[str, Any]]:
            h = await hint(cur)
            await cur.execute(f"SELECT {ONE_TRIP_COLUMNS} FROM (SELECT first_name FROM {schema}.accounts{h} "
                              "WHERE first_name LIKE %s GROUP BY first_name) AS names "
                              f"JOIN {schema}.accounts AS a{h} ON a.first_name = names.first_name "
                              "WHERE a.last_name LIKE %s ORDER BY a.first_name, a.last_name, a.id LIMIT %s",
                              (first_like, last_like, limit))
            return row_dicts(cur, await cur.fetchall())

        users, node = await db.read(one_trip)
        return json_response({"users": users, "count": len(users)}, served_by=node)

    async def work(cur: Any) -> list[dict[str, Any]]:
        h = await hint(cur)
        await cur.execute(names_sql(schema, h), (first_like, MAX_PREFIX_NAMES + 1))
        names = [row[0] for row in await cur.fetchall()]
        if not names:
            return []
        if len(names) <= MAX_PREFIX_NAMES:
            await cur.execute(in_names_sql(schema, h, len(names)), (*names, last_like, limit))
        else:
            await cur.execute(one_step_sql(schema, h), (first_like, last_like, limit))
        return row_dicts(cur, await cur.fetchall())

    users, node = await db.read(work)
    return json_response({"users": users, "count": len(users)}, served_by=node)


async def get_user(request: web.Request) -> web.Response:
    query = v.single_values(request.query)
    v.only_known(query.keys(), ("schema",), "parameter")
    schema = v.schema_of(query)
    account_id = v.positive_id(request.match_info["id"])

    async def work(cur: Any) -> dict[str, Any] | None:
        await cur.execute(f"SELECT {USER_COLUMNS} FROM {schema}.accounts WHERE id = %s", (account_id,))
        rows = row_dicts(cur, await cur.fetchall())
        return rows[0] if rows else None

    user, node = await db_of(request).read(work)
    if user is None:
        raise v.ClientError(f"no account with id {account_id}", 404)
    return json_response(user, served_by=node)


async def read_json(request: web.Request) -> dict[str, Any]:
    if request.content_type != "application/json":
        raise v.ClientError("Content-Type must be application/json", 415)
    raw = await request.read()  # aiohttp enforces client_max_size (413)
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise v.ClientError("the body is not valid JSON") from None
    return v.json_object(body)


async def update_user(request: web.Request) -> web.Response:
    query = v.single_values(request.query)
    v.only_known(query.keys(), ("schema",), "parameter")
    schema = v.schema_of(query)
    account_id, fields = v.update_fields(await read_json(request))
    assignments = ", ".join(f"{name} = %s" for name in fields)

    async def work(cur: Any) -> int:
        await cur.execute(f"UPDATE {schema}.accounts SET {assignments}, updated_at = NOW() WHERE id = %s",
                          (*fields.values(), account_id))
        return cur.rowcount

    matched, node = await db_of(request).write(work)
    if matched == 0:
        raise v.ClientError(f"no account with id {account_id}", 404)
    return json_response({"id": account_id, "updated": sorted(fields)}, served_by=node)


async def update_users(request: web.Request) -> web.Response:
    """One statement changing every row whose id is in [from_id, from_id + count): under STATEMENT the binlog
    carries that one statement, under ROW one row image per row (on bench_nopk, where id is no key, each replica
    then finds every row with a scan of its own)."""
    query = v.single_values(request.query)
    v.only_known(query.keys(), ("schema",), "parameter")
    schema = v.schema_of(query)
    first, count, fields = v.bulk_update(await read_json(request))
    assignments = ", ".join(f"{name} = %s" for name in fields)

    async def work(cur: Any) -> int:
        await cur.execute(f"UPDATE {schema}.accounts SET {assignments}, updated_at = NOW() "
                          "WHERE id BETWEEN %s AND %s", (*fields.values(), first, first + count - 1))
        return cur.rowcount

    matched, node = await db_of(request).write(work)
    return json_response({"from_id": first, "count": count, "rows_matched": matched, "updated": sorted(fields)},
                         served_by=node)


async def create_user(request: web.Request) -> web.Response:
    query = v.single_values(request.query)
    v.only_known(query.keys(), ("schema",), "parameter")
    schema = v.schema_of(query)
    fields = v.create_fields(await read_json(request))
    names = ", ".join(fields)
    marks = ", ".join(["%s"] * len(fields))

    async def work(cur: Any) -> int:
        await cur.execute(f"INSERT INTO {schema}.accounts ({names}, created_at, updated_at) "
                          f"VALUES ({marks}, NOW(), NOW())", tuple(fields.values()))
        return cur.lastrowid

    new_id, node = await db_of(request).write(work)
    return json_response({"id": new_id}, status=201, served_by=node)


CONSTANT_BODY = orjson.dumps({"users": [{"id": i, "first_name": "Floor", "last_name": "Stack", "city": "Nowhere",
                                          "birth_date": "1990-01-01"} for i in range(10)], "count": 10})


async def constant(request: web.Request) -> web.Response:
    """The stack's floor: a constant JSON body of 10 users, no database (bench-app measures find_users and
    update_user against it in the same run)."""
    return web.Response(body=CONSTANT_BODY, content_type="application/json")


async def health(request: web.Request) -> web.Response:
    db = db_of(request)
    nodes = {node.name: node.as_dict() for node in db.nodes}
    readable = any(n.healthy for n in db.replicas) or (db.settings.read_fallback and db.master.healthy)
    admission = request.app.get(ADMISSION_KEY)
    return json_response({"ok": readable and db.master.healthy, "reads": readable,
                          "writes": db.master.healthy, "driver": db.settings.driver, "nodes": nodes,
                          "admission": admission})
