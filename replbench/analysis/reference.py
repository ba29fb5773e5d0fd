"""The reference write-up (shared/reference: the experiment this suite grew from): its own figures per step, and a
verdict on each of its five conclusions against our sweeps (report/reference words them; the method is
docs/metrics.md, "The reference write-up's conclusions").

The write-up ran on a 16-vCPU host (gunicorn with 12 workers, MySQL and two row-based replicas in Docker, 8M
accounts with 4 indexes, vegeta 60 s per step); it does not state its buffer pool (128M is the image's default: an
inference, not a figure of the write-up), its MySQL version, nor its disk beyond "NVMe". Each step gives "Gunicorn
cpu" and "Mysql cpu: master + 2 * replica" in % of one core and vegeta's latencies. Per request, so that a
16-vCPU host and a 2-core box compare: CPU-ms per request = CPU % × 10 ÷ rate.

Transcribed as printed, with its gaps: its read steps give no master figure (its words: the master is not loaded),
step 2.4's replicas read "50-95" (kept as that range), step 2.7 (write-noindex 2400) repeats step 2.6's vegeta lines
(so only its CPU line is its own), step 2.8 (3600) has no CPU line, and step 1.4 (reads without indexes at 5000/s,
a failure) has none either and is left out.

The verdicts: ours from passing sweep steps only, at the rates both sides ran; CPU net of idle per write a node
applied (its transactions, not the requests that succeeded), with write-back where every run of both sides
recorded it (summary.json `writeback`); a comparison of our repeats in core/stats.judgement's words. Pure functions
over records.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..core.config import FINDING_MIN_FACTOR, REFERENCE_SIZE_FACTOR
from ..core.nodenames import replicas_in
from ..core.results import RunSummary, StudyRecord
from ..core.stats import judgement, median, present
from .answers import pool_index_costs
from .costmodel import node_counters
from .studymetrics import PAGES_VARY, RUN_BY_KEY

SOURCE = "shared/reference/002_7c2abfa55c9f191f.txt"


@dataclass(frozen=True)
class Step:
    rate: int
    gunicorn: float | None  # % of one core
    master: float | None
    replica: tuple[float, float] | None  # each replica, % of one core (a range where the write-up gives one)
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    note: str = ""  # what the write-up's step lacks, said in the table instead of a bare gap

    def cpu_ms(self, percent: float | None) -> float | None:
        return None if percent is None else round(percent * 10 / self.rate, 3)

    def replica_ms(self) -> tuple[float, float] | None:
        """Each replica's CPU-ms per request, (low, high) of the write-up's range."""
        if self.replica is None:
            return None
        low, high = self.replica
        return low * 10 / self.rate, high * 10 / self.rate


WRITES: dict[str, tuple[Step, ...]] = {
    "write": (
        Step(200, 15, 28, (18, 18), 31.894, 33.640, 215.554),
        Step(400, 25, 53, (35, 35), 31.382, 34.865, 56.846),
        Step(800, 60, 125, (75, 75), 33.026, 175.889, 329.269),
        Step(1200, 80, 180, (50, 95), 94.803, 605.634, 817.703),
    ),
    "write-noindex": (
        Step(1200, 70, 85, (7, 7), 31.569, 33.819, 64.295),
        Step(1600, 95, 110, (9, 9), 31.666, 34.932, 82.896),
        Step(2400, 150, 340, (13, 13), None, None, None,
             "its vegeta lines repeat the 1600 step's: only its CPU line is its own"),
        Step(3600, None, None, None, 35.482, 170.455, 604.084, "no CPU line"),
    ),
}
READS: tuple[Step, ...] = (  # /find_users with its indexes; "2 * N": each replica N % of one core
    Step(1000, 85, None, (75, 75), 31.930, 65.304, 111.062, "the master not loaded, its words"),
    Step(2000, 170, None, (160, 160), 32.322, 107.723, 171.258, "the master not loaded, its words"),
    Step(3000, 260, None, (250, 250), 40.472, 269.375, 415.755, "the master not loaded, its words"),
    Step(4000, 350, None, (350, 350), 245.081, 775.200, 1469.710, "the master not loaded, its words"),
)
READS_ASKED = 3000  # the write-up's step 1.2, the read rate this suite was built to answer (README: read 3000)
SMALL_POOL = "128M"  # the pool our sweeps set beside the reference settings' (the write-up's, as inferred above)

# the conclusions, translated (shared/reference/README.md), in the write-up's order
CONCLUSIONS: tuple[tuple[str, str], ...] = (
    ("reads-scale", "Balancing reads over the replicas scales the read load"),
    ("read-overhead", "The replicas' CPU overhead under read load is small"),
    ("disk", "Write throughput depends heavily on the disk"),
    ("index-speed", "Indexes strongly affect write speed"),
    ("index-replica-cpu", "Indexes strongly affect the replicas' CPU under writes, even with row-based replication"),
)
HOLDS = "holds"
DIFFERENT_SIZE = "holds here with a different size"
NOT_SEEN = "not seen here"
NOT_MEASURED = "not measured here"
# what pages read from a pool short of the working set can say of the disk, which no run here varied: the
# conclusion's direction, never its test
CONSISTENT = "consistent here, the disk not varied"


@dataclass(frozen=True)
class Ran:
    """One step of one of our sweeps: its rate, whether it passed its criteria, its repeats' summaries."""

    rate: int
    passed: bool
    runs: tuple[RunSummary, ...]


