"""model validate's pure parts (experiments/modelcheck, analysis/validation, report/model): the held-out cases as
--cases spells them, each case's figures from its binlog profile against the measured ones, and the coverage line.
A synthetic model (test_costmodel.synthetic's known coefficients) and the committed decoder snippet's profile
(test_profile: 8 workload transactions, 107 rows, 3 heartbeats, over 77 s); no server, no process."""

from __future__ import annotations

import json
import re
import shutil
import time
from types import SimpleNamespace

import pytest

from replbench.analysis import costmodel, validation
from replbench.analysis import profile as prof
from replbench.core.config import ROOT
from replbench.core.results import (
    Checked,
    Interval,
    KnobSetting,
    Observation,
    OnsetDrain,
    OnsetRun,
    RecordedProfile,
    RecordedRun,
    Validation,
    ValidationCase,
    ValidationRun,
    model_of,
    summary_of,
    validation_of,
)
from replbench.experiments import campaign, modelcheck
from replbench.experiments.run import Clock
from replbench.measure import binlogfile
from replbench.report.model import render_coverage, render_validation

from .conftest import fitted_model, observed, run_main
from .test_costmodel import synthetic
from .test_profile import _snippet_profile

SNIPPET_TRX, SNIPPET_ROWS, SNIPPET_SPAN = 8, 107, 77  # the snippet's workload: bench_idx and bench_noidx updates


# --- the cases ---------------------------------------------------------------------------------------------------

def test_a_case_names_its_setting_and_runs_with_its_knobs() -> None:
    cases = modelcheck.parse_cases("mixed@200, write-mix@200:ROW-MINIMAL,write-mix@100:row-noblob,write@50:STATEMENT")
    assert [(c.scenario, c.rate, c.setting) for c in cases] == [
        ("mixed", 200, "ROW-FULL"), ("write-mix", 200, "ROW-MINIMAL"), ("write-mix", 100, "ROW-NOBLOB"),
        ("write", 50, "STATEMENT")]
    assert [c.knobs.changed() for c in cases] == [{}, {"binlog_row_image": "MINIMAL"},
                                                  {"binlog_row_image": "NOBLOB"}, {"binlog_format": "STATEMENT"}]
    # the run's knobs read back as the model's setting: the direct path prices the case under it
    assert all(costmodel.setting_of(KnobSetting.model_validate(c.knobs.changed())) == c.setting for c in cases)
    assert [c.text for c in cases] == ["mixed@200", "write-mix@200:ROW-MINIMAL", "write-mix@100:ROW-NOBLOB",
                                       "write@50:STATEMENT"]
    assert modelcheck.parse_cases("write-mix@200:ROW-FULL") == (modelcheck.Case("write-mix", 200),)
    # the default: the held-out mix under ROW FULL and ROW MINIMAL (issue 50's done-when), and the mixed scenario
    assert [c.text for c in modelcheck.CASES] == ["mixed@200", "mixed@400", "write-mix@100", "write-mix@200",
                                                  "write-mix@100:ROW-MINIMAL", "write-mix@200:ROW-MINIMAL"]
    one = modelcheck.estimate(modelcheck.CASES[:1], 30)
    assert modelcheck.estimate(modelcheck.CASES[:2], 30) > one > modelcheck.PROFILE_SECONDS + 30


@pytest.mark.parametrize("text, needle", [
    ("", "an empty case"), ("mixed@200,,write@10", "an empty case"), ("write-mix", "write scenario@rate[:SETTING]"),
    ("@200", "write scenario@rate"), ("write-mix@", "whole number"), ("write-mix@0", "whole number"),
    ("write-mix@2.5", "whole number"), ("write-mix@200:ROW-HALF", "unknown setting ROW-HALF"),
    ("write-mix@200:", "unknown setting (none)"), ("write-mix@200:MINIMAL", "settings: ROW-FULL, ROW-MINIMAL")])
def test_a_bad_case_is_refused_with_one_line(text: str, needle: str) -> None:
    with pytest.raises(modelcheck.CaseError, match=re.escape(needle)) as caught:
        modelcheck.parse_cases(text)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("cases, needle", [("write-mix@200:ROW-HALF", "unknown setting ROW-HALF"),
                                           ("write-mix@x", "whole number"), ("nosuch@10", "nosuch")])
def test_model_validate_refuses_a_bad_case_with_exit_2(cases: str, needle: str) -> None:
    code, out, err = run_main(["model", "validate", "--cases", cases])
    errors = [ln for ln in err.splitlines() if ln.startswith("./run.sh: error:")]
    assert code == 2 and out == "" and "Traceback" not in err, err
    assert len(errors) == 1 and needle in errors[0], err


def test_the_attack_window_holds_the_attack_in_whole_seconds_of_the_decoders_clock() -> None:
    now = time.monotonic()
    clock = Clock(zero=now - 40.0, created=now - 40.0, started_up_s=None, start=5.0, end=35.4)  # ended 4.6 s ago
    window = modelcheck.attack_window(clock)
    started, ended = time.time() - 35.0, time.time() - 4.6
    assert window.since in (binlogfile.local_second(started), binlogfile.local_second(started) - 1)
    assert window.until in (binlogfile.local_second(ended) + 1, binlogfile.local_second(ended) + 2)
    assert 31 <= window.until - window.since <= 32  # the 30.4 s attack, from the second it began in to its last


# --- the profile path ----------------------------------------------------------------------------------------------

def _obs(setting: str = "ROW-FULL", reads: int = 0, **measured: float) -> Observation:
    """A held-out run as costmodel.observation gives it: the snippet's counts, and the measured figures."""
    return observed({"setting": setting, "table": "bench_idx", "transactions": SNIPPET_TRX, "rows": SNIPPET_ROWS,
                     "seconds": SNIPPET_SPAN, "replica_reads": reads, "replicas": 2,
                     **{"binlog_bytes": 50_000.0, "master_cpu_s": 0.005, "replica_cpu_s": 0.004, **measured}})


