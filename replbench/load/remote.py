"""Attackers on other hosts: a topology file's [[attacker]] tables, driven over OpenSSH. vegeta's own recipe for
more load than one host gives (the same attack on each host, the result files merged by `vegeta report`), done by
the harness instead of by hand:

1. check each host (`check`): one ssh session makes a temporary folder there, says which vegeta it has (its
   `-version`, or the same binary as here by its SHA-256) and answers a few time probes, from which the host's
   clock skew against this one is taken (the probe with the shortest round trip; its half is the uncertainty);
   its part of the targets is copied into the folder (each host its own lines, dealt out by its share of the
   rate, so no request is sent twice). A host that fails its check fails the run before any load is sent;
2. start the same attack on each (`RemoteAttack.start`) at one agreed instant, each host waiting for it on its own
   clock corrected by its skew, each with its share of the rate (the remainder to the first ones, as local
   attackers share it), its own attack name and its own results file;
3. copy the result files back as results-<i>.bin (`collect`), where `vegeta report`, `encode` and `plot` read them
   together as they read local attackers' files; each host's first request is placed on this host's clock
   (skew removed) to find a late start; each host's CPU comes from its node_exporter, scraped at the start and the
   end (n/a without one). A host that failed (its ssh or vegeta exited with an error, or ended early: fewer
   requests than its share over the duration), sent nothing back or started late is one line of the block and a
   guard (analysis/judge), never a silently smaller rate; the other hosts' results are kept.

Credentials never appear in the file: ssh's own key (REPLBENCH_SSH_KEY) and configuration (REPLBENCH_SSH_CONFIG, else
an ssh_config beside the topology file, as `./run.sh lab up` writes one). BatchMode: a host that would ask for a
password fails its check instead. meta.json records the first host's command without this machine's paths.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from ..core.config import (
    ATTACKER_LATE_S,
    ATTACKER_START_LEAD_S,
    ReplbenchError,
    Settings,
)
from ..core.records import without_machine_paths
from ..core.results import AttackerCheck
from ..core.topofile import SSH_CONFIG_BESIDE, AttackerHost
from ..topology.install import VEGETA_VERSION
from .attack import AttackOptions, _reap, split_targets, still_running_after

PROBES = 7  # time probes per host: the one with the shortest round trip gives the skew
CHECK_TIMEOUT = 30.0  # seconds for a host's check (its ssh connection included)
COPY_TIMEOUT = 300.0  # seconds to copy the targets there or a results file back
EARLY_SHARE = 0.99  # a host whose file holds fewer of its requests (its rate × the duration) ended early: vegeta
#                     sends every one of them unless it is stopped
T = TypeVar("T")


class RemoteAttackError(ReplbenchError):
    """An attacker host cannot take part (unreachable, no vegeta or another version); one line per host."""


@dataclass(frozen=True)
class HostCheck:
    """What the check found on one attacker host."""

    index: int  # from 1, as the results file results-<index>.bin
    host: AttackerHost
    folder: str  # the temporary folder there (targets, results, pid)
    vegeta: str  # "v12.13.0", or "the same binary as here"
    skew_s: float  # the host's clock minus this one's
    uncertainty_s: float  # half the best probe's round trip
    connect_s: float  # from starting ssh to the host's first answer

    def record(self) -> AttackerCheck:
        """The check as meta.json's attacker_hosts records it (and each host's part in the summary begins)."""
        return AttackerCheck(index=self.index, host=self.host.host, user=self.host.user or None, port=self.host.port,
                             vegeta=self.vegeta, skew_ms=round(1000 * self.skew_s, 3),
                             skew_uncertainty_ms=round(1000 * self.uncertainty_s, 3),
                             connect_s=round(self.connect_s, 3), metrics=self.host.metrics or None)


def ssh_config_file(settings: Settings) -> str:
    """The ssh_config the attacker hosts are reached with: REPLBENCH_SSH_CONFIG, else a file named ssh_config
    lying beside the topology file (`./run.sh lab up` writes one), else none (ssh's own ~/.ssh/config)."""
    if settings.ssh_config:
        return settings.ssh_config
    beside = Path(settings.topology).parent / SSH_CONFIG_BESIDE if settings.topology else None
    return str(beside) if beside is not None and beside.is_file() else ""


def ssh_command(settings: Settings, host: AttackerHost, remote: str) -> list[str]:
    """ssh to the host running `remote` (a shell command line there): never a prompt (BatchMode), the key and
    configuration from the environment or the ssh_config beside the topology file (ssh_config_file)."""
    cmd = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5", "-p",
           str(host.port)]
    config = ssh_config_file(settings)
    if config:
        cmd += ["-F", config]
    if settings.ssh_key:
        cmd += ["-i", settings.ssh_key, "-o", "IdentitiesOnly=yes"]
    return [*cmd, host.destination, remote]