@dataclass(frozen=True)
class Swept:
    """One of our sweeps: its steps and its recorded max sustainable rate (None: no step passed)."""

    steps: tuple[Ran, ...]
    max_rate: int | None = None


Sweeps = Mapping[tuple[str, str], Swept]  # by (scenario, pool): pool "" the reference settings' (the set in memory)
Range = tuple[float, float]  # (low, high)
Pair = tuple[float | None, float | None]  # one figure of two sweeps (or pools, or runs), None where it has none
Maxima = tuple[int | None, int | None]  # two sweeps' max sustainable rates (None: no step passed)


@dataclass(frozen=True)
class SameRate:
    """One rate both sweeps passed (same_rate's): each side's median, a over b, the one rule's words for their
    repeats, and whether write-back is in the figures."""

    rate: int
    a: float
    b: float
    ratio: float
    writeback: bool
    words: str


@dataclass(frozen=True)
class TheirRatio:
    """One rate both of the write-up's write tables have (their_ratios'): its indexed and unindexed figures and their
    ratio's range (low over high, high over low)."""

    a: Range
    b: Range
    ratio: Range


@dataclass(frozen=True)
class PoolPair:
    """One pool of study working-set (pool_pairs'): the replica's CPU per applied write indexed (a) against not (b),
    their ratio, the one rule's words, the study's write rate and each side's count of repeats."""

    pool: str  # "" the reference settings' pool
    a: float
    b: float
    ratio: float
    words: str
    rate: int | None
    n: tuple[int, int]


@dataclass(frozen=True)
class Verdict:
    """One conclusion of the write-up: the verdict (HOLDS, DIFFERENT_SIZE, NOT_SEEN, NOT_MEASURED) and why it is an
    inference where it is one ("" where measured). Each conclusion's own kind below adds the figures it rests on,
    the write-up's (theirs) and ours."""

    key: str
    conclusion: str
    verdict: str
    inferred: str = ""


@dataclass(frozen=True)
class ReadRate:
    """One rate both sides read at: the worse replica's CPU-ms per read, ours (None below resolution) and its."""

    rate: int
    ours: float | None
    theirs: float


@dataclass(frozen=True)
class ReadsTheirs:
    """The write-up's read steps: their rates and each replica's CPU-ms per read (the low end of a range)."""

    rates: list[int]
    replica_ms: list[float]


