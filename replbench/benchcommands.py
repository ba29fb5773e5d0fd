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
from .sweep import Sweep, describe_max

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
    p = sub.add_parser("sweep", help="a ladder of runs of one scenario: where does it break?")
    p.add_argument("scenario", help=f"one of: {', '.join(scenarios.available())}")
    p.add_argument("--rates", help="comma-separated rates (default: the scenario's ladder)")
    p.add_argument("--repeat", type=int, default=1, help="runs per step; the verdict uses the median")
    p.add_argument("--refine", action="store_true", help="bisect between the last pass and the first fail")
    add_run_flags(p)

    p = sub.add_parser("report", help="regenerate report.md from results/")
    p.add_argument("--output", help="where to write the report (default: report.md at the top level)")
    p.add_argument("--results", help="results folder (default: results/, env REPLBENCH_RESULTS)")

    p = sub.add_parser("compare", help="compare two runs or two sweeps (folders or names under results/)")
    p.add_argument("base")
    p.add_argument("new")
    p.add_argument("--band", type=float, default=5.0, help="noise band in percent (default 5)")
    p.add_argument("--results", help="results folder (default: results/, env REPLBENCH_RESULTS)")

    p = sub.add_parser("bench-app", help="measure the app tier's CPU-ms per request (find_users, update_user)")
    p.add_argument("--rate", type=int, default=1000, help="constant rate of each measurement (default 1000)")
    p.add_argument("--duration", default="20s", help="length of each measurement (default 20s)")
    p.add_argument("--combinations", action="store_true",
                   help="measure every driver × worker class combination, not only the configured one")
    add_topology(p)
    add_app(p)


def cmd_sweep(args: argparse.Namespace) -> int:

    scenario = load_scenario(args.scenario)
    rates = list(scenario.rates)
    if args.rates:
        rates = [parse_rate(r.strip()) for r in args.rates.split(",") if r.strip()]
        if not rates:
            raise UsageError("--rates needs at least one rate")
    if args.repeat < 1:
        raise UsageError("--repeat must be 1 or more")
    options = run_options(args, scenario)
    settings = settings_from(args)
    sweep = Sweep(settings, scenario, rates, options, repeat=args.repeat, refine=args.refine)
    print(f"replbench: sweep {scenario.name} over {rates} rps, {options.duration:g} s per step → {sweep.folder}",
          file=sys.stderr)
    data = sweep.execute()
    print(f"\nsweep {scenario.name}: {sweep.folder}")
    for step in data["steps"]:
        verdict = "PASS" if step["passed"] else "FAIL (" + "; ".join(step["reasons"]) + ")"
        print(f"  {step['rate']:>6} rps{' (refine)' if step['refined'] else '         '}  {verdict}")
    print(f"max sustainable rate: {describe_max(data)} ({scenario.criteria.describe()})")
    return 130 if data["status"] == "interrupted" else 0


def results_settings(args: argparse.Namespace):
    settings = settings_from(args)
    if getattr(args, "results", None):
        settings = settings.with_overrides(results=args.results)
    return settings


def cmd_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .report import generate

    settings = results_settings(args)
    output = generate(settings, Path(args.output).resolve() if args.output else None)
    print(f"replbench: wrote {output}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    import time

    from .compare import CompareError, compare, resolve

    settings = results_settings(args)
    try:
        base, new = resolve(args.base, settings.results), resolve(args.new, settings.results)
    except CompareError as exc:
        raise UsageError(str(exc)) from None
    text = compare(base, new, args.band)
    settings.results.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = settings.results / f"compare-{stamp}-{base.name}-vs-{new.name}.md"
    out.write_text(text)
    print(text + f"\nsaved: {out}")
    return 0


def cmd_bench_app(args: argparse.Namespace) -> int:
    """App CPU-ms per request for find_users (read) and update_user (write), per driver × worker class."""
    import time

    settings = settings_from(args)
    duration = parse_seconds(args.duration, "--duration")
    rate = parse_rate(str(args.rate))
    combos = [(settings.driver, settings.worker_class)]
    if args.combinations:
        combos = [(d, w) for d in ("aiomysql", "asyncmy") for w in ("aiohttp", "uvloop")]
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    parent = settings.results / f"bench-app-{stamp}"
    rows = []
    for driver, worker in combos:
        combo_settings = settings.with_overrides(driver=driver, worker_class=worker)
        for name in ("read", "write"):
            scenario = load_scenario(name)
            folder = new_folder(combo_settings, scenario, rate, parent=parent / f"{driver}-{worker}")
            summary = Run(combo_settings, scenario, rate, RunOptions(duration=duration), folder).execute()
            if summary.get("status") == "interrupted":
                return 130
            per_req = summary.get("cpu_ms_per_request") or {}
            db = sum(per_req.get(n, 0) for n in ("master", "replica1", "replica2"))
            rows.append((driver, worker, name, per_req.get("app"), db, summary.get("success"),
                         (summary.get("latency_ms") or {}).get("p99"), folder))
    print(f"\napp tier cost at {rate} rps, {duration:g} s each (CPU-ms per request = process CPU s ÷ requests)")
    print(f"{'driver':<9} {'worker':<8} {'scenario':<8} {'app ms/req':>10} {'db ms/req':>10} {'success':>8} "
          f"{'p99 ms':>8}  folder")
    for driver, worker, name, app, db, success, p99, folder in rows:
        print(f"{driver:<9} {worker:<8} {name:<8} {app or 0:>10.3f} {db:>10.3f} {100 * (success or 0):>7.2f}% "
              f"{p99 or 0:>8.1f}  {folder}")
    return 0
