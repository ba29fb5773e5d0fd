"""`./run.sh lab up|down|status`: the hosts of topology/netns kept up between commands, so that a DBA (and the
tests) can try the topology-file path on one machine with nothing to set:

    ./run.sh lab up          # master, replica1 … replicaN, client1 … clientM in network namespaces
    ./run.sh dataset --topology .lab/topology.toml
    ./run.sh read 500 --topology .lab/topology.toml
    ./run.sh lab down        # every process, namespace, veth and the bridge; the lab's folder

`lab up` makes a namespace per host on one bridge (198.18.0.0/15), a mariadbd in each database host with the native
topology's server settings (mysql/*.cnf, REPLBENCH_BUFFER_POOL) and GTID replication from the master, an OpenSSH
server in each client host, a node_exporter in every host, and writes into the lab's folder (REPLBENCH_LAB, .lab):
topology.toml naming them, ssh_config with known_hosts and a key beside it, and lab.json, the record from which a
later `lab down` or `lab status` finds it all.

How the harness gets in without a credential in any file or in the environment: the lab creates the harness's user
(REPLBENCH_DB_USER, replbench) with its password (REPLBENCH_DB_PASSWORD, none), allowed only from the lab's own
/24, an address that exists only on the lab's bridge and inside its namespaces; ssh reads the ssh_config that lies
beside the topology file (load/remote.ssh_config_file), which names the key and known_hosts in the folder.
docs/lab.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import time
from pathlib import Path
from typing import Any

from ..core.config import ReplbenchError, Settings
from ..core.nodenames import node_names
from ..core.processes import alive
from ..core.progress import Progress
from ..core.records import shown_path
from ..core.topofile import SSH_CONFIG_BESIDE
from . import appserver, netns
from .install import ensure_mariadb, ensure_node_exporter, ensure_openssh, ensure_vegeta

DEFAULT_ATTACKERS = 2
RECORD = "lab.json"
TOPOLOGY = "topology.toml"
KEY = "id_ed25519"
KNOWN_HOSTS = "known_hosts"
SSH_USER = "root"  # the clients' sshd takes the lab's key for root (netns.Lab.sshd)


class LabError(ReplbenchError):
    """The lab cannot be made, is up already in another shape, or is partly gone; the message says what to do."""


def host_names(replicas: int, attackers: int) -> list[str]:
    return [*node_names(replicas), *(f"client{i + 1}" for i in range(attackers))]


def owner_token(folder: Path) -> str:
    """The lab's owner in its namespaces' and bridge's names: one per folder (two clones, two labs), never a pid
    (netns.sweep_stale removes the labs of processes that are gone; this one outlives `lab up`)."""
    return "l" + hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:8]


def read_record(folder: Path) -> dict[str, Any] | None:
    try:
        return json.loads((folder / RECORD).read_text())
    except (OSError, ValueError):
        return None


def missing(record: dict[str, Any]) -> list[str]:
    """What of a recorded lab is gone: a namespace, or a process no longer running inside its namespace."""
    present = set(netns.namespaces_of(record["network"]["owner"]))
    gone = []
    for name, host in record["network"]["hosts"].items():
        if host["namespace"] not in present:
            gone.append(f"{name}'s namespace")
            continue
        gone += [f"{program} in {name} (pid {pid})" for program, pid in host["processes"].items()
                 if not alive(pid) or not netns.in_namespace(pid, host["namespace"])]
    return gone


def up(settings: Settings, replicas: int, attackers: int, progress: Progress) -> tuple[dict[str, Any], bool]:
    """Make the lab in settings.lab, or find it up already in that shape: (its record, whether it was made now).
    One line (LabError) where namespaces cannot be made, or a lab is up in another shape or partly gone."""
    reason = netns.unavailable()
    if reason:
        raise LabError(f"the lab needs network namespaces, which cannot be made here: {reason}")
    folder = settings.lab
    record = read_record(folder)
    if record is not None:
        gone = missing(record)
        if gone:
            raise LabError(f"the lab in {folder} is partly gone ({', '.join(gone)}): ./run.sh lab down, then "
                           "./run.sh lab up")
        shape = record["shape"]
        if (shape["replicas"], shape["attackers"]) != (replicas, attackers):
            raise LabError(f"a lab is up already with {shape['replicas']} replicas and {shape['attackers']} "
                           f"attacker hosts ({folder / TOPOLOGY}): ./run.sh lab down first to make another")
        return record, False
    if folder.exists():  # what a `lab up` that failed half-way left: nothing of it is up, or it is removed now
        netns.remove_recorded({"owner": owner_token(folder)})
        shutil.rmtree(folder)
    with progress.phase("what the lab runs: MariaDB, OpenSSH, node_exporter, vegeta"):
        ensure_mariadb()
        ensure_openssh()
        ensure_node_exporter()
        vegeta = ensure_vegeta(settings)
    lab = netns.Lab(host_names(replicas, attackers), folder, owner=owner_token(folder))
    try:
        record = _make(lab, settings, replicas, attackers, vegeta, progress)
    except BaseException:
        with contextlib.suppress(netns.NetnsError):  # the first error is the one to tell
            lab.down()
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return record, True


def _make(lab: netns.Lab, settings: Settings, replicas: int, attackers: int, vegeta: Path,
          progress: Progress) -> dict[str, Any]:
    folder = lab.folder
    databases = list(node_names(replicas))
    clients = [f"client{i + 1}" for i in range(attackers)]
    with progress.phase(f"{len(lab.names)} namespaces on one bridge"):
        lab.up()
    assert lab.subnet is not None
    with progress.phase(f"mariadbd in {', '.join(databases)} (GTID replication from master)"):
        lab.databases(lab.host("master"), [lab.host(n) for n in databases[1:]], settings.db_user,
                      settings.db_password, buffer_pool=settings.buffer_pool, overrides={},
                      user_host=f"{lab.subnet.network_address}/{lab.subnet.netmask}")
    key = netns.client_key(folder / KEY)
    if clients:
        with progress.phase(f"sshd in {', '.join(clients)}"):
            for name in clients:
                lab.sshd(lab.host(name), key.with_suffix(".pub"))
    with progress.phase("node_exporter in every host"):
        metrics = {name: lab.node_exporter(lab.host(name)) for name in lab.names}
    lab.known_hosts(folder / KNOWN_HOSTS)
    (folder / SSH_CONFIG_BESIDE).write_text(ssh_config_text(lab, folder))
    (folder / TOPOLOGY).write_text(topology_text(lab, databases, clients, metrics, vegeta))
    record = {"made_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "shape": {"replicas": replicas, "attackers": attackers}, "network": lab.record(),
              "harness_user": settings.db_user}
    (folder / RECORD).write_text(json.dumps(record, indent=2) + "\n")
    return record


def topology_text(lab: netns.Lab, databases: list[str], clients: list[str], metrics: dict[str, str],
                  vegeta: Path) -> str:
    """The lab as a topology file: each database host and its node_exporter, the app listening on the bridge,
    each client host as an attacker with its node_exporter and this harness's vegeta (the namespaces share this
    machine's files). No credential: docs/lab.md says how the harness gets in."""
    lines = ["# written by ./run.sh lab up: hosts made of network namespaces on this machine (./run.sh lab down "
             "removes them)",
             f'description = "lab: a master, {len(databases) - 1} replicas and {len(clients)} attacker hosts in '
             'network namespaces on this machine"']
    for name in databases:
        lines += [f"[{name}]", f'host = "{lab.host(name).address}"', f'metrics = "{metrics[name]}"']
    lines += ["[app]", f'listen = "{lab.gateway}"']
    for name in clients:
        lines += ["[[attacker]]", f'host = "{lab.host(name).address}"', f'metrics = "{metrics[name]}"',
                  f'vegeta = "{vegeta}"']
    return "\n".join(lines) + "\n"