@dataclass(frozen=True)
class ReadsScaleOurs:
    rates: list[int]  # our passing read steps with the reads each replica served
    replicas: int
    share: Range  # each replica's share of the reads served, the smallest and the largest
    per_read_served: list[float | None]  # per step, the worse replica's CPU-ms per read it served (median)
    master_ms: float | None  # the master's CPU per read (None below resolution)
    same_rate: list[ReadRate]  # per rate both ran


@dataclass(frozen=True, kw_only=True)
class ReadsScale(Verdict):
    theirs: ReadsTheirs
    ours: ReadsScaleOurs | None = None  # None: no passing read step with the reads each replica served


@dataclass(frozen=True)
class ReadOverheadOurs:
    idle_cores: Range  # a replica's idle CPU, cores, over the replicas and passing steps
    shares: dict[int, float]  # per passing rate, the largest share of a replica's CPU its idle is
    master_ms: float | None  # the master's CPU per read (None below resolution)


@dataclass(frozen=True, kw_only=True)
class ReadOverhead(Verdict):
    theirs: list[int]  # the write-up's read rates: it gives no figure of the overhead (its words)
    ours: ReadOverheadOurs | None = None  # None: no passing read step with a replica's idle CPU


@dataclass(frozen=True)
class DiskRow:
    """One write scenario at the small pool's lowest rate: the reference settings' pool (large) against
    SMALL_POOL (small)."""

    rate: int
    max: Maxima  # each sweep's max sustainable rate (large, small)
    lowest: int  # the small pool's lowest rate (the rate above)
    pages: Pair  # the worse replica's InnoDB pages read per applied write (large, small)
    master_pages: Pair
    words: str  # the one rule's words for the pages (small against large)
    fits: tuple[bool | None, bool | None]  # each pool held the working set (None: unrecorded)
    cpu: SameRate | None  # the replica's CPU per applied write, small against large (None: not both passed)
    passed: tuple[bool, bool]  # pages are read from a failing step too (said where)


@dataclass(frozen=True, kw_only=True)
class Disk(Verdict):
    ours: dict[str, DiskRow]  # per write scenario with both pools' sweeps; the write-up has no disk figure


@dataclass(frozen=True)
class IndexSpeedTheirs:
    p99: dict[int, TheirRatio]
    master: dict[int, TheirRatio]  # the master's CPU-ms per request


@dataclass(frozen=True)
class IndexSpeedOurs:
    p99: list[SameRate]
    master: list[SameRate]  # the master's CPU-ms per applied write
    max: dict[str, Maxima]  # per pool ("" the reference settings'): (indexed, bare)
    shared: list[int]  # the rates of p99 the write-up ran too


@dataclass(frozen=True, kw_only=True)
class IndexSpeed(Verdict):
    theirs: IndexSpeedTheirs
    ours: IndexSpeedOurs


@dataclass(frozen=True)
class IndexReplicaCpuOurs:
    pairs: list[SameRate]  # the worse replica's CPU-ms per applied write
    shared: list[int]  # the rates of pairs the write-up has both tables at
    study: list[PoolPair]


@dataclass(frozen=True, kw_only=True)
class IndexReplicaCpu(Verdict):
    theirs: dict[int, TheirRatio]  # each replica's CPU-ms per request, by rate
    ours: IndexReplicaCpuOurs


def conclusion(key: str) -> str:
    return dict(CONCLUSIONS)[key]


def passing(swept: Swept | None) -> list[Ran]:
    """The steps that passed and have a summary: the only ones a verdict reads CPU or latency from."""
    return [s for s in (swept.steps if swept else ()) if s.passed and s.runs]


def resolved(summary: RunSummary, key: str) -> float | None:
    """A run's figure of studymetrics' registry, None where it is below its resolution (docs/metrics.md, "Net of
    idle": such a figure is not a cost and gives no ratio)."""
    metric = RUN_BY_KEY[key]
    return _above(metric.get(summary), metric.resolution(summary) if metric.resolution else None)


