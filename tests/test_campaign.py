"""Campaigns (issue: one command reproduces report.md at one commit): a campaign file's units run into one folder,
recorded with the commit and the calibration around each unit; --resume redoes only what did not finish; a dirty
tree is refused unless allowed; a bad file exits 2."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from replbench.core.config import Settings
from replbench.experiments import campaign, modelcheck, study, studyfile

from .conftest import env_for, run_cli, run_main

TINY = 'description = "two tiny runs"\n[[units]]\ncommand = "get 20 --duration 1s"\n' \
       '[[units]]\ncommand = "get 30 --duration 1s"\nenv = { REPLBENCH_ADMISSION = "none" }\n'


@pytest.mark.parametrize("text,needle", [
    ('description = "x"\n', "no [[units]]"),
    ('colour = "red"\n[[units]]\ncommand = "get 20"\n', "unknown key"),
    ('[[units]]\ncommand = "study nosuchstudy"\n', "nosuchstudy"),
    ('[[units]]\ncommand = "get"\n', "needs a rate"),
    ('[[units]]\ncommand = "get 20"\nwhen = "now"\n', "unknown key"),
    ('[[units]]\ncommand = "get 20"\nenv = { COLOUR = "red" }\n', "COLOUR is not a replbench setting"),
    ('[[units]]\ncommand = "get 20"\nenv = { REPLBENCH_ADMISSION = "sometimes" }\n', "REPLBENCH_ADMISSION=sometimes"),
])
def test_bad_campaign_files_exit_2(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(text)
    code, _, err = run_main(["campaign", str(path), "--dry-run"])
    assert code == 2 and needle in err and "Traceback" not in err, err


def test_the_shipped_campaigns_parse_and_the_quick_one_fits_half_an_hour() -> None:
    assert {"quick", "report"} <= set(campaign.available())
    assert campaign.load("quick").estimate() <= 30 * 60
    # the report's campaign fits 180 min (issue 73), the 128M sweeps the reference section needs included, model
    # validate at its own estimate (three recorded rounds and the pricing: --repeat 3, its default), the 4G write
    # sweeps' maximum confirmed at the boundary (issue 71). The estimate runs high: at f9994d0 the campaign took 124
    # min of its estimated 149 (0.83)
    report = campaign.load("report")
    validate = sum(u.estimate_s for u in report.units if u.shell.startswith("./run.sh model validate"))
    assert validate == pytest.approx(modelcheck.estimate(repeats=3))  # three rounds recorded, then priced
    assert report.estimate() <= 180 * 60
    assert {u.shell for u in report.units} >= {f"./run.sh sweep {s} --duration 20s --confirm 3"
                                                for s in ("write", "write-noindex")}
    pools = "./run.sh sweep {} --duration 20s --buffer-pool 128M --rates {}"
    assert {u.shell for u in report.units} >= {pools.format("write", "200,400,800,1200"),
                                              "./run.sh model validate --record --repeat 1",
                                              "./run.sh model validate --recorded",
                                              pools.format("write-noindex", "1200,1600,2400,3600")}
    # per-index at both pools, and semi-sync's throughput in a closed loop beside its cost (report.md's answer)
    studied = {(w := u.shell.split(" study ", 1)[1].split())[0]: w for u in report.units if " study " in u.shell}
    assert not any("buffer_pool" in w for w in studied["per-index"]) and "semi-sync-clients" in studied
    code, out, _ = run_main(["campaign", "quick", "--dry-run"])
    assert code == 0 and "units, estimated" in out


def test_a_units_estimate_follows_its_only_flags_and_its_fixed_idle_window(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[[units]]\ncommand = "study semi-sync-distance --only link=none --repeat 2"\n'
                    'env = { REPLBENCH_IDLE_WINDOW = "3s" }\n[[units]]\ncommand = "study semi-sync-distance"\n')
    first, second = campaign.load(str(path)).units
    spec = studyfile.load("semi-sync-distance")
    assert first.estimate_s == study.Plan.of(studyfile.only(spec, ["link=none"]), repeat=2, idle=3.0).estimate()
    assert second.estimate_s == study.Plan.of(spec).estimate()
    path.write_text('[[units]]\ncommand = "study per-index --only buffer_pool=12M"\n')
    code, _, err = run_main(["campaign", str(path), "--dry-run"])
    assert code == 2 and "c.toml:2: units[1].command: --only buffer_pool=12M: no cell" in err, err


@pytest.mark.parametrize("tail, finished", [
    (f"Results: ...\n{campaign.UNIT_FINISHED} (exit 1)\n", True),
    (f"[model validate 10s] applying settings\n{campaign.UNIT_FINISHED} (exit 0)\n", True),
    (f"{campaign.UNIT_FINISHED} (exit 0)\nTraceback (most recent call last):\n", False),
    # what `model fit` and `model validate` print last (the report campaign's units 14 and 15 ran to their end,
    # exit 0, and were marked failed before these were known)
    ("ROW-FULL bench_idx (32 runs, 20 drains):\nmodel: results/model/model.json\n", True),
    ("| case | transactions | rows | binlog bytes: predicted [interval] / measured (error) |\n|---|\n", True),
    ("study folder: results/study-1\n", True),
    ("[model validate 10s] applying settings: reference settings\n", False),
    ("study folder: results/study-1\nTraceback (most recent call last):\n", False),
])
def test_a_unit_counts_as_finished_only_when_it_printed_its_results(tmp_path: Path, tail: str,
                                                                     finished: bool) -> None:
    log = tmp_path / "1.log"
    log.write_text(tail)
    assert campaign._finished(log) is finished


@pytest.mark.parametrize("log_text, outcome", [(f"Results: ...\n{campaign.UNIT_FINISHED} (exit 0)\n", "rejudged"),
                                               ("[sweep] step 3 ...\n", "refused")])
def test_resume_at_another_commit_only_finishes_a_campaign_whose_units_all_ran(tmp_path: Path, log_text: str,
                                                                               outcome: str,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A unit that ran to its end but was marked failed by an older completion check is re-judged from its log
    (nothing rerun, recorded); a unit that really has to run again may not run at another commit."""
    monkeypatch.setattr(campaign, "git_state", lambda root=None: ("1234abc", False))  # this checkout: no git run
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    results = tmp_path / "results"
    folder = results / "campaign-tiny-20990101-000000"
    (folder / "units").mkdir(parents=True)
    (folder / "units" / "2.log").write_text(log_text)
    units = [{"command": "get 20 --duration 1s", "env": {}, "status": "done", "exit_code": 0, "log": "units/1.log"},
             {"command": "get 30 --duration 1s", "env": {"REPLBENCH_ADMISSION": "none"}, "status": "failed",
              "exit_code": 0, "log": "units/2.log"}]
    (folder / "campaign.json").write_text(json.dumps({"name": "tiny", "commit": "0000000", "status": "failed",
                                                      "folder": folder.name, "units": units}))
    env = {"REPLBENCH_STATE": str(tmp_path / "st"), "REPLBENCH_RESULTS": str(results)}
    code, out, err = run_main(["campaign", str(path), "--allow-dirty", "--resume"], env)
    data = json.loads((folder / "campaign.json").read_text())
    if outcome == "rejudged":
        assert code == 0, out + err
        assert data["status"] == "done" and [u["status"] for u in data["units"]] == ["done", "done"]
        assert data["rejudged"][0]["units"] == [2] and data["rejudged"][0]["commit"] == "1234abc"
    else:
        assert code == 1 and "started at commit 0000000" in err, err
        assert data["status"] == "failed" and data["units"][1]["status"] == "failed" and "rejudged" not in data
    assert not list(results.glob("campaign-tiny-*/*-get-*"))  # nothing ran


