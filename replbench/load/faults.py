"""Faults on purpose: `--fault ACTION:NODE@TIME` (repeatable, or `faults = [...]` in a scenario file), carried out
at TIME after the attack's start by a thread on the run's clock, each recorded with the moment it really happened.

Actions: kill (SIGKILL the node's mariadbd), start (start it again; a replica resumes replicating),
stop-replication / start-replication (STOP SLAVE / START SLAVE on a replica), cut / restore (disable / enable a
replica's toxiproxy link, named with --link: its IO thread loses the master and reconnects). The windows
before, during and after each fault (error %, p50/p99, rate) are cut from the timeline afterwards; the run then
brings every node back (as `up` does) and checks the replicas' checksums."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any

from ..core import sql
from ..core.config import Settings, parse_duration
from ..core.nodenames import MAX_REPLICAS, node_names
from ..topology import links, nodes

ACTIONS = ("kill", "start", "stop-replication", "start-replication", "cut", "restore")
RESTORES = {"kill": "start", "stop-replication": "start-replication", "cut": "restore"}
SPEC_RE = re.compile(r"^([a-z-]+):([a-z0-9]+)@(\S+)$")


@dataclass(frozen=True)
class Fault:
    action: str
    node: str
    at: float  # seconds after the attack's start

    @property
    def spec(self) -> str:
        return f"{self.action}:{self.node}@{self.at:g}s"


def parse(spec: str) -> Fault:
    """'kill:replica1@20s' -> Fault; ValueError with the allowed forms otherwise."""
    match = SPEC_RE.match(spec.strip())
    if not match:
        raise ValueError(f"bad fault {spec!r}: use ACTION:NODE@TIME, e.g. kill:replica1@20s")
    action, node, when = match.groups()
    if action not in ACTIONS:
        raise ValueError(f"bad fault {spec!r}: action must be one of {', '.join(ACTIONS)}")
    if node not in node_names(MAX_REPLICAS):
        raise ValueError(f"bad fault {spec!r}: node must be master or replica1 … replica{MAX_REPLICAS}")
    if (action.endswith("replication") or action in ("cut", "restore")) and node == "master":
        raise ValueError(f"bad fault {spec!r}: {action} applies to a replica")
    at = 0.0 if when in ("0", "0s") else parse_duration(when)
    return Fault(action, node, at)


def parse_all(specs: list[str], duration: float) -> tuple[Fault, ...]:
    faults = tuple(sorted((parse(s) for s in specs), key=lambda f: f.at))
    for f in faults:
        if f.at >= duration:
            raise ValueError(f"fault {f.spec} comes after the attack ends ({duration:g} s)")
    return faults


def carry_out(fault: Fault, settings: Settings) -> None:
    node = settings.node(fault.node)
    if node.external and fault.action in ("kill", "start", "cut", "restore"):
        raise nodes.TopologyError(f"a {fault.action} fault needs the native topology: {node.name} is a server "
                                     f"of {settings.topology_name}")
    if fault.action == "kill":
        pid = nodes.node_pid(node)
        if pid:
            os.kill(pid, signal.SIGKILL)
    elif fault.action in ("cut", "restore"):  # the replica's link through toxiproxy (--link)
        links.set_enabled(settings, fault.node, fault.action == "restore")
    elif fault.action == "start":
        nodes.start_node(node, settings)
        if node.role == "replica":
            nodes.ensure_replicating(node, settings)
    else:
        verb = sql.start_replica_sql if fault.action == "start-replication" else sql.stop_replica_sql
        with sql.admin(node, settings) as cur:
            cur.execute(verb(settings.flavour))


class FaultRunner:
    """Carries out the planned faults at their times (relative to attack_start on the run's clock)."""

    def __init__(self, settings: Settings, faults: tuple[Fault, ...], clock_zero: float) -> None:
        self.settings = settings
        self.faults = faults
        self.zero = clock_zero
        self.done: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, attack_start: float) -> None:
        if self.faults:
            self._thread = threading.Thread(target=self._loop, args=(attack_start,), daemon=True)
            self._thread.start()

    def _loop(self, attack_start: float) -> None:
        for fault in self.faults:
            due = self.zero + attack_start + fault.at
            if self._stop.wait(max(0.0, due - time.monotonic())):
                return
            record: dict[str, Any] = {"fault": fault.spec, "action": fault.action, "node": fault.node,
                                      "planned_at_s": fault.at,
                                      "began_at_s": round(time.monotonic() - self.zero - attack_start, 3)}
            try:
                carry_out(fault, self.settings)
                record["error"] = None
            except Exception as exc:  # noqa: BLE001 — a fault that could not be carried out is recorded
                record["error"] = f"{type(exc).__name__}: {exc}"
            record["at_s"] = round(time.monotonic() - self.zero - attack_start, 3)  # done (a start waits for
            # the node to be ready: crash recovery of a killed 8M node takes seconds)
            self.done.append(record)

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=30)


def outages(done: list[dict[str, Any]]) -> list[tuple[str, float, float | None]]:
    """(node, down at, back at or None) for every kill (or stop-replication) and its restore."""
    out: list[tuple[str, float, float | None]] = []
    for record in done:
        if record["action"] not in RESTORES:
            continue
        restore = next((r for r in done if r["node"] == record["node"] and r["action"] == RESTORES[record["action"]]
                        and r["at_s"] >= record["at_s"]), None)
        out.append((record["node"], record["at_s"], restore["at_s"] if restore else None))
    return out


def windows(done: list[dict[str, Any]], duration: float) -> list[tuple[str, float, float]]:
    """(name, start s, end s) for before / during / after each fault and its restore (times from the attack's
    start); a fault never restored is 'during' until the end."""
    out: list[tuple[str, float, float]] = []
    for record in done:
        if record["action"] not in RESTORES:
            continue
        restore = next((r for r in done if r["node"] == record["node"] and r["action"] == RESTORES[record["action"]]
                        and r["at_s"] >= record["at_s"]), None)
        end = restore["at_s"] if restore else duration
        label = f"{record['action']} {record['node']}"
        out += [(f"{label}: before", 0.0, record["at_s"]), (f"{label}: during", record["at_s"], end)]
        if restore:
            out.append((f"{label}: after", end, duration))
    return out
