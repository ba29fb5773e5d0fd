"""How far the commands for one's own workload held on a workload the suite did not write (sysbench), read from the
committed evidence alone (core/config.OWN_WORKLOAD_*; report/ownworkload words it in report.md):

- `profile`: the transactions it counted in a window against sysbench's own count and the master's GTID position;
- `model predict --profile`: the master's and a replica's cores it priced against each mariadbd's CPU read from
  /proc by hand over a second run of the same workload (net of idle; the plan's rate scaled to that run's);
- `apply-capacity --live`: the window's count against sysbench's, and a replica's apply rate and CPU per
  transaction against the same replica timed by hand, round by round.

Each reader returns None (or nothing) where a file is missing or does not say what it should: the report then
states no figure for that command, never one filled in.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from pathlib import Path

from ..core.config import PROC_TICKS_PER_S
from ..core.results import apply_of, load

# the mariadbd processes cpu-by-hand.sh reads, in its order (results/readme-assets/sysbench-20261202/cpu-by-hand.sh)
BY_HAND_NODES = ("master", "replica1", "replica2")
WORKLOAD_DOMAIN = "0"  # the application's GTID domain (the harness's heartbeat writes in its own: docs/profile.md)


@dataclass(frozen=True)
class Client:
    """sysbench's own report of a run: its version, threads, target rate and the transactions it committed."""

    version: str
    threads: int
    target_per_s: int
    transactions: int
    per_s: float


@dataclass(frozen=True)
class ProfileHeld:
    """`profile` over a window of sysbench: what it counted against the client and the master."""

    client: Client
    profiled: int  # transactions the profile counted in the window
    gtid_moved: int  # how far the master's GTID position moved over the window (the application's domain)
    seconds: int  # the window's span, as the profile states it


@dataclass(frozen=True)
class Cores:
    """One role's cores: predicted (the plan's figure and 95 % interval, scaled to the measured run's rate) against
    those measured by hand, net of the process's idle."""

    role: str
    predicted: float
    low: float
    high: float
    measured: float

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1

    @property
    def inside(self) -> bool:
        return self.low <= self.measured <= self.high


@dataclass(frozen=True)
class PredictHeld:
    """`model predict --profile` on sysbench's profile against the CPU measured by hand on a second run."""

    setting: str  # the plan compared: the setting the binlog was written under
    plan_per_s: float  # the rate the plan priced (the profile's mean over its span)
    run_per_s: float  # the rate of the run measured by hand (sysbench's)
    cores: list[Cores]  # master, then the worse replica (the larger CPU)


@dataclass(frozen=True)
class LiveRound:
    """One round of `apply-capacity --live` on sysbench, beside the same replica timed by hand."""

    seconds: float  # the window asked
    window: int  # transactions the window counted on the master
    during_drains: int  # transactions the master took while the replicas drained
    client: Client  # sysbench's own report of the run the window held
    live_per_s: float
    live_cpu_ms: float
    hand_per_s: float
    hand_cpu_ms: float


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def client_of(text: str | None) -> Client | None:
    """sysbench's report (`sysbench … run`'s output), or None where it is not one."""
    if not text:
        return None
    version = re.search(r"^sysbench (\S+)", text, re.M)
    threads = re.search(r"Number of threads: (\d+)", text)
    target = re.search(r"Target transaction rate: (\d+)/sec", text)
    done = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec\.\)", text)
    if not (version and threads and target and done):
        return None
    return Client(version.group(1), int(threads.group(1)), int(target.group(1)), int(done.group(1)),
                  float(done.group(2)))


def _domain_seq(gtids: str) -> int | None:
    """The sequence number of the application's domain in a GTID position ('0-1-900336,99-1-22367': 900336)."""
    for gtid in gtids.split(","):
        domain, _, rest = gtid.strip().partition("-")
        if domain == WORKLOAD_DOMAIN and "-" in rest:
            return int(rest.rsplit("-", 1)[1])
    return None


def profile_held(folder: Path) -> ProfileHeld | None:
    """profile.txt's count over the window of window.txt (its times and the master's GTID positions, '|'
    separated), against sysbench's report of that run (sysbench-run.txt)."""
    client = client_of(_read(folder / "sysbench-run.txt"))
    profile, window = _read(folder / "profile.txt"), _read(folder / "window.txt")
    if client is None or not profile or not window:
        return None
    counted = re.search(r"^Workload: ([\d,]+) transactions", profile, re.M)
    span = re.search(r"^Span: .*?\((\d+) s,", profile, re.M)
    fields = window.strip().split("|")
    if not counted or not span or len(fields) != 4:
        return None
    start, end = _domain_seq(fields[2]), _domain_seq(fields[3])
    if start is None or end is None:
        return None
    return ProfileHeld(client, _int(counted.group(1)), end - start, int(span.group(1)))


def _plan(predict: str) -> tuple[str, str] | None:
    """The capacity plan under the setting the binlog was written with (its binlog line is the binlog's own bytes):
    (setting, the plan's text)."""
    for block in re.split(r"\n(?=Capacity plan under )", predict):
        head = re.match(r"Capacity plan under (\S+) ", block)
        if head and "from the binlog's own bytes" in block:
            return head.group(1), block
    return None


def _cores(plan: str, label: str) -> tuple[float, float, float] | None:
    found = re.search(rf"^{label}: ([\d.]+) \[([\d.]+)–([\d.]+)\] cores", plan, re.M)
    return (float(found.group(1)), float(found.group(2)), float(found.group(3))) if found else None


