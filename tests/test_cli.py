"""The command line a DBA meets: help with defaults, --version, list, a subcommand's own usage on its errors,
--strict, a fast status, what each run records about its servers, and the one-way imports of the package."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from replbench import LAYERS, __version__
from replbench.core.config import ROOT, Settings

from .conftest import GET_RUN, SharedRuns, env_for, run_cli, run_folder, run_main


def test_help_shows_every_knob_with_its_reference_value() -> None:
    code, out, _ = run_main(["read", "--help"])
    assert code == 0
    text = " ".join(out.split())
    for flag in ("--binlog-annotate", "--binlog-compress", "--binlog-compress-min-len", "--parallel-threads",
                 "--parallel-mode", "--semi-sync", "--semi-sync-timeout-ms", "--sync-binlog", "--fault", "--strict"):
        assert flag in text, flag
    assert "reference on" in text and "reference 10000" in text and "(default: 30s)" in text


@pytest.mark.integration  # runs the vegeta binary for its version
def test_version() -> None:
    version = run_cli(["--version"], {})
    assert version.returncode == 0 and "replbench " in version.stdout and "vegeta v12.13.0" in version.stdout


def test_list() -> None:
    code, out, _ = run_main(["list"])
    assert code == 0
    assert "write-nopk" in out and "update_users×1" in out
    assert "binlog-format" in out and "5 cells" in out


def test_a_subcommands_error_prints_its_own_usage_then_the_error() -> None:
    code, _, err = run_main(["sweep", "read", "--repeat", "x"])
    assert code == 2
    lines = err.strip().splitlines()
    assert lines[0].startswith("usage: ./run.sh sweep") and lines[-1].startswith("./run.sh: error:")
    code, _, err = run_main(["apply-capacity", "write", "--sync-binlog", "-1"])
    assert code == 2 and "sync-binlog" in err.splitlines()[-1]
    for pinning, needle in (("replica7=0", "unknown group"), ("replica4=0", "not in this topology"),
                            ("replica1=99", "this machine does not have"), ("vegeta=0", "the drains send no")):
        code, _, err = run_main(["apply-capacity", "write", "--cpus", pinning])
        assert code == 2 and needle in err.splitlines()[-1], err


def test_strict_turns_a_tripped_guard_into_exit_1(topo: Settings) -> None:
    env = env_for(topo.state)
    # a guard trips (replica2 not replicating, for 2.5 s: longer than two of the lag monitor's 1 s status reads),
    # nothing else
    args = ["write", "20", "--duration", "3s", "--fault", "stop-replication:replica2@0s", "--fault",
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


def test_a_run_records_its_servers_non_default_variables_and_disk(shared_run: SharedRuns) -> None:
    proc = shared_run(*GET_RUN)  # get at 40/s for 2 s: test_run's run of get
    meta = json.loads((run_folder(proc.stdout) / "meta.json").read_text())
    master = meta["server_variables_not_default"]["master"]
    assert master["binlog_format"]["value"] == "ROW" and master["binlog_format"]["default"] == "MIXED"
    assert "sync_binlog" in master and "gtid_strict_mode" in master
    assert "server_id" not in master  # differs by construction, not a setting
    assert meta["disk"]["fsync_ms_median"] > 0 and meta["disk"]["filesystem"]
    cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    models = [line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")]
    assert meta["host"]["cpu_model"] == (models[0] if models else None)  # the kernel's own name for the CPU




def import_graph() -> dict[str, set[str]]:
    """replbench's modules ('measure.lag') and the modules each imports, relative and absolute alike."""
    package = ROOT / "replbench"
    modules = {".".join(p.relative_to(package).with_suffix("").parts): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        here = name.split(".")[:-1] if not name.endswith("__init__") else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[:len(here) - (node.level - 1)] if node.level > 1 else here
                    stem = [*base, *(node.module.split(".") if node.module else [])]
                elif node.module and node.module.startswith("replbench"):
                    stem = node.module.split(".")[1:]
                else:
                    continue
                candidates = [".".join(stem), *(".".join([*stem, a.name]) for a in node.names)]
            elif isinstance(node, ast.Import):
                candidates = [a.name.removeprefix("replbench.") for a in node.names if a.name.startswith("replbench.")]
            else:
                continue
            for c in candidates:
                target = c if c in modules else f"{c}.__init__" if f"{c}.__init__" in modules else None
                if target and target != name:
                    graph[name].add(target)
    return graph


def test_the_packages_show_the_pipeline_and_imports_run_one_way() -> None:
    level = {pkg: i for i, names in enumerate(LAYERS) for pkg in names}
    graph = import_graph()
    packages = {m.split(".")[0] for m in graph if "." in m}
    assert packages == set(level), packages ^ set(level)  # every subpackage has its place in the order
    loose = sorted(m for m in graph if "." not in m and m not in ("__init__", "__main__"))
    assert not loose, f"modules outside the subpackages: {loose}"
    for name, targets in graph.items():
        if "." not in name:
            continue
        for target in targets:
            if "." in target:
                src, dst = name.split(".")[0], target.split(".")[0]
                assert level[dst] >= level[src], f"{name} imports {target}, a layer above it"
    # no circle, between modules or between packages (inside one layer too)
    by_package = {p: {t.split(".")[0] for m, ts in graph.items() if m.split(".")[0] == p for t in ts
                      if "." in t and t.split(".")[0] != p} for p in packages}
    for edges in (graph, by_package):
        assert_no_circle(edges)


def assert_no_circle(edges: dict[str, set[str]]) -> None:
    seen: set[str] = set()

    def visit(node: str, stack: list[str]) -> None:
        assert node not in stack, "import circle: " + " -> ".join([*stack[stack.index(node):], node])
        if node in seen:
            return
        seen.add(node)
        for nxt in sorted(edges.get(node, ())):
            visit(nxt, [*stack, node])

    for node in sorted(edges):
        visit(node, [])


def test_the_version_is_written_once_in_the_code_and_the_same_in_pyproject() -> None:
    import tomllib

    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"] == __version__


def test_a_circle_is_found() -> None:
    with pytest.raises(AssertionError, match="import circle: a -> b -> a"):
        assert_no_circle({"a": {"b"}, "b": {"a"}})
    assert_no_circle({"a": {"b"}, "b": set()})


def test_the_app_imports_only_the_core() -> None:
    for path in (ROOT / "app").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("replbench"):
                assert node.module.startswith("replbench.core"), f"{path.name} imports {node.module}"


def test_report_md_holds_no_absolute_path() -> None:
    text = (ROOT / "report.md").read_text()
    assert "/work/" not in text and "/tmp/" not in text and "/root/" not in text
    for asset in (ROOT / "results" / "report-assets").rglob("*"):
        if asset.suffix in (".md", ".txt"):
            body = asset.read_text()
            assert "Results: /" not in body, asset


def test_the_sql_described_in_the_report_is_the_apps() -> None:
    from replbench.report.page import SQL_FRAGMENTS

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
    read, floor = data["figures"]["asyncmy/uvloop/read"], data["figures"]["asyncmy/uvloop/floor"]
    # each round's ratio is that round's endpoint over that same round's floor (not medians over rounds)
    assert read["ratio"] == [a / f for a, f in zip(read["app"], floor["app"])] and len(read["ratio"]) == 2
    order = sorted(p.name for p in (folder / "asyncmy-uvloop").iterdir())
    assert len(order) == 8  # two rounds of four runs


def test_bench_app_refuses_no_rounds_with_exit_2() -> None:
    code, _, err = run_main(["bench-app", "--repeat", "0"])
    assert code == 2 and err.splitlines()[-1].startswith("./run.sh: error:"), err


def test_bench_app_compares_the_find_users_shapes_asked(topo: Settings) -> None:
    proc = run_cli(["bench-app", "--find-users", "--shapes", "two-step,server-steps", "--rate", "40", "--duration",
                    "2s", "--repeat", "1"], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [line.split()[0] for line in proc.stdout.splitlines() if line.startswith(("two-step", "server-steps"))] \
        == ["two-step", "server-steps"]
    assert "replica CPU per query, server-steps against two-step:" in proc.stdout
    folder = ROOT / proc.stdout.split("data in ")[1].split()[0]
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == ["server-steps", "two-step"]


@pytest.mark.parametrize("bad", ["two-step", "two-step,two-step", "two-step,nosuch"])
def test_bench_app_refuses_fewer_than_two_known_shapes_with_exit_2(bad: str) -> None:
    code, _, err = run_main(["bench-app", "--find-users", "--shapes", bad])
    assert code == 2 and "--shapes takes" in err, err


def test_two_attackers_give_one_merged_report(topo: Settings) -> None:
    proc = run_cli(["get", "41", "--duration", "2s", "--attackers", "2"], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = run_folder(proc.stdout)
    assert sorted(p.name for p in folder.glob("results-*.bin")) == ["results-1.bin", "results-2.bin"]
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["requests"] == 41 * 2  # rate × duration, shared 21 + 20 per second
    assert len(summary["pipeline_cpu_s"]["per_attacker"]) == 2
    assert "2 attack processes" in proc.stdout
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["attack_options"]["attackers"] == 2


def test_no_attackers_exits_2() -> None:
    code, _, err = run_main(["get", "41", "--attackers", "0"])
    assert code == 2 and "--attackers" in err.splitlines()[-1], err


def test_a_rate_below_its_attackers_exits_2() -> None:
    code, _, err = run_main(["get", "3", "--attackers", "4"])
    assert code == 2 and "below its 4 attackers" in err.splitlines()[-1], err


def test_cpus_pins_every_group_and_a_run_without_it_unpins(topo: Settings) -> None:
    import os

    import psutil

    from replbench.topology import appserver, nodes

    env = env_for(topo.state)
    proc = run_cli(["get", "30", "--duration", "2s", "--cpus", "app=0,master=1,replica1=1,replica2=0,vegeta=1"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    meta = json.loads((run_folder(proc.stdout) / "meta.json").read_text())
    back = meta["cpus"]["read_back"]
    assert (back["app"], back["master"], back["replica1"], back["replica2"]) == ([0], [1], [1], [0])
    for thread in psutil.Process(nodes.node_pid(topo.master)).threads():
        assert os.sched_getaffinity(thread.id) == {1}
    # vegeta started already confined: its command is the taskset prefix for core 1, then vegeta itself
    assert meta["attack_command"][:3] == ["/usr/bin/taskset", "-c", "1"], meta["attack_command"]
    assert Path(meta["attack_command"][3]).name == "vegeta" and meta["attack_command"][4] == "attack"
    assert "Pinned cores: app 0 (" in proc.stdout
    proc = run_cli(["get", "30", "--duration", "1s"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    every = sorted(range(os.cpu_count() or 1))
    assert sorted(os.sched_getaffinity(nodes.node_pid(topo.master))) == every
    assert all(sorted(os.sched_getaffinity(p.pid)) == every for p in appserver.app_processes(topo))


def test_a_pinned_vegeta_starts_under_taskset_and_an_unpinned_one_bare(tmp_path: Path) -> None:
    from replbench.load import attack, cpus

    assert Path("/usr/bin/taskset").exists()  # util-linux: how vegeta starts already confined (cpus.taskset_prefix)
    assert cpus.taskset_prefix({3, 1}) == ["/usr/bin/taskset", "-c", "1,3"] and cpus.taskset_prefix(None) == []
    options = attack.AttackOptions(30, 2.0, max_connections=8, attackers=2)
    (tmp_path / "targets.json").write_text("")  # two attackers: each its part of it (split_targets)
    pinned = attack.Attack(Path("/opt/vegeta"), tmp_path, tmp_path / "targets.json", options, "get-30",
                           cpus.taskset_prefix({1}))
    assert all(c[:5] == ["/usr/bin/taskset", "-c", "1", "/opt/vegeta", "attack"] for c in pinned.commands)
    assert pinned.command == pinned.commands[0]  # what meta.json records as attack_command
    bare = attack.Attack(Path("/opt/vegeta"), tmp_path, tmp_path / "targets.json", options, "get-30",
                         cpus.taskset_prefix(cpus.parse("app=0").get("vegeta")))
    assert bare.command[:2] == ["/opt/vegeta", "attack"]


def test_bad_cpus_exit_2() -> None:
    for spec in ("app=9", "db=0", "app=1-0", "app=x", "app=0,app=1"):
        code, _, err = run_main(["get", "10", "--cpus", spec])
        assert code == 2 and "--cpus" in err.splitlines()[-1], spec


@pytest.mark.integration  # a shell pipe: two processes
def test_a_reader_that_leaves_the_pipe_early_is_not_a_failure() -> None:
    # `true` leaves before the harness has started, so every write of the listing meets a closed pipe
    proc = subprocess.run(f"{sys.executable} -m replbench list | true; echo ${{PIPESTATUS[0]}}", shell=True,
                          cwd=ROOT, text=True, capture_output=True, timeout=60, executable="/bin/bash")
    assert proc.stdout.strip() == "141" and proc.stderr == "", proc.stderr


def test_scenario_files_state_only_what_differs_from_the_defaults() -> None:
    import tomllib

    from replbench.core.scenario import DEFAULTS

    for path in sorted((ROOT / "scenarios").glob("*.toml")):
        data = tomllib.loads(path.read_text())
        tables = {"": data, **{k: v for k, v in data.items() if isinstance(v, dict)}}
        tables["requests"] = {k: v for r in data.get("requests", []) for k, v in r.items() if k == "weight"}
        for (table, key), default in DEFAULTS.items():
            assert tables.get(table, {}).get(key, object()) != default, f"{path.name} restates {table}.{key}"


def test_a_closed_loops_clients_are_checked_and_refused_where_no_closed_loop_fits() -> None:
    code, _, err = run_main(["write", "200", "--clients", "0"])
    assert code == 2 and "--clients must be from 1 to" in err.splitlines()[-1], err
    code, _, err = run_main(["write", "200", "--clients", "2", "--attackers", "2"])
    assert code == 2 and "leave out --attackers" in err.splitlines()[-1], err
    code, _, err = run_main(["sweep", "write", "--clients", "2"])
    assert code == 2 and "a sweep's ladder of rates has nothing to vary" in err.splitlines()[-1], err


def test_a_closed_loop_runs_n_clients_as_fast_as_they_are_answered(topo: Settings) -> None:
    """--clients 2: vegeta -rate=0 with two workers at most; the run records its clients, the block says so, and
    the rate given (3000/s, above what two clients reach here: 782/s was seen in a lane, above the 600/s this test
    once gave, and vegeta then sent targets twice) sized the targets without being judged."""
    proc = run_cli(["write", "3000", "--duration", "2s", "--clients", "2", "--checksum", "rows"],
                   env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = run_folder(proc.stdout)
    summary = json.loads((folder / "summary.json").read_text())
    meta = json.loads((folder / "meta.json").read_text())
    # ok, or ok-with-warnings where the host lets the replicas fall behind two clients sending flat out (a lane
    # beside it): what must not trip is the achieved rate, which a closed loop never asked
    assert summary["clients"] == 2 and summary["status"] in ("ok", "ok-with-warnings"), summary["guards"]
    assert not any("goodput" in guard for guard in summary["guards"]), summary["guards"]
    assert "-rate=0" in meta["attack_command"] and "-max-workers=2" in meta["attack_command"]
    assert meta["attack_options"]["max_workers"] == 2
    assert "Closed loop: 2 client(s)" in proc.stdout and "of 3000/s" not in proc.stdout
    assert 0 < summary["goodput"] and summary["requests"] <= meta["targets"]["count"]  # no target sent twice
    # the targets' count kept beside the requests, for the guard that says when vegeta looped them (test_rules)
    assert summary["targets"] == meta["targets"]["count"] and not any("targets:" in g for g in summary["guards"])
