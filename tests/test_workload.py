"""Workload files (core/workload) and the live units of a study that drive them (measure = ["live"]): a file is
checked whole before anything runs; a study names its workloads in place of scenarios (docs/studies.md, "Live
units"); a replay study names captured binlog files (measure = ["replay"]). The live and replay units themselves,
on real servers (with real sysbench): tests/test_study.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from replbench.core import workload
from replbench.core.config import Settings
from replbench.experiments import study, studyfile
from replbench.load import external

from .conftest import env_for

pytestmark = pytest.mark.unit

RUN = ('run = ["sysbench", "oltp_write_only", "--mysql-host={host}", "--mysql-password={password}", '
       '"--rate={rate}", "--time={seconds}", "run"]\n')
LIVE = ('description = "x"\nquestion = "x"\nmeasure = ["live"]\nworkloads = ["sysbench-write-only", '
        '"sysbench-update-non-index"]\nduration = "300s"\nrepeat = 1\n[rates]\nsysbench-write-only = 150\n'
        'sysbench-update-non-index = 300\n[vary]\nbinlog_row_image = ["FULL", "MINIMAL"]\n')


def write(tmp_path: Path, text: str, name: str = "w") -> str:
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return str(path)


def test_the_committed_workloads_fill_their_placeholders_and_hide_the_password() -> None:
    assert {"sysbench-write-only", "sysbench-update-non-index"} <= set(workload.available())
    for name in workload.available():
        w = workload.load(name)
        words = w.command("run", {"host": "h", "port": "1", "user": "u", "password": "pw", "rate": "150",
                                  "seconds": "298"})
        assert "--rate=150" in words and "--time=298" in words and f"--mysql-db={w.database}" in words, words
        assert not any("{" in word for word in words) and w.package == "sysbench"
        assert "pw" not in external.shown(words, "pw") and external.HIDDEN in external.shown(words, "pw")


@pytest.mark.parametrize(("text", "message"), [
    ('database = "d"\nrun = ["t", "--rate={rate}", "--time={seconds}", "--x={nope}"]\n',
     "unknown placeholder(s) {nope}"),
    ('database = "d"\nrun = ["t", "--time={seconds}"]\n', "must name {rate}"),
    ('database = "d"\nrun = ["t", "--rate={rate}"]\n', "must name {seconds}"),
    ('database = "d"\nprepare = ["t", "--rate={rate}"]\n' + RUN, "prepare: unknown placeholder(s) {rate}"),
    ('database = "d"\nrun = []\n', "run"),
    ('database = "d"\nrunn = ["t"]\n' + RUN, "runn"),
    ('run = ["t", "--rate={rate}", "--time={seconds}"]\n', "database"),
])
def test_a_bad_workload_file_is_refused_in_one_line_naming_the_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(workload.WorkloadError) as err:
        workload.load(write(tmp_path, text))
    assert message in str(err.value) and "\n" not in str(err.value), err.value


def test_a_live_study_names_workloads_and_rates_them_each(tmp_path: Path) -> None:
    spec = studyfile.load(write(tmp_path, LIVE, "live"))
    assert spec.scenarios == ("sysbench-write-only", "sysbench-update-non-index") and spec.measures == ("live",)
    plan = study.Plan.of(spec)
    units = plan.units()
    assert len(units) == 4 and {u.measure for u in units} == {"live"}
    assert sorted(plan.rate_of(u) for u in units) == [150, 150, 300, 300]
    # a unit's window, then the held replica's drain of what it wrote, as an apply-capacity unit's backlog
    first = next(u for u in units if u.scenario == "sysbench-write-only")
    assert plan.unit_seconds(first) == study.apply_seconds(300 * 150, 150) > 300


@pytest.mark.parametrize(("change", "message"), [
    (("measure = [\"live\"]", "measure = [\"live\", \"run\"]"), "no other measure"),
    (("workloads = [", "scenarios = [\"write\"]\nworkloads = ["), "not scenarios"),
    (("\"sysbench-update-non-index\"]", "\"sysbench-update-non-index\", \"nosuch\"]"), "no workload file 'nosuch'"),
    (("[vary]\n", "[vary]\nrows = [3]\n"), "a live unit's load is its workload's"),
    (("measure = [\"live\"]\n", ""), "workloads are written by live units"),
])
def test_a_live_study_that_mixes_in_the_suites_own_load_is_refused(tmp_path: Path, change: tuple[str, str],
                                                                   message: str) -> None:
    with pytest.raises(studyfile.StudyError) as err:
        studyfile.load(write(tmp_path, LIVE.replace(*change), "bad"))
    assert message in str(err.value), err.value


REPLAY = ('description = "x"\nquestion = "x"\nmeasure = ["replay"]\nbinlogs = ["{file}"]\nrepeat = 2\n'
          '[[cells]]\nname = "serial"\n[[cells]]\nname = "4 optimistic"\nparallel_threads = 4\n'
          'parallel_mode = "optimistic"\n')


def test_a_replay_study_replays_its_files_per_cell_interleaved_with_no_rate(tmp_path: Path) -> None:
    (tmp_path / "binlog.000041").write_bytes(b"\xfebin")
    spec = studyfile.load(write(tmp_path, REPLAY.format(file=tmp_path / "binlog.000041"), "replay"))
    assert spec.measures == ("replay",) and spec.scenarios == (studyfile.REPLAY_NAME,) and spec.replica == "replica1"
    assert spec.binlogs == (tmp_path / "binlog.000041",)
    units = study.Plan.of(spec).units()
    assert [(u.cell, u.measure) for u in units][:2] in ([(0, "replay"), (1, "replay")], [(1, "replay"), (0, "replay")])
    assert len(units) == 4 and all(study.Plan.of(spec).unit_seconds(u) == study.REPLAY_SECONDS for u in units)
    described = study.Plan.of(spec).describe()
    assert "2 cells × replays of binlog.000041 on replica1, 2 repeats\n" in described and "/s" not in described
    assert "replica1 put back where the files start" in described


@pytest.mark.parametrize(("change", "message"), [
    (("measure = [\"replay\"]", "measure = [\"replay\", \"run\"]"), "no other measure"),
    (("binlogs = [", "scenarios = [\"write\"]\nbinlogs = ["), "not scenarios"),
    (("repeat = 2", "repeat = 2\nrate = 100"), "no rate"),
    (("binlog.000041", "binlog.000099"), "no such file"),
    (("parallel_mode = \"optimistic\"", "parallel_mode = \"optimistic\"\nbinlog_format = \"STATEMENT\""),
     "sets only the replica's parallel_threads, parallel_mode and binlog_row_image"),
    (("name = \"serial\"", "name = \"serial\"\nload = 2"), "sets only the replica's"),
])
def test_a_replay_study_that_asks_what_a_replay_cannot_apply_is_refused(tmp_path: Path, change: tuple[str, str],
                                                                       message: str) -> None:
    (tmp_path / "binlog.000041").write_bytes(b"\xfebin")
    text = REPLAY.format(file=tmp_path / "binlog.000041").replace(*change)
    with pytest.raises(studyfile.StudyError) as err:
        studyfile.load(write(tmp_path, text, "bad"))
    assert message in str(err.value), err.value


def test_the_driver_asks_for_the_window_less_its_margin(tmp_path: Path) -> None:
    settings = Settings.from_env(env_for(tmp_path))
    driver = external.Driver(settings, workload.load("sysbench-write-only"), 150, 300.0, Path("driver.txt"))
    assert driver.values["seconds"] == str(round(300 - external.MARGIN_S)) and driver.values["rate"] == "150"
