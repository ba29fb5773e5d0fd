"""report.md's "Write-back at steady state": each committed soak's steady state (analysis/soak.steady_state) as the
section states it (report/soaks), read from the soak runs core/config.SOAK_RUNS names; none there, no section."""

from __future__ import annotations

from pathlib import Path

import pytest

from replbench.analysis.soak import steady_state
from replbench.core.config import ROOT, SOAK_RUNS
from replbench.core.results import Soak, read_summary
from replbench.report import soaks

pytestmark = pytest.mark.unit


def test_a_soaks_steady_state_is_its_equilibrium_or_its_cycles_the_worse_replicas_and_the_masters() -> None:
    windows = [{"from_s": 0, "writes": 100, "nodes": {}}]
    per = {"master": {"cpu_ms_per_write_net": 0.5}, "replica1": {"cpu_ms_per_write_net": 0.2},
           "replica2": {"cpu_ms_per_write_net": 0.3, "pages_flushed_per_write": 0.8}}
    settled = steady_state(Soak.model_validate({"windows": windows, "equilibrium": {
        "reached": True, "from_s": 180, "windows": 12, "per_write": per}}), "write", 400, 960.0)
    assert settled is not None and (settled.how, settled.from_s) == ("equilibrium", 180.0)
    assert settled.replica == per["replica2"] and settled.master == per["master"]  # the larger CPU: the worse
    bursts = steady_state(Soak.model_validate({"windows": windows, "equilibrium": {"reached": False, "moving": ["x"]},
                                               "cycles": {"replica1": {"cycles": 2, "per_write": per["replica1"]}}}),
                          "write-noindex", 800, 2700.0)
    assert bursts is not None and bursts.how == "cycles" and bursts.replica == per["replica1"] and bursts.moving == ()
    moving = steady_state(Soak.model_validate({"windows": windows, "equilibrium": {"reached": False,
                                                                                    "moving": ["dirty pages"]}}),
                          "write", 100, 1200.0)
    assert moving is not None and moving.how == "not reached" and moving.moving == ("dirty pages",)
    assert steady_state(Soak.model_validate({}), "write", 400, 60.0) is None  # a soak from before its windows


def test_the_section_states_each_committed_soak_as_its_summary_records_it() -> None:
    lines = soaks.section()
    assert lines[0] == f"### {soaks.HEADING}"
    rows = [line for line in lines if line.startswith("| `")]
    assert len(rows) == len(SOAK_RUNS)
    for (folder, page), row in zip(SOAK_RUNS, rows, strict=True):
        summary = read_summary(ROOT / folder)
        assert summary.soak is not None and summary.scenario is not None and summary.rate is not None
        steady = steady_state(summary.soak, summary.scenario, int(summary.rate), 0.0)
        assert steady is not None and row.startswith(f"| `{summary.scenario}` {summary.rate}/s"), row
        if steady.how == "equilibrium":  # the worse replica's figures, as the summary records them
            assert steady.replica is not None and f"{steady.replica['cpu_ms_per_write_net']:.3f} CPU-ms" in row, row
            assert f"reached from {steady.from_s:g} s" in row
        else:
            assert "not reached" in row and "CPU-ms" not in row, row
        assert f"[evidence]({page})" in row and (ROOT / page).is_file(), row


def test_without_its_soaks_the_section_is_left_out(tmp_path: Path) -> None:
    assert soaks.section(tmp_path) == []


def test_a_soak_stands_beside_the_short_runs_bound_at_its_scenario_rate_and_pool() -> None:
    """Study working-set's runs of a soak's scenario, rate and pool, with write-back: the bound the soak is read
    against (the median of their repeats); none where the study ran no such cell."""
    from replbench.core.results import load, study_of

    folder = ROOT / "results" / "report-assets" / "campaign-report-20261203-182727"
    study = study_of(load(next(folder.glob("study-*-working-set")) / "study.json"))
    runs = [u.metrics for u in study.units or [] if u.cell == "scenario=write buffer_pool=4G" and u.metrics]
    cpu = sorted(m.replica_ms_per_write_with_writeback for m in runs if m.replica_ms_per_write_with_writeback)
    assert len(cpu) == 2  # two repeats: their median is their mean
    assert soaks._bound(study, "write", 400, 4 * 2**30).startswith(f"{sum(cpu) / 2:.3f} CPU-ms, ")
    assert soaks._bound(study, "write", 100, 4 * 2**30) == "–"  # the study ran 400/s
    assert soaks._bound(study, "write", 400, 3 * 2**30) == "–"  # and no 3G pool
    rows = [line for line in soaks.section(studies=[study]) if line.startswith("| `write` 400/s")]
    assert rows and soaks._bound(study, "write", 400, 4 * 2**30) in rows[0]
