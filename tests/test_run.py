"""One benchmark run end to end against the small topology: files, formats, consistency, Ctrl-C, bad arguments."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from replbench.core import sql
from replbench.core.config import ROOT, Settings
from replbench.core.records import RESULTS_SCHEMA
from replbench.core.scenario import available, load
from replbench.measure.cpu import SAMPLE_INTERVAL
from replbench.topology import nodes
from replbench.topology.knobs import Knobs

from .conftest import (
    FIXTURES,
    IDLE_SAMPLED_RUN,
    SharedRuns,
    env_for,
    run_cli,
    run_folder,
    run_main,
    wait_until,
)

RUN_FILES = ("meta.json", "targets.json", "results.bin", "report.txt", "report.json", "hdrplot.txt", "plot.html",
             "latency.png", "cpu.csv", "memory.csv", "lag.csv", "positions.csv", "io.csv", "timeline.csv",
             "summary.json", "block.txt")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def short_args(scenario: str, rate: int = 40, duration: str = "2s") -> tuple[str, ...]:
    # a scenario's own faults come later than a short run lasts: the same faults, early
    early = [arg for i, spec in enumerate(load(scenario).faults)
             for arg in ("--fault", f"{spec.split('@')[0]}@{0.4 + 0.6 * i:g}s")]
    return (scenario, str(rate), "--duration", duration, *early)


def short_run(topo: Settings, scenario: str, rate: int = 40, duration: str = "2s", **env: str):
    return run_cli(list(short_args(scenario, rate, duration)), env_for(topo.state, **env))


@pytest.fixture
def scenario_run(shared_run: SharedRuns):
    """short_run at the defaults (40/s, 2 s), made once per scenario in the session (conftest's shared runs): the
    run of each scenario and the tests that read the same run's files (vegeta's report layout, a write run's binlog
    and checksum, and other modules' readers of WRITE_RUN and GET_RUN) share it. No test writes into a run's
    folder."""

    def get(scenario: str) -> subprocess.CompletedProcess[str]:
        return shared_run(*short_args(scenario))

    return get


def each_scenario() -> list:
    """Every scenario; one whose own faults kill a node (failover) disturbs the topology, so it runs last."""
    return [pytest.param(name, marks=pytest.mark.disruptive)
            if any(spec.split(":")[0] == "kill" for spec in load(name).faults) else name for name in available()]


@pytest.mark.parametrize("scenario", each_scenario())
def test_a_run_of_each_scenario_leaves_every_file(scenario_run, scenario: str) -> None:
    proc = scenario_run(scenario)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = run_folder(proc.stdout)
    for name in RUN_FILES:
        assert (folder / name).is_file() and (folder / name).stat().st_size > 0, name
    assert (folder / "attack.log").is_file()  # vegeta's stderr, normally empty
    assert (folder / "latency.png").read_bytes()[:8] == PNG_MAGIC
    # the printed block: CPU lines in the reference's style, then vegeta's own report verbatim
    assert proc.stdout.startswith("Gunicorn cpu: ")
    assert "\nMysql cpu: " in proc.stdout and " + 2 * " in proc.stdout and "\nvegeta cpu: " in proc.stdout
    assert (folder / "report.txt").read_text().rstrip("\n") in proc.stdout
    summary = json.loads((folder / "summary.json").read_text())
    # what vegeta sent, by its own report: 80 asked (40/s for 2 s); a slow scenario (write-nopk's scans) on a busy
    # host may leave vegeta without a free worker for a tick, so fewer, never more
    sent = json.loads((folder / "report.json").read_text())["requests"]
    assert summary["requests"] == sent and 0 < sent <= 80 and summary["status"] in ("ok", "ok-with-warnings"), sent
    assert summary["memory_mb"]["harness"]["max"] > 0 and summary["memory_mb"]["master"]["max"] > 0
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["status"] == summary["status"] and meta["exit_code"] == 0
    assert meta["scenario_file"] == (ROOT / "scenarios" / f"{scenario}.toml").read_text()
    assert meta["versions"]["vegeta"] == "v12.13.0" and meta["versions"]["mariadb"]
    assert meta["knobs"] == Knobs().as_dict() and meta["knobs_changed"] == {}
    assert meta["host"]["calibration_score"] > 0 and meta["pid"] > 0
    cap = meta["attack_options"]["max_connections"]
    assert 0 < cap < meta["attack_options"]["open_files_limit"]
    assert f"-max-connections={cap}" in meta["attack_command"]


def test_report_txt_has_vegetas_layout(scenario_run) -> None:
    proc = scenario_run("get")
    folder = run_folder(proc.stdout)
    ours = [line.split("  ")[0] for line in (folder / "report.txt").read_text().splitlines()[:7]]
    theirs = [line.split("  ")[0] for line in (FIXTURES / "report.txt").read_text().splitlines()[:7]]
    assert ours == theirs


def test_cpu_and_lag_csv_cover_every_node(shared_run: SharedRuns) -> None:
    # a run with an idle window of 4 s (longer than the session's): cpu.csv, one sample a second, has some before
    # the attack whatever the box's scheduling (test_truth reads the same run's net figures)
    proc = shared_run(*IDLE_SAMPLED_RUN)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = run_folder(proc.stdout)
    with open(folder / "cpu.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows and set(rows[0]) == {"elapsed_s", "app", "master", "replica1", "replica2", "vegeta", "harness",
                                     "host_busy", "host_steal"}
    assert max(float(r["app"]) for r in rows) > 0
    with open(folder / "lag.csv") as f:
        lag_rows = list(csv.DictReader(f))
    assert {r["replica"] for r in lag_rows} == {"replica1", "replica2"}
    summary = json.loads((folder / "summary.json").read_text())
    assert set(summary["cpu_ms_per_request"]) == {"app", "master", "replica1", "replica2", "vegeta", "harness"}
    meta = json.loads((folder / "meta.json").read_text())
    assert summary["schema_version"] == meta["schema_version"] == RESULTS_SCHEMA  # the files' shape, for readers
    # a run that is its process's whole command counts the process's start-up in its harness time
    assert set(summary["harness_time_s"]) == {"start_up", "before_attack", "idle_window", "attack", "after_attack"}
    # one clock for every sampler (its zero set once, before any starts; cpu.csv once ran ~2 s behind lag.csv):
    # on that clock both files hold samples before the attack (the heartbeat calibration) and through its end, to
    # within their period (cpu.csv one a second: the attack's last part-second ends before its next sample)
    start, end = summary["attack_start_s"], summary["attack_start_s"] + summary["duration_s"]
    for name, samples, period in (("cpu.csv", rows, SAMPLE_INTERVAL), ("lag.csv", lag_rows, 0.1)):
        times = [float(r["elapsed_s"]) for r in samples]
        assert min(times) < start and max(times) >= end - period, (name, min(times), max(times), start, end)


def test_write_run_binlog_and_checksum(scenario_run) -> None:
    proc = scenario_run("write")  # 40/s for 2 s: 80 writes
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((run_folder(proc.stdout) / "summary.json").read_text())
    assert summary["consistency"]["equal"] is True
    assert len(set(summary["consistency"]["checksums"].values())) == 1
    binlog = summary["binlog"]
    assert binlog["successful_writes"] == 80
    assert 150 < binlog["bytes_per_write"] < 2000  # a single-row ROW/FULL update: hundreds of bytes
    assert "Consistency: CHECKSUM TABLE bench_idx.accounts equal on all three nodes" in proc.stdout
    admission = summary["app_admission"]
    assert admission["admitted"] == 80 and admission["shed"] == 0 and admission["workers"] == 2
    # the live progress line's source: every answer counted by the app, with its latency in the histogram
    assert admission["answered"] == 80 and admission["failed"] == 0
    # and its last line, after the workers published once more (an attack may end before the first tick)
    assert "app answered 80, 0 failed, app p99 ≤" in proc.stderr and " ms in all" in proc.stderr, proc.stderr
    # nothing runs beside the attack process: vegeta writes results.bin itself, no tee, no live report
    assert set(summary["pipeline_cpu_s"]) == {"vegeta"}
    meta = json.loads((run_folder(proc.stdout) / "meta.json").read_text())
    assert "-output=" in str(meta["attack_command"])
    assert "App admission: 80 admitted, 0 shed" in proc.stdout
    # its own dirty pages forced out after the drain and counted as its write-back, every node at rest after it
    back = summary["writeback"]
    assert back["writes"] == 80 and back["at_rest"] is True, back
    for name, node in back["nodes"].items():
        assert node["dirty_pages"] > 0 and node["pages_flushed"] > 0 and node["write_bytes"] > 0, (name, node)
        assert node["kb_written_per_write_with_writeback"] > node["run_kb_written_per_write"], (name, node)
    assert "Per successful write, in the run → with its write-back: master " in proc.stdout
    # what limited it, from its CPU against each resource's capacity (analysis/limits)
    assert summary["limit"]["resource"] in summary["limit"]["utilisation"], summary["limit"]
    assert "Limited by: " in proc.stdout and "Steady CPU against capacity: host CPU " in proc.stdout


def test_the_apps_latency_histogram_gives_the_progress_p99() -> None:
    from app.tuning import APP_LATENCY_BOUNDS_MS as bounds
    from replbench.core.stats import histogram_percentile
    from replbench.topology.appserver import answered_since

    counts = [0] * (len(bounds) + 1)
    counts[10], counts[20] = 98, 2  # 98 answers in bucket 10, 2 slow ones in bucket 20
    assert histogram_percentile(counts, bounds, 50) == bounds[10]
    assert histogram_percentile(counts, bounds, 99) == bounds[20]
    assert histogram_percentile([0] * len(counts), bounds, 99) is None
    counts[-1] = 1000  # beyond the last bound: reported as the last bound, never an index error
    assert histogram_percentile(counts, bounds, 99) == bounds[-1]
    before = {"answered": 10, "failed": 1, "latency_counts": [0] * len(counts)}
    now = {"answered": 110, "failed": 3, "latency_counts": counts}
    assert answered_since(before, now) == {"requests": 100, "failed": 2, "p99_ms": bounds[-1]}


def test_knobs_are_applied_and_recorded(topo: Settings) -> None:
    proc = run_cli(["write-noindex", "40", "--duration", "2s", "--binlog-row-image", "MINIMAL",
                    "--sync-binlog", "0", "--flush-log-at-trx-commit", "2"], env_for(topo.state))
    assert proc.returncode == 0, proc.stderr
    folder = run_folder(proc.stdout)
    meta = json.loads((folder / "meta.json").read_text())
    for node in ("master", "replica1", "replica2"):
        back = meta["knobs_readback"][node]
        assert (back["binlog_row_image"], back["sync_binlog"], back["innodb_flush_log_at_trx_commit"]) == \
            ("MINIMAL", "0", "2")
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["binlog"]["bytes_per_write"] is not None


@pytest.mark.disruptive  # diverges replica1, then resets the dataset
def test_a_diverged_replica_fails_the_run_loudly_and_reset_repairs_it(topo: Settings) -> None:
    with sql.admin(topo.node("replica1"), topo) as cur:
        cur.execute("SET SESSION sql_log_bin = 0")
        cur.execute("UPDATE bench_idx.accounts SET city = 'Diverged' WHERE id = 11")
    proc = short_run(topo, "write", rate=20)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "DIFFERENT" in proc.stdout and "RUN FAILED" in proc.stdout
    summary = json.loads((run_folder(proc.stdout) / "summary.json").read_text())
    assert summary["status"] == "FAILED" and summary["consistency"]["equal"] is False
    reset = run_cli(["reset"], env_for(topo.state))
    assert reset.returncode == 0, reset.stderr
    sums = {n.name: sql.checksum(n, topo, "bench_idx.accounts") for n in topo.nodes}
    assert len(set(sums.values())) == 1


@pytest.mark.disruptive  # diverges replica2, then resets the dataset
def test_a_rows_checksum_compares_the_rows_written_and_catches_their_divergence(topo: Settings) -> None:
    # MINIMAL row images carry only the changed columns, so a column a replica holds differently stays different
    # in the rows the run updates: the rows-scope check must see it
    proc = run_cli(["write", "20", "--duration", "2s", "--checksum", "rows"], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((run_folder(proc.stdout) / "summary.json").read_text())
    check = summary["consistency"]
    assert check["scope"] == "rows" and check["equal"] is True and 30 <= check["rows"] <= 42, check
    assert f"Consistency: the {check['rows']:,} rows this run wrote in bench_idx.accounts" in proc.stdout
    with sql.admin(topo.node("replica2"), topo) as cur:
        cur.execute("SET SESSION sql_log_bin = 0")
        cur.execute("UPDATE bench_idx.accounts SET birth_date = '1901-01-01'")
    try:
        proc = run_cli(["write", "20", "--duration", "2s", "--checksum", "rows", "--binlog-row-image", "MINIMAL"],
                       env_for(topo.state))
        assert proc.returncode == 1, proc.stdout + proc.stderr
        summary = json.loads((run_folder(proc.stdout) / "summary.json").read_text())
        assert summary["consistency"]["scope"] == "rows" and summary["consistency"]["equal"] is False
        assert "DIFFERENT" in proc.stdout and "RUN FAILED" in proc.stdout
    finally:
        assert run_cli(["reset"], env_for(topo.state)).returncode == 0


def our_vegetas(folder_hint: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if "vegeta" in cmdline and folder_hint in cmdline:
            found.append(proc)
    return found


def test_ctrl_c_keeps_partial_results_and_leaves_no_stray_process(topo: Settings) -> None:
    env = dict(os.environ, **env_for(topo.state))
    proc = subprocess.Popen([sys.executable, "-m", "replbench", "get", "50", "--duration", "60s"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    results = Path(topo.results)
    try:
        assert wait_until(lambda: any(p.stat().st_size > 2000 for p in results.glob("*-get-50*/results.bin")),
                          timeout=120)
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out + err
    folder = run_folder(out)
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["status"] == "interrupted" and meta["exit_code"] == 130
    summary = json.loads((folder / "summary.json").read_text())
    assert 0 < summary["requests"] < 3000
    assert (folder / "report.txt").is_file() and (folder / "latency.png").is_file()
    assert "Status: interrupted" in out
    assert not our_vegetas(str(topo.state))
    nodes.start_all(topo)  # the topology itself keeps running


@pytest.mark.parametrize("args", [
    ["nosuch", "100"], ["read", "0"], ["read", "-5"], ["read", "100001"], ["read", "fast"],
    ["read", "100", "--duration", "10x"], ["read", "100", "--duration", "0s"], ["read"],
    ["write", "100", "--binlog-format", "ROWS"], ["read", "100", "--flush-log-at-trx-commit", "7"],
])
def test_bad_run_arguments_exit_2_and_list_scenarios(args: list[str]) -> None:
    code, out, err = run_main(args)
    assert code == 2, out + err
    assert "read-noindex" in err  # the scenarios are listed


def test_binlog_counts_bytes_across_a_rotation_and_names_the_new_file() -> None:
    from replbench.measure import binlog

    before = binlog.BinlogSnapshot([("binlog.000001", 1000), ("binlog.000002", 500)], 0, 0)
    after = binlog.BinlogSnapshot([("binlog.000001", 1000), ("binlog.000002", 900), ("binlog.000003", 300)], 0, 0)
    assert binlog.written_bytes(before, after) == 700
    assert binlog.new_files(before, after) == ["binlog.000003"]
    assert binlog.new_files(after, after) == []
