"""The native topology: lifecycle, replication, privileges, dataset determinism and index sets."""

from __future__ import annotations

import os
import signal
import socket

import mysql.connector
import psutil
import pytest

from replbench.core import sql
from replbench.core.config import SCHEMAS, Settings
from replbench.core.progress import Progress
from replbench.topology import dataset, nodes

from .conftest import TEST_ACCOUNTS, env_for, run_cli, run_main, wait_until


def test_help_and_bad_arguments_exit_2() -> None:
    code, out, _ = run_main(["--help"])
    assert code == 0 and out.startswith("usage: ./run.sh")
    for args in (["frobnicate"], ["up", "--port-base", "x"], ["dataset", "--nope"], []):
        code, out, err = run_main(args)
        assert code == 2, (args, out, err)
        assert "usage" in err.lower()


def test_up_is_idempotent_and_status_shows_three_healthy_nodes(topo: Settings) -> None:
    env = env_for(topo.state)
    proc = run_cli(["up"], env)
    assert proc.returncode == 0, proc.stderr
    assert "already running" in proc.stdout
    status = run_cli(["status", "--rows"], env)
    assert status.returncode == 0, status.stdout + status.stderr
    for name in ("master", "replica1", "replica2"):
        assert name in status.stdout
    assert status.stdout.count("IO=Yes SQL=Yes") == 2
    node_lines = {line.split()[0]: line.split()[-3:] for line in status.stdout.splitlines()
                  if line.startswith(("master", "replica"))}
    # the counts each node holds now (earlier tests may have created accounts), as SQL counts them
    counts = dataset.row_counts(topo)
    assert node_lines == {name: [f"{per[schema]:,}" for schema in SCHEMAS] for name, per in counts.items()}
    assert len({tuple(per.values()) for per in counts.values()}) == 1  # the same rows on every node


def test_write_on_master_appears_on_both_replicas(topo: Settings) -> None:
    with sql.admin(topo.master, topo) as cur:
        cur.execute("UPDATE bench_idx.accounts SET city = 'Replicaville' WHERE id = 7")
    nodes.wait_caught_up(topo, 30)
    for replica in topo.replicas:
        assert sql.query_one(replica, topo, "SELECT city FROM bench_idx.accounts WHERE id = 7") == "Replicaville"


def test_replicas_refuse_writes_from_the_app_user(topo: Settings) -> None:
    for replica in topo.replicas:
        conn = sql.connect(replica, topo, user="app_rw", password=topo.app_password, tcp=True)
        with pytest.raises(sql.MySQLError) as err, conn.cursor() as cur:
            cur.execute("UPDATE bench_idx.accounts SET city = 'Nope' WHERE id = 1")
        assert err.value.args[0] == 1290  # read-only
        conn.close()


def test_user_privileges(topo: Settings) -> None:
    ro = sql.connect(topo.master, topo, user="app_ro", password=topo.app_password, tcp=True)
    with pytest.raises(sql.MySQLError) as err, ro.cursor() as cur:
        cur.execute("UPDATE bench_idx.accounts SET city = 'Nope' WHERE id = 1")
    assert err.value.args[0] == 1142  # command denied
    ro.close()
    rw = sql.connect(topo.master, topo, user="app_rw", password=topo.app_password, tcp=True)
    with pytest.raises(sql.MySQLError) as err, rw.cursor() as cur:
        cur.execute("DELETE FROM bench_idx.accounts WHERE id = 1")
    assert err.value.args[0] == 1142
    rw.close()
    repl = sql.connect(topo.master, topo, user="repl", password=topo.repl_password, tcp=True)
    with pytest.raises(sql.MySQLError), repl.cursor() as cur:
        cur.execute("SELECT * FROM bench_idx.accounts LIMIT 1")
    repl.close()
    for password in ("", "root"):
        with pytest.raises(sql.MySQLError):
            mysql.connector.connect(host="127.0.0.1", port=topo.master.port, user="root", password=password,
                                    connection_timeout=3, use_pure=True)


