"""The reference write-up's conclusions against ours, in words: a table of one row per conclusion (the write-up's
figures, ours, the verdict; analysis/reference derives them), the cores per role its 3,000 reads/s needs at our
per-read costs, and the answer's one sentence. The method: docs/metrics.md, "The reference write-up's
conclusions".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..analysis import reference as ref
from ..analysis.studymetrics import fmt
from ..core.config import FINDING_MIN_REPEATS
from ..core.results import RunMeta, StudyRecord
from .provenance import server_versions
from .sweeps import ShownSweep

HEADING = "The reference write-up's conclusions against ours"
ANCHOR = "#the-reference-write-ups-conclusions-against-ours"
METHOD = "docs/metrics.md#the-reference-write-ups-conclusions"
SHORT = {  # each conclusion as the answers' one sentence names it
    "reads-scale": "reads scale by balancing",
    "read-overhead": "replica CPU overhead under reads is small",
    "disk": "write throughput depends on disk",
    "index-speed": "indexes affect write speed",
    "index-replica-cpu": "indexes affect replica CPU under ROW",
}


def sweeps_of(latest: dict[str, ShownSweep]) -> dict[tuple[str, str], ref.Swept]:
    """Our sweeps a verdict reads (report/sweeps.sweep_section's sections, by key), by (scenario, pool): the reference
    settings' and the SMALL_POOL one of each scenario the write-up ran."""
    out = {}
    for scenario in ("read", *ref.WRITES):
        for pool in ("", ref.SMALL_POOL):
            info = latest.get(scenario + (f" [buffer_pool={pool}]" if pool else ""))
            if info is not None and info.steps:
                out[(scenario, pool)] = ref.Swept(
                    tuple(ref.Ran(s.rate, bool(s.passed), tuple(r.summary for r in s.repeats)) for s in info.steps
                          if s.rate is not None), info.max)
    return out


def verdicts_of(latest: dict[str, ShownSweep], studies: list[StudyRecord]) -> list[ref.Verdict]:
    return ref.verdicts(sweeps_of(latest), next((d for d in studies if d.name == "working-set"), None))


def _x(value: float) -> str:
    return f"{value:.1f}×"


def _times(pair: tuple[float, float]) -> str:
    """A ratio's range as printed: '7.1–13.6×', or '2.1×'."""
    low, high = f"{pair[0]:.1f}", f"{pair[1]:.1f}"
    return f"{low}×" if low == high else f"{low}–{high}×"


def _span(low: float | None, high: float | None, form: Callable[[float | None], str] = fmt) -> str:
    """'a–b', or 'a' where both are the same as printed."""
    a, b = form(low), form(high)
    return a if a == b else f"{a}–{b}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}" if value < 0.1 else f"{100 * value:.0f}"


def _share(value: float) -> str:
    return f"{100 * value:.1f}"


def _rates(rates: Sequence[int]) -> str:
    return f"{min(rates)}–{max(rates)}/s" if len(set(rates)) > 1 else f"{rates[0]}/s"


def _ratios(rows: list[ref.SameRate]) -> str:
    """Our same-rate ratios over every rate both sweeps passed, with the one rule's words (the same at each rate
    where the repeats are one run a step)."""
    words = sorted({r.words for r in rows})
    return (f"{_times((min(r.ratio for r in rows), max(r.ratio for r in rows)))} at "
            f"{_rates([r.rate for r in rows])}: " + "; ".join(words))


def _at(rows: list[ref.SameRate], rate: int) -> ref.SameRate | None:
    return next((r for r in rows if r.rate == rate), None)


def _reads_scale(v: ref.ReadsScale) -> tuple[str, str]:
    t, o = v.theirs, v.ours
    theirs = (f"both replicas loaded alike, the master not; a replica "
              f"{_span(min(t.replica_ms), max(t.replica_ms))} ms per read at {_rates(t.rates)}")
    if not o:
        return theirs, "no passing read step with the reads each replica served"
    served = [v for v in o.per_read_served if v is not None]
    same = "".join(f"; at {s.rate}/s a replica {fmt(s.ours)} ms per read (its {fmt(s.theirs)})"
                   for s in o.same_rate)
    cost = _span(min(served), max(served)) if served else "–"
    return theirs, (f"each of {o.replicas} replicas served {_share(o.share[0])}–{_share(o.share[1])} % of the "
                    f"reads at {_rates(o.rates)}, at {cost} ms per read it served; the master "
                    f"{_master(o.master_ms)}" + same)


def _master(value: float | None) -> str:
    return "none measurable" if value is None else f"{fmt(value)} ms per read"


def _read_overhead(v: ref.ReadOverhead) -> tuple[str, str]:
    o = v.ours
    theirs = "stated, no figure (no run without replicas)"
    if not o:
        return theirs, "no passing read step"
    shares = o.shares
    shared = [r for r in shares if r in v.theirs]
    at = "; ".join(f"{_pct(shares[r])} % of its CPU at {r}/s" for r in shared) or "–"
    return theirs, (f"a replica's idle CPU (replication with nothing to apply but the heartbeat, our polls) "
                    f"{_pct(o.idle_cores[0])}–{_pct(o.idle_cores[1])} % of a core: {at} "
                    f"({_span(min(shares.values()), max(shares.values()), _pct)} % at {_rates(list(shares))}); "
                    f"the master {_master(o.master_ms)}")


def _max(rate: int | None, lowest: int | None = None) -> str:
    return f"{rate}/s" if rate is not None else f"none from {lowest}/s" if lowest else "none"


def _disk(v: ref.Disk) -> tuple[str, str]:
    theirs = "its hypothesis (a host with more IOPS), no disk figure"
    said, words = [], set()
    for scenario, row in v.ours.items():
        large, small = row.max
        text = (f"`{scenario}`: max {_max(large)} in memory, {_max(small, row.lowest)} with {ref.SMALL_POOL}"
                + ("" if row.fits[1] is not False else " (pool < working set)")
                + f"; pages read per applied write at {row.rate}/s {fmt(row.pages[1])} against "
                f"{fmt(row.pages[0])} (master {fmt(row.master_pages[1])} against {fmt(row.master_pages[0])}"
                + ("" if all(row.passed) else "; from a failing step, per write applied") + ")")
        if row.cpu:
            cpu = row.cpu
            text += (f", replica CPU per applied write {fmt(cpu.a)} against {fmt(cpu.b)} ms ({_x(cpu.ratio)}; "
                     f"{cpu.words})")
        said.append(text)
        words.add(row.words)
    if not said:
        return theirs, f"no {ref.SMALL_POOL} sweep beside the reference pool's"
    return theirs, "; ".join(said) + f" (pages: {'; '.join(sorted(words))})"


def _index_speed(v: ref.IndexSpeed) -> tuple[str, str]:
    t, o = v.theirs, v.ours
    theirs = "; ".join(f"at {rate}/s p99 {fmt(p.a[0])} against {fmt(p.b[0])} ms ({_x(p.ratio[0])}), master "
                       f"{fmt(t.master[rate].a[0])} against {fmt(t.master[rate].b[0])} ms per write "
                       f"({_x(t.master[rate].ratio[0])})" for rate, p in t.p99.items() if rate in t.master)
    said = []
    for rate in o.shared:
        p, m = _at(o.p99, rate), _at(o.master, rate)
        assert p is not None  # shared: the rates of o.p99
        said.append(f"at {rate}/s p99 {fmt(p.a)} against {fmt(p.b)} ms ({_x(p.ratio)})"
                    + (f", master {fmt(m.a)} against {fmt(m.b)} ms per applied write ({_x(m.ratio)})" if m else ""))
    if o.p99:
        said.append(f"p99 {_ratios(o.p99)}")
    maxima = [f"{_max(a)} against {_max(b)}" + (f" with {pool}" if pool else "") for pool, (a, b) in o.max.items()]
    if maxima:
        said.append("max " + ", ".join(maxima))
    return theirs, "; ".join(said) or "no rate both our sweeps passed"


def _index_replica_cpu(v: ref.IndexReplicaCpu) -> tuple[str, str]:
    t, o = v.theirs, v.ours
    theirs = "; ".join(f"at {rate}/s {_span(*p.a)} against {_span(*p.b)} ms per write "
                       f"({_times(p.ratio)})" for rate, p in t.items())
    said = []
    for rate in o.shared:
        p = _at(o.pairs, rate)
        assert p is not None  # shared: the rates of o.pairs
        said.append(f"at {rate}/s {fmt(p.a)} against {fmt(p.b)} ms per applied write ({_x(p.ratio)})")
    if o.pairs:
        said.append(_ratios(o.pairs))
    if o.study:
        words = {s.words for s in o.study}
        said.append(f"study working-set at {o.study[0].rate}/s: " + ", ".join(
            f"{_x(s.ratio)} with a {s.pool or 'reference'} pool"
            + ("" if len(words) == 1 else f" ({s.words})") for s in o.study)
            + (f" (each: {next(iter(words))})" if len(words) == 1 else ""))  # one rule's words said once
    return theirs, "; ".join(said) or "no rate both our sweeps passed"


def row_words(v: ref.Verdict) -> tuple[str, str]:
    """A conclusion's row: the write-up's figures and ours, in words, by the kind of its verdict."""
    match v:
        case ref.ReadsScale():
            return _reads_scale(v)
        case ref.ReadOverhead():
            return _read_overhead(v)
        case ref.Disk():
            return _disk(v)
        case ref.IndexSpeed():
            return _index_speed(v)
        case ref.IndexReplicaCpu():
            return _index_replica_cpu(v)
    raise AssertionError(f"no row for a verdict on {v.key}")  # analysis/reference.verdicts gives only those


def verdict_text(v: ref.Verdict) -> str:
    return f"**{v.verdict}**" + (f"; inferred: {v.inferred}" if v.inferred and v.verdict != ref.NOT_MEASURED else "")


def writeback_words(verdicts: list[ref.Verdict]) -> str:
    """Whether the CPU per applied write includes write-back: where every run of both sides recorded it."""
    rows = [r for v in verdicts for r in (v.ours.pairs if isinstance(v, ref.IndexReplicaCpu)
                                          else v.ours.master if isinstance(v, ref.IndexSpeed) else [])]
    if rows and all(r.writeback for r in rows):
        return "with write-back (the run's dirty pages flushed after it)"
    if any(r.writeback for r in rows):
        return "with write-back where both sides recorded it"
    return "without write-back: these runs did not record it"


def read_cores_text(cores: ref.ReadCores | None) -> str:
    """The cores per role the write-up's 3,000 reads/s needs at our per-read costs."""
    head = f"**{ref.READS_ASKED:,} reads/s**"
    if cores is None:
        return head + ": no passing read step to price it from."
    c, theirs = cores.cores, cores.theirs

    def role(name: str) -> str:
        got = c[name]
        if got.median is None:
            return "none measurable"
        return fmt(got.median) + ("" if fmt(got.min) == fmt(got.max) else f" [{fmt(got.min)}–{fmt(got.max)}]")

    return (head + (f" (its step: gunicorn {theirs.app:g} cores, each replica {theirs.replica:g})"
                    if theirs else "")
            + f": at our CPU per read (passing read steps, {_rates(cores.rates)}, net of idle) the app needs "
            f"{role('app')} cores, each of {cores.replicas} replicas {role('replica')}, the load generator "
            f"{role('load')}, the master {role('master')}: {cores.total:.1f} cores in all"
            + (f", against this box's {cores.host_cores}" if cores.host_cores else "")
            + f"; inferred: the per-read costs taken as they were up to {max(cores.rates)}/s.")


# what an inferred verdict rests on, in the answers' one sentence (the table says it whole)
INFERRED_SHORT = {"disk": "inferred from the pool short of the working set"}


def _repeats_words(sweeps: dict[tuple[str, str], ref.Swept]) -> str:
    """How many runs each step had, and so what the verdicts are (the one rule: docs/metrics.md)."""
    fewest = ref.fewest_repeats(sweeps)
    if fewest is None or fewest >= FINDING_MIN_REPEATS:
        return ""
    return (f"each step {'one run' if fewest == 1 else f'{fewest} runs'} (n = {fewest}): the verdicts describe "
            f"ratios, none is a tested finding ({FINDING_MIN_REPEATS} repeats a side are), ")


def section(latest: dict[str, ShownSweep], studies: list[StudyRecord]) -> list[str]:
    """The section: what the comparison rests on, the table of verdicts, the 3,000 reads/s, what may make sizes
    differ. Empty where none of our sweeps the verdicts read is in the data."""
    sweeps = sweeps_of(latest)
    if not sweeps:
        return []
    verdicts = ref.verdicts(sweeps, next((d for d in studies if d.name == "working-set"), None))
    versions = server_versions([info.meta or RunMeta() for info in latest.values()])
    return [f"## {HEADING}", "",
            f"The write-up ({ref.SOURCE}: 16 vCPU, MySQL in Docker, its pool not stated) against this box at the "
            "rates both ran: ours from passing sweep steps (pages read also from a failing one, said where), CPU "
            f"net of idle per write the node applied, {_repeats_words(sweeps)}"
            f"{writeback_words(verdicts)}; the write-up's per request (CPU % × 10 ÷ rate). Ratios: indexed over "
            f"not. Method: [docs/metrics.md]({METHOD}).", "",
            "| its conclusion | the write-up | ours | verdict |", "|---|---|---|---|",
            *(f"| {v.conclusion} | {' | '.join(row_words(v))} | {verdict_text(v)} |" for v in verdicts), "",
            read_cores_text(ref.read_cores(sweeps.get(("read", "")))), "",
            "Why a size may differ: its 16 vCPU against our 2 cores for every role, MySQL "
            f"against MariaDB{' ' + ', '.join(versions) if versions else ''}, its disk (not stated) and its pool "
            "(not stated; in the working-set study of the last row the replicas' ratio grows as the pool shrinks: "
            "n = 2 a side, not tested).", ""]


def answer(latest: dict[str, ShownSweep], studies: list[StudyRecord]) -> str:
    """The answers' one sentence: each conclusion's verdict, the size beside the replicas' CPU (the one the write-up
    puts a figure on at a rate both ran)."""
    head = f"**The reference write-up's five conclusions** ([verdicts]({ANCHOR})): "
    if not sweeps_of(latest):
        return head + "not measured in the data this report shows (no read or write sweep)."
    said = []
    for v in verdicts_of(latest, studies):
        text = f"{SHORT[v.key]}: {v.verdict}" + (f" ({INFERRED_SHORT.get(v.key, 'inferred')})"
                                                 if v.inferred and v.verdict != ref.NOT_MEASURED else "")
        if isinstance(v, ref.IndexReplicaCpu) and v.ours.shared:
            rate = v.ours.shared[0]
            mine, theirs = _at(v.ours.pairs, rate), v.theirs[rate].ratio
            if mine:
                text += f" ({_x(mine.ratio)} at {rate}/s against its {_times(theirs)})"
        said.append(text)
    fewest = ref.fewest_repeats(sweeps_of(latest))
    untested = (f" — each from {'single runs' if fewest == 1 else f'{fewest} runs'} a step, described, not tested"
                if fewest is not None and fewest < FINDING_MIN_REPEATS else "")
    return head + "; ".join(said) + untested + "."

