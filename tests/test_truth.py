"""Every figure measures what its label says (issue: CPU net of idle, settle between units, semi-sync's label,
binlog syncs), on the small topology."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

from replbench.core import sql
from replbench.core.config import Settings
from replbench.experiments import prepare
from replbench.measure.poslag import PositionLag
from replbench.topology import nodes

from .conftest import env_for, run_cli, run_folder


def run(topo: Settings, *args: str) -> tuple[dict, dict, str]:
    proc = run_cli([*args], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = run_folder(proc.stdout)
    return (json.loads((folder / "summary.json").read_text()), json.loads((folder / "meta.json").read_text()),
            proc.stdout)


def test_cpu_is_reported_gross_and_net_of_the_idle_cost(topo: Settings) -> None:
    summary, _, out = run(topo, "write", "40", "--duration", "3s")
    idle, net, gross = summary["cpu_idle_per_s"], summary["cpu_seconds_net"], summary["cpu_seconds"]
    assert set(idle) >= {"master", "replica1", "replica2", "app", "harness"}
    for group in ("master", "replica1", "replica2"):
        expected = max(0.0, gross[group] - idle[group] * summary["cpu_span_s"])
        assert abs(net[group] - expected) < 0.002, (group, net[group], expected)
        assert summary["cpu_ms_per_success_net"][group] <= summary["cpu_ms_per_success"][group]
    assert "CPU-ms per successful request net of idle: " in out and "Idle CPU, subtracted" in out
    # each net figure with its resolution, from the idle window's one-second samples (20 s at 40/s)
    assert summary["idle_samples"] >= 10 and set(summary["cpu_seconds_net_resolution"]) >= {"master", "replica1"}
    assert all(v >= 0 for v in summary["cpu_seconds_net_resolution"].values())
    assert "Resolution of the net figures (2 standard errors" in out
    # the master's disk line: its binlog syncs beside InnoDB's fsyncs, one per group commit with sync_binlog=1
    master = summary["replication"]["nodes"]["master"]
    assert master["sync_binlog"] == 1 and master["binlog_syncs"] == master["binlog_group_commits"] > 0
    assert "binlog syncs (sync_binlog=1)" in out


def test_a_run_waits_for_the_previous_work_to_drain_and_says_so(topo: Settings) -> None:
    def busy_master() -> None:  # a statement of the previous unit, still running on the master
        with sql.admin(topo.master, topo) as cur:
            cur.execute("SELECT SLEEP(20)")

    thread = threading.Thread(target=busy_master)
    thread.start()
    try:
        summary, meta, out = run(topo, "get", "20", "--duration", "2s")
    finally:
        thread.join()
    settle = meta["settle"]
    assert any("statements still running on the master" in w for w in settle["waited_for"])
    assert not any("statements still running" in w for w in settle["why"])  # it waited for the statement to end
    assert settle["waited_s"] > 0 and ("Settled before the run: " in out or "NOT settled before the run" in out)
    assert summary["settle"] == settle


def test_settle_waits_out_the_last_units_connections_in_time_wait() -> None:
    # the server closes first, as the app did to vegeta's timed-out connections: its side sits in TIME_WAIT, 60 s
    with socket.create_server(("127.0.0.1", 0), backlog=64) as server:
        port = server.getsockname()[1]
        assert prepare.time_wait_reason(port) == ""
        for _ in range(3000):  # more than 5 % of any ephemeral range up to 60,000 ports
            client = socket.create_connection(("127.0.0.1", port))
            accepted, _ = server.accept()
            accepted.close()
            client.close()
    reason = prepare.time_wait_reason(port)
    assert "connections to the app in TIME_WAIT (the last unit's; near drained at " in reason, reason
    assert reason.startswith("3,000 connections"), reason  # each server-closed connection counted once


def test_semi_syncs_block_line_names_mariadbs_counter_for_what_it_is(topo: Settings) -> None:
    _, _, out = run(topo, "write", "20", "--duration", "2s", "--semi-sync", "after_sync")
    line = next(line for line in out.splitlines() if line.startswith("Semi-sync: "))
    assert "MariaDB's own counters" in line and "not what a commit pays" in line


def test_lag_comes_from_gtid_positions_to_a_few_ms_and_the_heartbeat_stays_beside_it(topo: Settings) -> None:
    summary, _, out = run(topo, "write", "40", "--duration", "3s")
    assert 0 < summary["lag_floor_ms"] < summary["heartbeat_ms"]  # the position reads' interval, not 100 ms
    for name in ("replica1", "replica2"):
        lag = summary["lag"][name]
        assert lag["method"] == "gtid positions" and lag["samples"] > 0
        assert lag["heartbeat_p99_ms"] is not None
    assert "(GTID positions): p50" in out and "Lag floor: positions read every" in out


def test_position_lag_follows_a_replica_that_stops_applying_and_returns_to_zero(topo: Settings, tmp_path: Path) -> None:
    replica = topo.node("replica1")
    sampler = PositionLag(topo, tmp_path / "positions.csv", time.monotonic())
    sampler.start()
    try:
        with sql.admin(replica, topo) as cur:
            cur.execute("STOP SLAVE SQL_THREAD")
        with sql.admin(topo.master, topo) as cur:
            for i in range(5):
                cur.execute("UPDATE bench_idx.accounts SET updated_at = NOW() WHERE id = %s", (i + 1,))
        assert nodes.wait_caught_up(topo, 30, replicas=(topo.node("replica2"),))["replica2"] is not None
        time.sleep(0.5)  # replica1 stays behind meanwhile
        behind = [v for _, v in sampler.series("replica1", 0, float("inf"))][-5:]
        assert behind and min(behind) > 0, behind  # not applied: its lag grows from the master's first sight
        assert sampler.series("replica2", 0, float("inf"))[-1][1] == 0  # applied everything
    finally:
        with sql.admin(replica, topo) as cur:
            cur.execute("START SLAVE SQL_THREAD")
    deadline = time.monotonic() + 60  # a bound on the wait, not a timing assertion
    while time.monotonic() < deadline and sampler.series("replica1", 0, float("inf"))[-1][1] != 0:
        time.sleep(0.05)
    sampler.stop()
    assert sampler.series("replica1", 0, float("inf"))[-1][1] == 0
    rows = (tmp_path / "positions.csv").read_text().splitlines()
    assert rows[0] == "elapsed_s,node,position,lag_ms" and any(",master," in r for r in rows)
