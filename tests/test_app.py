"""The aiohttp service against the real small topology: endpoints, routing, bad input, failover."""

from __future__ import annotations

import time

import pytest

from app.db import PROBE_INTERVAL
from replbench.core import sql
from replbench.core.config import Settings
from replbench.topology import nodes

from .conftest import http, wait_until


def sample_row(topo: Settings, account_id: int = 123) -> dict:
    status, _, user = http(topo, "GET", f"/users/{account_id}")
    assert status == 200
    return user


def com_select(topo: Settings, node_name: str) -> int:
    with sql.admin(topo.node(node_name), topo) as cur:
        cur.execute("SHOW GLOBAL STATUS LIKE 'Com_select'")
        return int(cur.fetchone()[1])


def rows_read(topo: Settings, node_name: str) -> int:
    """Rows of bench_idx.accounts the node has read (MariaDB's userstat, on in mysql/common.cnf): a request's lookup
    reads one, the app's health probes (SELECT 1, the replication state) none."""
    with sql.admin(topo.node(node_name), topo) as cur:
        cur.execute("SELECT COALESCE(SUM(ROWS_READ), 0) FROM information_schema.TABLE_STATISTICS "
                    "WHERE TABLE_SCHEMA = 'bench_idx' AND TABLE_NAME = 'accounts'")
        return int(cur.fetchone()[0])


@pytest.mark.parametrize("schema", ["bench_idx", "bench_noidx"])
def test_find_users_returns_matching_rows_in_stable_order(topo: Settings, schema: str) -> None:
    row = sample_row(topo)
    first, last = row["first_name"][:3], row["last_name"][:2]
    status, headers, body = http(topo, "GET", f"/find_users?first_name={first}&last_name={last}&schema={schema}")
    assert status == 200
    assert headers["X-Served-By"].startswith("replica")
    assert 1 <= body["count"] <= 10
    assert any(u["id"] == row["id"] for u in body["users"]) or body["count"] == 10
    keys = [(u["first_name"], u["last_name"], u["id"]) for u in body["users"]]
    assert keys == sorted(keys)
    assert all(u["first_name"].startswith(first) and u["last_name"].startswith(last) for u in body["users"])


def test_point_read_and_404(topo: Settings) -> None:
    status, headers, user = http(topo, "GET", "/users/42?schema=bench_noidx")
    assert status == 200 and user["id"] == 42 and headers["X-Served-By"].startswith("replica")
    status, _, body = http(topo, "GET", "/users/999999999")
    assert status == 404 and "error" in body


def test_update_goes_to_master_and_reaches_replicas(topo: Settings) -> None:
    status, headers, body = http(topo, "POST", "/update_user", {"id": 55, "first_name": "Quentin", "city": "Lyon"})
    assert status == 200 and headers["X-Served-By"] == "master"
    assert body == {"id": 55, "updated": ["city", "first_name"]}
    nodes.wait_caught_up(topo, 30)
    for replica in topo.replicas:
        assert sql.query_one(replica, topo, "SELECT first_name FROM bench_idx.accounts WHERE id=55") == "Quentin"
    status, _, _ = http(topo, "POST", "/update_user", {"id": 55, "first_name": "Quentin", "city": "Lyon"})
    assert status == 200  # same values again still matches the row
    status, _, body = http(topo, "POST", "/update_user", {"id": 999999999, "city": "Lyon"})
    assert status == 404


def test_create_user_and_duplicate_email(topo: Settings) -> None:
    account = {"email": "new.person@example.com", "first_name": "New", "last_name": "Person",
               "birth_date": "1990-05-06", "gender": "f", "city": "Oslo", "interests": ["chess", "yoga"]}
    status, headers, body = http(topo, "POST", "/users", account)
    assert status == 201 and headers["X-Served-By"] == "master" and body["id"] > 0
    status, _, body = http(topo, "POST", "/users", account)
    assert status == 409 and "exists" in body["error"]


def test_reads_hit_the_replicas_by_their_own_counters(topo: Settings) -> None:
    names = ("master", "replica1", "replica2")
    before = {n: com_select(topo, n) for n in names}
    rows_before = {n: rows_read(topo, n) for n in names}
    served = set()
    for i in range(40):
        status, headers, _ = http(topo, "GET", f"/users/{i + 1}")
        assert status == 200
        served.add(headers["X-Served-By"])
    after = {n: com_select(topo, n) for n in names}
    rows_after = {n: rows_read(topo, n) for n in names}
    assert served == {"replica1", "replica2"}
    assert after["replica1"] - before["replica1"] >= 10
    assert after["replica2"] - before["replica2"] >= 10
    # the master's own count of the table's rows it read: not one (its SELECTs meanwhile were the app's probes,
    # as many as the seconds the requests took: a count no test can bound, so not the one counted here)
    assert rows_after["master"] == rows_before["master"], (rows_before, rows_after)
    assert sum(rows_after[r] - rows_before[r] for r in ("replica1", "replica2")) >= 40  # one row per request