def skew_from(probes: list[tuple[float, float, float]]) -> tuple[float, float]:
    """(skew, uncertainty) in seconds from (sent, remote time, received) probes: the remote clock minus this
    one at the probe with the shortest round trip, as NTP's clock filter takes it; half that round trip bounds the
    error."""
    sent, remote, received = min(probes, key=lambda p: p[2] - p[0])
    return remote - (sent + received) / 2, (received - sent) / 2


def _check_script(vegeta: str) -> str:
    v = shlex.quote(vegeta)
    return (f"command -v {v} >/dev/null 2>&1 || {{ echo 'missing'; exit 3; }}; "
            "d=$(mktemp -d /tmp/replbench-attack.XXXXXX) || exit 4; echo \"dir $d\"; "
            f"echo \"version $({v} -version 2>/dev/null | sed -n 's/^Version: *//p')\"; "
            f"echo \"sha256 $(sha256sum \"$(command -v {v})\" | cut -d' ' -f1)\"; "
            "while read -r _; do date +%s%N; done")


def check_host(settings: Settings, index: int, host: AttackerHost, local_sha256: str) -> HostCheck:
    """One ssh session: the temporary folder, the vegeta there, the clock skew."""
    begin = time.time()
    proc = subprocess.Popen(ssh_command(settings, host, _check_script(host.vegeta)), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
                            start_new_session=True)
    timer = threading.Timer(CHECK_TIMEOUT, proc.kill)
    timer.start()
    try:
        assert proc.stdin and proc.stdout
        said: dict[str, str] = {}
        connect_s = 0.0
        for _ in range(3):
            line = proc.stdout.readline()
            if not line:
                break
            connect_s = connect_s or time.time() - begin
            key, _, value = line.rstrip("\n").partition(" ")
            said[key] = value
        if "missing" in said:
            raise RemoteAttackError(f"attacker {index} ({host.destination}): no {host.vegeta} there (install "
                                    f"vegeta {VEGETA_VERSION}, or name it with vegeta = \"/path\")")
        if "dir" not in said:
            proc.kill()
            error = proc.stderr.read().strip() if proc.stderr else ""
            raise RemoteAttackError(f"attacker {index} ({host.destination}): ssh failed: "
                                    f"{error.splitlines()[-1] if error else 'no answer'}")
        folder = said["dir"]
        same = said.get("sha256") == local_sha256
        if said.get("version") != VEGETA_VERSION and not same:
            _discard(settings, host, folder)
            raise RemoteAttackError(f"attacker {index} ({host.destination}): {host.vegeta} is not vegeta "
                                    f"{VEGETA_VERSION} (it says {said.get('version') or 'no version'!r} and is "
                                    "not this harness's build)")
        probes = []
        for _ in range(PROBES):
            sent = time.time()
            proc.stdin.write("\n")
            proc.stdin.flush()
            answer = proc.stdout.readline()
            received = time.time()
            if not answer.strip().isdigit():
                raise RemoteAttackError(f"attacker {index} ({host.destination}): its clock cannot be read "
                                        f"(`date +%s%N` said {answer.strip()!r})")
            probes.append((sent, int(answer) / 1e9, received))
        proc.stdin.close()
        proc.wait(timeout=10)
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    skew, uncertainty = skew_from(probes)
    return HostCheck(index, host, folder, VEGETA_VERSION if not same else "the same binary as here", skew,
                     uncertainty, connect_s)


