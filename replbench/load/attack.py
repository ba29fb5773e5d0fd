"""The load: real vegeta (pinned) attacking the app at a constant rate, and vegeta's own reports.

During a run only `vegeta attack -output=results.bin` runs: no tee, no live report, so the load generator costs
what a bare attack costs (the live progress line comes from the app's own counters, see appserver.admission).
With several attackers (--attackers N, vegeta's own recipe for more load than one process gives) N
`vegeta attack -output=results-<i>.bin` processes share the rate, each sending its own part of the targets
(split_targets: never another's), and every report reads all their files.
Every figure printed afterwards comes from `vegeta report` over the result files. Each process runs in its
own session: a Ctrl-C reaches only us, and we stop vegeta with exactly one SIGINT (its graceful stop, which
flushes every result).
"""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import resource
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..core.config import OPEN_FILES_RESERVE, OPEN_FILES_WANTED, REQUEST_TIMEOUT, ReplbenchError
from ..core.results import AttackSettings

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
    attackers: int = 1  # vegeta attack processes sharing the rate (and the connection cap)
    # a closed loop (--clients N): N workers, each sending its next request when its last one is answered, as fast as
    # that comes (vegeta -rate=0 -max-workers=N); `rate` then only sized the targets (docs/runs.md, "Closed loop")
    clients: int | None = None

    def split(self) -> list[AttackOptions]:
        """One set of options per attacker: the rate shared out (the remainder to the first ones)."""
        n = self.attackers
        if self.clients is not None and n > 1:
            raise ReplbenchError("a closed loop (--clients) runs in one vegeta process: leave out --attackers")
        if self.rate < n:  # a share of 0 would be -rate=0: vegeta's "as fast as it can"
            raise ReplbenchError(f"rate {self.rate}/s cannot be shared by {n} attackers (at least 1/s each)")
        return [replace(self, rate=self.rate // n + (1 if i < self.rate % n else 0),
                        max_connections=max(1, self.max_connections // n), attackers=1) for i in range(n)]

    def flags(self) -> list[str]:
        pace = [f"-rate={self.rate}/1s", f"-workers={self.workers}"] if self.clients is None else \
            ["-rate=0", f"-workers={self.clients}", f"-max-workers={self.clients}"]
        return [*pace, f"-duration={_go_duration(self.duration)}", f"-timeout={_go_duration(self.timeout)}",
                f"-keepalive={'true' if self.keepalive else 'false'}", f"-max-connections={self.max_connections}"]

    def record(self, client_connections: str) -> AttackSettings:
        """The options as meta.json records them, with vegeta's defaults they leave and the client's pool of
        connections (`client_connections`: its setting, in words)."""
        return AttackSettings(**asdict(self),
                              max_workers="unlimited (vegeta default)" if self.clients is None else self.clients,
                              connections="10000 (vegeta default)",
                              open_files_limit=resource.getrlimit(resource.RLIMIT_NOFILE)[0],
                              client_connections=client_connections)


def connection_cap(pool: int | None = None) -> int:
    """Most connections vegeta may open to the app: the client's pool (Settings.client_connection_cap), never more
    than its descriptor limit minus a reserve. Beyond that limit an overloaded run would fail requests with "too
    many open files" (a load-generator artefact); capped, they wait in vegeta for a connection and show up as
    latency, which is what the app really does to its clients."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = OPEN_FILES_WANTED if soft == resource.RLIM_INFINITY else soft
    descriptors = max(1, limit - OPEN_FILES_RESERVE)
    return descriptors if pool is None else min(pool, descriptors)


def _go_duration(seconds: float) -> str:
    return f"{int(round(seconds * 1000))}ms"


class Attack:
    """A running vegeta attack (one process or several) writing its results file(s) into a run folder."""

    def __init__(self, vegeta: Path, folder: Path, targets: Path, options: AttackOptions, name: str,
                 prefix: list[str] | None = None) -> None:
        self.vegeta = str(vegeta)
        self.folder = folder
        self.results = folder / "results.bin"
        self.attackers = options.attackers
        # one attack name per attacker: vegeta plot draws a series per name and refuses one whose timestamps go
        # back, which two attackers' results under one name do
        names = [name] if self.attackers == 1 else [f"{name}#{i + 1}" for i in range(self.attackers)]
        parts = options.split()
        # each attacker its own part of the targets, written now: before the run takes the attack's start
        files = [targets] if self.attackers == 1 else split_targets(targets, [p.rate for p in parts])
        self.commands = [[*(prefix or []), self.vegeta, "attack", "-format=json", f"-targets={t}",
                          f"-name={n}", *part.flags()] for n, part, t in zip(names, parts, files)]
        outputs = [self.results] if self.attackers == 1 else \
            [folder / f"results-{i + 1}.bin" for i in range(self.attackers)]
        self.commands = [[*cmd, f"-output={out}"] for cmd, out in zip(self.commands, outputs)]
        self.command = self.commands[0]
        self._procs: list[subprocess.Popen[bytes]] = []
        self._interrupted = False
        self.cpu_seconds: dict[str, float] = {}  # exact, from the kernel when each process is reaped

    def start(self) -> None:
        """Start the attack process(es), each writing its own results file; nothing else runs beside them."""
        log = open(self.folder / "attack.log", "wb")
        self._procs = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL,
                                        start_new_session=True) for cmd in self.commands]
        log.close()  # each child holds its own descriptor

    @property
    def pids(self) -> list[int]:
        """The vegeta attack process(es) (while they run)."""
        return [p.pid for p in self._procs[:self.attackers] if p.returncode is None]

    def running(self) -> bool:
        """Is vegeta still attacking? Checked without reaping (wait4 reaps later, for the exact CPU)."""
        return still_running_after(self._procs[:self.attackers], 0.0)

    def still_running_after(self, seconds: float, poll: float = 0.05) -> bool:
        """Wait up to `seconds` while vegeta attacks; False as soon as it has finished (within `poll`), so the
        attack's end is taken when it happens, not at the next progress line."""
        return still_running_after(self._procs[:self.attackers], seconds, poll)

    def interrupt(self) -> None:
        """Stop the attack gracefully (one SIGINT each: vegeta stops sending and flushes every result)."""
        if not self._interrupted and self.running():
            self._interrupted = True
            for proc in self._procs[:self.attackers]:
                if proc.returncode is None:
                    proc.send_signal(signal.SIGINT)

    def wait(self) -> int:
        """Reap the attack process(es); their exact CPU seconds come from wait4's rusage."""
        attackers = [_reap(p) for p in self._procs]
        self.cpu_seconds = {"vegeta": round(sum(attackers), 3)}
        if self.attackers > 1:
            self.cpu_seconds["per_attacker"] = [round(s, 3) for s in attackers]  # type: ignore[assignment]
        return self._procs[0].returncode or 0


def _any_running(procs: list[subprocess.Popen[bytes]]) -> bool:
    for proc in procs:
        if proc.returncode is not None:
            continue
        try:
            if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
                return True
        except ChildProcessError:
            continue
    return False


def still_running_after(procs: list[subprocess.Popen[bytes]], seconds: float, poll: float = 0.05) -> bool:
    """Wait up to `seconds` while any of these children (an attack's processes, here or the ssh sessions to
    attacker hosts) still runs; False as soon as none does (within `poll`), True if one still runs at the end.
    Checked without reaping them (os.waitid's WNOWAIT): _reap's wait4 takes each one's exact CPU later.
    `seconds` = 0: is one running now?"""
    deadline = time.monotonic() + seconds
    while _any_running(procs):
        left = deadline - time.monotonic()
        if left <= 0:
            return True
        time.sleep(min(poll, left))
    return False


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


def target_parts(targets: Path, attackers: int) -> list[Path]:
    """Where each attacker's part of a targets file goes: targets-<i>.json beside it."""
    return [targets.with_name(f"targets-{i + 1}.json") for i in range(attackers)]


def split_targets(targets: Path, shares: list[int]) -> list[Path]:
    """Deal a targets file's lines out to the attackers (target_parts), in proportion to each one's share of the
    rate and in the file's order: the next line goes to the attacker furthest behind its share, so that at any
    moment of the attack the lines sent so far are about the file's first ones (rowcheck's sample reads those),
    each sent once. Several attackers reading one whole file would each send its first lines: every write N
    times, the repeats writing values the rows already hold (docs/own-servers.md, "Attackers on several hosts")."""
    if not shares or max(shares) <= 0:
        raise ValueError(f"no attacker has a share of the rate: {shares}")
    paths = target_parts(targets, len(shares))
    taken = [0] * len(shares)
    outs = [open(path, "wb") for path in paths]
    try:
        with open(targets, "rb") as source:
            for line in source:
                j = min((i for i, share in enumerate(shares) if share > 0), key=lambda i: (taken[i] + 1) / shares[i])
                taken[j] += 1
                outs[j].write(line)
    finally:
        for out in outs:
            out.close()
    return paths


def result_files(folder: Path) -> list[Path]:
    """The run's results: results.bin, or results-<i>.bin of each attacker (vegeta's tools read several)."""
    several = sorted(folder.glob("results-*.bin"))
    return several or ([folder / "results.bin"] if (folder / "results.bin").exists() else [])


def write_reports(vegeta: Path, folder: Path) -> None:
    """vegeta report (text, json, hdrplot) and vegeta plot over the run's result files, each into its own file."""
    files = [str(f) for f in result_files(folder)]
    for name, flags in REPORT_FILES.items():
        with open(folder / name, "wb") as out:
            subprocess.run([str(vegeta), "report", *flags, *files], stdout=out, check=True)
    with open(folder / "plot.html", "wb") as out:
        subprocess.run([str(vegeta), "plot", "-title", folder.name, *files], stdout=out, check=True)


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


def decode(vegeta: Path, results: Path | list[Path]) -> Iterator[ResultRow]:
    """Stream result files through `vegeta encode --to csv` (12 columns, no header; see the fixtures' README)."""
    files = [str(f) for f in (results if isinstance(results, list) else [results])]
    proc = subprocess.Popen([str(vegeta), "encode", "--to", "csv", *files], stdout=subprocess.PIPE)
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