def test_health_reports_every_node(topo: Settings) -> None:
    status, _, body = http(topo, "GET", "/health")
    assert status == 200 and body["ok"] is True
    assert set(body["nodes"]) == {"master", "replica1", "replica2"}


LONG = "a" * 500
BAD_REQUESTS = [
    ("GET", "/find_users", None, 400),
    ("GET", "/find_users?first_name=Ab", None, 400),
    ("GET", "/find_users?last_name=Ab", None, 400),
    ("GET", "/find_users?first_name=&last_name=Ab", None, 400),
    ("GET", "/find_users?first_name=Ab&last_name=", None, 400),
    ("GET", f"/find_users?first_name={LONG}&last_name=Ab", None, 400),
    ("GET", "/find_users?first_name=A%25&last_name=Ab", None, 400),
    ("GET", "/find_users?first_name=A_&last_name=Ab", None, 400),
    ("GET", "/find_users?first_name=Ab';DROP&last_name=Ab", None, 400),
    ("GET", "/find_users?first_name=Ab&last_name=Cd&limit=0", None, 400),
    ("GET", "/find_users?first_name=Ab&last_name=Cd&limit=101", None, 400),
    ("GET", "/find_users?first_name=Ab&last_name=Cd&limit=x", None, 400),
    ("GET", "/find_users?first_name=Ab&last_name=Cd&schema=mysql", None, 400),
    ("GET", "/find_users?first_name=Ab&last_name=Cd&color=red", None, 400),
    ("GET", "/find_users?first_name=Ab&first_name=Cd&last_name=Cd", None, 400),
    ("GET", "/users/abc", None, 400),
    ("GET", "/users/-5", None, 400),
    ("GET", "/users/0", None, 400),
    ("GET", "/users/99999999999999999999999", None, 400),
    ("GET", "/users/1?schema=bench", None, 400),
    ("GET", "/nowhere", None, 404),
    ("DELETE", "/users/1", None, 405),
    ("GET", "/update_user", None, 405),
    ("POST", "/update_user", {}, 400),
    ("POST", "/update_user", {"id": 1}, 400),
    ("POST", "/update_user", {"id": "x", "city": "Oslo"}, 400),
    ("POST", "/update_user", {"id": -1, "city": "Oslo"}, 400),
    ("POST", "/update_user", {"id": True, "city": "Oslo"}, 400),
    ("POST", "/update_user", {"id": 1, "password": "x"}, 400),
    ("POST", "/update_user", {"id": 1, "city": 5}, 400),
    ("POST", "/update_user", {"id": 1, "city": ""}, 400),
    ("POST", "/update_user", {"id": 1, "first_name": LONG}, 400),
    ("POST", "/update_user", {"id": 1, "gender": "q"}, 400),
    ("POST", "/update_user", {"id": 1, "birth_date": "1990-13-40"}, 400),
    ("POST", "/update_user", {"id": 1, "email": "not-an-email"}, 400),
    ("POST", "/update_user", [1, 2], 400),
    ("POST", "/update_user?schema=nope", {"id": 1, "city": "Oslo"}, 400),
    ("POST", "/users", {"email": "x@y.com"}, 400),
    ("POST", "/users", {"email": "x@y.com", "first_name": "A", "last_name": "B", "birth_date": "1990-01-01",
                        "gender": "f", "city": "X", "id": 5}, 400),
]


@pytest.mark.parametrize("method,path,body,expected", BAD_REQUESTS)
def test_bad_input_is_a_4xx_json_error(topo: Settings, method: str, path: str, body, expected: int) -> None:
    status, _, payload = http(topo, method, path, body)
    assert status == expected, payload
    assert isinstance(payload, dict) and isinstance(payload.get("error"), str)
    assert "SQL" not in payload["error"] and "syntax" not in payload["error"].lower()


@pytest.mark.parametrize("raw,content_type,expected", [
    (b"{not json", "application/json", 400),
    (b'{"id": 1, "city": "Oslo"}', "text/plain", 415),
    (b"", "application/json", 400),
    (b'{"id": 1, "city": "' + b"x" * 40000 + b'"}', "application/json", 413),
    (b"\xff\xfe", "application/json", 400),
])
def test_malformed_bodies(topo: Settings, raw: bytes, content_type: str, expected: int) -> None:
    status, _, payload = http(topo, "POST", "/update_user", raw=raw, content_type=content_type)
    assert status == expected and "error" in payload


