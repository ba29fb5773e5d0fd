"""The results codec (core/results): every committed results file is at its kind's current version (KINDS: the
committed files were migrated by tools/migrate_results.py), reads through its record, unknown keys are refused, and
a file reads and writes back byte for byte (the codec changes no value); an older document of every kind is migrated
on read, its values unchanged. Files are found by walking results/ (no git call: the unit tier starts no process)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from replbench.analysis.profile import Profile, ProfileError
from replbench.analysis.profile import read as read_profile
from replbench.core import results
from replbench.core.config import ROOT

RECORDS: dict[str, type[BaseModel]] = {**results.RECORDS, "profile.json": Profile}  # every kind's record
READERS: dict[str, Callable[[dict[str, Any]], BaseModel]] = {
    "summary.json": results.summary_of, "meta.json": results.meta_of, "sweep.json": results.sweep_of,
    "study.json": results.study_of, "campaign.json": results.campaign_of, "apply.json": results.apply_of,
    "bigtx.json": results.bigtx_of, "model.json": results.model_of, "validate.json": results.validation_of,
    "recording.json": results.recording_of, "bench-app.json": results.bench_app_of,
    "find-users.json": results.find_users_of,
}  # every kind's `*_of` (profile.json's reader is analysis/profile.read, of a file)

# documents of the kinds no committed file holds, as their writers write them (before the version's stamp)
BENCH_APP: dict[str, Any] = {"rate": 40, "duration_s": 2.0, "repeat": 2, "figures": {
    "asyncmy/uvloop/floor": {"app": [0.5, 0.25], "ratio": [], "db": [0, 1.5], "success": [1.0, 1.0],
                             "p99": [3.2, None]},
    "asyncmy/uvloop/get": {"app": [1.0, None], "ratio": [2.0, None], "db": [0.4, 0.5], "success": [1.0, 0.99],
                           "p99": [4, 5.5]}}}
SHAPES: dict[str, Any] = {"two-step": {"app": [1.5, 1.25], "replicas": [0.8, None], "p99": [7.5, 8]},
                          "server-steps": {"app": [1.0], "replicas": [1.0], "p99": [6]}}
# bigtx.json holds experiments/prepare.settings_and_data's keys as apply.json does
BIGTX: dict[str, Any] = {
    "table": "bench_idx", "rows_asked": [1000], "repeat": 1, "nonce": "ab12cd34", "status": "ok", "knobs": {},
    "knobs_changed": {}, "knobs_readback": {"master": {}}, "knob_mismatches": [], "links": {},
    "indexes": {"drop_indexes": None}, "warm_up_s": {"master": 1.5}, "buffer_pools": {"master": {"fits": True}},
    "settle": {"settled": True, "waited_s": 2.5, "waited_for": [], "why": []}, "folder": "x",
    "transactions": [{"rows": 1000, "first_id": 1, "rows_changed": 1000, "rows_holding_the_new_value": 1000,
                      "binlog_bytes": 123456, "binlog_cache_spilled": False, "binlog_cache_disk_use": 0,
                      "master_seconds": 0.25, "gtid": "0-1-5", "lag_floor_ms": 10.0, "repeat": 1,
                      "bytes_per_row": 123.5, "replicas": {"replica1": {"applied_after_commit_s": 0.5,
                                                                        "peak_ms": 480.0, "above_floor_s": 0.4,
                                                                        "samples": 12}}}]}


def _committed() -> list[tuple[Path, str]]:
    out = []
    # the committed folders only: a campaign's raw results beside them are ignored (.gitignore) and not examples
    for path in sorted(p for folder in ("readme-assets", "report-assets") for p in (ROOT / "results" / folder).rglob(
            "*.json")):
        kind = results.kind_of(path.name)
        if kind is not None:
            out.append((path, kind))
    return out


def _as_dict_writer_wrote(data: object) -> str:
    """The text the dict writer (write_json, now gone) wrote of a dictionary."""
    return json.dumps(data, indent=2, sort_keys=True, default=str) + "\n"


def _stamped(data: dict[str, Any], kind: str) -> dict[str, Any]:
    """The document as write_record writes it: with its kind's current version."""
    return {**data, "schema_version": results.KINDS[kind].version}


def _written(tmp_path: Path, record: BaseModel) -> str:
    results.write_record(tmp_path / "out.json", record)
    return (tmp_path / "out.json").read_text()


