"""Campaigns (issue: one command reproduces report.md at one commit): a campaign file's units run into one folder,
recorded with the commit and the calibration around each unit; --resume redoes only what did not finish; a dirty
tree is refused unless allowed; a bad file exits 2."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from replbench.core.config import Settings
from replbench.experiments import campaign

from .conftest import env_for, run_cli

TINY = 'description = "two tiny runs"\n[[units]]\ncommand = "get 20 --duration 2s"\n' \
       '[[units]]\ncommand = "get 30 --duration 2s"\nenv = { REPLBENCH_ADMISSION = "none" }\n'


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
    proc = run_cli(["campaign", str(path), "--dry-run"], {})
    assert proc.returncode == 2 and needle in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_the_shipped_campaigns_parse_and_the_quick_one_fits_half_an_hour() -> None:
    assert {"quick", "report"} <= set(campaign.available())
    assert campaign.load("quick").estimate() <= 30 * 60
    # the report's campaign, the 8M build (~5 min) and the report itself fit one 3-hour session on a fresh machine
    assert campaign.load("report").estimate() <= 145 * 60
    proc = run_cli(["campaign", "quick", "--dry-run"], {})
    assert proc.returncode == 0 and "units, estimated" in proc.stdout


@pytest.mark.parametrize("tail, finished", [
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


def test_a_dirty_tree_is_told_apart(tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "a").write_text("a")
    git("add", "a")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "a")
    assert campaign.git_state(tmp_path)[1] is False
    (tmp_path / "a").write_text("b")
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
    assert "REPLBENCH_ADMISSION=none ./run.sh get 30 --duration 2s" in proc.stdout + proc.stderr
    # a campaign interrupted after its first unit: --resume runs the second only
    data["units"][1]["status"], data["status"] = "failed", "failed"
    (folder / "campaign.json").write_text(json.dumps(data))
    proc = run_cli(["campaign", str(path), "--allow-dirty", "--resume"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(list(folder.glob("*-get-20*/summary.json"))) == 1 and len(list(folder.glob("*-get-30*"))) == 2
    assert json.loads((folder / "campaign.json").read_text())["status"] == "done"
    proc = run_cli(["campaign", str(path), "--allow-dirty", "--resume"], env)
    assert proc.returncode == 1 and "no unfinished campaign" in proc.stderr
