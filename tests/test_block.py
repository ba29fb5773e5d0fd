"""The printed block is a reporter over the run's summary alone: a results folder renders the same block whatever
the code's layout (golden: rendered by the code before the move into subpackages, from a real 8M write run)."""

from __future__ import annotations

import json
from pathlib import Path

from replbench.core.results import summary_of
from replbench.report.block import render_block

GOLDEN = Path(__file__).parent / "fixtures" / "golden-run"


def test_the_same_results_folder_renders_the_same_block() -> None:
    summary = json.loads((GOLDEN / "summary.json").read_text())
    assert render_block(summary_of(summary), GOLDEN.resolve()) == (GOLDEN / "block.golden.txt").read_text()


def test_the_block_shows_what_the_summary_holds_and_nothing_else() -> None:
    summary = json.loads((GOLDEN / "summary.json").read_text())
    del summary["rows_checked"], summary["buffer_pools"]
    block = render_block(summary_of(summary), GOLDEN.resolve())
    assert "Rows: " not in block and "Buffer pool: " not in block
    assert block.startswith("Gunicorn cpu: ") and "Status: ok" in block


def test_the_disk_line_shows_the_syncs_net_of_idle_where_the_summary_has_them() -> None:
    summary = json.loads((GOLDEN / "summary.json").read_text())
    master = summary["replication"]["nodes"]["master"]
    # recorded before the idle counter rates
    assert "net of idle" not in render_block(summary_of(summary), GOLDEN.resolve())
    master.update(fsyncs_per_write_net=0.812, binlog_syncs_per_write_net=0.405)
    line = next(ln for ln in render_block(summary_of(summary), GOLDEN.resolve()).splitlines()
                if ln.startswith("Disk per"))
    assert "(net of idle: 0.812 fsyncs + 0.405 binlog syncs)" in line, line
    # with the idle rates of every count, the KB written and the buffer pool's counts are net of idle too
    for node in summary["replication"]["nodes"].values():
        node.update(kb_written_per_write_net=1.25, pool_disk_reads_per_write_net=0.5,
                    pages_flushed_per_write_net=0.25, kb_read_per_write_net=8.0, fsyncs_per_write_net=0.812)
    block = render_block(summary_of(summary), GOLDEN.resolve()).splitlines()
    assert "binlog syncs, 1.2 KB)" in next(ln for ln in block if ln.startswith("Disk per"))
    pool = next(ln for ln in block if ln.startswith("Buffer pool per"))
    assert pool.startswith("Buffer pool per successful write (net of idle): master 0.5 pages read from disk, "
                           "0.25 pages flushed, 8 KB read"), pool
