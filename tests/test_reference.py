"""A verdict on each of the reference write-up's five conclusions (issue 73): ratios only at the rates both sides
ran, ours from passing steps only, a replica's CPU per write it applied (net of idle, with write-back where both
sides recorded it), the size judged against the write-up's, inferences marked, and the 3,000 reads/s in cores per
role. Unit tier: synthetic summaries and the committed report campaign's assets, no server."""

from __future__ import annotations

from typing import Any

import pytest

from replbench.analysis import reference as ref
from replbench.core.config import ROOT
from replbench.core.results import RunSummary, read_study, read_sweep, summary_of
from replbench.core.stats import judgement
from replbench.report import answers, sources
from replbench.report import reference as words
from replbench.report.sweeps import ShownSweep, shown_sweep

pytestmark = pytest.mark.unit

CAMPAIGN = ROOT / "results" / "report-assets" / "campaign-report-20261128-211315"  # what report.md shows


def _latest() -> dict[str, ShownSweep]:
    """The committed campaign's sweeps as report/sweeps.sweep_section hands them to the page, by key."""
    latest = {}
    for folder in sorted(CAMPAIGN.glob("sweep-*")):
        sweep = read_sweep(folder)
        latest[sources.sweep_key(sweep)] = shown_sweep(folder, sweep, sources.load_steps(folder, sweep))
    return latest


def _working_set() -> Any:
    return read_study(next(CAMPAIGN.glob("study-*-working-set")))


def write_run(replica_cpu: float, applied: int, successes: int = 1000, master_cpu: float = 1.0, p99: float = 5.0,
              resolution: float = 0.001, writeback: float | None = None, pages: float = 0.0,
              fits: bool = True) -> RunSummary:
    """One write run: each replica spent replica_cpu s net of idle applying `applied` of the `successes` writes."""
    nodes: dict[str, Any] = {"master": {"transactions": successes, "pages_read_per_write_net": pages}}
    for replica in ("replica1", "replica2"):
        nodes[replica] = {"transactions": applied, "pages_read_per_write_net": pages}
    data: dict[str, Any] = {
        "successes": successes, "binlog": {"successful_writes": successes}, "latency_ms": {"p99": p99},
        "cpu_seconds": {"master": master_cpu, "replica1": replica_cpu, "replica2": replica_cpu},
        "cpu_seconds_net": {"master": master_cpu, "replica1": replica_cpu, "replica2": replica_cpu},
        "cpu_seconds_net_resolution": {"master": resolution, "replica1": resolution, "replica2": resolution},
        "replication": {"nodes": nodes},
        "buffer_pools": {n: {"fits": fits} for n in ("master", "replica1", "replica2")}}
    if writeback is not None:
        data["writeback"] = {"nodes": {n: {"cpu_ms_per_write_net_with_writeback": writeback}
                                       for n in ("master", "replica1", "replica2")}}
    return summary_of(data)


def read_run(served: tuple[int, int] = (5000, 5000), replica_cpu: float = 2.5, app_ms: float = 0.4,
             load_ms: float = 0.2, idle: float = 0.02, span: float = 20.0) -> RunSummary:
    """One read run: each replica spent replica_cpu s net of idle serving its reads; the master nothing."""
    total = sum(served)
    per_ok = {"app": app_ms, "vegeta": load_ms, "master": 0.0,
              **{r: round(1000 * replica_cpu / total, 4) for r in ("replica1", "replica2")}}
    return summary_of({
        "successes": total, "served_by": dict(zip(("replica1", "replica2"), served, strict=True)),
        "cpu_span_s": span, "cores": 2,
        "cpu_seconds": {"replica1": replica_cpu + idle * span, "replica2": replica_cpu + idle * span},
        "cpu_seconds_net": {"replica1": replica_cpu, "replica2": replica_cpu, "master": 0.0},
        "cpu_seconds_net_resolution": {"replica1": 0.01, "replica2": 0.01, "master": 0.01},
        "cpu_idle_per_s": {"replica1": idle, "replica2": idle, "master": idle},
        "cpu_ms_per_success_net": per_ok,
        "cpu_ms_per_success_net_resolution": {"app": 0.001, "vegeta": 0.001, "master": 0.005,
                                              "replica1": 0.001, "replica2": 0.001}})


