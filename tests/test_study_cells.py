"""A study's description, tables and chart show the cells that ran (issue 73: the study files' prose promised cells
`--only` had cut, as per-index at 4G, fan-out's 2 replicas, parallel-apply's 2 threads, cost-model-rates' reads):
study.json records the cells --only cut, the description is generated from the cells whose units measured
something and names the others as not run, with why. Synthetic records, no server."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from replbench.analysis.studymetrics import (
    BY_KEY,
    CUT,
    FAILED,
    NOT_REACHED,
    cells_not_run,
    compare_cells,
    file_cells,
    ran_cells,
)
from replbench.core.config import STUDY_DIR, Settings
from replbench.core.results import StudyRecord, StudyUnit, read_study, study_of
from replbench.experiments import study, studyfile
from replbench.report import plots, studies

pytestmark = pytest.mark.unit

PROSE = "ROW, STATEMENT, MIXED and ROW MINIMAL"  # what a study file's description says: every cell of the file


def synthetic(**more: Any) -> StudyRecord:
    """A study of four recorded cells on `write`: ROW and STATEMENT measured twice, MIXED's units failed, MINIMAL's
    interrupted study never reached; its file's fifth cell, NOBLOB, cut by --only."""
    def unit(cell: str, value: float | None, status: str = "ok") -> StudyUnit:
        return StudyUnit.model_validate({"cell": cell, "scenario": "write", "measure": "run", "status": status,
                                         "metrics": None if value is None else {"bytes_per_write": value}})

    units = [unit("ROW", 560.0), unit("STATEMENT", 280.0), unit("MIXED", None, "failed"), unit("ROW", 562.0),
             unit("STATEMENT", 281.0)]
    cells = [{"name": "ROW", "knobs": {"binlog_format": "ROW", "binlog_row_image": "FULL"}, "changed": {}},
             {"name": "STATEMENT", "knobs": {"binlog_format": "STATEMENT", "binlog_row_image": "FULL"},
              "changed": {"binlog_format": "STATEMENT"}},
             {"name": "MIXED", "knobs": {"binlog_format": "MIXED", "binlog_row_image": "FULL"},
              "changed": {"binlog_format": "MIXED"}},
             {"name": "MINIMAL", "knobs": {"binlog_format": "ROW", "binlog_row_image": "MINIMAL"},
              "changed": {"binlog_row_image": "MINIMAL"}}]
    names = [c["name"] for c in cells]
    return study_of({"name": "synthetic", "description": PROSE, "status": "interrupted", "cells": cells,
                     "units": [u.model_dump(exclude_none=True) for u in units], "primary": ["bytes_per_write"],
                     "command": "./run.sh study synthetic --only name=ROW,STATEMENT,MIXED,MINIMAL",
                     "comparison": compare_cells(units, names), "cells_cut": ["NOBLOB"], "rates": {"write": 400},
                     "measures": ["run"], "duration_s": 10, "repeat": 2, **more})


def test_the_description_is_the_cells_that_ran_and_names_the_others_with_why() -> None:
    data = synthetic()
    assert ran_cells(data) == ["ROW", "STATEMENT"]
    assert cells_not_run(data) == {CUT: ["NOBLOB"], FAILED: ["MIXED"], NOT_REACHED: ["MINIMAL"]}
    said = studies.description(data)
    assert said == ("Ran 2 of 5 cells, varying binlog_format (ROW | STATEMENT). Not run: `NOBLOB` (cut by "
                    "`--only`); `MIXED` (every unit failed); `MINIMAL` (not reached: study interrupted).")
    # the study file's prose is never printed: it promised the cells that did not run
    full, short = studies._head(data, Path("study-x-synthetic"))
    for lines in (full, short):
        assert lines[2] == said and PROSE not in "\n".join(lines)
        cells = next(line for line in lines if line.startswith("- **Cells**"))
        assert "MIXED" not in cells and "MINIMAL" not in cells and "NOBLOB" not in cells
    # every cell ran: all of them, and nothing not run
    whole = synthetic(status="complete", cells_cut=[], command="./run.sh study synthetic",
                      cells=synthetic().model_dump()["cells"][:2])
    assert studies.description(whole) == "Ran both cells, varying binlog_format (ROW | STATEMENT)."
    # what every cell that ran sets alike is said once
    minimal = [{**c, "changed": {**c["changed"], "binlog_row_image": "MINIMAL"}} for c in whole.model_dump()["cells"]]
    assert studies.description(whole.model_copy(update={"cells": study_of({"cells": minimal}).cells})) == \
        "Ran both cells, varying binlog_format (ROW | STATEMENT), each with binlog_row_image=MINIMAL."


