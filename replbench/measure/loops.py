"""What every sampler shares: threads that run until stopped, and the CSV file they write rows to under one lock
(the file closed once they are joined)."""

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