def test_every_committed_results_file_is_current_reads_through_its_record_and_writes_back_unchanged(
        tmp_path: Path) -> None:
    files = _committed()
    assert len(files) > 2000  # the walk found the committed results (a broken glob would pass on nothing)
    assert set(RECORDS) == set(results.KINDS)
    older, differ, finished = [], [], {results.FinishedRun: 0, results.FinishedWriteRun: 0}
    for path, kind in files:
        doc = results.load(path)
        if doc.get("schema_version") != results.KINDS[kind].version:  # the file as committed, before any migration
            older.append(f"{path.relative_to(ROOT)}: {doc.get('schema_version')!r}")
        try:
            record = RECORDS[kind].model_validate(results.migrate(doc, kind))  # extra="forbid": unknown keys fail
            # a finished run's summary holds every field its FinishedRun (FinishedWriteRun where it wrote) requires
            done = results.finished(record) if isinstance(record, results.RunSummary) else None
        except ValueError as exc:
            pytest.fail(f"{path.relative_to(ROOT)}: {exc}")
        if done is not None:
            finished[type(done)] += 1
        # byte for byte: a dictionary's == would take a float coerced to an int (5.0 → 5) for the same
        if _written(tmp_path, record) != path.read_text():
            differ.append(str(path.relative_to(ROOT)))
    assert not older, f"{len(older)} not at their kind's current version (tools/migrate_results.py): {older[:5]}"
    assert not differ, f"{len(differ)} written back otherwise: {differ[:5]}"
    assert min(finished.values()) > 100, finished  # runs that wrote and runs that did not, each read as theirs


def _older(doc: dict[str, Any], kind: str, version: int) -> dict[str, Any]:
    """A current document as a file of an older version of its kind held it: the renames since undone, no version
    key for 0 (what tools/migrate_results.py checks, the other way)."""
    out = {k: v for k, v in doc.items() if k != "schema_version"}
    for new, old in reversed(results.KINDS[kind].renamed_since(version)):
        if new in out:
            out[old] = out.pop(new)
    return out if version == 0 else {**out, "schema_version": version}


def test_an_older_document_of_every_kind_is_migrated_on_read_its_values_unchanged(tmp_path: Path) -> None:
    """Each kind with a migration (every one but profile.json, versioned from its first file): a committed file
    (for a kind none is committed of: BIGTX, BENCH_APP, SHAPES) made older reads, through its `*_of`, as the current
    one and writes back as the current file's bytes; summary.json's older `faults` comes back as `nodes_lost`."""
    examples: dict[str, dict[str, Any]] = {}
    for path, kind in _committed():  # the first of each kind; of the summaries, the first that lost a node
        doc = results.load(path) if kind not in examples else {}
        if doc and (kind != "summary.json" or doc.get("nodes_lost")):
            examples[kind] = doc
    examples |= {"bigtx.json": BIGTX, "bench-app.json": BENCH_APP, "find-users.json": SHAPES}
    migrated = []
    for kind, spec in results.KINDS.items():
        for version in range(spec.oldest, spec.version):
            current = {**examples[kind], "schema_version": spec.version}
            old = _older(current, kind, version)
            assert old != current  # the older document differs: at least its envelope
            record = READERS[kind](old)
            assert record == READERS[kind](current) and record.model_dump()["schema_version"] == spec.version
            assert _written(tmp_path, record) == _as_dict_writer_wrote(current), (kind, version)
            migrated.append(kind)
    assert set(migrated) == set(results.KINDS) - {"profile.json"}
    # the rename exercised, and as the format history says it (not only as KINDS does, which _older follows)
    lost = examples["summary.json"]["nodes_lost"]
    assert _older(examples["summary.json"], "summary.json", 0)["faults"] == lost
    v0 = {k: v for k, v in examples["summary.json"].items() if k not in ("schema_version", "nodes_lost")}
    assert results.document_of(results.summary_of({**v0, "faults": lost})) == {**v0, "nodes_lost": lost,
                                                                             "schema_version": 1}