def swept(*steps: tuple[int, bool, RunSummary], max_rate: int | None = None) -> ref.Swept:
    return ref.Swept(tuple(ref.Ran(rate, passed, (run,)) for rate, passed, run in steps), max_rate)


def test_the_committed_campaign_gets_a_verdict_per_conclusion_at_same_rates() -> None:
    found = words.verdicts_of(_latest(), [_working_set()])
    assert [(v.key, v.verdict) for v in found] == [
        ("reads-scale", ref.HOLDS), ("read-overhead", ref.HOLDS), ("disk", ref.CONSISTENT), ("index-speed", ref.HOLDS),
        ("index-replica-cpu", ref.DIFFERENT_SIZE)]
    assert [bool(v.inferred) for v in found] == [True, True, True, False, False]
    cpu = found[-1]
    assert isinstance(cpu, ref.IndexReplicaCpu) and cpu.ours.shared == [1200]  # the write-up's one rate with both
    [at_1200] = [p for p in cpu.ours.pairs if p.rate == 1200]
    assert round(at_1200.a, 4) == 0.2546 and round(at_1200.ratio, 2) == 1.63  # per applied write, net
    assert at_1200.words == "one run a side, not tested" and not at_1200.writeback
    # the figures the answers give (every unit of the comparison), 128M too: one ratio per pool on the page
    assert [(s.pool, round(s.ratio, 1), s.n) for s in cpu.ours.study] == [
        ("4G", 1.7, (2, 2)), ("1G", 3.3, (2, 2)), ("128M", 4.5, (2, 2))]
    assert isinstance(found[2], ref.Disk)
    disk = found[2].ours
    assert disk["write"].max == (1200, None) and disk["write"].fits == (True, False)
    # its 128M replicas applied 1,175 of 2,568 writes: 4.26 pages per successful write is 9.3 per applied one
    assert disk["write"].pages == (0.0, 9.3) and disk["write"].words == "counts, compared exactly, no test"
    cores = ref.read_cores(words.sweeps_of(_latest())[("read", "")])
    assert cores is not None and cores.rates == [500, 1000, 1500] and cores.replicas == 2
    assert cores.cores["master"].median is None  # below its resolution: none measurable
    app = cores.cores["app"].median
    assert app is not None and round(app, 2) == 1.23 and round(cores.total, 1) == 3.6


def test_the_committed_section_is_a_table_of_five_rows() -> None:
    lines = words.section(_latest(), [_working_set()])
    text = "\n".join(lines)
    assert lines[0] == f"## {words.HEADING}" and words.ANCHOR == "#" + "-".join(
        words.HEADING.lower().replace("'", "").split())
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| its conclusion")]
    assert len(rows) == 5 and len(text.encode()) < 4000  # report.md stays under its cap
    assert "at 1200/s 0.417–0.792 against 0.0583 ms per write (7.1–13.6×)" in text and "16×" not in text
    assert "at 1200/s 0.255 against 0.156 ms per applied write (1.6×)" in text
    assert "each of 2 replicas served 49.8–50.2 % of the reads at 500–1500/s, at 0.558–0.606 ms per read it served" \
        in text
    assert "**holds here with a different size** |" in text and "**holds**; inferred: " in text
    assert "without write-back: these runs did not record it" in text
    # single runs a step: described, never a tested finding; the 128M step the pages come from failed: said
    assert "each step one run (n = 1): the verdicts describe ratios, none is a tested finding" in text
    assert "(master 8.93 against 0; from a failing step, per write applied)" in text
    assert "**3,000 reads/s** (its step: gunicorn 2.6 cores, each replica 2.5)" in text
    assert "the app needs 1.23 [1.19–1.56] cores, each of 2 replicas 0.85 [0.837–0.909]" in text
    assert "3.6 cores in all, against this box's 2; inferred" in text
    assert "replica CPU per applied write 0.206 against 0.156 ms (1.3×; one run a side, not tested)" in text
    answer = answers.reference_answer(answers.Facts(_latest(), [_working_set()], {}))
    assert answer.endswith("indexes affect replica CPU under ROW: holds here with a different size (1.6× at "
                           "1200/s against its 7.1–13.6×) — each from single runs a step, described, not tested.") \
        and f"]({words.ANCHOR})" in answer
    assert "write throughput depends on disk: consistent here, the disk not varied (inferred from the pool short " \
        "of the working set)" in answer