def _parallel(fns: list[Callable[[], T]]) -> list[T | BaseException]:
    """Run the functions in threads; each one's result or exception, in order."""
    out: list[T | BaseException] = [RuntimeError("not run")] * len(fns)

    def one(i: int) -> None:
        try:
            out[i] = fns[i]()
        except BaseException as exc:  # noqa: BLE001 — handed back to the caller, which reports every host's
            out[i] = exc

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(fns))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def check(settings: Settings, vegeta: Path, targets: Path, options: AttackOptions) -> list[HostCheck]:
    """Check every attacker host (in parallel) and copy each its part of the targets (split_targets, by its share
    of the rate: no host sends another's); a host that fails fails them all (one line per host), after the
    folders already made are removed."""
    local_sha256 = hashlib.sha256(vegeta.read_bytes()).hexdigest()
    hosts = settings.attacker_hosts
    found = _parallel([partial(check_host, settings, i + 1, h, local_sha256) for i, h in enumerate(hosts)])
    checks = [c for c in found if isinstance(c, HostCheck)]
    errors = [str(e) if isinstance(e, ReplbenchError) else f"attacker {i + 1} ({hosts[i].destination}): {e}"
              for i, e in enumerate(found) if isinstance(e, BaseException)]
    if not errors:
        parts = split_targets(targets, [p.rate for p in replace(options, attackers=len(hosts)).split()])
        copied = _parallel([partial(_upload, settings, c, t) for c, t in zip(checks, parts)])
        errors = [str(e) for e in copied if isinstance(e, BaseException)]
    if errors:
        discard(settings, checks)
        raise RemoteAttackError("; ".join(errors))
    return checks


def _upload(settings: Settings, c: HostCheck, targets: Path) -> None:
    with open(targets, "rb") as source:
        proc = subprocess.run(ssh_command(settings, c.host, f"cat > {shlex.quote(c.folder)}/targets.json"),
                              stdin=source, capture_output=True, timeout=COPY_TIMEOUT, check=False)
    if proc.returncode != 0:
        raise RemoteAttackError(f"attacker {c.index} ({c.host.destination}): the targets could not be copied: "
                                f"{proc.stderr.decode(errors='replace').strip()}")


def _discard(settings: Settings, host: AttackerHost, folder: str) -> None:
    subprocess.run(ssh_command(settings, host, f"rm -rf {shlex.quote(folder)}"), capture_output=True,
                   timeout=CHECK_TIMEOUT, check=False)


def discard(settings: Settings, checks: list[HostCheck]) -> None:
    """Remove the hosts' temporary folders (best effort)."""
    _parallel([partial(_discard, settings, c.host, c.folder) for c in checks])


def start_lead(checks: list[HostCheck]) -> float:
    """How far ahead the agreed start is set: ATTACKER_START_LEAD_S, or three times the slowest host's ssh
    connection (its attack has to connect before the instant)."""
    return max(ATTACKER_START_LEAD_S, 3 * max((c.connect_s for c in checks), default=0.0))


def attack_script(c: HostCheck, start_at: float, flags: list[str], name: str) -> str:
    """The shell line run on the host: note its pid (for a graceful stop), wait for the agreed instant on its own
    clock (start_at plus its skew), then become vegeta."""
    at_ns = int(round((start_at + c.skew_s) * 1e9))
    d = shlex.quote(c.folder)
    vegeta = " ".join(shlex.quote(x) for x in [c.host.vegeta, "attack", "-format=json", f"-targets={c.folder}/"
                                               "targets.json", f"-name={name}", *flags,
                                               f"-output={c.folder}/results.bin"])
    return (f"echo $$ > {d}/vegeta.pid; w=$(( {at_ns} - $(date +%s%N) )); "
            "if [ \"$w\" -gt 0 ]; then sleep \"$(( w / 1000000000 )).$(printf %09d $(( w % 1000000000 )))\"; fi; "
            f"exec {vegeta}")