def test_a_results_file_the_report_copies_is_copied_at_the_current_version(tmp_path: Path) -> None:
    """report/assets.Writer.copy: an older summary (a user's raw run) lands in the assets migrated; a current one,
    and any other text, as it was."""
    from replbench.report.assets import Writer

    writer = Writer(tmp_path / "results", tmp_path / "report.md")
    source = next(path for path, kind in _committed()
                  if kind == "summary.json" and results.load(path).get("nodes_lost"))
    current = results.load(source)
    older = {k: v for k, v in current.items() if k not in ("schema_version", "nodes_lost")}
    (tmp_path / "summary.json").write_text(json.dumps({**older, "faults": current["nodes_lost"]}, indent=4))
    writer.copy(tmp_path / "summary.json", tmp_path / "run-summary.json")
    assert (tmp_path / "run-summary.json").read_text() == source.read_text()
    writer.copy(source, tmp_path / "copy-summary.json")
    assert (tmp_path / "copy-summary.json").read_text() == source.read_text()
    (tmp_path / "report.json").write_text('{"a":  1}')  # vegeta's: no results file, copied as text
    writer.copy(tmp_path / "report.json", tmp_path / "copy-report.json")
    assert (tmp_path / "copy-report.json").read_text() == '{"a":  1}'


def test_a_version_the_kind_never_had_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="schema_version 2 is not one this replbench reads"):
        results.sweep_of({"scenario": "read", "schema_version": 2})  # a newer replbench's
    profile = next((ROOT / "results").rglob("profile.json"))
    unversioned = {k: v for k, v in results.load(profile).items() if k != "schema_version"}
    with pytest.raises(ValueError, match="profile.json: schema_version 0"):  # a profile has had one from the first
        results.migrate(unversioned, "profile.json")
    (tmp_path / "profile.json").write_text(json.dumps(unversioned))
    with pytest.raises(ProfileError, match="not a profile this replbench reads"):
        read_profile(tmp_path / "profile.json")


def test_the_format_history_has_a_line_for_every_version_of_every_kind() -> None:
    """core/results' docstring: per kind (a `- ` line naming it), one `  N:` line per version it had."""
    assert results.__doc__ is not None
    history = results.__doc__[results.__doc__.index("Format history"):]
    versions: dict[str, set[int]] = {}
    kinds: list[str] = []
    for line in history.splitlines()[1:]:
        if line.startswith("- "):
            kinds = []
        if (number := re.match(r"  (\d+): ", line)) is not None:
            for kind in kinds:
                versions.setdefault(kind, set()).add(int(number.group(1)))
        elif line.startswith(("- ", "  ")):
            kinds += re.findall(r"[\w-]+\.json", line)
    assert versions == {kind: set(range(spec.oldest, spec.version + 1)) for kind, spec in results.KINDS.items()}


def test_a_key_no_record_declares_is_refused_where_it_is_written(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="goodptu"):
        results.write_run(tmp_path, {"scenario": "write"}, {"status": "ok", "goodptu": 400.0})
    with pytest.raises(ValueError, match="rows_chnged"):  # nested records refuse theirs too
        results.write_run(tmp_path, {"scenario": "write"}, {"binlog": {"rows_chnged": 3}})


def test_a_run_is_written_stamped_and_read_back_as_written(tmp_path: Path) -> None:
    meta, summary = results.write_run(tmp_path, {"scenario": "write", "rate": 400},
                                      {"status": "FAILED", "rate": 400, "goodput": 399.5,
                                       "binlog": {"rows_changed": 3}})
    assert summary is not None and summary.schema_version == results.SCHEMA_VERSION
    assert results.read_summary(tmp_path) == summary and results.read_meta(tmp_path) == meta
    assert json.loads((tmp_path / "summary.json").read_text()) == {
        "binlog": {"rows_changed": 3}, "goodput": 399.5, "rate": 400, "schema_version": 1, "status": "FAILED"}


def _committed_run(scenario: str) -> dict[str, Any]:
    """The first committed finished summary of a scenario, as its file holds it."""
    return next(doc for path, kind in _committed() if kind == "summary.json"
                and (doc := results.load(path)).get("scenario") == scenario and doc.get("status") == "ok")


