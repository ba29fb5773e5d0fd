"""Big transactions (issue: where row-based replication hurts most) on the small topology: a 10^4-row UPDATE's
figures are all there, every row changed, and the binlog holds row images under ROW but one statement under
STATEMENT."""

from __future__ import annotations

import json
import os
from pathlib import Path

from replbench.core.config import Settings

from .conftest import env_for, replicating, run_cli, run_main, study_folder


def big(topo: Settings, *args: str) -> tuple[dict, str]:
    proc = run_cli(["big-transaction", "--rows", "10000", *args], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = Path(proc.stderr.split("→")[-1].strip().splitlines()[0])
    folder = folder if folder.is_absolute() else Path(__file__).parent.parent / folder
    return json.loads((folder / "bigtx.json").read_text()), proc.stdout


def test_a_big_transactions_figures_are_all_there(topo: Settings) -> None:
    data, out = big(topo)
    (t,) = data["transactions"]
    assert t["rows"] == t["rows_changed"] == t["rows_holding_the_new_value"] == 10000
    assert t["binlog_bytes"] > 10000 * 100 and t["bytes_per_row"] > 100  # a before and an after image per row
    assert t["master_seconds"] > 0 and isinstance(t["binlog_cache_spilled"], bool)
    for name in ("replica1", "replica2"):
        r = t["replicas"][name]
        assert r["applied_after_commit_s"] is not None and r["samples"] > 0 and r["peak_ms"] is not None
    assert "| 10,000 |" in out and "Rows: 1 of 1 transactions left every row" in out
    assert replicating(topo)


def test_under_statement_the_binlog_carries_the_statement_not_the_rows(topo: Settings) -> None:
    data, _ = big(topo, "--binlog-format", "STATEMENT")
    (t,) = data["transactions"]
    assert t["rows_holding_the_new_value"] == 10000 and t["binlog_bytes"] < 10000  # one statement, not 10^4 rows


def test_bad_rows_exit_2() -> None:
    for rows in ("10,x", "0", ""):
        code, _, err = run_main(["big-transaction", "--rows", rows])
        assert code == 2 and "--rows" in err and "Traceback" not in err, (rows, err)


def test_a_big_transaction_study_compares_its_cells(topo: Settings, tmp_path: Path) -> None:
    text = ('description = "tiny big transactions"\nscenarios = ["write-bulk"]\nrate = 1\n'
            'measure = ["big-transaction"]\nrepeat = 1\nprimary = ["bigtx_binlog_mb"]\n[vary]\nrows = [2000]\n'
            'binlog_format = ["ROW", "STATEMENT"]\n')
    path = tmp_path / "bt.toml"
    path.write_text(text)
    proc = run_cli(["study", str(path)], env_for(topo.state), timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _, data = study_folder(proc.stdout)
    assert data["cores"] == os.cpu_count()  # the host's, for the core ceiling (docs/studies.md)
    mb = data["comparison"]["write-bulk"]["bigtx_binlog_mb"]
    row, statement = mb["rows=2000 binlog_format=ROW"]["median"], mb["rows=2000 binlog_format=STATEMENT"]["median"]
    assert row > 100 * statement  # 2,000 row images against one statement
    assert data["comparison"]["write-bulk"]["bigtx_applied_s"]["rows=2000 binlog_format=ROW"]["median"] is not None
