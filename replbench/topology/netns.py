"""Hosts made of network namespaces on this machine, for tests and demos: N namespaces joined by one bridge through
veth pairs, each with its own address from the benchmarking range 198.18.0.0/15 (RFC 2544), which exists only on
that bridge and inside those namespaces. Inside each host: a mariadbd (its own datadir under the lab's folder, GTID
replication from the lab's master), an OpenSSH server (an attacker host), a node_exporter, or nothing. The bridge
itself holds the .1 address, so this host (the harness, the app) reaches every namespace and they reach it. Traffic
never leaves the machine: the bridge has no physical port and nothing forwards its packets anywhere.

    with Lab(["master", "replica1", "client1"], folder) as lab:
        lab.databases(lab.host("master"), [lab.host("replica1")], user="bench", password="...")
        lab.sshd(lab.host("client1"))

Every namespace, the bridge and every process started in a namespace are removed when the `with` ends, also on an
error; a lab a killed process left behind is removed by the next one (`sweep_stale`). A lab meant to outlive the
process that made it (`./run.sh lab up`, topology/lab) is made without `with`, under an owner token instead of a
pid (sweep_stale leaves it alone), and described by record(); remove_recorded() removes it from a later process.
Needs root and `ip netns` (`unavailable()` says why not, so tests can skip with that reason). docs/lab.md.
"""

from __future__ import annotations

import contextlib
import getpass
import ipaddress
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import psutil

from ..core.config import Node, ReplbenchError
from ..core.processes import wait_gone
from .install import ensure_mariadb, ensure_node_exporter, ensure_openssh
from .nodes import write_node_cnf

NETWORK = ipaddress.ip_network("198.18.0.0/15")  # RFC 2544's benchmarking range: never routed on the internet
PREFIX = "replbench-"  # namespaces: replbench-<owner pid>-<host>; the bridge's alias: replbench-netns-<owner pid>
BRIDGE_ALIAS = PREFIX + "netns-"
MAX_HOSTS = 250  # a /24 per lab: .1 is the bridge, the hosts from .2
DB_PORT = 3306
SSH_PORT = 22
EXPORTER_PORT = 9100
START_TIMEOUT = 30.0  # seconds for a server in a namespace to answer
STOP_TIMEOUT = 10.0
IP_TIMEOUT = 15.0
# a test's lab's mariadbd by default: the suite's own settings (mysql/*.cnf, topology/nodes.write_node_cnf), small
# enough for several on one test box (`./run.sh lab up` gives its own the native topology's settings, unchanged)
SMALL_BUFFER_POOL = "128M"
SMALL_SERVER = {"innodb_log_file_size": "48M", "max_connections": "200"}


class NetnsError(ReplbenchError):
    """A namespace, the bridge or a server inside could not be made or removed; the message says which."""


