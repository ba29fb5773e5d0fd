"""A soak's analysis on series with known answers: the lag's growth per window with its interval, and the stalls
with the counters around them (analysis/soak.py)."""

from __future__ import annotations

import json

import pytest

from replbench.analysis import soak
from replbench.core.config import STALL_P99_FACTOR, Settings

from .conftest import env_for, run_cli, run_folder, run_main


def _seconds(n: int, stalls: dict[int, float]) -> list[dict[str, object]]:
    return [{"second": s, "requests": 400, "errors": 0, "p50_ms": 3.0, "p99_ms": stalls.get(s, 6.0), "max_ms": 9.0}
            for s in range(n)]


def test_the_growth_per_window_recovers_a_known_slope_with_an_interval() -> None:
    t0 = 100.0
    # 0.01 s of lag per second, with a sawtooth of ±5 ms on top: every 60 s window fits about 0.01
    points = [(t0 + i / 10, 10.0 * (i / 10) + (5.0 if i % 2 else -5.0)) for i in range(0, 3000)]
    out = soak.growth_windows(points, t0, t0 + 300, 60.0)
    assert out["windows"] == 5
    assert out["mean_s_per_s"] == pytest.approx(0.01, abs=0.0005)
    low, high = out["ci95_s_per_s"]
    assert low <= out["mean_s_per_s"] <= high
    # the same slope in a DBA's unit: 10 ms of lag per second is 600 ms per minute
    assert out["mean_ms_per_min"] == pytest.approx(600.0, rel=0.05)
    assert out["ci95_ms_per_min"][0] <= out["mean_ms_per_min"] <= out["ci95_ms_per_min"][1]


def test_stalls_are_found_with_what_innodb_did_around_them() -> None:
    t0 = 10.0
    seconds = _seconds(120, {50: 6.0 * STALL_P99_FACTOR * 2, 51: 6.0 * STALL_P99_FACTOR * 3})
    lags = {"replica1": [(t0 + s + 0.5, 2000.0 if s == 90 else 20.0) for s in range(120)]}
    rows = [{"elapsed_s": t0 + s, "node": "master", "checkpoint_age_mb": 300.0 if 48 <= s <= 52 else 100.0,
             "dirty_pages": 1000, "history_length": 50, "pages_flushed_per_s": 2500.0 if s == 50 else 200.0,
             "rotations": 1 if s >= 51 else 0} for s in range(120)]
    out = soak.analyse(seconds, lags, rows, t0, t0 + 120, 60.0)
    assert [(s["from_s"], s["to_s"]) for s in out["stalls"]] == [(50, 52), (90, 91)]
    first = out["stalls"][0]
    assert first["p99_ms"] == 6.0 * STALL_P99_FACTOR * 3
    master = first["around"]["master"]
    assert master["checkpoint_age_mb"] == {"peak": 300.0, "usual": 100.0}
    assert master["pages_flushed_per_s"]["peak"] == 2500.0 and master["rotations"] == 1
    assert out["stalls"][1]["lag_ms"]["replica1"] == 2000.0


def test_a_short_soak_lists_its_windows_and_the_counters_of_every_node(topo: Settings) -> None:
    proc = run_cli(["soak", "write", "50", "--duration", "7s", "--window", "3s"], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = run_folder(proc.stdout)
    summary = json.loads((folder / "summary.json").read_text())
    for name in ("replica1", "replica2"):
        assert summary["soak"]["growth"][name]["windows"] == 2  # two whole 3 s windows in 7 s
    rows = (folder / "innodb.csv").read_text().splitlines()
    assert {line.split(",")[1] for line in rows[1:]} == {"master", "replica1", "replica2"}
    assert "Soak: lag growth per 3 s window" in proc.stdout and "Stalls: " in proc.stdout
    assert " ms/min" in proc.stdout  # printed in ms of lag per minute, not in s/s rounded to nothing


def test_a_soak_window_too_long_for_its_duration_exits_2() -> None:
    code, _, err = run_main(["soak", "write", "50", "--duration", "10s", "--window", "6s"])
    assert code == 2 and "fewer than two windows" in err and "Traceback" not in err, err