def test_the_write_ups_ratio_is_taken_only_at_a_rate_both_its_tables_ran() -> None:
    theirs = ref.their_ratios(lambda s: s.replica_ms())
    assert list(theirs) == [1200]
    low, high = theirs[1200].ratio
    assert (round(low, 1), round(high, 1)) == (7.1, 13.6)  # 50 and 95 % over 7 %, not 16× over different rates


def test_ours_come_from_passing_steps_and_only_at_rates_both_sides_ran() -> None:
    indexed = swept((800, True, write_run(0.6, 1000)), (1200, False, write_run(9.0, 1000)))
    bare = swept((800, True, write_run(0.3, 1000)), (1200, True, write_run(0.3, 1000)))
    found = ref.index_replica_cpu({("write", ""): indexed, ("write-noindex", ""): bare})
    assert [p.rate for p in found.ours.pairs] == [800]  # 1200 failed on our side: not read
    assert found.ours.shared == [] and found.verdict == ref.NOT_MEASURED  # the write-up has no 800 pair


def test_a_replicas_cpu_is_per_write_it_applied_not_per_success() -> None:
    # the replicas applied half the writes the master answered: 1.0 s over 500 applied is 2 ms, not 1 ms
    a, b, writeback = ref.per_applied("replica")([write_run(1.0, 500)], [write_run(0.25, 1000)])
    assert a == [2.0] and b == [0.25] and not writeback
    rows = ref.same_rate(swept((1200, True, write_run(1.0, 500))), swept((1200, True, write_run(0.25, 1000))),
                         ref.per_applied("replica"))
    assert rows[0].ratio == 8.0 and rows[0].words == judgement([2.0], [0.25]).text


def test_write_back_is_read_only_where_every_run_of_both_sides_recorded_it() -> None:
    both = ref.per_applied("replica")([write_run(1.0, 1000, writeback=1.4)], [write_run(0.5, 1000, writeback=0.6)])
    assert both == ([1.4], [0.6], True)
    one = ref.per_applied("replica")([write_run(1.0, 1000, writeback=1.4)], [write_run(0.5, 1000)])
    assert one == ([1.0], [0.5], False)  # never a figure with write-back against one without


def test_a_net_figure_below_its_resolution_gives_no_ratio() -> None:
    rows = ref.same_rate(swept((1200, True, write_run(1.0, 1000))),
                         swept((1200, True, write_run(0.004, 1000, resolution=0.01))), ref.per_applied("replica"))
    assert rows == []


def test_the_size_is_judged_against_the_write_ups_range() -> None:
    assert ref.sized([1.6], [(7.1, 13.6)]) == ref.DIFFERENT_SIZE  # beyond 2× of its lowest
    assert ref.sized([8.4], [(12.7, 12.7)]) == ref.HOLDS
    assert ref.sized([3.6], [(7.1, 13.6)]) == ref.HOLDS  # within 2× of its lowest
    assert ref.sized([30.0], [(7.1, 13.6)]) == ref.DIFFERENT_SIZE  # beyond 2× of its highest
    assert ref.sized([1.05], [(7.1, 13.6)]) == ref.NOT_SEEN  # under FINDING_MIN_FACTOR: no effect
    assert ref.sized([], [(7.1, 13.6)]) == ref.NOT_MEASURED


