"""The parser of ./run.sh: every command and its flags (the commands' own parsers come from bench and setup's
callers). Its own module so that the command line (main) and the generated docs (docs) both build it."""

from __future__ import annotations

import argparse

from ..core import scenario
from . import bench, lab, profile
from .args import ArgumentParser, add_app_flags, add_topology_flags, help_formatter


def build_parser() -> ArgumentParser:

    names = ", ".join(scenario.available()) or "(none found)"
    parser = ArgumentParser(
        prog="./run.sh",
        description="replbench: what MySQL-style row-based replication really costs.",
        epilog=f"Run a benchmark: ./run.sh <scenario> <rate> [options]   scenarios: {names}\n"
               "Example: ./run.sh read 3000      More: ./run.sh list, ./run.sh <command> --help",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="store_true", help="print the versions of replbench, vegeta, MariaDB")
    sub = parser.add_subparsers(dest="command", metavar="command", parser_class=ArgumentParser)
    for name, help_text in (("up", "start the topology and the app (builds the dataset on first use)"),
                            ("down", "stop the app and every node"),
                            ("status", "show each node, replication, lag and the app (--rows: row counts)")):
        p = sub.add_parser(name, help=help_text, formatter_class=help_formatter)
        add_topology_flags(p)
        add_app_flags(p)
        if name == "status":
            p.add_argument("--rows", action="store_true", help="also count the rows of every schema on every node")
    p = sub.add_parser("dataset", help="build the accounts dataset (once; --rebuild to rebuild)",
                       formatter_class=help_formatter)
    add_topology_flags(p)
    p.add_argument("--rebuild", action="store_true", help="rebuild even if a dataset exists")
    p = sub.add_parser("reset", help="restore all nodes to the pristine post-load state and the reference settings",
                       formatter_class=help_formatter)
    add_topology_flags(p)
    p = sub.add_parser("test", help="run the test suite against a small separate topology")
    p.add_argument("--fast", action="store_true",
                   help="the unit tier only: no server, no install, under a minute (docs/development.md)")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER, help="extra pytest arguments (after --)")
    lab.add_parser(sub)
    sub.add_parser("docs", help="rewrite docs/settings.md from the settings table and every command's flags")
    bench.add_parsers(sub)
    profile.add_parser(sub)
    return parser
