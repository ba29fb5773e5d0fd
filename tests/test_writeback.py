"""A run's write-back (measure/writeback forces its own dirty pages out after the drain; analysis/writeback derives
the per-write figures; report/block prints them): hand-computed figures from two snapshots, and the block's two
lines. A real run's flush is checked by tests/test_run.py's write run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from replbench.analysis import writeback
from replbench.core.results import InnodbRest, summary_of
from replbench.core.results import NodeCounters as RunNodeFigures  # a run's per-node figures, not counters
from replbench.measure.counters import NodeCounters
from replbench.measure.samplers import Snapshot
from replbench.measure.writeback import Flush
from replbench.report.block import render_block

pytestmark = pytest.mark.unit

GOLDEN = Path(__file__).parent / "fixtures" / "golden-run"


def _snap(at: float, cpu: float, flushed: float, kb: float) -> Snapshot:
    status = {"Innodb_buffer_pool_pages_flushed": flushed, "Innodb_pages_written": flushed,
              "Innodb_dblwr_pages_written": flushed, "Innodb_data_written": 2 * 16384 * flushed,
              "Innodb_os_log_written": 512.0}
    return Snapshot(None, {"replica1": NodeCounters(status, {}, int(1024 * kb), at), "replica2": None},
                    {"replica1": cpu}, 0.0, 0, {}, at)


def _flush() -> Flush:
    # 2 s of flushing: 400 pages, 12,800 KB written by the process, 0.52 CPU-s (0.02 of it the idle rate's)
    before, after = _snap(50.0, 10.0, 1000, 5000), _snap(52.0, 10.52, 1400, 17800)
    return Flush(before.counters, after.counters, before.cpu, after.cpu, after.at - before.at,
                 InnodbRest.model_validate({"nodes": {"replica1": {"dirty_pages": 400, "history_length": 0,
                                                                   "rest_s": 1.8}},
                                            "waited_s": 1.8, "why": []}))


def test_the_flush_is_counted_per_write_net_of_idle_and_added_to_the_runs_own_figure() -> None:
    got = writeback.derive(_flush(), {"replica1": 0.01}, 100, {"replica1": 3.07},
                           {"replica1": RunNodeFigures(kb_written_per_write_net=10.7, pages_flushed_per_write_net=0.0)},
                           {"replica1": [0.01, 0.012, 0.008]})
    assert got.nodes is not None
    node = got.nodes["replica1"]
    assert node is not None
    assert got.seconds == 2.0 and got.writes == 100 and got.at_rest is True
    assert (node.dirty_pages, node.pages_flushed, node.doublewrite_pages) == (400, 400, 400)
    assert node.data_written_kb == 12800.0 and node.write_bytes == 12800 * 1024
    assert (node.cpu_s, node.cpu_s_net) == (0.52, 0.5)
    assert node.pages_flushed_per_write == 4.0 and node.kb_written_per_write == 128.0
    assert node.cpu_ms_per_write_net == 5.0 and (node.cpu_ms_per_write_net_resolution or 0) > 0
    assert (node.run_cpu_ms_per_write_net, node.cpu_ms_per_write_net_with_writeback) == (30.7, 35.7)
    assert (node.run_kb_written_per_write, node.kb_written_per_write_with_writeback) == (10.7, 138.7)
    assert node.pages_flushed_per_write_with_writeback == 4.0
    assert got.nodes["replica2"] is None  # a node a snapshot missed


def test_a_flush_that_adds_nothing_leaves_the_runs_figure_as_it_is() -> None:
    """A live window's figure carries four digits; a flush whose CPU is all idle adds 0 and must not round the sum
    below the run's own figure."""
    flush = _flush()
    got = writeback.node_figures(flush, "replica1", 0.26, 1000,
                                 writeback.InRun(cpu_ms_per_write_net=0.6572, kb_written_per_write=1.25,
                                                 pages_flushed_per_write=0.0))
    assert got is not None and got.cpu_ms_per_write_net == 0.0
    assert got.cpu_ms_per_write_net_with_writeback == got.run_cpu_ms_per_write_net == 0.6572
    assert got.kb_written_per_write_with_writeback == 14.1  # 12,800 KB over 1,000 writes added, to its digit


def test_a_node_not_at_rest_after_the_flush_is_said() -> None:
    flush = _flush()
    flush = replace(flush, rest=flush.rest.model_copy(update={"why": ["replica1: 5,000 dirty pages left after 60 s"]}))
    got = writeback.derive(flush, {}, 100, {}, {})
    assert got.at_rest is False and got.why == flush.rest.why


def test_the_block_shows_the_write_back_and_the_run_with_it() -> None:
    summary = json.loads((GOLDEN / "summary.json").read_text())
    assert "Write-back" not in render_block(summary_of(summary), GOLDEN.resolve())  # recorded before it was
    summary["writeback"] = writeback.derive(
        _flush(), {"replica1": 0.01}, 100, {"replica1": 3.07},
        {"replica1": RunNodeFigures(kb_written_per_write_net=10.7, pages_flushed_per_write_net=0.0)},
    ).model_dump(by_alias=True, exclude_unset=True)  # a summary's document, as experiments/run holds it
    lines = render_block(summary_of(summary), GOLDEN.resolve()).splitlines()
    flush = next(ln for ln in lines if ln.startswith("Write-back per successful write"))
    assert "2 s; forced flush: an upper bound on the steady state's pages and bytes per write, not on its CPU" in flush
    assert flush.endswith("replica1 5.000 CPU-ms net of idle, 4 pages flushed, 128.0 KB written"), flush
    both = next(ln for ln in lines if ln.startswith("Per successful write, in the run → with its write-back"))
    assert both.endswith("replica1 30.700 → 35.700 CPU-ms net of idle, 10.7 → 138.7 KB written"), both
    # a flush's CPU below its resolution is not printed as a cost
    summary["writeback"]["nodes"]["replica1"]["cpu_ms_per_write_net_resolution"] = 6.0
    lines = render_block(summary_of(summary), GOLDEN.resolve()).splitlines()
    assert "replica1 < 6.000 CPU-ms net of idle" in next(ln for ln in lines if ln.startswith("Write-back"))