def test_a_study_json_from_before_cells_cut_names_the_cut_cells_from_its_study_file() -> None:
    # per-index as campaign report-20261128-211315 ran it, before study.json recorded the cells --only cut
    kept = ("none", "idx_first_last", "idx_last", "idx_city_birth")
    cells = [{"name": f"drop_indexes={d} buffer_pool=128M", "knobs": {"buffer_pool": "128M"},
              "changed": {"buffer_pool": "128M", "drop_indexes": d}} for d in kept]
    units = [{"cell": c["name"], "scenario": "write", "status": "ok", "metrics": {"replica_ms_per_write": 0.4}}
             for c in cells]
    data = study_of({"name": "per-index", "cells": cells, "units": units, "description": studyfile.load(
        "per-index").description, "command": "./run.sh study per-index --repeat 2 --only buffer_pool=128M --only "
                                             f"drop_indexes={','.join(kept)}"})
    said = studies.description(data)
    assert said.startswith("Ran 4 of 12 cells, varying drop_indexes (none | idx_first_last | idx_last | "
                           "idx_city_birth), each with buffer_pool=128M. Not run: `drop_indexes=none buffer_pool=4G`")
    assert "`drop_indexes=all buffer_pool=4G`, `drop_indexes=all buffer_pool=128M` (cut by `--only`; as the study " \
           "file names them now)." in said
    assert "without all four" not in said and data.description and data.description not in said
    # without --only and without the key, the file is not read: what ran is all it declared
    whole = data.model_copy(update={"command": "./run.sh study per-index"})
    assert studies.description(whole).startswith("Ran all 4 cells,") and "Not run" not in studies.description(whole)
    # cut, and no study file of that name to name them: said without names
    elsewhere = data.model_copy(update={"name": "no-such-study"})
    assert studies.description(elsewhere).endswith("Not run: the study file's other cells (cut by `--only`).")


@pytest.mark.parametrize("name", studyfile.available())
def test_a_report_names_a_study_files_cells_as_the_runner_does(name: str) -> None:
    # the one naming rule (studymetrics.cell_label): the report's fallback reads the file raw, the runner checked
    doc = tomllib.loads((STUDY_DIR / f"{name}.toml").read_text())
    assert file_cells(doc) == [c.name for c in studyfile.load(name).cells]


def test_study_json_records_the_cells_only_cut_and_the_dry_run_says_so(tmp_path: Path) -> None:
    spec = studyfile.only(studyfile.load("fan-out"), ["replicas=1,4"])
    assert spec.cut == ("replicas=2 semi_sync=off buffer_pool=3G", "replicas=2 semi_sync=after_sync buffer_pool=3G")
    assert studyfile.only(studyfile.load("fan-out"), []).cut == ()
    plan = study.Plan.of(spec)
    assert "  not run: 2 cells of the file, cut by --only: replicas=2 semi_sync=off buffer_pool=3G; replicas=2 " \
           "semi_sync=after_sync buffer_pool=3G" in plan.describe()
    study.Study(Settings.from_env({}), plan, tmp_path)._write()
    data = read_study(tmp_path)
    assert data.cells_cut == list(spec.cut) and [c.name for c in data.cells or []] == [c.name for c in spec.cells]
    assert studies.description(data).startswith(  # nothing measured yet: the study is still running
        "Ran no cell. Not run: `replicas=2 semi_sync=off buffer_pool=3G`, `replicas=2 semi_sync=after_sync "
        "buffer_pool=3G` (cut by `--only`); `replicas=1 semi_sync=off buffer_pool=3G`, ")


def test_a_table_shows_only_the_cells_that_ran() -> None:
    data = synthetic()
    table = "\n".join(studies.comparison_tables(data, [], ["bytes_per_write"]))
    header = next(line for line in table.splitlines() if line.startswith("| metric |"))
    assert header == "| metric | `ROW` | `STATEMENT` |"


def test_a_chart_shows_only_the_cells_that_ran(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plt = plots.pyplot()
    shown: list[list[str]] = []
    close = plt.close

    def keep(fig: Any) -> None:  # the chart's x labels per panel, read before it is closed
        shown.extend([t.get_text() for t in ax.get_xticklabels()] for ax in fig.axes if ax.get_xticklabels())
        close(fig)

    monkeypatch.setattr(plt, "close", keep)
    assert plots.plot_study(synthetic(), tmp_path, ["bytes_per_write"]) == "study.png"
    assert shown == [["ROW", "STATEMENT"]]  # MIXED failed, MINIMAL was never reached: no bar of 0 for either


def test_a_chart_has_one_panel_per_primary_metric_and_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plt = plots.pyplot()
    titles: list[list[str]] = []
    close = plt.close

    def keep(fig: Any) -> None:  # the titles of the panels drawn, read before the figure is closed
        titles.append([ax.get_title() for ax in fig.axes if ax.get_title()])
        close(fig)

    monkeypatch.setattr(plt, "close", keep)
    data = synthetic()
    assert data.comparison is not None
    groups = list(data.comparison)
    plots.plot_study(data, tmp_path, ["bytes_per_write"])  # the study's question: one panel a group
    assert titles[-1] == [f"{g}: {BY_KEY['bytes_per_write'].label}" for g in groups]
    assert plots.plot_study(data, tmp_path, ["replica_ms_per_write"]) is None  # a question it has no figure for
    plots.plot_study(data, tmp_path, [])  # none declared: every charted metric it has
    assert titles[-1] == [f"{g}: {BY_KEY[k].label}" for g in groups for k in plots.STUDY_CHART
                          if k in data.comparison[g]]