def test_a_finished_run_holds_what_every_finished_run_records_or_is_refused_where_it_is_written(
        tmp_path: Path) -> None:
    """A union by outcome and kind: a finished run that wrote is a FinishedWriteRun (its consistency required), one
    that did not a FinishedRun, a failed one a RunSummary that may hold anything it got to; a finished summary that
    lacks a required field is refused at write_run, naming it, and nothing is written."""
    write, read = _committed_run("write"), _committed_run("read")
    _, got = results.write_run(tmp_path, {"scenario": "write"}, write)
    assert isinstance(got, results.FinishedWriteRun) and got.consistency.checked is not None
    _, got = results.write_run(tmp_path, {"scenario": "read"}, {k: v for k, v in read.items()})
    assert type(got) is results.FinishedRun and got.consistency is None
    (tmp_path / "summary.json").unlink()
    for lacking in ("consistency", "binlog", "latency_ms", "binlog.successful_writes", "consistency.table"):
        part, _, name = lacking.partition(".")
        given = {**write, part: {k: v for k, v in write[part].items() if k != name}} if name else \
            {k: v for k, v in write.items() if k != lacking}
        with pytest.raises(results.RecordRefused, match=f"^FinishedWriteRun refused {lacking}: Field required"):
            results.write_run(tmp_path, {"scenario": "write"}, given)
        assert not (tmp_path / "summary.json").exists()
    _, got = results.write_run(tmp_path, {"scenario": "write"}, {"status": "FAILED", "errors": ["vegeta died"]})
    assert type(got) is results.RunSummary and results.finished(got) is None


def test_every_kind_but_three_has_committed_examples() -> None:
    """bench-app.json, find-users.json and bigtx.json have none committed: their round trips are below."""
    kinds = {kind for _, kind in _committed()}
    assert kinds == set(RECORDS) - {"bench-app.json", "find-users.json", "bigtx.json"}


def test_a_recording_refuses_a_misspelt_key_and_reads_a_committed_one_back_unchanged(tmp_path: Path) -> None:
    path = next((ROOT / "results").rglob("recording.json"))  # every one: the first test
    assert _written(tmp_path, results.recording_of(results.load(path))) == path.read_text()
    with pytest.raises(ValueError, match="rounds_dnoe"):
        results.recording_of({"folder": "validate-x", "rounds_dnoe": 1})
    with pytest.raises(ValueError, match="sinse"):  # a run's profile entry, two levels down
        results.recording_of({"cases": [{"scenario": "mixed", "rate": 200, "repeats": [
            {"run": "r", "profile": {"file": "r/profile.json", "sinse": "2026-11-29 03:58:22"}}]}]})


def test_a_models_observation_or_drain_refuses_a_misspelt_key_and_one_lacking_a_figure_every_one_has() -> None:
    """model.json's observations and drains are records (core/results.Observation, Drain): a misspelt key, or one
    that every observation since the first model has left out, fails where it is read, not as a None in a fit."""
    doc = results.load(ROOT / "results" / "report-assets" / "campaign-report-20261128-211315" / "model" / "model.json")
    first, drain = doc["observations"][0], doc["drains"][0]
    assert results.model_of(doc).observations is not None
    with pytest.raises(results.RecordRefused, match="master_cpu_z"):
        results.model_of({**doc, "observations": [{**first, "master_cpu_z": first["master_cpu_s"]}]})
    lacking = {k: v for k, v in first.items() if k != "replica_reads"}
    with pytest.raises(results.RecordRefused, match="replica_reads"):
        results.model_of({**doc, "observations": [lacking]})
    with pytest.raises(results.RecordRefused, match="aply_s"):
        results.model_of({**doc, "drains": [{**drain, "aply_s": 1.0}]})


def test_a_study_comparison_row_refuses_a_misspelt_key() -> None:
    """study.json's comparison is typed to its rows (group, metric, cell: core/results.ComparisonRow): a misspelt
    key in a row fails where it is read, not as an "n/a" in the report."""
    doc = results.load(next((ROOT / "results" / "report-assets").rglob("study.json")))
    group, per_metric = next(iter(doc["comparison"].items()))
    metric, rows = next(iter(per_metric.items()))
    cell, row = next(iter(rows.items()))
    assert results.study_of(doc).comparison is not None
    with pytest.raises(results.RecordRefused, match="medain"):
        results.study_of({**doc, "comparison": {group: {metric: {cell: {**row, "medain": row["median"]}}}}})


