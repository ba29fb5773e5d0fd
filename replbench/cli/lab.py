"""`./run.sh lab up|down|status`: hosts made of network namespaces on this machine, kept up between commands
(topology/lab), whose topology file the other commands take with --topology. docs/lab.md."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..core.nodenames import DEFAULT_REPLICAS, MAX_REPLICAS, MIN_REPLICAS
from ..core.progress import Progress
from ..core.records import shown_path
from ..core.topofile import MAX_ATTACKERS
from ..topology import lab
from .args import UsageError, help_formatter, settings_from


def add_parser(sub: Any) -> None:
    p = sub.add_parser("lab", help="hosts made of network namespaces on this machine, for trying a topology file: "
                       "lab up, lab down, lab status", formatter_class=help_formatter)
    p.add_argument("action", choices=("up", "down", "status"),
                   help="up: make the hosts and write their topology file (REPLBENCH_LAB, .lab/topology.toml); "
                   "down: remove everything; status: what runs")
    p.add_argument("--replicas", dest="lab_replicas", type=int, metavar="N",
                   help=f"lab up: database replicas, {MIN_REPLICAS} to {MAX_REPLICAS} (default {DEFAULT_REPLICAS})")
    p.add_argument("--attackers", dest="lab_attackers", type=int, metavar="N",
                   help=f"lab up: client hosts the load comes from over SSH, 0 to {MAX_ATTACKERS} (default "
                   f"{lab.DEFAULT_ATTACKERS})")


def cmd_lab(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    if args.action != "up" and (args.lab_replicas is not None or args.lab_attackers is not None):
        raise UsageError(f"--replicas and --attackers go with lab up, not lab {args.action}")
    if args.action == "down":
        removed = lab.down(settings)
        print(f"replbench lab: removed {', '.join(removed)}" if removed else
              f"replbench lab: nothing to remove ({shown_path(settings.lab)} does not exist)")
        return 0
    if args.action == "status":
        return print_status(settings.lab)
    replicas = DEFAULT_REPLICAS if args.lab_replicas is None else args.lab_replicas
    attackers = lab.DEFAULT_ATTACKERS if args.lab_attackers is None else args.lab_attackers
    if not MIN_REPLICAS <= replicas <= MAX_REPLICAS:
        raise UsageError(f"--replicas must be from {MIN_REPLICAS} to {MAX_REPLICAS}, got {replicas}")
    if not 0 <= attackers <= MAX_ATTACKERS:
        raise UsageError(f"--attackers must be from 0 to {MAX_ATTACKERS}, got {attackers}")
    record, made = lab.up(settings, replicas, attackers, Progress("lab"))
    topology = shown_path(settings.lab / lab.TOPOLOGY)
    hosts = record["network"]["hosts"]
    print(("replbench lab: up: " if made else "replbench lab: already up (reused): ")
          + ", ".join(f"{name} {h['address']} ({', '.join(h['processes'])})" for name, h in hosts.items())
          + f"; the app started here listens on {record['network']['gateway']}")
    print(f"topology file: {topology} (ssh_config, known_hosts and the key beside it; no credential needed)")
    if made:
        print(f"next: ./run.sh dataset --topology {topology}, then ./run.sh read 500 --topology {topology}; "
              "./run.sh lab down removes it all")
    return 0


def print_status(folder: Path) -> int:
    """Each host, its address and its processes (pid, up or gone); exit 1 when no lab is up or a part is gone."""
    record = lab.read_record(folder)
    if record is None:
        print(f"replbench lab: not up (no {shown_path(folder / lab.RECORD)}; ./run.sh lab up makes one)")
        return 1
    gone = lab.missing(record)
    network = record["network"]
    shape = record["shape"]
    print(f"lab: {shape['replicas']} replicas, {shape['attackers']} attacker hosts, made {record['made_at']}; "
          f"bridge {network['bridge']} {network['gateway']} ({network['subnet']}); topology file "
          f"{shown_path(folder / lab.TOPOLOGY)}")
    for name, host in network["hosts"].items():
        processes = ", ".join(f"{program} {pid} " + ("GONE" if f"{program} in {name} (pid {pid})" in gone else "up")
                              for program, pid in host["processes"].items())
        print(f"{name:<9} {host['address']:<15} {host['namespace']:<30} {processes}")
    if gone:
        print(f"gone: {', '.join(gone)} (./run.sh lab down, then ./run.sh lab up)")
        return 1
    print(f"replication and lag: ./run.sh status --topology {shown_path(folder / lab.TOPOLOGY)}")
    return 0