def test_the_profile_path_prices_the_binlogs_workload_over_the_window() -> None:
    model = fitted_model(*synthetic())  # ROW-FULL on bench_idx only
    fitted = model["settings"]["ROW-FULL bench_idx"]
    profile = _snippet_profile(prof.EVERY_ROW)
    assert profile.span_s == SNIPPET_SPAN and profile.heartbeat.transactions == 3
    binlog = fitted["binlog_bytes"]["coef"]
    want = binlog["per_trx"] * SNIPPET_TRX + binlog["per_row"] * SNIPPET_ROWS  # the heartbeat's 3 left out
    measured = round(want * 1.08)
    got = validation.from_profile(model_of(model), profile, _obs(binlog_bytes=measured))
    p = got.binlog_bytes.predicted
    # predict's bytes per second over the profile's span, times the span: the total over the window
    assert p.value == pytest.approx(want, rel=1e-9)
    assert got.binlog_bytes.error_pct == round(100 * (want - measured) / measured, 1) == -7.4
    assert got.binlog_bytes.inside == (p.low <= measured <= p.high)
    assert (got.transactions, got.rows, got.heartbeat_transactions) == (SNIPPET_TRX, SNIPPET_ROWS, 3)
    assert "the model has no fit on bench_noidx" in " ".join(got.notes)  # bench_noidx priced on bench_idx
    # the same counts from the run's own counters: the direct path's figure and interval, to rounding
    direct = validation.from_counts(model_of(model), _obs(binlog_bytes=measured))
    for part in costmodel.EXPECTED:
        for end in ("value", "low", "high"):
            assert getattr(getattr(got, part).predicted, end) == pytest.approx(
                getattr(getattr(direct, part).predicted, end), rel=1e-9), part
    master = fitted["master_cpu_s"]["coef"]
    shape = model_of(model).settings["ROW-FULL bench_idx"].master_cpu_s.rate_shape
    shaped = costmodel.shape_factor(shape, SNIPPET_TRX / SNIPPET_SPAN)
    assert got.master_cpu_s.predicted.value == pytest.approx(
        master["per_trx"] * shaped * SNIPPET_TRX + master["per_row"] * SNIPPET_ROWS, rel=1e-9)
    assert got.master_cpu_s.error_pct == validation.error_pct(got.master_cpu_s.predicted.value, 0.005)


def test_what_the_profile_path_cannot_price_says_why() -> None:
    model = fitted_model(*synthetic())
    profile = _snippet_profile()
    reads = validation.from_profile(model_of(model), profile, _obs(reads=9000))
    assert reads.replica_cpu_s.predicted is None and reads.replica_cpu_s.measured == 0.004
    assert "served 9,000 reads, which no binlog shows" in reads.not_predicted["replica_cpu_s"]
    assert reads.binlog_bytes.predicted is not None  # the writes are still priced
    unfitted = validation.from_profile(model_of(model), profile, _obs("ROW-MINIMAL"))
    assert {part: getattr(unfitted, part).predicted for part in costmodel.EXPECTED} == \
        dict.fromkeys(costmodel.EXPECTED)
    assert unfitted.not_predicted["binlog_bytes"] == "ROW-MINIMAL on bench_idx: the model has no data for it"
    beats = profile.model_copy(update={"lines": [ln for ln in profile.lines if ln.heartbeat]})
    only = validation.from_profile(model_of(model), beats, _obs())
    assert "no workload transactions" in only.not_predicted["master_cpu_s"]


def test_a_case_is_profiled_beside_its_run_and_a_failed_copy_is_recorded(tmp_path, monkeypatch) -> None:
    """_profiled's wiring with the copy and the decoder replaced: the profile file beside the run, the window it
    was asked for, and a copy that fails recorded as the case's profile error; _priced then prices the file."""
    model = fitted_model(*synthetic())
    profile = _snippet_profile()
    asked = {}

    def copy(settings, folder, since, progress):
        asked["since"] = since
        return [], binlogfile.ServerLogs("the native topology's master", (("binlog.000005", 1),), "10.11", 0)

    def profiled(files, window, source, sampling=None, covered=None):
        asked["window"] = window
        return profile.model_copy(update={"source": source})

    monkeypatch.setattr(binlogfile, "copy_from_server", copy)
    monkeypatch.setattr(modelcheck, "profile_files", profiled)
    now = time.monotonic()
    clock = Clock(zero=now - 60, created=now - 60, started_up_s=None, start=10.0, end=40.0)
    run = tmp_path / "write-mix-200"
    run.mkdir()
    got = modelcheck._profiled(None, clock, run, modelcheck.Progress("test"))
    assert (run / "profile.json").exists() and got.file == "write-mix-200/profile.json"
    assert prof.read(run / "profile.json").workload.transactions == SNIPPET_TRX
    assert asked["since"] == asked["window"].since and got.since == binlogfile.clock(asked["window"].since)
    monkeypatch.setattr(modelcheck, "read_summary", lambda folder: None)
    monkeypatch.setattr(modelcheck, "read_meta", lambda folder: None)
    monkeypatch.setattr(costmodel, "observation", lambda summary, meta: _obs())
    priced = modelcheck._priced(model_of(model), tmp_path,
                                RecordedRun(run=run.name, profile=got), "../rec/")
    assert priced.profile.file == "../rec/write-mix-200/profile.json" and priced.run == "../rec/write-mix-200"
    assert priced.profile.binlog_bytes.predicted is not None

    def fails(*_):
        raise binlogfile.BinlogFileError("the native topology's master does not answer as 'root': refused")

    monkeypatch.setattr(binlogfile, "copy_from_server", fails)
    failed = modelcheck._profiled(None, clock, run, modelcheck.Progress("test"))
    assert failed.model_dump(exclude_unset=True) == {
        "error": "the native topology's master does not answer as 'root': refused"}
    entry = RecordedRun(run=run.name, profile=failed)
    assert modelcheck._priced(model_of(model), tmp_path, entry).profile.model_dump(exclude_unset=True) == \
        failed.model_dump(exclude_unset=True)


def test_a_case_runs_under_its_setting_and_is_predicted_both_ways(tmp_path, monkeypatch) -> None:
    """_case's wiring with the run, its reading and the profile replaced: the run gets the case's knobs, and the case
    records its setting, the direct path's figures and the profile path's."""
    model = fitted_model(*synthetic())
    ran = {}

    class FakeRun:
        def __init__(self, settings, sc, rate, options, folder, progress):
            ran.update(scenario=sc.name, rate=rate, options=options)

        def execute(self):
            return SimpleNamespace(summary=summary_of({}), clock="the run's clock")

    monkeypatch.setattr(modelcheck, "Run", FakeRun)
    monkeypatch.setattr(modelcheck, "read_meta", lambda folder: None)
    monkeypatch.setattr(modelcheck, "read_summary", lambda folder: None)
    monkeypatch.setattr(costmodel, "observation", lambda summary, meta: _obs("ROW-MINIMAL"))
    monkeypatch.setattr(modelcheck, "_profiled", lambda settings, clock, folder, progress:
                        RecordedProfile(file=f"{folder.name}/profile.json", since=clock, until=None))
    monkeypatch.setattr(modelcheck, "read_profile", lambda path: _snippet_profile())
    case = modelcheck.parse_cases("write-mix@200:ROW-MINIMAL")[0]
    got = modelcheck._case(None, model_of(model), case, 30.0, "rows", tmp_path, modelcheck.Progress("test"))
    assert (ran["scenario"], ran["rate"], ran["options"].checksum) == ("write-mix", 200, "rows")
    assert ran["options"].knobs.changed() == {"binlog_row_image": "MINIMAL"} and ran["options"].duration == 30.0
    # one run: its folder and figures (the case's identity is the case's, over its repeats: validation.case_of)
    assert (got.run, got.usable, got.transactions, got.rows) == (
        next(tmp_path.iterdir()).name, True, SNIPPET_TRX, SNIPPET_ROWS)
    assert {"setting", "scenario"}.isdisjoint(got.model_dump(exclude_unset=True))
    assert got.not_predicted["binlog_bytes"] == "the model has no fit of ROW-MINIMAL bench_idx"
    assert (got.profile.file, got.profile.since) == (f"{got.run}/profile.json", "the run's clock")
    assert "ROW-MINIMAL" in got.profile.not_predicted["binlog_bytes"]  # priced under the case's setting