def _above(value: float | None, floor: float | None) -> float | None:
    """A net-of-idle figure, None where it is below its resolution or at 0 (a net cost of 0 cannot be told from the
    idle it was net of: docs/metrics.md, "Comparing two figures")."""
    return None if value is None or value <= 0 or (floor is not None and value < floor) else value


# a figure of both sides' repeats at one rate: each side's values, and whether write-back is in them
Pairing = Callable[[Sequence[RunSummary], Sequence[RunSummary]], tuple[list[float | None], list[float | None], bool]]


def per_applied(node: str) -> Pairing:
    """A node's ("master" or "replica": the worse replica) CPU-ms net of idle per write it applied, both sides: with
    write-back (summary.json `writeback`) where every run of both recorded it, else the runs' own figures; the
    third item says which."""
    def figures(a: Sequence[RunSummary], b: Sequence[RunSummary]) -> tuple[list[float | None], list[float | None],
                                                                          bool]:
        whole = RUN_BY_KEY[f"{node}_ms_per_write_with_writeback"]
        with_wb = [whole.get(s) for s in a], [whole.get(s) for s in b]
        if all(v is not None for v in [*with_wb[0], *with_wb[1]]):
            return with_wb[0], with_wb[1], True
        return [resolved(s, f"{node}_ms_per_write") for s in a], [resolved(s, f"{node}_ms_per_write") for s in b], \
            False
    return figures


def p99(a: Sequence[RunSummary], b: Sequence[RunSummary]) -> tuple[list[float | None], list[float | None], bool]:
    """The client's p99 latency, ms, both sides."""
    def one(s: RunSummary) -> float | None:
        return s.latency_ms.p99 if s.latency_ms else None
    return [one(s) for s in a], [one(s) for s in b], False


def same_rate(a: Swept | None, b: Swept | None, figure: Pairing, count: str = "") -> list[SameRate]:
    """At every rate both sweeps passed: each side's median, the ratio a / b and the one rule's words for their
    repeats (core/stats.judgement; `count` for a count, why its repeats can differ), and whether write-back is in."""
    other = {s.rate: s for s in passing(b)}
    out: list[SameRate] = []
    for step in passing(a):
        if step.rate not in other:
            continue
        va, vb, writeback = figure(step.runs, other[step.rate].runs)
        ma, mb = median(va), median(vb)
        if not ma or not mb:
            continue
        out.append(SameRate(step.rate, ma, mb, ma / mb, writeback, judgement(va, vb, count=count).text))
    return out


def their_ratios(value: Callable[[Step], Range | None]) -> dict[int, TheirRatio]:
    """At every rate both of the write-up's write tables have: its indexed and unindexed figures (low, high) and
    their ratio's range (low over high, high over low)."""
    bare = {s.rate: s for s in WRITES["write-noindex"]}
    out: dict[int, TheirRatio] = {}
    for step in WRITES["write"]:
        a = value(step)
        b = value(bare[step.rate]) if step.rate in bare else None
        if a and b and b[0] and b[1]:
            out[step.rate] = TheirRatio(a, b, (a[0] / b[1], a[1] / b[0]))
    return out


def sized(ours: Sequence[float], theirs: Sequence[tuple[float, float]]) -> str:
    """Our same-rate ratio (the median where several rates share one) against the write-up's range: NOT_SEEN under
    FINDING_MIN_FACTOR, HOLDS within REFERENCE_SIZE_FACTOR of its range, else DIFFERENT_SIZE; NOT_MEASURED where
    no rate has both."""
    mid = median(list(ours))
    if mid is None or not theirs:
        return NOT_MEASURED
    if mid < FINDING_MIN_FACTOR:
        return NOT_SEEN
    low, high = min(t[0] for t in theirs), max(t[1] for t in theirs)
    return HOLDS if low / REFERENCE_SIZE_FACTOR <= mid <= high * REFERENCE_SIZE_FACTOR else DIFFERENT_SIZE


