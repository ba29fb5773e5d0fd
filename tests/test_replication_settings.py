"""Replication settings as knobs, the workloads where ROW costs most, disk and commit figures, and replica apply
capacity — against the real small topology."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest

from replbench.core import sql
from replbench.core.config import Settings
from replbench.core.records import STATUS_SUCCEEDED
from replbench.measure import counters
from replbench.topology import knobs, nodes
from replbench.topology.knobs import Knobs

from .conftest import (
    BULK_RUN,
    DRAIN_RUN,
    WRITE_RUN,
    SemiSyncRuns,
    SharedRuns,
    env_for,
    replicating,
    run_cli,
    run_folder,
    run_main,
)


def test_knob_values_are_checked_and_case_insensitive() -> None:
    assert Knobs.from_values({"binlog_format": "row", "binlog_row_image": "minimal"}).binlog_format == "ROW"
    assert Knobs.from_values({"semi_sync": "AFTER_SYNC"}).semi_sync == "after_sync"
    for bad in ({"binlog_format": "ROWS"}, {"parallel_mode": "optimistic2"}, {"binlog_compress_min_len": 5},
                {"parallel_mode": "conservative"}, {"semi_sync_timeout_ms": 50}, {"parallel_threads": "x"},
                {"nosuch": 1}):
        with pytest.raises(ValueError):
            Knobs.from_values(bad)
    assert Knobs().changed() == {} and Knobs(binlog_annotate="off").describe() == "binlog_annotate=off"


def test_every_knob_is_applied_on_its_nodes_read_back_and_restored(topo: Settings) -> None:
    setting = Knobs(binlog_format="STATEMENT", binlog_row_image="NOBLOB", binlog_annotate="off",
                    binlog_compress="on", binlog_compress_min_len=64, sync_binlog=0, flush_log_at_trx_commit=2,
                    parallel_threads=2, parallel_mode="conservative", semi_sync="after_commit",
                    semi_sync_timeout_ms=500)
    try:
        back = knobs.apply(topo, setting)
        assert knobs.mismatches(setting, back) == []
        for node in topo.nodes:
            values = back[node.name]
            assert (values["binlog_format"], values["binlog_row_image"], values["binlog_annotate_row_events"],
                    values["log_bin_compress"], values["log_bin_compress_min_len"], values["sync_binlog"],
                    values["innodb_flush_log_at_trx_commit"]) == ("STATEMENT", "NOBLOB", "OFF", "ON", "64", "0", "2")
        assert back["master"]["rpl_semi_sync_master_enabled"] == "ON"
        assert back["master"]["rpl_semi_sync_master_wait_point"] == "AFTER_COMMIT"
        assert back["master"]["rpl_semi_sync_master_timeout"] == "500"
        for replica in ("replica1", "replica2"):
            assert back[replica]["slave_parallel_threads"] == "2"
            assert back[replica]["slave_parallel_mode"] == "conservative"
            assert back[replica]["rpl_semi_sync_slave_enabled"] == "ON"
            assert back[replica]["rpl_semi_sync_master_enabled"] == "OFF"  # never on a replica
        assert replicating(topo)
    finally:
        back = knobs.apply(topo, Knobs())
    assert knobs.mismatches(Knobs(), back) == []
    assert back["replica1"]["slave_parallel_threads"] == "0" and back["master"]["sync_binlog"] == "1"
    assert replicating(topo)


def test_parallel_apply_keeps_replication_running_and_the_next_run_does_not_inherit_it(topo: Settings) -> None:
    # one run for both: parallel apply (with annotate off too) replicates and checksums equal, and the next plain
    # run puts every setting back
    env = env_for(topo.state)
    proc = run_cli(["write", "60", "--duration", "2s", "--parallel-threads", "4", "--parallel-mode", "optimistic",
                    "--binlog-annotate", "OFF"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((run_folder(proc.stdout) / "summary.json").read_text())
    assert summary["consistency"]["equal"] is True
    assert replicating(topo)
    meta = json.loads((run_folder(proc.stdout) / "meta.json").read_text())
    assert meta["knobs_changed"] == {"binlog_annotate": "off", "parallel_threads": 4}  # optimistic: the reference
    proc = run_cli(["write", "20", "--duration", "1s"], env)
    meta = json.loads((run_folder(proc.stdout) / "meta.json").read_text())
    assert meta["knobs_readback"]["master"]["binlog_annotate_row_events"] == "ON"
    assert meta["knobs_readback"]["replica2"]["slave_parallel_threads"] == "0"


def test_semi_sync_counts_acked_transactions_without_fallback(semi_sync_runs: SemiSyncRuns) -> None:
    proc = semi_sync_runs.near
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((run_folder(proc.stdout) / "summary.json").read_text())
    semi = summary["replication"]["nodes"]["master"]["semi_sync"]
    assert semi["acked"] >= summary["binlog"]["successful_writes"] and semi["fell_back"] == 0
    assert semi["avg_tx_wait_us"] is not None and semi["avg_tx_wait_us"] > 0
    assert "Semi-sync: " in proc.stdout and " acked, 0 fell back to async" in proc.stdout


@pytest.mark.parametrize("fmt", ["ROW", "STATEMENT"])
def test_write_bulk_bytes_per_row_and_per_write(topo: Settings, shared_run: SharedRuns, fmt: str) -> None:
    if fmt == "ROW":
        proc = shared_run(*BULK_RUN)  # write-bulk at 10/s, --binlog-format ROW (test_costmodel fits on it too)
    else:
        proc = run_cli(["write-bulk", "5", "--duration", "2s", "--binlog-format", fmt], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((run_folder(proc.stdout) / "summary.json").read_text())
    b = summary["binlog"]
    rows_per_write = b["rows_changed"] / b["successful_writes"]
    assert rows_per_write == 100  # every request changes its 100 rows
    master = summary["replication"]["nodes"]["master"]
    assert master["transactions"] == b["successful_writes"]
    if fmt == "ROW":  # one row image per row: per write ≈ K × per row
        assert b["bytes_per_write"] == pytest.approx(100 * b["bytes_per_row"], rel=0.01)
        assert b["bytes_per_row"] > 100
    else:  # one statement per write, whatever K is
        assert b["bytes_per_write"] < 1000 and b["bytes_per_row"] < 10
    assert "bytes per row changed" in proc.stdout


def test_rows_changed_come_from_userstat_and_from_the_handler_counters_while_it_is_off(topo: Settings) -> None:
    master = topo.node("master")
    counters.enable(topo)
    assert counters.APP_ROWS in counters.node_snapshot(master, topo, None).status
    with sql.admin(master, topo) as cur:
        cur.execute("SET GLOBAL userstat = OFF")
    try:  # no figure rather than a frozen one: describe() then counts by the handlers less the beats
        assert counters.APP_ROWS not in counters.node_snapshot(master, topo, None).status
    finally:
        counters.enable(topo)


def test_io_csv_holds_fsyncs_and_bytes_written_per_node(shared_run: SharedRuns) -> None:
    proc = shared_run(*WRITE_RUN)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = run_folder(proc.stdout)
    with open(folder / "io.csv") as f:
        rows = list(csv.DictReader(f))
    assert {r["node"] for r in rows} == {"master", "replica1", "replica2"}
    master = [r for r in rows if r["node"] == "master" and r["innodb_fsyncs_per_s"]]
    assert any(float(r["innodb_fsyncs_per_s"]) > 0 for r in master)
    assert any(float(r["write_kb_per_s"] or 0) > 0 for r in master)
    assert any(float(r["binlog_commits_per_s"]) > 0 for r in master)
    summary = json.loads((folder / "summary.json").read_text())
    node = summary["replication"]["nodes"]["master"]
    assert node["fsyncs_per_write"] > 0 and node["kb_written_per_write"] > 0 and node["commits_per_group"] >= 1
    assert "Disk per successful write: master " in proc.stdout


@pytest.mark.disruptive  # resets the dataset (./run.sh reset)
def test_write_nopk_makes_each_replica_scan_per_row(topo: Settings) -> None:
    proc = run_cli(["write-nopk", "4", "--duration", "2s"], env_for(topo.state))
    # 8 statements of 10 rows: 80 scans of the small set's bench_nopk per replica, done well inside the 60 s
    # catch-up cap on any machine, so nothing fails (a replica left behind would be a guard, not a failure)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((run_folder(proc.stdout) / "summary.json").read_text())
    assert summary["status"] in STATUS_SUCCEEDED, (summary["guards"], summary["errors"])
    assert None not in summary["catch_up_s"].values() and summary["consistency"]["equal"] is True, summary
    nodes = summary["replication"]["nodes"]
    # the master scans the table once per 10-row statement; under ROW a serial replica scans per row
    master_reads = nodes["master"]["rows_read_per_row_changed"]
    for replica in ("replica1", "replica2"):
        assert nodes[replica]["rows_read_per_row_changed"] > 2 * master_reads, nodes
    assert summary["catch_up_timeout_s"] == 60
    reset = run_cli(["reset"], env_for(topo.state))
    assert reset.returncode == 0, reset.stderr


def test_apply_capacity_reports_each_replica_and_leaves_replication_running(topo: Settings,
                                                                           shared_run: SharedRuns) -> None:
    made = shared_run.made_of(*DRAIN_RUN)  # 300 writes at 100/s (test_costmodel fits on its drains too)
    proc = made.proc
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(line for line in proc.stderr.splitlines() if "→" in line)
    folder = topo.results / "apply-capacity" / line.rsplit("/", 1)[-1].strip()
    data = json.loads((folder / "apply.json").read_text())
    assert data["master"]["transactions"] == 300
    for replica in ("replica1", "replica2"):
        entry = data["replicas"][replica]
        assert entry["transactions"] == 300 and entry["apply_rate_trx_per_s"] > 0 and entry["capacity_ratio"] > 0
    assert made.replicating_after  # read right after the command, before any other test's run
    assert "replica1: applied 300 trx" in proc.stdout
    # each replica alone: replica2 started applying only once replica1 had finished (its SQL thread held till then)
    assert data["method"] == "alone" and "each replica alone" in proc.stdout
    for replica in ("replica1", "replica2"):
        assert data["replicas"][replica]["others_applying_at_start"] == [], data["replicas"][replica]
        assert data["replicas"][replica]["idle_cpu_per_s"] is not None
        # its own dirty pages forced out after its drain, counted per applied transaction
        back = data["replicas"][replica]["writeback"]
        assert back["dirty_pages"] > 0 and back["pages_flushed"] > 0 and back["write_bytes"] > 0, back
        assert f"{replica} write-back (its dirty pages forced out after the drain" in proc.stdout


def test_apply_capacity_together_drains_every_replica_at_once(topo: Settings) -> None:
    """Both replicas at once, each pinned to a core of its own (--cpus: a replica's capacity on the cores it is
    given); every group gets every core back afterwards."""
    last = (os.cpu_count() or 1) - 1
    proc = run_cli(["apply-capacity", "write", "--writes", "200", "--rate", "100", "--together",
                    "--cpus", f"replica1=0,replica2={last}"], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    everything = sorted(os.sched_getaffinity(nodes.node_pid(topo.replicas[0]) or 0))  # read right after it
    line = next(line for line in proc.stderr.splitlines() if "→" in line)
    data = json.loads((topo.results / "apply-capacity" / line.rsplit("/", 1)[-1].strip() / "apply.json").read_text())
    assert data["method"] == "together" and "--together" in proc.stdout
    assert data["replicas"]["replica1"]["others_applying_at_start"] == ["replica2"]
    assert data["replicas"]["replica2"]["others_applying_at_start"] == ["replica1"]
    assert data["cpus"]["read_back"]["replica1"] == [0] and data["cpus"]["read_back"]["replica2"] == [last]
    assert data["cpus"]["read_back"]["master"] == list(range(last + 1))  # not named: every core
    assert f"Pinned during the drains (--cpus): replica1 on core(s) 0; replica2 on core(s) {last}" in proc.stdout
    assert "of its 1 pinned core(s)" in proc.stdout
    assert everything == list(range(last + 1))
    assert replicating(topo)


def test_live_apply_capacity_times_each_replica_on_what_another_client_wrote(topo: Settings) -> None:
    """Any client writes to the master (here a thread of plain INSERTs, nothing of replbench's) while the replicas'
    SQL threads are held for the window; each replica then drains it alone, timed."""
    import threading

    env = env_for(topo.state)
    proc = run_cli(["apply-capacity", "--live", "2s"], env)  # nothing writes: nothing to apply, said in one line
    assert proc.returncode == 1 and "no transaction reached the master's binlog" in proc.stdout, proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr and replicating(topo)
    with sql.admin(topo.master, topo) as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS livewin")
        cur.execute("CREATE TABLE IF NOT EXISTS livewin.t (id INT AUTO_INCREMENT PRIMARY KEY, v INT, KEY (v))")
    done = threading.Event()

    def client() -> None:
        with sql.admin(topo.master, topo) as cur:
            while not done.is_set():
                cur.execute("INSERT INTO livewin.t (v) VALUES (1), (2)")
                done.wait(0.02)

    held = topo.node("replica1")  # held by hand at the window's start (as for a replay of it): left as it is
    with sql.admin(held, topo) as cur:
        cur.execute(sql.stop_replica_sql(topo.flavour))
    writer = threading.Thread(target=client, daemon=True)
    writer.start()
    try:
        proc = run_cli(["apply-capacity", "--live", "4s", "--replica", "replica2"], env)
        with sql.admin(held, topo) as cur:
            still_held = sql.replica_threads(cur, topo.flavour)
    finally:
        done.set()
        writer.join()
        nodes.ensure_replicating(held, topo)
    assert still_held["io"] == "No" and still_held["sql"] == "No", still_held
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(line for line in proc.stderr.splitlines() if "→" in line)
    folder = topo.results / "apply-capacity" / line.rsplit("/", 1)[-1].strip()
    data = json.loads((folder / "apply.json").read_text())
    live = data["live"]
    assert data["method"] == "live" and data["scenario"] is None and live["short"] is True
    with (folder / "window.csv").open() as f:
        samples = [(float(r["t_s"]), int(r["master_app_trx"])) for r in csv.DictReader(f)]
    assert len(samples) == live["samples"] >= 4 and samples[-1][1] - samples[0][1] == live["transactions"] > 0
    assert data["master"]["transactions"] == live["transactions"]  # the counters' count: the samples' own
    assert list(data["replicas"]) == ["replica2"]
    for replica in ("replica2",):
        entry = data["replicas"][replica]
        # it applied its backlog (what queued from its SQL thread's stop to the window's end), each insert a
        # transaction of two rows
        assert entry["transactions"] >= live["transactions"] and entry["rows"] > 0, entry
        assert entry["apply_rate_trx_per_s"] > 0 and entry["capacity_ratio"] > 0, entry
        assert f"{replica}: applied {entry['transactions']:,} trx" in proc.stdout
    assert "Window: " in proc.stdout and "Short window" in proc.stdout
    # the master's CPU over the window, per transaction: gross, since the client wrote before it opened; no replica
    # followed (replica1 held by hand, replica2 held by the command)
    cpu = live["cpu"]
    assert list(cpu) == ["master"] and live["idle_trx"] > 0 and cpu["master"]["net"] is False, live
    assert cpu["master"]["transactions"] == live["transactions"] and cpu["master"]["cpu_ms_per_trx"] > 0, cpu
    assert "CPU over the window, the master: " in proc.stdout and "gross: the client was already writing" in \
        proc.stdout
    with (folder / "window.csv").open() as f:
        assert next(csv.reader(f)) == ["t_s", "master_app_trx", "cpu_s_master"]
    # replica1 left replicating this time: it follows the window, its CPU per transaction a following replica's
    writer = threading.Thread(target=client, daemon=True)
    done.clear()
    writer.start()
    try:
        proc = run_cli(["apply-capacity", "--live", "3s", "--replica", "replica2"], env)
    finally:
        done.set()
        writer.join()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(line for line in proc.stderr.splitlines() if "→" in line)
    data = json.loads((topo.results / "apply-capacity" / line.rsplit("/", 1)[-1].strip() / "apply.json").read_text())
    cpu = data["live"]["cpu"]
    assert cpu["replica1"]["role"] == "following" and cpu["replica1"]["cpu_ms_per_trx"] > 0, cpu
    assert list(data["replicas"]) == ["replica2"] and "replica1 (following it, its SQL thread not held)" in \
        proc.stdout
    assert replicating(topo)
    with sql.admin(topo.master, topo) as cur:
        cur.execute("DROP DATABASE livewin")


def test_a_captured_binlog_is_replayed_as_a_held_replicas_relay_logs_and_a_wrong_position_refused(
        topo: Settings, tmp_path: Path) -> None:
    """The master's own binlog, captured while replica1 stood still, replayed on replica1 by its SQL thread: it
    applies exactly the transactions after its position, then replicates from the master again; a replay of a
    file it has already applied, or of files out of order, is refused in one line before anything runs."""
    env = env_for(topo.state)
    replica = topo.node("replica1")
    with sql.admin(topo.master, topo) as cur:
        cur.execute("FLUSH BINARY LOGS")  # a file of its own, starting before replica1's position
        cur.execute("CREATE DATABASE IF NOT EXISTS replayed")
        cur.execute("CREATE TABLE IF NOT EXISTS replayed.t (id INT AUTO_INCREMENT PRIMARY KEY, v INT, KEY (v))")
        for i in range(10):  # in the file before replica1's position: replayed again, they would collide
            cur.execute("INSERT INTO replayed.t (v) VALUES (%s)", (i,))
    assert all(v is not None for v in nodes.wait_caught_up(topo, 60).values())
    with sql.admin(replica, topo) as cur:
        cur.execute(sql.stop_replica_sql(topo.flavour))
    try:
        with sql.admin(topo.master, topo) as cur:
            for i in range(150):
                cur.execute("INSERT INTO replayed.t (v) VALUES (%s), (%s)", (i, -i))
            cur.execute("SHOW MASTER STATUS")
            current = str(sql.one_row(cur)[0])
        copy = tmp_path / current
        shutil.copyfile(topo.master.datadir / current, copy)
        proc = run_cli(["apply-capacity", "--binlog", str(copy)], env)
    finally:
        nodes.ensure_replicating(replica, topo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(line for line in proc.stderr.splitlines() if "→" in line)
    data = json.loads((topo.results / "apply-capacity" / line.rsplit("/", 1)[-1].strip() / "apply.json").read_text())
    assert data["method"] == "binlog" and data["replay"]["transactions"] == 150, data["replay"]
    assert data["replay"]["relog"] is None and data["replay"]["events_bytes"] > 0, data["replay"]  # the files as given
    entry = data["replicas"]["replica1"]
    assert entry["transactions"] == 150 and entry["apply_rate_trx_per_s"] > 0 and entry["cpu_ms_per_trx"] is not None
    assert "replica1: applied 150 trx" in proc.stdout and "Files: " in proc.stdout
    assert replicating(topo) and nodes.transactions_behind(replica, topo) == 0 or \
        all(v is not None for v in nodes.wait_caught_up(topo, 60).values())
    with sql.admin(replica, topo) as cur:
        cur.execute("SELECT COUNT(*) FROM replayed.t")
        assert sql.one_row(cur)[0] == 310  # applied once: the replay, then the master's stream from its end
    before = sorted((topo.results / "apply-capacity").iterdir())
    for args, words in ((["--binlog", str(copy)], "replica1 has applied every transaction"),
                        (["--binlog", str(copy), str(copy)], "does not follow")):
        proc = run_cli(["apply-capacity", *args], env)
        err = proc.stderr.strip().splitlines()
        assert proc.returncode == 1 and words in err[-1] and "Traceback" not in proc.stderr, proc.stderr
    assert sorted((topo.results / "apply-capacity").iterdir()) == before  # a refusal leaves no folder
    assert replicating(topo)
    with sql.admin(topo.master, topo) as cur:
        cur.execute("DROP DATABASE replayed")


@pytest.mark.parametrize("args", [
    ["write", "10", "--binlog-annotate", "maybe"], ["write", "10", "--parallel-mode", "optimistic2"],
    ["write", "10", "--parallel-mode", "conservative"], ["write", "10", "--binlog-compress-min-len", "5"],
    ["write", "10", "--semi-sync", "always"], ["write", "10", "--semi-sync-timeout-ms", "100"],
    ["apply-capacity", "read"], ["apply-capacity", "write", "--writes", "0"], ["apply-capacity"],
    ["apply-capacity", "write", "--live", "5m"], ["apply-capacity", "--live", "soon"],
    ["apply-capacity", "--live", "5m", "--rate", "100"], ["apply-capacity", "--live", "5m", "--together"],
    ["apply-capacity", "write", "--replica", "replica1"], ["apply-capacity", "--live", "5m", "--replica", "replica9"],
    ["apply-capacity", "--binlog", "/nonexistent/binlog.000001"], ["apply-capacity", "--live", "5m", "--binlog", "x"],
    ["apply-capacity", "--binlog", "x", "--binlog-format", "STATEMENT"],
    ["apply-capacity", "--live", "5m", "--workload", "sysbench-write-only"],
    ["apply-capacity", "--live", "5m", "--workload", "nosuch", "--rate", "10"],
    ["apply-capacity", "--live", "5m", "--workload", "sysbench-write-only", "--rate", "10", "--replica", "replica1"],
    ["write", "10", "--fault", "explode:replica1@1s"], ["write", "10", "--fault", "kill:replica9@1s"],
    ["write", "10", "--duration", "5s", "--fault", "kill:replica1@9s"],
    ["write", "10", "--fault", "stop-replication:master@1s"],
])
def test_bad_knob_and_fault_values_exit_2_with_one_line(args: list[str]) -> None:
    code, out, err = run_main(args)
    assert code == 2, out + err
    assert "error:" in err.splitlines()[-1] and "Traceback" not in err


def test_replication_is_running_again_after_a_command(topo: Settings) -> None:
    with sql.admin(topo.node("replica2"), topo) as cur:
        cur.execute(sql.stop_replica_sql(topo.flavour))
    assert not replicating(topo)
    proc = run_cli(["up"], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert replicating(topo)