# --- the coverage ----------------------------------------------------------------------------------------------

def _fig(value: float, low: float, high: float, measured: float) -> Checked:
    return validation.checked(Interval(value=value, low=low, high=high), measured)


VALIDATION = {
    "cases": [
        {"scenario": "write-mix", "rate": 200, "setting": "ROW-MINIMAL", "run": "write-mix-200", "usable": True,
         "transactions": 6000, "rows": 66000, "replica_reads": 0, "not_predicted": {},
         "binlog_bytes": _fig(9.9e6, 9.5e6, 10.3e6, 10.0e6), "master_cpu_s": _fig(4.4, 4.1, 4.8, 4.0),
         "replica_cpu_s": _fig(3.0, 2.5, 3.5, 3.1),
         "profile": {"file": "write-mix-200/profile.json", "transactions": 6002, "rows": 66010, "span_s": 31,
                     "binlog_bytes": _fig(10.6e6, 10.2e6, 11.0e6, 10.0e6),
                     "master_cpu_s": _fig(4.1, 3.7, 4.5, 4.0), "replica_cpu_s": _fig(3.0, 2.5, 3.5, 3.1),
                     "not_predicted": {}}},
        {"scenario": "mixed", "rate": 200, "setting": "ROW-FULL", "run": "mixed-200", "usable": True,
         "transactions": 600, "rows": 600, "replica_reads": 5400,
         "not_predicted": {"replica_cpu_s": "the replicas also served 5,400 reads, and the fit has no read term"},
         "binlog_bytes": _fig(5.0e5, 4.8e5, 5.2e5, 5.1e5), "master_cpu_s": _fig(1.0, 0.9, 1.1, 1.8),
         "replica_cpu_s": validation.checked(None, 2.2),
         "profile": {"error": "the native topology's master does not answer as 'root': refused"}},
        {"scenario": "write-mix", "rate": 400, "setting": "ROW-FULL", "run": "write-mix-400", "usable": False},
    ],
    "onset": {"rows": 500, "replica": "replica1", "predicted": {"value": 80.0, "low": 70.0, "high": 90.0},
              "drain": {"writes": 240, "fill_rate": 6, "apply_rate_trx_per_s": [84.0, 76.0], "measured": 80.0,
                        "error_pct": 0.0},
              "runs": [], "measured": 66.0, "error_pct": 21.2},
}


def test_the_coverage_counts_each_paths_figures_and_judges_the_worst_errors() -> None:
    summary = validation.coverage(validation_of(VALIDATION))
    counts, profiled = summary.paths["counts"], summary.paths["profile"]
    # counts: 5 figures (the mixed case's replica CPU not predicted); inside: binlog 10.0e6, replica 3.1, 5.1e5
    assert (counts.figures, counts.inside, counts.not_predicted) == (5, 3, 1)
    assert counts.worst["binlog"].model_dump() == {"error_pct": -2.0, "case": "mixed @ 200/s ROW-FULL",
                                                   "figure": "binlog bytes", "bound_pct": 5.0, "within": True}
    assert counts.worst["CPU"].error_pct == -44.4 and not counts.worst["CPU"].within
    assert counts.worst["CPU"].figure == "master CPU"
    # the profile: the failed one counts nothing; binlog 10.6e6 against 10.0e6 is +6.0 %, outside its ±5 %
    assert (profiled.figures, profiled.inside, profiled.cases_without, counts.cases_without) == (3, 2, 1, 0)
    assert profiled.worst["binlog"].error_pct == 6.0 and not profiled.worst["binlog"].within
    assert summary.onset.model_dump(exclude_unset=True) == {
        "drained": {"error_pct": 0.0, "within": True, "inside": True},
        "live": {"error_pct": 21.2, "within": False, "inside": False}}
    assert summary.bounds_pct == {"binlog": 5.0, "CPU": 15.0, "onset": 15.0} and summary.goal == 0.9


def test_the_cpu_errors_signs_over_the_cases_means_and_a_one_sided_split_called_a_bias() -> None:
    def cases(measured: list[tuple[float, float]]) -> dict:
        return {"cases": [{"scenario": "write", "rate": 10 * (i + 1), "setting": "ROW-FULL", "run": f"w{i}",
                           "usable": True, "transactions": 10, "rows": 10, "replica_reads": 0, "not_predicted": {},
                           "master_cpu_s": _fig(1.0, 0.5, 1.5, m), "replica_cpu_s": _fig(1.0, 0.5, 1.5, r)}
                          for i, (m, r) in enumerate(measured)]}

    low = validation.coverage(validation_of(cases([(1.2, 1.1), (1.1, 1.3), (1.3, 1.05), (1.1, 1.2)])))
    signs = low.paths["counts"].cpu_signs  # 8 of 8 predicted below the measured: 2 × 0.5^8
    assert (signs.below, signs.above, signs.biased) == (8, 0, True) and signs.p == pytest.approx(0.0078125)
    assert "; CPU predicted low in 8 of 8 case means (sign test p = 0.0078: a bias)" in render_coverage(low)[1]
    mixed = validation.coverage(validation_of(cases([(1.2, 0.9), (0.8, 1.3), (1.3, 0.95), (0.9, 1.2)])))
    signs = mixed.paths["counts"].cpu_signs
    assert (signs.below, signs.above, signs.biased) == (4, 4, False) and signs.p == 1.0
    assert "; CPU predicted low in 4 of 8 case means (sign test p = 1: no bias shown)" in render_coverage(mixed)[1]
    assert validation.coverage(validation_of({"cases": []})).paths["counts"].cpu_signs is None