def served_by_after_probe(topo: Settings, expect: set[str]) -> bool:
    def check() -> bool:
        status, headers, _ = http(topo, "GET", "/users/3")
        return status == 200 and headers["X-Served-By"] in expect
    # every gunicorn worker must have noticed: require several answers in a row
    return wait_until(lambda: all(check() for _ in range(6)), timeout=20)


@pytest.mark.disruptive  # stops both replicas, then the master
def test_failover_replica_stopped_then_both_then_master(topo: Settings) -> None:
    replica1, replica2 = topo.replicas
    try:
        # replication stopped on replica1: it leaves the rotation
        with sql.admin(replica1, topo) as cur:
            cur.execute("STOP SLAVE")
        assert served_by_after_probe(topo, {"replica2"})
        with sql.admin(replica1, topo) as cur:
            cur.execute("START SLAVE")
        assert served_by_after_probe(topo, {"replica1", "replica2"})
        # one replica down: the other serves
        nodes.stop_node(replica1)
        assert served_by_after_probe(topo, {"replica2"})
        # both down: reads fall back to the master
        nodes.stop_node(replica2)
        assert served_by_after_probe(topo, {"master"})
    finally:
        nodes.start_all(topo)
    assert served_by_after_probe(topo, {"replica1", "replica2"})
    try:
        nodes.stop_node(topo.master)
        status, _, body = http(topo, "POST", "/update_user", {"id": 9, "city": "Oslo"}, timeout=30)
        assert status == 503 and "error" in body  # an answer, not a hang (no assertion on how fast)
        # reads still served by the replicas, also after every worker's probe has seen the master gone (their IO
        # threads reconnecting is not "replication stopped")
        deadline = time.monotonic() + 3 * PROBE_INTERVAL
        while time.monotonic() < deadline:
            status, headers, _ = http(topo, "GET", "/users/3")
            assert status == 200 and headers["X-Served-By"] in ("replica1", "replica2")
            time.sleep(0.1)
    finally:
        nodes.start_all(topo)
    assert wait_until(lambda: http(topo, "POST", "/update_user", {"id": 9, "city": "Oslo"})[0] == 200, timeout=20)


def test_indexed_find_users_reads_tens_of_index_entries(topo: Settings) -> None:
    """EXPLAIN the app's two steps of find_users on bench_idx (its own statements, pinned to idx_first_last), and
    count the index entries they really read."""
    from app.handlers import FIND_INDEX, find_hint, in_names_sql, names_sql

    row = sample_row(topo, 321)
    first, last = row["first_name"][:4], row["last_name"][:3]
    hint = find_hint(True)
    with sql.admin(topo.node("replica1"), topo) as cur:
        step1 = names_sql("bench_idx", hint)
        cur.execute("EXPLAIN " + step1, (first + "%", 301))
        plan = sql.dict_rows(cur)[0]
        # an index-only range read (on the 8M set the optimizer makes it a loose scan: "Using index for group-by")
        assert plan["key"] == FIND_INDEX and "Using index" in plan["Extra"]
        cur.execute(step1, (first + "%", 301))
        names = [r[0] for r in cur.fetchall()]
        step2 = in_names_sql("bench_idx", hint, len(names))
        cur.execute("EXPLAIN " + step2, (*names, last + "%", 10))
        plan = sql.dict_rows(cur)[0]
        # narrow ranges of idx_first_last read in order (no filesort), never idx_last's whole last-name prefix
        assert plan["type"] == "range" and plan["key"] == FIND_INDEX and "filesort" not in plan["Extra"]
        cur.execute("FLUSH STATUS")
        cur.execute(step1, (first + "%", 301))
        cur.fetchall()
        cur.execute(step2, (*names, last + "%", 10))
        cur.fetchall()
        cur.execute("SHOW SESSION STATUS LIKE 'Handler_read%'")
        reads = {k: int(v) for k, v in cur.fetchall()}
    entries = reads["Handler_read_key"] + reads["Handler_read_next"]
    assert entries < 100, reads  # tens, not tens of thousands
    assert reads["Handler_read_rnd_next"] < 100, reads  # no table scan


def index_reads(topo: Settings) -> dict[str, int]:
    """Rows each index of bench_idx.accounts gave, summed over the replicas (userstat's INDEX_STATISTICS)."""
    total: dict[str, int] = {}
    for replica in topo.replicas:
        with sql.admin(replica, topo) as cur:
            cur.execute("SELECT INDEX_NAME, ROWS_READ FROM information_schema.INDEX_STATISTICS "
                        "WHERE TABLE_SCHEMA = 'bench_idx' AND TABLE_NAME = 'accounts'")
            for name, count in cur.fetchall():
                total[name] = total.get(name, 0) + int(count)
    return total


