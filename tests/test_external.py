"""A topology file: the small native topology addressed as if it were the DBA's own servers (TCP only, a password
user, no pids), with CPU from a real prometheus-node-exporter started here. The harness must never start, stop or
copy those servers, load the dataset through SQL on the master only, and keep credentials out of results."""

from __future__ import annotations

import csv
import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from replbench.core.config import ROOT, Settings
from replbench.measure import nodeexporter
from replbench.topology import nodes
from replbench.topology.install import ensure_node_exporter

from .conftest import TEST_APP_PORT, env_for, run_cli, run_main, wait_until

SECRET = "not-in-any-results-file"
UNREACHED_EXPORTER = "http://127.0.0.1:9/metrics"  # a URL a usage check never scrapes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def exporter() -> Iterator[str]:
    """A real node_exporter (CPU collector only) on a free port, stopped afterwards."""
    port = free_port()
    proc = subprocess.Popen([ensure_node_exporter(), f"--web.listen-address=127.0.0.1:{port}",
                             "--collector.disable-defaults", "--collector.cpu"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        assert wait_until(lambda: nodeexporter.scrape(url) is not None, timeout=20), "node_exporter did not start"
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def write_topology(folder: Path, topo: Settings | None, exporter: str, **changes: str) -> Path:
    """The test topology's servers as a topology file; without `topo`, servers at ports nothing is asked to reach
    (for what is refused before any connection)."""
    port = {n.name: n.port for n in topo.nodes} if topo else {"master": 9, "replica1": 10, "replica2": 11}
    sections = {
        "master": f'host = "127.0.0.1"\nport = {port["master"]}\nmetrics = "{exporter}"',
        "replica1": f'host = "127.0.0.1"\nport = {port["replica1"]}\nmetrics = "{exporter}"',
        "replica2": f'host = "127.0.0.1"\nport = {port["replica2"]}',  # no exporter: CPU n/a
    }
    sections.update(changes)
    path = folder / "servers.toml"
    path.write_text('description = "the test topology, seen as external"\n'
                    + "".join(f"[{name}]\n{body}\n" for name, body in sections.items() if body))
    return path


@pytest.fixture(scope="module")
def external(topo: Settings, exporter: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    folder = tmp_path_factory.mktemp("external")
    # the admin user the native build created, over TCP with its password: what a DBA would hand us
    password_user = {"REPLBENCH_DB_USER": "replbench_admin", "REPLBENCH_DB_PASSWORD": topo.admin_password}
    env = env_for(folder / "state", REPLBENCH_TOPOLOGY=str(write_topology(folder, topo, exporter)),
                  REPLBENCH_APP_PORT=str(TEST_APP_PORT + 50), REPLBENCH_APP_PASSWORD=SECRET, **password_user)
    try:
        yield env
    finally:
        run_cli(["down"], env)  # the local app this topology's runs started; the servers stay up


def mariadbd_pids(topo: Settings) -> dict[str, int | None]:
    return {n.name: nodes.node_pid(n) for n in topo.nodes}


@pytest.mark.disruptive  # rebuilds the session's dataset (over SQL)
def test_dataset_over_sql_then_status_up_down_never_touch_the_servers(topo: Settings, external: dict) -> None:
    before = mariadbd_pids(topo)
    proc = run_cli(["dataset", "--rebuild"], external, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "LOAD DATA LOCAL" in proc.stderr and "replicas apply everything" in proc.stderr
    checksums = proc.stdout.split("CHECKSUM TABLE:", 1)[1].strip().splitlines()
    sums = [line.split(None, 1)[1] for line in checksums if line.split()[0] in ("master", "replica1", "replica2")]
    assert len(sums) == 3 and len(set(sums)) == 1, proc.stdout  # the same checksums on all three nodes
    for command in (["up"], ["status", "--rows"], ["down"]):
        proc = run_cli(command, external)
        assert proc.returncode == 0, (command, proc.stdout + proc.stderr)
    assert "servers.toml" in proc.stdout and "left running, untouched" in proc.stdout
    assert mariadbd_pids(topo) == before  # not one server was restarted or stopped
    status = run_cli(["status"], external)
    assert "127.0.0.1:" in status.stdout and "IO=Yes SQL=Yes" in status.stdout


def test_a_run_takes_cpu_from_node_exporter_and_keeps_credentials_out(topo: Settings, external: dict) -> None:
    proc = run_cli(["get", "60", "--duration", "4s"], external)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("Status:"))
    folder = Path(line.split("Results:")[1].strip())
    folder = folder if folder.is_absolute() else ROOT / folder
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["requests"] == 240 and summary["success"] == 1
    assert summary["cpu_sources"] == {"app": "process", "master": "host CPU from node_exporter",
                                      "replica1": "host CPU from node_exporter", "replica2": "n/a (no metrics URL)"}
    means = summary["cpu_mean_percent"]
    # the exporter measures this very host: its busy time agrees with /proc's to within a few % of a core
    # the host's busy CPU from node_exporter, in % of one core: within what this host's cores can give
    assert "replica2" not in means and 0 < means["master"] <= 100 * psutil.cpu_count(), means
    assert summary["db_share_of_host"] is None  # the databases are not (assumed to be) on this host
    assert "replica2 n/a" in proc.stdout and "node_exporter" in proc.stdout
    with open(folder / "cpu.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(r["replica2"] == "" for r in rows) and any(float(r["master"] or 0) > 0 for r in rows)
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["topology"]["master"]["external"] is True and meta["topology_file"] == "servers.toml"
    for path in folder.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".txt", ".csv", ".log", ".md"):
            text = path.read_text(errors="replace")
            assert SECRET not in text and topo.admin_password not in text, path


def test_apply_capacity_over_tcp(external: dict) -> None:
    proc = run_cli(["apply-capacity", "write", "--writes", "400", "--rate", "100"], external, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "replica1: applied" in proc.stdout and "(host CPU from node_exporter)" in proc.stdout
    assert "replica2: applied" in proc.stdout and "n/a CPU-ms per applied trx" in proc.stdout
    status = run_cli(["status"], external)  # replication running again afterwards
    assert status.stdout.count("IO=Yes SQL=Yes") == 2, status.stdout


def test_an_app_already_serving_at_a_url_is_used_not_started(topo: Settings, exporter: str, external: dict,
                                                            tmp_path: Path) -> None:
    from replbench.topology import appserver

    app_pid = appserver.app_pid(topo)  # the session's own app, serving the same servers
    path = write_topology(tmp_path, topo, exporter)
    path.write_text(path.read_text() + f'[app]\nurl = "http://127.0.0.1:{topo.app_port}/"\n')
    env = dict(external, REPLBENCH_TOPOLOGY=str(path))
    proc = run_cli(["get", "40", "--duration", "2s"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Gunicorn cpu: n/a" in proc.stdout, proc.stdout
    # from the record, not the progress line (a 2 s attack may end before the first tick on a loaded host)
    line = next(x for x in proc.stdout.splitlines() if x.startswith("Status:"))
    folder = Path(line.split("Results:")[1].strip())
    summary = json.loads(((folder if folder.is_absolute() else ROOT / folder) / "summary.json").read_text())
    assert summary["app_admission"]["workers"] == 0 and summary["app_admission"]["answered"] == 0, summary
    assert appserver.app_pid(topo) == app_pid  # neither restarted nor stopped
    assert run_cli(["down"], env).returncode == 0 and appserver.app_pid(topo) == app_pid


def test_bench_app_refuses_an_app_already_serving_at_a_url(tmp_path: Path) -> None:
    path = write_topology(tmp_path, None, UNREACHED_EXPORTER)
    path.write_text(path.read_text() + '[app]\nurl = "http://127.0.0.1:9/"\n')
    code, _, err = run_main(["bench-app"], env_for(tmp_path / "state", REPLBENCH_TOPOLOGY=str(path)))
    assert code == 2 and "bench-app measures an app started here, not the one at http://127.0.0.1:9" in err, err


@pytest.mark.parametrize("args, needle", [
    (["write", "20", "--duration", "3s", "--fault", "kill:replica1@1s"], "kill fault"),
    (["write", "20", "--link", "replica1=5ms"], "--link needs the native topology"),
    (["get", "20", "--cpus", "master=0"], "do not run on this machine"),
])
def test_what_needs_the_processes_is_refused(tmp_path: Path, args: list[str], needle: str) -> None:
    env = env_for(tmp_path / "state", REPLBENCH_TOPOLOGY=str(write_topology(tmp_path, None, UNREACHED_EXPORTER)))
    code, _, err = run_main(args, env)
    assert code == 2 and needle in err, (args, err)


@pytest.mark.parametrize("change, needle", [
    ({"replica1": ""}, "missing role(s) replica1"),  # replicas numbered without gaps (one replica is fine)
    ({"replica2": 'host = "127.0.0.1"\nport = 9'}, "are the same server"),
    ({"replica1": 'host = "127.0.0.1"\nport = "x"'}, "replica1.port: must be a whole number, got 'x'"),
    ({"master": 'host = "127.0.0.1"\nmetrics = "db1:9100"'}, "master.metrics: must be a node_exporter URL"),
])
def test_bad_topology_files_exit_2_with_one_line(tmp_path: Path, change: dict, needle: str) -> None:
    path = write_topology(tmp_path, None, UNREACHED_EXPORTER, **change)  # the master on port 9
    code, _, err = run_main(["status", "--topology", str(path)], env_for(tmp_path / "state"))
    assert code == 2 and needle in err and "Traceback" not in err, err


def test_an_unreachable_server_is_one_clear_line(topo: Settings, exporter: str, tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    path = write_topology(tmp_path, topo, exporter, master=f'host = "127.0.0.1"\nport = {port}')
    proc = run_cli(["up", "--topology", str(path)], env_for(tmp_path / "state", REPLBENCH_DB_USER="replbench_admin",
                                                           REPLBENCH_DB_PASSWORD=topo.admin_password))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"master at 127.0.0.1:{port} does not answer" in proc.stderr, proc.stderr


@pytest.mark.integration  # the exporter fixture starts node_exporter (a module fixture: before any unit guard)
def test_node_exporter_cpu_parsing_against_a_live_exporter(exporter: str) -> None:
    first = nodeexporter.scrape(exporter)
    assert first and first["cpus"] == psutil.cpu_count() and "idle" in first
    busy = nodeexporter.busy_seconds(first)
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:
        pass  # burn half a second of CPU
    later = nodeexporter.host_busy(exporter)
    assert busy is not None and later is not None and later > busy
    with urllib.request.urlopen(exporter, timeout=5) as resp:
        assert b"node_cpu_seconds_total" in resp.read()
    assert nodeexporter.host_busy("http://127.0.0.1:1/metrics") is None
