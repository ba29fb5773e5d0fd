"""A soak's analysis on series with known answers: the lag's growth per window with its interval, and the stalls
with the counters around them (analysis/soak.py)."""

from __future__ import annotations

import pytest

from replbench.analysis import soak
from replbench.core.config import STALL_P99_FACTOR


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
