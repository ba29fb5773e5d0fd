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

from .conftest import env_for, http, run_cli, run_folder, wait_until


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


def finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()


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


def test_the_master_killed_during_warm_up_is_one_line_and_a_record(topo: Settings) -> None:
    (topo.state / "warm.json").unlink(missing_ok=True)  # forces the buffer-pool warm-up
    proc = start_run(topo, ["get", "40", "--duration", "2s"])
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:  # the run's first progress line comes as its preparation starts
        seen.append(line)
        if "applying settings" in line:
            os.kill(nodes.node_pid(topo.master), signal.SIGKILL)
            break
    out, rest = finish(proc)
    err = "".join(seen) + rest
    assert proc.returncode == 1, out + err
    assert "Traceback" not in out + err
    folder = newest_results(topo, "*-get-40*")[-1]
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["status"] == "FAILED"
    assert (folder / "harness.log").read_text().strip()
    nodes.start_all(topo)


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


def test_catch_up_is_timed_from_the_last_request_sent(topo: Settings) -> None:
    # replica2's SQL thread is paused during the attack and resumed 1.5 s after the last request was sent: timed
    # from the send's end, its catch-up includes those 1.5 s (timed after vegeta's wait it was always ~0)
    proc = start_run(topo, ["write", "30", "--duration", "3s"])
    assert wait_until(lambda: any(p.stat().st_size > 0 for p in newest_results(topo, "*-write-30*/results.bin")),
                      120, interval=0.02)
    replica = topo.node("replica2")
    with sql.admin(replica, topo) as cur:
        cur.execute("STOP SLAVE SQL_THREAD")
    assert proc.stderr is not None
    for line in proc.stderr:  # the run says when the send has ended and it waits for the replicas
        if "waiting for the replicas' catch-up" in line:
            break
    time.sleep(1.5)  # replica2 held 1.5 s past that moment, however long the attack's own tail took
    with sql.admin(replica, topo) as cur:
        cur.execute("START SLAVE SQL_THREAD")
    out, err = finish(proc)
    summary = json.loads((run_folder(out) / "summary.json").read_text())
    assert summary["catch_up_s"]["replica2"] >= 1.0, summary["catch_up_s"]
    assert summary["catch_up_s"]["replica1"] < summary["catch_up_s"]["replica2"]
    assert "after the last request was sent" in out
    nodes.start_all(topo)


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
        time.sleep(0.5)
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
        assert wait_until(lambda: max(http(adaptive, "GET", "/health")[2]["admission"]["rates"] or [0]) >= 2, 10)
        admission = http(adaptive, "GET", "/health")[2]["admission"]
        # 1000 ms of queue: the bound is the best remembered second's answers, above the floor of 1
        assert admission["limit"] == max(1, max(admission["rates"])) >= 2
        assert admission["queue_ms"] == 1000 and admission["limit_high"] >= admission["limit"]
    finally:
        appserver.stop(adaptive)


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
    proc = run_cli(["write", "10", "--duration", "2s", "--fault", spec], {})
    assert proc.returncode == 2 and "bad fault" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