def test_index_sets_of_both_schemas(topo: Settings) -> None:
    def index_names(node, schema: str) -> set[str]:
        with sql.admin(node, topo) as cur:
            cur.execute(f"SHOW INDEX FROM {schema}.accounts")
            return {row[2] for row in cur.fetchall()}

    for node in topo.nodes:
        assert index_names(node, "bench_idx") == {"PRIMARY", "uq_email", "idx_first_last", "idx_last",
                                                  "idx_city_birth"}
        assert index_names(node, "bench_noidx") == {"PRIMARY"}


@pytest.mark.disruptive  # SIGKILLs replica2
def test_crashed_node_with_stale_pid_file_comes_back_with_up(topo: Settings) -> None:
    replica = topo.node("replica2")
    pid = nodes.node_pid(replica)
    assert pid
    os.kill(pid, signal.SIGKILL)
    assert wait_until(lambda: not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    assert replica.pid_file.exists()  # stale
    proc = run_cli(["up"], env_for(topo.state))
    assert proc.returncode == 0, proc.stderr
    assert "started replica2" in proc.stderr
    nodes.wait_replicating(replica, topo)


@pytest.mark.disruptive  # stops replica2 and takes its port
def test_port_in_use_gives_a_clear_error(topo: Settings) -> None:
    replica = topo.node("replica2")
    nodes.stop_node(replica)
    blocker = socket.socket()
    blocker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    blocker.bind(("127.0.0.1", replica.port))
    blocker.listen()
    try:
        with pytest.raises(nodes.TopologyError) as err:
            nodes.start_node(replica, topo)
        assert f"port {replica.port}" in str(err.value)
        assert "python" in str(err.value).lower()
    finally:
        blocker.close()
    nodes.start_all(topo)


def test_dataset_of_another_size_is_reported_not_used(topo: Settings) -> None:
    other = topo.with_overrides(accounts=TEST_ACCOUNTS + 1)
    with pytest.raises(dataset.DatasetError) as err:
        dataset.check_matches(other)
    assert "--rebuild" in str(err.value)


def test_same_seed_gives_the_same_checksum(tmp_path, topo: Settings) -> None:
    """A second, tiny topology (own ports and state) built twice from one seed gives equal checksums."""
    small = Settings.from_env(env_for(tmp_path, REPLBENCH_PORT_BASE=str(topo.port_base + 10),
                                      REPLBENCH_ACCOUNTS="3000"))
    sums = []
    try:
        for _ in range(2):
            info = dataset.build(small, Progress("determinism"))
            sums.append(info["checksums"]["master"])
    finally:
        nodes.stop_all(small)
    assert sums[0] == sums[1]
    other_seed = small.with_overrides(seed=7)
    try:
        changed = dataset.build(other_seed, Progress("determinism"))["checksums"]["master"]
    finally:
        nodes.stop_all(other_seed)
    assert changed != sums[0]


def test_long_statement_progress_uses_mariadbs_percentage_or_its_state() -> None:
    assert dataset._describe_progress(1, 2, 19.7, "Reading file", 5) == "stage 1/2  19.7 %"
    in_place_alter = dataset._describe_progress(1, 1, 0.0, "altering table", 42)
    assert in_place_alter.startswith("altering table for 42 s") and "%" not in in_place_alter


def test_the_app_reaches_native_nodes_by_their_sockets_only_when_asked(tmp_path) -> None:
    from replbench.core.config import ConfigError

    env = {"REPLBENCH_STATE": str(tmp_path)}
    assert Settings.from_env(env).app_socket("replica1") is None  # TCP by default
    unix = Settings.from_env({**env, "REPLBENCH_APP_TRANSPORT": "unix"})
    assert unix.app_socket("replica1") == str(tmp_path / "replica1" / "mariadbd.sock")
    assert unix.as_env()["REPLBENCH_APP_TRANSPORT"] == "unix"
    proxied = Settings.from_env({**env, "REPLBENCH_APP_TRANSPORT": "unix",
                                 "REPLBENCH_DB_HOSTS": "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"})
    assert proxied.app_socket("master") is None  # reached through a proxy (an app-* link): TCP
    with pytest.raises(ConfigError, match="app transport"):
        Settings.from_env({**env, "REPLBENCH_APP_TRANSPORT": "pigeon"})