class RemoteAttack:
    """The attack on every checked host at one agreed instant; the interface of load.attack.Attack (start,
    running, interrupt, wait) so a run drives either. `host_busy` reads a node_exporter URL's busy CPU seconds
    (measure.nodeexporter.host_busy, handed in: the measuring layer sits above this one)."""

    def __init__(self, settings: Settings, checks: list[HostCheck], folder: Path, options: AttackOptions,
                 name: str, host_busy: Callable[[str], float | None]) -> None:
        self.settings = settings
        self.checks = checks
        self.folder = folder
        self.parts = replace(options, attackers=len(checks)).split()  # each host's share of the rate
        self.name = name
        self.start_at = 0.0  # the agreed instant, this host's clock (Unix seconds)
        self.host_busy = host_busy
        self._procs: list[subprocess.Popen[bytes]] = []
        self._busy: list[tuple[float | None, float]] = []  # each host's busy CPU seconds at the start, and when
        self._interrupted = False
        self.cpu_seconds: dict[str, Any] = {}
        self.ended: list[tuple[int | None, float | None]] = []  # each host's exit code and CPU % over the attack

    def _ssh(self, host: AttackerHost, remote: str) -> list[str]:
        """How a shell line reaches a host: ssh (a test replaces this with a local shell)."""
        return ssh_command(self.settings, host, remote)

    @property
    def commands(self) -> list[list[str]]:
        return [self._ssh(c.host, attack_script(c, self.start_at, p.flags(), f"{self.name}#{c.index}"))
                for c, p in zip(self.checks, self.parts)]

    @property
    def command(self) -> list[str]:
        """The first host's ssh command as meta.json records it: no absolute path of this machine (its ssh config
        and key relative to the repository or by name, the host's temporary folder by name, /tmp on that host)."""
        c = replace(self.checks[0], folder=Path(self.checks[0].folder).name)
        cmd = self._ssh(c.host, attack_script(c, self.start_at, self.parts[0].flags(), f"{self.name}#{c.index}"))
        return [without_machine_paths(word) for word in cmd]

    @property
    def pids(self) -> list[int]:
        """No vegeta runs on this host: the samplers' vegeta group stays empty (each host's CPU is its own)."""
        return []

    def start(self) -> None:
        """Start every host's attack over ssh and return at the agreed instant (this host's clock)."""
        self.start_at = time.time() + start_lead(self.checks)
        self._busy = [(self._host_cpu(c), time.time()) for c in self.checks]
        for c, cmd in zip(self.checks, self.commands):
            with open(self.folder / f"attacker-{c.index}.log", "wb") as log:
                self._procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                                    stdin=subprocess.DEVNULL, start_new_session=True))
        time.sleep(max(0.0, self.start_at - time.time()))

    def running(self) -> bool:
        """Is any host's ssh session still open? Checked without reaping (wait() reaps, for the exact CPU)."""
        return still_running_after(self._procs, 0.0)

    def still_running_after(self, seconds: float, poll: float = 0.05) -> bool:
        return still_running_after(self._procs, seconds, poll)

    def interrupt(self) -> None:
        """Stop every host's vegeta gracefully (one SIGINT there, by the pid it noted: it flushes its results)."""
        if self._interrupted:
            return
        self._interrupted = True

        def kill(c: HostCheck) -> subprocess.CompletedProcess[bytes]:
            return subprocess.run(self._ssh(c.host, f"kill -INT $(cat {shlex.quote(c.folder)}/vegeta.pid)"),
                                  capture_output=True, timeout=CHECK_TIMEOUT, check=False)

        _parallel([partial(kill, c) for c, p in zip(self.checks, self._procs) if p.returncode is None])

    def wait(self) -> int:
        """Wait for every host's ssh session; each host's CPU over the attack from its node_exporter."""
        ssh_cpu = sum(_reap(proc) for proc in self._procs)
        self.ended = []
        for c, proc, (before, at) in zip(self.checks, self._procs, self._busy):
            after, now = self._host_cpu(c), time.time()
            self.ended.append((proc.returncode, None if before is None or after is None or now <= at else
                               round(100 * (after - before) / (now - at), 1)))
        # no vegeta ran here: the ssh clients are this host's whole cost of the attack
        self.cpu_seconds = {"vegeta": 0.0, "ssh_clients": round(ssh_cpu, 3)}
        return next((code for code, _ in self.ended if code), 0)

    def _host_cpu(self, c: HostCheck) -> float | None:
        return self.host_busy(c.host.metrics) if c.host.metrics else None

    def collect(self, vegeta: Path) -> list[dict[str, Any]]:
        """Copy every host's results file back (results-<i>.bin), remove its folder there, and describe each host's
        part (host_part): the others' results are kept whatever one host did."""
        got = _parallel([partial(self._fetch, c) for c in self.checks])
        out = []
        for i, c in enumerate(self.checks):
            code, cpu = self.ended[i] if i < len(self.ended) else (None, None)
            out.append(host_part(c, self.parts[i], self.start_at,
                                 _file_report(vegeta, self.folder / f"results-{c.index}.bin"),
                                 Ending(code, cpu, self._interrupted,
                                        str(got[i]) if isinstance(got[i], BaseException) else None,
                                        _last_line(self.folder / f"attacker-{c.index}.log"))))
        return out

    def _fetch(self, c: HostCheck) -> None:
        target = self.folder / f"results-{c.index}.bin"
        d = shlex.quote(c.folder)
        with open(target, "wb") as out:
            proc = subprocess.run(self._ssh(c.host, f"cat {d}/results.bin; r=$?; rm -rf {d}; exit $r"), stdout=out,
                                  stderr=subprocess.PIPE, timeout=COPY_TIMEOUT, check=False)
        if target.stat().st_size == 0:
            target.unlink()
        if proc.returncode != 0:
            raise RemoteAttackError(f"its results file could not be copied back: "
                                    f"{proc.stderr.decode(errors='replace').strip() or proc.returncode}")

    def start_text(self) -> str:
        return time.strftime("%H:%M:%S", time.gmtime(self.start_at)) + f".{int(self.start_at * 1000) % 1000:03d}"


