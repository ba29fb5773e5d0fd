"""Hosts of their own, on this machine: `./run.sh lab up` (topology/lab over topology/netns) makes a master, two
replicas (mariadbd at their own 198.18.x addresses, each with a node_exporter) and two client hosts (an OpenSSH
server and a node_exporter each) in network namespaces on one bridge, and writes their topology file; the harness
runs here, its app listening on the bridge, and drives vegeta on the clients over ssh (load/remote). One lab for
the module, `./run.sh lab down` after it. Skipped, with the reason, where namespaces cannot be made. The pure parts
(the file's keys, the skew, the guards, the block's lines, the lab's files) are unit tests below."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from replbench.analysis import judge
from replbench.core import topofile
from replbench.core.config import ROOT, Settings
from replbench.core.processes import alive
from replbench.core.results import meta_of, summary_of
from replbench.core.scenario import load as load_scenario
from replbench.load import remote
from replbench.load.attack import AttackOptions
from replbench.report.block import _attacker_lines
from replbench.topology import appserver, netns
from replbench.topology.install import VEGETA_VERSION, ensure_vegeta

from .conftest import env_for, run_cli, run_folder, run_main

LATE_BY_S = 2  # the slow client's vegeta sleeps this long before it attacks
LAB_ACCOUNTS = "20000"


def _free_port(address: str) -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def _late_topology(lab_folder: Path, slow_vegeta: Path) -> Path:
    """The lab's topology file with client2's vegeta replaced by one that starts LATE_BY_S late; beside the lab's
    ssh_config, which reaches the clients through it."""
    parsed = topofile.load(lab_folder / "topology.toml")
    text = "".join(f'[{n.name}]\nhost = "{n.host}"\nmetrics = "{n.metrics}"\n' for n in parsed.nodes)
    text += f'[app]\nlisten = "{parsed.app_listen}"\n'
    for i, a in enumerate(parsed.attackers):
        text += f'[[attacker]]\nhost = "{a.host}"\nvegeta = "{slow_vegeta if i == 1 else a.vegeta}"\n'
    path = lab_folder / "late-client.toml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """`./run.sh lab up` in a folder of its own (never .lab/), 20,000 accounts loaded over SQL with `./run.sh
    dataset --topology`; `./run.sh lab down` afterwards, whatever happened."""
    reason = netns.unavailable()
    if reason:
        pytest.skip(f"network namespaces cannot be made here: {reason}")
    folder = tmp_path_factory.mktemp("netns")
    env = env_for(folder / "state", REPLBENCH_LAB=str(folder / "lab"), REPLBENCH_ACCOUNTS=LAB_ACCOUNTS,
                  REPLBENCH_APP_PORT=str(_free_port("127.0.0.1")))
    try:
        made = run_cli(["lab", "up"], env)
        assert made.returncode == 0, made.stdout + made.stderr
        assert made.stdout.startswith("replbench lab: up: master 198.18."), made.stdout
        record = json.loads((folder / "lab" / "lab.json").read_text())
        topology = folder / "lab" / "topology.toml"
        with_topology = dict(env, REPLBENCH_TOPOLOGY=str(topology))  # and nothing else: no credential, no ssh
        loaded = run_cli(["dataset"], with_topology)
        assert loaded.returncode == 0, loaded.stdout + loaded.stderr
        vegeta = ensure_vegeta(Settings.from_env(env))
        slow = folder / "slow-vegeta"  # a vegeta v12.13.0 that takes LATE_BY_S to start attacking
        slow.write_text(f'#!/bin/sh\n[ "$1" = -version ] && {{ echo "Version: {VEGETA_VERSION}"; exit 0; }}\n'
                        f'[ "$1" = attack ] && sleep {LATE_BY_S}\nexec {vegeta} "$@"\n')
        slow.chmod(0o755)
        hosts = record["network"]["hosts"]
        yield {"env": with_topology, "lab_env": env, "folder": folder / "lab", "record": record,
               "late": _late_topology(folder / "lab", slow), "master": hosts["master"]["address"],
               "c1": hosts["client1"]["address"], "c2": hosts["client2"]["address"]}
    finally:
        run_cli(["lab", "down"], env)


def _run(env: dict[str, str], *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    proc = run_cli([*args], env)
    folder = run_folder(proc.stdout)
    return proc, json.loads((folder / "summary.json").read_text()) | {"_folder": str(folder)}


@pytest.mark.integration
def test_a_read_run_from_two_ssh_attackers_merges_both_result_files(lab: dict[str, Any]) -> None:
    proc, summary = _run(lab["env"], "read", "100", "--duration", "3s")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hosts = summary["remote_attackers"]
    assert [(a["host"], a["rate"]) for a in hosts] == [(lab["c1"], 50), (lab["c2"], 50)]
    folder = Path(summary["_folder"])
    assert sorted(p.name for p in folder.glob("results-*.bin")) == ["results-1.bin", "results-2.bin"]
    # the merged report (vegeta report over both files) counts what each host sent, and the rate adds up
    assert summary["requests"] == sum(a["requests"] for a in hosts) == 300, hosts
    assert json.loads((folder / "report.json").read_text())["requests"] == 300
    assert all(not a["late"] and a["error"] is None and abs(a["skew_ms"]) < 50 for a in hosts), hosts
    assert all(a["cpu_percent"] is not None and a["cpu_source"] == "host CPU from node_exporter" for a in hosts)
    assert "Attackers: 2 hosts over SSH" in proc.stdout and f"attacker 2 {lab['c2']}: 50/s share" in proc.stdout
    assert not [g for g in summary["guards"] if g.startswith("attacker")], summary["guards"]
    # every database host's CPU from its node_exporter, as on real hosts
    assert summary["cpu_sources"] == {"app": "process", **{n: "host CPU from node_exporter" for n in
                                                           ("master", "replica1", "replica2")}}
    assert all(summary["cpu_mean_percent"][n] > 0 for n in ("master", "replica1", "replica2")), summary
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["topology"]["master"]["host"] == lab["master"]  # not loopback
    assert [h["vegeta"] for h in meta["attacker_hosts"]] == ["the same binary as here"] * 2
    command = meta["attack_command"]  # the lab's ssh_config beside the topology file, no path of this machine
    assert command[command.index("-F") + 1] == "ssh_config" and str(ROOT) not in json.dumps(meta), command


@pytest.mark.integration
def test_a_late_attacker_is_flagged(lab: dict[str, Any]) -> None:
    proc, summary = _run(dict(lab["env"], REPLBENCH_TOPOLOGY=str(lab["late"])), "read", "100", "--duration", "3s")
    slow = summary["remote_attackers"][1]
    assert slow["late"] and slow["first_request_s"] >= LATE_BY_S - 0.2, slow
    assert slow["requests"] == 150 and summary["requests"] == 300  # its share was sent, late
    assert any(g.startswith(f"attacker 2 ({lab['c2']}) started ") for g in summary["guards"]), summary["guards"]
    assert f"attacker 2 {lab['c2']}: LATE by" in proc.stdout
    assert summary["status"] != "ok" and not summary["remote_attackers"][0]["late"]


@pytest.mark.integration
def test_a_write_run_across_hosts_knobs_rows_and_a_held_replica(lab: dict[str, Any]) -> None:
    """On the namespaced servers: a knob applied and read back on the master; every row the two attackers wrote
    changed (each sends its own targets); replica2's replication stopped at 2 s and never given back: not waited
    for, left out of the consistency check by name, replicating again after the run."""
    proc, summary = _run(lab["env"], "write", "100", "--duration", "5s", "--binlog-row-image", "MINIMAL",
                         "--fault", "stop-replication:replica2@2s")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    meta = json.loads((Path(summary["_folder"]) / "meta.json").read_text())
    assert meta["knobs_readback"]["master"]["binlog_row_image"] == "MINIMAL" and not meta["knob_mismatches"]
    assert summary["requests"] == 500 and summary["success"] == 1, summary["requests"]
    rows = summary["rows_checked"]
    assert rows["method"] == "sample" and rows["share"] >= 0.99, rows
    assert summary["catch_up_held"] == {"replica2": "stop-replication:replica2@2s"}
    assert summary["catch_up_s"]["replica2"] is None and summary["catch_up_s"]["replica1"] is not None
    consistency = summary["consistency"]
    assert consistency["checked"] and consistency["equal"], consistency
    assert consistency["held"] == {"replica2": "stop-replication:replica2@2s"}
    assert "replica2 left out: stop-replication:replica2@2s held it" in proc.stdout
    status = run_cli(["status"], lab["env"])
    assert status.returncode == 0 and status.stdout.count("IO=Yes SQL=Yes") == 2, status.stdout


@pytest.mark.integration
def test_apply_capacity_against_namespaced_replicas(lab: dict[str, Any]) -> None:
    proc = run_cli(["apply-capacity", "write", "--writes", "1000", "--rate", "200"], lab["env"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the master's committed count, not the 1,000 asked: a slow host's app may shed a few of them (CI did)
    committed = re.search(r"^Master: ([\d,]+) transactions", proc.stdout, re.M)
    assert committed, proc.stdout
    for replica in ("replica1", "replica2"):
        lines = [x for x in proc.stdout.splitlines() if x.startswith(f"{replica}: applied {committed[1]} trx")]
        assert len(lines) == 1 and "(host CPU from node_exporter)" in lines[0], proc.stdout
    status = run_cli(["status"], lab["env"])  # replication running again afterwards
    assert status.stdout.count("IO=Yes SQL=Yes") == 2, status.stdout


@pytest.mark.integration
def test_lab_up_again_reuses_it_and_another_shape_is_refused(lab: dict[str, Any]) -> None:
    again = run_cli(["lab", "up"], lab["lab_env"])
    assert again.returncode == 0 and again.stdout.startswith("replbench lab: already up (reused): "), again.stdout
    other = run_cli(["lab", "up", "--replicas", "1"], lab["lab_env"])
    assert other.returncode == 1 and other.stderr.strip().splitlines() == [
        f"replbench: a lab is up already with 2 replicas and 2 attacker hosts ({lab['folder'] / 'topology.toml'}): "
        "./run.sh lab down first to make another"], other.stderr
    status = run_cli(["lab", "status"], lab["lab_env"])
    assert status.returncode == 0, status.stdout + status.stderr
    for name, program in (("master", "mariadbd"), ("replica2", "node.exporter"), ("client2", "sshd")):
        line = next(x for x in status.stdout.splitlines() if x.startswith(name))
        assert re.search(rf"{program} \d+ up", line), line


@pytest.mark.integration
def test_lab_down_removes_everything_and_twice_is_once(lab: dict[str, Any]) -> None:
    network = lab["record"]["network"]
    pids = [pid for h in network["hosts"].values() for pid in h["processes"].values()]
    app = appserver.app_pid(Settings.from_env(lab["env"]))  # the app the runs started, on the bridge
    assert all(alive(p) for p in pids)
    down = run_cli(["lab", "down"], lab["lab_env"])
    said = "replbench lab: removed " + ("the app, " if app else "")
    assert down.returncode == 0 and down.stdout.startswith(said), down.stdout
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(h["namespace"] in listed for h in network["hosts"].values()), listed
    assert subprocess.run(["ip", "link", "show", network["bridge"]], capture_output=True).returncode != 0
    assert not [p for p in [*pids, app] if p and alive(p)] and not lab["folder"].exists()
    again = run_cli(["lab", "down"], lab["lab_env"])
    assert again.returncode == 0 and again.stdout.startswith("replbench lab: nothing to remove"), again.stdout


@pytest.mark.integration
def test_the_lab_leaves_nothing_behind_even_on_failure(tmp_path: Path) -> None:
    reason = netns.unavailable()
    if reason:
        pytest.skip(f"network namespaces cannot be made here: {reason}")
    key = netns.client_key(tmp_path / "id")
    with pytest.raises(RuntimeError, match="on purpose"):
        with netns.Lab(["solo", "empty"], tmp_path / "lab") as lab:
            lab.sshd(lab.host("solo"), key.with_suffix(".pub"))
            pid = lab.host("solo").processes[0].pid
            names = [h.namespace for h in lab.hosts.values()]
            bridge = lab.bridge
            # host to host across the bridge: from the empty namespace, sshd's banner at the other's address
            probe = f"import socket; print(socket.create_connection(('{lab.host('solo').address}', 22), 5).recv(7))"
            reach = subprocess.run([*lab.host("empty").exec_prefix(), sys.executable, "-c", probe],
                                   capture_output=True, text=True, timeout=20)
            assert "b'SSH-2.0'" in reach.stdout, reach.stdout + reach.stderr
            raise RuntimeError("on purpose")
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(n in listed for n in names), listed
    assert subprocess.run(["ip", "link", "show", bridge], capture_output=True).returncode != 0
    assert not os.path.exists(f"/proc/{pid}")


# ---- unit: no process ----

def test_namespaces_unavailable_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert netns.unavailable() == "network namespaces need root (ip netns add)"


@pytest.mark.parametrize("attackers, needle", [
    ('[[attacker]]\nhost = "c1"\n[[attacker]]\nhost = "c1"', "attacker[2].host: the same host as attacker 1"),
    ('[[attacker]]\nhost = "c1"\nuser = "a b"', "attacker[1].user: must be a user name"),
    ('[[attacker]]\nhost = "c1"\nkey = "/root/.ssh/id"', "attacker[1].key: unknown key"),
    ('[[attacker]]\nhost = "c1"\nport = 0', "attacker[1].port: must be from 1 to 65535"),
    ('[app]\nurl = "http://a:1"\n[[attacker]]\nhost = "c1"', "app.url: attackers on other hosts need an app"),
])
def test_bad_attacker_tables_exit_2_with_one_line(tmp_path: Path, attackers: str, needle: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text(f'[master]\nhost = "db1"\n[replica1]\nhost = "db2"\n{attackers}\n')
    code, _, err = run_main(["status", "--topology", str(path)], env_for(tmp_path / "state"))
    assert code == 2 and needle in err and "Traceback" not in err, err


def test_attackers_flag_is_refused_beside_attacker_hosts(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('[master]\nhost = "db1"\n[replica1]\nhost = "db2"\n[[attacker]]\nhost = "c1"\n')
    code, _, err = run_main(["read", "100", "--attackers", "2"], env_for(tmp_path / "s", REPLBENCH_TOPOLOGY=str(path)))
    assert code == 2 and "names 1 attacker host(s), one vegeta each" in err, err


def test_skew_is_taken_from_the_shortest_round_trip() -> None:
    # (sent, remote clock, received): the remote clock 0.25 s ahead; the slow probe would say 0.2
    probes = [(10.0, 10.35, 10.2), (11.0, 11.2505, 11.001), (12.0, 12.3, 12.1)]
    skew, uncertainty = remote.skew_from(probes)
    assert skew == pytest.approx(0.25) and uncertainty == pytest.approx(0.0005)


def test_the_attack_waits_for_the_agreed_instant_on_its_own_clock() -> None:
    host = remote.AttackerHost("c1", "", 22, "", "/opt/vegeta")
    check = remote.HostCheck(1, host, "/tmp/replbench-attack.x", VEGETA_VERSION, -1.5, 0.001, 0.1)
    script = remote.attack_script(check, 1000.0, ["-rate=50/1s"], "read-100#1")
    assert "w=$(( 998500000000 - $(date +%s%N) ))" in script  # 1000 s here is 998.5 s on its clock
    assert script.endswith("exec /opt/vegeta attack -format=json -targets=/tmp/replbench-attack.x/targets.json "
                           "'-name=read-100#1' -rate=50/1s -output=/tmp/replbench-attack.x/results.bin")


def test_vegeta_report_times_read_as_unix_nanoseconds() -> None:
    assert remote._rfc3339_ns("1970-01-01T00:00:01.5Z") == 1_500_000_000
    assert remote._rfc3339_ns("1970-01-01T01:00:02.000000007+01:00") == 2_000_000_007
    assert remote._rfc3339_ns("1970-01-01T00:00:03Z") == 3_000_000_000


def _host(index: int, **changes: Any) -> dict[str, Any]:
    return {"index": index, "host": f"198.18.0.{index + 3}", "rate": 50, "requests": 150, "first_request_s": 0.004,
            "late": False, "skew_ms": 0.3, "skew_uncertainty_ms": 0.1, "error": None, "cpu_percent": None,
            "cpu_source": "n/a (no metrics URL)", "results_file": f"results-{index}.bin", **changes}


def _guards(hosts: list[dict[str, Any]]) -> list[str]:
    facts = judge.RunFacts(criteria=load_scenario("read").criteria, rate=100, catch_up_timeout=30, cores=2)
    return judge._attacker_guards(summary_of({"remote_attackers": hosts}), meta_of({}), facts)


def test_a_failed_or_late_attacker_is_a_guard_and_one_line_of_the_block() -> None:
    hosts = [_host(1, cpu_percent=12.3, cpu_source="host CPU from node_exporter"),
             _host(2, late=True, first_request_s=2.04), _host(3, error="no results came back", requests=None,
                                                               results_file=None, first_request_s=None)]
    assert _guards(hosts) == [
        "attacker 2 (198.18.0.5) started 2.04 s after the agreed start: until then the rate was 50/s of 100/s",
        "attacker 3 (198.18.0.6) failed: no results came back; its share of 50/s is missing from 100/s (0 of its "
        "requests came back)"]
    lines = _attacker_lines(summary_of({"remote_attackers": hosts, "attack_start_agreed": "12:00:01.000 UTC"}))
    assert lines[0] == ("Attackers: 3 hosts over SSH, agreed start 12:00:01.000 UTC; the report below merges their "
                        "2 results files (300 requests)")
    assert lines[1] == ("  attacker 1 198.18.0.4: 50/s share, 150 requests, first request +0.004 s, clock skew "
                        "+0.3 ms (±0.1), CPU 12 % of a core (host CPU from node_exporter)")
    assert lines[2].startswith("  attacker 2 198.18.0.5: LATE by 2.04 s; 50/s share")
    assert lines[3].startswith("  attacker 3 198.18.0.6: FAILED: no results came back; 50/s share, 0 requests, no "
                               "request") and lines[3].endswith("CPU n/a (no metrics URL)")


def test_clocks_far_apart_are_flagged() -> None:
    assert _guards([_host(1, skew_ms=-80.0), _host(2, skew_ms=70.0)]) == [
        "the attacker hosts' clocks differ by 150 ms: the merged report's duration and rate, and the latency "
        "timeline beside the lag, are off by up to that much"]
    assert _guards([_host(1, skew_ms=-20.0), _host(2, skew_ms=30.0)]) == []


def test_ssh_takes_key_and_config_from_the_environment(tmp_path: Path) -> None:
    settings = Settings.from_env(env_for(tmp_path, REPLBENCH_SSH_KEY="/k/id", REPLBENCH_SSH_CONFIG="/k/config"))
    cmd = remote.ssh_command(settings, remote.AttackerHost("c1", "bench", 2222, "", "vegeta"), "true")
    assert cmd[:2] == ["ssh", "-o"] and "BatchMode=yes" in cmd and cmd[-2:] == ["bench@c1", "true"]
    assert cmd[cmd.index("-p") + 1] == "2222" and cmd[cmd.index("-F") + 1] == "/k/config"
    assert cmd[cmd.index("-i") + 1] == "/k/id"


ABSOLUTE_PATH = re.compile(r"(?<![\w.~$/:-])/[\w.]")  # a path from the root, not a URL's // or a rate's /1s


def test_an_attacker_runs_meta_holds_no_absolute_path_of_this_machine(tmp_path: Path) -> None:
    """What remote.py gives meta.json (attacker_hosts, attack_command) names the ssh config, the key, the host's
    vegeta and its temporary folder without a path of this machine: relative to the repository or by name."""
    lab = tmp_path / "lab"
    lab.mkdir()
    topology = lab / "topology.toml"
    topology.write_text('[master]\nhost = "198.18.0.2"\n[replica1]\nhost = "198.18.0.3"\n[[attacker]]\n'
                        'host = "198.18.0.5"\n')
    (lab / "ssh_config").write_text("Host *\n  User root\n")
    settings = Settings.from_env(env_for(tmp_path / "state", REPLBENCH_TOPOLOGY=str(topology),
                                         REPLBENCH_SSH_KEY=str(lab / "id_ed25519")))
    hosts = [remote.AttackerHost(f"198.18.0.{i + 5}", "root", 22, f"http://198.18.0.{i + 5}:9100/metrics",
                                 str(ROOT / ".tools" / "bin" / "vegeta")) for i in range(2)]
    checks = [remote.HostCheck(i + 1, h, f"/tmp/replbench-attack.Ab{i}Cd", VEGETA_VERSION, 0.0003, 0.0001, 0.05)
              for i, h in enumerate(hosts)]
    attack = remote.RemoteAttack(settings, checks, tmp_path, AttackOptions(100, 5.0, max_connections=8),
                                 "read-100", lambda url: None)
    attack.start_at = 1_800_000_000.0
    run = attack.commands[0]  # what runs: the real paths
    assert run[run.index("-F") + 1] == str(lab / "ssh_config") and run[run.index("-i") + 1] == str(lab / "id_ed25519")
    meta = {"attacker_hosts": [c.record().model_dump() for c in checks], "attack_command": attack.command}
    text = json.dumps(meta)
    assert str(tmp_path) not in text and str(ROOT) not in text and "/tmp/" not in text, text
    assert not [w for w in attack.command if ABSOLUTE_PATH.search(w)], attack.command
    recorded = attack.command
    assert recorded[recorded.index("-F") + 1] == "ssh_config" and recorded[recorded.index("-i") + 1] == "id_ed25519"
    assert "exec .tools/bin/vegeta attack -format=json -targets=replbench-attack.Ab0Cd/targets.json" in recorded[-1]
    assert "echo $$ > replbench-attack.Ab0Cd/vegeta.pid;" in recorded[-1]


def test_an_ssh_config_beside_the_topology_file_is_used_when_none_is_set(tmp_path: Path) -> None:
    topology = tmp_path / "t.toml"
    host = remote.AttackerHost("c1", "", 22, "", "vegeta")
    bare = Settings.from_env(env_for(tmp_path / "s", REPLBENCH_TOPOLOGY=str(topology)))
    assert remote.ssh_config_file(bare) == "" and "-F" not in remote.ssh_command(bare, host, "true")
    (tmp_path / "ssh_config").write_text("Host *\n")
    assert remote.ssh_config_file(bare) == str(tmp_path / "ssh_config")
    named = Settings.from_env(env_for(tmp_path / "s", REPLBENCH_TOPOLOGY=str(topology),
                                      REPLBENCH_SSH_CONFIG="/k/config"))
    assert remote.ssh_config_file(named) == "/k/config"  # the environment's wins
    assert remote.ssh_config_file(Settings.from_env(env_for(tmp_path / "s"))) == ""  # no topology file


def _ending(code: int | None = 0, **changes: Any) -> remote.Ending:
    return remote.Ending(**{"code": code, "cpu_percent": None, "interrupted": False, "fetch_error": None,
                            "log_line": "no output", **changes})


def test_an_attacker_that_dies_or_ends_early_fails_by_name_and_its_results_are_kept() -> None:
    """Its ssh or vegeta exited with an error, or it sent fewer requests than its share over the duration (stopped
    mid-attack with exit code 0): `error` on its part, which the block shows as FAILED and a guard as a missing
    share, never a silently smaller rate; what it sent before stays in the merged report."""
    share = AttackOptions(50, 10.0, max_connections=8)
    check = remote.HostCheck(2, remote.AttackerHost("198.18.0.6", "", 22, "", "vegeta"), "/tmp/x", VEGETA_VERSION,
                             0.05, 0.001, 0.1)
    start = 1000.0  # its clock is 50 ms ahead: its requests from 1000.05 (its time) are at +0 s here
    report = {"requests": 210, "earliest_ns": 1000_060_000_000, "latest_ns": 1004_250_000_000}
    died = remote.host_part(check, share, start, report, _ending(255, log_line="Connection to 198.18.0.6 closed."))
    assert died["error"] == "its attack exited with code 255 (Connection to 198.18.0.6 closed.)"
    assert (died["requests"], died["expected_requests"], died["results_file"]) == (210, 500, "results-2.bin")
    assert (died["first_request_s"], died["last_request_s"]) == (0.01, 4.2)
    early = remote.host_part(check, share, start, report, _ending(0))
    assert early["error"] == "its attack ended early: 210 of its 500 requests sent, the last at +4.20 s of 10 s"
    whole = remote.host_part(check, share, start, dict(report, requests=500), _ending(0))
    assert whole["error"] is None and not whole["late"]
    stopped = remote.host_part(check, share, start, report, _ending(130, interrupted=True))  # Ctrl-C here: all stop
    assert stopped["error"] is None
    lost = remote.host_part(check, share, start, None, _ending(0, fetch_error="its results file could not be "
                                                               "copied back: cat: results.bin: No such file"))
    assert lost["error"].startswith("its results file could not be copied back") and lost["results_file"] is None
    hosts = [_host(1, requests=500, rate=50), {**_host(2, rate=50), **early}]
    assert _guards(hosts) == [f"attacker 2 (198.18.0.6) failed: {early['error']}; its share of 50/s is missing "
                              "from 100/s (210 of its requests came back)"]
    lines = _attacker_lines(summary_of({"remote_attackers": hosts, "attack_start_agreed": "12:00:01.000 UTC"}))
    assert lines[0].endswith("merges their 2 results files (710 requests)")
    assert lines[2].startswith(f"  attacker 2 198.18.0.6: FAILED: {early['error']}; 50/s share, 210 requests")


class LocalHosts(remote.RemoteAttack):
    """The attack as remote.py drives it, each "host" a local shell instead of an ssh session."""

    def _ssh(self, host: remote.AttackerHost, line: str) -> list[str]:
        return ["sh", "-c", line]


@pytest.mark.integration  # processes (a shell per host, vegeta, a small HTTP server), no namespace, no server
def test_an_attacker_that_dies_mid_attack_is_flagged_and_the_others_results_are_kept(tmp_path: Path) -> None:
    import http.server
    import threading

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 — http.server's name
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    vegeta = ensure_vegeta(Settings.from_env(env_for(tmp_path / "state")))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        wrappers = {  # host 2: killed after 1 s (exit 137); host 3: stops cleanly after 1 s (exit 0)
            2: f'[ "$1" = attack ] && exec timeout -s KILL 1 {vegeta} "$@"\nexec {vegeta} "$@"\n',
            3: f'[ "$1" = attack ] && exec {vegeta} "$@" -duration=1s\nexec {vegeta} "$@"\n'}
        checks = []
        for i in (1, 2, 3):
            folder = tmp_path / f"host{i}"
            folder.mkdir()
            (folder / "targets.json").write_text(
                json.dumps({"method": "GET", "url": f"http://127.0.0.1:{server.server_port}/"}) + "\n")
            program = str(vegeta)
            if i in wrappers:
                program = str(tmp_path / f"vegeta-{i}")
                Path(program).write_text("#!/bin/sh\n" + wrappers[i])
                Path(program).chmod(0o755)
            checks.append(remote.HostCheck(i, remote.AttackerHost(f"host{i}", "", 22, "", program), str(folder),
                                           VEGETA_VERSION, 0.0, 0.0, 0.01))
        run = tmp_path / "run"
        run.mkdir()
        attack = LocalHosts(Settings.from_env(env_for(tmp_path / "state")), checks, run,
                            AttackOptions(60, 3.0, max_connections=8), "get-60", lambda url: None)
        attack.start()
        while attack.still_running_after(1.0):
            pass
        attack.wait()
        parts = attack.collect(vegeta)
    finally:
        server.shutdown()
    assert parts[0]["error"] is None and parts[0]["requests"] == 60, parts[0]
    assert parts[1]["error"].startswith("its attack was killed by signal 9"), parts[1]
    assert parts[2]["error"].startswith("its attack ended early: ") and parts[2]["exit_code"] == 0, parts[2]
    assert (run / "results-1.bin").exists() and not any((tmp_path / f"host{i}").exists() for i in (1, 2, 3))
    guards = _guards([summary | {"rate": 20} for summary in parts])
    assert [g.split(":")[0] for g in guards] == ["attacker 2 (host2) failed", "attacker 3 (host3) failed"], guards


# ---- the lab command: unit (no process) ----

def test_lab_up_where_namespaces_cannot_be_made_is_one_line_and_makes_nothing(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    code, out, err = run_main(["lab", "up"], env_for(tmp_path / "state", REPLBENCH_LAB=str(tmp_path / "lab")))
    assert code == 1 and err.strip().splitlines() == [
        "replbench: the lab needs network namespaces, which cannot be made here: network namespaces need root "
        "(ip netns add)"], err
    assert not (tmp_path / "lab").exists()


@pytest.mark.parametrize("args, needle", [
    (["lab", "down", "--replicas", "2"], "--replicas and --attackers go with lab up, not lab down"),
    (["lab", "status", "--attackers", "1"], "--replicas and --attackers go with lab up, not lab status"),
    (["lab", "up", "--replicas", "5"], "--replicas must be from 1 to 4, got 5"),
    (["lab", "up", "--attackers", "17"], "--attackers must be from 0 to 16, got 17"),
    (["lab", "sideways"], "invalid choice: 'sideways'"),
])
def test_bad_lab_arguments_exit_2(tmp_path: Path, args: list[str], needle: str) -> None:
    code, _, err = run_main(args, env_for(tmp_path / "state", REPLBENCH_LAB=str(tmp_path / "lab")))
    assert code == 2 and needle in err, err


def test_no_lab_is_nothing_to_remove_and_not_up(tmp_path: Path) -> None:
    env = env_for(tmp_path / "state", REPLBENCH_LAB=str(tmp_path / "lab"))
    code, out, _ = run_main(["lab", "down"], env)
    assert code == 0 and out.startswith("replbench lab: nothing to remove"), out
    code, out, _ = run_main(["lab", "status"], env)
    assert code == 1 and out.startswith("replbench lab: not up"), out


def test_the_labs_topology_file_and_ssh_config_name_its_hosts_and_no_credential(tmp_path: Path) -> None:
    from replbench.core import topofile
    from replbench.topology import lab as labs

    made = netns.Lab(labs.host_names(2, 2), tmp_path, owner=labs.owner_token(tmp_path))
    made.subnet = netns.ipaddress.ip_network("198.18.3.0/24")
    made.hosts = {n: netns.Host(n, f"198.18.3.{i + 2}", f"replbench-x-{n}", f"rb3h{i}") for i, n in
                  enumerate(made.names)}
    metrics = {n: f"http://{made.host(n).address}:9100/metrics" for n in made.names}
    path = tmp_path / labs.TOPOLOGY
    path.write_text(labs.topology_text(made, ["master", "replica1", "replica2"], ["client1", "client2"], metrics,
                                       Path("/opt/vegeta")))
    parsed = topofile.load(path)
    assert [(n.name, n.host, n.metrics) for n in parsed.nodes] == [
        ("master", "198.18.3.2", metrics["master"]), ("replica1", "198.18.3.3", metrics["replica1"]),
        ("replica2", "198.18.3.4", metrics["replica2"])]
    assert [(a.host, a.metrics, a.vegeta) for a in parsed.attackers] == [
        ("198.18.3.5", metrics["client1"], "/opt/vegeta"), ("198.18.3.6", metrics["client2"], "/opt/vegeta")]
    assert parsed.app_listen == "198.18.3.1" and "password" not in path.read_text().lower()
    config = labs.ssh_config_text(made, tmp_path)
    assert "Host 198.18.3.*\n  User root\n" in config and f"IdentityFile {tmp_path.resolve() / 'id_ed25519'}" in config
    assert f"UserKnownHostsFile {tmp_path.resolve() / 'known_hosts'}" in config
    assert "StrictHostKeyChecking yes" in config
    # its namespaces outlive `lab up` (no pid in their names: netns.sweep_stale leaves them), one owner per folder
    assert not re.fullmatch(rf"{netns.PREFIX}(\d+)-[a-z0-9-]+", f"{netns.PREFIX}{made.owner}-master")
    assert labs.owner_token(tmp_path) != labs.owner_token(tmp_path / "other")
