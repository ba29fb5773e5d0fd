"""A workload priced with its own runs: a live window's CPU per transaction (analysis/livewindow.cpu_of) and
`model predict --profile P --own-runs apply.json` (analysis/ownfit), on the committed sysbench profile and a live
window's apply.json given the CPU figures a window records (docs/profile.md, "Your own runs")."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from replbench.analysis.livewindow import cpu_of
from replbench.core.config import ROOT
from replbench.core.stats import mean_error

from .conftest import env_for, run_main

pytestmark = pytest.mark.unit

SHAPES = ROOT / "results" / "readme-assets" / "shapes-20261202"
PROFILE = SHAPES / "profile-write_only.json"  # sysbench oltp_write_only, 90,189 transactions over 305 s
LIVE = SHAPES / "live-write_only" / "apply.json"  # its live window, recorded before windows had CPU figures


def test_a_windows_cpu_per_transaction_is_net_of_idle_per_whole_minute_with_its_interval() -> None:
    samples = [(float(i), 100 * i) for i in range(181)]  # 100 transactions a second for 180 s
    # the master burns 0.3 CPU-ms a transaction over an idle of 0.01 s/s; every 7th second a little more
    cpu = [{"master": i * 0.04 + 0.002 * (i % 7 == 0), "replica2": None if i == 5 else i * 0.02,
            "replica1": None if i == 0 else i * 0.02} for i in range(181)]
    got = cpu_of(samples, cpu, {"master": 0.01, "replica2": None, "replica1": 0.0},
                 {"master": "master", "replica2": "following", "replica1": "following"})
    master = got["master"]
    assert master.net and master.transactions == 18_000 and master.cpu_ms_per_trx == pytest.approx(0.3, abs=1e-4)
    assert len(master.minutes_ms_per_trx or []) == 3 and master.ci95_ms_per_trx is not None
    low, high = master.ci95_ms_per_trx
    assert low < 0.3 < high or low == high == pytest.approx(0.3, abs=1e-3)
    replica = got["replica2"]  # a read missed mid-window: its minutes still from the reads it has
    assert not replica.net and replica.cpu_ms_per_trx == pytest.approx(0.2) and replica.role == "following"
    assert "replica1" not in got  # not read as the window opened: no figure rather than a part of one


def test_a_node_that_spent_no_more_than_its_idle_over_a_window_gets_no_figure_not_a_cost_of_0() -> None:
    samples = [(float(i), 40 * i) for i in range(7)]  # a 6 s window of 40 transactions a second
    cpu = [{"master": i * 0.05, "replica1": i * 0.004} for i in range(7)]  # the follower at 4 ms/s, its idle at 5
    got = cpu_of(samples, cpu, {"master": 0.005, "replica1": 0.005}, {"master": "master", "replica1": "following"})
    assert got["master"].cpu_ms_per_trx == pytest.approx(1.125) and not got["master"].below_idle
    follower = got["replica1"]
    assert follower.cpu_ms_per_trx is None and follower.below_idle and follower.cpu_s == pytest.approx(0.024)


def _window(tmp_path: Path, name: str, master_ms: float = 0.35, follower_ms: float = 0.45,
            knobs_changed: dict[str, str] | None = None, cpu: bool = True, window_s: float | None = None,
            flush_ms: float | None = None) -> Path:
    """The committed live window's apply.json with the CPU figures a window now records (master and a following
    replica over its 300 s, five whole minutes each); with flush_ms, each node's write-back forced out after the
    window (a workload file's window) at that CPU-ms per window transaction."""
    doc = json.loads(LIVE.read_text())
    if cpu:
        doc["live"]["cpu"] = {
            node: {"role": role, "cpu_s": ms * 90_133 / 1000, "seconds": 300.0, "transactions": 90_133,
                   "idle_cpu_per_s": 0.002, "cpu_ms_per_trx": ms, "net": True,
                   "minutes_ms_per_trx": [ms * f for f in (0.97, 1.0, 1.03, 0.99, 1.01)],
                   "ci95_ms_per_trx": [ms * 0.97, ms * 1.03],
                   **({} if flush_ms is None else {"writeback": {
                       "cpu_ms_per_write_net": flush_ms, "run_cpu_ms_per_write_net": ms,
                       "cpu_ms_per_write_net_with_writeback": round(ms + flush_ms, 3)}})}
            for node, role, ms in (("master", "master", master_ms), ("replica2", "following", follower_ms))}
        doc["live"]["idle_trx"] = 0
    if window_s is not None:
        doc["live"]["window_s"] = window_s
    if knobs_changed is not None:
        doc["knobs_changed"] = knobs_changed
    path = tmp_path / name / "apply.json"
    path.parent.mkdir()
    path.write_text(json.dumps(doc))
    return path


def _sheet(text: str, setting: str) -> str:
    start = text.index(f"Capacity plan under {setting} ")
    end = text.find("Capacity plan under ", start + 1)
    return text[start:end if end >= 0 else None]


def test_own_runs_price_the_profiles_cpu_and_apply_under_their_setting_only(tmp_path: Path) -> None:
    env = env_for(tmp_path / "state", REPLBENCH_RESULTS=str(ROOT / "results"), REPLBENCH_PORT_BASE="9")
    window = _window(tmp_path, "w1")
    code, text, err = run_main(["model", "predict", "--profile", str(PROFILE), "--own-runs", str(window),
                                "--cores", "master=1,replica=1"], env)
    assert code == 0, err
    full = _sheet(text, "ROW-FULL")
    trx = 90_189 / 305  # the profile's transactions over its span
    half = mean_error([0.35 * f for f in (0.97, 1.0, 1.03, 0.99, 1.01)])  # the minutes' interval
    assert half is not None
    assert (f"Master CPU: {trx * 0.35 / 1000:.3g} [{trx * (0.35 - half[1]) / 1000:.3g}–"
            f"{trx * (0.35 + half[1]) / 1000:.3g}] cores") in full, full
    assert f"Replica CPU: {trx * 0.45 / 1000:.3g} [" in full, full
    assert "CPU and apply from your own live window(s) at 300.4 trx/s under ROW-FULL" in full, full
    assert "one SQL thread applied 5,399–5,399 trx/s in the drains" in full, full
    assert "the plan's rate is the windows' own" in full, full  # 296/s priced from a window at 300.4/s
    assert "A replica starts falling behind at 5,400 [5,400–5,400] transactions/s" in full, full
    assert "replica (mariadbd): needs 0.133 [" in full and "the replica saturating first" in full, full
    # the model's price under the settings the window did not run under, said so
    assert "priced by the model: your own runs ran under ROW-FULL, not ROW-MINIMAL" in _sheet(text, "ROW-MINIMAL")
    slow = _window(tmp_path, "slow", window_s=600.0)  # the same transactions over twice the time: 150/s
    code, text, err = run_main(["model", "predict", "--profile", str(PROFILE), "--own-runs", str(slow)], env)
    assert code == 0, err
    assert "held at 1.97× the windows' rate (a fit on one rate: its interval is the windows' noise" in text, text
    code, model_text, err = run_main(["model", "predict", "--profile", str(PROFILE), "--setting", "ROW-FULL"], env)
    assert code == 0, err
    assert "CPU and apply from your own" not in model_text and _sheet(model_text, "ROW-FULL") != full


def test_own_runs_with_the_write_back_forced_out_after_the_window_price_it_in(tmp_path: Path) -> None:
    """A workload file's window (the tool stopped with it): the flush's CPU per window transaction is added to the
    window's figure and its interval, and the line says the figure has it in."""
    env = env_for(tmp_path / "state", REPLBENCH_RESULTS=str(ROOT / "results"), REPLBENCH_PORT_BASE="9")
    window = _window(tmp_path, "w1", flush_ms=0.05)
    code, text, err = run_main(["model", "predict", "--profile", str(PROFILE), "--own-runs", str(window),
                                "--setting", "ROW-FULL"], env)
    assert code == 0, err
    trx = 90_189 / 305
    half = mean_error([0.35 * f for f in (0.97, 1.0, 1.03, 0.99, 1.01)])
    assert half is not None
    assert (f"Master CPU: {trx * 0.40 / 1000:.3g} [{trx * (0.40 - half[1]) / 1000:.3g}–"
            f"{trx * (0.40 + half[1]) / 1000:.3g}] cores") in text, text
    assert f"Replica CPU: {trx * 0.50 / 1000:.3g} [" in text, text
    assert "master 0.400 CPU-ms per transaction (master, net of idle, with the write-back its windows left" in text
    assert "without the write-back they left" not in text, text


def test_own_runs_that_are_no_live_window_with_cpu_figures_are_refused_in_one_line(tmp_path: Path) -> None:
    env = env_for(tmp_path / "state", REPLBENCH_RESULTS=str(ROOT / "results"), REPLBENCH_PORT_BASE="9")
    backlog = ROOT / "results" / "readme-assets" / "pinned-apply-20261203" / "1-pinned-apply.json"
    minimal = _window(tmp_path, "minimal", knobs_changed={"binlog_row_image": "MINIMAL"})
    for args, needle in (
            (["--profile", str(PROFILE), "--own-runs", str(tmp_path / "none.json")], "not a readable apply.json"),
            (["--profile", str(PROFILE), "--own-runs", str(backlog)], "not a live window's apply.json"),
            (["--profile", str(PROFILE), "--own-runs", str(LIVE)], "did not record them"),
            (["--profile", str(PROFILE), "--own-runs", f"{_window(tmp_path, 'full')},{minimal}"],
             "ran under different settings (ROW-FULL, ROW-MINIMAL)"),
            (["--mix", "update_user=100/s", "--own-runs", str(minimal)], "give it with --profile FILE")):
        code, out, err = run_main(["model", "predict", *args], env)
        lines = err.strip().splitlines()
        assert code == 2 and out == "" and "Traceback" not in err, err
        assert needle in lines[-1] and lines[-1].startswith("./run.sh: error:"), err


def test_the_foreign_tables_ratios_are_the_committed_evidences_and_each_shape_left_out_is_held_alike() -> None:
    """FOREIGN_CPU_RATIOS is what shapes-interval-20261203/compare.txt measured (the model's price ÷ the measured,
    per shape and role, three decimals), and analysis/shapes holds each shape left out where the script, by hand,
    found it held."""
    from replbench.analysis import shapes
    from replbench.core.config import FOREIGN_CPU_RATIOS, FOREIGN_SHAPES

    text = (ROOT / "results" / "readme-assets" / "shapes-interval-20261203" / "compare.txt").read_text()
    table = text.split("\n\n", 1)[0].splitlines()[1:]
    ratios: dict[str, list[float]] = {}
    order: list[str] = []
    for line in table:
        shape, _, role, *_, ratio = line.split()
        ratios.setdefault(role, []).append(float(ratio))
        order += [shape] if shape not in order else []
    assert tuple(order) == FOREIGN_SHAPES
    assert {role: tuple(r) for role, r in ratios.items()} == FOREIGN_CPU_RATIOS
    left = text.split("each shape left out", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    held: dict[str, list[bool]] = {}
    for line in left:
        held.setdefault(line.split()[0], []).append(line.rstrip().endswith(": held"))
    assert {role: shapes.left_out(r) for role, r in FOREIGN_CPU_RATIOS.items()} == held


def test_a_foreign_tables_sheet_says_how_far_the_models_price_was_from_the_measured(tmp_path: Path) -> None:
    env = env_for(tmp_path / "state", REPLBENCH_RESULTS=str(ROOT / "results"), REPLBENCH_PORT_BASE="9")
    code, text, err = run_main(["model", "predict", "--profile", str(PROFILE), "--setting", "ROW-FULL"], env)
    assert code == 0, err
    # the note and the line from FOREIGN_CPU_RATIOS (analysis/shapes): master 1.14× [0.37–3.53], replica 1.47×
    assert ("CPU and apply priced by the model on the suite's table, not yours: on 6 sysbench shapes the model's price "
            "was 1.14× the measured on the master and 1.47× the measured on the replica (geometric means); for a new "
            "shape, 0.37–3.53× and 0.66–3.24× (95 % prediction intervals, 9.6× and 4.9× wide") in text, text
    master = re.search(r"Master CPU: ([\d.]+) ", text)
    line = re.search(r"CPU for a table of another shape .*: master ([\d.]+) \[([\d.]+)–([\d.]+)\] cores", text)
    assert master is not None and line is not None, text
    price, (value, low, high) = float(master.group(1)), (float(g) for g in line.groups())
    assert (value, low, high) == pytest.approx((price / 1.138, price / 3.526, price / 0.367), rel=0.01)
    code, text, err = run_main(["model", "predict", "--profile", str(ROOT / "samples" / "write-mix.profile.json"),
                                "--setting", "ROW-FULL"], env)
    assert code == 0, err
    assert "CPU and apply" not in text, text  # the suite's own table: the model's own ground


def test_a_new_shapes_interval_comes_from_the_others_and_holds_them_each_left_out() -> None:
    from replbench.analysis import shapes

    # ratios e^0.1, e^0.3, e^0.5: log mean 0.3, sd 0.2; t(0.975, 2) = 4.303, × √(4/3): half-width 0.9937
    out = shapes.spread([math.exp(0.1), math.exp(0.3), math.exp(0.5)])
    assert out is not None and out.shapes == 3
    assert out.mean_ratio == pytest.approx(math.exp(0.3))
    assert (math.log(out.low), math.log(out.high)) == pytest.approx((-0.3 - 0.9937, -0.3 + 0.9937), abs=1e-4)
    assert out.width == pytest.approx(math.exp(2 * 0.9937), rel=1e-4)
    # a price of 2 cores: 2 ÷ e^0.3 within 2 × [low, high]
    band = shapes.corrected({"value": 2.0, "low": 1.5, "high": 2.5}, out)
    assert band == pytest.approx({"value": 2 / math.exp(0.3), "low": 2 * out.low, "high": 2 * out.high})
    assert shapes.spread([1.5]) is None and shapes.corrected(None, out) is None
    # left out in turn: three close shapes hold each other; a fourth far off is held by none of the others' spread
    assert shapes.left_out([1.0, 1.1, 1.2]) == [True, True, True]
    assert shapes.left_out([1.0, 1.01, 1.02, 3.0])[-1] is False
    assert shapes.left_out([1.0, 2.0]) == [None, None]
