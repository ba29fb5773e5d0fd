"""The command line of replbench: builds the parser of every command, dispatches to the command modules, and is
the one place that turns failures into exit codes.

Exit codes: 0 ok, 1 failure (one line; an unexpected one leaves its trace in harness.log), 2 bad arguments (the
command's usage, then the error line), 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import sys
from collections.abc import Callable, Sequence

from .. import __version__
from ..core import harnesslog, records, scenario
from ..core.config import OPEN_FILES_WANTED, ConfigError, ReplbenchError, Settings
from ..core.records import EXIT_BROKEN_PIPE, EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_USAGE
from ..experiments import campaign
from . import bench, docs, lab, profile, setup
from .args import (
    UsageError,
)
from .parser import build_parser

Handler = Callable[[argparse.Namespace], int]
HANDLERS: dict[str, Handler] = {
    "up": setup.cmd_up, "down": setup.cmd_down, "status": setup.cmd_status,
    "dataset": setup.cmd_dataset, "reset": setup.cmd_reset, "test": setup.cmd_test, "docs": docs.cmd_docs,
    "lab": lab.cmd_lab,
    **bench.HANDLERS, **profile.HANDLERS,
}


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

    raise_open_files_limit()
    interrupt_on_signals()
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        if argv and argv[0] in scenario.available():
            _mark_incomplete_runs()
            return _unit_finished(bench.run_scenario(argv))
        if argv and not argv[0].startswith("-") and argv[0] not in HANDLERS:
            raise UsageError(f"unknown command or scenario {argv[0]!r}; scenarios: "
                             f"{', '.join(scenario.available())}")
        args = parser.parse_args(argv)
        if args.version:
            print(bench.versions_text())
            return 0
        if not args.command:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        _mark_incomplete_runs()
        return _unit_finished(HANDLERS[args.command](args))
    except UsageError as exc:
        (exc.args[1] if len(exc.args) > 1 else parser).print_usage(sys.stderr)
        print(f"./run.sh: error: {exc.args[0]}", file=sys.stderr)
        return EXIT_USAGE
    except ConfigError as exc:
        print(f"./run.sh: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `./run.sh status | head`: the reader left; nothing failed here
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
        return EXIT_BROKEN_PIPE
    except ReplbenchError as exc:
        print(f"replbench: {exc}", file=sys.stderr)
        harnesslog.write(f"failed: {exc}", exc, _fallback_log())
        return EXIT_FAILURE
    except Exception as exc:  # noqa: BLE001 — the one place where anything unexpected becomes one line
        where = harnesslog.write(f"unexpected failure: {exc!r}", exc, _fallback_log())
        print(f"replbench: unexpected failure: {type(exc).__name__}: {exc}"
              + (f" (trace in {where})" if where else ""), file=sys.stderr)
        return EXIT_FAILURE


def _unit_finished(code: int) -> int:
    """Inside a campaign, a command that returned with its results (exit 0, or 1 for a measured failure) says so
    last: the campaign's completion check reads that line, whatever the command."""
    if os.environ.get(campaign.UNIT_ENV) and code in (0, 1):
        print(f"{campaign.UNIT_FINISHED} (exit {code})", flush=True)
    return code


def _mark_incomplete_runs() -> None:

    try:
        results = Settings.from_env().results
    except ConfigError:
        return
    for folder in records.mark_incomplete(results) if results.is_dir() else []:
        print(f"replbench: marked {folder.name} incomplete (its harness stopped before the run finished)",
              file=sys.stderr)


def _fallback_log():
    try:
        return Settings.from_env().results / "harness.log"
    except ConfigError:
        return None


__all__ = ["main", "__version__"]