def pinned_queries(topo: Settings) -> list[str]:
    """Searches whose plan the optimizer is free to take through idx_last: a one-letter first-name prefix (every
    name under it, more than MAX_PREFIX_NAMES: the one-step statement) beside a three-letter last-name one, and the
    usual four-and-three."""
    queries = []
    for account_id in (11, 222, 3333):
        row = sample_row(topo, account_id)
        for first in (1, 4):
            queries.append(f"/find_users?first_name={row['first_name'][:first]}&last_name={row['last_name'][:3]}"
                           "&schema=bench_idx&limit=20")
    return queries


def test_find_users_reads_idx_first_last_and_never_idx_last(topo: Settings) -> None:
    """The app names idx_first_last in every find_users statement (FORCE INDEX): whatever the optimizer would
    choose, the replicas read that index and not idx_last, so one scenario measures one read."""
    queries = pinned_queries(topo)
    before = index_reads(topo)
    answers = [http(topo, "GET", q) for q in queries]
    after = index_reads(topo)
    assert all(status == 200 for status, _, _ in answers)
    read = {name: after.get(name, 0) - before.get(name, 0) for name in after}
    assert read.get("idx_first_last", 0) > 0, read
    assert read.get("idx_last", 0) == 0, read


@pytest.mark.disruptive  # drops idx_first_last of the session's bench_idx (given back before the test ends)
def test_find_users_answers_the_same_without_its_index(topo: Settings) -> None:
    """A per-index study runs the app without idx_first_last: the pinned statement's index is gone, the app
    notices (the server's 'no such key', or its own check) and answers the same rows unpinned."""
    from replbench.topology import indexes

    queries = pinned_queries(topo)
    pinned = [http(topo, "GET", q) for q in queries]
    try:
        indexes.reconcile(topo, drop="idx_first_last")
        unpinned = [http(topo, "GET", q) for q in queries]  # the app still believes the index is there: 1176
        again = [http(topo, "GET", q) for q in queries]
    finally:
        indexes.restore(topo)
    assert [s for s, _, _ in unpinned + again] == [200] * (2 * len(queries)), unpinned + again
    assert [b for _, _, b in unpinned] == [b for _, _, b in pinned] == [b for _, _, b in again]


@pytest.mark.parametrize("shape", ["one-trip", "server-steps"])
@pytest.mark.parametrize("schema", ["bench_idx", "bench_noidx"])
def test_each_find_users_shape_answers_exactly_like_the_two_steps(topo: Settings, schema: str, shape: str) -> None:
    """REPLBENCH_FIND_USERS=one-trip (one statement) and server-steps (the two steps built and run on the server,
    one round trip): the same rows in the same order as two-step, also for a prefix no name has."""
    from replbench.topology import appserver

    queries = []
    for account_id in (5, 123, 777, 4321):
        row = sample_row(topo, account_id)
        queries.append(f"/find_users?first_name={row['first_name'][:3]}&last_name={row['last_name'][:2]}"
                       f"&schema={schema}&limit=20")
    queries.append(f"/find_users?first_name=Zzzq&last_name=Q&schema={schema}")  # no such name: empty
    two_step = [http(topo, "GET", q)[2] for q in queries]
    shaped = topo.with_overrides(find_users=shape)
    appserver.stop(topo)
    try:
        appserver.start(shaped)
        answers = [http(shaped, "GET", q)[2] for q in queries]
        health = http(shaped, "GET", "/health")[2]
    finally:
        appserver.stop(shaped)
        appserver.start(topo)
    assert answers == two_step
    assert all(n["healthy"] for n in health["nodes"].values())  # every result read: connections stay usable
    assert two_step[-1] == {"users": [], "count": 0} and any(b["count"] > 1 for b in two_step)


def test_the_states_app_is_stopped_whatever_port_the_stopping_command_was_given(topo: Settings) -> None:
    """`down` with the state but not its ports (REPLBENCH_STATE alone): the gunicorn its pid file names is this
    state's and is stopped, not left running because it listens on another port than the command's default."""
    import psutil

    from replbench.topology import appserver

    pid = appserver.app_pid(topo)
    assert pid is not None
    elsewhere = topo.with_overrides(app_port=topo.app_port + 7)  # the state's, on other ports
    try:
        assert appserver.app_pid(elsewhere) == pid
        assert appserver.stop(elsewhere)
        # gone, or a zombie until the process that started it (this one, the fixture) reaps it
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    finally:
        appserver.start(topo)
    assert appserver.app_pid(topo) not in (None, pid)