def test_bench_app_and_find_users_records_refuse_a_misspelt_key_and_keep_the_dictionarys_values(
        tmp_path: Path) -> None:
    for kind, data in ((results.BenchAppRecord, BENCH_APP), (results.FindUsersRecord, SHAPES)):
        text = _written(tmp_path, kind.model_validate(data))
        assert kind.FILE is not None and text == _as_dict_writer_wrote(_stamped(data, kind.FILE))  # ints, None null
        # the JSON json.dumps(data, indent=2) wrote before, in the one format: only the keys' order, the newline
        # and the version
        assert json.loads(text) == json.loads(json.dumps(_stamped(data, kind.FILE), indent=2))
        assert text.endswith("}\n")
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
    """bigtx.json holds experiments/prepare.settings_and_data's keys as apply.json does (BIGTX); a study unit that
    failed with an exception its error (no committed file holds either)."""
    assert _written(tmp_path, results.bigtx_of(BIGTX)) == _as_dict_writer_wrote(_stamped(BIGTX, "bigtx.json"))
    study = {"name": "s", "units": [{"repeat": 1, "cell": "a", "scenario": "write", "group": "write",
                                     "measure": "run", "rate": 400, "status": "failed",
                                     "error": "RuntimeError: boom"}]}
    assert _written(tmp_path, results.study_of(study)) == _as_dict_writer_wrote(_stamped(study, "study.json"))


def test_a_nan_or_an_infinity_is_written_as_the_dictionary_writer_wrote_it(tmp_path: Path) -> None:
    """json.dumps writes NaN and Infinity; a record writes them so too, in a typed field and in an untyped map."""
    model = {"settings": {"ROW-FULL": {"master_cpu_s": {"r2": float("nan")},
                                       "domain": {"points": [[float("nan"), float("inf")]]}}}}
    assert _written(tmp_path, results.model_of(model)) == _as_dict_writer_wrote(_stamped(model, "model.json"))


def test_a_kept_meta_is_written_as_the_dictionary_writer_wrote_it(tmp_path: Path) -> None:
    """report/assets.keep_meta: what the report reads of a run's meta.json, through its record (a meta.json of the
    current version: stamped), paths then cut."""
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
        kept = _as_dict_writer_wrote(_stamped(meta, "meta.json"))
        assert (tmp_path / "kept.json").read_text() == writer.without_paths(kept), src


def test_a_run_whose_record_refuses_its_summary_fails_in_one_line_and_keeps_what_it_held(tmp_path: Path) -> None:
    """A summary its record refuses is a harness bug (a key no record declares cannot be set: the run fills typed
    records, so mypy names it; a run that says it finished yet lacks what every finished run records is refused
    where it is written): the run fails with the fields named, its documents are kept beside as
    <name>.refused.json, and meta.json and summary.json say FAILED (not ok, not still running)."""
    from replbench.core.config import Settings
    from replbench.core.scenario import load as scenario
    from replbench.experiments.run import Outcome, Run, RunOptions

    run = Run(Settings.from_env(), scenario("write"), 400, RunOptions(duration=1.0), tmp_path)
    written = run._write(results.RunMeta(scenario="write", rate=400, status="ok", pid=1),
                         results.RunSummary(scenario="write", rate=400, status="ok", goodput=399.0), Outcome())
    errors = written.outcome.errors
    assert written.outcome.status == "FAILED" and "FinishedRun refused folder: Field required" in errors[-1]
    assert "\n" not in errors[-1] and written.kept.status == "FAILED"  # one line; the run goes on failed
    kept = json.loads((tmp_path / "summary.refused.json").read_text())
    assert kept["goodput"] == 399.0 and kept["status"] == "FAILED" and "Field required" in kept["errors"][-1]
    assert json.loads((tmp_path / "meta.refused.json").read_text())["pid"] == 1
    meta, summary = results.read_meta(tmp_path), results.read_summary(tmp_path)
    assert meta.status == "FAILED" and meta.exit_code == 1
    assert summary.status == "FAILED" and summary.errors and "Field required" in summary.errors[-1]


def test_what_a_measurement_was_set_up_with_merges_into_each_record_that_holds_it() -> None:
    """experiments/prepare.settings_and_data's SetUp, merged by its set keys into meta.json's, apply.json's and
    bigtx.json's documents: each record declares every key of it, and a merged document reads as the dictionary did."""
    for record in (results.RunMeta, results.ApplyRecord, results.BigTxRecord):
        assert set(results.SetUp.model_fields) <= set(record.model_fields), record.__name__
    set_up = results.SetUp.model_validate({k: v for k, v in BIGTX.items() if k in results.SetUp.model_fields})
    merged = {**BIGTX, **set_up.model_dump(by_alias=True, exclude_unset=True)}
    assert results.bigtx_of(merged) == results.bigtx_of(BIGTX)
