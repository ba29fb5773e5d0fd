"""The parser of ./run.sh: every command and its flags (the commands' own parsers come from bench and setup's
callers). Its own module so that the command line (main) and the generated docs (docs) both build it."""

from __future__ import annotations

import argparse

from ..core import scenario
from ..core.config import MAX_TEST_LANES, TEST_LANES
from . import bench, lab, profile
from .args import ArgumentParser, add_app_flags, add_topology_flags, help_formatter


def lanes_count(text: str) -> int:
    """--lanes N: whole, 1 to MAX_TEST_LANES (each lane holds a small topology: three mariadbd and an app)."""
    n = int(text) if text.isdigit() else 0
    if not 1 <= n <= MAX_TEST_LANES:
        raise argparse.ArgumentTypeError(f"{text!r}: give the lanes as a whole number from 1 to {MAX_TEST_LANES}")
    return n


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
                   help="the unit tier only: no server, no install, about a minute (docs/development.md)")
    p.add_argument("--lanes", type=lanes_count, default=TEST_LANES, metavar="N",
                   help=f"pytest sessions side by side for the tests that need servers, each with a small topology "
                        f"of its own (default {TEST_LANES}; 1: one session)")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER, help="extra pytest arguments (after --)")
    lab.add_parser(sub)
    sub.add_parser("docs", help="rewrite docs/settings.md from the settings table and every command's flags")
    bench.add_parsers(sub)
    profile.add_parser(sub)
    return parser
