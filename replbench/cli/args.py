"""Command-line vocabulary shared by every command module: the usage error, the argument parser that
raises it, the topology/app flags, and the parsers of rates and durations. A leaf: it imports only the core."""

from __future__ import annotations

import argparse

from ..core.config import ConfigError, Settings, parse_duration

MAX_RATE = 100_000


class UsageError(Exception):
    """Bad command-line input: printed after the command's usage, exit 2."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse that raises UsageError (so the right command's usage is printed) instead of exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message, self)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every flag's help ends with its default, except where there is none to show."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in (None, False, []) or "(default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def help_formatter(prog: str) -> argparse.HelpFormatter:
    return HelpFormatter(prog, max_help_position=36, width=110)


def add_topology_flags(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("topology")
    g.add_argument("--topology", help="a TOML file naming your own master and replicas (env REPLBENCH_TOPOLOGY; "
                   "default: the native topology this suite starts); credentials from REPLBENCH_DB_USER / "
                   "REPLBENCH_DB_PASSWORD")
    g.add_argument("--state", help="state folder (env REPLBENCH_STATE, default .state; .state-<file> with "
                   "--topology)")
    g.add_argument("--replicas", dest="replicas_asked",
                   help="replicas of the native topology, 1 to 4: added (cloned from replica1) or removed before "
                   "the command, and kept for the next (env REPLBENCH_REPLICAS; default: as many as there are now, "
                   "2 at first)")
    g.add_argument("--port-base", type=int, help="master port; replicas +1, +2, … (env REPLBENCH_PORT_BASE, 3306)")
    g.add_argument("--app-port", type=int, help="app port (env REPLBENCH_APP_PORT, default 8080)")
    g.add_argument("--accounts", type=int, help="dataset size (env REPLBENCH_ACCOUNTS, default 8000000)")
    g.add_argument("--seed", type=int, help="dataset seed (env REPLBENCH_SEED, default 42)")


def add_app_flags(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("app")
    g.add_argument("--workers", type=int, dest="app_workers", help="gunicorn workers (default: cores)")
    g.add_argument("--driver", choices=("aiomysql", "asyncmy"), help="async MySQL driver (default asyncmy)")
    g.add_argument("--worker-class", choices=("aiohttp", "uvloop"), help="gunicorn worker class (default uvloop)")
    g.add_argument("--pool-size", type=int, help="connections per node per app worker (default 16)")


def settings_from(args: argparse.Namespace) -> Settings:
    names = ("topology", "state", "replicas_asked", "port_base", "app_port", "accounts", "seed", "app_workers",
             "driver", "worker_class", "pool_size", "results", "idle_window")
    try:
        settings = Settings.from_env().with_overrides(**{n: getattr(args, n, None) for n in names})
        settings.external  # noqa: B018 — a bad topology file is a usage error, found before anything starts
        return settings
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def parse_seconds(text: str, what: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise UsageError(f"{what}: {exc}") from None


def parse_rate(text: str) -> int:
    try:
        rate = int(text)
    except ValueError:
        raise UsageError(f"rate must be a whole number of requests per second, got {text!r}") from None
    if not 1 <= rate <= MAX_RATE:
        raise UsageError(f"rate must be from 1 to {MAX_RATE}, got {rate}")
    return rate