def _replicas(summary: RunSummary) -> tuple[str, ...]:
    return replicas_in([*(summary.served_by or {}), *(summary.cpu_seconds_net or {})])


def per_read_served(summary: RunSummary) -> float | None:
    """The worse replica's CPU-ms net of idle per read it served (served_by), None where a replica's figure is
    missing or below its resolution."""
    served, net = summary.served_by or {}, summary.cpu_seconds_net or {}
    floors = summary.cpu_seconds_net_resolution or {}
    got = []
    for replica in _replicas(summary):
        cpu, reads = _above(net.get(replica), floors.get(replica)), served.get(replica)
        if cpu is None or not reads:
            return None
        got.append(1000 * cpu / reads)
    return max(got) if got else None


def per_read(summary: RunSummary, group: str) -> float | None:
    """A group's CPU-ms net of idle per successful read (all reads), None below its resolution."""
    return _above((summary.cpu_ms_per_success_net or {}).get(group),
                  (summary.cpu_ms_per_success_net_resolution or {}).get(group))


def _worse_replica_per_read(summary: RunSummary) -> float | None:
    values = [per_read(summary, r) for r in _replicas(summary)]
    return None if not values or None in values else max(present(values))


def read_shares(summary: RunSummary) -> list[float]:
    """Each replica's share of the reads served."""
    served = {r: (summary.served_by or {}).get(r) or 0 for r in _replicas(summary)}
    total = sum(served.values())
    return [v / total for v in served.values()] if total else []


def reads_scale(read: Swept | None) -> ReadsScale:
    """Balancing reads over the replicas scales them: holds where each replica served an even share (the largest
    over the smallest under FINDING_MIN_FACTOR) at a CPU per read served that does not grow with the rate (the
    highest step's over the lowest's under FINDING_MIN_FACTOR), over our passing read steps. Inferred: the number
    of replicas is not varied."""
    key = "reads-scale"
    theirs = ReadsTheirs([s.rate for s in READS], [(s.replica_ms() or (0.0, 0.0))[0] for s in READS])
    steps = [s for s in passing(read) if all(read_shares(r) for r in s.runs)]
    if not steps:
        return ReadsScale(key, conclusion(key), NOT_MEASURED, theirs=theirs)
    shares = [v for s in steps for r in s.runs for v in read_shares(r)]
    served = [median([per_read_served(r) for r in s.runs]) for s in steps]
    by_rate = {s.rate: s for s in READS}
    ours = ReadsScaleOurs(
        rates=[s.rate for s in steps], replicas=len(_replicas(steps[0].runs[0])), share=(min(shares), max(shares)),
        per_read_served=served, master_ms=median([per_read(r, "master") for s in steps for r in s.runs]),
        same_rate=[ReadRate(s.rate, median([_worse_replica_per_read(r) for r in s.runs]),
                            (by_rate[s.rate].replica_ms() or (0.0, 0.0))[0]) for s in steps if s.rate in by_rate])
    got = present(served)
    even = max(shares) / min(shares) < FINDING_MIN_FACTOR if min(shares) > 0 else False
    flat = bool(got) and got[-1] / got[0] < FINDING_MIN_FACTOR
    return ReadsScale(key, conclusion(key), HOLDS if even and flat else NOT_SEEN,
                      "the number of replicas is not varied here", theirs=theirs, ours=ours)


def idle_share(summary: RunSummary, replica: str) -> tuple[float, float] | None:
    """A replica's idle CPU (cores: the replication running with nothing to apply but the heartbeat, and our
    samplers' polls) and its share of the replica's whole CPU over the run."""
    idle = (summary.cpu_idle_per_s or {}).get(replica)
    gross, span = (summary.cpu_seconds or {}).get(replica), summary.cpu_span_s or summary.duration_s
    if idle is None or not gross or not span:
        return None
    return idle, idle * span / gross


