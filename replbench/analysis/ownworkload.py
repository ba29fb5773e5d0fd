"""How far the commands for one's own workload held on a workload the suite did not write (sysbench), read from the
committed evidence alone (core/config.OWN_WORKLOAD_*; report/ownworkload words it in report.md):

- `profile`: the transactions it counted in a window against sysbench's own count and the master's GTID position;
- `model predict --profile [--own-runs]`: the master's and a following replica's cores it priced at one rate from
  the workload's live window at another (and the model's own price without it) against what that rate's window
  measured (own-fit-20261203: compare.py reads the same files by hand);
- `apply-capacity --live`: the window's count against sysbench's, and a replica's apply rate and CPU per
  transaction against the same replica timed by hand, round by round;
- a replay study's other row images: the bytes per transaction a re-logging replica wrote under each, and the apply
  rate of what it wrote (relog-20261203: by_hand.sh decodes the same files with mariadb-binlog alone).

Each reader returns None (or nothing) where a file is missing or does not say what it should: the report then
states no figure for that command, never one filled in.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from pathlib import Path

from ..core.results import apply_of, load, read_study
from .findings import judged, words_of
from .profile import read as read_profile

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
class OwnFitHeld:
    """`model predict --profile --own-runs` on sysbench's shapes, each priced at one rate from its live window at the
    other, against the CPU that rate's window measured (master and following replica); and the model's own price
    (no --own-runs) against the same. Errors are predicted / measured − 1."""

    shapes: int
    rates: tuple[int, ...]
    own: list[float]
    own_inside: int  # own-fit figures whose interval held the measured
    model: list[float]


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


def _priced(text: str | None, label: str) -> tuple[float, float, float] | None:
    """A plan's figure and its interval ("Master CPU: 0.171 [0.162–0.179] cores")."""
    found = re.search(rf"^{label}: ([\d.]+) \[([\d.]+)–([\d.]+)\] cores", text or "", re.M)
    return (float(found.group(1)), float(found.group(2)), float(found.group(3))) if found else None


def _measured_cores(folder: Path, shape: str, rate: str) -> dict[str, float] | None:
    """The cores each role measured in a window (CPU-ms per transaction net of idle, at its profile's rate: the rate
    the plan priced): the master's, and the following replica's; None where a file is missing or lacks them."""
    try:
        live = apply_of(load(folder / f"live-{shape}-{rate}" / "apply.json")).live
        profile = read_profile(folder / f"profile-{shape}-{rate}.json")
    except (OSError, ValueError):
        return None
    roles = {c.role: c.cpu_ms_per_trx for c in ((live.cpu if live else None) or {}).values()}
    master, following = roles.get("master"), roles.get("following")
    if master is None or following is None:
        return None
    per_s = profile.workload.transactions / profile.span_s
    return {"master": master * per_s / 1000, "replica": following * per_s / 1000}


def own_fit_held(folder: Path) -> OwnFitHeld | None:
    """Each predict-<shape>-<at>-from-<fit>.txt (and predict-<shape>-<at>-model.txt) against the window at `at`, as
    own-fit-20261203/compare.py reads them; None where no pair is complete."""
    own: list[float] = []
    model: list[float] = []
    inside = 0
    shapes: set[str] = set()
    rates: set[int] = set()
    for path in sorted(folder.glob("predict-*-from-*.txt")):
        found = re.fullmatch(r"predict-(.+)-(\d+)-from-(\d+)\.txt", path.name)
        if not found:
            continue
        shape, at, fit = found.groups()
        measured = _measured_cores(folder, shape, at)
        text, alone = _read(path), _read(folder / f"predict-{shape}-{at}-model.txt")
        if measured is None:
            continue
        for role, label in (("master", "Master CPU"), ("replica", "Replica CPU")):
            priced, priced_alone = _priced(text, label), _priced(alone, label)
            if priced is None or priced_alone is None:
                return None
            own.append(priced[0] / measured[role] - 1)
            inside += priced[1] <= measured[role] <= priced[2]
            model.append(priced_alone[0] / measured[role] - 1)
        shapes.add(shape)
        rates.update((int(at), int(fit)))
    if not own:
        return None
    return OwnFitHeld(len(shapes), tuple(sorted(rates)), own, inside, model)


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


@dataclass(frozen=True)
class RelogImage:
    """One row image of a replay study whose files were re-logged under each (measured or partial, as the replica
    wrote it): its bytes per transaction and apply rate, medians of its repeats, with the rate's range."""

    image: str
    label: str
    bytes_per_trx: float
    apply_per_s: float
    apply_low: float
    apply_high: float
    repeats: int
    apply_words: str  # the study's rule on its apply rate against FULL's (analysis/findings: "within noise", …)


def relog_held(folder: Path) -> list[RelogImage]:
    """The row images of the committed re-log study (its study.json and a unit's apply.json per cell), FULL first;
    nothing where a file is missing or a cell lacks a figure."""
    try:
        study = read_study(folder)
    except (OSError, ValueError):
        return []
    rows = (study.comparison or {}).get("binlog") or {}
    every = judged(study, list(study.primary or []))
    full = next((c.name for c in study.cells or [] if c.knobs is not None and c.knobs.binlog_row_image == "FULL"),
                None)
    out = []
    for cell in study.cells or []:
        if cell.name is None:
            return []
        unit = next((u for u in study.units or [] if u.cell == cell.name and u.folder), None)
        got, rate = (rows.get("replay_binlog_bytes_per_trx") or {}).get(cell.name), \
            (rows.get("apply_trx_per_s") or {}).get(cell.name)
        try:
            relog = apply_of(load(folder / unit.folder / "apply.json")).replay if unit and unit.folder else None
        except (OSError, ValueError):
            relog = None
        r = relog.relog if relog else None
        if r is None or r.row_image is None or got is None or got.median is None or rate is None or \
                rate.median is None or rate.min is None or rate.max is None:
            return []
        words = "baseline" if cell.name == full or full is None else \
            words_of(every, study, "binlog", "apply_trx_per_s", cell.name, full)[1]
        out.append(RelogImage(r.row_image, r.image or "partial", float(got.median), float(rate.median),
                              float(rate.min), float(rate.max), int(rate.n or 0), words))
    return sorted(out, key=lambda i: i.image != "FULL")
