"""A run that loses a node still reports; faults on purpose; lag-aware routing; the app's in-flight bound; runs
killed from outside are marked incomplete; catch-up is timed from the last request sent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from replbench.core import sql
from replbench.core.config import ROOT, Settings
from replbench.topology import nodes

from .conftest import env_for, http, run_cli, run_folder, run_main, wait_until


def start_run(topo: Settings, args: list[str], **env: str) -> subprocess.Popen[str]:
    full = dict(os.environ, **env_for(topo.state, **env))
    return subprocess.Popen([sys.executable, "-m", "replbench", *args], cwd=ROOT, env=full, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def newest_results(topo: Settings, pattern: str) -> list[Path]:
    return sorted(topo.results.glob(pattern))


def kill_when(topo: Settings, node: str, pattern: str, earlier: set[Path], min_bytes: int = 2000) -> threading.Thread:
    """SIGKILL the node once the run's results.bin has grown (the attack is under way); `earlier` are the results
    that matched the pattern before the run started (another test's run at the same rate), not this run's."""
    def go() -> None:
        if wait_until(lambda: any(p.stat().st_size > min_bytes for p in newest_results(topo, pattern)
                                  if p not in earlier), 120):
            pid = nodes.node_pid(topo.node(node))
            if pid:
                os.kill(pid, signal.SIGKILL)

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    return thread


def read_until(proc: subprocess.Popen[str], needle: str) -> tuple[bool, str]:
    """Read the run's stderr (start_run pipes it) line by line until one holds `needle`: (found, what was read)."""
    seen = []
    for line in proc.stderr or ():
        seen.append(line)
        if needle in line:
            return True, "".join(seen)
    return False, "".join(seen)


def finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.disruptive  # SIGKILLs a node
@pytest.mark.parametrize("scenario,rate,node", [("read", 60, "replica1"), ("write", 40, "master")])
def test_a_node_killed_mid_run_is_reported_not_a_traceback(topo: Settings, scenario: str, rate: int,
                                                           node: str) -> None:
    pattern = f"*-{scenario}-{rate}*/results.bin"
    earlier = set(newest_results(topo, pattern))
    proc = start_run(topo, [scenario, str(rate), "--duration", "6s"])
    kill_when(topo, node, pattern, earlier)
    out, err = finish(proc)
    assert proc.returncode == 1, out + err
    assert "Traceback" not in out + err
    folder = run_folder(out)
    summary = json.loads((folder / "summary.json").read_text())
    assert (folder / "report.json").is_file() and (folder / "block.txt").is_file()
    assert summary["status"] == "FAILED"
    assert any(f["node"] == node and not f["planned"] for f in summary["nodes_lost"])
    assert f"Faults seen: {node} lost at" in out
    assert nodes.node_pid(topo.node(node))  # brought back after the run
    assert node in summary.get("restarted_after_run", [])


@pytest.mark.disruptive  # SIGKILLs the master
def test_the_master_killed_during_warm_up_is_one_line_and_a_record(topo: Settings) -> None:
    (topo.state / "warm.json").unlink(missing_ok=True)  # forces the buffer-pool warm-up
    proc = start_run(topo, ["get", "40", "--duration", "2s"])
    preparing, seen = read_until(proc, "applying settings")  # the run's first progress line: its preparation
    if preparing:
        os.kill(nodes.node_pid(topo.master), signal.SIGKILL)
    out, rest = finish(proc)
    err = seen + rest
    assert preparing, "the run never said it was applying settings: " + err
    assert proc.returncode == 1, out + err
    assert "Traceback" not in out + err
    folder = newest_results(topo, "*-get-40*")[-1]
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["status"] == "FAILED"
    assert (folder / "harness.log").read_text().strip()
    # the loss ended the run in its preparation, recorded as the run's error: not one request was sent
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["status"] == "FAILED" and "requests" not in summary, summary
    assert any(e.startswith("run: ") for e in summary["errors"]), summary["errors"]
    assert "(details in harness.log)" in err  # the one line the terminal gets
    nodes.start_all(topo)


@pytest.mark.disruptive  # kills replica1 (a planned fault)
def test_planned_faults_give_windows_and_leave_the_topology_healthy(topo: Settings) -> None:
    proc = run_cli(["read", "40", "--duration", "8s", "--fault", "kill:replica1@2s", "--fault",
                    "start:replica1@4s"], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((run_folder(proc.stdout) / "summary.json").read_text())
    windows = summary["fault_windows"]
    assert set(windows) == {"kill replica1: before", "kill replica1: during", "kill replica1: after"}
    assert all(w["requests"] > 0 for w in windows.values())
    assert [p["fault"] for p in summary["planned_faults"]] == ["kill:replica1@2s", "start:replica1@4s"]
    assert all(f["planned"] for f in summary["nodes_lost"])
    assert "Planned faults: kill:replica1@2s done at" in proc.stdout and "Routing around replica1" in proc.stdout
    assert nodes.node_pid(topo.node("replica1"))
    sums = {n.name: sql.checksum(n, topo, "bench_idx.accounts") for n in topo.nodes}
    assert len(set(sums.values())) == 1


def waiting_for_a_position(topo: Settings, replica: str) -> bool:
    """Whether a statement (the run's catch-up: MASTER_GTID_WAIT) waits on `replica` for a GTID position."""
    function = sql.wait_gtid_sql(topo.flavour).split()[1].split("(")[0]
    with sql.admin(topo.node(replica), topo) as cur:
        cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND INFO LIKE %s",
                    (f"%{function}(%",))
        return int(cur.fetchone()[0]) > 0


def test_catch_up_is_timed_from_the_last_request_sent(topo: Settings) -> None:
    # replica2's SQL thread is stopped during the attack and held stopped (a state, not a time) until the run has
    # said the send is over and is seen waiting for replica2 to apply the master's position: the run waits for the
    # held replica, and its catch-up, timed from the send's end, spans the rest of the hold (when that moment comes,
    # and that the send's end is its origin, is test_the_catch_up_is_timed_from_the_send_s_end_not_from_vegetas)
    pattern = "*-write-30*/results.bin"
    earlier = set(newest_results(topo, pattern))
    proc = start_run(topo, ["write", "30", "--duration", "3s"])
    replica = topo.node("replica2")
    seen_waiting = released = None
    try:
        assert wait_until(lambda: any(p.stat().st_size > 0 for p in newest_results(topo, pattern) if p not in earlier),
                          120, interval=0.02)
        with sql.admin(replica, topo) as cur:
            cur.execute("STOP SLAVE SQL_THREAD")
        waiting, seen = read_until(proc, "waiting for the replicas' catch-up (timed from the last request sent)")
        assert waiting, seen
        assert wait_until(lambda: waiting_for_a_position(topo, "replica2"), 60, interval=0.02), \
            "the run did not wait for replica2's catch-up"
        seen_waiting = time.monotonic()  # the run's catch-up clock started before this
        with sql.admin(replica, topo) as cur:
            assert sql.replica_threads(cur, topo.flavour)["sql"] == "No"  # still held: it cannot have caught up
    finally:
        released = time.monotonic()
        with sql.admin(replica, topo) as cur:
            cur.execute("START SLAVE SQL_THREAD")
        out, err = finish(proc)
    assert proc.returncode == 0, out + err
    summary = json.loads((run_folder(out) / "summary.json").read_text())
    catch_up = summary["catch_up_s"]
    assert set(catch_up) == {"replica1", "replica2"} and None not in catch_up.values(), catch_up
    # begun before the run was seen waiting, ended only once replica2 applied after its release
    assert catch_up["replica2"] >= released - seen_waiting - 0.001, (catch_up, released - seen_waiting)
    assert summary["consistency"]["equal"] is True  # checked once replica2 had applied everything
    assert not any("did not catch up" in g for g in summary["guards"]), summary["guards"]
    assert "after the last request was sent" in out
    nodes.start_all(topo)


def test_a_replica_held_by_a_fault_is_left_out_of_the_consistency_check_and_the_block_says_so() -> None:
    """A replica a planned fault held when the last request was sent was never waited for: it is not "behind"
    (the check would say it did not catch up within 300 s, a wait that never took place) but left out, by name."""
    from replbench.core.results import summary_of
    from replbench.experiments.run import not_caught_up
    from replbench.report.block import _check_lines

    held = {"replica2": "stop-replication:replica2@3s"}
    assert not_caught_up({"replica1": 0.02, "replica2": None}, held) == []
    assert not_caught_up({"replica1": None, "replica2": None}, held) == ["replica1"]
    lines = _check_lines(summary_of({"consistency": {
        "table": "bench_idx.accounts", "checked": True, "equal": True, "scope": "table", "missing": [],
        "checksums": {"master": 7, "replica1": 7}, "held": held}}))
    assert lines == ["Consistency: CHECKSUM TABLE bench_idx.accounts equal on the nodes checked {'master': 7, "
                     "'replica1': 7}; replica2 left out: stop-replication:replica2@3s held it when the last "
                     "request was sent"]


def test_the_catch_up_is_timed_from_the_send_s_end_not_from_vegetas(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's catch-up clock, on a clock the test moves: it starts when the last request is sent (attack start
    + duration) with the master's position then, while vegeta still waits for its last answers; an attack that
    ended a second or more early (interrupted) times nothing."""
    from replbench.experiments import run as runs

    class Clock:
        now = 1000.0

        def monotonic(self) -> float:
            return self.now

        def sleep(self, seconds: float) -> None:
            self.now += seconds

    class Vegeta:  # the attack's end as the run sees it (threading.Event's is_set, wait)
        def __init__(self, ended: bool) -> None:
            self.ended = ended

        def is_set(self) -> bool:
            return self.ended

        def wait(self, timeout: float | None = None) -> bool:
            raise AssertionError("the catch-up waited for vegeta's end")

    clock = Clock()
    waits: list[tuple[float, str | None, float]] = []

    def wait_caught_up(settings: object, timeout: float, gtid: str | None = None,
                       replicas: object = None, unreachable: object = None) -> dict[str, float | None]:
        waits.append((clock.now, gtid, timeout))
        return {"replica1": 0.01, "replica2": 0.5}

    monkeypatch.setattr(runs, "time", clock)
    monkeypatch.setattr(runs.nodes, "master_gtid", lambda settings: "0-1-77")
    monkeypatch.setattr(runs.nodes, "wait_caught_up", wait_caught_up)

    def timed(vegeta_ended: bool) -> runs.CatchUp | None:
        run = object.__new__(runs.Run)  # the fields _time_catch_up reads, nothing started
        run.settings = None  # type: ignore[assignment]
        run.options = runs.RunOptions(duration=3.0, catch_up_timeout=60.0)
        run.handles = runs.Handles(attack_done=Vegeta(vegeta_ended))  # type: ignore[arg-type]
        return run._time_catch_up(runs.Clock(zero=1000.0, created=1000.0, started_up_s=None, start=2.0))

    got = timed(vegeta_ended=False)
    assert got is not None and got.send_end == pytest.approx(5.0)  # attack start + duration, on the run's clock
    assert waits == [(pytest.approx(1005.0), "0-1-77", 60.0)]
    assert got.seconds == {"replica1": 0.01, "replica2": 0.5} and got.error is None
    assert got.part is not None and (got.part.catch_up_held, got.part.catch_up_unreachable) == ({}, [])
    waits.clear()
    clock.now = 1000.0
    assert timed(vegeta_ended=True) is None and waits == []  # vegeta gone 5 s before the send's end: timed nothing


def test_lag_aware_routing_takes_a_stopped_replica_out_and_back(topo: Settings) -> None:
    proc = run_cli(["lag-spike", "30", "--duration", "8s", "--fault", "stop-replication:replica2@2s", "--fault",
                    "start-replication:replica2@5s"], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((run_folder(proc.stdout) / "summary.json").read_text())
    route = next(r for r in summary["routing"] if r["node"] == "replica2")
    assert route["last_served_s"] is None or route["last_served_s"] < route["back_at_s"]
    assert route["first_served_back_s"] is not None and route["first_served_back_s"] >= route["back_at_s"]


def test_requests_over_the_in_flight_bound_get_an_immediate_503(topo: Settings, tmp_path: Path) -> None:
    import socket

    from replbench.topology import appserver

    bounded = topo.with_overrides(admission="always", max_inflight=1, app_workers=1, app_port=topo.app_port + 7,
                                  state=str(tmp_path / "st"))  # its own app folder; the same nodes (TCP)
    appserver.start(bounded)
    held = socket.create_connection(("127.0.0.1", bounded.app_port))
    try:
        # a request whose body never comes stays in flight inside the handler (reading its body)
        held.sendall(b"POST /update_user HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 50\r\n\r\n")
        # a state, not a time: the worker holds it (/health is never bounded, and reports the count)
        assert wait_until(lambda: http(bounded, "GET", "/health")[2]["admission"]["in_flight"] == 1, 10)
        status, headers, body = http(bounded, "GET", "/users/1")
        assert status == 503 and headers.get("Retry-After") == "1" and "in flight" in body["error"]
        health = http(bounded, "GET", "/health")[2]
        assert health["admission"]["shed"] >= 1 and health["admission"]["limit"] == 1
    finally:
        held.close()
        appserver.stop(bounded)
    assert wait_until(lambda: http(topo, "GET", "/users/1")[0] == 200, 10)


def test_an_adaptive_bound_follows_the_answers_per_second(topo: Settings, tmp_path: Path) -> None:
    from replbench.topology import appserver

    adaptive = topo.with_overrides(admission="always", max_inflight=1, max_queue_ms=1000, app_workers=1,
                                   app_port=topo.app_port + 8,
                                   state=str(tmp_path / "st"))
    appserver.start(adaptive)
    try:
        assert http(adaptive, "GET", "/health")[2]["admission"]["limit"] == 1  # a fresh worker starts at its floor
        for _ in range(30):
            assert http(adaptive, "GET", "/users/1")[0] == 200
        # a state, not a time: the worker's once-a-second tune has counted the answers into its seconds (how many
        # fell in one second is the machine's speed; the bound's arithmetic on them is
        # test_an_adaptive_bound_is_the_best_remembered_seconds_answers_times_its_queue)
        assert wait_until(lambda: sum(http(adaptive, "GET", "/health")[2]["admission"]["rates"]) > 0, 20)
        admission = http(adaptive, "GET", "/health")[2]["admission"]
        assert admission["answered"] == 30 and admission["failed"] == 0  # the requests, not the health probes
        # 1000 ms of queue: the bound is the best remembered second's answers, never under the floor of 1
        assert admission["limit"] == max(1, max(admission["rates"]))
        assert admission["queue_ms"] == 1000
        assert admission["limit_low"] <= admission["limit"] <= admission["limit_high"]
    finally:
        appserver.stop(adaptive)


@pytest.mark.disruptive  # SIGKILLs a run mid-attack and every child of it (the app, when that run started it)
def test_a_run_killed_from_outside_is_marked_incomplete(topo: Settings) -> None:
    proc = start_run(topo, ["get", "23", "--duration", "30s"])  # a rate no other test uses
    assert wait_until(lambda: any(p.stat().st_size > 500 for p in newest_results(topo, "*-get-23*/results.bin")),
                      120)
    parent = psutil.Process(proc.pid)
    children = parent.children(recursive=True)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    for child in children:
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass
    folder = newest_results(topo, "*-get-23*")[-1]
    assert json.loads((folder / "meta.json").read_text())["status"] == "running"
    listed = run_cli(["list"], env_for(topo.state))
    assert f"marked {folder.name} incomplete" in listed.stderr
    assert json.loads((folder / "meta.json").read_text())["status"] == "incomplete"
    assert json.loads((folder / "summary.json").read_text())["status"] == "incomplete"
    appserver_restart = run_cli(["up"], env_for(topo.state))
    assert appserver_restart.returncode == 0, appserver_restart.stderr


def test_a_big_transaction_during_a_run_shows_who_served_the_reads_meanwhile(topo: Settings) -> None:
    # every row of the small set in one UPDATE, 1 s into a lag-aware read/write run (issue 26: what lag-aware reads
    # did meanwhile); the fault is done once both replicas applied it, and every node holds its fresh values
    rows = topo.accounts
    proc = run_cli(["lag-spike", "40", "--duration", "6s", "--fault", f"bigtx={rows}:master@1s"],
                   env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((run_folder(proc.stdout) / "summary.json").read_text())
    (planned,) = summary["planned_faults"]
    assert planned["fault"] == f"bigtx={rows}:master@1s" and planned["error"] is None
    big = planned["bigtx"]
    assert big["rows_changed"] == rows and big["table"] == "bench_idx.accounts" and big["master_s"] > 0
    assert set(big["replicas_applied_after_commit_s"]) == {"replica1", "replica2"}
    assert all(v is not None for v in big["replicas_applied_after_commit_s"].values())
    label = f"bigtx {rows:,} rows"
    windows = summary["fault_windows"]
    assert {f"{label}: before", f"{label}: during"} <= set(windows)
    assert sum(sum(w["served_by"].values()) for w in windows.values()) > 0  # each window says who served
    assert f"bigtx={rows}:master@1s: {rows:,} rows of bench_idx.accounts changed in" in proc.stdout
    # the incident is not the workload: its rows are left out of the row check, and the per-write figures say so
    check = summary["rows_checked"]
    assert check["planned_rows_left_out"] == rows and check["checked"] > 0 and check["share"] >= 0.99
    assert f"{rows:,} rows of the planned big transaction left out" in proc.stdout
    assert not any("did not change" in g for g in summary["guards"])
    assert f"includes the planned big transaction ({rows:,} rows of bench_idx.accounts)" in proc.stdout
    for node in topo.nodes:
        tagged = sql.query_one(node, topo, "SELECT COUNT(*) FROM bench_idx.accounts WHERE interests = %s",
                               (big["value"],))
        assert int(tagged) == rows, node.name


@pytest.mark.parametrize("spec", ["bigtx:master@1s", "bigtx=10:replica1@1s", "kill=5:replica1@1s",
                                  "bigtx=0:master@1s"])
def test_a_bad_bigtx_fault_exits_2(spec: str) -> None:
    code, _, err = run_main(["write", "10", "--duration", "2s", "--fault", spec])
    assert code == 2 and "bad fault" in err and "Traceback" not in err, err


def test_the_lag_splits_by_the_thread_that_holds_it(topo: Settings) -> None:
    # replica1 receives but applies nothing for 3 s (its SQL thread stopped); replica2 receives nothing from 2 s to
    # the end (its IO thread stopped, no restore in the plan: the run gives it back after, and waits no catch-up)
    proc = run_cli(["write", "100", "--duration", "7s", "--fault", "stop-sql-thread:replica1@2s", "--fault",
                    "start-sql-thread:replica1@5s", "--fault", "stop-io-thread:replica2@2s"], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = run_folder(proc.stdout)
    summary = json.loads((folder / "summary.json").read_text())
    lag = summary["lag"]
    # a replica held on purpose is not waited for (the wait could only run out its 300 s), and says so
    assert summary["catch_up_held"] == {"replica2": "stop-io-thread:replica2@2s"}
    assert summary["catch_up_s"]["replica2"] is None and summary["catch_up_s"]["replica1"] is not None
    assert "catch-up not measured: stop-io-thread:replica2@2s held it" in proc.stdout
    # and left out of the consistency check (never waited for), which the others pass
    consistency = summary["consistency"]
    assert consistency["checked"] and consistency["equal"], consistency
    assert consistency["held"] == {"replica2": "stop-io-thread:replica2@2s"}
    assert "replica2" not in consistency["checksums"]
    assert "replica2 left out: stop-io-thread:replica2@2s held it" in proc.stdout
    sql_stopped, io_stopped = lag["replica1"], lag["replica2"]
    assert sql_stopped["sql_mean_ms"] > 100 and sql_stopped["io_mean_ms"] < 0.1 * sql_stopped["sql_mean_ms"]
    assert io_stopped["io_mean_ms"] > 100 and io_stopped["io_p99_ms"] > 0.5 * io_stopped["p99_ms"]
    for figures in lag.values():  # the two shares add up to the whole
        assert figures["io_mean_ms"] + figures["sql_mean_ms"] == pytest.approx(figures["mean_ms"], abs=0.15)
    header = (folder / "timeline.csv").read_text().splitlines()[0].split(",")
    assert {"replica1_lag_ms", "replica1_io_lag_ms", "replica2_lag_ms", "replica2_io_lag_ms"} <= set(header)
    for name in ("replica1", "replica2"):  # replication is running again after the command
        with sql.admin(topo.node(name), topo) as cur:
            state = sql.replica_threads(cur, topo.flavour)
        assert state["io"] == "Yes" and state["sql"] == "Yes", (name, state)


@pytest.mark.parametrize("spec", ["stop-sql-thread:master@1s", "start-io-thread:master@1s"])
def test_a_thread_fault_on_the_master_exits_2(spec: str) -> None:
    code, _, err = run_main(["write", "10", "--duration", "2s", "--fault", spec])
    assert code == 2 and "applies to a replica" in err and "Traceback" not in err, err
