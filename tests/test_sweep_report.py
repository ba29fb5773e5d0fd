"""Sweeps, report.md and compare: verdicts and the stop rule on synthetic step summaries, a small real sweep and
report, report determinism, compare with its noise band."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replbench import compare, report, sweep
from replbench.config import Settings
from replbench.run import RunOptions
from replbench.scenario import PassCriteria, load

from .conftest import env_for, run_cli

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CRITERIA = PassCriteria()


def summary(rate: int = 1000, success: float = 1.0, achieved: float | None = None, p99: float = 10.0,
            catch: float | None = 0.5, status: str = "ok") -> dict:
    return {"status": status, "success": success, "rate_achieved": rate if achieved is None else achieved,
            "latency_ms": {"p50": 1.0, "p99": p99, "max": p99}, "catch_up_s": {"replica1": catch, "replica2": 0.1}}


@pytest.mark.parametrize("kwargs,passed", [
    ({}, True),
    ({"success": 0.999}, True),                 # exactly at the limit passes
    ({"success": 0.9989}, False),
    ({"achieved": 990.0}, True),
    ({"achieved": 989.9}, False),
    ({"p99": 1000.0}, True),
    ({"p99": 1000.1}, False),
    ({"catch": 30.0}, True),
    ({"catch": 30.1}, False),
    ({"catch": None}, False),                   # never caught up
    ({"status": "FAILED"}, False),              # checksum mismatch
])
def test_step_verdicts_at_the_edges(kwargs: dict, passed: bool) -> None:
    ok, reasons = sweep.evaluate(summary(**kwargs), CRITERIA, 1000)
    assert ok is passed, reasons
    assert bool(reasons) is not passed


def test_median_of_repeats_decides() -> None:
    med = sweep.median_summary([summary(p99=5), summary(p99=2000), summary(p99=7)])
    assert sweep.evaluate(med, CRITERIA, 1000)[0] is True
    failed = sweep.median_summary([summary(), summary(status="FAILED"), summary()])
    assert sweep.evaluate(failed, CRITERIA, 1000)[0] is False


def step(rate: int, passed: bool) -> sweep.StepResult:
    return sweep.StepResult(rate, [], passed, [] if passed else ["x"])


def test_refinement_bisects_and_goes_below_a_failing_first_step() -> None:
    assert sweep.next_refine_rate([step(2000, True), step(2400, False)]) == 2200
    assert sweep.next_refine_rate([step(2000, True), step(2050, False)]) is None  # within 5 %
    assert sweep.next_refine_rate([step(200, False)]) == 100
    assert sweep.next_refine_rate([step(200, False), step(100, False), step(50, True)]) == 75
    assert sweep.next_refine_rate([step(1, False)]) is None
    assert sweep.next_refine_rate([step(200, True), step(400, True)]) is None


def test_stop_rule_runs_one_step_past_the_first_failure(tmp_path: Path, monkeypatch) -> None:
    limit = 1100
    ran: list[int] = []

    def fake_step(self, rate: int, label: str, refined: bool) -> None:
        ran.append(rate)
        self.steps.append(step(rate, rate <= limit))

    monkeypatch.setattr(sweep.Sweep, "_step", fake_step)
    settings = Settings.from_env(env_for(tmp_path))
    s = sweep.Sweep(settings, load("write"), [200, 400, 800, 1200, 1600, 2000, 2400], RunOptions(duration=1),
                    folder=tmp_path / "sw")
    data = s.execute()
    assert ran == [200, 400, 800, 1200, 1600]
    assert data["max_sustainable_rate"] == 800
    ran.clear()
    s = sweep.Sweep(settings, load("write"), [200, 400, 800, 1200, 1600], RunOptions(duration=1), refine=True,
                    folder=tmp_path / "sw2")
    data = s.execute()
    assert ran[:5] == [200, 400, 800, 1200, 1600] and ran[5:] == [1000, 1100, 1150]
    assert data["max_sustainable_rate"] == 1100
    assert json.loads((tmp_path / "sw2" / "sweep.json").read_text())["max_sustainable_rate"] == 1100


def test_a_small_real_sweep_and_its_report(topo: Settings, tmp_path: Path) -> None:
    env = env_for(topo.state)
    for name, rates in (("write", "30,60"), ("write-noindex", "30,60")):
        proc = run_cli(["sweep", name, "--rates", rates, "--duration", "2s"], env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "max sustainable rate: ≥ 60 rps (no step failed" in proc.stdout
        assert "PASS" in proc.stdout
    output = tmp_path / "report.md"
    proc = run_cli(["report", "--output", str(output)], env)
    assert proc.returncode == 0, proc.stderr
    text = output.read_text()
    for section in ("# replbench report", "## What the indexes cost",
                    "`write` (4 secondary indexes) vs `write-noindex`", "## Sweep `write`",
                    "## Sweep `write-noindex`",
                    "**Max sustainable rate: ≥ 60 rps (no step failed: the ladder ended first)**",
                    "| rate asked |", "master CPU-ms/req", "binlog bytes/write", "Gunicorn cpu:", "Mysql cpu:"):
        assert section in text, section
    links = [line.split("](")[1].rstrip(")") for line in text.splitlines() if line.startswith("![")]
    assert len(links) >= 6 + 4  # 3 sweep plots × 2 sweeps + one latency plot per step
    for link in links:
        png = output.parent / link
        assert png.read_bytes()[:8] == PNG_MAGIC, link
    first = text
    proc = run_cli(["report", "--output", str(output)], env)
    assert output.read_text() == first  # deterministic


def write_run(folder: Path, p99: float, app_cpu: float, rate: float = 1000.0) -> Path:
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps({
        "rate_achieved": rate, "success": 1.0, "latency_ms": {"p50": 2.0, "p99": p99},
        "cpu_mean_percent": {"app": app_cpu, "master": 5, "replica1": 50, "replica2": 50},
        "cpu_ms_per_request": {"app": app_cpu / 100, "master": 0.05, "replica1": 0.5, "replica2": 0.5},
        "lag": {"replica1": {"p99_ms": 100}, "replica2": {"p99_ms": 100}}, "binlog": {"bytes_per_write": None}}))
    return folder


def test_compare_labels_changes_inside_the_band_as_noise(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", p99=10.0, app_cpu=100.0)
    new = write_run(tmp_path / "new", p99=10.4, app_cpu=130.0)
    table = compare.compare(base, new, band=5.0)
    rows = {line.split("|")[1].strip(): line for line in table.splitlines() if line.startswith("| ")}
    assert rows["p99 latency ms"].rstrip(" |").endswith("noise")
    assert "+4.0%" in rows["p99 latency ms"]
    assert rows["app CPU %"].rstrip(" |").endswith("worse") and "+30.0%" in rows["app CPU %"]
    assert rows["achieved rate"].rstrip(" |").endswith("noise")
    wide = compare.compare(base, new, band=50.0)
    assert "worse" not in wide


def test_compare_cli_saves_under_results(topo: Settings, tmp_path: Path) -> None:
    base = write_run(tmp_path / "a", p99=10.0, app_cpu=100.0)
    new = write_run(tmp_path / "b", p99=20.0, app_cpu=100.0)
    proc = run_cli(["compare", str(base), str(new), "--results", str(tmp_path / "results")], env_for(topo.state))
    assert proc.returncode == 0, proc.stderr
    assert "| p99 latency ms | 10 | 20 | +10 | +100.0% | worse |" in proc.stdout
    assert list((tmp_path / "results").glob("compare-*.md"))
    assert run_cli(["compare", str(base), str(tmp_path / "nope")], env_for(topo.state)).returncode == 2


def test_report_on_empty_results(tmp_path: Path) -> None:
    settings = Settings.from_env(env_for(tmp_path))
    out = report.generate(settings, tmp_path / "r.md")
    assert "No sweep found" in out.read_text()


def test_report_shows_the_newest_sweep_of_each_scenario_and_lists_the_rest(tmp_path: Path) -> None:
    for name, scenario in (("sweep-20260101-000000-read", "read"), ("sweep-20260102-000000-read", "read"),
                           ("sweep-20260101-000000-write", "write")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "sweep.json").write_text(json.dumps({"scenario": scenario}))
    newest = report.newest_per_scenario(report.find_sweeps(tmp_path))
    assert newest == {"read": tmp_path / "sweep-20260102-000000-read",
                      "write": tmp_path / "sweep-20260101-000000-write"}


def test_max_rate_is_labelled_a_bound_when_the_ladder_did_not_bracket_it() -> None:
    def data(*verdicts: tuple[int, bool]) -> dict:
        steps = [{"rate": r, "passed": p} for r, p in verdicts]
        return {"steps": steps, "max_sustainable_rate": sweep.max_sustainable(
            [sweep.StepResult(r, [], p, []) for r, p in verdicts])}

    assert sweep.describe_max(data((200, True), (400, False))) == "200 rps"
    assert sweep.describe_max(data((200, True), (400, True))).startswith("≥ 400 rps")
    assert sweep.describe_max(data((1, False), (2, False))).startswith("below 1 rps")
    assert sweep.describe_max({"steps": []}) == "–"
