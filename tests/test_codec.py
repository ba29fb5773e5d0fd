"""The results codec (core/results): every committed results file reads through its record, unknown keys are
refused, and a file written at the current version reads and writes back byte for byte (the codec changes no value).
Files are found by walking results/ (no git call: the unit tier starts no process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from replbench.core import results
from replbench.core.config import ROOT

RECORDS: dict[str, type[BaseModel]] = {
    "summary.json": results.RunSummary, "meta.json": results.RunMeta, "sweep.json": results.SweepRecord,
    "study.json": results.StudyRecord, "campaign.json": results.CampaignRecord, "apply.json": results.ApplyRecord,
    "bigtx.json": results.BigTxRecord, "model.json": results.CostModel, "validate.json": results.Validation,
}


def _committed() -> list[tuple[Path, type[BaseModel]]]:
    out = []
    for path in sorted((ROOT / "results").rglob("*.json")):
        kind = next((r for name, r in RECORDS.items() if path.name == name or path.name.endswith("-" + name)), None)
        if kind is not None:
            out.append((path, kind))
    return out


def test_every_committed_results_file_reads_through_its_record_and_writes_back_unchanged() -> None:
    files = _committed()
    assert len(files) > 1000  # the walk found the committed results (a broken glob would pass on nothing)
    rewritten = 0
    for path, kind in files:
        raw = results.load(path)
        doc = results.migrate(raw) if kind in (results.RunSummary, results.RunMeta) else raw
        try:
            record = kind.model_validate(doc)  # extra="forbid": a key no record declares fails here
        except ValueError as exc:
            pytest.fail(f"{path.relative_to(ROOT)}: {exc}")
        if raw.get("schema_version") == results.SCHEMA_VERSION or kind not in (results.RunSummary, results.RunMeta):
            assert results.document_of(record) == raw, path.relative_to(ROOT)  # what write_record writes
            rewritten += 1
    assert rewritten > 1000


def test_a_key_no_record_declares_is_refused_where_it_is_written(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="goodptu"):
        results.write_run(tmp_path, {"scenario": "write"}, {"status": "ok", "goodptu": 400.0})
    with pytest.raises(ValueError, match="rows_chnged"):  # nested records refuse theirs too
        results.write_run(tmp_path, {"scenario": "write"}, {"binlog": {"rows_chnged": 3}})


def test_a_run_is_written_stamped_and_read_back_as_written(tmp_path: Path) -> None:
    meta, summary = results.write_run(tmp_path, {"scenario": "write", "rate": 400},
                                      {"status": "ok", "rate": 400, "goodput": 399.5, "binlog": {"rows_changed": 3}})
    assert summary is not None and summary.schema_version == results.SCHEMA_VERSION
    assert results.read_summary(tmp_path) == summary and results.read_meta(tmp_path) == meta
    assert json.loads((tmp_path / "summary.json").read_text()) == {
        "binlog": {"rows_changed": 3}, "goodput": 399.5, "rate": 400, "schema_version": 1, "status": "ok"}


def test_an_older_summary_is_migrated_its_keys_renamed_never_dropped() -> None:
    v0 = {"status": "ok", "faults": [{"node": "replica1", "lost_at_s": 3.0}]}
    summary = results.summary_of(v0)
    assert summary.schema_version == results.SCHEMA_VERSION
    assert summary.nodes_lost is not None and summary.nodes_lost[0].node == "replica1"
