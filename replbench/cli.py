"""Command line of replbench: parses ./run.sh's arguments and dispatches to the harness modules.

Exit codes: 0 ok, 1 failure (with a message), 2 bad arguments (usage on stderr), 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence

from .config import OPEN_FILES_WANTED, ROOT, ConfigError, Settings

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """Bad command-line input: printed with the usage, exit 2."""


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def add_topology_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--state", help="state folder (env REPLBENCH_STATE, default .state)")
    parser.add_argument("--port-base", type=int, help="master port; replicas +1, +2 (env REPLBENCH_PORT_BASE)")
    parser.add_argument("--app-port", type=int, help="app port (env REPLBENCH_APP_PORT, default 8080)")
    parser.add_argument("--accounts", type=int, help="dataset size (env REPLBENCH_ACCOUNTS, default 8000000)")
    parser.add_argument("--seed", type=int, help="dataset seed (env REPLBENCH_SEED, default 42)")
    parser.add_argument("--buffer-pool", help="innodb_buffer_pool_size per node (env REPLBENCH_BUFFER_POOL)")


def add_app_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=int, dest="app_workers", help="gunicorn workers (default: cores)")
    parser.add_argument("--driver", choices=("aiomysql", "asyncmy"), help="async MySQL driver of the app")
    parser.add_argument("--worker-class", choices=("aiohttp", "uvloop"), help="gunicorn worker class")
    parser.add_argument("--pool-size", type=int, help="connections per node per app worker")


def settings_from(args: argparse.Namespace) -> Settings:
    names = ("state", "port_base", "app_port", "accounts", "seed", "buffer_pool", "app_workers", "driver",
             "worker_class", "pool_size")
    return Settings.from_env().with_overrides(**{n: getattr(args, n, None) for n in names})


def build_parser() -> ArgumentParser:
    from . import scenario

    names = ", ".join(scenario.available()) or "(none found)"
    parser = ArgumentParser(
        prog="./run.sh",
        description="replbench: what MySQL-style row-based replication really costs.",
        epilog=f"Run a benchmark: ./run.sh <scenario> <rate> [options]   scenarios: {names}\n"
               "Example: ./run.sh read 3000",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="command", parser_class=ArgumentParser)

    for name, help_text in (("up", "start the topology and the app (builds the dataset on first use)"),
                            ("down", "stop the app and all three nodes"),
                            ("status", "show each node, replication, lag, row counts and the app")):
        p = sub.add_parser(name, help=help_text)
        add_topology_flags(p)
        add_app_flags(p)
    p = sub.add_parser("dataset", help="build the accounts dataset (once; --rebuild to rebuild)")
    add_topology_flags(p)
    p.add_argument("--rebuild", action="store_true", help="rebuild even if a dataset exists")
    p = sub.add_parser("reset", help="restore all nodes to the pristine post-load state")
    add_topology_flags(p)
    p = sub.add_parser("test", help="run the test suite against a small separate topology")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER, help="extra pytest arguments")

    from . import commands

    commands.add_benchmark_commands(sub)
    return parser


def raise_open_files_limit(wanted: int = OPEN_FILES_WANTED) -> int:
    """vegeta and gunicorn hold one descriptor per connection, and an overloaded run has tens of thousands in
    flight: lift the limit (inherited by every child) to `wanted`, the hard limit too when allowed (root)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, wanted))
            return wanted
        except (ValueError, OSError):  # not privileged: the soft limit can still go up to the hard one
            pass
    target = wanted if hard == resource.RLIM_INFINITY else max(soft, min(hard, wanted))
    resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return target


def interrupt_on_signals() -> None:
    """Ctrl-C and `kill` both end a run the same graceful way (partial results kept, exit 130), even when this
    process was started in the background, where SIGINT arrives ignored."""
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, interrupt)


def main(argv: Sequence[str] | None = None) -> int:
    from . import commands, scenario

    raise_open_files_limit()
    interrupt_on_signals()
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        if argv and argv[0] in scenario.available():
            return commands.run_scenario_command(argv)
        if argv and not argv[0].startswith("-") and argv[0] not in _subcommands(parser):
            raise UsageError(f"unknown command or scenario {argv[0]!r}; scenarios: "
                             f"{', '.join(scenario.available())}")
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        handler: Callable[[argparse.Namespace], int] = getattr(commands, "cmd_" + args.command.replace("-", "_"))
        return handler(args)
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        print(f"./run.sh: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ConfigError as exc:
        print(f"./run.sh: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _subcommands(parser: argparse.ArgumentParser) -> set[str]:
    for action in parser._actions:  # argparse keeps subparsers here
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


def run_tests(extra: list[str]) -> int:
    """./run.sh test: pytest (tests bring up their own small topology on other ports and state)."""
    env = dict(os.environ)
    cmd = [sys.executable, "-m", "pytest", "-ra", str(ROOT / "tests"), *extra]
    return subprocess.call(cmd, cwd=ROOT, env=env)
