"""Pinned cores for the native topology: `--cpus app=0-3,master=4-7,replica1=8-11,replica2=12-15,vegeta=16-19`
confines each process group to its cores (every thread of every process: sched_setaffinity per task), so one
big machine behaves like the reference's separate VMs. A run without --cpus gives every group all the cores back
(no run inherits another's pinning). What each process really got is read back from the kernel and recorded."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..core.config import Settings
from ..core.nodenames import MAX_REPLICAS, node_names
from ..core.results import Cpus
from ..topology import appserver, nodes

GROUPS = ("app", *node_names(MAX_REPLICAS), "vegeta")  # a replica the topology lacks: refused by the run
RANGE_RE = re.compile(r"^(\d+)(?:-(\d+))?$")


def all_cpus() -> set[int]:
    return set(os.sched_getaffinity(0)) | set(range(os.cpu_count() or 1))


def parse(spec: str | None) -> dict[str, set[int]]:
    """'app=0,master=1,vegeta=0-1' -> {group: cpus}; ValueError naming the bad part."""
    if not spec:
        return {}
    available = set(range(os.cpu_count() or 1))
    out: dict[str, set[int]] = {}
    for part in spec.split(","):
        group, _, cores = part.strip().partition("=")
        if group not in GROUPS:
            raise ValueError(f"--cpus: unknown group {group!r}; groups: {', '.join(GROUPS)}")
        cpus: set[int] = set()
        for piece in cores.split("+"):
            match = RANGE_RE.match(piece.strip())
            if not match:
                raise ValueError(f"--cpus: bad cores {cores!r} for {group} (use 0-3, 5, or 0-1+4)")
            low, high = int(match.group(1)), int(match.group(2) or match.group(1))
            if low > high:
                raise ValueError(f"--cpus: bad range {piece!r} for {group}")
            cpus |= set(range(low, high + 1))
        missing = cpus - available
        if missing:
            raise ValueError(f"--cpus: {group} names cores {sorted(missing)} this machine does not have "
                             f"(it has 0-{max(available)})")
        if group in out:
            raise ValueError(f"--cpus: {group} is named twice")
        out[group] = cpus
    return out


def pin(pids: list[int], cpus: set[int]) -> None:
    """Confine every thread of every pid to cpus (a process that went away is skipped)."""
    for pid in pids:
        try:
            tasks = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        except OSError:
            continue
        for tid in tasks:
            try:
                os.sched_setaffinity(tid, cpus)
            except OSError:
                pass


def read_back(pids: list[int]) -> list[int] | None:
    """The cores the kernel lets the first of pids run on (None if none is alive)."""
    for pid in pids:
        try:
            return sorted(os.sched_getaffinity(pid))
        except OSError:
            continue
    return None


def taskset_prefix(cpus: set[int] | None) -> list[str]:
    """A command prefix that starts a process already confined (vegeta: its threads inherit it)."""
    if not cpus or not Path("/usr/bin/taskset").exists():
        return []
    return ["/usr/bin/taskset", "-c", ",".join(str(c) for c in sorted(cpus))]


def describe(pinning: dict[str, set[int]]) -> str:
    return ", ".join(f"{g}={','.join(str(c) for c in sorted(cpus))}" for g, cpus in pinning.items())


def pin_groups(settings: Settings, spec: str) -> Cpus:
    """Every group of the native topology (the app, each node) on its cores as `spec` names them, or on all of them:
    nothing inherits an earlier command's pinning. What was asked, pinned and read back from the kernel."""
    pinning = parse(spec)
    everything = all_cpus()
    groups = {"app": [p.pid for p in appserver.app_processes(settings)],
              **{n.name: [pid] if (pid := nodes.node_pid(n)) else [] for n in settings.nodes}}
    for group, pids in groups.items():
        pin(pids, pinning.get(group, everything))
    return Cpus(requested=spec or None, pinned={g: sorted(c) for g, c in pinning.items()},
                read_back={g: read_back(pids) for g, pids in groups.items()})