def test_a_validate_json_of_before_repeats_renders_each_case_as_its_one_run() -> None:
    text = render_validation(validation_of(VALIDATION))  # no repeats: each case is its own single run
    rows = [ln for ln in text.splitlines() if ln.startswith("| write-mix @ 200/s ROW-MINIMAL |")]
    assert len(rows) == 2 and "| 1 of 1 | from the run's counts | 6,000 | 66,000 |" in rows[0]
    assert "| from its binlog profile | 6,002 | 66,010 | 1.06e+07" not in rows[1]  # never in e-notation
    assert "| from its binlog profile | 6,002 | 66,010 | 10,600,000 / 10,000,000 (+6.0 %, inside 0/1) |" in rows[1]
    assert "| mixed @ 200/s ROW-FULL | 1 of 1 | from its binlog profile | no profile: the native topology's master " \
        "does not answer" in text
    assert "not predicted: the replicas also served 5,400 reads, and the fit has no read term (measured 2.2)" in text
    assert "| write-mix @ 400/s ROW-FULL | 0 of 1 | not usable" in text
    assert "- from the run's counts: 3 of 5 run figures inside their intervals (60 %, below the goal), 1 more not " \
        "predicted; worst error: binlog -2.0 % (mixed @ 200/s ROW-FULL, binlog bytes; within ±5 %), CPU -44.4 % " \
        "(mixed @ 200/s ROW-FULL, master CPU; outside ±15 %)" in text
    assert "- from its binlog profile: 2 of 3 run figures inside their intervals (67 %, below the goal), 1 usable " \
        "case(s) without this path; worst error: binlog +6.0 %" in text
    assert "- lag onset: drained +0.0 % (within ±15 %, inside its interval), live +21.2 % (outside ±15 %, outside " \
        "its interval)" in text
    # its one drain: rendered as before
    assert "- drained alone (a backlog of 240 written at 6/s, each replica in turn): 84.0, 76.0 transactions/s; " \
        "predicted +0.0 % off the median" in text
    # a validate.json from before settings and profiles: one row per case, no profile row, the same coverage line
    old = Validation.model_validate({"cases": [{k: v for k, v in VALIDATION["cases"][0].items()
                                                if k not in ("setting", "profile")}]})
    text = render_validation(old)
    assert "| write-mix @ 200/s | 1 of 1 | from the run's counts |" in text and "binlog profile |" not in text
    assert "- from the run's counts: 2 of 3 run figures inside their intervals (67 %, below the goal); worst error: " \
        "binlog -1.0 %" in text


# --- repeats -------------------------------------------------------------------------------------------------------

