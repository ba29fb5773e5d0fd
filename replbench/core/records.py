"""Run records as readers find them: a run killed from outside (its harness gone, meta.json still "running", no
summary.json) is marked "incomplete" by the next command that looks, with a summary.json saying so, so no reader
waits for it or takes it for a finished run."""

from __future__ import annotations

import re
import time
from pathlib import Path

from .config import ROOT, Settings
from .processes import alive
from .results import (  # noqa: F401  (the finished statuses re-exported: readers import every status here)
    SCHEMA_VERSION,
    STATUS_OK,
    STATUS_SUCCEEDED,
    STATUS_WARNING,
    read_meta,
    summary_of,
    write_record,
)
from .results import SCHEMA_VERSION as RESULTS_SCHEMA  # noqa: F401  (re-exported)
from .scenario import Scenario

# a run's status, in its meta.json and summary.json: the one spelling every reader compares against (a finished
# one's, STATUS_SUCCEEDED, in core/results: its FinishedRun record is chosen by it)
STATUS_FAILED = "FAILED"
STATUS_INTERRUPTED = "interrupted"
STATUS_RUNNING = "running"
STATUS_INCOMPLETE = "incomplete"

# a unit that is not one run (an apply-capacity drain, a big transaction, a study's unit) and a whole collection
# (a study or sweep "complete", a campaign "done"), in their JSON files
UNIT_OK = "ok"
UNIT_FAILED = "failed"
COMPLETE = "complete"
DONE = "done"

# exit codes of every command: 1 a failure (or a measured one), 2 bad arguments, 130 interrupted, 141 the reader of
# a pipe left early (the shell's own code for SIGPIPE)
EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141


def exit_code(status: str, strict: bool = False) -> int:
    """A run's exit code from its status: a warning is a failure only when --strict asked for it."""
    if strict and status == STATUS_WARNING:
        return EXIT_FAILURE
    return {STATUS_OK: EXIT_OK, STATUS_WARNING: EXIT_OK, STATUS_FAILED: EXIT_FAILURE,
            STATUS_INTERRUPTED: EXIT_INTERRUPTED}.get(status, EXIT_FAILURE)


def collection_exit_code(status: str, finished: str = COMPLETE) -> int:
    """A study's, sweep's, drain's or campaign's exit code from its status: 0 when it finished."""
    return {finished: EXIT_OK, STATUS_INTERRUPTED: EXIT_INTERRUPTED}.get(status, EXIT_FAILURE)


def mark_incomplete(results: Path) -> list[Path]:
    """Every run folder under results whose harness died mid-run; returns the folders it marked."""
    marked = []
    for meta_path in list(results.glob("*/meta.json")) + list(results.glob("*/*/meta.json")) \
            + list(results.glob("*/*/*/meta.json")):
        try:
            meta = read_meta(meta_path.parent)  # written back as it was, with the marks
        except (OSError, ValueError):
            continue
        if meta.status != STATUS_RUNNING or (meta.pid and alive(int(meta.pid))):
            continue
        folder = meta_path.parent
        write_record(meta_path, meta.model_copy(update=dict(
            status=STATUS_INCOMPLETE, exit_code=EXIT_FAILURE,
            marked_incomplete_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))))
        summary = folder / "summary.json"
        if not summary.exists():
            write_record(summary, summary_of({
                "schema_version": SCHEMA_VERSION, "status": STATUS_INCOMPLETE, "scenario": meta.scenario,
                "rate": meta.rate, "folder": folder.name, "errors": ["the harness stopped before the run finished"]}))
        marked.append(folder)
    return marked


def new_folder(settings: Settings, scenario: Scenario, rate: int, parent: Path | None = None) -> Path:
    return named_folder(settings, scenario.name, rate, parent)


def named_folder(settings: Settings, name: str, rate: int | str, parent: Path | None = None) -> Path:
    """A new results folder <stamp>-<name>-<rate> (a scenario's or a workload's name; a replay's replica in place of
    the rate), numbered when taken."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    base = parent or settings.results
    folder = base / f"{stamp}-{name}-{rate}"
    n = 1
    while folder.exists():
        n += 1
        folder = base / f"{stamp}-{name}-{rate}-{n}"
    folder.mkdir(parents=True)
    return folder

# an absolute path inside a word or a shell line: a / that starts a path (not within a word, a number, a URL), up to
# a space, a quote or a shell or option separator
_ABSOLUTE_PATH = re.compile(r"(?<![\w.~$/:-])/[^\s'\"=:;,()<>|&]+")


def without_machine_paths(text: str) -> str:
    """A recorded command (a word, or a shell line run on another host) without any absolute path of the machine
    that ran it, so committed output holds none: a path inside the repository relative to it (.lab/ssh_config,
    .tools/bin/vegeta), any other its last part (id_ed25519; a file in an attacker's temporary folder,
    targets.json)."""
    root = str(ROOT) + "/"

    def portable(match: re.Match[str]) -> str:
        path = match.group(0)
        if path.startswith(root):
            return path[len(root):]
        return Path(path).name or path

    return _ABSOLUTE_PATH.sub(portable, text)


def shown_path(folder: Path) -> str:
    """A results folder as printed: relative to the repository when inside it (no machine path in committed
    output), else as given."""
    try:
        return str(folder.resolve().relative_to(ROOT))
    except ValueError:
        return str(folder)
