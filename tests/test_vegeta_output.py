"""Readers of vegeta output, checked against real vegeta v12.13.0 files (tests/fixtures/vegeta, copied from
../shared/fixtures/vegeta so a clone anywhere runs them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replbench.core.config import Settings
from replbench.load import attack
from replbench.measure import timeline
from replbench.report.block import vegeta_text
from replbench.topology.install import VEGETA_VERSION, ensure_vegeta, vegeta_version

from .conftest import FIXTURES


def read_csv(name: str) -> list[attack.ResultRow]:
    with open(FIXTURES / name, newline="") as f:
        return list(attack.parse_csv(f))


def test_csv_rows_of_a_successful_run() -> None:
    rows = read_csv("results.csv")
    assert len(rows) == 600
    assert {r.code for r in rows} == {200}
    assert {r.method for r in rows} == {"GET", "POST"}
    assert all(r.latency_ns > 0 and r.error == "" for r in rows)


def test_csv_rows_of_a_failing_run() -> None:
    rows = read_csv("failing-results.csv")
    codes = {code: sum(1 for r in rows if r.code == code) for code in {r.code for r in rows}}
    assert codes == {0: 200, 200: 200, 500: 200}
    refused = [r for r in rows if r.code == 0]
    assert all("connection refused" in r.error for r in refused)


def test_timeline_counts_outcomes_per_endpoint() -> None:
    tl = timeline.build(read_csv("failing-results.csv"))
    assert tl.total == 600
    assert tl.outcomes["api/items"] == {"200": 200, "0": 200}
    assert tl.outcomes["fail"] == {"500": 200}
    assert sum(s["requests"] for s in tl.seconds) == 600
    assert sum(s["errors"] for s in tl.seconds) == 400
    assert len(tl.seconds) in (3, 4)


@pytest.mark.integration  # runs the vegeta binary
def test_decode_with_real_vegeta_matches_the_csv_fixture(settings: Settings) -> None:
    vegeta = ensure_vegeta(settings)
    assert vegeta_version(str(vegeta)) == VEGETA_VERSION
    decoded = list(attack.decode(vegeta, FIXTURES / "results.bin"))
    assert decoded == read_csv("results.csv")


@pytest.mark.integration  # runs the vegeta binary
def test_our_reports_have_vegetas_text_format(settings: Settings, tmp_path: Path) -> None:
    """vegeta report on the fixture's results.bin reproduces the fixture's report.txt byte for byte."""
    vegeta = ensure_vegeta(settings)
    (tmp_path / "results.bin").write_bytes((FIXTURES / "results.bin").read_bytes())
    attack.write_reports(vegeta, tmp_path)
    assert (tmp_path / "report.txt").read_text() == (FIXTURES / "report.txt").read_text()
    assert json.loads((tmp_path / "report.json").read_text()) == json.loads((FIXTURES / "report.json").read_text())
    assert (tmp_path / "hdrplot.txt").read_text().splitlines()[0] == \
        (FIXTURES / "hdrplot.txt").read_text().splitlines()[0]
    assert "<html" in (tmp_path / "plot.html").read_text().lower()


def test_block_keeps_the_report_verbatim_but_cuts_a_long_error_set(tmp_path: Path) -> None:
    text = (FIXTURES / "failing-report.txt").read_text()
    assert vegeta_text(FIXTURES / "failing-report.txt") == text.rstrip("\n")
    many = text.rstrip("\n") + "".join(f"\nerror number {i}" for i in range(30)) + "\n"
    (tmp_path / "report.txt").write_text(many)
    cut = vegeta_text(tmp_path / "report.txt", max_errors=5)
    assert cut.splitlines()[:8] == many.splitlines()[:8]
    assert "more distinct errors" in cut.splitlines()[-1]
