"""report.md answers a DBA's questions, and every statement on it holds (issue 49): the answers block, statistics fit
for the quantity (counts compared exactly, a comparison only between cells that differ in one setting, figures below
their resolution never printed as a cost), a sweep's step that passes only when the replicas kept up, semi-sync and
compression explained, the reference comparison with its verdict. Unit tier: synthetic records and the committed
campaign's assets, no server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from replbench.analysis import answers as derived
from replbench.analysis import verdicts
from replbench.analysis.findings import BOUND, COUNT, TESTED, judged, sentence, study_findings
from replbench.analysis.studymetrics import compare_cells, figure_text, row_of, unit_metrics
from replbench.core.config import ROOT
from replbench.core.results import (
    StudyRecord,
    StudyUnit,
    Versions,
    read_meta,
    read_study,
    read_sweep,
    study_of,
    summary_of,
    sweep_of,
)
from replbench.core.scenario import PassCriteria
from replbench.report import answers, costsheet, page, sources, studies, sweeps

CAMPAIGN = ROOT / "results" / "report-assets" / "campaign-report-20261126-171314"
CRITERIA = PassCriteria()


def _study(name: str) -> StudyRecord:
    folder = next(CAMPAIGN.glob(f"study-*-{name}"))
    return read_study(folder)


def _sweep(scenario: str) -> sweeps.ShownSweep:
    """A committed sweep as report/sweeps.sweep_section hands it to the first page."""
    folder = next(p for p in CAMPAIGN.glob(f"sweep-*-{scenario}") if p.name.endswith(f"-{scenario}"))
    sweep = read_sweep(folder)
    return sweeps.shown_sweep(folder, sweep, sources.load_steps(folder, sweep))


def evaluate(s: dict[str, Any], criteria: Any, rate: int) -> tuple[bool, list[str], list[str]]:
    v = verdicts.step_verdict([summary_of(s)], criteria, rate)
    return v.passed, v.reasons, [n.text for n in v.notes]


def step_summary(growth: float = 0.0, lag_p99: float = 20.0, catch: float = 0.5) -> dict[str, Any]:
    return {"status": "ok", "success": 1.0, "goodput": 2000, "latency_ms": {"p50": 1.0, "p99": 10.0},
            "catch_up_s": {"replica1": catch, "replica2": 0.1},
            "lag": {"replica1": {"p99_ms": lag_p99, "growth_s_per_s": growth},
                    "replica2": {"p99_ms": 1.0, "growth_s_per_s": 0.0}}}


def test_a_step_whose_replica_fell_behind_all_along_fails_though_it_caught_up_in_time() -> None:
    ok, reasons, _ = evaluate(step_summary(growth=0.142, lag_p99=900.0, catch=1.8), CRITERIA, 1600)
    assert not ok and reasons == ["replica1's lag grew 0.142 s per s (limit 0.01: falling behind)"]
    ok, reasons, _ = evaluate(step_summary(lag_p99=3180.0), CRITERIA, 1600)
    assert not ok and reasons == ["replica1's lag p99 3180 ms > 1000 ms"]
    assert evaluate(step_summary(growth=0.002, lag_p99=357.5), CRITERIA, 1200)[0]  # kept up
    # a sweep recorded before the lag criteria: judged by them from its steps' own lag, apart from its max
    kept = verdicts.kept_up_to([(800, [summary_of(step_summary())]),
                                (1200, [summary_of(step_summary(growth=0.002, lag_p99=357.5))]),
                                (1600, [summary_of(step_summary(growth=0.142))])],
                               verdicts.criteria_of(sweep_of({"criteria": {"max_catch_up": 30.0}})))
    assert (kept.rate, kept.first_behind, kept.every_step) == (1200, 1600, False)
    assert sweeps.kept_text(kept).startswith("the replicas kept up to 1200 rps (at 1600 rps: replica1's lag grew "
                                             "0.142 s per s")


def test_the_committed_write_sweep_passed_to_1200_where_the_host_saturated_first() -> None:
    latest = {"write": _sweep("write")}
    assert latest["write"].kept_up is not None and latest["write"].kept_up.rate == 1200
    text = answers.falling_behind_answer(answers.Facts(latest, [], {}))
    # the box's limit came first: named, and no rate the replicas "kept up to" (report/sweeps.kept_text alike)
    assert "not on this box, whose own limit came first. What saturates first is the host's CPU: 192 % of its " \
        "200 % at 1200/s" in text and "they kept up to" not in text
    assert "at 1600/s, on the saturated box, replica" in text
    assert "master 51 % of 200 %" in text and "the master saturates first" not in text


def test_what_saturates_first_is_named_from_each_process_against_its_capacity() -> None:
    busy_master = summary_of({"cpu_mean_percent": {"host_busy": 120.0, "master": 190.0, "replica1": 30.0,
                                                   "replica2": 35.0, "app": 40.0, "vegeta": 10.0}})
    full = derived.saturation(busy_master, cores=2)
    assert [r.name for r in full][:2] == ["master", "host"]
    assert next(r for r in full if r.name == "replica").percent == 35.0  # the busier replica
    sql_thread = summary_of({"cpu_mean_percent": {"host_busy": 120.0, "master": 40.0, "replica1": 99.0}})
    assert derived.saturation(sql_thread, cores=2)[0].name == "replica"  # its SQL thread: one core


def _cells_study(values: dict[str, list[float]], changed: dict[str, dict[str, str]],
                 metric: str = "commit_p50_ms") -> StudyRecord:
    units = [StudyUnit.model_validate({"cell": c, "scenario": "write", "metrics": {metric: v}})
             for c, vs in values.items() for v in vs]
    return study_of({"cells": [{"name": c, "changed": changed[c]} for c in values],
                     "comparison": compare_cells(units, list(values))})


def test_findings_never_compare_cells_that_differ_in_two_settings() -> None:
    changed = {"off": {}, "20ms off": {"link": "20ms"}, "after_sync": {"semi_sync": "after_sync"},
               "20ms after_sync": {"link": "20ms", "semi_sync": "after_sync"}}
    data = _cells_study({"off": [1.5, 1.52, 1.55], "20ms off": [1.55, 1.6, 1.58], "after_sync": [1.8, 1.85, 1.9],
                         "20ms after_sync": [31.0, 31.2, 30.8]}, changed)
    found = study_findings(data, ["commit_p50_ms"])
    pairs = {(f.cell, f.baseline) for f in found}
    assert ("20ms after_sync", "off") not in pairs  # link and semi-sync at once: confounded
    assert {("20ms after_sync", "20ms off"), ("20ms after_sync", "after_sync")} <= pairs
    assert all(f.kind == TESTED for f in found)


def test_a_deterministic_count_is_compared_exactly_and_never_tested() -> None:
    data = _cells_study({"ROW FULL": [569.0, 569.0, 570.0], "STATEMENT": [281.0, 281.0, 281.0]},
                        {"ROW FULL": {}, "STATEMENT": {"binlog_format": "STATEMENT"}}, "bytes_per_write")
    [found] = study_findings(data, ["bytes_per_write"])
    assert found.kind == COUNT and found.p is None and found.p_holm is None
    said = sentence("binlog-format", found)
    assert "0.494×" in said and "281 against 569 [569–570]" in said and "no test" in said and "p =" not in said


def test_a_ratio_over_a_baseline_below_its_resolution_is_a_lower_bound() -> None:
    def run(cpu: float) -> dict:
        return {"binlog": {"successful_writes": 100}, "cpu_seconds": {"master": 1.0, "replica1": cpu + 0.5},
                "cpu_seconds_net": {"master": 0.5, "replica1": cpu},
                "cpu_seconds_net_resolution": {"master": 0.01, "replica1": 0.05},
                "replication": {"nodes": {"master": {"transactions": 100}, "replica1": {"transactions": 100}}}}

    units = [StudyUnit.model_validate({"cell": c, "scenario": "write",
                                       "metrics": unit_metrics("run", summary_of(run(cpu)))})
             for c, cpus in {"keyed": [0.0, 0.005, 0.01], "nopk": [0.9, 1.0, 1.1]}.items() for cpu in cpus]
    [found] = study_findings(study_of({"comparison": compare_cells(units, ["keyed", "nopk"])}),
                             ["replica_ms_per_write"])
    assert found.kind == BOUND and found.factor == 20.0  # 10 ms over the 0.5 ms resolution
    assert "is ≥ 20.0× `keyed`'s" in sentence("nopk", found) and "below resolution (< 0.5)" in sentence("nopk", found)


def test_a_figure_below_its_resolution_is_never_printed_as_a_cost() -> None:
    assert figure_text(row_of([0.2, 0.3, 0.4], resolution=0.5)) == \
        "below resolution (< 0.5)"
    # recorded before resolutions were: a repeat at 0 net of idle cannot be told from the idle
    row = row_of([0.0, 0.68])  # median 0.34
    assert figure_text(row, "replica_ms_per_write") == "not resolved (≤ 0.68)"
    assert figure_text(row, "bytes_per_write") == "0.34 [0–0.68]"  # not a net figure: printed as it is
    nopk = _study("nopk")
    sheet = "\n".join(costsheet.cost_sheet([nopk]))
    # its master figure, 0.805 [0.14–1.47], has no repeat at 0 and no recorded resolution: nothing to claim
    assert "| ROW FULL | 2,632 [2,630–2,634] | 2,632 [2,630–2,634] | 0.805 [0.14–1.47] | not resolved (≤ 0.68) |" \
        in sheet
    found = [f for f in judged(nopk, ["replica_ms_per_write"]) if f.cell == "no PK ROW"
             and f.metric == "replica_ms_per_write"]
    assert found[0].kind == BOUND and round(found[0].factor) == 234  # 159 ms over ≤ 0.68, not 468×
    # a measured quantity from 2 repeats a side: a lower bound, described, not a finding (docs/metrics.md)
    assert (found[0].holds, found[0].words) == (False, "a lower bound, n = 2, not tested")
    assert not [f for f in study_findings(nopk, ["replica_ms_per_write"]) if f.cell == "no PK ROW"]


def test_the_answers_open_the_report_and_say_what_is_missing() -> None:
    lines = answers.the_answers({}, [], {})
    assert lines[0] == "## The answers" and len(lines) <= 12
    bullets = [line for line in lines if line.startswith("- ")]
    assert len(bullets) == len(answers.ANSWERS)
    assert all("not measured in the data this report shows" in b for b in bullets)


def test_the_answers_from_the_committed_campaign() -> None:
    names = ("binlog-format", "working-set", "semi-sync-distance", "big-transaction", "parallel-apply")
    latest = {s: _sweep(s) for s in ("write", "write-noindex")}
    lines = answers.the_answers(latest, [_study(n) for n in names], {"semi-sync-distance": "#semi"})
    text = "\n".join(lines)
    assert len(lines) <= 12 and "|" not in text  # before any table
    assert "a single-row update 569 [569–570] B against 385 (0.676×) / 517 (0.908×) / 281 (0.494×)" in text
    assert "a 100-row update 23,323 [23,318–23,327] B against 4,678 (0.201×)" in text
    assert "At 1200 single-row updates/s" in text and "FULL 59, MINIMAL 40, STATEMENT 29 GB of binlog a day" in text
    # each alternative in the one rule's words, never "no difference beyond noise" (docs/metrics.md)
    assert "ROW MINIMAL 0.286 [0.275–0.289] ms (1.02×; not shown (p = 1))" in text and "beyond noise" not in text
    assert "1.8× with a 4G pool" in text and "3.5× with a 128M pool" in text
    # net of the no-link cost, over the round trip measured by hand through a 20 ms link (the study recorded none),
    # with the by-hand check's commits/s at 1, 4 and 8 clients (docs/decisions/semi-sync-by-hand.md)
    assert "0.8–1.3 round trips of the link per commit, net of its no-link cost" in text and "(#semi)" in text
    assert "over the 20 ms link's 21.8 ms round trip measured by hand" in text
    assert "1/4/8 clients commit 43–44/106–109/188–195/s after_sync, 44/167–168/331–334 after_commit" in text
    assert "ROW FULL 0.399 [0.353–0.445] s (20.9 MB of binlog)" in text
    # a verdict per conclusion of the write-up: same-rate ratios (its one shared rate, 1200/s: 7.1–13.6×), never its
    # 16× of steps at different rates; no read or 128M sweep in this campaign
    assert "indexes affect replica CPU under ROW: holds here with a different size (1.5× at 1200/s against its " \
        "7.1–13.6×)" in text and "16×" not in text
    assert "reads scale by balancing: not measured here" in text and "indexes affect write speed: holds;" in text


def test_semi_syncs_throughput_comes_from_the_campaigns_closed_loop_when_it_ran() -> None:
    """Beside the cost in round trips, the commits/s 1, 4 and 8 clients made in a closed loop (study
    semi-sync-clients, committed at 8M), and the by-hand check's beside them, each set its own."""
    clients = read_study(ROOT / "results/readme-assets/semi-sync-clients-20261202")
    lines = answers.the_answers({}, [_study("semi-sync-distance"), clients],
                                {"semi-sync-distance": "#semi", "semi-sync-clients": "#clients"})
    [said] = [line for line in lines if "Semi-sync's commit cost" in line]
    assert "in a closed loop ([semi-sync-clients](#clients)) over a 22.0 ms measured round trip, 1/4/8 clients " \
        "commit 38–39/104–110/189–192/s after_sync, 38–39/136–143/242–263 after_commit, 255–301/359–368/397–409 off " \
        "(no wait on the link); [by hand](" in said
    # the check by hand beside them, so that how far they held shows (each client count its own, semi-sync off too)
    assert said.endswith("1/4/8 clients commit 43–44/106–109/188–195/s after_sync, 44/167–168/331–334 after_commit, "
                         "831–1,049/1,196–1,514/1,498–1,627 off.")
    assert "0.8–1.3 round trips of the link per commit" in said  # the cost itself as before


