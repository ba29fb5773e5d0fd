"""The load: real vegeta (pinned) attacking the app at a constant rate, and vegeta's own reports.

Pipeline during a run:  vegeta attack | tee -i -p results.bin | vegeta report -every=1s -type=json
results.bin is streamed to disk as vegeta writes it (nothing is held in memory by us); the live report only feeds
the progress line. Every figure printed afterwards comes from `vegeta report` over results.bin. Each process runs
in its own session: a Ctrl-C reaches only us, and we stop vegeta with exactly one SIGINT (its graceful stop, which
flushes every result).
"""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import resource
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .config import OPEN_FILES_RESERVE, OPEN_FILES_WANTED, REQUEST_TIMEOUT

REPORT_FILES = {"report.txt": [], "report.json": ["-type=json"], "hdrplot.txt": ["-type=hdrplot"]}


@dataclass(frozen=True)
class AttackOptions:
    """vegeta attack flags we set (everything else is vegeta's default, recorded as such in meta.json)."""

    rate: int
    duration: float  # seconds
    timeout: float = REQUEST_TIMEOUT  # per-request timeout, seconds (vegeta's default)
    workers: int = 10  # initial workers (vegeta's default); -max-workers stays unlimited, as in the reference
    keepalive: bool = True
    max_connections: int = field(default_factory=lambda: connection_cap())

    def flags(self) -> list[str]:
        return [f"-rate={self.rate}/1s", f"-duration={_go_duration(self.duration)}",
                f"-timeout={_go_duration(self.timeout)}", f"-workers={self.workers}",
                f"-keepalive={'true' if self.keepalive else 'false'}", f"-max-connections={self.max_connections}"]

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "max_workers": "unlimited (vegeta default)", "connections": "10000 (vegeta default)",
                "open_files_limit": resource.getrlimit(resource.RLIMIT_NOFILE)[0]}


def connection_cap() -> int:
    """Most connections vegeta may open to the app: its descriptor limit minus a reserve. Beyond it an overloaded
    run would fail requests with "too many open files" (a load-generator artefact); capped, they wait in vegeta
    for a connection and show up as latency, which is what the app really does to its clients."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = OPEN_FILES_WANTED if soft == resource.RLIM_INFINITY else soft
    return max(1, limit - OPEN_FILES_RESERVE)


def _go_duration(seconds: float) -> str:
    return f"{int(round(seconds * 1000))}ms"


class Attack:
    """A running vegeta attack pipeline writing results.bin into a run folder."""

    def __init__(self, vegeta: Path, folder: Path, targets: Path, options: AttackOptions, name: str) -> None:
        self.vegeta = str(vegeta)
        self.folder = folder
        self.results = folder / "results.bin"
        self.command = [self.vegeta, "attack", "-format=json", f"-targets={targets}", f"-name={name}",
                        *options.flags()]
        self.latest: dict[str, Any] = {}
        self._procs: list[subprocess.Popen[bytes]] = []
        self._interrupted = False
        self.cpu_seconds: dict[str, float] = {}  # exact, from the kernel when each process is reaped

    def start(self) -> None:
        tee = shutil.which("tee") or "tee"
        attack = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=open(self.folder / "attack.log", "wb"),
                                  stdin=subprocess.DEVNULL, start_new_session=True)
        splitter = subprocess.Popen([tee, "-i", "-p", str(self.results)], stdin=attack.stdout,
                                    stdout=subprocess.PIPE, start_new_session=True)
        live = subprocess.Popen([self.vegeta, "report", "-every=1s", "-type=json"], stdin=splitter.stdout,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        assert attack.stdout and splitter.stdout
        attack.stdout.close()
        splitter.stdout.close()
        self._procs = [attack, splitter, live]
        threading.Thread(target=self._read_live, args=(live,), daemon=True).start()

    def _read_live(self, live: subprocess.Popen[bytes]) -> None:
        assert live.stdout
        for line in live.stdout:
            text = line.decode(errors="replace")
            start = text.find("{")  # -every prefixes each report with a clear-screen escape
            if start >= 0:
                try:
                    self.latest = json.loads(text[start:])
                except ValueError:
                    pass

    @property
    def pids(self) -> list[int]:
        """The vegeta attack process (while it runs)."""
        return [p.pid for p in self._procs[:1] if p.returncode is None]

    @property
    def helper_pids(self) -> list[int]:
        """tee and the live vegeta report: the harness's cost, not the load generator's."""
        return [p.pid for p in self._procs[1:] if p.returncode is None]

    def running(self) -> bool:
        """Is vegeta still attacking? Checked without reaping it (wait4 reaps it later, for its exact CPU)."""
        proc = self._procs[0]
        if proc.returncode is not None:
            return False
        try:
            return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None
        except ChildProcessError:
            return False

    def interrupt(self) -> None:
        """Stop the attack gracefully (one SIGINT: vegeta stops sending and flushes every result)."""
        if not self._interrupted and self.running():
            self._interrupted = True
            self._procs[0].send_signal(signal.SIGINT)

    def wait(self) -> int:
        """Reap the pipeline; the CPU seconds of the attack and of the helpers come from wait4's rusage."""
        spent = [_reap(p) for p in self._procs]
        self.cpu_seconds = {"vegeta": round(spent[0], 3), "helpers": round(sum(spent[1:]), 3)}
        return self._procs[0].returncode or 0