def read_overhead(read: Swept | None) -> ReadOverhead:
    """The replicas' CPU overhead under reads is small: what replication costs a replica serving reads is bounded
    by its idle CPU (replication running, nothing applied but the heartbeat; our samplers' polls too), and holds
    as small where that is under FINDING_MIN_FACTOR − 1 of the replica's CPU at every rate both ran. Inferred: no
    run serves reads without replicas."""
    key = "read-overhead"
    theirs = [s.rate for s in READS]
    steps = passing(read)
    per_step = []
    for step in steps:
        got = [v for r in step.runs for rep in _replicas(r) if (v := idle_share(r, rep)) is not None]
        if got:
            per_step.append((step.rate, [g[0] for g in got], max(g[1] for g in got)))
    if not per_step:
        return ReadOverhead(key, conclusion(key), NOT_MEASURED, theirs=theirs)
    idle = [v for _, cores, _ in per_step for v in cores]
    ours = ReadOverheadOurs(idle_cores=(min(idle), max(idle)), shares={rate: share for rate, _, share in per_step},
                            master_ms=median([per_read(r, "master") for s in steps for r in s.runs]))
    shared = [share for rate, _, share in per_step if rate in theirs]
    verdict = NOT_MEASURED if not shared else HOLDS if max(shared) < FINDING_MIN_FACTOR - 1 else NOT_SEEN
    return ReadOverhead(key, conclusion(key), verdict,
                        "no run without replicas; bounded by a replica's idle CPU", theirs=theirs, ours=ours)


def pages_per_applied(summary: RunSummary, node: str) -> float | None:
    """A node's InnoDB pages read per write it applied (net of idle where recorded): the run's figure is per
    successful write (measure/counters), which a replica that fell behind did not all apply."""
    writes = summary.binlog.successful_writes if summary.binlog else None
    counters = node_counters(summary, node)
    pages = counters.pages_read_per_write_net if counters.pages_read_per_write_net is not None else \
        counters.pages_read_per_write
    if pages is None or not writes or not counters.transactions:
        return None
    return round(pages * writes / counters.transactions, 2)


def _pages(runs: Sequence[RunSummary]) -> tuple[list[float | None], list[float | None]]:
    """The worse replica's and the master's InnoDB pages read per applied write (counts)."""
    def worse(s: RunSummary) -> float | None:
        got = [pages_per_applied(s, r) for r in replicas_in(s.replication.nodes or {})] if s.replication else []
        return max(present(got)) if got and None not in got else None
    return [worse(s) for s in runs], [pages_per_applied(s, "master") for s in runs]


def _fits(runs: Sequence[RunSummary]) -> bool | None:
    """Whether every node's pool held the working set (summary.json buffer_pools `fits`), None unrecorded."""
    got = [p.fits for s in runs for p in (s.buffer_pools or {}).values() if p.fits is not None]
    return all(got) if got else None