@pytest.mark.integration  # runs git
def test_a_dirty_tree_is_told_apart(tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "a").write_text("a")
    git("add", "a")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "a")
    assert campaign.git_state(tmp_path)[1] is False
    # what a measurement writes under results/ (an evidence folder's first files) leaves the code the commit's
    (tmp_path / "results" / "readme-assets" / "x").mkdir(parents=True)
    (tmp_path / "results" / "readme-assets" / "x" / "positions.txt").write_text("held at 0-1-5")
    assert campaign.git_state(tmp_path)[1] is False
    (tmp_path / "new.py").write_text("")  # a module not yet added is measured too
    assert campaign.git_state(tmp_path)[1] is True
    (tmp_path / "new.py").unlink()
    (tmp_path / "a").write_text("b")
    assert campaign.git_state(tmp_path)[1] is True
    git("add", "a")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "b")
    (tmp_path / "results" / "kept").write_text("a")  # a tracked results file changed: no longer the commit's
    git("add", "results/kept")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "c")
    (tmp_path / "results" / "kept").write_text("b")
    assert campaign.git_state(tmp_path)[1] is True


def test_a_campaign_runs_into_one_folder_and_resumes_only_what_did_not_finish(topo: Settings,
                                                                                tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    env = env_for(topo.state)
    proc = run_cli(["campaign", str(path), "--allow-dirty"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = next(topo.results.glob("campaign-tiny-*"))
    data = json.loads((folder / "campaign.json").read_text())
    assert data["status"] == "done" and data["commit"] and [u["status"] for u in data["units"]] == ["done", "done"]
    assert all(u["calibration_before"] > 0 and u["calibration_after"] > 0 for u in data["units"])
    assert len(list(folder.glob("*-get-*/summary.json"))) == 2  # the units' runs inside the campaign's folder
    # a unit's env reaches that unit only, and campaign.json records it
    modes = {m.parent.name.split("-get-")[1].split("-")[0]: json.loads(m.read_text())["app"]["admission"]["mode"]
             for m in folder.glob("*-get-*/meta.json")}
    assert modes == {"20": "codel", "30": "none"}, modes  # the default, then the unit's
    assert [u["env"] for u in data["units"]] == [{}, {"REPLBENCH_ADMISSION": "none"}]
    assert "REPLBENCH_ADMISSION=none ./run.sh get 30 --duration 1s" in proc.stdout + proc.stderr
    # every unit's command said last that it returned: that line is the completion check
    assert all((folder / u["log"]).read_text().rstrip().splitlines()[-1].startswith(campaign.UNIT_FINISHED)
               for u in data["units"])
    # a campaign whose second unit failed (a lost node, say): --resume runs the second only
    data["units"][1].update(status="failed", exit_code=1)
    data["status"] = "failed"
    (folder / data["units"][1]["log"]).write_text("replbench: master is not running\n")
    (folder / "campaign.json").write_text(json.dumps(data))
    proc = run_cli(["campaign", str(path), "--allow-dirty", "--resume"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(list(folder.glob("*-get-20*/summary.json"))) == 1 and len(list(folder.glob("*-get-30*"))) == 2
    assert json.loads((folder / "campaign.json").read_text())["status"] == "done"
    proc = run_cli(["campaign", str(path), "--allow-dirty", "--resume"], env)
    assert proc.returncode == 1 and "no unfinished campaign" in proc.stderr