def _reap(proc: subprocess.Popen[bytes]) -> float:
    """Wait for a child with os.wait4 (its exact user+system CPU); 0 if someone else reaped it already."""
    if proc.returncode is not None:
        return 0.0
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except ChildProcessError:
        proc.wait()
        return 0.0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def bare_attack(vegeta: Path, targets: Path, options: AttackOptions, output: Path) -> float:
    """`vegeta attack -output=FILE` alone (no tee, no live report): the load generator's floor; returns its exact
    CPU seconds (wait4)."""
    proc = subprocess.Popen([str(vegeta), "attack", "-format=json", f"-targets={targets}", *options.flags(),
                             f"-output={output}"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    return _reap(proc)


def write_reports(vegeta: Path, folder: Path) -> None:
    """vegeta report (text, json, hdrplot) and vegeta plot over results.bin, each into its own file."""
    results = folder / "results.bin"
    for name, flags in REPORT_FILES.items():
        with open(folder / name, "wb") as out:
            subprocess.run([str(vegeta), "report", *flags, str(results)], stdout=out, check=True)
    with open(folder / "plot.html", "wb") as out:
        subprocess.run([str(vegeta), "plot", "-title", folder.name, str(results)], stdout=out, check=True)


def read_report(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "report.json").read_text())


@dataclass(frozen=True)
class ResultRow:
    timestamp_ns: int
    code: int
    latency_ns: int
    method: str
    url: str
    error: str
    served_by: str = ""  # the app's X-Served-By header: which node answered


SERVED_BY = b"X-Served-By: "


def served_by(headers_b64: str) -> str:
    """The X-Served-By value from the base64 wire-format headers column ('' when absent)."""
    if not headers_b64:
        return ""
    try:
        raw = base64.b64decode(headers_b64)
    except ValueError:
        return ""
    at = raw.find(SERVED_BY)
    if at < 0:
        return ""
    end = raw.find(b"\r\n", at)
    return raw[at + len(SERVED_BY):end if end >= 0 else None].decode(errors="replace")


def decode(vegeta: Path, results: Path) -> Iterator[ResultRow]:
    """Stream results.bin through `vegeta encode --to csv` (12 columns, no header; see the fixtures' README)."""
    proc = subprocess.Popen([str(vegeta), "encode", "--to", "csv", str(results)], stdout=subprocess.PIPE)
    assert proc.stdout
    try:
        yield from parse_csv(io.TextIOWrapper(proc.stdout, encoding="utf-8", newline=""))
    finally:
        proc.stdout.close()
        proc.wait()


def parse_csv(stream: Any) -> Iterator[ResultRow]:
    for row in csv.reader(stream):
        if len(row) < 11:
            continue
        yield ResultRow(timestamp_ns=int(row[0]), code=int(row[1]), latency_ns=int(row[2]), error=row[5],
                        method=row[9], url=row[10], served_by=served_by(row[11]) if len(row) > 11 else "")