def ssh_config_text(lab: netns.Lab, folder: Path) -> str:
    """How ssh reaches the lab's client hosts: as root, with the lab's key, against the lab's known_hosts only."""
    assert lab.subnet is not None
    prefix = str(lab.subnet.network_address).rsplit(".", 1)[0]
    return "\n".join([
        "# written by ./run.sh lab up; read because it lies beside topology.toml (REPLBENCH_SSH_CONFIG unset)",
        f"Host {prefix}.*",
        f"  User {SSH_USER}",
        f"  IdentityFile {(folder / KEY).resolve()}",
        "  IdentitiesOnly yes",
        f"  UserKnownHostsFile {(folder / KNOWN_HOSTS).resolve()}",
        "  StrictHostKeyChecking yes",
        "  LogLevel ERROR",
        ""])


def down(settings: Settings) -> list[str]:
    """Remove the lab in settings.lab: the app a run started for its topology file, every process, namespace and
    veth, the bridge, then the folder. Idempotent; returns what was removed ([] when there was no lab)."""
    folder = settings.lab
    if not folder.exists():
        return []
    record = read_record(folder)
    removed = []
    if (folder / TOPOLOGY).exists() and appserver.stop(settings.with_overrides(topology=str(folder / TOPOLOGY))):
        removed.append("the app")
    reason = netns.unavailable() if record is not None else None
    if reason:
        raise LabError(f"the lab in {folder} cannot be removed here: {reason}")
    removed += netns.remove_recorded(record["network"] if record else {"owner": owner_token(folder)})
    shutil.rmtree(folder)
    return [*removed, shown_path(folder)]