def by_hand_cores(text: str | None) -> tuple[dict[str, float], float] | None:
    """cpu-by-hand.txt: each mariadbd's cores over the run net of its idle (ticks over the idle window, then over
    the run to the replicas' catch-up), and sysbench's rate over that run."""
    if not text:
        return None
    ticks = r"((?:\d+ ?)+) -> ((?:\d+ ?)+) over ([\d.]+) s"
    idle = re.search(r"idle " + ticks, text)
    run = re.search(r"run " + ticks, text)
    rate = re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec\.\)", text)
    if not (idle and run and rate):
        return None

    def per_s(found: re.Match[str]) -> list[float]:
        before, after = found.group(1).split(), found.group(2).split()
        seconds = float(found.group(3))
        return [(int(b) - int(a)) / seconds / PROC_TICKS_PER_S for a, b in zip(before, after, strict=True)]

    idle_cores, run_cores = per_s(idle), per_s(run)
    if len(run_cores) != len(BY_HAND_NODES) or len(idle_cores) != len(BY_HAND_NODES):
        return None
    return {n: r - i for n, r, i in zip(BY_HAND_NODES, run_cores, idle_cores, strict=True)}, float(rate.group(1))


def predict_held(folder: Path) -> PredictHeld | None:
    """predict.txt's plan for sysbench's profile (the setting its binlog was written under), scaled from the
    profile's rate to the by-hand run's, against cpu-by-hand.txt: the master, and the worse replica (the larger
    CPU)."""
    predict = _read(folder / "predict.txt")
    measured = by_hand_cores(_read(folder / "cpu-by-hand.txt"))
    if not predict or measured is None:
        return None
    plan = _plan(predict)
    rate = re.search(r"\(([\d.]+) transactions/s, the mean over the span\)", predict)
    if plan is None or rate is None:
        return None
    setting, text = plan
    nets, run_per_s = measured
    plan_per_s = float(rate.group(1))
    scale = run_per_s / plan_per_s  # the plan priced at the profile's mean rate; the run went a little faster
    replica = max((n for n in nets if n.startswith("replica")), key=lambda n: nets[n])
    cores = []
    for role, label, node in (("master", "Master CPU", "master"), ("replica", "Replica CPU", replica)):
        priced = _cores(text, label)
        if priced is None:
            return None
        value, low, high = (v * scale for v in priced)
        cores.append(Cores(role, value, low, high, nets[node]))
    return PredictHeld(setting, plan_per_s, run_per_s, cores)


def live_rounds(folder: Path) -> list[LiveRound]:
    """Each round of live-apply (live-N/apply.json, live-N-sysbench.txt, by-hand-N.txt), replica1's figures as
    agree.py reads them; a round whose files are missing or unreadable is left out."""
    rounds = []
    for path in sorted(folder.glob("live-*/apply.json")):
        n = path.parent.name.removeprefix("live-")
        try:
            record = apply_of(load(path))
        except (OSError, ValueError):
            continue
        live, replica = record.live, (record.replicas or {}).get("replica1")
        client = client_of(_read(folder / f"live-{n}-sysbench.txt"))
        hand = _read(folder / f"by-hand-{n}.txt") or ""
        hand_rate = re.search(r"= ([0-9.]+) trx/s", hand)
        hand_cpu = re.search(r"net ([0-9.]+) CPU-ms", hand)
        if (live is None or replica is None or client is None or not hand_rate or not hand_cpu
                or live.transactions is None or live.asked_s is None or replica.apply_rate_trx_per_s is None
                or replica.cpu_ms_per_trx is None):
            continue
        rounds.append(LiveRound(float(live.asked_s), live.transactions, live.master_trx_during_drains or 0, client,
                                float(replica.apply_rate_trx_per_s), float(replica.cpu_ms_per_trx),
                                float(hand_rate.group(1)), float(hand_cpu.group(1))))
    return rounds


def live_means(rounds: list[LiveRound]) -> dict[str, float]:
    """The rounds' means: live and by-hand apply rate and CPU per transaction (as agree.py takes them)."""
    return {key: statistics.mean(getattr(r, key) for r in rounds)
            for key in ("live_per_s", "hand_per_s", "live_cpu_ms", "hand_cpu_ms")}


@dataclass(frozen=True)
class ReplayRound:
    """One round of replay-20261202: the same window measured live on one replica and replayed from its binlog on
    the other (drive.sh): each side's apply rate and CPU per transaction net of idle."""

    seconds: float  # the live window asked
    live_per_s: float
    live_cpu_ms: float
    replay_per_s: float
    replay_cpu_ms: float


def replay_rounds(folder: Path) -> list[ReplayRound]:
    """Each round's live-N/apply.json beside binlog-N/apply.json (the one replica each timed), as agree.py reads
    them; a round whose files are missing or unreadable is left out."""
    rounds = []
    for path in sorted(folder.glob("live-*/apply.json")):
        n = path.parent.name.removeprefix("live-")
        try:
            live, replay = apply_of(load(path)), apply_of(load(folder / f"binlog-{n}" / "apply.json"))
        except (OSError, ValueError):
            continue
        sides = [next(iter((r.replicas or {}).values()), None) for r in (live, replay)]
        if live.live is None or live.live.asked_s is None or any(
                e is None or e.apply_rate_trx_per_s is None or e.cpu_ms_per_trx is None for e in sides):
            continue
        a, b = sides
        assert a is not None and b is not None and a.apply_rate_trx_per_s is not None and \
            b.apply_rate_trx_per_s is not None and a.cpu_ms_per_trx is not None and b.cpu_ms_per_trx is not None
        rounds.append(ReplayRound(float(live.live.asked_s), float(a.apply_rate_trx_per_s), float(a.cpu_ms_per_trx),
                                  float(b.apply_rate_trx_per_s), float(b.cpu_ms_per_trx)))
    return rounds
