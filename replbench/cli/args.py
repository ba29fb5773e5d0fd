"""Command-line vocabulary shared by every command module: the usage error, the argument parser that
raises it, the topology/app flags, and the parsers of rates and durations. A leaf: it imports only the core."""

from __future__ import annotations

import argparse
from typing import Any

from ..core.config import DRIVERS, SETTINGS, WORKER_CLASS_NAMES, ConfigError, Settings, parse_duration
from ..core.nodenames import DEFAULT_REPLICAS, MAX_REPLICAS, MIN_REPLICAS

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


SETTING_FLAGS: set[str] = set()  # the settings some command's flag overrides (their dest is the setting's name)


def setting_flag(group: argparse._ActionsContainer, flag: str, name: str, what: str, *, type: Any = None,
                 choices: tuple[str, ...] | None = None, default_text: str | None = None,
                 metavar: str | None = None) -> None:
    """A flag that overrides one setting of config.SETTING_LIST: its environment variable and default are the
    table's, stated in the help (default_text where the table's default is not what a reader should see)."""
    setting = SETTINGS[name]
    SETTING_FLAGS.add(name)
    default = default_text if default_text is not None else (setting.default or "none")
    group.add_argument(flag, dest=name, type=type, choices=choices, metavar=metavar,
                       help=f"{what} (env {setting.env}, default {default})")


def add_topology_flags(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("topology")
    setting_flag(g, "--topology", "topology", "a TOML file naming your own master and replicas; credentials from "
                 "REPLBENCH_DB_USER / REPLBENCH_DB_PASSWORD", default_text="the native topology this suite starts")
    setting_flag(g, "--state", "state", "state folder", default_text=f"{SETTINGS['state'].default}; "
                 ".state-<file> with --topology")
    setting_flag(g, "--replicas", "replicas_asked", f"replicas of the native topology, {MIN_REPLICAS} to "
                 f"{MAX_REPLICAS}: added (cloned from replica1) or removed before the command, and kept for the next",
                 default_text=f"as many as there are now, {DEFAULT_REPLICAS} at first")
    setting_flag(g, "--port-base", "port_base", "master port; replicas +1, +2, …", type=int)
    setting_flag(g, "--app-port", "app_port", "app port", type=int)
    setting_flag(g, "--accounts", "accounts", "dataset size", type=int)
    setting_flag(g, "--seed", "seed", "dataset seed", type=int)


def add_app_flags(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("app")
    setting_flag(g, "--workers", "app_workers", "gunicorn workers", type=int, default_text="cores")
    setting_flag(g, "--driver", "driver", "async MySQL driver", choices=DRIVERS)
    setting_flag(g, "--worker-class", "worker_class", "gunicorn worker class", choices=WORKER_CLASS_NAMES)
    setting_flag(g, "--pool-size", "pool_size", "connections per node per app worker", type=int)


def settings_from(args: argparse.Namespace) -> Settings:
    """The settings of the environment, with every flag given that names a setting (its dest) on top."""
    try:
        settings = Settings.from_env().with_overrides(**{n: getattr(args, n, None) for n in SETTING_FLAGS})
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
