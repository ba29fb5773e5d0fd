"""What every sampler shares: threads that run until stopped, the CSV file they write rows to under one lock (the
file closed once they are joined), and the backoff of a loop whose node does not answer."""

from __future__ import annotations

import csv
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any


class Loops:
    """Threads that run until stop(), writing rows to one CSV file under one lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()  # the file and the owner's in-memory series
        self.stopped = threading.Event()
        self.writer: Any = None
        self._file: Any = None
        self._threads: list[threading.Thread] = []

    def open(self, columns: list[str], rows_as_dicts: bool = False) -> None:
        """The CSV file with its header row: rows are lists, or dicts by column (a missing one left empty)."""
        self._file = open(self.path, "w", newline="")
        if rows_as_dicts:
            self.writer = csv.DictWriter(self._file, fieldnames=columns, restval="")
            self.writer.writeheader()
        else:
            self.writer = csv.writer(self._file)
            self.writer.writerow(columns)

    def start(self, target: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self, timeout: float = 5.0) -> None:
        self.stopped.set()
        for thread in self._threads:
            thread.join(timeout=timeout)
        if self._file is not None:
            self._file.close()


BACKOFF_MAX = 1.0  # seconds between two attempts to reach a node that does not answer: the health sampler's cadence


class Backoff:
    """The pause before a loop's next attempt: its own interval while the node answers; after each failed attempt
    twice the last pause, up to BACKOFF_MAX. A node that is down then costs a connection attempt a second instead of
    a hundred (a refused connect costs the harness about a millisecond of CPU: at 10 ms it burnt most of a core,
    taken from the surviving nodes whose figures the run reports; docs/decisions/sampler-cost.md)."""

    def __init__(self, interval: float, longest: float = BACKOFF_MAX) -> None:
        self.interval = interval
        self.longest = max(interval, longest)
        self.pause = interval
        self.failures = 0  # failed attempts in all, for the record and the tests
        self.reads = 0  # answered attempts in all

    def ok(self) -> float:
        self.reads += 1
        self.pause = self.interval
        return self.pause

    def failed(self) -> float:
        self.failures += 1
        self.pause = min(self.longest, max(self.interval, self.pause * 2))
        return self.pause
