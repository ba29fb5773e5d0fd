"""A topology file (`--topology FILE` or REPLBENCH_TOPOLOGY): the DBA's own master and one to four replicas
([replica1] … [replica4], numbered without gaps; most have two), each a host
and port and optionally the URL of a Prometheus node_exporter on that host, and the app (managed here as usual,
reaching the nodes at those addresses). The harness never starts, stops or copies such a server; it talks SQL over
TCP only. Credentials never appear in the file: REPLBENCH_DB_USER / REPLBENCH_DB_PASSWORD (the harness) and
REPLBENCH_APP_USER / REPLBENCH_APP_PASSWORD (the app; default: the harness's) come from the environment.

    description = "staging: one master, two replicas in another rack"
    [master]
    host = "db1.example"
    port = 3306
    metrics = "http://db1.example:9100/metrics"   # optional: node_exporter, for the node's CPU
    [replica1]
    host = "db2.example"
    [replica2]
    host = "db3.example"
    [app]                                         # optional: an app of this suite already serving elsewhere
    url = "http://app1.example:8080"              # (default: started here, reaching the nodes above)
    # listen = "10.0.0.5"                         # or: the address the app started here listens on (the
                                                  # attackers' hosts reach it there; default 127.0.0.1)
    [[attacker]]                                  # optional, one table per client host: the load comes from
    host = "client1.example"                      # vegeta on each over SSH (REPLBENCH_SSH_KEY / _CONFIG), at
    user = "bench"                                # one agreed start, each with its share of the rate
    metrics = "http://client1.example:9100/metrics"  # optional: node_exporter, for that host's CPU
    vegeta = "/usr/local/bin/vegeta"              # optional (default: vegeta on that host's PATH)
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, create_model, model_validator

from .nodenames import MAX_REPLICAS, node_names
from .schema import FieldError, FileModel, between, http_url, validate

ROLES = node_names(MAX_REPLICAS)  # every section a file may have: master, replica1 … replica4
DEFAULT_PORT = 3306
DEFAULT_LISTEN = "127.0.0.1"
SSH_PORT = 22
MAX_ATTACKERS = 16
SSH_CONFIG_BESIDE = "ssh_config"  # an ssh_config of this name beside the file reaches its attackers (load/remote)


class TopologyFileError(ValueError):
    """A topology file that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class NodeAddress:
    name: str
    host: str
    port: int
    metrics: str  # node_exporter URL, "" when none


@dataclass(frozen=True)
class AttackerHost:
    """A client host the attack runs on (over SSH): load/remote.py."""

    host: str
    user: str  # "" = ssh's own choice (REPLBENCH_SSH_CONFIG, else the local user)
    port: int
    metrics: str  # node_exporter URL, "" when none
    vegeta: str  # the vegeta program on that host

    @property
    def destination(self) -> str:
        return f"{self.user}@{self.host}" if self.user else self.host


@dataclass(frozen=True)
class TopologyFile:
    path: Path
    description: str
    nodes: tuple[NodeAddress, ...]
    app_url: str = ""  # an app of this suite already serving there ("" = started here as usual)
    app_listen: str = DEFAULT_LISTEN  # where the app started here listens (and the targets point)
    attackers: tuple[AttackerHost, ...] = ()  # client hosts driven over SSH (none: vegeta runs here)

    def node(self, name: str) -> NodeAddress:
        return next(n for n in self.nodes if n.name == name)


def load(path: Path) -> TopologyFile:
    """Parse and check a topology file; every problem is one line naming the file."""
    where = path.name
    try:
        source = path.read_text()
        data = tomllib.loads(source)
    except FileNotFoundError:
        raise TopologyFileError(f"topology file {path} does not exist") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise TopologyFileError(f"{where}: not a readable TOML file ({exc})") from None
    checked = validate(TopologyTables, data, where, source, TopologyFileError)
    nodes = tuple(NodeAddress(role, node.host, node.port, node.metrics) for role, node in checked.nodes())
    attackers = tuple(AttackerHost(a.host, a.user, a.port, a.metrics, a.vegeta) for a in checked.attacker)
    return TopologyFile(path, checked.description, nodes, checked.app.url.rstrip("/"), checked.app.listen,
                        attackers)


# The file's model: a table per node (ROLES), the app's table, and the checks across them.

def _host(value: str) -> str:
    if not value.strip():
        raise ValueError("must name a host")
    return value.strip()


class NodeTable(FileModel):
    host: Annotated[str, AfterValidator(_host)]
    port: Annotated[int, between(1, 65535)] = DEFAULT_PORT
    metrics: Annotated[str, http_url("a node_exporter URL (http://host:9100/metrics)")] = ""


class AppTable(FileModel):
    url: Annotated[str, http_url("http(s)://host:port (an app of this suite already serving)")] = ""
    listen: Annotated[str, AfterValidator(_host)] = DEFAULT_LISTEN

    @model_validator(mode="after")
    def _one_app(self) -> AppTable:
        if self.url and self.listen != DEFAULT_LISTEN:
            raise FieldError(("listen",), "an app at a url is not started here: listen has no use beside url")
        return self


def _user(value: str) -> str:
    if value != value.strip() or any(c in value for c in "@ :/"):
        raise ValueError(f"must be a user name (no spaces, @, : or /); got {value!r}")
    return value


class AttackerTable(FileModel):
    host: Annotated[str, AfterValidator(_host)]
    user: Annotated[str, AfterValidator(_user)] = ""
    port: Annotated[int, between(1, 65535)] = SSH_PORT
    metrics: Annotated[str, http_url("a node_exporter URL (http://host:9100/metrics)")] = ""
    vegeta: Annotated[str, AfterValidator(_host)] = "vegeta"


class _Tables(FileModel):
    description: str = ""
    app: AppTable = AppTable()
    attacker: list[AttackerTable] = []

    def nodes(self) -> list[tuple[str, NodeTable]]:
        """(role, table) of the nodes the file names, master first."""
        return [(role, getattr(self, role)) for role in ROLES if getattr(self, role) is not None]

    @model_validator(mode="after")
    def _numbered_and_distinct(self) -> _Tables:
        present = self.nodes()
        missing = [role for role in node_names(max(1, len(present) - 1)) if getattr(self, role) is None]
        if missing:
            raise ValueError(f"missing role(s) {', '.join(missing)}: a master and replicas numbered from replica1 "
                             "without gaps")
        seen: dict[tuple[str, int], str] = {}
        for role, node in present:
            key = (node.host, node.port)
            if key in seen:
                raise ValueError(f"{role} and {seen[key]} are the same server ({node.host}:{node.port})")
            seen[key] = role
        if len(self.attacker) > MAX_ATTACKERS:
            raise FieldError(("attacker",), f"at most {MAX_ATTACKERS} attacker hosts, got {len(self.attacker)}")
        hosts: dict[tuple[str, int], int] = {}
        for i, attacker in enumerate(self.attacker):
            key = (attacker.host, attacker.port)
            if key in hosts:
                raise FieldError(("attacker", i, "host"), f"the same host as attacker {hosts[key] + 1} "
                                 f"({attacker.host}:{attacker.port}); one table per client host")
            hosts[key] = i
        if self.attacker and self.app.url:
            raise FieldError(("app", "url"), "attackers on other hosts need an app started here (listen = "
                             "its address they reach), not an app at a url")
        return self


# a table per role (master, replica1 … replica4), from the one list of node names
TopologyTables = create_model("TopologyTables", __base__=_Tables,
                              **{role: (NodeTable | None, None) for role in ROLES})  # type: ignore[call-overload]
