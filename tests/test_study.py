"""Studies: parsing and refusing study files, the interleaved order, the statistics of a cell, and a tiny real
study that ends in study.json and a report section."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from replbench.analysis.rules import CRITERIA_GUARD
from replbench.analysis.studymetrics import compare_cells, load_table, measured, passed, unit_metrics
from replbench.core import sql
from replbench.core.config import ROOT, STUDY_DIR, Settings
from replbench.core.results import (
    ComparisonRow,
    KnobSetting,
    StudyCell,
    StudyRecord,
    StudyUnit,
    apply_of,
    bigtx_of,
    document_of,
    study_of,
    summary_of,
)
from replbench.core.scenario import PassCriteria
from replbench.experiments import replay, study, studyfile
from replbench.report import costsheet, markdown, sources
from replbench.report.studies import STUDIES_PAGE
from replbench.topology import knobs, nodes

from .conftest import env_for, replicating, run_cli, run_main, study_folder

GOOD = """
description = "two formats"
scenarios = ["write"]
rate = 100
duration = "3s"
repeat = 2
[vary]
binlog_format = ["ROW", "STATEMENT"]
"""


def write_study(tmp_path: Path, text: str, name: str = "s") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


def study_parts(text: str) -> tuple[list[str], list[list[str]]]:
    """A study file's lines outside its [[cells]] tables, and each listed cell's lines (blank lines left out)."""
    outside: list[str] = []
    cells: list[list[str]] = []
    cell: list[str] | None = None
    for line in text.splitlines():
        if line.strip() == "[[cells]]":
            cell = []
            cells.append(cell)
        elif line.startswith("["):  # another table ends the cell
            cell = None
            outside.append(line)
        elif cell is None:
            outside.append(line)
        elif line.strip():
            cell.append(line)
    return outside, cells


STUDY_LINES = 30  # a study file's own settings, comments included, outside its [[cells]]
CELL_LINES = 4  # a listed cell: its name and at most three settings


def test_every_shipped_study_parses_and_stays_short() -> None:
    # short for every study alike: its settings in STUDY_LINES, each cell it lists one by one in CELL_LINES (a study
    # of many cells, such as big-transaction's 16, is long only by its list of short cells)
    names = studyfile.available()
    assert {"binlog-format", "annotate", "compression", "parallel-apply", "semi-sync", "durability", "indexes",
            "nopk"} <= set(names)
    for name in names:
        spec = studyfile.load(name)
        assert spec.cells and spec.scenarios
        outside, cells = study_parts((STUDY_DIR / f"{name}.toml").read_text())
        assert len(outside) <= STUDY_LINES, f"{name}: {len(outside)} lines outside its cells"
        assert all(len(cell) <= CELL_LINES for cell in cells), f"{name}: a cell of more than {CELL_LINES} lines"


def test_a_long_study_or_a_long_cell_is_caught() -> None:
    cell = "[[cells]]\nname = \"a\"\nbinlog_format = \"ROW\"\n\n"
    outside, cells = study_parts("# why\nrate = 1\n" + cell * 3 + "[rates]\nwrite = 5\n")
    assert outside == ["# why", "rate = 1", "[rates]", "write = 5"] and cells == [['name = "a"',
                                                                                   'binlog_format = "ROW"']] * 3
    assert len(study_parts("# a line\n" * (STUDY_LINES + 1))[0]) > STUDY_LINES
    long_cell = "[[cells]]\n" + "".join(f"k{i} = {i}\n" for i in range(CELL_LINES + 1))
    assert len(study_parts(long_cell)[1][0]) > CELL_LINES


@pytest.mark.parametrize("text,needle", [
    (GOOD.replace("binlog_format = [", "binlog_formatt = ["), "binlog_formatt"),
    (GOOD.replace('binlog_format = ["ROW", "STATEMENT"]', ""), "empty"),
    (GOOD.replace('binlog_format = ["ROW", "STATEMENT"]', 'parallel_mode = ["conservative"]'), "not a valid"),
    (GOOD.replace('["write"]', '["wrote"]'), "wrote"),
    (GOOD.replace("rate = 100", ""), "rate"),
    (GOOD.replace("repeat = 2", 'repeat = 2\nmeasure = ["sometimes"]'), "sometimes"),
    (GOOD.replace('binlog_format = ["ROW", "STATEMENT"]', 'max_inflight = [0, -1]'), "max_inflight"),
    (GOOD.replace('binlog_format = ["ROW", "STATEMENT"]', 'max_inflight = [0, "many"]'), "max_inflight"),
    (GOOD.replace('binlog_format = ["ROW", "STATEMENT"]', 'app_transport = ["tcp", "pigeon"]'), "app_transport"),
    (GOOD.replace('binlog_format = ["ROW", "STATEMENT"]', 'app_workers = [0]'), "app_workers"),
    (GOOD.replace('binlog_format = ["ROW", "STATEMENT"]', 'max_queue_ms = [0, 2.5]'), "max_queue_ms"),
    (GOOD.replace('binlog_format = ["ROW", "STATEMENT"]', 'admission = ["codel", "sometimes"]'), "admission"),
    (GOOD.replace('binlog_format = ["ROW", "STATEMENT"]', 'drop_indexes = ["none", "idx_lst"]'),
     "no secondary index 'idx_lst'"),
    (GOOD.replace('binlog_format = ["ROW", "STATEMENT"]', 'load = [1, 0]'), "load"),
    (GOOD.replace('binlog_format = ["ROW", "STATEMENT"]', 'load = [1, "high"]'), "load"),
    (GOOD.replace('binlog_format = ["ROW", "STATEMENT"]', 'rows = [10]'), "has none"),
    (GOOD.replace('binlog_format = ["ROW", "STATEMENT"]', 'writes = [0]'), "whole number of writes, 1 or more"),
    (GOOD.replace('["write"]', '["write-bulk"]').replace('binlog_format = ["ROW", "STATEMENT"]', 'rows = [20000]'),
     "at most 10,000"),
    (GOOD.replace("repeat = 2", 'repeat = 2\nbaseline_per = ["pool_size"]'), "'pool_size', not a knob"),
    (GOOD.replace("repeat = 2", 'repeat = 2\nbaseline_per = ["binlog_format"]'), "every cell its own baseline"),
])
def test_bad_study_files_exit_2_naming_the_problem(tmp_path: Path, text: str, needle: str) -> None:
    path = write_study(tmp_path, text)
    with pytest.raises(studyfile.StudyError, match=needle):
        studyfile.load(str(path))
    code, out, err = run_main(["study", str(path), "--dry-run"])
    assert code == 2, out + err
    assert needle in err and "Traceback" not in err


def test_an_unknown_knob_is_reported_with_its_line(tmp_path: Path) -> None:
    path = write_study(tmp_path, GOOD.replace("binlog_format = [", "binlog_formatt = ["))
    with pytest.raises(studyfile.StudyError, match=r"s\.toml:8: vary\.binlog_formatt: unknown knob"):
        studyfile.load(str(path))


def test_cells_run_interleaved_never_one_cells_repeats_in_a_row(tmp_path: Path) -> None:
    text = GOOD.replace('["ROW", "STATEMENT"]', '["ROW", "STATEMENT", "MIXED"]').replace("repeat = 2", "repeat = 3")
    plan = study.Plan.of(studyfile.load(str(write_study(tmp_path, text))))
    order = [u.cell for u in plan.units()]
    assert order == [0, 1, 2, 1, 2, 0, 2, 0, 1]
    assert [u.repeat for u in plan.units()] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert "order of cells: 1 2 3 2 3 1 3 1 2" in plan.describe()


@pytest.mark.parametrize("cells", [3, 4, 5, 6, 7])
def test_over_a_full_set_of_rounds_every_cell_follows_every_other_alike(cells: int) -> None:
    rounds = study.round_orders(cells, 2 * cells if cells % 2 else cells)
    flat = [c for order in rounds for c in order]
    assert all(sorted(order) == list(range(cells)) for order in rounds)
    assert all(a != b for a, b in zip(flat, flat[1:]))
    follows = Counter(pair for order in rounds for pair in zip(order, order[1:]))
    assert len(follows) == cells * (cells - 1) and len(set(follows.values())) == 1


def test_a_cell_may_set_the_apps_in_flight_bound(tmp_path: Path) -> None:
    text = GOOD.replace('binlog_format = ["ROW", "STATEMENT"]', "max_inflight = [0, 64]")
    spec = studyfile.load(str(write_study(tmp_path, text)))
    assert [c.max_inflight for c in spec.cells] == [0, 64]
    assert [c.changed() for c in spec.cells] == [{"max_inflight": "0"}, {"max_inflight": "64"}]
    described = study.Plan.of(spec).describe()
    assert "bound none per worker" in described and "bound 64 per worker" in described
    assert studyfile.load("inflight-bound").cells[1].max_inflight == 64


def test_a_cell_may_make_the_bound_follow_throughput(tmp_path: Path) -> None:
    text = GOOD.replace('binlog_format = ["ROW", "STATEMENT"]', "max_queue_ms = [0, 250]")
    spec = studyfile.load(str(write_study(tmp_path, text)))
    assert [c.app() for c in spec.cells] == [{"max_queue_ms": 0}, {"max_queue_ms": 250}]
    assert "follows throughput × 250 ms of queue" in study.Plan.of(spec).describe()


def test_a_cell_may_set_the_admission_and_a_multiple_of_the_rate(tmp_path: Path) -> None:
    text = GOOD.replace('binlog_format = ["ROW", "STATEMENT"]', 'load = [1, 1.5]\nadmission = ["none"]')
    plan = study.Plan.of(studyfile.load(str(write_study(tmp_path, text))))
    assert [(c.load, c.admission) for c in plan.spec.cells] == [(1.0, "none"), (1.5, "none")]
    assert plan.spec.cells[1].app() == {"admission": "none"}
    assert plan.spec.cells[1].changed() == {"load": "1.5×", "admission": "none"}
    assert "1.5× the study's rate; app admission none" in plan.describe()
    assert [c.load for c in studyfile.load("admission").cells] == [0.9, 0.9, 1.0, 1.0, 1.5, 1.5, 2.0, 2.0]


def test_a_cells_load_and_writes_set_its_apply_capacity_units_rate_and_backlog() -> None:
    plan = study.Plan.of(studyfile.load("cost-model"))
    drains = sorted((u for u in plan.units() if u.measure == "apply-capacity" and u.repeat == 0), key=lambda u: u.cell)
    assert [(plan.rate_of(u), plan.writes_of(u)) for u in drains] == [(200, 9000), (90, 4500), (30, 1200), (3, 150)]
    assert plan.unit_seconds(drains[3]) == pytest.approx(study.apply_seconds(150, 3))  # at its own rate


def test_the_estimate_counts_pool_resizes_and_replicas_added_between_units() -> None:
    # fan-out, 2 rounds on a 3G pool from the default 2 replicas on the reference pool, cells in the order 1 2 6 3 5 4,
    # 2 3 1 4 6 5 = replicas 1 1 4 2 4 2, 1 2 1 2 4 4: the pool resized once; replica3 and replica4 copied once (at
    # the first 4), every other replica brought back from its kept datadir: 1 (replica2, at that first 4), then
    # 2 + 1 + 1 + 2 (the report campaign's fan-out ran 4.6 min over an estimate that counted none, and at cdaf439
    # 8.9 min against 14.2 estimated with every one counted a copy)
    fan_out = study.Plan.of(studyfile.load("fan-out"), repeat=2)
    assert [u.cell + 1 for u in fan_out.units()] == [1, 2, 6, 3, 5, 4, 2, 3, 1, 4, 6, 5]
    assert fan_out.changes_seconds() == pytest.approx(study.POOL_RESIZE_SECONDS + 2 * study.REPLICA_ADD_SECONDS
                                                      + 7 * study.REPLICA_RESUME_SECONDS)
    # working-set, 3 rounds of 6 cells (pools 4G 1G 128M for write-noindex, then for write): 18 units, three on the
    # pool of the unit before (6 then 3 at 128M, 1 then 4 at 4G, 2 then 5 at 1G), so 15 resizes (the first counted)
    working_set = study.Plan.of(studyfile.load("working-set"))
    assert [u.cell + 1 for u in working_set.units()] == [1, 2, 6, 3, 5, 4, 2, 3, 1, 4, 6, 5, 3, 4, 2, 5, 1, 6]
    assert working_set.changes_seconds() == pytest.approx(15 * study.POOL_RESIZE_SECONDS)
    assert study.Plan.of(studyfile.load("annotate")).changes_seconds() == 0


def test_only_runs_the_cells_it_names_and_refuses_a_value_no_cell_has() -> None:
    # per-index out of memory, without the index its update never changes and without all four: 4 cells, the first
    # (every index at 128M) the baseline, and 5 index builds over 2 rounds instead of 15 over 3 (a campaign's trim)
    spec = studyfile.only(studyfile.load("per-index"), ["buffer_pool=128m",
                                                         "drop_indexes=none,idx_first_last,idx_last,idx_city_birth"])
    assert [c.name for c in spec.cells] == [f"drop_indexes={d} buffer_pool=128M"
                                            for d in ("none", "idx_first_last", "idx_last", "idx_city_birth")]
    plan = study.Plan.of(spec, repeat=2)
    assert study.index_changes([plan.index_states()[u.cell] for u in plan.units()]) == (5, 5)
    # by name, and a value with commas in it taken whole where it is one cell's whole value (a link)
    named = studyfile.only(studyfile.load("parallel-apply"), ["name=serial,2 optimistic,4 conservative,4 optimistic"])
    assert [c.name for c in named.cells] == ["serial", "2 optimistic", "4 conservative", "4 optimistic"]
    linked = studyfile.only(studyfile.load("semi-sync-distance"), ["link=replica1=5ms,replica2=5ms"])
    assert [c.links for c in linked.cells] == [("replica1=5ms", "replica2=5ms")] * 3
    for condition, needle in (("buffer_pool=12M", "has buffer_pool=12M (its cells have 4G; 128M)"),
                              ("colour=red", "not a knob or a cell key"), ("buffer_pool", "give KEY=VALUE")):
        code, _, err = run_main(["study", "per-index", "--only", condition, "--dry-run"])
        assert code == 2 and needle in err, err
    code, out, _ = run_main(["study", "semi-sync-distance", "--only", "link=none", "--dry-run"],
                            env={"REPLBENCH_IDLE_WINDOW": "3"})
    fixed = study.Plan.of(studyfile.only(studyfile.load("semi-sync-distance"), ["link=none"]), idle=3.0)
    assert code == 0 and "3 cells" in out and f"estimated {fixed.estimate() / 60:.0f} min" in out
    assert fixed.estimate() < study.Plan.of(fixed.spec).estimate()  # 3 s of idle before each run, not 10 at 200/s


def test_cell_statistics_against_hand_computed_values() -> None:
    def unit(cell: str, value: float) -> StudyUnit:
        return StudyUnit.model_validate({"cell": cell, "scenario": "write",
                                         "metrics": {"bytes_per_write": value, "p99_ms": 10.0}})

    units = [unit("A", 500), unit("A", 520), unit("A", 480), unit("B", 300), unit("B", 310), unit("B", 290),
             unit("C", 470), unit("C", 530), unit("C", 505)]
    result = compare_cells(units, ["A", "B", "C"])["write"]["bytes_per_write"]
    assert result["A"].median == 500 and result["A"].verdict == "baseline"
    assert (result["B"].median, result["B"].min, result["B"].max) == (300, 290, 310)
    assert result["B"].ratio == 0.6 and result["B"].verdict == "different"
    assert result["C"].ratio == 1.01 and result["C"].verdict == "within noise"


def test_a_read_run_reports_no_per_write_figures_from_stray_transactions() -> None:
    def summary(writes: int) -> dict:
        return {"binlog": {"successful_writes": writes, "bytes_per_row": 504.0},
                "cpu_seconds": {"master": 0.1, "replica1": 0.2, "replica2": 0.2},
                "replication": {"nodes": {n: {"transactions": 3} for n in ("master", "replica1", "replica2")}}}

    read = unit_metrics("run", summary_of(summary(0)))  # 3 transactions: the tail of the write run before it
    assert read.bytes_per_row is None and read.master_ms_per_write is None
    assert read.replica_ms_per_write is None
    wrote = unit_metrics("run", summary_of(summary(3)))
    assert wrote.bytes_per_row == 504.0 and wrote.master_ms_per_write == round(100 / 3, 4)
    assert wrote.replica_ms_per_write == round(200 / 3, 4)


def test_a_finding_comes_from_a_primary_metric_survives_holm_and_is_worth_a_headline() -> None:
    from replbench.analysis.findings import brief, nothing_held, sentence, study_findings

    def study(values: dict[str, list[float]]) -> StudyRecord:
        units = [StudyUnit.model_validate({"cell": c, "scenario": "write", "metrics": {"p99_ms": v}})
                 for c, vs in values.items() for v in vs]
        return study_of({"comparison": compare_cells(units, list(values))})

    big = study({"A": [500, 502, 505], "B": [250, 251, 253]})
    found = study_findings(big, ["p99_ms"])
    assert [(f.cell, f.metric) for f in found] == [("B", "p99_ms")] and found[0].effect > 1.9
    assert study_findings(big, ["goodput"]) == []  # only the declared primary metrics give findings
    # page one names the study and the test in each sentence; the study's own section says them once for all
    assert sentence("tiny", found[0]).startswith("`tiny` on `write`:") and "Holm" in sentence("tiny", found[0])
    assert brief(found[0]).startswith("client p99 ms of `B` 0.") and "tiny" not in brief(found[0])
    assert "Holm" not in brief(found[0]) and "on `write` (p = " in brief(found[0])
    tiny = study({"A": [500, 500.5, 501], "B": [498, 498.5, 499]})
    assert study_findings(tiny, ["p99_ms"]) == []  # beyond the noise, but 0.4 %: no headline
    # one comparison with p ≈ 0.02 holds alone; the same data among twelve cells of noise does not survive Holm
    pair = {"A": [100, 108, 104], "B": [120, 131, 125]}
    alone = study_findings(study(pair), ["p99_ms"])
    assert len(alone) == 1 and alone[0].comparisons == 1
    crowd = {**pair, **{f"N{i}": [99 + i % 3, 105, 110 - i % 2] for i in range(11)}}
    assert study_findings(study(crowd), ["p99_ms"]) == []
    assert study_findings(study({"A": [100], "B": [200]}), ["p99_ms"]) == []  # one repeat: nothing tested
    assert nothing_held(study(crowd), ["p99_ms"]) == "none holds over the study's 12 tested comparisons"
    # two repeats a side: not tested, and said so (docs/metrics.md, "Comparing two figures")
    few = nothing_held(study({"A": [100, 104], "B": [150, 250], "C": [101, 99]}), ["p99_ms"])
    assert few == "none stated; 2 not tested: 2 repeats on a side, where a finding needs 3 (`--repeat 3` tests them)"
    assert nothing_held(study({"A": [100], "B": [200]}), ["p99_ms"]).startswith("none stated; 1 not tested: 1 repeat ")


def test_page_one_states_at_most_max_findings_sweep_limits_included() -> None:
    from replbench.analysis.findings import MAX_FINDINGS
    from replbench.report.page import findings
    from replbench.report.sweeps import ShownSweep

    def study(name: str, cells: dict[str, list[float]]) -> StudyRecord:
        units = [{"cell": c, "scenario": "read", "metrics": {"p99_ms": v}} for c, vs in cells.items() for v in vs]
        return study_of({"name": name, "scenarios": ["read"], "units": units, "primary": ["p99_ms"],
                         "comparison": compare_cells([StudyUnit.model_validate(u) for u in units], list(cells))})

    # one study per finding: page one keeps the largest of each study, table and metric
    datas = [study(f"s{i}", {"A": [100.0, 101.0, 102.0], "C": [100.0 * (2 + i), 101.0 * (2 + i), 102.0 * (2 + i)]})
             for i in range(MAX_FINDINGS)]
    latest = {k: ShownSweep(scenario=k, key=k, max=500, max_text="500 rps", max_brief="500 rps", kept_up=None, steps=[],
                            folder=k, meta=None)
              for k in ("read", "write", "write-noindex")}
    bullets = [line for line in findings(latest, datas) if line.startswith("- ")]
    assert len(bullets) == MAX_FINDINGS and "`s14`" in bullets[0]
    many = study("many", {"A": [100.0, 101.0, 102.0], "B": [200.0, 202.0, 204.0], "C": [300.0, 303.0, 306.0]})
    said = [line for line in findings({}, [many]) if line.startswith("- ")]
    assert len(said) == 1 and "`C`" in said[0]  # B's finding is in the study's own section
    limits = [b for b in bullets if "max sustainable rate" in b]  # the sweeps' limits: one line, every sweep named
    assert len(limits) == 1 and all(f"`{k}` 500 rps" in limits[0] for k in latest)


@pytest.fixture(scope="module")
def tiny_study(topo: Settings, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The tiny real study (GOOD: ROW against STATEMENT, twice; 2 s runs), run once for the tests that read its
    folder: the report section, and the report made from it as a campaign's study. Neither test writes into the
    folder."""
    text = GOOD.replace('"3s"', '"2s"').replace("repeat = 2\n", 'repeat = 2\nprimary = ["bytes_per_write"]\n')
    path = write_study(tmp_path_factory.mktemp("study"), text, "tiny")
    proc = run_cli(["study", str(path)], env_for(topo.state), timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return study_folder(proc.stdout)


def test_a_tiny_real_study_writes_study_json_and_a_report_section(topo: Settings, tmp_path: Path,
                                                                   tiny_study: tuple[Path, dict]) -> None:
    env = env_for(topo.state)
    folder, data = tiny_study
    assert data["status"] == "complete" and len(data["units"]) == 4
    assert [u["cell"] for u in data["units"]] == ["binlog_format=ROW", "binlog_format=STATEMENT"] * 2
    assert all(u["status"] in ("ok", "ok-with-warnings") for u in data["units"])
    # every run but the last compares the rows it wrote; the last checks the whole table (no reset between)
    scopes = [json.loads((folder / u["folder"] / "summary.json").read_text())["consistency"]["scope"]
              for u in data["units"]]
    assert scopes == ["rows", "rows", "rows", "table"]
    readback = data["units"][1]["knobs_readback"]["master"]["binlog_format"]
    assert readback == "STATEMENT"
    rows = data["comparison"]["write"]["bytes_per_write"]
    assert rows["binlog_format=STATEMENT"]["median"] < rows["binlog_format=ROW"]["median"]
    assert (folder / "command.txt").read_text().startswith("./run.sh study")
    output = tmp_path / "report.md"
    settings = Settings.from_env(env)
    markdown.generate(settings, output)
    text = output.read_text()
    page = (tmp_path / STUDIES_PAGE).read_text()  # every study's section, beside report.md (a line each there)
    assert "## Study `tiny`" in page and "## Study `tiny`" not in text and "## Findings" in text
    assert f"- [`tiny`]({STUDIES_PAGE}#study-tiny--{folder.name})" in text
    # its own section (alone in results/, or after other modules' studies): the findings of its declared primary
    section = page.split("## Study `tiny`", 1)[1].split("\n#", 1)[0]
    assert "- **Findings** (primary metrics only, between cells that differ in one setting): " in section
    tables = (topo.results / "report-assets" / folder.name / "study.md").read_text()  # every figure, linked
    assert "| binlog B/write (primary) |" in tables and f"{folder.name}/study.md)" in page
    assert str(topo.state) not in text + page and str(ROOT) not in text + page
    chart = topo.results / "report-assets" / folder.name / "study.png"
    assert chart.read_bytes()[:4] == b"\x89PNG"
    for asset in (topo.results / "report-assets").rglob("*"):
        if asset.suffix in (".md", ".json", ".txt"):
            assert str(topo.state) not in asset.read_text(), asset


def test_a_studys_app_settings_reach_each_cells_app(topo: Settings, tmp_path: Path) -> None:
    text = GOOD.replace('["write"]', '["get"]').replace("rate = 100", "rate = 50").replace('"3s"', '"2s"') \
        .replace("repeat = 2", "repeat = 1").replace("[vary]\nbinlog_format = [\"ROW\", \"STATEMENT\"]\n",
                                                    '[[cells]]\nname = "reference app"\nmax_inflight = 0\n'
                                                    '[[cells]]\nname = "changed app"\nmax_inflight = 3\n'
                                                    'app_workers = 1\napp_transport = "unix"\nclients = 2\n')
    proc = run_cli(["study", str(write_study(tmp_path, text, "app"))], env_for(topo.state), timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder, data = study_folder(proc.stdout)
    runs = [folder / u["folder"] for u in data["units"]]
    limits = [json.loads((run / "summary.json").read_text())["app_admission"]["limit_per_worker"] for run in runs]
    assert limits == [0, 3]
    apps = [json.loads((run / "meta.json").read_text())["app"] for run in runs]
    assert [(a["workers"], a["transport"]) for a in apps] == [(topo.app_workers, "tcp"), (1, "unix socket")]
    assert all(u["status"] in ("ok", "ok-with-warnings") for u in data["units"])
    assert data["cells"][1]["changed"] == {"clients": "2", "max_inflight": "3", "app_workers": "1",
                                           "app_transport": "unix"}
    # a cell's clients run it as a closed loop (docs/runs.md, "Closed loop"); the other cell keeps the study's rate
    assert [json.loads((run / "summary.json").read_text()).get("clients") for run in runs] == [None, 2]
    assert "shed" in data["comparison"]["get"] and "app_ms_per_ok" in data["comparison"]["get"]


def test_a_cells_rows_set_each_bulk_requests_rows(topo: Settings, tmp_path: Path) -> None:
    # the cost model tells a transaction's cost from a row's only with runs of several rows per transaction
    text = GOOD.replace('["write"]', '["write-bulk"]').replace("rate = 100", "rate = 20").replace('"3s"', '"2s"') \
        .replace("repeat = 2", "repeat = 1").replace('binlog_format = ["ROW", "STATEMENT"]', "rows = [3, 30]")
    proc = run_cli(["study", str(write_study(tmp_path, text, "rows"))], env_for(topo.state), timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder, data = study_folder(proc.stdout)
    runs = [folder / u["folder"] for u in data["units"]]
    assert [json.loads((run / "meta.json").read_text())["bulk_rows"] for run in runs] == [3, 30]
    master = [json.loads((run / "summary.json").read_text())["replication"]["nodes"]["master"] for run in runs]
    per_trx = [m["rows_changed"] / m["transactions"] for m in master]
    assert per_trx[0] == pytest.approx(3, rel=0.05) and per_trx[1] == pytest.approx(30, rel=0.05)
    bytes_per_write = data["comparison"]["write-bulk"]["bytes_per_write"]
    assert bytes_per_write["rows=30"]["median"] > 5 * bytes_per_write["rows=3"]["median"]


TINY_SYSBENCH = """description = "sysbench oltp_write_only on one table of 2,000 rows"
package = "sysbench"
database = "sbtiny"
prepare = ["sysbench", "oltp_write_only", "--db-driver=mysql", "--mysql-host={host}", "--mysql-port={port}",
           "--mysql-user={user}", "--mysql-password={password}", "--mysql-db={database}", "--tables=1",
           "--table-size=2000", "prepare"]
run = ["sysbench", "oltp_write_only", "--db-driver=mysql", "--mysql-host={host}", "--mysql-port={port}",
       "--mysql-user={user}", "--mysql-password={password}", "--mysql-db={database}", "--tables=1",
       "--table-size=2000", "--threads=2", "--rate={rate}", "--time={seconds}", "run"]
"""


def binlog_size(topo: Settings) -> int:
    """The master's binlog files, their bytes in all (SHOW BINARY LOGS)."""
    with sql.admin(topo.master, topo) as cur:
        cur.execute("SHOW BINARY LOGS")
        return sum(int(row[1]) for row in sql.fetch_all(cur))


def test_a_live_unit_drives_a_workload_files_tool_and_measures_its_window(topo: Settings, tmp_path: Path) -> None:
    """A tool the suite did not write (sysbench) writes to the master for the unit's window, prepared on first use;
    the window counts exactly sysbench's transactions, the held replica drains them, the other follows."""
    work = tmp_path / "tiny.toml"
    work.write_text(TINY_SYSBENCH)
    text = (f'description = "x"\nquestion = "x"\nmeasure = ["live"]\nworkloads = ["{work}"]\nrate = 40\n'
            'duration = "6s"\nrepeat = 1\n[vary]\nbinlog_row_image = ["FULL"]\n')
    size_before = binlog_size(topo)
    try:
        proc = run_cli(["study", str(write_study(tmp_path, text, "live"))], env_for(topo.state), timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        folder, data = study_folder(proc.stdout)
        unit = data["units"][0]
        assert unit["status"] == "ok" and unit["measure"] == "live" and unit["rate"] == 40, unit
        driver = (folder / unit["folder"] / "driver.txt").read_text()
        assert "prepare" in driver and topo.admin_password not in driver, driver  # prepared on first use
        sysbench = int(driver.split("transactions:")[1].split()[0])  # sysbench's own count of what it committed
        apply = json.loads((folder / unit["folder"] / "apply.json").read_text())
        assert apply["live"]["transactions"] == sysbench > 0, (apply["live"], sysbench)
        assert list(apply["replicas"]) == ["replica1"] and apply["replicas"]["replica1"]["transactions"] >= sysbench
        assert {c["role"] for c in apply["live"]["cpu"].values()} == {"master", "following"}, apply["live"]["cpu"]
        # the tool stopped with the window: the master's and the follower's dirty pages forced out after it, counted
        for c in apply["live"]["cpu"].values():
            back = c["writeback"]
            assert back["dirty_pages"] > 0 and back["pages_flushed"] > 0 and back["write_bytes"] > 0, back
            assert c["cpu_s"] > 0, c
            # a follower's few ms over 6 s can sit under its idle on a busy host: then no figure, never 0.0
            assert (c["cpu_ms_per_trx"] is None) == bool(c.get("below_idle")), c
            if c["cpu_ms_per_trx"] is not None:
                assert back["cpu_ms_per_write_net_with_writeback"] >= back["run_cpu_ms_per_write_net"] == \
                    c["cpu_ms_per_trx"] > 0, back
        metrics = unit["metrics"]
        assert metrics["live_master_ms_per_trx"] > 0, metrics
        following = next(c for c in apply["live"]["cpu"].values() if c["role"] == "following")
        assert metrics.get("live_following_ms_per_trx") == following["cpu_ms_per_trx"], (metrics, following)
        assert metrics["live_master_kb_written_per_trx_with_writeback"] > 0, metrics
        # the binlog the window wrote, by the server's count: within what the binlog files grew by over the whole
        # study, and at least a GTID, a table map and a row event a transaction
        grown = binlog_size(topo) - size_before
        assert 100 * sysbench < apply["live"]["binlog_bytes"] <= grown, (apply["live"], grown)
        assert metrics["live_binlog_bytes_per_trx"] == pytest.approx(
            apply["live"]["binlog_bytes"] / apply["live"]["transactions"], abs=0.1), apply["live"]
        assert metrics["apply_trx_per_s"] > 0 and metrics["live_trx_per_s"] > 0, metrics
        assert replicating(topo)
    finally:
        with sql.admin(topo.master, topo) as cur:
            cur.execute("DROP DATABASE IF EXISTS sbtiny")


def test_a_replay_study_puts_the_replica_back_before_each_unit_and_refuses_a_replica_elsewhere(
        topo: Settings, tmp_path: Path) -> None:
    """A captured binlog replayed by three cells (serial; two conservative threads; MINIMAL, re-logged by the
    replica and then replayed): the replica is kept as it stands before the first and put back before each other
    (and between the re-log and its replay), so each applies exactly the files' transactions; the re-logged files
    are the same transactions in fewer bytes. Afterwards it replicates from the master again, without re-logging,
    and the snapshot is gone. A replica at no boundary of the files is refused in one line before any unit, and
    leaves no folder."""
    replica = topo.node("replica1")
    with sql.admin(topo.master, topo) as cur:
        cur.execute("FLUSH BINARY LOGS")
        cur.execute("CREATE DATABASE IF NOT EXISTS replays")
        cur.execute("CREATE TABLE IF NOT EXISTS replays.t (id INT AUTO_INCREMENT PRIMARY KEY, v INT, "
                    "pad CHAR(100) NOT NULL DEFAULT 'x', KEY (v))")
    assert all(v is not None for v in nodes.wait_caught_up(topo, 60).values())
    with sql.admin(replica, topo) as cur:
        cur.execute(sql.stop_replica_sql(topo.flavour))
    text = ('description = "x"\nquestion = "x"\nmeasure = ["replay"]\nbinlogs = ["{file}"]\nrepeat = 1\n'
            '[[cells]]\nname = "serial"\n[[cells]]\nname = "two threads"\nparallel_threads = 2\n'
            'parallel_mode = "conservative"\n[[cells]]\nname = "minimal"\nbinlog_row_image = "MINIMAL"\n')
    try:
        with sql.admin(topo.master, topo) as cur:
            for i in range(60):  # 60 transactions of two inserts, then 60 single-row updates
                cur.execute("INSERT INTO replays.t (v) VALUES (%s), (%s)", (i, -i))
            cur.execute("SELECT MIN(id) FROM replays.t")
            first = int(sql.one_row(cur)[0])
            for i in range(60):
                cur.execute("UPDATE replays.t SET v = v + 1000 WHERE id = %s", (first + i,))
            cur.execute("SHOW MASTER STATUS")
            current = str(sql.one_row(cur)[0])
        copy = tmp_path / current
        shutil.copyfile(topo.master.datadir / current, copy)
        proc = run_cli(["study", str(write_study(tmp_path, text.format(file=copy), "replay"))], env_for(topo.state),
                       timeout=600)
    finally:
        nodes.ensure_replicating(replica, topo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder, data = study_folder(proc.stdout)
    assert sorted((u["cell"], u["status"]) for u in data["units"]) == [
        ("minimal", "ok"), ("serial", "ok"), ("two threads", "ok")], data["units"]
    per_trx = {}
    for unit in data["units"]:
        apply = json.loads((folder / unit["folder"] / "apply.json").read_text())
        assert apply["replicas"]["replica1"]["transactions"] == 120 == apply["replay"]["transactions"], apply
        assert unit["metrics"]["apply_trx_per_s"] > 0, unit["metrics"]
        per_trx[unit["cell"]] = unit["metrics"]["replay_binlog_bytes_per_trx"]
        # a cell asks for a row image: every cell's files re-logged under its own, kept in the unit's folder
        relog = apply["replay"]["relog"]
        assert relog["row_image"] == ("MINIMAL" if unit["cell"] == "minimal" else "FULL"), relog
        assert relog["source_transactions"] == 120 and relog["image"] == (
            "partial" if unit["cell"] == "minimal" else "measured"), relog
        kept = [folder / unit["folder"] / "relogged" / f["name"] for f in apply["replay"]["files"]]
        assert all(k.is_file() for k in kept), kept
    # the same 120 transactions: re-logged under FULL as many bytes in each, under MINIMAL fewer
    assert per_trx["serial"] == per_trx["two threads"] > per_trx["minimal"] > 0, per_trx
    assert proc.stderr.count("putting replica1 back at") == 5, proc.stderr  # before each unit but the first, and
    # between each re-log and its replay
    assert not (topo.state / "snapshots" / "replica1").exists()
    with sql.admin(replica, topo) as cur:
        cur.execute("SELECT @@log_slave_updates, @@binlog_row_image")
        assert sql.one_row(cur) == (0, "FULL")  # restarted without the re-log's settings
    assert all(v is not None for v in nodes.wait_caught_up(topo, 60).values()) and replicating(topo)
    rows = []
    for node in (replica, topo.master):  # the files applied once net: put back, replayed, then the master's stream
        with sql.admin(node, topo) as cur:
            cur.execute("SELECT COUNT(*), SUM(v), SUM(v >= 1000) FROM replays.t")
            rows.append(sql.one_row(cur))
    assert rows[0] == rows[1] and rows[0][0] == 120 and rows[0][2] > 0, rows
    studies_before = sorted(topo.results.glob("study-*"))
    proc = run_cli(["study", str(write_study(tmp_path, text.format(file=copy), "again"))], env_for(topo.state))
    assert proc.returncode == 1 and "replica1 has applied every transaction" in proc.stderr.strip().splitlines()[-1]
    assert "Traceback" not in proc.stderr and sorted(topo.results.glob("study-*")) == studies_before
    assert replicating(topo)
    with sql.admin(topo.master, topo) as cur:
        cur.execute("DROP DATABASE replays")


def test_a_relog_that_fails_leaves_the_replica_without_the_relogs_settings(
        topo: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A re-log restarts the replica with log_slave_updates and the row image asked; one that fails after that
    restarts it without them, so no later command inherits a re-logging replica."""
    replica = topo.node("replica1")
    assert all(v is not None for v in nodes.wait_caught_up(topo, 60).values())
    with sql.admin(topo.master, topo) as cur:
        cur.execute("FLUSH BINARY LOGS")
        cur.execute("SHOW MASTER STATUS")
        current = str(sql.one_row(cur)[0])
    assert all(v is not None for v in nodes.wait_caught_up(topo, 60).values())
    with sql.admin(replica, topo) as cur:
        cur.execute("STOP SLAVE")
    try:
        with sql.admin(topo.master, topo) as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS relogs")
        copy = tmp_path / current
        shutil.copyfile(topo.master.datadir / current, copy)

        def failing(*_: object) -> None:
            with sql.admin(replica, topo) as cur:  # the re-log's settings were in force when it failed
                cur.execute("SELECT @@log_slave_updates, @@binlog_row_image")
                assert sql.one_row(cur) == (1, "MINIMAL")
            raise RuntimeError("the re-log failed")

        monkeypatch.setattr(replay, "_relogged", failing)
        with pytest.raises(RuntimeError, match="the re-log failed"):
            replay.relog(topo, [copy], "replica1", "MINIMAL", tmp_path / "relogged")
        with sql.admin(replica, topo) as cur:
            cur.execute("SELECT @@log_slave_updates, @@binlog_row_image")
            assert sql.one_row(cur) == (0, "FULL")
    finally:
        nodes.ensure_replicating(replica, topo)
        with sql.admin(topo.master, topo) as cur:
            cur.execute("DROP DATABASE IF EXISTS relogs")
    assert replicating(topo)


def test_a_load_study_counts_passing_runs_and_goodput_against_the_max() -> None:
    def run(rate: int, p99: float, **more: object) -> dict:
        return {"status": "ok", "guards": [], "rate": rate, "success": 1.0, "goodput": float(rate),
                "latency_ms": {"p99": p99}, "catch_up_s": {"replica1": 0.2}, **more}

    ok = run(900, 20.0)
    over = run(1300, 2000.0, status="ok-with-warnings", guards=[f"{CRITERIA_GUARD}: p99 2000 ms > 1000 ms"])
    criteria = PassCriteria()
    assert passed(summary_of(ok), criteria) is True and passed(summary_of(over), criteria) is False
    assert passed(summary_of({"status": "ok"}), criteria) is None  # never judged: no guards
    assert passed(summary_of(run(900, 20.0, status="FAILED")), criteria) is False
    # a replica that never caught up fails the unit, as it fails a sweep step
    assert passed(summary_of(run(900, 20.0, catch_up_s={"replica1": None})), criteria) is False
    units = [StudyUnit.model_validate({"cell": c, "scenario": "read",
                                       "metrics": {"passed": passed(summary_of(s), criteria), "goodput": s["goodput"]}})
             for c, s in (("a", ok), ("a", over), ("b", over))]
    rows = load_table(units, [StudyCell.model_validate({"name": "a"}), StudyCell.model_validate({"name": "b"})],
                      {"read": 1000})
    assert [(r.cell, r.passed, r.runs) for r in rows] == [("a", 1, 2), ("b", 0, 1)]
    assert rows[0].goodput_pct_of_max == {"median": 110.0, "min": 90.0, "max": 130.0, "n": 2}


def as_campaign(results: Path, study_dir: Path, name: str) -> Path:
    """The study's folder inside a finished campaign `report` under results/, renamed as a study of `name`."""
    folder = results / "campaign-report-20260101-000000"
    shutil.copytree(study_dir, folder / study_dir.name)
    data = json.loads((folder / study_dir.name / "study.json").read_text())
    (folder / study_dir.name / "study.json").write_text(json.dumps({**data, "name": name}))
    units = [{"command": f"study {name}", "status": "done", "seconds": 60, "calibration_before": 4.0,
              "calibration_after": 5.5}]
    (folder / "campaign.json").write_text(json.dumps({
        "name": "report", "commit": "abc1234", "dirty": False, "status": "done", "units": units,
        "folder": folder.name, "started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:01:00Z"}))
    return folder


def test_report_md_comes_from_one_campaign_its_first_page_the_cost_sheet(topo: Settings, tmp_path: Path,
                                                                         tiny_study: tuple[Path, dict]) -> None:
    """A real study's folder as a campaign's binlog-format study: the report names the campaign, opens with the
    cost sheet, mixes in no loose section (they go to the archive page), and a clone holding only the committed
    assets rebuilds report.md byte for byte."""
    study_dir, _ = tiny_study
    root = tmp_path / "top"
    results = root / "results"
    as_campaign(results, study_dir, "binlog-format")
    loose = results / "report-assets" / "study-20250101-000000-loose"  # published before: archive only
    shutil.copytree(study_dir, loose)
    settings = Settings.from_env(dict(env_for(topo.state), REPLBENCH_RESULTS=str(results)))
    output = root / "report.md"
    markdown.generate(settings, output, sources.pick(results))
    text = output.read_text()
    assert "from one campaign: `report` (`campaign-report-20260101-000000`), 1 units at commit `abc1234`" in text
    assert "calibration 4–5.5" in text
    sheet = text.index("## What each replication setting costs")
    assert sheet < text.index("## Findings") < text.index("## What was measured")
    table = text[sheet:text.index("## Findings")]
    assert "### `write`: " in table and "\n| ROW FULL | " in table and "\n| STATEMENT | " in table, table
    row = next(line for line in table.splitlines() if line.startswith("| STATEMENT | "))
    assert row.split(" | ")[1] != "–" and row.endswith("| binlog-format |")  # binlog B/write, and its source
    assert "study-20250101-000000-loose" not in text  # loose sections are not mixed in ...
    archive = (root / "report-archive.md").read_text()
    assert "study-20250101-000000-loose" in archive and "(results/report-assets/study-20250101-000000-loose/" \
        "study.json)" in archive  # ... they are listed, linked
    assert str(topo.state) not in text and str(root) not in text and str(ROOT) not in text
    # a fresh clone: the committed assets (the campaign's, with its campaign.json) and nothing raw
    clone = tmp_path / "clone"
    shutil.copytree(results / "report-assets", clone / "results" / "report-assets")
    rebuilt = clone / "report.md"
    origin = sources.pick(clone / "results")
    assert origin.campaign and origin.campaign.commit == "abc1234"
    markdown.generate(Settings.from_env(dict(env_for(topo.state), REPLBENCH_RESULTS=str(clone / "results"))),
                      rebuilt, origin)
    assert rebuilt.read_text() == text


def test_the_report_picks_a_finished_campaign_or_says_why_not(tmp_path: Path) -> None:
    assert sources.pick(tmp_path).campaign is None  # none: everything in results/
    folder = tmp_path / "campaign-report-20260101-000000"
    folder.mkdir()
    (folder / "campaign.json").write_text(json.dumps({"name": "report", "status": "interrupted", "units": []}))
    assert sources.pick(tmp_path).campaign is None  # an unfinished one is not the report's
    with pytest.raises(sources.SourceError, match="no finished campaign 'report'"):
        sources.pick(tmp_path, "report")
    with pytest.raises(sources.SourceError, match="has not finished"):
        sources.pick(tmp_path, str(folder))
    code, _, err = run_main(["report", "--campaign", "nosuch"], env_for(tmp_path))
    assert code == 2 and "no finished campaign 'nosuch'" in err and "usage:" in err
    (folder / "campaign.json").write_text(json.dumps({"name": "report", "status": "done", "units": []}))
    assert sources.pick(tmp_path).raw == folder
    assert sources.pick(tmp_path, loose=True).campaign is None


def test_the_cost_sheet_names_each_setting_and_keeps_studies_apart() -> None:
    def setting(**recorded: object) -> str:
        return costsheet.setting(knobs.recorded(KnobSetting.model_validate(recorded)))

    assert setting(binlog_format="ROW", binlog_row_image="MINIMAL") == "ROW MINIMAL"
    assert setting(binlog_format="STATEMENT", binlog_row_image="FULL") == "STATEMENT"
    assert setting(binlog_format="ROW", binlog_row_image="FULL", binlog_annotate="off",
                   binlog_compress="on") == "ROW FULL, annotate off, compressed from 256 B"
    # a knob the cell does not record is the reference's (topology/knobs.Knobs, the one place for the defaults)
    assert setting(binlog_row_image="MINIMAL", binlog_compress="on",
                   binlog_compress_min_len=10) == "ROW MINIMAL, compressed from 10 B"
    assert setting() == "ROW FULL"

    def study(name: str, cells: dict[str, dict], values: dict[str, list[float]], scenario: str = "write",
              measure: str = "run") -> StudyRecord:
        # a run unit's metrics hold a run's figures, an apply-capacity unit's a drain's (studymetrics.unit_source)
        key = "apply_trx_per_s" if measure == "apply-capacity" else "bytes_per_write"
        return study_of({"name": name, "cells": [{"name": c, "knobs": k, "changed": {}} for c, k in cells.items()],
                         "units": [{"cell": c, "scenario": scenario, "measure": measure, "metrics": {key: v}}
                                   for c, vs in values.items() for v in vs]})

    full, minimal = {"binlog_format": "ROW", "binlog_row_image": "FULL"}, {"binlog_format": "ROW",
                                                                           "binlog_row_image": "MINIMAL"}
    formats = study("binlog-format", {"ROW FULL": full, "ROW MINIMAL": minimal}, {"ROW FULL": [500, 510],
                                                                                  "ROW MINIMAL": [300, 305]})
    compression = study("compression", {"off": full, "on": {**full, "binlog_compress": "on"}},
                        {"off": [900, 905], "on": [200, 201]})
    rows = costsheet.sheet_rows([compression, formats])
    # ROW FULL comes from binlog-format alone (its cells were measured side by side), not pooled with compression's
    assert [(label, name, [m.bytes_per_write for m in runs]) for label, name, runs in rows["write"]] == [
        ("ROW FULL", "binlog-format", [500, 510]), ("ROW MINIMAL", "binlog-format", [300, 305]),
        ("ROW FULL, compressed from 256 B", "compression", [200, 201])]
    threads = study("parallel-apply", {"serial": {**full, "parallel_threads": 0},
                                       "4": {**full, "parallel_threads": 4, "parallel_mode": "optimistic"},
                                       "2": {**full, "parallel_threads": 2, "parallel_mode": "optimistic"}},
                    {"serial": [3000, 3100], "4": [6000], "2": [5000]}, measure="apply-capacity")
    assert costsheet.sheet_rows([threads]) == {}  # drains, no run figures
    rates = costsheet.apply_rates([threads])
    assert rates[("write", "ROW FULL", "serial")] == ("parallel-apply", [3000, 3100])
    assert rates[("write", "ROW FULL", "4 threads")] == ("parallel-apply", [6000]) and len(rates) == 2
    text = "\n".join(costsheet.cost_sheet([formats, threads]))
    assert "| ROW FULL | 505 [500–510] | " in text and "| 3,050 [3,000–3,100] | 6,000 |" in text


def test_a_row_of_another_study_is_scaled_by_its_own_studys_row_full() -> None:
    """compression's rows were not measured beside binlog-format's: every figure of theirs is put on the ROW FULL
    row's footing by compression's own ROW FULL (its control, same rounds): CPU and latency follow the round's host
    speed, bytes the data each study's runs wrote (issue 73)."""
    full = {"binlog_format": "ROW", "binlog_row_image": "FULL"}

    def study(name: str, cells: dict[str, dict], values: dict[str, list[tuple[float, float]]]) -> StudyRecord:
        return study_of({"name": name, "cells": [{"name": c, "knobs": k, "changed": {}} for c, k in cells.items()],
                         "units": [{"cell": c, "scenario": "write", "measure": "run",
                                    "metrics": {"bytes_per_write": b, "master_ms_per_write": ms}}
                                   for c, vs in values.items() for b, ms in vs]})

    formats = study("binlog-format", {"ROW FULL": full}, {"ROW FULL": [(500, 0.5), (500, 0.6)]})
    # a slower round: its own ROW FULL at 1.1 ms, its compressed cell at 0.99 (−10 % beside it)
    compression = study("compression", {"off": full, "on": {**full, "binlog_compress": "on"}},
                        {"off": [(900, 1.0), (900, 1.2)], "on": [(200, 0.9), (200, 1.08)]})
    assert costsheet.scales([formats, compression], costsheet.sheet_rows([formats, compression])) == {
        ("write", "compression"): {"master_ms_per_write": pytest.approx(0.55 / 1.1),
                                   "bytes_per_write": pytest.approx(500 / 900)}}
    text = "\n".join(costsheet.cost_sheet([formats, compression]))
    assert "| ROW FULL | 500 | – | 0.55 [0.5–0.6] |" in text
    # −10 % of ROW FULL's CPU, and 200 of its own ROW FULL's 900 B on binlog-format's 500
    assert "| ROW FULL, compressed from 256 B | 111 | – | 0.495 [0.45–0.54] |" in text
    assert text.count(", scaled |") == 1
    # without its own ROW FULL cell a row stays as measured, unscaled
    alone = study("compression", {"on": {**full, "binlog_compress": "on"}}, {"on": [(200, 0.9)]})
    assert "| ROW FULL, compressed from 256 B | 200 | – | 0.9 |" in "\n".join(costsheet.cost_sheet([formats, alone]))


def test_the_cost_sheet_shows_each_replica_cost_with_its_write_back_where_the_runs_recorded_it() -> None:
    """A run's replica CPU and KB written per write with the dirty pages it left forced out after it (a bound on the
    pages and bytes, not on the CPU), beside the run's own; a sheet of runs that did not record it has no such
    column (the report campaigns before write-back was measured)."""
    full = {"binlog_format": "ROW", "binlog_row_image": "FULL"}

    def formats(with_back: bool) -> StudyRecord:
        metrics = [{"bytes_per_write": 559, "replica_ms_per_write": ms,
                    **({"replica_ms_per_write_with_writeback": ms + 0.06,
                        "replica_kb_written_per_write_with_writeback": kb} if with_back else {})}
                   for ms, kb in ((0.30, 120.5), (0.32, 121.5))]
        return study_of({"name": "binlog-format", "cells": [{"name": "ROW FULL", "knobs": full, "changed": {}}],
                         "units": [{"cell": "ROW FULL", "scenario": "write", "measure": "run", "metrics": m}
                                   for m in metrics]})

    text = "\n".join(costsheet.cost_sheet([formats(True)]))
    assert "| replica CPU-ms/write with write-back | replica KB written/write with write-back |" in text
    assert "| ROW FULL | 559 | – | – | 0.31 [0.3–0.32] | 0.37 [0.36–0.38] | 121 [120–122] |" in text, text
    assert "*with write-back*: the run's figure with its own dirty pages forced out" in text
    before = "\n".join(costsheet.cost_sheet([formats(False)]))
    assert "with write-back" not in before and "| ROW FULL | 559 | – | – | 0.31 [0.3–0.32] | – |" in before, before


def test_a_failed_unit_counts_as_not_measured() -> None:
    # what study.json keeps of a run that failed in its preparation
    kept = {"bytes_per_write": None, "cpu_net_of_idle": False}
    assert not measured(StudyUnit.model_validate({"metrics": kept, "status": "FAILED"}))
    assert not measured(StudyUnit.model_validate({"metrics": {}, "status": "ok"}))
    assert measured(StudyUnit.model_validate({"metrics": {"bytes_per_write": 568.0}, "status": "ok"}))


def test_a_units_metrics_record_declares_every_key_the_map_is_written_with() -> None:
    from replbench.analysis.studymetrics import METRICS, figure_of
    from replbench.core.results import UnitMetrics

    empty = {"run": summary_of({}), "apply-capacity": apply_of({}), "big-transaction": bigtx_of({}),  # by kind
             "live": apply_of({}), "replay": apply_of({})}
    written = {k for kind in studyfile.MEASURES for k in unit_metrics(kind, empty[kind]).model_fields_set}
    assert written == set(UnitMetrics.model_fields)
    # figure_of reads a metric's figure by its key: a field of its own for every metric of the registry
    assert {m.key for m in METRICS} <= set(UnitMetrics.model_fields)
    assert figure_of(UnitMetrics(bytes_per_write=568.0), "bytes_per_write") == 568.0
    with pytest.raises(KeyError):
        figure_of(UnitMetrics(), "passed")  # a qualifier, not a metric
    with pytest.raises(TypeError):  # a unit's kind names the record its metrics are read from
        unit_metrics("run", empty["apply-capacity"])


def test_each_study_says_what_its_own_kind_of_unit_measured_and_verified() -> None:
    from replbench.report.provenance import cpu_kind, net_of_idle, study_rows, verified

    def unit(measure: str, metrics: dict, cell: str = "a") -> dict:
        return {"cell": cell, "measure": measure, "status": "ok", "metrics": {"bytes_per_row": 1.0, **metrics}}

    def study(*units: dict, scenario: str = "write-bulk") -> StudyRecord:
        data = {"name": "s", "scenarios": [scenario], "units": list(units)}
        data["cpu_net_of_idle"] = net_of_idle(study_of(data), Path("/nonexistent"))
        return study_of(data)

    big = study(unit("big-transaction", {"cpu_net_of_idle": False}),
                {**unit("big-transaction", {}), "status": "failed"})
    # a big transaction has no CPU figure, and its rows are checked on the master: not "gross", not "not verified"
    assert cpu_kind(big) == "- **CPU figures**: none (each unit times one transaction and counts its bytes and lag)"
    assert study_rows(big) == ("- **Rows changed**: 1 of 2 big transactions left every row of their range "
                               "holding the new value (checked on the master afterwards)")
    drains = study(unit("apply-capacity", {"cpu_net_of_idle": True}), scenario="write")
    assert "net of idle (each drain's CPU" in cpu_kind(drains) and "not checked row by row" in study_rows(drains)
    mixed = study(unit("run", {"cpu_net_of_idle": True, "rows_changed_pct": 100.0}),
                  unit("apply-capacity", {"cpu_net_of_idle": True}), scenario="write")
    assert "each run's and each drain's" in cpu_kind(mixed)
    assert study_rows(mixed).startswith("- **Rows changed**: verified in 1 of 1 run units; 1 apply-capacity")
    old = study(unit("run", {"cpu_net_of_idle": False}), scenario="write")
    assert "gross (measured before runs had an idle window" in cpu_kind(old) and "not verified" in study_rows(old)
    # a read run has no rows to check: beside verified write runs it leaves the study verified (cost-model-rates)
    reads = study_of({"name": "s", "scenarios": ["write", "read"], "units": [
        {**unit("run", {"rows_changed_pct": 100.0}), "scenario": "write"},
        {**unit("run", {}, cell="r"), "scenario": "read"}]})
    assert verified(reads) and "not verified" not in study_rows(reads)
    assert not verified(study_of({"name": "s", "scenarios": ["write"], "units": [
        {**unit("run", {}), "scenario": "write"}]}))


def test_the_big_transaction_table_follows_the_study_files_order() -> None:
    names = ["1,000 FULL", "1,000 STATEMENT", "1,000,000 FULL"]
    data = {"name": "big-transaction", "repeat": 1, "cells": [{"name": n} for n in names],
            "units": [{"cell": n, "scenario": "write-bulk", "status": "ok", "metrics": {"bigtx_binlog_mb": 1.0}}
                      for n in reversed(names)]}  # run in another (Williams) order
    rows = [line.split(" | ")[0][2:] for line in costsheet.big_transactions([study_of(data)])
            if line.startswith("| 1")]
    assert rows == names


def test_study_json_holds_each_cell_whole_with_its_knobs_as_the_cell_has_them() -> None:
    # cell_records' records are study.json's cells: every field given, so a cell without a scenario of its own
    # writes null rather than leaving the key out, and a knob is written as the cell types it (0, not "0")
    cells = [document_of(c) for c in studyfile.cell_records(studyfile.load("durability").cells)]
    assert cells[1] == {"name": "sync_binlog=1 flush_log_at_trx_commit=0", "scenario": None,
                        "knobs": {**knobs.Knobs().as_dict(), "flush_log_at_trx_commit": 0},
                        "changed": {"flush_log_at_trx_commit": 0}}


def test_a_cell_is_compared_with_the_first_cell_sharing_its_baseline_per_values() -> None:
    from replbench.analysis.findings import study_findings
    from replbench.analysis.studymetrics import baseline_words, baselines

    spec = studyfile.load("working-set")
    base_of = baselines(studyfile.cell_records(spec.cells), list(spec.baseline_per))
    assert base_of["scenario=write buffer_pool=128M"] == "scenario=write-noindex buffer_pool=128M"
    assert base_of["scenario=write-noindex buffer_pool=1G"] == "scenario=write-noindex buffer_pool=1G"  # its own
    assert baselines(studyfile.cell_records(spec.cells), [])["scenario=write buffer_pool=1G"] == \
        "scenario=write-noindex buffer_pool=4G"  # without baseline_per: the first cell of all
    # indexes cost 2x at each pool; the pool alone costs 10x: per pool the finding is the 2x, never a 20x
    cost = {"ni 4G": [1.0, 1.02, 0.98], "ni 1G": [10.0, 10.2, 9.8], "ix 4G": [2.0, 2.04, 1.96],
            "ix 1G": [20.0, 20.4, 19.6]}
    cells = list(cost)
    base_of = {"ni 4G": "ni 4G", "ni 1G": "ni 1G", "ix 4G": "ni 4G", "ix 1G": "ni 1G"}
    units = [StudyUnit.model_validate({"cell": c, "scenario": "write", "metrics": {"replica_ms_per_write": v}})
             for c, vs in cost.items() for v in vs]
    rows = compare_cells(units, cells, base_of)["write"]["replica_ms_per_write"]
    assert rows["ix 1G"].ratio == 2.0 and rows["ix 1G"].baseline == "ni 1G" and rows["ni 1G"].ratio is None
    found = study_findings(study_of({"comparison": compare_cells(units, cells, base_of)}), ["replica_ms_per_write"])
    assert sorted((f.cell, f.baseline, round(f.factor, 2)) for f in found) == [
        ("ix 1G", "ni 1G", 2.0), ("ix 4G", "ni 4G", 2.0)] and found[0].comparisons == 2
    data = {"cells": [{"name": c} for c in cells], "baseline_per": ["buffer_pool"], "baselines": base_of}
    assert baseline_words(study_of(data)) == "the first cell with the same buffer_pool: `ni 4G`, `ni 1G`"
    assert baseline_words(study_of({"cells": [{"name": c} for c in cells]})) == "`ni 4G`"


@pytest.mark.unit
def test_a_cell_whose_threads_reach_or_replicas_outnumber_the_hosts_cores_is_core_bound_and_says_so() -> None:
    from replbench.analysis.studymetrics import core_bound, core_ceiling_text
    from replbench.report.studies import study_line

    def cell(name: str, threads: int = 0, replicas: int | None = None) -> dict:
        changed = {**({"parallel_threads": threads} if threads else {}),
                   **({"replicas": str(replicas)} if replicas else {})}
        return {"name": name, "scenario": "write", "knobs": {**knobs.Knobs().as_dict(), "parallel_threads": threads},
                "changed": changed}

    cells = [cell("serial"), cell("2 optimistic", 2), cell("4 optimistic", 4), cell("replicas=1", replicas=1),
             cell("replicas=4", replicas=4)]
    records = [StudyCell.model_validate(c) for c in cells]
    # threads as the apply-capacity block judges them (reaching the cores); mariadbd processes outnumbering them
    assert [(b.cell, b.what) for b in core_bound(records, 2)] == [
        ("2 optimistic", "2 applier threads"), ("4 optimistic", "4 applier threads"),
        ("replicas=4", "5 mariadbd (the master and 4 replicas)")]
    assert [b.cell for b in core_bound(records, 8)] == []
    assert core_bound(records, None) == []  # the host's cores not recorded: nothing judged
    data = study_of({"name": "parallel-apply", "cells": cells[:3], "cores": 2, "primary": []})
    text = core_ceiling_text(data)
    assert text is not None and text.startswith("on this host's 2 cores, which every role shares, `2 optimistic` "
                                                "runs 2 applier threads; `4 optimistic` runs 4 applier threads: ")
    assert core_ceiling_text(data, brief=True) == "core-bound: 2 applier threads / 4 applier threads on 2 cores"
    assert study_line(data, "x").endswith("(core-bound: 2 applier threads / 4 applier threads on 2 cores).")
    # a study from before the cores were recorded reads them from its kept meta; without either, nothing is said
    old = study_of({"name": "fan-out", "cells": cells[3:], "meta": {"host": {"cores": 2}}})
    assert core_ceiling_text(old, brief=True) == "core-bound: 5 mariadbd on 2 cores"
    assert core_ceiling_text(study_of({"name": "fan-out", "cells": cells[3:]})) is None
    assert "core ceiling: on this host's 2 cores" in study.render_table(data)


@pytest.mark.unit
def test_a_cells_clients_make_it_a_closed_loop_and_only_a_run_measure_takes_them(tmp_path: Path) -> None:
    spec = studyfile.load("semi-sync-clients")
    assert [c.clients for c in spec.cells] == [1, 1, 1, 4, 4, 4, 8, 8, 8]
    assert spec.cells[4].changed() == {"semi_sync": "after_sync", "link": "replica1=20ms,replica2=20ms",
                                      "clients": "4"}
    bad = tmp_path / "drain.toml"
    bad.write_text('description = "x"\nquestion = "x"\nscenarios = ["write"]\nrate = 100\nmeasure = ["apply-capacity"]'
                   '\nprimary = ["apply_trx_per_s"]\n[vary]\nclients = [1, 4]\n')
    with pytest.raises(studyfile.StudyError, match="clients.*must be only \"run\""):
        studyfile.load(str(bad))
    many = tmp_path / "many.toml"
    many.write_text('description = "x"\nquestion = "x"\nscenarios = ["write"]\nrate = 100\n'
                    '[vary]\nclients = [1, 5000]\n')
    with pytest.raises(studyfile.StudyError, match="at most 1024 clients"):
        studyfile.load(str(many))


def test_a_plot_draws_each_metric_against_a_key_with_a_line_per_value_of_another(tmp_path: Path) -> None:
    """[plot]: the committed working-set study's cells placed by pool and scenario; two cells at one point, or a key
    that is no knob, refused in one line."""
    from replbench.report.plots import line_points

    spec = studyfile.load("working-set")
    assert spec.plot is not None and (spec.plot.x, spec.plot.lines) == ("buffer_pool", "scenario")
    cells = studyfile.cell_records(spec.cells)
    record = StudyRecord(cells=cells)
    rows = {c.name: ComparisonRow(median=float(i), min=i - 0.5, max=i + 0.5) for i, c in enumerate(cells)
            if c.name is not None}
    points = line_points(record, rows, list(rows), spec.plot)
    assert points.xs == ["4G", "1G", "128M"] and set(points.lines) == {"write-noindex", "write"}
    assert [p[0] for p in points.lines["write"]] == [0, 1, 2]
    assert points.lines["write-noindex"][0] == (0, 0.0, -0.5, 0.5)
    for plot, message in (('x = "binlog_format"', "one point for two cells"),
                          ('x = "buffer_pool"\nlines = "nope"', "names 'nope', not a knob or a cell key")):
        text = GOOD.replace("[vary]", f"[plot]\n{plot}\n[vary]").replace('binlog_format = ["ROW", "STATEMENT"]',
                                                                        'binlog_format = ["ROW", "STATEMENT"]\n'
                                                                        'buffer_pool = ["4G", "1G"]')
        with pytest.raises(studyfile.StudyError) as err:
            studyfile.load(str(write_study(tmp_path, text, "plot")))
        assert message in str(err.value) and "\n" not in str(err.value), err.value
