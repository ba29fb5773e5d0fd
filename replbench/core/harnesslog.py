"""Where the full trace of an unexpected failure goes: the current run's (or study's) harness.log when one is
being written, else harness.log in the results folder. The terminal only ever gets one line."""

from __future__ import annotations

import time
import traceback
from pathlib import Path

_current: list[Path] = []


def use(path: Path) -> None:
    """Send traces to path from now on (a run or study calls this with its folder's harness.log)."""
    _current.append(path)


def done(path: Path) -> None:
    if path in _current:
        _current.remove(path)


def current(fallback: Path) -> Path:
    return _current[-1] if _current else fallback


def write(message: str, exc: BaseException | None = None, fallback: Path | None = None) -> Path | None:
    """Append a time-stamped message (and the exception's trace) to the current harness.log; its path, or None
    when there is nowhere to write."""
    path = _current[-1] if _current else fallback
    if path is None:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as log:
            log.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {message}\n")
            if exc is not None:
                log.write("".join(traceback.format_exception(exc)))
        return path
    except OSError:
        return None