def test_the_header_names_the_server_and_machine_the_runs_recorded() -> None:
    meta = read_meta(next(CAMPAIGN.glob("study-*-binlog-format")))
    assert page.measured_on([meta]) == (
        "**Measured**: MariaDB 10.11.19 (MySQL 8 is not measured here, only its SQL spelling is unit-tested), on 2 "
        "cores (AMD EPYC), 23.5 GiB of memory; the three nodes, the app and vegeta on the same cores.")
    # what the runs recorded, never the machine the report is written on
    other = meta.model_copy(update={"host": meta.host.model_copy(update={"cores": 16, "memory_gib": 64}),
                                    "versions": Versions(mariadb="10.11.6-MariaDB-log")})
    assert "MariaDB 10.11.19, 10.11.6 (MySQL 8" in page.measured_on([meta, other])
    assert "on 2 cores" in page.measured_on([meta, other])  # the first machine recorded
    assert page.measured_on([]).startswith("**Measured**: MariaDB (its version not recorded) (MySQL 8 is not")


def test_semi_sync_is_explained_in_round_trips_and_compression_by_its_threshold(tmp_path: Path) -> None:
    note = "\n".join(studies.semi_sync_note(_study("semi-sync-distance")))
    # (29.5 − 0.30 ms with no link) ÷ the 21.8 ms measured by hand through the 20 ms link = 1.34
    assert "0.82–1.34 round trips" in note and "after_sync +29.5 ms, p = 0.0352" in note
    assert "net of what the same wait point costs with no link, after_sync +0.30 ms, after_commit +0.17 ms" in note
    assert "one client's commit costs after_sync 1.00–1.04; after_commit 1.01–1.09 round trips" in note
    assert "one round trip per commit" in note and "MDEV-35109" in note and "after_sync 8.5 ms" in note
    doc = _study("compression")
    note = "\n".join(studies.compression_note(doc))
    assert "(256 by default)" in note and "ROW FULL from 256 B: 570 → 569 B a write, none reached it" in note
    assert "`write-wide`: ROW FULL from 256 B: 3,168 → 2,168 B a write, compressed" in note
    # a cell that compresses from 10 B is set against the cell with compression off and the same other knobs, its
    # threshold read from its own knobs; the cost sheet says the same under its tables
    cells = [{"name": "off", "knobs": {"binlog_row_image": "FULL", "binlog_compress": "off",
                                       "binlog_compress_min_len": 256}},
             {"name": "on 10", "knobs": {"binlog_row_image": "FULL", "binlog_compress": "on",
                                         "binlog_compress_min_len": 10}},
             {"name": "minimal on 10", "knobs": {"binlog_row_image": "MINIMAL", "binlog_compress": "on",
                                                 "binlog_compress_min_len": 10}}]
    row = {"off": {"median": 570.0, "values": [570.0]}, "on 10": {"median": 450.0, "values": [450.0]},
           "minimal on 10": {"median": 300.0, "values": [300.0]}}
    synthetic = {"name": "compression", "cells": cells, "comparison": {"write": {"bytes_per_write": row}}}
    effects = derived.compression_effects(study_of(synthetic))
    assert [(e.cell, e.baseline, e.min_len, e.compressed) for e in effects] == [
        ("on 10", "off", 10, True)]  # MINIMAL at 10 B has no uncompressed MINIMAL cell to be set against
    sheet = "\n".join(costsheet.cost_sheet([doc]))
    assert "*compressed from N B* (study compression)" in sheet and "3,168 → 2,168 B a write, compressed" in sheet


