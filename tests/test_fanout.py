"""--replicas N on the small topology: a third replica is cloned from replica1, replicates and serves reads, a run
reports it like the others, and --replicas 2 goes back (the third stopped, its datadir kept); brought back, it
catches up unless it is too far behind (then cloned again), off a link whose proxy is gone; a bad N exits 2."""

from __future__ import annotations

import json
import re

import pytest

from replbench.core import sql
from replbench.core.config import ConfigError, Settings, recorded_replicas
from replbench.core.nodenames import node_names
from replbench.experiments import studyfile
from replbench.topology import fanout, links, nodes

from .conftest import env_for, http, replicating, run_cli, run_folder, run_main, wait_until


@pytest.mark.parametrize("value", ["5", "-1", "three"])
def test_a_bad_replica_count_exits_2_with_usage(value: str) -> None:
    code, out, err = run_main(["up", "--replicas", value])
    assert code == 2, out + err
    assert "usage" in err.lower() and "replicas" in err


def test_settings_name_the_nodes_of_n_replicas(tmp_path) -> None:
    four = Settings.from_env(env_for(tmp_path, REPLBENCH_REPLICAS="4"))
    assert four.node_names == node_names(4) == ("master", "replica1", "replica2", "replica3", "replica4")
    assert [n.server_id for n in four.nodes] == [1, 2, 3, 4, 5]
    assert [n.port for n in four.nodes] == [four.port_base + i for i in range(5)]
    assert recorded_replicas(tmp_path) == 2 and Settings.from_env(env_for(tmp_path)).node_names == node_names(2)
    with pytest.raises(ConfigError, match="replicas must be from 1 to 4"):
        Settings.from_env(env_for(tmp_path, REPLBENCH_REPLICAS="5"))


def test_the_memory_warning_counts_the_pool_the_run_sets(tmp_path) -> None:
    # fan-out's cells set their own pool: the warning of a change of replicas must count that one, not the default's
    from replbench.topology.fanout import memory_warning

    settings = Settings.from_env(env_for(tmp_path, REPLBENCH_REPLICAS="4", REPLBENCH_BUFFER_POOL="64M"))
    assert memory_warning(settings) is None and memory_warning(settings, "64M") is None
    warning = memory_warning(settings, "1024G")
    assert warning is not None and warning.startswith("5 nodes × (1024G pool + 0.5 GiB)")


def test_a_study_cell_sets_the_replica_count_and_a_bad_one_is_refused(tmp_path) -> None:
    good = tmp_path / "fan.toml"
    good.write_text('description = "d"\nscenarios = ["write"]\nrate = 10\nduration = "2s"\n'
                    'data_state = "no reset"\n[vary]\nreplicas = [1, 3]\n')
    spec = studyfile.load(str(good))
    assert [c.replicas for c in spec.cells] == [1, 3]
    assert spec.cells[1].app() == {"replicas_asked": 3} and spec.cells[1].changed() == {"replicas": "3"}
    bad = tmp_path / "bad.toml"
    bad.write_text(good.read_text().replace("[1, 3]", "[1, 5]"))
    with pytest.raises(studyfile.StudyError, match="replicas must be from 1 to 4"):
        studyfile.load(str(bad))


def test_a_fault_on_a_replica_the_topology_lacks_exits_2(tmp_path) -> None:
    code, out, err = run_main(["write", "10", "--duration", "2s", "--fault", "kill:replica3@1s"],
                              env_for(tmp_path / "state"))  # a topology of the default two replicas
    assert code == 2, out + err
    assert "replica3: not in this topology" in err


