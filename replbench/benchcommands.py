"""Benchmark subcommands (filled in by the run/sweep/report issues)."""

from __future__ import annotations


def add_parsers(sub, add_topology_flags, add_app_flags) -> None:
    return None


def run_scenario(argv: list[str]) -> int:
    return 2
