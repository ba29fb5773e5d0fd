"""A soak's analysis on series with known answers: the lag's growth per window with its interval, and the stalls
with the counters around them (analysis/soak.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replbench.analysis import soak
from replbench.core.config import STALL_P99_FACTOR, Settings
from replbench.core.results import RunSummary, Soak, SoakWindow, StallCounter
from replbench.report import block

from .conftest import env_for, run_cli, run_folder, run_main


def _seconds(n: int, stalls: dict[int, float]) -> list[dict[str, object]]:
    return [{"second": s, "requests": 400, "errors": 0, "p50_ms": 3.0, "p99_ms": stalls.get(s, 6.0), "max_ms": 9.0}
            for s in range(n)]


def test_the_growth_per_window_recovers_a_known_slope_with_an_interval() -> None:
    t0 = 100.0
    # 0.01 s of lag per second, with a sawtooth of ±5 ms on top: every 60 s window fits about 0.01
    points = [(t0 + i / 10, 10.0 * (i / 10) + (5.0 if i % 2 else -5.0)) for i in range(0, 3000)]
    out = soak.growth_windows(points, t0, t0 + 300, 60.0)
    assert out.windows == 5 and out.ci95_s_per_s is not None and out.ci95_ms_per_min is not None
    assert out.mean_s_per_s == pytest.approx(0.01, abs=0.0005)
    low, high = out.ci95_s_per_s
    assert low <= out.mean_s_per_s <= high
    # the same slope in a DBA's unit: 10 ms of lag per second is 600 ms per minute
    assert out.mean_ms_per_min == pytest.approx(600.0, rel=0.05)
    assert out.ci95_ms_per_min[0] <= out.mean_ms_per_min <= out.ci95_ms_per_min[1]


def test_stalls_are_found_with_what_innodb_did_around_them() -> None:
    t0 = 10.0
    seconds = _seconds(120, {50: 6.0 * STALL_P99_FACTOR * 2, 51: 6.0 * STALL_P99_FACTOR * 3})
    lags = {"replica1": [(t0 + s + 0.5, 2000.0 if s == 90 else 20.0) for s in range(120)]}
    rows = [{"elapsed_s": t0 + s, "node": "master", "checkpoint_age_mb": 300.0 if 48 <= s <= 52 else 100.0,
             "dirty_pages": 1000, "history_length": 50, "pages_flushed_per_s": 2500.0 if s == 50 else 200.0,
             "rotations": 1 if s >= 51 else 0} for s in range(120)]
    out = soak.analyse(seconds, lags, rows, t0, t0 + 120, 60.0)
    stalls = out.stalls or []
    assert [(s.from_s, s.to_s) for s in stalls] == [(50, 52), (90, 91)]
    first = stalls[0]
    assert first.p99_ms == 6.0 * STALL_P99_FACTOR * 3
    master = (first.around or {})["master"]
    assert master.checkpoint_age_mb == StallCounter(peak=300.0, usual=100.0)
    assert master.pages_flushed_per_s is not None and master.pages_flushed_per_s.peak == 2500.0
    assert master.rotations == 1
    assert (stalls[1].lag_ms or {})["replica1"] == 2000.0
    # no costs: the section holds neither windows nor equilibrium, absent from the file rather than null
    assert out.model_dump(exclude_unset=True).keys() == {"growth", "usual_p99_ms", "stalls"}


Rows = list[dict[str, object]]


def _flushing(n: int, settle_at: int, flush_from: int | None = None) -> tuple[Rows, Rows, Rows]:
    """n seconds of 100 writes/s on replica1: dirty pages and checkpoint age climb until settle_at, then stay flat;
    the page cleaner flushes 50 pages/s from then on (none before), the process writes 2 MB/s (1 MB/s before), and
    its mariadbd burns 30 % of a core. flush_from: when the flushing begins, if not at settle_at."""
    flush_from = settle_at if flush_from is None else flush_from
    cpu = [{"elapsed_s": float(s + 1), "replica1": 30.0} for s in range(n)]
    innodb = [{"elapsed_s": float(s), "node": "replica1", "checkpoint_age_mb": float(min(s, settle_at)),
               "dirty_pages": 100 * min(s, settle_at) + (7 if s % 2 else -7), "history_length": 0,
               "pages_flushed_per_s": 50.0 if s >= flush_from else 0.0, "rotations": 0} for s in range(n)]
    io = [{"elapsed_s": float(s), "node": "replica1", "write_kb_per_s": 2048.0 if s >= settle_at else 1024.0}
          for s in range(n)]
    return cpu, innodb, io


def test_each_soak_window_prices_a_write_and_the_steady_state_begins_where_innodb_is_flat() -> None:
    seconds = [{"second": s, "requests": 100, "errors": 0, "p99_ms": 5.0} for s in range(600)]
    cpu, innodb, io = _flushing(600, settle_at=240)
    windows = soak.cost_windows(seconds, 1.0, cpu, {"replica1": 0.1}, innodb, io, 0.0, 600.0, 60.0)
    assert len(windows) == 10 and windows[0].writes == 6000
    first, last = (windows[0].nodes or {})["replica1"], (windows[-1].nodes or {})["replica1"]
    # 60 s × (0.30 - 0.10 idle) CPU-s over 6,000 writes: 2 ms; before flushing 0 pages and 1,024 KB / 100 writes
    assert (first["cpu_ms_per_write_net"], first["pages_flushed_per_write"], first["kb_written_per_write"]) == \
        (2.0, 0.0, 10.24)
    assert (last["pages_flushed_per_write"], last["kb_written_per_write"]) == (0.5, 20.48)
    eq = soak.equilibrium(windows)
    assert eq.reached and eq.from_s == 240 and eq.windows == 6
    assert (eq.per_write or {})["replica1"] == {"cpu_ms_per_write_net": 2.0, "pages_flushed_per_write": 0.5,
                                                "kb_written_per_write": 20.48}
    # still climbing at the end, flushing from 240 s: no equilibrium, and what moved is said
    climbing = soak.equilibrium(soak.cost_windows(seconds, 1.0, *_flushing(600, 600, 240)[:1], {},
                                                  *_flushing(600, 600, 240)[1:], 0.0, 600.0, 60.0))
    assert not climbing.reached and climbing.per_write is None
    assert any("replica1's dirty pages +6,000.0/min" in m for m in climbing.moving or []), climbing
    # flat from 240 s but the page cleaner idle until 420 s: the steady state starts where it writes back
    late = soak.equilibrium(soak.cost_windows(seconds, 1.0, *_flushing(600, 240, 420)[:1], {},
                                              *_flushing(600, 240, 420)[1:], 0.0, 600.0, 60.0))
    assert late.reached and late.from_s == 420, late
    never = soak.equilibrium(soak.cost_windows(seconds, 1.0, *_flushing(600, 240, 600)[:1], {},
                                               *_flushing(600, 240, 600)[1:], 0.0, 600.0, 60.0))
    assert not never.reached and never.moving == ["replica1 flushed no page in the window from 420 s"], never


def _window(start: int, pages: float, writes: int = 1000) -> SoakWindow:
    return SoakWindow(from_s=start, writes=writes, nodes={"replica1": {
        "cpu_ms_per_write_net": 0.3 if pages else 0.2, "pages_flushed_per_write": pages,
        "kb_written_per_write": 10.0 + 100 * pages, "checkpoint_age_mb": 100.0, "dirty_pages": 1000.0}})


def test_a_soak_that_writes_back_in_bursts_is_priced_over_whole_cycles(tmp_path: Path) -> None:
    # bursts at windows 3-4 (its tail spilling into 4), 8 and 12 (under way at the end); a stray page at 6
    pages = {3: 5.0, 4: 0.2, 6: 0.04, 8: 4.0, 12: 6.0}
    windows = [_window(60 * i, pages.get(i, 0.0)) for i in range(13)]
    assert [(r.start, r.stop) for r in soak.bursts(windows, "replica1")] == [(3, 5), (8, 9), (12, 13)]
    out = soak.cycles(windows)["replica1"]
    # one whole cycle, windows 5-8: the last burst, in the soak's last window, may not be whole and ends none
    assert (out.bursts_from_s, out.period_s, out.cycles, out.windows) == ([180, 480, 720], 270, 1, 4)
    # over it, weighted by writes: pages (0 + 0.04 + 0 + 4) / 4; CPU (0.2 + 0.3 + 0.2 + 0.3) / 4 (a window that
    # flushed spent 0.3); KB (10 + 14 + 10 + 410) / 4
    assert out.per_write == {"cpu_ms_per_write_net": 0.25, "pages_flushed_per_write": 1.01,
                             "kb_written_per_write": 111.0}
    assert (out.before_windows, out.before) == (3, {"cpu_ms_per_write_net": 0.2, "pages_flushed_per_write": 0.0,
                                                    "kb_written_per_write": 10.0})
    # a node flushing in every window is one burst and no cycle (the equilibrium prices it)
    steady = soak.cycles([_window(60 * i, 1.0) for i in range(6)])["replica1"]
    assert (steady.cycles, steady.per_write, steady.before) == (0, None, None)
    # the block says so when no flat equilibrium is reached and every node cycles
    summary = RunSummary(soak=Soak(windows=windows, equilibrium=soak.equilibrium(windows), cycles=soak.cycles(windows)))
    (tmp_path / "report.txt").write_text("")  # vegeta's text report, which the block prints verbatim
    text = block.render_block(summary, tmp_path)
    assert "Soak steady state: cycles (InnoDB writes back in bursts, never flat)" in text, text
    assert "replica1 bursts every 4 min from 180, 480, 720 s; over 1 whole cycle (4 windows) 0.250 CPU-ms" in text


def test_a_short_soak_lists_its_windows_and_the_counters_of_every_node(topo: Settings) -> None:
    proc = run_cli(["soak", "write", "50", "--duration", "7s", "--window", "3s"], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = run_folder(proc.stdout)
    summary = json.loads((folder / "summary.json").read_text())
    for name in ("replica1", "replica2"):
        assert summary["soak"]["growth"][name]["windows"] == 2  # two whole 3 s windows in 7 s
    rows = (folder / "innodb.csv").read_text().splitlines()
    assert {line.split(",")[1] for line in rows[1:]} == {"master", "replica1", "replica2"}
    # each window's cost per write, every node; at 20,000 rows nothing flushes in 7 s, so the structure alone is
    # checked here, the steady state's figures at 8M (docs/decisions/write-back.md)
    windows = summary["soak"]["windows"]
    assert len(windows) == 2 and set(windows[0]["nodes"]) == {"master", "replica1", "replica2"}, windows
    assert windows[0]["writes"] > 0 and windows[0]["nodes"]["replica1"]["cpu_ms_per_write_net"] is not None
    assert summary["soak"]["equilibrium"]["reached"] is False  # two windows: fewer than the three it needs
    assert "Soak windows, per successful write (the worse replica; CPU net of idle): 0 s " in proc.stdout
    assert "Soak: lag growth per 3 s window" in proc.stdout and "Stalls: " in proc.stdout
    assert " ms/min" in proc.stdout  # printed in ms of lag per minute, not in s/s rounded to nothing


def test_a_soak_window_too_long_for_its_duration_exits_2() -> None:
    code, _, err = run_main(["soak", "write", "50", "--duration", "10s", "--window", "6s"])
    assert code == 2 and "fewer than two windows" in err and "Traceback" not in err, err
