"""Progress display: phase timing and live one-line status with elapsed time, on stderr.

On a terminal the status line is rewritten in place; otherwise (CI, logs) every step's line is printed, and the
ticks of a long step (say(..., tick=True): the live progress of an attack, a load, a wait) at most every few
seconds, so long steps still show life without flooding the log.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

LOG_INTERVAL = 5.0  # seconds between two ticks' lines when not on a terminal


class Progress:
    """Times named phases and shows a status line for the running one."""

    def __init__(self, title: str, stream=None) -> None:
        self.title = title
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self.phases: list[tuple[str, float]] = []
        self._last_tick = 0.0
        self._lock = threading.Lock()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        begin = time.monotonic()
        self.say(f"{name}...")
        try:
            yield
        finally:
            took = time.monotonic() - begin
            self.phases.append((name, took))
            self.say(f"{name}: done in {took:.1f} s", final=True)

    def say(self, text: str, *, final: bool = False, tick: bool = False) -> None:
        """A step's status line; tick: one more line of a long step's progress (throttled off a terminal)."""
        line = f"[{self.title} {self.elapsed():6.1f}s] {text}"
        with self._lock:
            if self.tty:
                end = "\n" if final else ""
                self.stream.write("\r\033[K" + line + end)
            else:
                now = time.monotonic()
                if tick and not final:
                    if self._last_tick and now - self._last_tick < LOG_INTERVAL:
                        return
                    self._last_tick = now
                self.stream.write(line + "\n")
            self.stream.flush()

    def summary(self) -> str:
        width = max([len("total"), *(len(name) for name, _ in self.phases)])
        rows = [f"  {name:<{width}} {took:8.1f} s" for name, took in self.phases]
        rows.append(f"  {'total':<{width}} {self.elapsed():8.1f} s")
        return "\n".join(rows)