def _ip(*args: str, namespace: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = ["ip", *(["netns", "exec", namespace, "ip"] if namespace else []), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=IP_TIMEOUT, check=False)
    if check and proc.returncode != 0:
        raise NetnsError(f"`{' '.join(cmd)}` failed: {proc.stderr.strip() or proc.returncode}")
    return proc


def unavailable() -> str | None:
    """Why network namespaces cannot be made here (not root, no `ip`, the kernel or a container refuses), or None
    when a probe namespace and bridge were made and removed."""
    if os.geteuid() != 0:
        return "network namespaces need root (ip netns add)"
    if shutil.which("ip") is None:
        return "the ip command (iproute2) is missing"
    probe = f"{PREFIX}{os.getpid()}-probe"
    try:
        made = _ip("netns", "add", probe, check=False)
        if made.returncode != 0:
            return f"ip netns add failed here: {made.stderr.strip()}"
        bridge = _ip("link", "add", "rbprobe0", "type", "bridge", check=False)
        if bridge.returncode != 0:
            return f"a bridge cannot be made here: {bridge.stderr.strip()}"
        _ip("link", "del", "rbprobe0", check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"ip netns does not work here: {exc}"
    finally:
        _ip("netns", "del", probe, check=False)
    return None


@dataclass
class Host:
    """One namespace: its name in the lab, its address, and the processes started in it."""

    name: str
    address: str
    namespace: str
    veth: str  # the host side of its veth pair (on the bridge)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def exec_prefix(self) -> list[str]:
        return ["ip", "netns", "exec", self.namespace]


class Lab:
    """N hosts in namespaces on one bridge; a context manager that removes all of it."""

    def __init__(self, names: list[str], folder: Path, owner: str = "") -> None:
        if not 1 <= len(names) <= MAX_HOSTS or len(set(names)) != len(names):
            raise NetnsError(f"a lab has 1 to {MAX_HOSTS} hosts with distinct names, got {names}")
        bad = [n for n in names if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,30}", n)]
        if bad:
            raise NetnsError(f"host names are lowercase letters, digits and dashes: {bad}")
        if owner and not re.fullmatch(r"[a-z][a-z0-9]{0,15}", owner):
            raise NetnsError(f"a lab's owner token is a lowercase letter, then letters and digits: {owner!r}")
        self.names = names
        self.folder = folder
        self.owner = owner or str(os.getpid())  # a pid: swept once that process is gone; a token: kept
        self.subnet: ipaddress.IPv4Network | None = None
        self.bridge = ""
        self.hosts: dict[str, Host] = {}

    # ---- the network ----

    def __enter__(self) -> Lab:
        try:
            self.up()
        except BaseException:
            with contextlib.suppress(NetnsError):  # the first error is the one to tell
                self.down()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.down()

    @property
    def gateway(self) -> str:
        """The bridge's own address: where the namespaces reach this host (the app, the harness)."""
        assert self.subnet is not None
        return str(self.subnet.network_address + 1)

    def host(self, name: str) -> Host:
        return self.hosts[name]

    def up(self) -> None:
        sweep_stale()
        self.folder.mkdir(parents=True, exist_ok=True)
        index = _free_subnet_index()
        self.subnet = ipaddress.IPv4Network(f"{NETWORK.network_address + 256 * index}/24")
        self.bridge = f"rbbr{index}"
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("link", "set", "dev", self.bridge, "alias", f"{BRIDGE_ALIAS}{self.owner}")
        _ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for i, name in enumerate(self.names):
            address = str(self.subnet.network_address + 2 + i)
            host = Host(name, address, f"{PREFIX}{self.owner}-{name}", f"rb{index}h{i}")
            self.hosts[name] = host
            _ip("netns", "add", host.namespace)
            peer = f"rb{index}n{i}"
            _ip("link", "add", host.veth, "type", "veth", "peer", "name", peer)
            _ip("link", "set", host.veth, "master", self.bridge)
            _ip("link", "set", host.veth, "up")
            _ip("link", "set", peer, "netns", host.namespace)
            _ip("link", "set", peer, "name", "eth0", namespace=host.namespace)
            _ip("addr", "add", f"{address}/24", "dev", "eth0", namespace=host.namespace)
            _ip("link", "set", "eth0", "up", namespace=host.namespace)
            _ip("link", "set", "lo", "up", namespace=host.namespace)
            _ip("route", "add", "default", "via", self.gateway, namespace=host.namespace)

    def down(self) -> None:
        """Stop every process started in the lab's namespaces (and anything else still inside them), delete the
        namespaces (their veth pairs go with them) and the bridge. Raises once everything was tried, naming what
        could not be removed."""
        problems: list[str] = []
        for host in self.hosts.values():
            _stop(host.processes)
        for host in self.hosts.values():
            problems += _remove_namespace(host.namespace)
        if self.bridge:
            gone = _ip("link", "del", self.bridge, check=False)
            if gone.returncode != 0 and "Cannot find device" not in gone.stderr:
                problems.append(f"bridge {self.bridge}: {gone.stderr.strip()}")
        self.hosts, self.bridge = {}, ""
        if problems:
            raise NetnsError("the lab was not removed entirely: " + "; ".join(problems))

    # ---- what runs inside ----

    def popen(self, host: Host, cmd: list[str], log: str) -> subprocess.Popen[bytes]:
        """Start a process inside the host's namespace (its own session, its output into the lab's folder)."""
        with open(self.folder / log, "ab") as out:
            proc = subprocess.Popen([*host.exec_prefix(), *cmd], stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        host.processes.append(proc)
        return proc

    def databases(self, master: Host, replicas: list[Host], user: str, password: str, *,
                  buffer_pool: str = SMALL_BUFFER_POOL, overrides: dict[str, str] | None = None,
                  user_host: str = "%") -> None:
        """A mariadbd in each host, from one freshly installed datadir (copied), the suite's settings
        (mysql/*.cnf; `overrides` on top, SMALL_SERVER unless given) listening on the host's address; `user` with
        every privilege from `user_host` (default: anywhere), each replica replicating from the master by GTID.
        Then the lab is a topology file's servers."""
        binaries = ensure_mariadb()
        server = {**(SMALL_SERVER if overrides is None else overrides)}
        template = self.folder / "template" / "data"
        if not (template / "mysql").is_dir():
            cnf = self._db_cnf("template", "master", 1, "127.0.0.1", buffer_pool, server)
            proc = subprocess.run([binaries["mariadb-install-db"], f"--defaults-file={cnf}",
                                   f"--user={getpass.getuser()}", "--auth-root-authentication-method=socket",
                                   "--skip-test-db"], capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise NetnsError(f"mariadb-install-db failed: {proc.stderr.strip()[-800:]}")
        repl_password = os.urandom(12).hex()
        hosts = [master, *replicas]
        started = []
        for server_id, host in enumerate(hosts, start=1):
            datadir = self.folder / host.name / "data"
            if datadir.exists():
                shutil.rmtree(datadir)
            shutil.copytree(template, datadir, symlinks=True)
            cnf = self._db_cnf(host.name, "master" if host is master else "replica", server_id, host.address,
                               buffer_pool, server)
            started.append((host, self.popen(host, [binaries["mariadbd"], f"--defaults-file={cnf}",
                                                    f"--user={getpass.getuser()}"], f"{host.name}-mariadbd.out")))
        for host, mariadbd in started:
            self._wait_socket(host, mariadbd)
        users = [
            "SET sql_log_bin = 0",
            f"CREATE USER '{user}'@'{user_host}' IDENTIFIED BY '{password}'",
            f"GRANT ALL PRIVILEGES ON *.* TO '{user}'@'{user_host}' WITH GRANT OPTION",
            f"CREATE USER 'repl'@'%' IDENTIFIED BY '{repl_password}'",
            "GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'",
            "RESET MASTER",  # every node starts with an empty GTID history: the replicas replay the master's all
        ]
        for host in hosts:
            statements = users if host is master else [
                *users, f"CHANGE MASTER TO MASTER_HOST='{master.address}', MASTER_PORT={DB_PORT}, "
                        f"MASTER_USER='repl', MASTER_PASSWORD='{repl_password}', MASTER_USE_GTID=slave_pos",
                "START SLAVE"]
            self._root_sql(host, statements)
        for host in replicas:
            self._wait_replicating(host)

    def sshd(self, host: Host, authorized_key: Path) -> None:
        """An OpenSSH server on the host's address, port 22, accepting `authorized_key` for root and nothing
        else; its host key is the lab's (known_hosts() lists it)."""
        binaries = ensure_openssh()
        host_key = self.host_key()
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
        config = self.folder / f"{host.name}-sshd_config"
        config.write_text("\n".join([
            f"ListenAddress {host.address}", f"Port {SSH_PORT}", f"HostKey {host_key}",
            f"PidFile {self.folder / (host.name + '-sshd.pid')}", f"AuthorizedKeysFile {authorized_key}",
            "PermitRootLogin prohibit-password", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
            "UsePAM no", "StrictModes no", "PrintMotd no", "AllowTcpForwarding no", "X11Forwarding no", ""]))
        proc = self.popen(host, [binaries["sshd"], "-D", "-e", "-f", str(config)], f"{host.name}-sshd.log")
        self._wait_port(host, SSH_PORT, proc, "sshd")

    def node_exporter(self, host: Host) -> str:
        """A node_exporter (CPU collector only) on the host's address; returns its metrics URL."""
        proc = self.popen(host, [ensure_node_exporter(), f"--web.listen-address={host.address}:{EXPORTER_PORT}",
                                 "--collector.disable-defaults", "--collector.cpu"], f"{host.name}-exporter.log")
        self._wait_port(host, EXPORTER_PORT, proc, "node_exporter")
        return f"http://{host.address}:{EXPORTER_PORT}/metrics"

    def host_key(self) -> Path:
        """The lab's one SSH host key (made on first use)."""
        key = self.folder / "ssh_host_ed25519_key"
        if not key.exists():
            _keygen(key)
        return key

    def record(self) -> dict[str, Any]:
        """What a later process needs to find and remove this lab (remove_recorded): its owner, bridge, subnet and
        each host's address, namespace and running processes (program name -> pid)."""
        return {"owner": self.owner, "bridge": self.bridge, "subnet": str(self.subnet), "gateway": self.gateway,
                "hosts": {h.name: {"address": h.address, "namespace": h.namespace, "veth": h.veth,
                                   "processes": {_program(p): p.pid for p in h.processes if p.poll() is None}}
                          for h in self.hosts.values()}}

    def known_hosts(self, path: Path) -> Path:
        """A known_hosts file naming every host of the lab by its address with the lab's host key."""
        public = self.host_key().with_suffix(".pub").read_text().split()[:2]
        path.write_text("".join(f"{h.address} {' '.join(public)}\n" for h in self.hosts.values()))
        return path

    # ---- helpers ----

    def _db_cnf(self, name: str, role: str, server_id: int, address: str, buffer_pool: str,
                server: dict[str, str]) -> Path:
        """The host's my.cnf by the native nodes' own writer (the same files, identity and paths under the lab's
        folder: <name>/data, <name>/mariadbd.sock …), listening on the host's address."""
        node = Node(name, DB_PORT, server_id, self.folder, host=address)
        node.datadir.mkdir(parents=True, exist_ok=True)
        return write_node_cnf(node, role, buffer_pool, {"bind_address": address, **server})

    def _socket(self, host: Host) -> Path:
        return self.folder / host.name / "mariadbd.sock"

    def _wait_socket(self, host: Host, proc: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise NetnsError(f"mariadbd in {host.name} exited (code {proc.returncode}); see "
                                 f"{self.folder / host.name / 'error.log'}")
            if self._socket(host).exists() and _answers(host.address, DB_PORT):
                return
            time.sleep(0.2)
        raise NetnsError(f"mariadbd in {host.name} did not answer at {host.address}:{DB_PORT} within "
                         f"{START_TIMEOUT:g} s")

    def _root_sql(self, host: Host, statements: list[str], header: bool = False) -> str:
        client = ensure_mariadb()["mariadb"]
        proc = subprocess.run([client, "--no-defaults", f"--socket={self._socket(host)}", "--user=root", "-B",
                               *([] if header else ["-N"])], input=";\n".join(statements) + ";\n",
                              capture_output=True, text=True, check=False, timeout=60)
        if proc.returncode != 0:
            raise NetnsError(f"SQL as root in {host.name} failed: {proc.stderr.strip()}")
        return proc.stdout

    def _wait_replicating(self, host: Host) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if replica_threads(self._root_sql(host, ["SHOW SLAVE STATUS"], header=True)) == ("Yes", "Yes"):
                return
            time.sleep(0.2)
        raise NetnsError(f"{host.name} did not start replicating within {START_TIMEOUT:g} s")

    def _wait_port(self, host: Host, port: int, proc: subprocess.Popen[bytes], what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise NetnsError(f"{what} in {host.name} exited (code {proc.returncode}); see {self.folder}")
            if _answers(host.address, port):
                return
            time.sleep(0.1)
        raise NetnsError(f"{what} in {host.name} did not answer at {host.address}:{port} within {START_TIMEOUT:g} s")


def replica_threads(table: str) -> tuple[str, str]:
    """(Slave_IO_Running, Slave_SQL_Running) from `SHOW SLAVE STATUS` printed by the client in batch mode (a
    header line, then one line of tab-separated values); ("", "") when the node is no replica."""
    lines = table.splitlines()
    if len(lines) < 2:
        return "", ""
    row = dict(zip(lines[0].split("\t"), lines[1].split("\t")))
    return row.get("Slave_IO_Running", ""), row.get("Slave_SQL_Running", "")


def _answers(address: str, port: int) -> bool:
    try:
        with socket.create_connection((address, port), timeout=0.5):
            return True
    except OSError:
        return False


def _keygen(path: Path) -> None:
    proc = subprocess.run([ensure_openssh()["ssh-keygen"], "-q", "-t", "ed25519", "-N", "", "-C", "replbench-lab",
                           "-f", str(path)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise NetnsError(f"ssh-keygen failed: {proc.stderr.strip()}")


def client_key(path: Path) -> Path:
    """A fresh SSH key pair for the harness (path and path.pub)."""
    if not path.exists():
        _keygen(path)
    return path


def _program(proc: subprocess.Popen[bytes]) -> str:
    """The name of the program a host's process runs (Lab.popen's command: ip netns exec NAMESPACE PROGRAM …)."""
    assert isinstance(proc.args, list)  # Lab.popen starts every one from a list
    return Path(proc.args[4]).name


def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to each process we started (by its pid), SIGKILL to what is left after STOP_TIMEOUT."""
    alive = [p for p in processes if p.poll() is None]
    for proc in alive:
        try:
            os.kill(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    left = wait_gone([p.pid for p in alive], STOP_TIMEOUT)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for proc in processes:
        try:
            proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            pass


def _remove_namespace(namespace: str) -> list[str]:
    """Kill what still runs inside one of our namespaces (only ever processes a lab started there), then delete
    it; the problems, if any."""
    pids = _ip("netns", "pids", namespace, check=False)
    inside = [int(p) for p in pids.stdout.split() if p.isdigit()]
    for pid in inside:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if wait_gone(inside, STOP_TIMEOUT):
        return [f"processes {inside} in {namespace} did not stop"]
    gone = _ip("netns", "del", namespace, check=False)
    if gone.returncode != 0 and "No such file" not in gone.stderr:
        return [f"namespace {namespace}: {gone.stderr.strip()}"]
    return []


def sweep_stale() -> list[str]:
    """Remove the namespaces and bridges of labs whose owner process is gone (killed before its `with` ended);
    returns what was removed."""
    removed: list[str] = []
    listed = _ip("netns", "list", check=False).stdout.split()
    for name in listed:
        match = re.fullmatch(rf"{PREFIX}(\d+)-[a-z0-9-]+", name)
        if match and not psutil.pid_exists(int(match.group(1))):
            if not _remove_namespace(name):
                removed.append(name)
    links = _ip("-j", "link", "show", "type", "bridge", check=False).stdout
    for link in json.loads(links or "[]"):
        alias = link.get("ifalias", "")
        if alias.startswith(BRIDGE_ALIAS) and alias[len(BRIDGE_ALIAS):].isdigit() \
                and not psutil.pid_exists(int(alias[len(BRIDGE_ALIAS):])):
            if _ip("link", "del", link["ifname"], check=False).returncode == 0:
                removed.append(link["ifname"])
    return removed


def namespaces_of(owner: str) -> list[str]:
    """The namespaces of this host that belong to a lab of that owner (its pid or token)."""
    return [n for n in _ip("netns", "list", check=False).stdout.split() if n.startswith(f"{PREFIX}{owner}-")]


def bridges_of(owner: str) -> list[str]:
    """The bridges of this host that a lab of that owner made (told by their alias)."""
    links = json.loads(_ip("-j", "link", "show", "type", "bridge", check=False).stdout or "[]")
    return [link["ifname"] for link in links if link.get("ifalias", "") == f"{BRIDGE_ALIAS}{owner}"]


def in_namespace(pid: int, namespace: str) -> bool:
    """Does that process run (still) inside that namespace (not a reused pid elsewhere)?"""
    return namespace in _ip("netns", "identify", str(pid), check=False).stdout.split()


def remove_recorded(record: dict[str, Any]) -> list[str]:
    """Remove a lab that another process made and left up (Lab.record()): SIGTERM to every recorded process still
    inside its namespace, SIGKILL after STOP_TIMEOUT to what is left there, then the namespaces (their veth pairs
    go with them) and the bridge, also those of the same owner the record does not name (a `lab up` that failed
    half-way). What is gone already is skipped: removing twice is removing once. Returns what was removed; raises
    naming what could not be, once everything was tried."""
    owner = str(record["owner"])
    hosts = record.get("hosts") or {}
    inside = [pid for h in hosts.values() for pid in (h.get("processes") or {}).values()
              if in_namespace(int(pid), h["namespace"])]
    for pid in inside:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    wait_gone(inside, STOP_TIMEOUT)  # what still runs there is killed with its namespace
    namespaces = sorted({h["namespace"] for h in hosts.values()} | set(namespaces_of(owner)))
    present = set(_ip("netns", "list", check=False).stdout.split())
    removed: list[str] = []
    problems: list[str] = []
    for namespace in namespaces:
        if namespace in present:
            failed = _remove_namespace(namespace)
            problems += failed
            removed += [] if failed else [namespace]
    for bridge in bridges_of(owner):
        gone = _ip("link", "del", bridge, check=False)
        if gone.returncode == 0:
            removed.append(bridge)
        elif "Cannot find device" not in gone.stderr:
            problems.append(f"bridge {bridge}: {gone.stderr.strip()}")
    if problems:
        raise NetnsError("the lab was not removed entirely: " + "; ".join(problems))
    return removed


def _free_subnet_index() -> int:
    """The first /24 of 198.18.0.0/15 that no interface of this host's namespace has an address in."""
    used: set[int] = set()
    for link in json.loads(_ip("-j", "addr", "show", check=False).stdout or "[]"):
        for info in link.get("addr_info", []):
            try:
                address = ipaddress.ip_address(info.get("local", ""))
            except ValueError:
                continue
            if address in NETWORK:
                used.add((int(address) - int(NETWORK.network_address)) // 256)
    for index in range(NETWORK.num_addresses // 256):
        if index not in used:
            return index
    raise NetnsError("every /24 of 198.18.0.0/15 is in use on this host")
