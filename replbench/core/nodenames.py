"""The names of a topology's nodes: one master and 1 to 4 replicas (`--replicas N`, two by default), named
master, replica1 … replicaN. The one place that knows the pattern, so every module that reads per-node figures
follows N instead of naming two replicas."""

from __future__ import annotations

import re
from collections.abc import Iterable

MASTER = "master"
MIN_REPLICAS = 1
MAX_REPLICAS = 4
DEFAULT_REPLICAS = 2
REPLICA_RE = re.compile(r"^replica([1-9]\d*)$")


def node_names(replicas: int = DEFAULT_REPLICAS) -> tuple[str, ...]:
    """('master', 'replica1', …, 'replicaN')."""
    return (MASTER, *replica_names(replicas))


def replica_names(replicas: int = DEFAULT_REPLICAS) -> tuple[str, ...]:
    return tuple(f"replica{i}" for i in range(1, replicas + 1))


def is_replica(name: str) -> bool:
    return bool(REPLICA_RE.match(name))


def is_node(name: str) -> bool:
    """A database node's name (not app, vegeta, harness or host)."""
    return name == "master" or is_replica(name)


def replica_index(name: str) -> int:
    match = REPLICA_RE.match(name)
    if not match:
        raise ValueError(f"{name!r} is not a replica's name")
    return int(match.group(1))


def replicas_in(names: Iterable[str]) -> tuple[str, ...]:
    """The replica names among `names` (a summary's or a CSV's keys), in replica order: replica1 … replicaN."""
    return tuple(sorted({n for n in names if is_replica(n)}, key=replica_index))


def nodes_in(names: Iterable[str]) -> tuple[str, ...]:
    """The database nodes among `names`: the master (when present) first, then the replicas in order."""
    names = list(names)
    return (("master",) if "master" in names else ()) + replicas_in(names)
