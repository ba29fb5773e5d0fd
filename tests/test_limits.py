"""What limited a run (analysis/limits): the most utilised CPU resource against its capacity, named, and what else
held the run back; the block's line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replbench.analysis import limits
from replbench.core.results import RunSummary, summary_of
from replbench.report.block import render_block

pytestmark = pytest.mark.unit

GOLDEN = Path(__file__).parent / "fixtures" / "golden-run"


def _summary(**means: float) -> dict[str, Any]:
    return {"cores": 2, "requests": 1000, "app_admission": {"workers": 2, "shed": 0},
            "cpu_mean_percent": {"host_busy": 100.0, "app": 50.0, "master": 40.0, "replica1": 30.0,
                                 "replica2": 30.0, "vegeta": 10.0, **means}}


def test_the_host_at_194_of_200_is_the_limit_not_replication() -> None:
    got = limits.limiting(summary_of(_summary(host_busy=194.0, replica1=62.0)))
    assert got is not None and got.resource == "host CPU" and got.saturated is True and got.share == 0.97
    assert got.utilisation["replica1's mariadbd (serial apply: one core)"].share == 0.62


def test_a_replica_applying_serially_is_limited_by_one_core_and_parallel_threads_by_theirs() -> None:
    summary = summary_of(_summary(host_busy=150.0, replica1=97.0))
    got = limits.limiting(summary)
    assert got is not None and got.resource == "replica1's mariadbd (serial apply: one core)" and got.saturated
    # four applier threads on two cores: the same 97 % is half of what they can use
    parallel = limits.limiting(summary, parallel_threads=4)
    assert parallel is not None and parallel.resource == "host CPU" and not parallel.saturated
    assert parallel.utilisation["replica1's mariadbd (4 applier threads on 2 core(s))"].share == 0.485


def test_nothing_saturated_says_what_came_closest_and_what_else_held_the_run_back() -> None:
    data = _summary(host_busy=98.0)
    data["app_admission"]["shed"] = 210
    data["replication"] = {"nodes": {"replica1": {"pool_disk_reads_per_write": 3.5}}}
    data["lag"] = {"replica1": {"growth_s_per_s": 0.116}, "replica2": {"growth_s_per_s": 0.0}}
    got = limits.limiting(summary_of(data))
    assert got is not None and not got.saturated and got.resource == "host CPU"
    assert got.also == ["the app's admission shed 210 of 1,000 requests",
                           "disk reads (replica1 3.5 pages read from disk per write)", "replica1 falling behind"]
    text = limits.text(got)
    assert text.startswith("no CPU resource saturated (the closest: host CPU at 49% of its capacity; saturated: 95%)"
                           "; also: the app's admission shed 210"), text
    assert "Steady CPU against capacity: host CPU 98 % of 200 %; replica1's mariadbd (serial apply: one core) 30 % " \
        "of 100 %" in text  # the most used share first
    assert limits.limiting(summary_of({"cores": 2})) is None  # no CPU figures: nothing to name


def test_the_block_names_the_limit() -> None:
    summary = json.loads((GOLDEN / "summary.json").read_text())
    assert "Limited by: " not in render_block(summary_of(summary), GOLDEN.resolve())  # recorded before it was
    summary["limit"] = limits.limiting(summary_of(_summary(host_busy=194.0)))
    line = next(ln for ln in render_block(summary_of(summary), GOLDEN.resolve()).splitlines()
                if ln.startswith("Limited by: "))
    assert line.startswith("Limited by: host CPU saturated (97% of its capacity). Steady CPU against capacity: "), line


def _step(host: float, replica: float, growth: float = 0.0) -> RunSummary:
    return summary_of({"cores": 2, "catch_up_s": {"replica1": 0.1},
                       "lag": {"replica1": {"p99_ms": 5.0, "growth_s_per_s": growth}},
                       "cpu_mean_percent": {"host_busy": host, "master": 50.0, "replica1": replica, "app": 40.0}})


def test_a_sweep_says_the_replicas_kept_up_only_up_to_a_step_every_lower_one_passed_and_names_the_box_first() -> None:
    from replbench.analysis.verdicts import HostFirst, kept_up_to
    from replbench.core.scenario import PassCriteria
    from replbench.report.sweeps import kept_text

    steps = [(400, [_step(80.0, 20.0)]), (800, [_step(192.0, 31.0)]), (1200, [_step(199.0, 35.0, growth=0.116)]),
             (1600, [_step(199.0, 40.0)])]
    kept = kept_up_to(steps, PassCriteria())
    # 1600 kept up, but 1200 did not: the replicas kept up to 800, the step below the first one they fell behind at
    assert (kept.rate, kept.first_behind, kept.every_step) == (800, 1200, False)
    # and at 800 the host was saturated (96 % of its 200 %), the replica at 31 % of its one core: the box's limit
    assert kept.host_first == HostFirst(rate=800, resource="host CPU", share=0.96, replica_share=0.31,
                                        replica_saturated=False)
    # so no rate the replicas "kept up to" is said: the box's limit is named, with the replica's share of its core
    assert kept_text(kept, why=False) == "this box saturated first, at 800 rps (host CPU 96%, replica 31% of a " \
        "core), before the replicas; they fell behind at 1200 rps"
    assert kept_text(kept).startswith("this box saturated first, at 800 rps (host CPU 96%, replica 31% of a core), "
                                      "before the replicas: their own limit is not measured here; they fell behind "
                                      "at 1200 rps (")
    # every step kept up, the host saturated from 800: the lag met the criteria, no rate said (the read sweep's case)
    every = kept_up_to([(400, [_step(80.0, 20.0)]), (800, [_step(192.0, 31.0)]), (1200, [_step(199.0, 35.0)])],
                       PassCriteria())
    assert every.every_step and every.host_first is not None and every.host_first.rate == 800
    assert kept_text(every).endswith("their own limit is not measured here; their lag met the criteria at every "
                                     "step it ran") and "kept up" not in kept_text(every)
    # a replica at its one core with the host below its limit: the replicas' own limit, nothing else to name
    own = kept_up_to([(400, [_step(80.0, 20.0)]), (800, [_step(150.0, 98.0, growth=0.05)])], PassCriteria())
    assert (own.rate, own.host_first) == (400, None)
    assert kept_text(own, why=False) == "the replicas kept up to 400 rps, not at 800"
    # the host and a replica saturated at once: how far they kept up, and the box beside it
    both = kept_up_to([(400, [_step(80.0, 20.0)]), (800, [_step(195.0, 99.0, growth=0.05)])], PassCriteria())
    assert both.host_first is not None and both.host_first.replica_saturated
    assert kept_text(both, why=False).startswith("the replicas kept up to 400 rps, not at 800; this box saturated "
                                                 "first, at 800 rps (host CPU 98%, replica 99% of a core)")


def test_a_sweeps_step_table_names_each_steps_limit() -> None:
    from replbench.report.sweeps import TABLE_HEADER, _limited

    def recorded(step: RunSummary) -> RunSummary:
        return step.model_copy(update={"limit": limits.limiting(step)})

    assert _limited([recorded(_step(194.0, 31.0))]) == "host CPU 97%"
    behind = _limited([recorded(_step(80.0, 20.0, growth=0.05))])
    assert behind.startswith("none saturated (closest: host CPU 40%)") and behind.endswith("; replica1 falling behind")
    # the middle repeat by share, and a run recorded before limits were: no figure made up
    assert _limited([recorded(_step(s, 20.0)) for s in (80.0, 194.0, 120.0)]).endswith("host CPU 60%)")
    assert _limited([_step(194.0, 31.0)]) == "–"
    head, rule = TABLE_HEADER.splitlines()
    assert head.endswith("| verdict | limited by |") and head.count("|") - 1 == rule.count("---|")


def test_apply_capacity_says_when_its_applier_threads_outnumber_the_hosts_cores() -> None:
    from replbench.core.results import apply_of
    from replbench.experiments.applycap import render

    four = render(apply_of({"scenario": "write", "status": "ok", "cores": 2, "knobs": {"parallel_threads": 4},
                            "knobs_changed": {"parallel_threads": 4}}))
    assert "Core ceiling: 4 applier threads on this host's 2 cores" in four
    for quiet in ({"cores": 2, "knobs": {"parallel_threads": 0}}, {"cores": 8, "knobs": {"parallel_threads": 4}},
                  {"knobs": {"parallel_threads": 4}}):  # serial; cores to spare; own servers (cores not known)
        assert "Core ceiling" not in render(apply_of({"scenario": "write", "status": "ok", **quiet}))
    # pinned (--cpus): the replica's own cores are its ceiling, whatever the host has
    pinned = {"scenario": "write", "status": "ok", "cores": 8, "replicas": {"replica1": None},
              "cpus": {"requested": "replica1=1", "pinned": {"replica1": [1]}, "read_back": {"replica1": [1]}}}
    assert "Core ceiling: 4 applier threads on a replica's 1 pinned core(s)" in render(apply_of(
        {**pinned, "knobs": {"parallel_threads": 4}}))
    assert "Core ceiling" not in render(apply_of({**pinned, "knobs": {"parallel_threads": 0}}))
    assert "Core ceiling" not in render(apply_of({**pinned, "cores": 2, "cpus": {
        "requested": "replica1=0-1", "pinned": {"replica1": [0, 1]}}, "knobs": {"parallel_threads": 1}}))


def test_a_live_windows_mean_and_busiest_minute_come_from_its_samples() -> None:
    from replbench.analysis import livewindow

    # 10/s for two minutes, then 40/s for one, sampled every second
    samples = [(float(t), 10 * t) for t in range(121)]
    samples += [(float(t), 1200 + 40 * (t - 120)) for t in range(121, 181)]
    got = livewindow.rates(samples, 180.0)
    assert got.transactions == 3600 and got.mean_trx_per_s == 20.0 and got.window_s == 180.0
    assert got.busiest_minute_trx_per_s == 40.0 and got.busiest_minute_from_s == 120.0
    assert got.short is True  # under five minutes
    # a window shorter than a minute has no busiest minute; one sample, no rate
    assert livewindow.rates(samples[:30], 30.0).busiest_minute_trx_per_s is None
    assert livewindow.rates(samples[:1], 1.0).mean_trx_per_s is None
    assert livewindow.rates([(0.0, 0), (300.0, 3000)], 300.0).short is False


def test_a_replay_starts_at_the_replicas_boundary_in_the_files_and_refuses_any_other_position() -> None:
    from replbench.experiments.replay import ReplayRefused, check
    from replbench.measure.binlogfile import GtidGroup, GtidMap

    def group(domain: int, seq: int, at: int, server: int = 1) -> GtidGroup:
        return GtidGroup(domain, server, seq, at, 1000 + at)

    first = GtidMap(Path("binlog.000001"), 500, {0: 10, 99: 5},
                    (group(0, 11, 100), group(99, 6, 200), group(0, 12, 300)))
    second = GtidMap(Path("binlog.000002"), 500, {0: 12, 99: 6}, (group(0, 13, 100), group(0, 14, 200)))
    start = check([first, second], {0: 10, 99: 5}, "replica1", 2)  # at the files' first GTID
    assert (start.file, start.at, start.transactions) == (0, 100, 4)
    start = check([first, second], {0: 12, 99: 6, 7: 3}, "replica1", 2)  # a boundary of the second file
    assert (start.file, start.at, start.transactions) == (1, 100, 2)
    for position, words in (({0: 9, 99: 5}, "no transaction boundary"), ({0: 12, 99: 5}, "no transaction boundary"),
                            ({0: 14, 99: 6}, "every transaction")):
        with pytest.raises(ReplayRefused, match=words):
            check([first, second], position, "replica1", 2)
    with pytest.raises(ReplayRefused, match="does not follow"):
        check([second, first], {0: 12, 99: 6}, "replica1", 2)
    with pytest.raises(ReplayRefused, match="server_id 1, replica1's own"):
        check([first, second], {0: 10, 99: 5}, "replica1", 1)


def test_a_sweep_names_where_its_rounds_at_the_boundary_saw_the_replicas_fall_behind_first() -> None:
    """The ladder's write-noindex steps kept up to 2800 (first behind at 3200), but two of the three rounds at 2400
    saw a replica's lag grow: the sweep's line says so beside the ladder's (report/sweeps.boundary_behind)."""
    from replbench.core.config import ROOT
    from replbench.core.results import read_sweep
    from replbench.report.sweeps import boundary_behind

    folder = ROOT / "results/report-assets/campaign-report-20261203-182727/sweep-20261203-193921-write-noindex"
    boundary = read_sweep(folder).boundary
    assert boundary_behind(boundary, 3200) == "; in the rounds at the boundary they fell behind at 2400 rps in 2 of 3"
    assert boundary_behind(boundary, 2400) == ""  # not below the ladder's own first step behind
    assert boundary_behind(None, 3200) == ""


def test_a_sweeps_maximum_has_a_brief_form_without_its_why() -> None:
    """The lines that point at a sweep's section say its maximum and whether the rounds confirmed it, no more."""
    from replbench.analysis.verdicts import describe_max
    from replbench.core.config import ROOT
    from replbench.core.results import read_sweep

    folder = ROOT / "results/report-assets/campaign-report-20261203-182727"
    noindex = read_sweep(folder / "sweep-20261203-193921-write-noindex")
    assert describe_max(noindex).startswith("2400 rps, not confirmed (2400 rps passed 1 of 3")
    assert describe_max(noindex, brief=True) == "2400 rps, not confirmed"
    assert describe_max(read_sweep(folder / "sweep-20261203-195211-write-noindex"), brief=True) == "below 1200 rps"
