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
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from .nodenames import MAX_REPLICAS, node_names

ROLES = node_names(MAX_REPLICAS)  # every section a file may have: master, replica1 … replica4
NODE_KEYS = {"host", "port", "metrics"}
DEFAULT_PORT = 3306


class TopologyFileError(ValueError):
    """A topology file that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class NodeAddress:
    name: str
    host: str
    port: int
    metrics: str  # node_exporter URL, "" when none


@dataclass(frozen=True)
class TopologyFile:
    path: Path
    description: str
    nodes: tuple[NodeAddress, ...]
    app_url: str = ""  # an app of this suite already serving there ("" = started here as usual)

    def node(self, name: str) -> NodeAddress:
        return next(n for n in self.nodes if n.name == name)


def load(path: Path) -> TopologyFile:
    """Parse and check a topology file; every problem is one line naming the file."""
    where = path.name
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise TopologyFileError(f"topology file {path} does not exist") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise TopologyFileError(f"{where}: not a readable TOML file ({exc})") from None
    unknown = set(data) - {*ROLES, "description", "app"}
    if unknown:
        raise TopologyFileError(f"{where}: unknown section(s) {', '.join(sorted(unknown))}; "
                                f"expected {', '.join(ROLES)} (and description)")
    present = [role for role in ROLES if role in data]
    roles = node_names(max(1, len(present) - 1))
    missing = [role for role in roles if role not in data]
    if missing:
        raise TopologyFileError(f"{where}: missing role(s) {', '.join(missing)}: a master and replicas numbered "
                                f"from replica1 without gaps")
    nodes = []
    for role in roles:
        section = data[role]
        if not isinstance(section, dict):
            raise TopologyFileError(f"{where}: [{role}] must be a table with host and port")
        extra = set(section) - NODE_KEYS
        if extra:
            raise TopologyFileError(f"{where}: [{role}] has unknown key(s) {', '.join(sorted(extra))}; "
                                    f"allowed: {', '.join(sorted(NODE_KEYS))}")
        host = section.get("host")
        if not isinstance(host, str) or not host.strip():
            raise TopologyFileError(f"{where}: [{role}] needs a host")
        port = section.get("port", DEFAULT_PORT)
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            raise TopologyFileError(f"{where}: [{role}] port must be an integer from 1 to 65535; got {port!r}")
        metrics = section.get("metrics", "")
        if not isinstance(metrics, str) or (metrics and not metrics.startswith(("http://", "https://"))):
            raise TopologyFileError(f"{where}: [{role}] metrics must be a node_exporter URL (http://host:9100/"
                                    f"metrics); got {metrics!r}")
        nodes.append(NodeAddress(role, host.strip(), port, metrics))
    seen: dict[tuple[str, int], str] = {}
    for node in nodes:
        key = (node.host, node.port)
        if key in seen:
            raise TopologyFileError(f"{where}: {node.name} and {seen[key]} are the same server "
                                    f"({node.host}:{node.port})")
        seen[key] = node.name
    app = data.get("app", {})
    if not isinstance(app, dict) or set(app) - {"url"}:
        raise TopologyFileError(f"{where}: [app] takes one key, url (an app of this suite already serving)")
    url = app.get("url", "")
    if not isinstance(url, str) or (url and not url.startswith(("http://", "https://"))):
        raise TopologyFileError(f"{where}: [app] url must be http(s)://host:port; got {url!r}")
    description = data.get("description", "")
    return TopologyFile(path, str(description), tuple(nodes), url.rstrip("/"))
