"""compose.yaml, validated statically (no Docker engine here): docker-compose accepts it, and it uses the same
config files, server ids and users as the native topology."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from replbench.core.config import MYSQL_DIR, ROOT
from replbench.core.nodenames import MAX_REPLICAS, node_names

SERVER_IDS = {name: i + 1 for i, name in enumerate(node_names(MAX_REPLICAS))}  # as config.Settings.nodes numbers them

pytestmark = [pytest.mark.integration,  # docker-compose runs as a process
              pytest.mark.skipif(shutil.which("docker-compose") is None,
                                 reason="docker-compose is not installed (./run.sh test installs it as root)")]


@pytest.fixture(scope="module")
def compose() -> dict:
    proc = subprocess.run(["docker-compose", "-f", str(ROOT / "compose.yaml"), "config"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return yaml.safe_load(proc.stdout)


def test_two_replicas_by_default_four_with_the_fan_out_profile(compose: dict) -> None:
    services = compose["services"]
    assert all("profiles" not in services[n] for n in node_names(2))
    assert all(services[n].get("profiles") == ["fan-out"] for n in ("replica3", "replica4"))


def test_mariadb_nodes_with_the_native_server_ids(compose: dict) -> None:
    services = compose["services"]
    for name, server_id in SERVER_IDS.items():
        node = services[name]
        assert node["image"] == "mariadb:10.11"
        assert f"--server-id={server_id}" in node["command"]


def test_nodes_mount_the_same_mysql_config_files(compose: dict) -> None:
    services = compose["services"]
    for name in SERVER_IDS:
        sources = {v["source"] if isinstance(v, dict) else v.split(":")[0] for v in services[name]["volumes"]}
        role = "master.cnf" if name == "master" else "replica.cnf"
        for file in ("common.cnf", role, "schema.sql", "users.sql"):
            assert str(MYSQL_DIR / file) in sources, (name, file)


def test_users_come_from_users_sql(compose: dict) -> None:
    users_sql = (MYSQL_DIR / "users.sql").read_text()
    for user in ("'repl'", "'app_rw'", "'app_ro'", "'replbench_admin'"):
        assert user in users_sql
    init = (MYSQL_DIR / "docker" / "init-users.sh").read_text()
    assert "/replbench/users.sql" in init
    replica_init = (MYSQL_DIR / "docker" / "init-replica.sh").read_text()
    assert "MASTER_USE_GTID=slave_pos" in replica_init and "MASTER_USER='repl'" in replica_init


def test_app_and_pinned_vegeta(compose: dict) -> None:
    services = compose["services"]
    assert services["app"]["environment"]["REPLBENCH_DB_HOSTS"] == "master:3306,replica1:3306,replica2:3306"
    dockerfile = (ROOT / "tools" / "Dockerfile").read_text()
    assert "github.com/tsenart/vegeta/v12" in dockerfile and "@latest" not in dockerfile
    go_mod = (ROOT / "tools" / "go.mod").read_text()
    tools = go_mod.split("tool (", 1)[1].split(")", 1)[0] if "tool (" in go_mod else go_mod
    assert "github.com/tsenart/vegeta/v12" in tools and "github.com/tsenart/vegeta/v12 v12.13.0" in go_mod
    assert "github.com/Shopify/toxiproxy/v2/cmd/server" in tools and "github.com/Shopify/toxiproxy/v2 v2.12.0" in go_mod
