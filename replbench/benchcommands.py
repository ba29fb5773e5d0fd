"""Benchmark subcommands of ./run.sh: one run (<scenario> <rate>), sweep, report, compare and bench-app."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from . import scenario as scenarios
from .cli import EXIT_USAGE, ArgumentParser, UsageError, add_app_flags, add_topology_flags, settings_from
from .knobs import BINLOG_FORMATS, ROW_IMAGES, Knobs
from .run import Run, RunOptions, exit_code, new_folder

MAX_RATE = 100_000


def add_run_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--duration", help="attack duration, e.g. 60s, 5m, 90m (default: the scenario's)")
    parser.add_argument("--timeout", default="30s", help="per-request timeout of vegeta (default 30s)")
    parser.add_argument("--binlog-format", choices=BINLOG_FORMATS, default="ROW")
    parser.add_argument("--binlog-row-image", choices=ROW_IMAGES, default="FULL")
    parser.add_argument("--sync-binlog", type=int, default=1)
    parser.add_argument("--flush-log-at-trx-commit", type=int, choices=(0, 1, 2), default=1)
    add_topology_flags(parser)
    add_app_flags(parser)


def run_parser() -> ArgumentParser:
    names = ", ".join(scenarios.available())
    parser = ArgumentParser(prog="./run.sh <scenario> <rate>",
                            description=f"One constant-rate benchmark run. Scenarios: {names}")
    parser.add_argument("scenario", help=f"one of: {names}")
    parser.add_argument("rate", help=f"requests per second (1..{MAX_RATE})")
    add_run_flags(parser)
    return parser


def parse_rate(text: str) -> int:
    try:
        rate = int(text)
    except ValueError:
        raise UsageError(f"rate must be a whole number of requests per second, got {text!r}") from None
    if not 1 <= rate <= MAX_RATE:
        raise UsageError(f"rate must be from 1 to {MAX_RATE}, got {rate}")
    return rate


def parse_seconds(text: str, what: str) -> float:
    try:
        return scenarios.parse_duration(text)
    except ValueError as exc:
        raise UsageError(f"{what}: {exc}") from None


def run_options(args: argparse.Namespace, scenario: scenarios.Scenario) -> RunOptions:
    duration = scenario.duration if args.duration is None else parse_seconds(args.duration, "--duration")
    try:
        knobs = Knobs(args.binlog_format, args.binlog_row_image, args.sync_binlog, args.flush_log_at_trx_commit)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return RunOptions(duration=duration, timeout=parse_seconds(args.timeout, "--timeout"), knobs=knobs)


def load_scenario(name: str) -> scenarios.Scenario:
    try:
        return scenarios.load(name)
    except scenarios.ScenarioError as exc:
        raise UsageError(str(exc)) from None


def run_scenario(argv: list[str]) -> int:
    """./run.sh <scenario> <rate> [options]."""
    from .commands import reports_errors

    parser = run_parser()
    try:
        args = parser.parse_args(argv)
        scenario = load_scenario(args.scenario)
        rate = parse_rate(args.rate)
        options = run_options(args, scenario)
        settings = settings_from(args)
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        print(f"./run.sh: error: {exc}", file=sys.stderr)
        print(f"scenarios: {', '.join(scenarios.available())}", file=sys.stderr)
        return EXIT_USAGE

    @reports_errors
    def go(_: argparse.Namespace) -> int:
        folder = new_folder(settings, scenario, rate)
        print(f"replbench: {scenario.name} at {rate} rps for {options.duration:g} s → {folder}", file=sys.stderr)
        summary = Run(settings, scenario, rate, options, folder).execute()
        block = folder / "block.txt"
        print(block.read_text() if block.exists() else f"Status: {summary['status']} (no results)    {folder}")
        return exit_code(summary["status"])

    return go(args)


def add_parsers(sub: Any, add_topology: Callable[..., None], add_app: Callable[..., None]) -> None:
    p = sub.add_parser("bench-app", help="measure the app tier's CPU-ms per request (find_users, update_user)")
    p.add_argument("--rate", type=int, default=1000, help="constant rate of each measurement (default 1000)")
    p.add_argument("--duration", default="20s", help="length of each measurement (default 20s)")
    p.add_argument("--combinations", action="store_true",
                   help="measure every driver × worker class combination, not only the configured one")
    add_topology(p)
    add_app(p)