def test_the_rounds_rotate_the_case_order_by_one_a_round() -> None:
    assert validation.rounds(3, 3) == [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    assert validation.rounds(3, 4)[3] == [0, 1, 2] and validation.rounds(2, 1) == [[0, 1]]
    assert validation.rounds(0, 3) == [] and validation.rounds(4, 0) == []
    # no case always first or always last over as many rounds as cases
    order = validation.rounds(4, 4)
    assert {r[0] for r in order} == {r[-1] for r in order} == {0, 1, 2, 3}


def test_validate_runs_the_cases_in_rotated_rounds_and_checks_the_table_on_the_very_last_run(tmp_path,
                                                                                           monkeypatch) -> None:
    """validate's wiring with each run replaced: the runs' order, the checksum of each, each case's repeats."""
    ran = []

    def one(settings, model, case, duration, checksum, folder, progress):
        ran.append((case.text, checksum))
        return ValidationRun(run=f"run-{len(ran)}", usable=True, transactions=10, rows=10, replica_reads=0,
                             binlog_bytes=_fig(100, 90, 110, 100 + len(ran)))

    monkeypatch.setattr(modelcheck, "_case", one)
    cases = modelcheck.parse_cases("write@10,write@20,write@30")
    out = modelcheck.validate(SimpleNamespace(results=tmp_path), model_of({}), cases, onset_rows=0, repeats=2)
    assert [text for text, _ in ran] == ["write@10", "write@20", "write@30", "write@20", "write@30", "write@10"]
    assert [checksum for _, checksum in ran] == ["rows"] * 5 + ["table"]
    assert out.repeats == 2 and [len(c.repeats) for c in out.cases] == [2, 2, 2]
    assert [r.run for r in out.cases[0].repeats] == ["run-1", "run-6"]  # the case's order kept
    assert (out.cases[0].scenario, out.cases[0].rate) == ("write", 10)
    assert Validation.model_validate(json.loads((tmp_path / "model" / out.folder / "validate.json").read_text())) \
        .cases[2].repeats[1].run == "run-5"


def test_the_onset_drains_once_after_each_round_then_the_live_runs(tmp_path, monkeypatch) -> None:
    """The onset's drains sample the host over the whole validation: one after each round of cases (three rounds,
    three drains), at least two (one round: a second right after it); then the live runs, once."""
    ran: list[str] = []
    monkeypatch.setattr(modelcheck, "_case", lambda settings, model, case, *rest: ran.append(case.text) or
                        ValidationRun(run=f"run-{len(ran)}", usable=True, transactions=10, rows=10, replica_reads=0))
    monkeypatch.setattr(modelcheck.costmodel, "onset", lambda model, rows: {"value": 80.0, "low": 70.0, "high": 90.0})
    monkeypatch.setattr(modelcheck, "_drain", lambda settings, onset, folder: ran.append("drain") or OnsetDrain(
        folder=f"apply/d{ran.count('drain')}", writes=onset.writes, fill_rate=onset.fill, status="ok",
        apply_rate_trx_per_s=[70.0 + ran.count("drain"), 80.0]))

    def live(settings, onset, got, duration, folder, progress):
        ran.append("live")
        return got.model_copy(update={"drain_measured": 1.0})

    monkeypatch.setattr(modelcheck, "_onset_live", live)
    cases = modelcheck.parse_cases("write@10,write@20")
    out = modelcheck.validate(SimpleNamespace(results=tmp_path), model_of({}), cases, repeats=3)
    assert ran == ["write@10", "write@20", "drain", "write@20", "write@10", "drain", "write@10", "write@20", "drain",
                   "live"]
    assert [d.folder for d in out.onset.drains] == ["apply/d1", "apply/d2", "apply/d3"]
    assert out.onset.drains[0].writes == 240  # ONSET_DRAIN_S of apply at the predicted 80/s
    ran.clear()
    modelcheck.validate(SimpleNamespace(results=tmp_path / "again"), model_of({}), cases, repeats=1)
    assert ran == ["write@10", "write@20", "drain", "drain", "live"]


def test_an_interrupted_validation_keeps_and_reports_the_drains_median_so_far(tmp_path, monkeypatch,
                                                                              capsys) -> None:
    """Interrupted in its second drain, validate.json already holds the first drain's median against the
    prediction, and `model validate` prints the table of what it measured before it ends as interrupted."""
    from replbench.cli.bench import _interrupted_validation

    drained: list[int] = []
    monkeypatch.setattr(modelcheck, "_case", lambda settings, model, case, *rest: ValidationRun(
        run="run-1", usable=True, transactions=10, rows=10, replica_reads=0))
    monkeypatch.setattr(modelcheck.costmodel, "onset", lambda model, rows: {"value": 80.0, "low": 70.0, "high": 90.0})

    def drain(settings, onset, folder):
        drained.append(1)
        if len(drained) == 2:
            raise KeyboardInterrupt("SIGINT")
        return OnsetDrain(folder="apply/d1", writes=onset.writes, fill_rate=onset.fill, status="ok",
                          apply_rate_trx_per_s=[70.0, 80.0, 90.0])

    monkeypatch.setattr(modelcheck, "_drain", drain)
    settings = SimpleNamespace(results=tmp_path)
    with pytest.raises(KeyboardInterrupt):
        modelcheck.validate(settings, model_of({}), modelcheck.parse_cases("write@10"), repeats=3)
    (record,) = (tmp_path / "model").glob("validate-*/validate.json")
    onset = json.loads(record.read_text())["onset"]
    assert (onset["drain_measured"], onset["drain_error_pct"]) == (80.0, 0.0)  # the first drain's median
    _interrupted_validation(settings, set())
    shown = capsys.readouterr()
    assert "70.0, 80.0, 90.0 transactions/s; predicted +0.0 % off the median" in shown.out
    assert "model validate interrupted" in shown.err and "validate.json" in shown.err
    _interrupted_validation(settings, set((tmp_path / "model").glob("validate-*")))  # none of its own: silent
    assert capsys.readouterr() == ("", "")


def _run(name: str, usable: bool = True, profile: dict | None = None, **figures: Checked) -> ValidationRun:
    return ValidationRun.model_validate({"run": name, "usable": usable, "transactions": 3000, "rows": 33000,
                                         "replica_reads": 0, "not_predicted": {}, **figures,
                                         **({"profile": profile} if profile else {})})


def test_a_cases_figures_are_its_repeats_sums_and_the_error_is_the_means() -> None:
    first = _run("r1", binlog_bytes=_fig(100, 95, 105, 110), master_cpu_s=_fig(2.0, 1.8, 2.2, 2.1),
                 profile={"transactions": 3001, "rows": 33002, "span_s": 31, "binlog_bytes": _fig(99, 94, 104, 110)})
    second = _run("r2", binlog_bytes=_fig(100, 95, 105, 100), master_cpu_s=_fig(2.0, 1.8, 2.2, 2.6),
                  profile={"error": "the copy failed"})
    failed = _run("r3", usable=False)
    case = validation.case_of(validation.Identity("write-mix", 200, "ROW-FULL"), [first, second, failed])
    assert case.usable and [r.run for r in case.repeats] == ["r1", "r2", "r3"]
    assert (case.transactions, case.rows) == (6000, 66000)  # the usable repeats' sums
    binlog = case.binlog_bytes
    assert binlog.predicted.model_dump() == {"value": 200, "low": 190, "high": 210} and binlog.measured == 210
    assert binlog.error_pct == round(100 * (200 - 210) / 210, 1) == -4.8  # the mean's: 100 against 105
    assert (binlog.runs, binlog.inside_runs) == (2, 1)  # 110 outside 95–105, 100 inside
    cpu = case.master_cpu_s
    assert cpu.measured == pytest.approx(4.7) and (cpu.runs, cpu.inside_runs) == (2, 1)
    # the profile path: over the repeats profiled without error alone
    assert case.profile.binlog_bytes.predicted.value == 99 and case.profile.binlog_bytes.runs == 1
    assert case.profile.transactions == 3001
    # a repeat without a prediction: none over the case (its measured still summed)
    nobody = validation.Identity(None, None, None)
    unpredicted = validation.case_of(nobody, [_run("a", binlog_bytes=validation.checked(None, 5.0)),
                                              _run("b", binlog_bytes=_fig(1, 0, 2, 1))]).binlog_bytes
    assert unpredicted.predicted is None and unpredicted.error_pct is None and unpredicted.measured == 6.0
    none = validation.case_of(validation.Identity("write", None, None), [failed])
    assert none.model_dump(exclude_unset=True) == {"scenario": "write", "rate": None, "setting": None,
                                                   "usable": False, "repeats": [failed.model_dump(exclude_unset=True)]}
    every = validation.case_of(nobody, [_run("x", profile={"error": "refused"})])
    assert every.profile.model_dump(exclude_unset=True) == {"error": "refused"}


def _case(rate: int, *runs: ValidationRun) -> ValidationCase:
    return validation.case_of(validation.Identity("write-mix", rate, "ROW-FULL"), list(runs))


REPEATED = {"repeats": 2, "cases": [
    # each run's binlog 8 % off its measurement (outside ±5 %, and outside its interval), the mean's 0 %
    _case(100, _run("a1", binlog_bytes=_fig(108, 104, 112, 100)), _run("a2", binlog_bytes=_fig(92, 88, 96, 100))),
    _case(200, _run("b1", binlog_bytes=_fig(200, 190, 210, 202), master_cpu_s=_fig(4.0, 3.6, 4.4, 4.2)),
          _run("b2", binlog_bytes=_fig(200, 190, 210, 204), master_cpu_s=_fig(4.0, 3.6, 4.4, 5.0))),
], "onset": {"rows": 500, "replica": "replica1", "predicted": {"value": 80.0, "low": 70.0, "high": 90.0},
             "drains": [{"folder": "apply/d1", "writes": 240, "fill_rate": 6, "apply_rate_trx_per_s": [84.0, 76.0]},
                        {"folder": "apply/d2", "writes": 240, "fill_rate": 6, "apply_rate_trx_per_s": [70.0, 60.0]}],
             "drain_measured": 73.0, "drain_error_pct": 9.6, "runs": [], "measured": None, "error_pct": None}}


def test_the_coverage_counts_each_runs_figures_and_judges_each_cases_mean() -> None:
    summary = validation.coverage(validation_of(REPEATED))
    counts = summary.paths["counts"]
    # every run's figure against its own interval: 6 figures; inside: 202, 204 and 4.2 (5.0 is outside 3.6–4.4)
    assert (counts.figures, counts.inside, counts.not_predicted, summary.repeats) == (6, 3, 0, 2)
    # the worst binlog error is of a case's mean: write-mix@100's runs are 8 % off each, their mean 0 %
    assert counts.worst["binlog"].error_pct == round(100 * (400 - 406) / 406, 1) == -1.5
    assert counts.worst["binlog"].within and counts.worst["binlog"].case == "write-mix @ 200/s ROW-FULL"
    assert counts.worst["CPU"].error_pct == round(100 * (8.0 - 9.2) / 9.2, 1) == -13.0
    assert counts.worst["CPU"].within
    # the drained onset: the median of both drains' four rates
    assert summary.onset.drained.model_dump() == {"error_pct": 9.6, "within": True, "inside": True}
    text = render_validation(validation_of(REPEATED))
    assert "- from the run's counts: 3 of 6 run figures inside their intervals (50 %, below the goal); worst error " \
        "of a case's mean over 2 repeats: binlog -1.5 % (write-mix @ 200/s ROW-FULL" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("| write-mix @ 100/s ROW-FULL |"))
    # predicted and measured are the means per run, the error the mean's, and how many runs lay inside
    assert row.startswith("| write-mix @ 100/s ROW-FULL | 2 of 2 | from the run's counts | 3,000 | 33,000 | 100 / 100 "
                          "(+0.0 %, inside 0/2) |"), row
    assert "| 4 / 4.6 (-13.0 %, inside 1/2) |" in text
    assert "- drained alone (a backlog of 240 written at 6/s, 2 times, each replica in turn): 84.0, 76.0; 70.0, " \
        "60.0 transactions/s; predicted +9.6 % off the median" in text