def test_reads_scale_only_when_every_replica_serves_its_share_at_a_flat_cost() -> None:
    even = swept((1000, True, read_run()), (1500, True, read_run((7500, 7500), 3.6)))
    found = ref.reads_scale(even)
    assert found.verdict == ref.HOLDS and found.inferred and found.ours and found.ours.share == (0.5, 0.5)
    assert found.ours.master_ms is None  # 0 net of idle: none measurable, never a cost
    assert found.ours.same_rate == [ref.ReadRate(rate=1000, ours=0.25, theirs=0.75)]
    uneven = swept((1000, True, read_run((7000, 3000))))
    assert ref.reads_scale(uneven).verdict == ref.NOT_SEEN
    growing = swept((1000, True, read_run()), (1500, True, read_run((7500, 7500), 6.0)))
    assert ref.reads_scale(growing).verdict == ref.NOT_SEEN  # 0.5 → 0.8 ms per read served
    assert ref.reads_scale(swept((1000, False, read_run()))).verdict == ref.NOT_MEASURED


def test_the_overhead_under_reads_is_a_replicas_idle_share_at_the_write_ups_rates() -> None:
    small = ref.read_overhead(swept((500, True, read_run(idle=0.1)), (1000, True, read_run(idle=0.01))))
    assert small.verdict == ref.HOLDS  # 500/s (idle 44 % of its CPU) is not a rate the write-up ran
    assert small.ours and small.ours.shares[1000] == pytest.approx(0.2 / 2.7)  # 0.01 cores × 20 s of 2.7 CPU-s
    large = ref.read_overhead(swept((1000, True, read_run(idle=0.02))))
    assert large.verdict == ref.NOT_SEEN  # 0.4 of 2.9 CPU-s: 14 %
    assert ref.read_overhead(swept((500, True, read_run()))).verdict == ref.NOT_MEASURED


def test_the_disk_is_inferred_from_pages_read_where_the_pool_is_short_of_the_working_set() -> None:
    memory = swept((200, True, write_run(0.4, 1000)), (1200, True, write_run(0.3, 1000)), max_rate=1200)
    short = swept((200, False, write_run(0.4, 500, pages=4.2, fits=False)))
    found = ref.disk({("write", ""): memory, ("write", "128M"): short})
    # the disk was not varied: the pages read say the conclusion's direction, never its test
    assert found.verdict == ref.CONSISTENT and "pool short of the working set" in found.inferred
    # 4.2 pages per successful write, half of them applied: 8.4 per applied write; no CPU from a failing step
    assert found.ours["write"].pages == (0.0, 8.4) and found.ours["write"].cpu is None
    same_max = swept((200, True, write_run(0.4, 1000, pages=4.2, fits=False)), max_rate=1200)
    assert ref.disk({("write", ""): memory, ("write", "128M"): same_max}).verdict == ref.NOT_SEEN
    in_memory = swept((200, False, write_run(0.4, 500)))  # fails, but reads nothing and its pool holds the set
    assert ref.disk({("write", ""): memory, ("write", "128M"): in_memory}).verdict == ref.NOT_SEEN
    assert ref.disk({("write", ""): memory}).verdict == ref.NOT_MEASURED


def test_the_3000_reads_are_priced_per_role_from_the_passing_read_steps() -> None:
    cores = ref.read_cores(swept((1000, True, read_run()), (2000, False, read_run(app_ms=9.0))))
    assert cores is not None and cores.rate == 3000 and cores.rates == [1000]
    got = {role: c.median for role, c in cores.cores.items()}
    # 0.5 ms per read served, each replica serving half of 3,000/s: 0.75 cores each
    assert got == {"app": pytest.approx(1.2), "replica": pytest.approx(0.75), "load": pytest.approx(0.6),
                   "master": None}
    assert cores.total == pytest.approx(1.2 + 0.6 + 2 * 0.75) and cores.theirs == ref.TheirCores(app=2.6, replica=2.5)
    assert ref.read_cores(swept((1000, False, read_run()))) is None


def test_without_sweeps_the_answer_says_so_and_the_section_is_left_out() -> None:
    assert words.section({}, []) == []
    assert "not measured in the data this report shows" in words.answer({}, [])
    found = ref.verdicts({})
    assert [v.verdict for v in found] == [ref.NOT_MEASURED] * 5
    assert [v.key for v in found] == [key for key, _ in ref.CONCLUSIONS]
