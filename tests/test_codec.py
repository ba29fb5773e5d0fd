"""The results codec (core/results): every committed results file reads through its record, unknown keys are
refused, and a file written at the current version reads and writes back byte for byte (the codec changes no value).
Files are found by walking results/ (no git call: the unit tier starts no process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from replbench.analysis.profile import Profile
from replbench.core import results
from replbench.core.config import ROOT

RECORDS: dict[str, type[BaseModel]] = {
    "summary.json": results.RunSummary, "meta.json": results.RunMeta, "sweep.json": results.SweepRecord,
    "study.json": results.StudyRecord, "campaign.json": results.CampaignRecord, "apply.json": results.ApplyRecord,
    "bigtx.json": results.BigTxRecord, "model.json": results.CostModel, "validate.json": results.Validation,
    "recording.json": results.RecordingRecord, "profile.json": Profile, "bench-app.json": results.BenchAppRecord,
    "find-users.json": results.FindUsersRecord,
}


def _committed() -> list[tuple[Path, type[BaseModel]]]:
    out = []
    for path in sorted((ROOT / "results").rglob("*.json")):
        kind = next((r for name, r in RECORDS.items() if path.name == name or path.name.endswith("-" + name)), None)
        if kind is not None:
            out.append((path, kind))
    return out


def _as_dict_writer_wrote(data: object) -> str:
    """The text the dict writer (write_json, now gone) wrote of a dictionary."""
    return json.dumps(data, indent=2, sort_keys=True, default=str) + "\n"


def _written(tmp_path: Path, record: BaseModel) -> str:
    results.write_record(tmp_path / "out.json", record)
    return (tmp_path / "out.json").read_text()


def test_every_committed_results_file_reads_through_its_record_and_writes_back_unchanged(tmp_path: Path) -> None:
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
            # byte for byte: a dictionary's == would take a float coerced to an int (5.0 → 5) for the same
            assert _written(tmp_path, record) == path.read_text(), path.relative_to(ROOT)
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


def test_every_kind_but_three_has_committed_examples() -> None:
    """bench-app.json, find-users.json and bigtx.json have none committed: their round trips are below."""
    kinds = {kind for _, kind in _committed()}
    assert kinds == set(RECORDS.values()) - {results.BenchAppRecord, results.FindUsersRecord, results.BigTxRecord}


def test_a_recording_refuses_a_misspelt_key_and_reads_a_committed_one_back_unchanged(tmp_path: Path) -> None:
    path = next((ROOT / "results").rglob("recording.json"))  # every one: the first test
    assert _written(tmp_path, results.recording_of(results.load(path))) == path.read_text()
    with pytest.raises(ValueError, match="rounds_dnoe"):
        results.recording_of({"folder": "validate-x", "rounds_dnoe": 1})
    with pytest.raises(ValueError, match="sinse"):  # a run's profile entry, two levels down
        results.recording_of({"cases": [{"scenario": "mixed", "rate": 200, "repeats": [
            {"run": "r", "profile": {"file": "r/profile.json", "sinse": "2026-11-29 03:58:22"}}]}]})


def test_bench_app_and_find_users_records_refuse_a_misspelt_key_and_keep_the_dictionarys_values(
        tmp_path: Path) -> None:
    bench = {"rate": 40, "duration_s": 2.0, "repeat": 2, "figures": {
        "asyncmy/uvloop/floor": {"app": [0.5, 0.25], "ratio": [], "db": [0, 1.5], "success": [1.0, 1.0],
                                 "p99": [3.2, None]},
        "asyncmy/uvloop/get": {"app": [1.0, None], "ratio": [2.0, None], "db": [0.4, 0.5], "success": [1.0, 0.99],
                               "p99": [4, 5.5]}}}
    shapes = {"two-step": {"app": [1.5, 1.25], "replicas": [0.8, None], "p99": [7.5, 8]},
              "server-steps": {"app": [1.0], "replicas": [1.0], "p99": [6]}}
    for kind, data in ((results.BenchAppRecord, bench), (results.FindUsersRecord, shapes)):
        text = _written(tmp_path, kind.model_validate(data))
        assert text == _as_dict_writer_wrote(data)  # ints still ints, None null
        # the JSON json.dumps(data, indent=2) wrote before, in the one format: only the keys' order and the newline
        assert json.loads(text) == json.loads(json.dumps(data, indent=2)) and text.endswith("}\n")
    with pytest.raises(ValueError, match="sucess"):
        results.BenchAppRecord.model_validate({"figures": {"a/b/floor": {"sucess": [1.0]}}})
    with pytest.raises(ValueError, match="duration"):
        results.BenchAppRecord.model_validate({"duration": 2.0})
    with pytest.raises(ValueError, match="replica"):
        results.FindUsersRecord.model_validate({"two-step": {"replica": [1.0]}})


def test_a_profile_is_written_through_write_record_as_its_committed_file(tmp_path: Path) -> None:
    path = next((ROOT / "results").rglob("profile.json"))
    profile = Profile.model_validate(results.load(path))
    assert _written(tmp_path, profile) == path.read_text()
    with pytest.raises(ValueError, match="spam_s"):
        Profile.model_validate({**results.load(path), "spam_s": 1})


def test_a_big_transaction_unit_declares_what_its_setup_records_and_a_study_unit_its_error(tmp_path: Path) -> None:
    """bigtx.json holds experiments/prepare.settings_and_data's keys as apply.json does; a study unit that failed
    with an exception its error (no committed file holds either)."""
    bigtx = {"table": "bench_idx", "rows_asked": [1000], "repeat": 1, "nonce": "ab12cd34", "status": "ok",
             "knobs": {}, "knobs_changed": {}, "knobs_readback": {"master": {}}, "knob_mismatches": [],
             "links": {}, "indexes": {"drop_indexes": None}, "warm_up_s": {"master": 1.5},
             "buffer_pools": {"master": {"fits": True}},
             "settle": {"settled": True, "waited_s": 2.5, "waited_for": [], "why": []}, "folder": "x",
             "transactions": [{"rows": 1000, "first_id": 1, "rows_changed": 1000,
                               "rows_holding_the_new_value": 1000, "binlog_bytes": 123456,
                               "binlog_cache_spilled": False, "binlog_cache_disk_use": 0, "master_seconds": 0.25,
                               "gtid": "0-1-5", "lag_floor_ms": 10.0, "repeat": 1, "bytes_per_row": 123.5,
                               "replicas": {"replica1": {"applied_after_commit_s": 0.5, "peak_ms": 480.0,
                                                         "above_floor_s": 0.4, "samples": 12}}}]}
    assert _written(tmp_path, results.bigtx_of(bigtx)) == _as_dict_writer_wrote(bigtx)
    study = {"name": "s", "units": [{"repeat": 1, "cell": "a", "scenario": "write", "group": "write",
                                     "measure": "run", "rate": 400, "status": "failed",
                                     "error": "RuntimeError: boom"}]}
    assert _written(tmp_path, results.study_of(study)) == _as_dict_writer_wrote(study)


def test_a_nan_or_an_infinity_is_written_as_the_dictionary_writer_wrote_it(tmp_path: Path) -> None:
    """json.dumps writes NaN and Infinity; a record writes them so too, in a typed field and in an untyped map."""
    model = {"observations": [{"r2": float("nan"), "high": float("inf")}],
             "settings": {"ROW-FULL": {"master_cpu_s": {"r2": float("nan")}}}}
    assert _written(tmp_path, results.model_of(model)) == _as_dict_writer_wrote(model)


def test_a_kept_meta_is_written_as_the_dictionary_writer_wrote_it(tmp_path: Path) -> None:
    """report/assets.keep_meta: what the report reads of a run's meta.json, through its record, paths then cut."""
    from replbench.report.assets import META_KEPT, SETTINGS_THAT_MATTER, Writer

    metas = sorted((ROOT / "results").rglob("meta.json"))[:200]
    writer = Writer(tmp_path / "results", tmp_path / "report.md")
    for src in metas:
        doc = results.load(src)
        meta = {k: v for k, v in doc.items() if k in META_KEPT}
        if "server_variables_not_default" in meta:
            master = (meta["server_variables_not_default"] or {}).get("master") or {}
            meta["server_variables_not_default"] = {
                "master": {k: v for k, v in master.items() if k in SETTINGS_THAT_MATTER}}
        writer.keep_meta(src, tmp_path / "kept.json")
        assert (tmp_path / "kept.json").read_text() == writer.without_paths(_as_dict_writer_wrote(meta)), src