def test_a_figure_below_its_resolution_is_left_out_of_the_case_and_the_coverage_and_says_so() -> None:
    def cpu(measured: float, resolution: float | None = 0.21) -> Checked:
        return validation.checked(Interval(value=2.0, low=1.0, high=3.0), measured, resolution)

    # at its resolution: measured
    assert cpu(0.21).measured == 0.21 and "below_resolution" not in cpu(0.21).model_fields_set
    low = cpu(0.0)  # a net figure of 0.0 s against a resolution of 0.21 s: not a measurement of anything
    assert (low.measured, low.error_pct, low.inside) == (None, None, None)
    assert low.below_resolution == {"net": 0.0, "resolution": 0.21}
    # a run from before resolutions were recorded: compared
    assert "below_resolution" not in cpu(0.0, None).model_fields_set
    case = _case(200, _run("m1", master_cpu_s=cpu(2.2)), _run("m2", master_cpu_s=cpu(0.0)),
                 _run("m3", master_cpu_s=cpu(1.8)))
    fig = case.master_cpu_s  # the mean of the two measured runs, the third counted as left out
    assert (fig.runs, fig.measured, fig.error_pct, fig.runs_below_resolution) == (2, 4.0, 0.0, 1)
    summary = validation.coverage(validation_of({"cases": [case]})).paths["counts"]
    assert (summary.figures, summary.inside, summary.below_resolution) == (2, 2, 1)
    text = render_validation(validation_of({"cases": [case]}))
    assert "| 2 / 2 (+0.0 %, inside 2/2; 1 more below its resolution, left out: net 0 s < 0.21 s) |" in text, text
    assert "2 of 2 run figures inside their intervals (100 %), 1 more below their resolution (left out)" in text
    every = _case(200, _run("z1", master_cpu_s=cpu(0.0)), _run("z2", master_cpu_s=cpu(0.1)))
    assert "| below its resolution: net 0 s < 0.21 s |" in render_validation(validation_of({"cases": [every]}))


def test_the_estimate_and_the_campaigns_unit_scale_with_the_repeats(tmp_path) -> None:
    one, two = modelcheck.estimate(repeats=1), modelcheck.estimate(repeats=2)
    cases = sum(modelcheck.run_seconds(modelcheck.DURATION, c.rate) + modelcheck.PROFILE_SECONDS
                for c in (*modelcheck.CASES, modelcheck.CONTROL))  # the control runs in every round too
    drain = modelcheck.apply_seconds(60, 1)  # a drain a round, at least two: the third round adds one
    assert two - one == pytest.approx(cases) and modelcheck.estimate() == pytest.approx(one + 2 * cases + drain)
    path = tmp_path / "c.toml"
    path.write_text('[[units]]\ncommand = "model validate --repeat 2"\n[[units]]\ncommand = "model validate"\n')
    first, second = campaign.load(str(path)).units
    assert (first.estimate_s, second.estimate_s) == (two, modelcheck.estimate())
    path.write_text('[[units]]\ncommand = "model validate --record --repeat 1"\n'
                    '[[units]]\ncommand = "model validate --recorded"\n')
    record, priced = campaign.load(str(path)).units
    assert (record.estimate_s, priced.estimate_s) == (modelcheck.estimate(repeats=1, onset=False),
                                                      modelcheck.estimate(runs=False))


@pytest.mark.parametrize("value", ["0", "-1"])
def test_model_validate_refuses_a_repeat_below_one_with_exit_2(value: str) -> None:
    code, out, err = run_main(["model", "validate", "--repeat", value])
    assert code == 2 and out == "" and "--repeat must be 1 or more" in err and "Traceback" not in err, err


def test_a_live_onset_run_whose_replica_was_starved_of_cpu_does_not_test_the_onset() -> None:
    """The onset is priced for a replica with a core to itself; a live run where the master, app, vegeta and harness
    left it less (a 2-core host, the master saturated by 500-row commits) fell behind for want of CPU, not at the
    onset: it is named and not judged. With the core there, the run's applied rate is the live onset."""
    from replbench.analysis.validation import live_onset, replica_room
    from replbench.core.results import summary_of

    starved = summary_of({"cpu_mean_percent": {"app": 11.5, "harness": 10.4, "host_busy": 188.6, "host_steal": 0.2,
                                               "master": 112.4, "replica1": 43.3, "replica2": 1.8, "vegeta": 7.8}})
    room = replica_room(starved, 2, "replica1")
    assert room == 0.56  # 200 % less 143.9 % of the others, host_busy and host_steal not counted
    runs = [OnsetRun(load=0.8, applied_per_s=80.5, master_transactions_per_s=86.7, replica_room_cores=room),
            OnsetRun(load=1.25, applied_per_s=None, master_transactions_per_s=58.4, replica_room_cores=0.6)]
    out = live_onset(runs, 196.9, "replica1")
    assert out.measured is None and out.error_pct is None
    assert out.live_note.startswith("replica1 fell behind at 80.5 transactions/s with at most 0.56 of a core")
    roomy = [runs[0].model_copy(update={"replica_room_cores": 1.2}), runs[1]]
    assert live_onset(roomy, 196.9, "replica1") == validation.LiveOnset(measured=80.5, error_pct=144.6, live_note=None)
    # a topology file's replica: its host's room not known here
    remote = [runs[0].model_copy(update={"replica_room_cores": None})]
    assert live_onset(remote, 196.9, "replica1").measured == 80.5
    slow = [OnsetRun(applied_per_s=None, master_transactions_per_s=60.0, replica_room_cores=1.5)]
    assert "the master committed at most 60.0" in live_onset(slow, 196.9, "replica1").live_note


def test_the_control_a_fitted_cell_gives_the_hosts_drift_and_the_held_out_errors_without_it() -> None:
    """The control's CPU measured 10 % above its prediction (a host slower than at the fit): the held-out case's
    master CPU, 13.0 % under as measured, is 4.3 % under once its prediction is scaled by 1.1; the coverage's own
    counts leave the control out."""
    control = validation.case_of(validation.Identity("write", 200, "ROW-FULL"), [
        _run("c1", master_cpu_s=_fig(4.0, 3.6, 4.4, 4.3), replica_cpu_s=_fig(2.0, 1.8, 2.2, 2.0)),
        _run("c2", master_cpu_s=_fig(4.0, 3.6, 4.4, 4.5), replica_cpu_s=_fig(2.0, 1.8, 2.2, 2.0))])
    summary = validation.coverage(validation_of({**REPEATED, "control": control}))
    # the control is no held-out figure
    assert summary.paths == validation.coverage(validation_of(REPEATED)).paths
    got = summary.control
    assert round(100 * (8.0 * 1.1 - 9.2) / 9.2, 1) == -4.3
    assert got.ratio == {"counts": {"master CPU": 1.1, "replica CPU": 1.0}} and got.runs == 2
    assert {path: w.model_dump() for path, w in got.scaled_worst.items()} == {
        "counts": {"error_pct": -4.3, "case": "write-mix @ 200/s ROW-FULL", "figure": "master CPU",
                   "bound_pct": 15.0, "within": True}}
    assert validation.coverage(validation_of(REPEATED)).control is None
    text = render_validation(validation_of({**REPEATED, "control": control}))
    assert "| write @ 200/s ROW-FULL (control: a fitted cell) | 2 of 2 | from the run's counts |" in text
    assert ("- control write @ 200/s ROW-FULL (a cell the model was fitted on, run in every round): measured master "
            "CPU ×1.10, replica CPU ×1.00 of its prediction from the counts, mostly the host's drift since the fit "
            "(the rest the fit's residual there and the runs' noise); the held-out CPU predictions scaled by the "
            "control's measured/predicted on the same path, worst error from the run's counts -4.3 % (write-mix @ "
            "200/s ROW-FULL, master CPU; within ±15 %)") in text
    # a control whose CPU measured nothing (0 s) gives no ratio, and the line is left out rather than divided by it
    idle = validation.case_of(validation.Identity("write", 200, "ROW-FULL"),
                              [_run("c0", master_cpu_s=_fig(4.0, 3.6, 4.4, 0.0))])
    assert validation.coverage(validation_of({**REPEATED, "control": idle})).control is None
    assert "- control" not in render_validation(validation_of({**REPEATED, "control": idle}))
    # the profile path is scaled by the control's own profile: its master CPU measured ×2 of that prediction
    profiled = validation.case_of(validation.Identity("write", 200, "ROW-FULL"), [
        _run("p1", master_cpu_s=_fig(4.0, 3.6, 4.4, 4.0), profile={"master_cpu_s": _fig(2.0, 1.8, 2.2, 4.0)})])
    held = {"cases": [_case(100, _run("h1", master_cpu_s=_fig(4.0, 3.6, 4.4, 4.0),
                                      profile={"master_cpu_s": _fig(2.2, 2.0, 2.4, 4.0)}))]}
    worst = validation.coverage(validation_of({**held, "control": profiled})).control.scaled_worst
    assert (worst["counts"].error_pct, worst["profile"].error_pct) == (0.0, 10.0)