def disk(sweeps: Sweeps) -> Disk:
    """Write throughput depends on the disk: per write scenario, the sweep with the reference settings' pool (the
    set in memory) against the SMALL_POOL one, at the small pool's lowest rate (the same rate on both sides): pages
    read per applied write (counts) and whether each pool held the working set, each sweep's max sustainable rate,
    and the replica's CPU per applied write where both steps passed. Holds where, in some scenario, the small pool
    read pages per write the large did not (its pool short of the working set) and sustained less (FINDING_MIN_FACTOR,
    or no step at all). Inferred: the disk itself is not changed. Ours per scenario (DiskRow); the write-up's:
    none (its hypothesis, no disk figure)."""
    key = "disk"
    ours: dict[str, DiskRow] = {}
    verdicts = []
    for scenario in WRITES:
        large, small = sweeps.get((scenario, "")), sweeps.get((scenario, SMALL_POOL))
        if not large or not small or not small.steps:
            continue
        rate = small.steps[0].rate
        at = next((s for s in large.steps if s.rate == rate and s.runs), None)
        if at is None or not small.steps[0].runs:
            continue
        (big_pages, big_master), (small_pages, small_master) = _pages(at.runs), _pages(small.steps[0].runs)
        cpu = same_rate(Swept((small.steps[0],)), Swept((at,)), per_applied("replica"))
        row = DiskRow(rate=rate, max=(large.max_rate, small.max_rate), lowest=rate,
                      pages=(median(big_pages), median(small_pages)),
                      master_pages=(median(big_master), median(small_master)),
                      words=judgement(small_pages, big_pages, count=PAGES_VARY).text,
                      fits=(_fits(at.runs), _fits(small.steps[0].runs)), cpu=cpu[0] if cpu else None,
                      # pages are counts per write each node applied, read from a failing step too (said where)
                      passed=(at.passed, small.steps[0].passed))
        ours[scenario] = row
        reads_more = (row.pages[1] or 0) > (row.pages[0] or 0) and row.fits == (True, False)
        slower = large.max_rate is not None and (small.max_rate is None
                                                 or large.max_rate >= FINDING_MIN_FACTOR * small.max_rate)
        verdicts.append(reads_more and slower)
    verdict = NOT_MEASURED if not verdicts else CONSISTENT if any(verdicts) else NOT_SEEN
    return Disk(key, conclusion(key), verdict,
                "from pages read per write and a pool short of the working set", ours=ours)


def index_speed(sweeps: Sweeps) -> IndexSpeed:
    """Indexes strongly affect write speed: the client's p99 at the rates both sides ran (ours: both our sweeps
    passed, reference settings' pool), its size against the write-up's (sized); beside it the master's CPU per
    applied write and each pool's max sustainable rates."""
    key = "index-speed"
    indexed, bare = sweeps.get(("write", "")), sweeps.get(("write-noindex", ""))
    theirs = IndexSpeedTheirs(p99=their_ratios(lambda s: (s.p99_ms, s.p99_ms) if s.p99_ms else None),
                              master=their_ratios(lambda s: (m, m) if (m := s.cpu_ms(s.master)) else None))
    latency = same_rate(indexed, bare, p99)
    shared = [p.rate for p in latency if p.rate in theirs.p99]
    ours = IndexSpeedOurs(p99=latency, master=same_rate(indexed, bare, per_applied("master")),
                          max={pool: (a.max_rate, b.max_rate) for pool in ("", SMALL_POOL)
                               if (a := sweeps.get(("write", pool))) and (b := sweeps.get(("write-noindex", pool)))},
                          shared=shared)
    verdict = sized([p.ratio for p in latency if p.rate in shared], [theirs.p99[r].ratio for r in shared])
    return IndexSpeed(key, conclusion(key), verdict, "", theirs=theirs, ours=ours)


def pool_pairs(data: StudyRecord | None) -> list[PoolPair]:
    """Study working-set's replica CPU per applied write, indexed against not, per pool (largest pool first): the
    very figures the answers give (analysis/answers.pool_index_costs, the study's comparison over its units), so
    the page states one ratio per pool; the one rule's words for the two sets of repeats, and their counts."""
    out = []
    for cost in pool_index_costs(data) if data is not None else []:
        a, b = (present(row.values or []) for row in cost.rows)
        ma, mb = cost.rows[0].median, cost.rows[1].median
        assert ma and mb  # pool_index_costs leaves out a pool without both medians
        out.append(PoolPair(cost.pool or "", ma, mb, cost.ratio, judgement(a, b).text,
                            ((data.rates or {}) if data is not None else {}).get("write"), (len(a), len(b))))
    return out