@dataclass(frozen=True)
class Ending:
    """How one host's attack ended, as this host saw it."""

    code: int | None  # its ssh session's exit code (ssh passes the remote vegeta's on; 255: ssh itself failed)
    cpu_percent: float | None  # its host's busy CPU over the attack (node_exporter), % of one core
    interrupted: bool  # the run was interrupted here (Ctrl-C): every host was stopped on purpose
    fetch_error: str | None  # its results file could not be copied back
    log_line: str  # the last line its ssh session printed


def host_part(c: HostCheck, share: AttackOptions, start_at: float, report: dict[str, Any] | None,
              ending: Ending) -> dict[str, Any]:
    """One host's part of the attack as summary.json keeps it (remote_attackers): its share, its requests, its
    first and last request on this host's clock (its skew removed), skew, CPU, and what went wrong, as `error`:
    an attack that exited with an error (its vegeta or ssh died), results that could not be copied back, none
    at all, or an attack that ended early, its requests short of its share of the rate over the duration
    (stopped mid-attack with exit code 0). The block names it and a guard says its share is missing: never a
    silently smaller rate; the other hosts' results are kept and merged as usual."""
    first = last = None
    if report is not None:
        first = report["earliest_ns"] / 1e9 - c.skew_s - start_at
        last = report["latest_ns"] / 1e9 - c.skew_s - start_at
    expected = round(share.rate * share.duration)
    error = None
    if ending.code not in (0, None) and not ending.interrupted:
        how = f"exited with code {ending.code}" if ending.code > 0 else f"was killed by signal {-ending.code}"
        error = f"its attack {how} ({ending.log_line})"
    elif ending.fetch_error:
        error = ending.fetch_error
    elif report is None:
        error = "no results came back"
    elif not ending.interrupted and report["requests"] < EARLY_SHARE * expected:
        error = (f"its attack ended early: {report['requests']:,} of its {expected:,} requests sent, the last at "
                 f"{last:+.2f} s of {share.duration:g} s")
    return {
        **c.record().model_dump(), "rate": share.rate, "requests": None if report is None else report["requests"],
        "expected_requests": expected, "first_request_s": None if first is None else round(first, 3),
        "last_request_s": None if last is None else round(last, 3),
        "late": first is not None and first > ATTACKER_LATE_S, "exit_code": ending.code, "error": error,
        "cpu_percent": ending.cpu_percent,
        "cpu_source": ("host CPU from node_exporter" if ending.cpu_percent is not None else
                       "n/a (node_exporter did not answer)") if c.host.metrics else "n/a (no metrics URL)",
        "results_file": f"results-{c.index}.bin" if report is not None else None,
    }


def _file_report(vegeta: Path, path: Path) -> dict[str, Any] | None:
    """One host's requests and its first and last request's times (its own clock, ns), from `vegeta report` of
    its file."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    proc = subprocess.run([str(vegeta), "report", "-type=json", str(path)], capture_output=True, text=True,
                          check=False, timeout=COPY_TIMEOUT)
    if proc.returncode != 0:
        return None
    doc = json.loads(proc.stdout)
    if not doc.get("requests"):
        return None
    return {"requests": int(doc["requests"]), "earliest_ns": _rfc3339_ns(doc["earliest"]),
            "latest_ns": _rfc3339_ns(doc["latest"])}


def _rfc3339_ns(text: str) -> int:
    """vegeta report's RFC 3339 time with nanoseconds ("2026-11-27T12:00:01.123456789+01:00") as Unix ns."""
    match = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", text.strip())
    if not match:
        raise ValueError(f"not an RFC 3339 time: {text!r}")
    zone = "+00:00" if match.group(3) == "Z" else match.group(3)
    seconds = int(datetime.fromisoformat(match.group(1) + zone).timestamp())
    return seconds * 1_000_000_000 + int(((match.group(2) or "") + "000000000")[:9])


def _last_line(path: Path) -> str:
    try:
        lines = [x for x in path.read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        return "no log"
    return lines[-1][:200] if lines else "no output"