def test_the_control_runs_in_every_round_rotated_with_the_cases_and_is_kept_apart(tmp_path, monkeypatch) -> None:
    ran: list[str] = []
    monkeypatch.setattr(modelcheck, "_case", lambda settings, model, case, *rest: ran.append(case.text) or
                        ValidationRun(run=f"run-{len(ran)}", usable=True, transactions=10, rows=10, replica_reads=0))
    cases = modelcheck.parse_cases("write@10,write@20")
    out = modelcheck.validate(SimpleNamespace(results=tmp_path), model_of({}), cases, onset_rows=0, repeats=3,
                              control=modelcheck.CONTROL)
    assert ran == ["write@10", "write@20", "write@200", "write@20", "write@200", "write@10", "write@200", "write@10",
                   "write@20"]
    assert [c.rate for c in out.cases] == [10, 20]
    assert [r.run for r in out.control.repeats] == ["run-3", "run-5", "run-7"]
    assert modelcheck.estimate(cases, 30, 3) > modelcheck.estimate(cases, 30, 3, control=None)


@pytest.mark.parametrize("control, needle", [("nosuch@10", "nosuch"), ("write@1,write@2", "one case"),
                                             ("write@x", "whole number")])
def test_model_validate_refuses_a_bad_control_with_exit_2(control: str, needle: str) -> None:
    code, out, err = run_main(["model", "validate", "--control", control])
    errors = [ln for ln in err.splitlines() if ln.startswith("./run.sh: error:")]
    assert code == 2 and out == "" and "Traceback" not in err, err
    assert len(errors) == 1 and needle in errors[0], err


# --- recorded rounds, priced after the fit ------------------------------------------------------------------------

def test_the_rounds_can_go_on_from_an_earlier_recordings_rotation() -> None:
    assert validation.rounds(3, 1, 1) == [[1, 2, 0]] and validation.rounds(3, 2, 2) == [[2, 0, 1], [0, 1, 2]]
    assert validation.rounds(3, 3) == [r for first in range(3) for r in validation.rounds(3, 1, first)]


def test_recordings_go_on_rotating_and_are_priced_once_gathered_case_by_case(tmp_path, monkeypatch) -> None:
    """--record's wiring with each run replaced: each recording goes on with the rotation where the last one left
    off; --recorded prices every recording not priced yet, each case's repeats gathered over them in order (the
    runs named from the validation's folder), drains the onset as for that many rounds, and names the recordings,
    which a second --recorded then finds none of."""
    ran: list[str] = []
    monkeypatch.setattr(modelcheck, "_recorded_run", lambda settings, case, duration, checksum, folder, progress:
                        ran.append(case.text) or RecordedRun(run=f"run-{len(ran)}",
                                                             profile=RecordedProfile(error="not copied")))
    priced: list[str] = []

    def price(model, folder, entry, prefix=""):
        priced.append(prefix + entry.run)
        return ValidationRun(run=prefix + entry.run, usable=True, transactions=10, rows=10, replica_reads=0,
                             binlog_bytes=_fig(100, 90, 110, 100))

    monkeypatch.setattr(modelcheck, "_priced", price)
    monkeypatch.setattr(modelcheck.costmodel, "onset", lambda model, rows: {"value": 80.0, "low": 70.0, "high": 90.0})
    monkeypatch.setattr(modelcheck, "_drain", lambda settings, onset, folder: ran.append("drain") or OnsetDrain(
        folder="apply/d", writes=onset.writes, fill_rate=onset.fill, status="ok", apply_rate_trx_per_s=[80.0]))
    monkeypatch.setattr(modelcheck, "_onset_live", lambda settings, plan, got, *rest: ran.append("live") or got)
    settings = SimpleNamespace(results=tmp_path)
    cases = modelcheck.parse_cases("write@10,write@20")
    first = modelcheck.record(settings, cases, 2.0, 1, modelcheck.CONTROL)
    second = modelcheck.record(settings, cases, 2.0, 1, modelcheck.CONTROL)
    assert ran == ["write@10", "write@20", "write@200", "write@20", "write@200", "write@10"]
    assert priced == []  # recorded, not priced: no model asked
    assert [r.name for r in modelcheck.pending_recordings(settings)] == [first.folder, second.folder]
    ran.clear()
    out = modelcheck.priced_recordings(settings, model_of({}))
    assert out.recordings == [first.folder, second.folder] and out.repeats == 2
    assert [r.run for r in out.cases[1].repeats] == [f"../{first.folder}/run-2", f"../{second.folder}/run-4"]
    assert [r.run for r in out.control.repeats] == [f"../{first.folder}/run-3", f"../{second.folder}/run-5"]
    assert ran == ["drain", "drain", "live"]  # drain_count(2): as validate drains two rounds
    written = Validation.model_validate(json.loads((tmp_path / "model" / out.folder / "validate.json").read_text()))
    assert written.recordings == [first.folder, second.folder] and written.summary is not None
    assert "recorded in 2 rounds by `model validate --record` with no model yet (campaign model-check interleaves " \
        "them with the fit's studies" in render_validation(written)
    assert modelcheck.pending_recordings(settings) == []
    with pytest.raises(modelcheck.ReplbenchError, match="no recorded runs to price"):
        modelcheck.priced_recordings(settings, model_of({}))
    assert modelcheck.estimate(runs=False) + modelcheck.estimate(onset=False) == pytest.approx(modelcheck.estimate())


