"""The command line a DBA meets: help with defaults, --version, list, a subcommand's own usage on its errors,
--strict, a fast status, what each run records about its servers, and the one-way imports of the package."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

from replbench.config import ROOT, Settings

from .conftest import env_for, run_cli
from .test_run import run_folder


def test_help_shows_every_knob_with_its_reference_value() -> None:
    proc = run_cli(["read", "--help"], {})
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    for flag in ("--binlog-annotate", "--binlog-compress", "--binlog-compress-min-len", "--parallel-threads",
                 "--parallel-mode", "--semi-sync", "--semi-sync-timeout-ms", "--sync-binlog", "--fault", "--strict"):
        assert flag in text, flag
    assert "reference on" in text and "reference 10000" in text and "(default: 30s)" in text


def test_version_and_list() -> None:
    version = run_cli(["--version"], {})
    assert version.returncode == 0 and "replbench " in version.stdout and "vegeta v12.13.0" in version.stdout
    listing = run_cli(["list"], {})
    assert listing.returncode == 0
    assert "write-nopk" in listing.stdout and "update_users×1" in listing.stdout
    assert "binlog-format" in listing.stdout and "5 cells" in listing.stdout


def test_a_subcommands_error_prints_its_own_usage_then_the_error() -> None:
    proc = run_cli(["sweep", "read", "--repeat", "x"], {})
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("usage: ./run.sh sweep") and lines[-1].startswith("./run.sh: error:")
    proc = run_cli(["apply-capacity", "write", "--sync-binlog", "-1"], {})
    assert proc.returncode == 2 and "sync-binlog" in proc.stderr.splitlines()[-1]


def test_strict_turns_a_tripped_guard_into_exit_1(topo: Settings) -> None:
    env = env_for(topo.state)
    # a guard trips (replica2 not replicating, for 2.5 s: longer than two of the lag monitor's 1 s status reads),
    # nothing else
    args = ["write", "20", "--duration", "4s", "--fault", "stop-replication:replica2@0s", "--fault",
            "start-replication:replica2@2.5s"]
    relaxed = run_cli(args, env)
    assert relaxed.returncode == 0, relaxed.stdout + relaxed.stderr
    assert "WARNING" in relaxed.stdout
    strict = run_cli([*args, "--strict"], env)
    assert strict.returncode == 1, strict.stdout + strict.stderr
    run_cli(["up"], env)


def test_status_is_fast_by_default_and_counts_rows_when_asked(topo: Settings) -> None:
    env = env_for(topo.state)
    quick = run_cli(["status"], env)
    assert quick.returncode == 0 and "bench_idx" not in quick.stdout
    rows = run_cli(["status", "--rows"], env)
    assert rows.returncode == 0 and "bench_nopk" in rows.stdout and "20,000" in rows.stdout


def test_a_run_records_its_servers_non_default_variables_and_disk(topo: Settings) -> None:
    proc = run_cli(["get", "20", "--duration", "1s"], env_for(topo.state))
    meta = json.loads((run_folder(proc.stdout) / "meta.json").read_text())
    master = meta["server_variables_not_default"]["master"]
    assert master["binlog_format"]["value"] == "ROW" and master["binlog_format"]["default"] == "MIXED"
    assert "sync_binlog" in master and "gtid_strict_mode" in master
    assert "server_id" not in master  # differs by construction, not a setting
    assert meta["disk"]["fsync_ms_median"] > 0 and meta["disk"]["filesystem"]
    assert meta["host"]["cpu_model"] is None or isinstance(meta["host"]["cpu_model"], str)


LAYERS = [
    {"cli"},
    {"commands", "benchcommands"},
    {"run", "sweep", "study", "applycap", "report", "compare"},
    {"bringup", "topology", "dataset", "appserver", "knobs", "attack", "sampling", "lag", "binlog", "counters",
     "timeline", "targets", "scenario", "studyfile", "studymetrics", "nodesampler", "faults", "servervars",
     "records", "install", "links", "cpus", "nodeexporter", "rowcheck"},
    {"stats", "args", "sql", "processes", "progress", "harnesslog", "config", "topofile", "reference"},
]


def test_imports_run_one_way() -> None:
    level = {name: i for i, names in enumerate(LAYERS) for name in names}
    modules = {p.stem for p in (ROOT / "replbench").glob("*.py")} - {"__init__", "__main__"}
    assert modules <= set(level), modules - set(level)
    for name in modules:
        tree = ast.parse((ROOT / "replbench" / f"{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                targets = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
                for target in targets:
                    if target in level and target != name:
                        assert level[target] >= level[name], f"{name} imports {target}, a layer above it"


def test_report_md_holds_no_absolute_path() -> None:
    text = (ROOT / "report.md").read_text()
    assert "/work/" not in text and "/tmp/" not in text and "/root/" not in text
    for asset in (ROOT / "results" / "report-assets").rglob("*"):
        if asset.suffix in (".md", ".txt"):
            body = asset.read_text()
            assert "Results: /" not in body, asset


def test_the_sql_described_in_the_report_is_the_apps() -> None:
    from replbench.report import SQL_FRAGMENTS

    handlers = (ROOT / "app" / "handlers.py").read_text()
    for fragment in SQL_FRAGMENTS:
        assert fragment in handlers, fragment


def test_bench_app_measures_the_floor_beside_the_endpoints_and_the_load_generator(topo: Settings) -> None:
    proc = run_cli(["bench-app", "--rate", "40", "--duration", "2s", "--load", "--repeat", "2"],
                   env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith(("asyncmy", "aiomysql"))]
    assert [r.split()[2] for r in rows] == ["floor", "get", "read", "write"]
    assert all("×" in r for r in rows[1:]) and "×" not in rows[0]  # each endpoint as a multiple of the floor
    assert "2 interleaved round(s)" in proc.stdout
    assert "a single round trip (get_user, one primary-key SELECT) costs" in proc.stdout
    assert "bare `vegeta attack -output=FILE`" in proc.stdout and "× bare)" in proc.stdout
    folder = ROOT / proc.stdout.split("data in ")[1].split()[0]
    data = json.loads((folder / "bench-app.json").read_text())
    ratios = data["figures"]["asyncmy/uvloop/read"]["ratio"]
    assert len(ratios) == 2 and all(r is None or r > 0 for r in ratios)
    order = sorted(p.name for p in (folder / "asyncmy-uvloop").iterdir())
    assert len(order) == 8  # two rounds of four runs
    assert run_cli(["bench-app", "--repeat", "0"], {}).returncode == 2


def test_bench_app_compares_the_find_users_shapes_asked(topo: Settings) -> None:
    proc = run_cli(["bench-app", "--find-users", "--shapes", "two-step,server-steps", "--rate", "40", "--duration",
                    "2s", "--repeat", "1"], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [line.split()[0] for line in proc.stdout.splitlines() if line.startswith(("two-step", "server-steps"))] \
        == ["two-step", "server-steps"]
    assert "replica CPU per query, server-steps against two-step:" in proc.stdout
    folder = ROOT / proc.stdout.split("data in ")[1].split()[0]
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == ["server-steps", "two-step"]
    for bad in ("two-step", "two-step,two-step", "two-step,nosuch"):
        bad_run = run_cli(["bench-app", "--find-users", "--shapes", bad], {})
        assert bad_run.returncode == 2 and "--shapes takes" in bad_run.stderr, bad


def test_two_attackers_give_one_merged_report(topo: Settings) -> None:
    proc = run_cli(["get", "41", "--duration", "3s", "--attackers", "2"], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = run_folder(proc.stdout)
    assert sorted(p.name for p in folder.glob("results-*.bin")) == ["results-1.bin", "results-2.bin"]
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["requests"] == 41 * 3  # rate × duration, shared 21 + 20 per second
    assert len(summary["pipeline_cpu_s"]["per_attacker"]) == 2
    assert "2 attack processes" in proc.stdout
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["attack_options"]["attackers"] == 2
    assert run_cli(["get", "41", "--attackers", "0"], {}).returncode == 2


def test_cpus_pins_every_group_and_a_run_without_it_unpins(topo: Settings) -> None:
    import os

    import psutil

    from replbench import appserver, topology

    env = env_for(topo.state)
    proc = run_cli(["get", "30", "--duration", "2s", "--cpus", "app=0,master=1,replica1=1,replica2=0,vegeta=1"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    meta = json.loads((run_folder(proc.stdout) / "meta.json").read_text())
    back = meta["cpus"]["read_back"]
    assert (back["app"], back["master"], back["replica1"], back["replica2"]) == ([0], [1], [1], [0])
    for thread in psutil.Process(topology.node_pid(topo.master)).threads():
        assert os.sched_getaffinity(thread.id) == {1}
    assert "vegeta=1" in " ".join(meta["attack_command"]) or "/usr/bin/taskset" in meta["attack_command"]
    assert "Pinned cores: app 0 (" in proc.stdout
    proc = run_cli(["get", "30", "--duration", "1s"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    every = sorted(range(os.cpu_count() or 1))
    assert sorted(os.sched_getaffinity(topology.node_pid(topo.master))) == every
    assert all(sorted(os.sched_getaffinity(p.pid)) == every for p in appserver.app_processes(topo))


def test_bad_cpus_exit_2() -> None:
    for spec in ("app=9", "db=0", "app=1-0", "app=x", "app=0,app=1"):
        proc = run_cli(["get", "10", "--cpus", spec], {})
        assert proc.returncode == 2 and "--cpus" in proc.stderr.splitlines()[-1], spec


def test_a_reader_that_leaves_the_pipe_early_is_not_a_failure() -> None:
    # `true` leaves before the harness has started, so every write of the listing meets a closed pipe
    proc = subprocess.run(f"{sys.executable} -m replbench list | true; echo ${{PIPESTATUS[0]}}", shell=True,
                          cwd=ROOT, text=True, capture_output=True, timeout=60, executable="/bin/bash")
    assert proc.stdout.strip() == "141" and proc.stderr == "", proc.stderr
