"""One statistical rule set, stated once (docs/metrics.md, "Comparing two figures") and applied wherever two figures
are set side by side (issue 73): a count is compared exactly with its range and never tested; a measured figure is
tested (Welch on logs, Holm) only with FINDING_MIN_REPEATS repeats a side, and with fewer described as "disjoint
ranges, n = 2, not tested" or "not tested (n = 2)", never "not shown"; a lag under its floor prints "< 10", never as
a value. Synthetic records, no server."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from replbench.analysis import compare
from replbench.analysis.findings import COUNT, TESTED, UNTESTED, judged, nothing_held, study_findings, words_of
from replbench.analysis.studymetrics import BY_KEY, compare_cells, figure_text
from replbench.core.config import LAG_FLOOR_MS
from replbench.core.results import RunMeta, StudyRecord, StudyUnit, study_of, summary_of
from replbench.core.stats import judgement
from replbench.report import studies, sweeps
from replbench.report.sources import Repeat, ShownStep

pytestmark = pytest.mark.unit


def _study(values: dict[str, list[float]], metric: str, primary: bool = True) -> StudyRecord:
    """A study of one table (`write`) whose cells differ from the first in one setting each."""
    units = [StudyUnit.model_validate({"cell": c, "scenario": "write", "metrics": {metric: v}})
             for c, vs in values.items() for v in vs]
    cells = [{"name": c, "changed": {} if i == 0 else {"binlog_format": c}} for i, c in enumerate(values)]
    return study_of({"name": "synthetic", "cells": cells, "primary": [metric] if primary else [],
                     "comparison": compare_cells(units, list(values))})


def _table(data: StudyRecord) -> str:
    return "\n".join(studies.comparison_tables(data, judged(data, list(data.primary or [])),
                                               list(data.primary or [])))


def test_a_count_is_compared_exactly_with_its_range_and_never_tested() -> None:
    # write-wide's binlog bytes drift with the data between repeats (2,490 → 3,470 B): a count all the same
    drifting = _study({"ROW FULL": [2490.0, 3010.0, 3470.0], "STATEMENT": [281.0, 281.0, 282.0]}, "bytes_per_write")
    [found] = study_findings(drifting, ["bytes_per_write"])
    assert found.kind == COUNT and found.p is None and found.p_holm is None
    assert found.text == ("281 [281–282]", "3,010 [2,490–3,470]")  # exact values and their ranges
    assert found.words == "counts, compared exactly, no test; the repeats differ: " + BY_KEY["bytes_per_write"].count
    table = _table(drifting)
    assert "| binlog B/write (primary) | 3,010 [2,490–3,470] | 281 [281–282] (0.09×, **holds**, counts, compared " \
           "exactly, no test; the repeats differ: row images follow the data" in table
    assert "p =" not in table and "not shown" not in table
    # overlapping counts: no finding, and still no test
    close = _study({"A": [2490.0, 3010.0, 3470.0], "B": [2400.0, 2900.0, 3300.0]}, "bytes_per_write")
    [c] = judged(close, ["bytes_per_write"])
    assert c.kind == COUNT and c.p is None and not c.holds
    assert c.words.startswith("counts whose ranges overlap, no test; the repeats differ:")
    # compare A B: a count against its noise never, whatever the noise
    assert compare.ruled("binlog bytes/write", 569.0, 281.0, ([569.0, 569.0], [281.0, 281.0]), LAG_FLOOR_MS) == \
        ["569", "281", "-288", "-50.6%", "–", "counts, compared exactly, no test"]


def test_compare_sets_two_runs_binlog_bytes_side_by_side_as_counts(tmp_path: Path) -> None:
    def run(folder: Path, bytes_per_write: float) -> Path:
        folder.mkdir()
        (folder / "summary.json").write_text(json.dumps({
            "scenario": "write", "rate": 400, "status": "ok", "binlog": {"bytes_per_write": bytes_per_write},
            "lag": {"replica1": {"p99_ms": 5.3}, "replica2": {"p99_ms": 40.0}}, "lag_floor_ms": 10.0}))
        return folder

    text = compare.compare(run(tmp_path / "a", 569.0), run(tmp_path / "b", 281.0), results=tmp_path / "none")
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if line.startswith("| ")}
    assert rows["binlog bytes/write"] == "| binlog bytes/write | 569 | 281 | -288 | -50.6% | – | " \
                                         "counts, compared exactly, no test |"
    # a lag under the floor is not a value: no 5.3 ms, no difference taken from it
    assert rows["replica1 lag p99 ms"] == "| replica1 lag p99 ms | < 10 | < 10 | – | – | – | under the lag's floor " \
                                          "(10 ms) on both sides: not a value |"
    assert "5.3" not in text


def test_two_repeats_a_side_are_described_never_tested_nor_not_shown() -> None:
    # semi-sync at 20 ms: a 12.7× effect whose ranges are disjoint, two repeats a side
    data = _study({"off": [1.50, 1.60], "after_sync": [19.4, 20.1]}, "commit_p50_ms")
    [c] = judged(data, ["commit_p50_ms"])
    assert c.kind == UNTESTED and c.p is None and not c.holds
    assert c.words == "disjoint ranges, n = 2, not tested"
    assert study_findings(data, ["commit_p50_ms"]) == []  # no finding from two repeats
    table = _table(data)
    assert "(12.74×, disjoint ranges, n = 2, not tested)" in table and "not shown" not in table
    said = studies.held_text([], data, ["commit_p50_ms"])
    assert "not shown" not in said and "none holds" not in said
    assert "write p50 ms of `after_sync` 12.7× `off`'s on `write` (19.8 [19.4–20.1] against 1.55 [1.5–1.6]: " \
           "disjoint ranges, n = 2, not tested)" in said
    assert nothing_held(data, ["commit_p50_ms"]).startswith("none stated; 1 not tested: 2 repeats on a side")
    # overlapping ranges, two repeats: "not tested (n = 2)"; unequal sides name both
    assert judgement([1.0, 1.3], [1.2, 1.4]).text == "not tested (n = 2)"
    assert judgement([1.0, 1.1], [2.0, 2.1, 2.2]).text == "disjoint ranges, n = 2 and 3, not tested"
    # compare of two sweeps whose steps ran twice: described, not bootstrapped
    assert compare.ruled("@400 app CPU %", 10.5, 20.5, ([10.0, 11.0], [20.0, 21.0]), LAG_FLOOR_MS)[-1] == \
        "disjoint ranges, n = 2, not tested"
    assert compare.ruled("@400 app CPU %", 10.5, 20.5, ([10.0, 11.0, 10.5], [20.0, 21.0, 20.5]), LAG_FLOOR_MS) is None
    # a metric the study declares no finding for is described the same way in the terminal's table
    assert data.comparison is not None
    assert "(12.74×, disjoint ranges, n = 2, not tested)" in studies.cell_text(
        data.comparison["write"]["commit_p50_ms"]["after_sync"], None, "commit_p50_ms",
        data.comparison["write"]["commit_p50_ms"]["off"])


def test_three_repeats_a_side_still_use_welchs_test_with_holm() -> None:
    from scipy import stats as scipy_stats

    off, on = [1.50, 1.60, 1.55], [19.4, 20.1, 21.0]
    data = _study({"off": off, "after_sync": on}, "commit_p50_ms")
    [c] = judged(data, ["commit_p50_ms"])
    expected = scipy_stats.ttest_ind([math.log(v) for v in on], [math.log(v) for v in off], equal_var=False).pvalue
    assert c.kind == TESTED and c.p == pytest.approx(expected) and c.p_holm == pytest.approx(expected)
    assert c.holds and c.words == f"p = {expected:.3g}" and c.comparisons == 1
    # two tested comparisons: Holm doubles the smaller p
    three = _study({"off": off, "after_sync": on, "after_commit": [1.52, 1.58, 1.61]}, "commit_p50_ms")
    tested = {c.cell: c for c in judged(three, ["commit_p50_ms"])}
    assert tested["after_sync"].p_holm == pytest.approx(2 * tested["after_sync"].p)
    assert tested["after_commit"].words.startswith("not shown (p = ")  # a test with power may say "not shown"


def _step(lags: list[float | None]) -> ShownStep:
    repeats = [Repeat(name=f"r{i}", files={}, meta=RunMeta(),
                      summary=summary_of({"lag": {"replica1": {"p99_ms": lag}, "replica2": {"p99_ms": 0.0}},
                                          "lag_floor_ms": 10.0}))
               for i, lag in enumerate(lags)]
    return ShownStep(rate=1200, passed=True, repeats=repeats)


def test_a_lag_under_its_floor_prints_as_under_the_floor() -> None:
    # a study: 0, 5.3 and 8 ms under a 10 ms floor are not values, and no ratio is taken from them
    data = _study({"near": [0.0, 5.3, 8.0], "far": [31.0, 40.0, 45.0], "mixed": [8.0, 20.0, 31.0]}, "lag_p99_ms")
    assert data.comparison is not None
    rows = data.comparison["write"]["lag_p99_ms"]
    assert figure_text(rows["near"], "lag_p99_ms") == f"< {LAG_FLOOR_MS:g}" == "< 10"
    assert figure_text(rows["mixed"], "lag_p99_ms") == "20.0 [< 10–31.0]"
    assert rows["far"].ratio is None  # against a baseline under the floor
    table = _table(data)
    assert "| lag p99 ms (primary) | < 10 | 40.0 [31.0–45.0] (**holds**" in table
    assert "5.3" not in table and "0.000" not in table
    [bound] = [c for c in study_findings(data, ["lag_p99_ms"]) if c.cell == "far"]
    assert bound.kind == "lower bound" and bound.factor == 4.0  # 40 ms over the 10 ms floor: ≥ 4×
    # two lags under the floor are compared with nothing, whatever their raw values
    both = _study({"near": [0.0, 1.0], "nearer": [5.3, 8.0]}, "lag_p99_ms")
    assert words_of([], both, "write", "lag_p99_ms", "nearer", "near") == (False, "not compared: under its floor")
    # a sweep's table and the reference's rows: the step's lag p99 (median of repeats) under the floor
    step = _step([5.3, 0.0, 8.0])
    assert sweeps.step_cells(step)[14] == "< 10"
    assert sweeps.lag_text(step, lambda v: f"{v:.3f}") == "< 10"
    assert sweeps.step_cells(_step([5.3, 20.0, 40.0]))[14] == "20 [< 10–40]"
    assert sweeps.lag_text(_step([12.0, 15.0]), lambda v: f"{v:.3f}") == "13.500"