def test_semi_syncs_round_trips_are_net_of_the_no_link_cost_over_the_best_measured_round_trip() -> None:
    """analysis/answers.round_trips: (cost − the same wait point's cost with no link) ÷ the link's round trip as the
    cell's runs measured it, else as measured by hand through a link of that setting, else its setting; and the
    study metric that gives the first reads the replication links only (a semi-sync acknowledgement never crosses
    the app's)."""
    from replbench.analysis.studymetrics import CommitCost, SemiSyncCost, unit_metrics

    def cost(link: str, mode: str, ms: float, measured: float | None = None) -> SemiSyncCost:
        return SemiSyncCost(group="write", cell=f"{link} {mode}", baseline=f"{link} off", semi_sync=mode, link=link,
                            rtt_measured_ms=measured,
                            costs={"commit_p50_ms": CommitCost(ms, ms + 1.0, 1.0, "different"), "commit_mean_ms": None})

    costs = [cost("none", "after_sync", 0.5), cost("replica1=20ms", "after_sync", 30.5, measured=22.0),
             cost("replica1=5ms", "after_sync", 6.5), cost("replica1=1ms", "after_sync", 1.9)]
    got = {c.nominal_ms: c for c in derived.round_trips(costs, by_hand={5.0: 6.0})}
    assert got[20.0].rtt_from == "measured" and got[20.0].round_trips == pytest.approx(30.0 / 22.0)
    assert got[5.0].rtt_from == "measured by hand" and got[5.0].round_trips == pytest.approx(1.0)
    assert got[1.0].rtt_from == "nominal" and got[1.0].round_trips == pytest.approx(1.4)
    assert all(c.local_ms == 0.5 for c in got.values()) and len(got) == 3  # the no-link cell is the local cost
    links = {"replica1": {"measured_rtt_ms": 21.3}, "replica2": {"measured_rtt_ms": 22.2},
             "app-master": {"measured_rtt_ms": 40.0}}
    assert unit_metrics("run", summary_of({"links": links})).link_rtt_ms == 22.2
    assert unit_metrics("run", summary_of({})).link_rtt_ms is None