@pytest.mark.disruptive  # adds replica3, then removes it
def test_a_third_replica_replicates_serves_reads_and_goes_away(topo: Settings) -> None:
    env = env_for(topo.state)
    three = topo.with_overrides(replicas_asked=3)
    third = three.node("replica3")
    try:
        proc = run_cli(["up", "--replicas", "3"], env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "added replica3 (a copy of replica1" in proc.stderr
        assert recorded_replicas(topo.state) == 3 and topo.node_names == node_names(3)  # kept for the next command
        assert nodes.node_pid(third) and replicating(three)
        assert sql.query_one(third, three, "SELECT @@server_id") == 4
        with sql.admin(three.master, three) as cur:
            cur.execute("UPDATE bench_idx.accounts SET city = 'Thirdtown' WHERE id = 11")
        assert wait_until(lambda: sql.query_one(third, three, "SELECT city FROM bench_idx.accounts WHERE id = 11")
                          == "Thirdtown", timeout=30)
        status, _, health = http(three, "GET", "/health")
        assert status == 200 and set(health["nodes"]) == set(node_names(3))
        assert wait_until(lambda: http(three, "GET", "/health")[2]["nodes"]["replica3"]["healthy"], timeout=20)
        served = 0
        for i in range(60):
            http(three, "GET", f"/users/{i + 1}")
        served = http(three, "GET", "/health")[2]["nodes"]["replica3"]["served"]
        assert served > 0  # least-in-flight routing with round-robin ties reaches every replica

        run = run_cli(["write", "20", "--duration", "2s"], env)  # a run without --replicas: the topology's three
        assert run.returncode == 0, run.stdout + run.stderr
        summary = json.loads((run_folder(run.stdout) / "summary.json").read_text())
        assert {"replica1", "replica2", "replica3"} <= set(summary["cpu_ms_per_request"])
        assert set(summary["lag"]) == {"replica1", "replica2", "replica3"}
        assert summary["binlog"]["dump_threads"] == 3
        assert set(summary["binlog"]["replica_received_bytes"]) == {"replica1", "replica2", "replica3"}
        assert "Mysql cpu: " in run.stdout and " + 3 * " in run.stdout
        assert "equal on all four nodes" in run.stdout
    finally:
        back = run_cli(["up", "--replicas", "2"], env)
    assert back.returncode == 0, back.stdout + back.stderr
    assert "stopped replica3 (its datadir is kept" in back.stderr
    assert recorded_replicas(topo.state) == 2 and topo.node_names == node_names(2)
    assert nodes.node_pid(third) is None and (third.datadir / "mysql").is_dir()
    assert replicating(topo)
    status, _, health = http(topo, "GET", "/health")
    assert set(health["nodes"]) == set(node_names(2))
    down_and_up = run_cli(["status"], env)
    assert "replica3" not in down_and_up.stdout


@pytest.mark.disruptive  # adds, stops, resumes and clones replica3
def test_a_stopped_replica_far_behind_is_cloned_and_one_close_behind_resumes(topo: Settings, monkeypatch) -> None:
    env = env_for(topo.state)
    three = topo.with_overrides(replicas_asked=3)
    third = three.node("replica3")
    try:
        proc = run_cli(["up", "--replicas", "3"], env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        links.apply(three, links.parse_all(["replica3=1ms"]))  # stopped on a link, as a study's link cell leaves it
        proc = run_cli(["up", "--replicas", "2"], env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        links.stop(topo)
        assert nodes.node_pid(third) is None and (third.datadir / "mysql").is_dir()
        with sql.admin(three.master, three) as cur:
            for i in range(5):
                cur.execute("UPDATE bench_idx.accounts SET city = %s WHERE id = 12", (f"Behind {'x' * i}",))
        resumed = run_cli(["up", "--replicas", "3"], env)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert re.search(r"started replica3 again \(\d[\d,]* transactions behind", resumed.stderr), resumed.stderr
        assert "replica3 replicated through a proxy that is gone" in resumed.stderr
        assert "added replica3" not in resumed.stderr and "cannot resume" not in resumed.stderr
        run_cli(["up", "--replicas", "2"], env)
        with sql.admin(three.master, three) as cur:
            cur.execute("UPDATE bench_idx.accounts SET city = 'Far Behind' WHERE id = 12")
        monkeypatch.setattr(fanout, "RESUME_MAX_BEHIND", 0)  # the 8M figure in config.py: one write is too many here
        changes = fanout.reconcile(three)
        assert f"added replica3 (a copy of replica1, port {third.port})" in changes, changes
        assert replicating(three)
        assert wait_until(lambda: sql.query_one(third, three, "SELECT city FROM bench_idx.accounts WHERE id = 12")
                          == "Far Behind", timeout=30)
    finally:
        back = run_cli(["up", "--replicas", "2"], env)
    assert back.returncode == 0, back.stdout + back.stderr
    assert replicating(topo)