# a campaign's five recorded rounds, their runs and binlog profiles committed, and the validation that priced them
MODEL_CHECK = ROOT / "results/readme-assets/model-20261129c/campaign-model-check-20261129-065116/model"


def test_committed_recordings_priced_again_give_the_committed_validation(tmp_path) -> None:
    """The real pricing of recordings (no stub): the campaign's five recordings, copied alone, priced by its model
    give back its validation's cases and control, each case's repeats gathered over the five recordings in order,
    each run and its profile read from its own recording's folder."""
    for recording in sorted(MODEL_CHECK.glob(f"validate-*/{modelcheck.RECORDING}")):
        shutil.copytree(recording.parent, tmp_path / "model" / recording.parent.name)
    model = model_of(json.loads((MODEL_CHECK / "model.json").read_text()))
    out = modelcheck.priced_recordings(SimpleNamespace(results=tmp_path), model, onset_rows=0)
    committed = validation_of(json.loads((MODEL_CHECK / "validate-20261129-080353" / "validate.json").read_text()))
    assert out.recordings == committed.recordings and len(out.recordings) == 5
    assert (out.repeats, out.rounds) == (5, 5)
    priced = out.model_dump(mode="json", exclude_none=True)
    assert priced["cases"] == committed.model_dump(mode="json", exclude_none=True)["cases"]
    assert priced["control"] == committed.model_dump(mode="json", exclude_none=True)["control"]
    for case in out.cases:
        assert [r.run.split("/")[1] for r in case.repeats] == out.recordings, case
        assert all(r.profile.binlog_bytes.predicted for r in case.repeats), case


def _recording_stubs(monkeypatch) -> list[str]:
    """record's and priced_recordings' runs, pricing, drains and live onset replaced; the list of what ran."""
    ran: list[str] = []
    monkeypatch.setattr(modelcheck, "_recorded_run", lambda settings, case, duration, checksum, folder, progress:
                        ran.append(case.text) or RecordedRun(run=f"run-{len(ran)}"))
    monkeypatch.setattr(modelcheck, "_priced", lambda model, folder, entry, prefix="": ValidationRun(
        run=prefix + entry.run, usable=True, transactions=10, rows=10, replica_reads=0))
    monkeypatch.setattr(modelcheck.costmodel, "onset", lambda model, rows: None)
    monkeypatch.setattr(modelcheck, "_onset_live", lambda settings, plan, got, *rest: ran.append("live") or got)
    return ran


def test_a_recording_of_several_rounds_hands_the_rotation_on_after_its_last_round(tmp_path, monkeypatch) -> None:
    ran = _recording_stubs(monkeypatch)
    settings = SimpleNamespace(results=tmp_path)
    cases = modelcheck.parse_cases("write@10,write@20,write@30")
    modelcheck.record(settings, cases, 2.0, 2)
    modelcheck.record(settings, cases, 2.0, 1)
    assert ran == ["write@10", "write@20", "write@30", "write@20", "write@30", "write@10",
                   "write@30", "write@10", "write@20"]  # rounds 0 and 1, then round 2: none repeated
    assert modelcheck.priced_recordings(settings, model_of({})).rounds == 3


def test_an_interrupted_recording_is_left_out_and_an_interrupted_pricing_prices_nothing_for_good(tmp_path,
                                                                                                 monkeypatch) -> None:
    """A recording that did not run every round (a resumed campaign records its round again) is named and left
    out; a `--recorded` that ended before its end leaves its recordings to the next one."""
    _recording_stubs(monkeypatch)
    settings = SimpleNamespace(results=tmp_path)
    cases = modelcheck.parse_cases("write@10")
    broken = modelcheck.record(settings, cases, 2.0, 1)
    path = tmp_path / "model" / broken.folder / modelcheck.RECORDING
    path.write_text(json.dumps({**json.loads(path.read_text()), "complete": False}))
    with pytest.raises(modelcheck.ReplbenchError, match="1 interrupted, left out"):
        modelcheck.priced_recordings(settings, model_of({}))
    whole = modelcheck.record(settings, cases, 2.0, 1)
    first = modelcheck.priced_recordings(settings, model_of({}))
    assert (first.recordings, first.left_out, first.complete) == ([whole.folder], [broken.folder], True)
    assert "left out, interrupted: " + broken.folder in render_validation(first)
    written = tmp_path / "model" / first.folder / "validate.json"
    written.write_text(json.dumps({**json.loads(written.read_text()), "complete": False}))  # as if interrupted
    assert modelcheck.priced_recordings(settings, model_of({})).recordings == [whole.folder]  # priced again


def test_recordings_of_different_controls_and_an_unreadable_validation_are_refused_in_one_line(tmp_path,
                                                                                               monkeypatch) -> None:
    _recording_stubs(monkeypatch)
    settings = SimpleNamespace(results=tmp_path)
    cases = modelcheck.parse_cases("write@10")
    modelcheck.record(settings, cases, 2.0, 1, modelcheck.CONTROL)
    modelcheck.record(settings, cases, 2.0, 1, modelcheck.parse_cases("write@80")[0])
    with pytest.raises(modelcheck.ReplbenchError, match=r"different controls \(write@200:ROW-FULL, write@80"):
        modelcheck.priced_recordings(settings, model_of({}))
    (tmp_path / "model" / "validate-20000101-000000").mkdir()
    (tmp_path / "model" / "validate-20000101-000000" / "validate.json").write_text('{"cases": [')
    with pytest.raises(modelcheck.ReplbenchError, match="validate.json: not a validation"):
        modelcheck.pending_recordings(settings)


def test_the_control_priced_in_the_fits_hours_is_read_as_the_fits_residual() -> None:
    control = {"scenario": "write", "rate": 200, "setting": "ROW-FULL", "usable": True,
               "master_cpu_s": _fig(1.0, 0.9, 1.1, 1.1), "replica_cpu_s": _fig(1.0, 0.9, 1.1, 1.0)}
    doc = {"cases": VALIDATION["cases"][:1], "control": control}
    assert "mostly the host's drift since the fit" in render_validation(validation_of(doc))
    interleaved = render_validation(validation_of({**doc, "recordings": ["validate-1"]}))
    assert "the fit's residual there and the runs' noise (recorded in the fit's hours)" in interleaved
    assert "host's drift" not in interleaved


@pytest.mark.parametrize("args, needle", [(["--record", "--recorded"], "not allowed with"),
                                          (["--recorded", "--cases", "write@10"], "--recorded prices the runs"),
                                          (["--recorded", "--duration", "5s"], "--recorded prices the runs"),
                                          (["--recorded", "--repeat", "2"], "--repeat belong to --record"),
                                          (["--recorded", "--control", "none"], "--control belong to --record"),
                                          (["--record", "--onset-rows", "0"], "--onset-rows belong to --recorded")])
def test_model_validate_refuses_record_flags_that_do_not_go_together_with_exit_2(args: list[str],
                                                                                  needle: str) -> None:
    code, out, err = run_main(["model", "validate", *args])
    assert code == 2 and out == "" and "Traceback" not in err and needle in err, err