def index_replica_cpu(sweeps: Sweeps, working_set: StudyRecord | None = None) -> IndexReplicaCpu:
    """Indexes strongly affect the replicas' CPU under writes: the worse replica's CPU per applied write, indexed
    against not, at every rate both our sweeps passed (reference settings' pool); sized against the write-up's at
    the rates both sides ran; beside it study working-set's passing units per pool."""
    key = "index-replica-cpu"
    theirs = their_ratios(lambda s: s.replica_ms())
    pairs = same_rate(sweeps.get(("write", "")), sweeps.get(("write-noindex", "")), per_applied("replica"))
    shared = [p.rate for p in pairs if p.rate in theirs]
    ours = IndexReplicaCpuOurs(pairs=pairs, shared=shared, study=pool_pairs(working_set))
    verdict = sized([p.ratio for p in pairs if p.rate in shared], [theirs[r].ratio for r in shared])
    return IndexReplicaCpu(key, conclusion(key), verdict, "", theirs=theirs, ours=ours)


def verdicts(sweeps: Sweeps, working_set: StudyRecord | None = None) -> list[Verdict]:
    """A verdict per conclusion of the write-up, in its order."""
    return [reads_scale(sweeps.get(("read", ""))), read_overhead(sweeps.get(("read", ""))), disk(sweeps),
            index_speed(sweeps), index_replica_cpu(sweeps, working_set)]


@dataclass(frozen=True)
class Spread:
    """A role's figure over the runs that have it (core/stats.spread's): median, min, max (None: none has it), n."""

    median: float | None
    min: float | None
    max: float | None
    n: int

    @classmethod
    def of(cls, values: Sequence[float | None]) -> Spread:
        got = present(values)
        return cls(median(got), min(got, default=None), max(got, default=None), len(got))


@dataclass(frozen=True)
class TheirCores:
    """The write-up's own cores at a read rate: gunicorn's, and each replica's (0 where its step gives none)."""

    app: float
    replica: float


@dataclass(frozen=True)
class ReadCores:
    """The cores each role needs for `rate` reads/s (read_cores')."""

    rate: int
    rates: list[int]  # our passing read steps
    replicas: int
    cores: dict[str, Spread]  # per role: app, replica (each), load, master
    total: float  # the sum of the medians, every replica counted
    host_cores: int | None  # this box's, as the runs recorded them
    theirs: TheirCores | None  # None: the write-up has no step at the rate


def read_cores(read: Swept | None, rate: int = READS_ASKED) -> ReadCores | None:
    """The cores each role needs for `rate` reads/s from our passing read steps' CPU per read (net of idle): the app
    and the load generator per read, each replica per read it served over the replicas' even share, the master per
    read (None below its resolution): per role a spread over the steps' runs, and the sum of the medians with every
    replica counted. Inferred: the costs per read are taken as they were up to our highest passing step. With the
    write-up's own cores at that rate (gunicorn, each replica), None without a passing read step."""
    steps = passing(read)
    runs = [r for s in steps for r in s.runs if read_shares(r)]
    if not runs:
        return None
    count = len(_replicas(runs[0]))
    roles = {"app": [per_read(r, "app") for r in runs],
             "replica": [None if (v := per_read_served(r)) is None else v / count for r in runs],
             "load": [per_read(r, "vegeta") for r in runs],
             "master": [per_read(r, "master") for r in runs]}
    cores = {role: Spread.of([None if v is None else v * rate / 1000 for v in values])
             for role, values in roles.items()}
    total = sum((cores[role].median or 0.0) * (count if role == "replica" else 1) for role in cores)
    step = next((s for s in READS if s.rate == rate), None)
    theirs = None if step is None else TheirCores(app=(step.gunicorn or 0) / 100,
                                                  replica=(step.replica[0] if step.replica else 0) / 100)
    return ReadCores(rate=rate, rates=[s.rate for s in steps], replicas=count, cores=cores, total=total,
                     host_cores=next((r.cores for r in runs if r.cores), None), theirs=theirs)


def fewest_repeats(sweeps: Sweeps) -> int | None:
    """The fewest repeats any step of these sweeps ran: below FINDING_MIN_REPEATS a verdict describes its ratios
    and tests none (docs/metrics.md, "Comparing two figures")."""
    counts = [len(step.runs) for swept in sweeps.values() for step in swept.steps if step.runs]
    return min(counts) if counts else None
