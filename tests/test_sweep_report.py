"""Sweeps, markdown.md and compare: verdicts and the stop rule on synthetic step summaries, a small real sweep and
report, report determinism, compare with its noise band."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from app.tuning import CODEL_QUEUE_MS
from replbench.analysis import compare, verdicts
from replbench.core import stats
from replbench.core.config import ROOT, Settings
from replbench.core.results import document_of, summary_of, sweep_of
from replbench.core.scenario import PassCriteria, load
from replbench.experiments import sweep
from replbench.experiments.run import RunOptions
from replbench.report import markdown, sources
from replbench.report.sweeps import SWEEPS_PAGE

from .conftest import env_for, run_cli, run_main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CRITERIA = PassCriteria()


def summary(rate: int = 1000, success: float = 1.0, goodput: float | None = None, p99: float = 10.0,
            catch: float | None = 0.5, status: str = "ok") -> dict:
    return {"status": status, "success": success, "goodput": rate if goodput is None else goodput,
            "latency_ms": {"p50": 1.0, "p99": p99, "max": p99}, "catch_up_s": {"replica1": catch, "replica2": 0.1}}


def evaluate(s: dict, criteria: PassCriteria, rate: int) -> tuple[bool, list[str], list[str]]:
    """A step of one run, as experiments/sweep judges it (analysis/verdicts.step_verdict)."""
    v = verdicts.step_verdict([summary_of(s)], criteria, rate)
    return v.passed, v.reasons, [n.text for n in v.notes]


@pytest.mark.parametrize("kwargs,passed", [
    ({}, True),
    ({"success": 0.999}, True),                 # exactly at the limit passes
    ({"success": 0.9989}, False),
    ({"goodput": 990.0}, True),
    ({"goodput": 989.9}, False),
    ({"p99": 1000.0}, True),
    ({"p99": 1000.1}, False),
    ({"catch": 30.0}, True),
    ({"catch": 30.1}, False),
    ({"catch": None}, False),                   # never caught up
    ({"status": "FAILED"}, False),              # checksum mismatch
])
def test_step_verdicts_at_the_edges(kwargs: dict, passed: bool) -> None:
    ok, reasons, _ = evaluate(summary(**kwargs), CRITERIA, 1000)
    assert ok is passed, reasons
    assert bool(reasons) is not passed


def test_median_of_repeats_decides() -> None:
    med = verdicts.median_summary([summary_of(summary(p99=p99)) for p99 in (5, 2000, 7)])
    assert evaluate(med, CRITERIA, 1000)[0] is True
    failed = verdicts.median_summary([summary_of(summary(status=status)) for status in ("ok", "FAILED", "ok")])
    assert evaluate(failed, CRITERIA, 1000)[0] is False


def test_a_pass_with_a_saturated_host_or_client_errors_is_qualified() -> None:
    ok, reasons, notes = evaluate({**summary(), "saturation": ["host CPU saturated (196 % of 200 %)"],
                                         "client_errors": 12}, CRITERIA, 1000)
    assert ok and not reasons
    assert notes == ["host CPU saturated (196 % of 200 %)", "12 client-side errors (load generator limit)"]
    step = sweep.StepResult(1000, [], True, [], notes=notes)
    assert step.verdict.startswith("PASS* (host CPU saturated")
    # the server is judged on server-side success: client-side failures do not fail the step
    ok, _, _ = evaluate({**summary(success=0.99), "server_success": 1.0, "client_errors": 100}, CRITERIA, 1000)
    assert ok


def step(rate: int, passed: bool) -> sweep.StepResult:
    return sweep.StepResult(rate, [], passed, [] if passed else ["x"])


def test_refinement_bisects_and_goes_below_a_failing_first_step() -> None:
    assert sweep.next_refine_rate([step(2000, True), step(2400, False)]) == 2200
    assert sweep.next_refine_rate([step(2000, True), step(2050, False)]) is None  # within 5 %
    assert sweep.next_refine_rate([step(200, False)]) == 100
    assert sweep.next_refine_rate([step(200, False), step(100, False), step(50, True)]) == 75
    assert sweep.next_refine_rate([step(1, False)]) is None
    assert sweep.next_refine_rate([step(200, True), step(400, True)]) is None


def test_stop_rule_goes_on_after_a_dip_and_stops_after_two_failures_in_a_row(tmp_path: Path, monkeypatch) -> None:
    ran: list[int] = []

    def fake_step(self, rate: int, label: str, refined: bool) -> None:
        ran.append(rate)
        self.steps.append(step(rate, rate != 800 and rate <= 1300))  # 800: a dip (a noisy p99 just over 1 s)

    monkeypatch.setattr(sweep.Sweep, "_step", fake_step)
    settings = Settings.from_env(env_for(tmp_path))
    data = sweep.Sweep(settings, load("write"), [200, 400, 800, 1200, 1600, 2000, 2400], RunOptions(duration=1),
                       folder=tmp_path / "sw").execute()
    assert ran == [200, 400, 800, 1200, 1600, 2000]
    assert data.max_sustainable_rate == 1200


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
    assert data.max_sustainable_rate == 800
    ran.clear()
    s = sweep.Sweep(settings, load("write"), [200, 400, 800, 1200, 1600], RunOptions(duration=1), refine=True,
                    folder=tmp_path / "sw2")
    data = s.execute()
    assert ran[:5] == [200, 400, 800, 1200, 1600] and ran[5:] == [1000, 1100, 1150]
    assert data.max_sustainable_rate == 1100
    assert json.loads((tmp_path / "sw2" / "sweep.json").read_text())["max_sustainable_rate"] == 1100


def _confirming(tmp_path: Path, monkeypatch, outcomes: dict[int, list[str]], ladder: list[int], limit: int,
                confirm: int = 3) -> tuple[dict, list[int]]:
    """A sweep whose ladder steps pass up to `limit` (each step replaced), then `--confirm`'s rounds as real Run
    calls replaced by summaries judged by the one evaluator: per rate, its runs' outcomes in order ("pass": p99
    10 ms, "fail": p99 2 s, "stop": interrupted). Returns sweep.json's document and the rates confirm ran, in
    order."""
    ran: list[int] = []

    def fake_step(self, rate: int, label: str, refined: bool) -> None:
        self.steps.append(step(rate, rate <= limit))

    class FakeRun:
        def __init__(self, settings, scenario, rate, options, folder) -> None:
            self.rate = rate

        def execute(self):
            ran.append(self.rate)
            said = outcomes[self.rate].pop(0)
            got = {"status": "interrupted"} if said == "stop" else summary(self.rate, p99=10.0 if said == "pass"
                                                                           else 2000.0)
            return type("Result", (), {"summary": summary_of(got)})()

    monkeypatch.setattr(sweep.Sweep, "_step", fake_step)
    monkeypatch.setattr(sweep, "Run", FakeRun)
    settings = Settings.from_env(env_for(tmp_path))
    data = document_of(sweep.Sweep(settings, load("write"), ladder, RunOptions(duration=1), folder=tmp_path / "sw",
                                   confirm=confirm).execute())
    assert json.loads((tmp_path / "sw" / "sweep.json").read_text()).get("boundary") == data.get("boundary")
    return data, ran


def test_confirm_runs_the_maximum_and_the_first_failing_rate_interleaved_and_says_what_they_did(
        tmp_path: Path, monkeypatch) -> None:
    ladder = [200, 400, 800, 1200, 1600]
    data, ran = _confirming(tmp_path / "a", monkeypatch, {800: ["pass"] * 3, 1200: ["fail"] * 3}, ladder, 1100)
    assert ran == [800, 1200, 1200, 800, 800, 1200]  # each round alternates which rate goes first
    assert data["max_sustainable_rate"] == 800 and data["boundary"]["confirmed"] is True
    assert [(r["round"], r["rate"], r["passed"]) for r in data["boundary"]["runs"]][:2] == [(1, 800, True),
                                                                                           (1, 1200, False)]
    assert verdicts.describe_max(sweep_of(data)) == (
        "800 rps, confirmed (800 rps passed 3 of 3, 1200 rps 0 of 3 in 3 interleaved rounds at the boundary; "
        "2 needed)")
    data, _ = _confirming(tmp_path / "b", monkeypatch, {800: ["fail", "pass", "fail"], 1200: ["fail"] * 3},
                          ladder, 1100)
    assert data["boundary"]["confirmed"] is False and verdicts.describe_max(sweep_of(data)).endswith(
        "(800 rps passed 1 of 3, 1200 rps 0 of 3 in 3 interleaved rounds at the boundary; it passed fewer than 2: "
        "the maximum may lie lower)")
    data, _ = _confirming(tmp_path / "c", monkeypatch, {800: ["pass"] * 3, 1200: ["pass", "fail", "pass"]},
                          ladder, 1100)
    assert "1200 rps passed 2 or more: the maximum may lie higher)" in verdicts.describe_max(sweep_of(data))
    # no step failed: the top of the ladder alone, three times; nothing passed: nothing to confirm
    data, ran = _confirming(tmp_path / "d", monkeypatch, {400: ["pass"] * 3}, [200, 400], 1100)
    assert ran == [400, 400, 400] and data["boundary"]["confirmed"] is True and "fail_rate" not in data["boundary"]
    assert verdicts.describe_max(sweep_of(data)) == (
        "≥ 400 rps (no step failed: the ladder ended first), confirmed (400 rps passed 3 of 3 in 3 interleaved "
        "rounds at the boundary; 2 needed)")
    data, ran = _confirming(tmp_path / "e", monkeypatch, {}, [200, 400], 100)
    assert ran == [] and "boundary" not in data
    # interrupted in its rounds: the sweep says so and what ran is kept, confirming nothing
    data, ran = _confirming(tmp_path / "f", monkeypatch, {800: ["pass", "pass"], 1200: ["fail", "stop"]}, ladder,
                            1100)
    assert ran == [800, 1200, 1200] and data["status"] == "interrupted" and data["boundary"]["confirmed"] is False
    assert verdicts.describe_max(sweep_of(data)).endswith("at the boundary; the rounds were interrupted)")


def test_confirm_below_zero_is_a_usage_error() -> None:
    code, out, err = run_main(["sweep", "write", "--confirm", "-1"])
    assert code == 2 and out == "" and "--confirm must be 0 (none) or more rounds" in err and "Traceback" not in err


SWEEP_TRIES = 3  # runs of a sweep at most, until its steps pass (the host decides, not the code)


def test_a_small_real_sweep_and_its_report(topo: Settings, tmp_path: Path) -> None:
    env = env_for(topo.state)
    earlier = run_cli(["sweep", "write", "--rates", "30", "--duration", "2s", "--confirm", "1"], env)  # superseded
    assert earlier.returncode == 0, earlier.stdout + earlier.stderr
    # --confirm 1: the top of the ladder (no step failed, or the sweep says no step passed) run once more, a real
    # run of its own judged as the steps are, in sweep.json and printed
    earlier_sweep = sweep_of(json.loads(next(topo.results.glob("sweep-*-write/sweep.json")).read_text()))
    boundary = earlier_sweep.model_dump(exclude_none=True).get("boundary")
    if "no step passed" not in earlier.stdout:
        assert boundary["rounds"] == 1 and [r["rate"] for r in boundary["runs"]] == [30], boundary
        assert (next(topo.results.glob("sweep-*-write")) / boundary["runs"][0]["folder"] / "summary.json").exists()
        assert "30 rps (confirm, round 1)" in earlier.stdout and "in 1 interleaved round at the boundary" in \
            earlier.stdout, earlier.stdout
    # a step's run shares the sweep's process: its harness time leaves the process's start-up out
    step = next(topo.results.glob("sweep-*-write/*/summary.json"))
    parts = json.loads(step.read_text())["harness_time_s"]
    assert "start_up" not in parts and {"before_attack", "idle_window", "attack", "after_attack"} <= set(parts)
    # the newest write sweep one step (its earlier one ran 30), write-noindex's ladder two: both ran 60, the rate
    # the paired table compares them at
    for name, rates in (("write", "60"), ("write-noindex", "30,60")):
        # what this test reads is the report of passing sweeps; whether a 2 s step passes is the host's to decide
        # (a replica's lag growing 0.05 s per s while the other lane loads the host fails it, rightly), so a sweep
        # a step of which failed is run again, at most twice: the newest sweep of a scenario is the one reported
        for _ in range(SWEEP_TRIES):
            proc = run_cli(["sweep", name, "--rates", rates, "--duration", "2s"], env)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            if "max sustainable rate: ≥ 60 rps (no step failed" in proc.stdout:
                break
        assert "max sustainable rate: ≥ 60 rps (no step failed" in proc.stdout, proc.stdout
        assert "PASS" in proc.stdout
    output = tmp_path / "report.md"
    (topo.results / "report-assets" / "committed-earlier").mkdir(parents=True, exist_ok=True)
    proc = run_cli(["report", "--output", str(output)], env)
    assert proc.returncode == 0, proc.stderr
    text = output.read_text()
    sweeps_page = (output.parent / SWEEPS_PAGE).read_text()  # each sweep's section, beside report.md
    for section in ("# replbench report", "## What was measured", "## How to read the columns",
                    "## Paired sweeps", "### `write` vs `write-noindex`", f"- [`write`]({SWEEPS_PAGE}#sweep-write--",
                    f"- [`write-noindex`]({SWEEPS_PAGE}#sweep-write-noindex--",
                    "max sustainable rate ≥ 60 rps (no step failed: the ladder ended",
                    "master CPU-ms/ok", "binlog bytes/write",
                    "`results/report-assets/committed-earlier`",
                    # the earlier sweep first, as it found (the host decides whether its 2 s step passed)
                    "(the newest sweep; earlier sweeps of it in results/ found "
                    + verdicts.describe_max(earlier_sweep)):
        assert section in text, section
    for section in ("## Sweep `write`", "## Sweep `write-noindex`",
                    "max sustainable rate: ≥ 60 rps (no step failed: the ladder ended"):
        assert section in sweeps_page, section
    assert (topo.results / "report-assets" / "committed-earlier").is_dir()  # never deleted
    links = [line.split("](")[1].rstrip(")") for line in sweeps_page.splitlines() if line.startswith("![")]
    assert len(links) >= 4  # the page shows 2 plots of each sweep (PLOTS_SHOWN); each step's page has every one
    for link in links:
        png = output.parent / link
        assert png.read_bytes()[:8] == PNG_MAGIC, link
    blocks = [line for line in sweeps_page.splitlines() if "blocks.md" in line]
    assert len(blocks) == 2
    block_file = output.parent / blocks[0].split("](")[1].rstrip(")")
    page = block_file.read_text()
    assert "Gunicorn cpu:" in page and "Mysql cpu:" in page
    # the sweep's whole table is on its page; below the knee the default admission sheds nothing, and it says so
    assert "| rate asked | sent/s | goodput/s |" in page and "| shed / peak in flight (bound) | verdict |" in page
    assert "*shed / peak in flight (bound)*: requests the app answered 503" in page
    rows = [line for line in page.splitlines() if line.startswith("| ") and ("| PASS" in line or "| FAIL" in line)]
    assert rows and all(" | 0 / " in row and f" (codel: adaptive, {CODEL_QUEUE_MS} ms of queue" in row for row in rows)
    assert str(topo.state) not in text and str(ROOT) not in text
    first = text
    proc = run_cli(["report", "--output", str(output)], env)
    assert proc.returncode == 0, proc.stderr
    assert output.read_text() == first  # deterministic

    # a fresh clone holds the committed assets and no raw data: the report rebuilds each section from them
    clone = tmp_path / "clone" / "results"
    shutil.copytree(topo.results / "report-assets", clone / "report-assets")
    committed = {p.relative_to(clone): p.read_bytes() for p in clone.rglob("*") if p.is_file()}
    rebuilt_output = tmp_path / "clone" / "report.md"
    proc = run_cli(["report", "--output", str(rebuilt_output)], dict(env, REPLBENCH_RESULTS=str(clone)))
    assert proc.returncode == 0, proc.stderr
    sections = [p for p in (clone / "report-assets").iterdir()
                if any((p / f).exists() for f in ("study.json", "sweep.json", "summary.json", "model.json"))]
    assert len(sections) >= 2  # the two sweeps, and other tests' studies, fault runs, model
    assert f"rebuilt {len(sections)} section(s) from committed assets" in proc.stdout, proc.stdout
    rebuilt = rebuilt_output.read_text()

    def sweeps_part(report_text: str) -> str:
        part = report_text[report_text.index("## Sweeps: where each setup breaks"):report_text.index("## Bookkeeping")]
        return "\n".join(line for line in part.splitlines() if line.strip() and not line.startswith("Older sweeps"))

    assert sweeps_part(rebuilt) == sweeps_part(first).replace(
        os.path.relpath(topo.results, tmp_path), os.path.relpath(clone, rebuilt_output.parent))
    def page_part(text: str) -> str:  # the clone holds no older sweep to name
        return "\n".join(line for line in text.splitlines() if line.strip() and not line.startswith("Older sweeps"))

    assert page_part((rebuilt_output.parent / SWEEPS_PAGE).read_text()) == page_part(sweeps_page.replace(
        os.path.relpath(topo.results, tmp_path), os.path.relpath(clone, rebuilt_output.parent)))
    assert "section(s) were rebuilt" not in rebuilt  # said on the terminal: the file is the same either way
    assert {p.relative_to(clone): p.read_bytes() for p in clone.rglob("*") if p.is_file()} == committed


def write_run(folder: Path, p99: float, app_cpu: float, rate: float = 1000.0, spread: float = 0.0) -> Path:
    """A synthetic run folder: summary.json plus the per-second files compare takes its noise from."""
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps({
        "rate_sent": rate, "goodput": rate, "success": 1.0, "latency_ms": {"p50": 2.0, "p99": p99},
        "cpu_mean_percent": {"app": app_cpu, "master": 5, "replica1": 50, "replica2": 50},
        "cpu_ms_per_request": {"app": app_cpu / 100, "master": 0.05, "replica1": 0.5, "replica2": 0.5},
        "lag": {"replica1": {"p99_ms": 100}, "replica2": {"p99_ms": 100}}, "binlog": {"bytes_per_write": None},
        "attack_start_s": 0.0, "duration_s": 20, "scenario": "get", "rate": int(rate), "status": "ok"}))
    (folder / "meta.json").write_text(json.dumps({"knobs_changed": {}}))
    wobble = [(-1) ** i * spread * (i % 3) for i in range(21)]
    with open(folder / "cpu.csv", "w") as f:
        f.write("elapsed_s,app,master,replica1,replica2,vegeta,harness,host_busy,host_steal\n")
        for i, w in enumerate(wobble):
            f.write(f"{i + 1},{app_cpu + w},5,50,50,10,5,120,0\n")
    with open(folder / "timeline.csv", "w") as f:
        f.write("second,requests,errors,p50_ms,p99_ms,max_ms\n")
        for i, w in enumerate(wobble):
            f.write(f"{i},{rate},0,2.0,{p99 + w / 10},{p99 * 2}\n")
    return folder


def rows_of(table: str) -> dict[str, str]:
    return {line.split("|")[1].strip(): line for line in table.splitlines() if line.startswith("| ")}


def test_compare_of_a_run_with_itself_is_all_noise(tmp_path: Path) -> None:
    run = write_run(tmp_path / "a", p99=10.0, app_cpu=100.0, spread=8.0)
    rows = rows_of(compare.compare(run, run, band=5.0))
    labels = {key: line.rstrip(" |").rsplit("|", 1)[-1].strip() for key, line in rows.items() if key != "metric"}
    assert labels and all(label in ("noise", "missing on both sides") for label in labels.values()), labels


def test_two_single_runs_are_judged_against_recorded_runs_not_their_own_seconds(tmp_path: Path) -> None:
    results = tmp_path / "results"
    for i, cpu in enumerate((96.0, 100.0, 104.0)):  # three recorded runs of get at 1000/s: ±8 between two of them
        write_run(results / f"recorded-{i}", p99=10.0, app_cpu=cpu)
    base = write_run(tmp_path / "base", p99=10.0, app_cpu=100.0, spread=0.5)
    near = write_run(tmp_path / "near", p99=10.0, app_cpu=106.0, spread=0.5)  # +6 %: within the recorded spread
    moved = write_run(tmp_path / "moved", p99=10.0, app_cpu=130.0, spread=0.5)  # +30 %
    # the per-second swings are tiny, so a bootstrap over seconds would call +6 % worse: two runs differ more
    assert rows_of(compare.compare(base, near, results=results))["app CPU %"].rstrip(" |").endswith("noise")
    moved_row = rows_of(compare.compare(base, moved, results=results))["app CPU %"]
    assert moved_row.rstrip(" |").endswith("worse") and "+30.0%" in moved_row
    # the 95 % prediction interval of a difference of two new runs: t(0.975, 2) × sd 4 × √2 = ±24.3
    assert "[-24.3, +24.3]" in moved_row
    assert rows_of(compare.compare(base, moved, band=50.0, results=results))["app CPU %"].rstrip(" |").endswith(
        "noise")


def test_two_single_runs_without_recorded_runs_call_nothing_better_or_worse(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", p99=10.0, app_cpu=100.0, spread=0.5)
    moved = write_run(tmp_path / "moved", p99=20.0, app_cpu=130.0, spread=0.5)
    text = compare.compare(base, moved, results=tmp_path / "empty")
    assert "one run each cannot separate a change from run-to-run noise" in text
    assert " better |" not in text and " worse |" not in text
    assert rows_of(text)["app CPU %"].rstrip(" |").endswith("one run each: not separable from run-to-run noise")


def test_the_noise_estimator_on_samples_with_known_spread() -> None:
    import random

    rng = random.Random(1)
    a = [rng.gauss(100, 10) for _ in range(400)]
    b = [rng.gauss(100, 10) for _ in range(400)]
    low, high = stats.bootstrap_interval(a, b)
    # the standard error of a difference of two means of 400 samples with sd 10 is about 0.71: ±1.4 at 95 %
    assert -3.0 < low < 0 < high < 3.0 and 1.8 < high - low < 3.8
    assert stats.bootstrap_interval([1.0], [2.0, 3.0]) is None
    assert stats.separated([1, 2, 3], [2.5, 4]) is False and stats.separated([1, 2], [3, 4]) is True
    assert stats.spread([3, 1, 2]) == {"median": 2, "min": 1, "max": 3, "n": 3}


def test_compare_cli_saves_under_results(tmp_path: Path) -> None:
    base = write_run(tmp_path / "a", p99=10.0, app_cpu=100.0)
    new = write_run(tmp_path / "b", p99=20.0, app_cpu=100.0)
    env = env_for(tmp_path / "state")
    code, out, err = run_main(["compare", str(base), str(new), "--results", str(tmp_path / "results")], env)
    assert code == 0, err
    assert "| p99 latency ms | 10 | 20 | +10 | +100.0% |" in out
    assert list((tmp_path / "results").glob("compare-*.md"))
    code, _, err = run_main(["compare", str(base), str(tmp_path / "nope")], env)
    assert code == 2 and "nope" in err.splitlines()[-1], err


def test_report_on_empty_results(tmp_path: Path) -> None:
    settings = Settings.from_env(env_for(tmp_path))
    out, kept = markdown.generate(settings, tmp_path / "r.md")
    assert "No sweep found" in out.read_text() and kept == []


def test_report_shows_the_newest_sweep_of_each_scenario_and_lists_the_rest(tmp_path: Path) -> None:
    for name, scenario in (("sweep-20260101-000000-read", "read"), ("sweep-20260102-000000-read", "read"),
                           ("sweep-20260101-000000-write", "write")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "sweep.json").write_text(json.dumps({"scenario": scenario}))
    newest = sources.newest_per_scenario(sources.find_sweeps(sources.Origin.loose(tmp_path)))
    assert newest == {"read": tmp_path / "sweep-20260102-000000-read",
                      "write": tmp_path / "sweep-20260101-000000-write"}


def test_max_rate_is_labelled_a_bound_when_the_ladder_did_not_bracket_it() -> None:
    def data(*verdicts: tuple[int, bool]) -> dict:
        steps = [{"rate": r, "passed": p} for r, p in verdicts]
        return {"steps": steps, "max_sustainable_rate": sweep.max_sustainable(
            [sweep.StepResult(r, [], p, []) for r, p in verdicts])}

    assert verdicts.describe_max(sweep_of(data((200, True), (400, False)))) == "200 rps"
    assert verdicts.describe_max(sweep_of(data((200, True), (400, True)))).startswith("≥ 400 rps")
    assert verdicts.describe_max(sweep_of(data((1, False), (2, False)))).startswith("below 1 rps")
    assert verdicts.describe_max(sweep_of({"steps": []})) == "–"


def test_a_step_of_two_repeats_takes_a_whole_median_of_client_errors() -> None:
    """A count's median of an even number of repeats is a whole count (a summary's client_errors is an int)."""
    med = verdicts.median_summary([summary_of({**summary(), "client_errors": n}) for n in (1, 2)])
    assert med.client_errors in (1, 2)
