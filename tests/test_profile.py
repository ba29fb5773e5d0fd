"""./run.sh profile and model predict --profile (docs/profile.md). The unit tests read a committed snippet of
mariadb-binlog's own output (tests/fixtures/binlog-profile.txt: `mariadb-binlog --base64-output=decode-rows -vv
--print-table-metadata samples/write-mix.binlog`, transactions cut out whole: three heartbeats, five single-row and
one 100-row update of bench_idx, two single-row updates of bench_noidx); the integration ones run the decoder on
the committed sample binlog itself (no server)."""

from __future__ import annotations

import argparse
import calendar
import json
import shutil
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from replbench.analysis import costmodel
from replbench.analysis import profile as prof
from replbench.analysis.costmodel import Plan
from replbench.cli.args import UsageError
from replbench.cli.profile import predict_from_profile
from replbench.core.config import ROOT, Settings
from replbench.core.results import model_of, read_model, write_record
from replbench.measure import binlogfile
from replbench.report.profile import render

from .conftest import env_for, fitted_model, run_cli, run_folder, run_main
from .test_external import UNREACHED_EXPORTER, write_topology

SNIPPET = Path(__file__).parent / "fixtures" / "binlog-profile.txt"
SAMPLE = ROOT / "samples" / "write-mix.binlog"
SAMPLE_PROFILE = ROOT / "samples" / "write-mix.profile.json"
SNIPPET_FILE = binlogfile.BinlogFile(SNIPPET, 3_300_244, "10.11.19-MariaDB-0+deb12u1-log")


def _chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


def _snippet_profile(sampling: prof.Sampling | None = None) -> prof.Profile:
    profiler = prof.Profiler(sampling)
    profiler.feed(SNIPPET_FILE, binlogfile.events(_chunks(SNIPPET.read_bytes(), 64 << 10), "binlog.000005"))
    return profiler.build("mariadb-binlog (snippet)")


def _line(profile: prof.Profile, schema: str, heartbeat: bool = False) -> prof.Line:
    return next(ln for ln in profile.lines if ln.schema_name == schema and ln.heartbeat == heartbeat)


@pytest.mark.parametrize("size", [997, 8 << 10, 1 << 30])
def test_the_decoders_text_reads_as_its_events_whatever_the_pieces(size: int) -> None:
    events = list(binlogfile.events(_chunks(SNIPPET.read_bytes(), size)))
    assert Counter(e.kind for e in events) == {"gtid": 11, "annotate": 11, "table_map": 11, "xid": 11,
                                                "update": 13, "other": 5}
    updates = [e for e in events if e.kind == "update"]
    # each event's size is its end_log_pos less the one before: the first heartbeat's Update_rows ends at 648,
    # its Table_map at 588; the 100-row statement's three events end at 67820, 75900 and 81568 after 59660
    assert (updates[0].size, updates[0].rows, updates[0].table) == (60, 1, ("replbench_meta", "heartbeat"))
    big = [e for e in updates if e.table == ("bench_idx", "accounts")][-3:]
    assert [e.size for e in big] == [8160, 8080, 5668] and [e.rows for e in big] == [0, 0, 100]
    assert [e.text for e in events if e.kind == "gtid"][-3:] == ["0-1-2932", "0-1-3927", "0-1-3928"]
    annotated = [e.text for e in events if e.kind == "annotate"]
    assert annotated[8] == ("UPDATE bench_idx.accounts SET interests = 'hiking,travel,tag4211521d51', updated_at = "
                            "NOW() WHERE id BETWEEN 9267 AND 9366")
    images = binlogfile.row_images(big[-1])
    assert len(images) == 100 and all(b is not None and a is not None for b, a in images)
    before, after = images[0]
    assert before[b"1"].startswith(b"9267 ") and before[b"1"] == after[b"1"] and before[b"8"] != after[b"8"]
    meta = next(e.meta for e in events if e.kind == "table_map" and e.table == ("bench_idx", "accounts"))
    assert meta is not None and len(meta.types) == 10 and meta.names is None and meta.primary_key is None


def test_a_piece_cut_inside_an_at_line_reads_the_same() -> None:
    data = SNIPPET.read_bytes()
    whole = [(e.kind, e.size, e.rows, e.text) for e in binlogfile.events([data])]
    at = data.find(b"\n# at ", 5000)
    for split in range(at, at + 7):
        pieces = [data[:split], data[split:split + 3000], data[split + 3000:]]
        assert [(e.kind, e.size, e.rows, e.text) for e in binlogfile.events(pieces)] == whole, split


def test_a_snippet_profiles_to_its_known_counts_with_the_heartbeat_apart() -> None:
    p = _snippet_profile(prof.EVERY_ROW)
    idx, noidx, beat = _line(p, "bench_idx"), _line(p, "bench_noidx"), _line(p, "replbench_meta", True)
    assert (idx.transactions, idx.rows, idx.rows_per_transaction.histogram) == (6, 105, {1: 5, 100: 1})
    assert idx.row_event_bytes == 243 + 260 + 242 + 273 + 223 + 8160 + 8080 + 5668
    assert (noidx.transactions, noidx.rows, noidx.row_event_bytes) == (2, 2, 219 + 238)
    assert (beat.transactions, beat.rows, beat.kind) == (3, 3, "update")
    assert (p.workload.transactions, p.workload.rows) == (8, 107)
    assert p.heartbeat is not None and p.heartbeat.transactions == 3
    assert p.workload.bytes == idx.bytes + noidx.bytes and beat.bytes == p.heartbeat.bytes
    assert idx.row_image == "FULL" and idx.primary_key == "unknown" and p.table_metadata == "NO_LOG or MINIMAL"
    assert (idx.statements, idx.annotated) == (6, 6)
    changed = {c.column: c.rows for c in idx.columns}
    assert changed["@3"] == 5 and changed["@8"] == 100  # first_name in the single-row updates, interests in the bulk
    # (the snippet's cuts: the first event after one takes the bytes of the transactions cut out before it, so
    # 0-1-3927 ranks first here; in the file itself its GTID event is 42 bytes)
    bulk = {t.gtid: t for t in p.largest}["0-1-2932"]
    assert bulk.rows == 100 and bulk.bytes == 81599 - 59394  # from its GTID's start (the Xid before) to its Xid
    assert all("replbench_meta" not in t for tx in p.largest for t in tx.tables)
    assert (p.first_event, p.last_event, p.span_s) == ("2026-11-27 10:14:28", "2026-11-27 10:15:44", 77)


def test_what_each_setting_would_write_is_exact_for_the_images_written_and_estimated_for_the_rest() -> None:
    p = _snippet_profile(prof.EVERY_ROW)
    idx, beat = _line(p, "bench_idx"), _line(p, "replbench_meta", True)
    s = {k: v.bytes for k, v in idx.settings.items()}
    assert idx.settings["ROW-FULL"].basis == "exact" and s["ROW-FULL"] == idx.bytes
    assert s["STATEMENT"] < s["ROW-MINIMAL"] < s["ROW-NOBLOB"] < s["ROW-FULL"]
    # the bulk update changes interests (TEXT): NOBLOB keeps it in the after image, drops it from the before image
    assert idx.settings["ROW-NOBLOB"].basis == "estimated"
    assert s["MIXED"] == s["STATEMENT"]  # NOW() is safe for statement-based logging
    assert beat.settings["MIXED"].bytes == beat.settings["ROW-FULL"].bytes  # SYSDATE(6) is not: MIXED logs rows
    workload = p.workload.settings
    assert workload["ROW-FULL"].bytes == sum(ln.settings["ROW-FULL"].bytes for ln in p.lines if not ln.heartbeat)


def test_images_written_both_full_and_minimal_are_named_so_and_price_no_row_setting() -> None:
    """A binlog whose binlog_row_image changed within it (the first single-row update of bench_idx rewritten as
    MINIMAL writes it: the key before, the changed columns after) is not taken for MINIMAL throughout: the line says
    both, and no ROW setting's bytes are claimed from it."""
    text = SNIPPET.read_bytes()
    start = text.index(b"### UPDATE `bench_idx`")
    where, set_, end = (text.index(m, start) for m in (b"### WHERE", b"### SET", b"# Number of rows"))
    before = [ln for ln in text[where:set_].splitlines(keepends=True)[1:] if ln.startswith(b"###   @1=")]
    after = [ln for ln in text[set_:end].splitlines(keepends=True)[1:]
             if ln.split(b"=", 1)[0].strip(b"# ") in (b"@3", b"@4", b"@7", b"@10")]
    edited = text[:where] + b"### WHERE\n" + b"".join(before) + b"### SET\n" + b"".join(after) + text[end:]
    profiler = prof.Profiler(prof.EVERY_ROW)
    profiler.feed(SNIPPET_FILE, binlogfile.events(_chunks(edited, 64 << 10), "binlog.000005"))
    idx = _line(profiler.build("mariadb-binlog (edited snippet)"), "bench_idx")
    assert idx.row_image == "FULL and MINIMAL" and idx.transactions == 6
    assert all(idx.settings[s].bytes is None and "changed within the files" in idx.settings[s].note
               for s in ("ROW-FULL", "ROW-MINIMAL", "ROW-NOBLOB")), idx.settings


def test_an_image_missing_only_blobs_is_noblob_and_one_missing_untyped_columns_is_not() -> None:
    """A MINIMAL delete's before image holds the key alone: its other columns appear in no image of the line, and
    are BLOBs only where the Table_map's types (or other images' values) say so (sysbench's deletes under MINIMAL
    read as NOBLOB before: results/readme-assets/own-fit-20261203)."""
    sbtest = binlogfile.TableMeta(("INT NOT NULL", "INT NOT NULL", "CHAR(120) NOT NULL", "CHAR(60) NOT NULL"))
    key_only = {b"1": b"7 /* INT meta=0 nullable=0 is_null=0 */"}
    assert not prof._missing_are_blobs(key_only, 4, {}, sbtest)
    blobs = binlogfile.TableMeta(("INT NOT NULL", "BLOB", "TEXT"))
    assert prof._missing_are_blobs(key_only, 3, {}, blobs)
    seen = {b"2": binlogfile.ValueType("BLOB", None, 2, blob=True)}
    assert prof._missing_are_blobs(key_only, 2, seen, None)  # no Table_map types: the values seen elsewhere
    assert not prof._missing_are_blobs(key_only, 3, seen, None)  # column 3 never seen: not known to be a BLOB


def test_inserts_are_exact_under_the_partial_image_every_other_line_was_written_with() -> None:
    """An insert's image is whole under every ROW image: where the other lines read MINIMAL, the inserts' MINIMAL
    bytes are as written (sysbench's oltp_write_only under MINIMAL priced its bytes as an estimate before)."""
    idx = _line(_snippet_profile(), "bench_idx")
    insert = idx.model_copy(update={"kind": "insert", "table": "t2"})
    assert insert.settings["ROW-MINIMAL"].basis == "estimated"
    for other, basis in (("MINIMAL", "exact"), ("FULL", "estimated"), ("FULL and MINIMAL", "estimated")):
        got = prof._inserts_as_written([idx.model_copy(update={"row_image": other}), insert])[1]
        assert got.settings["ROW-MINIMAL"].basis == basis, other
        assert got.settings["ROW-MINIMAL"].bytes == (insert.bytes if basis == "exact" else
                                                      insert.settings["ROW-MINIMAL"].bytes)
        assert got.settings["ROW-FULL"] == insert.settings["ROW-FULL"]


def test_a_sampled_row_stands_for_its_events_rows() -> None:
    """Five rows read of the 100-row statement stand for its 100: the column shares and the MINIMAL saving come out
    as reading every row gives them."""
    every, sampled = _snippet_profile(prof.EVERY_ROW), _snippet_profile(prof.Sampling(first=100, every=1, rows=5))
    a, b = _line(every, "bench_idx"), _line(sampled, "bench_idx")
    assert (a.sampled_rows, b.sampled_rows) == (105, 5 + 5) and (a.transactions, a.rows) == (b.transactions, b.rows)
    assert {c.column: c.rows for c in b.columns} == {c.column: c.rows for c in a.columns}
    saving = [ln.settings["ROW-FULL"].bytes - ln.settings["ROW-MINIMAL"].bytes for ln in (a, b)]
    assert saving[1] == pytest.approx(saving[0], rel=0.05)
    assert "first 100 rows events" in sampled.sampling and every.sampling == "every row image read"


@pytest.mark.parametrize("printed,size", [
    (b"19758 /* LONGINT meta=0 nullable=0 is_null=0 */", 8),
    (b"'Alus' /* VARSTRING(240) meta=240 nullable=0 is_null=0 */", 1 + 4),
    (b"'emaarom.drouley.19758@webmail.test' /* VARSTRING(480) meta=480 nullable=0 is_null=0 */", 2 + 34),
    (b"'gardening,history' /* BLOB/TEXT meta=2 nullable=0 is_null=0 */", 2 + 17),
    (b"'2026-11-27 10:14:30.062726' /* DATETIME(6) meta=6 nullable=0 is_null=0 */", 5 + 3),
    (b"'2016-08-12 10:40:58' /* DATETIME(0) meta=0 nullable=0 is_null=0 */", 5),
    (b"2 /* ENUM(1 byte) meta=63233 nullable=0 is_null=0 */", 1),
    (b"'a\\x00b' /* STRING(10) meta=65034 nullable=0 is_null=0 */", 1 + 3),
    (b"-12.50 /* DECIMAL(10,2) meta=2562 nullable=0 is_null=0 */", 4 + 1),
    (b"NULL /* VARSTRING(240) meta=240 nullable=1 is_null=1 */", 0),
])
def test_a_values_size_in_the_row_image_follows_its_type(printed: bytes, size: int) -> None:
    assert binlogfile.value_size(printed) == size


FULL_METADATA = """# at 4
#261127 10:00:00 server id 1  end_log_pos 256 CRC32 0x00000000 \tStart: binlog v 4, server v 10.11.19-MariaDB
# at 256
#261127 10:00:01 server id 1  end_log_pos 298 CRC32 0x00000000 \tGTID 0-1-1 trans
START TRANSACTION
/*!*/;
# at 298
#261127 10:00:01 server id 1  end_log_pos 360 CRC32 0x00000000 \tTable_map: `shop`.`log` mapped to number 30
# Columns(`at` DATETIME NOT NULL,
#         `note` TEXT CHARSET utf8mb4 COLLATE utf8mb4_general_ci)
# at 360
#261127 10:00:01 server id 1  end_log_pos 420 CRC32 0x00000000 \tWrite_rows: table id 30 flags: STMT_END_F
### INSERT INTO `shop`.`log`
### SET
###   @1='2026-11-27 10:00:01' /* DATETIME(0) meta=0 nullable=0 is_null=0 */
###   @2='hello' /* BLOB/TEXT meta=2 nullable=1 is_null=0 */
# Number of rows: 1
# at 420
#261127 10:00:01 server id 1  end_log_pos 451 CRC32 0x00000000 \tXid = 7
COMMIT/*!*/;
"""


def test_full_table_metadata_names_the_columns_and_shows_a_table_without_a_primary_key() -> None:
    """Synthetic text in mariadb-binlog's format (binlog_row_metadata=FULL logs column names, and a `# Primary
    Key(…)` line for a table that has one: none here)."""
    events = list(binlogfile.events([FULL_METADATA.encode()]))
    meta = next(e.meta for e in events if e.kind == "table_map")
    assert meta is not None and meta.names == ("at", "note") and meta.primary_key == ()
    keyed = binlogfile._table_meta(b"# Columns(`id` BIGINT NOT NULL,\n#         `v` INT)\n# Primary Key(id)\n")
    assert keyed is not None and keyed.primary_key == ("id",)
    profiler = prof.Profiler()
    profiler.feed(SNIPPET_FILE, events)
    p = profiler.build("synthetic")
    line = p.lines[0]
    assert (line.kind, line.rows, line.primary_key, p.table_metadata) == ("insert", 1, "no", "FULL")
    assert line.settings["STATEMENT"].basis == "unknown" and "not annotated" in line.settings["STATEMENT"].note
    assert prof.model_table(line, ["bench_idx", "bench_nopk"])[0] == "bench_nopk"
    assert prof.model_table(line, ["bench_idx"]) == ("bench_idx", " (it has no primary key, and the model has no "
                                                                   "table without one)")


TWO_TABLES = """# at 4
#261127  9:00:00 server id 1  end_log_pos 256 CRC32 0x00000000 \tStart: binlog v 4, server v 10.11.19-MariaDB
# at 256
#261127  9:00:01 server id 1  end_log_pos 298 CRC32 0x00000000 \tGTID 0-1-5 trans
# at 298
#261127  9:00:01 server id 1  end_log_pos 340 CRC32 0x00000000 \tTable_map: `shop`.`orders` mapped to number 31
# at 340
#261127  9:00:01 server id 1  end_log_pos 380 CRC32 0x00000000 \tDelete_rows: table id 31 flags: STMT_END_F
### DELETE FROM `shop`.`orders`
### WHERE
###   @1=7 /* INT meta=0 nullable=0 is_null=0 */
# Number of rows: 1
# at 380
#261127  9:00:01 server id 1  end_log_pos 420 CRC32 0x00000000 \tTable_map: `shop`.`stock` mapped to number 32
# at 420
#261127  9:00:01 server id 1  end_log_pos 470 CRC32 0x00000000 \tUpdate_rows: table id 32 flags: STMT_END_F
### UPDATE `shop`.`stock`
### WHERE
###   @1=3 /* INT meta=0 nullable=0 is_null=0 */
### SET
###   @1=4 /* INT meta=0 nullable=0 is_null=0 */
# Number of rows: 1
# at 470
#261127  9:00:01 server id 1  end_log_pos 501 CRC32 0x00000000 \tXid = 9
COMMIT/*!*/;
"""


def test_a_transaction_that_writes_two_tables_is_on_both_lines_and_counted_once() -> None:
    """Synthetic text in mariadb-binlog's format, without annotations (a space-padded hour, as it prints 9 h)."""
    profiler = prof.Profiler()
    profiler.feed(SNIPPET_FILE, binlogfile.events([TWO_TABLES.encode()]))
    p = profiler.build("synthetic")
    assert [(ln.table, ln.kind, ln.transactions) for ln in p.lines] == [("orders", "delete", 1), ("stock", "update", 1)]
    assert (p.workload.transactions, p.workload.rows, p.workload.bytes) == (1, 2, 501 - 256)
    assert p.first_event == "2026-11-27 09:00:00" and p.largest[0].tables == ["shop.orders delete", "shop.stock update"]
    assert p.workload.settings["STATEMENT"].basis == "unknown"


def _three_lines(transactions: int) -> str:
    """Synthetic text in mariadb-binlog's format: one transaction a second, each deleting a row of shop.orders,
    inserting it back and updating a row of shop.stock (three lines, one row each), from the Start event's second."""
    out = ["# at 4\n#261127 10:00:01 server id 1  end_log_pos 256 CRC32 0x00000000 \tStart: binlog v 4, server v "
           "10.11.19-MariaDB\n"]
    pos = 256
    for i in range(transactions):
        at = f"#261127 10:00:{i + 1:02d} server id 1  end_log_pos"
        events = [(42, f"GTID 0-1-{i + 1} trans", ""),
                  (42, "Table_map: `shop`.`orders` mapped to number 31", ""),
                  (40, "Delete_rows: table id 31 flags: STMT_END_F",
                   f"### DELETE FROM `shop`.`orders`\n### WHERE\n###   @1={i} /* INT meta=0 nullable=0 is_null=0 */\n"
                   "# Number of rows: 1\n"),
                  (42, "Table_map: `shop`.`orders` mapped to number 31", ""),
                  (40, "Write_rows: table id 31 flags: STMT_END_F",
                   f"### INSERT INTO `shop`.`orders`\n### SET\n###   @1={i} /* INT meta=0 nullable=0 is_null=0 */\n"
                   "# Number of rows: 1\n"),
                  (42, "Table_map: `shop`.`stock` mapped to number 32", ""),
                  (50, "Update_rows: table id 32 flags: STMT_END_F",
                   f"### UPDATE `shop`.`stock`\n### WHERE\n###   @1={i} /* INT meta=0 nullable=0 is_null=0 */\n"
                   f"### SET\n###   @1={i + 1} /* INT meta=0 nullable=0 is_null=0 */\n# Number of rows: 1\n"),
                  (31, f"Xid = {i + 1}", "COMMIT/*!*/;\n")]
        for size, what, body in events:
            out.append(f"# at {pos}\n{at} {pos + size} CRC32 0x00000000 \t{what}\n{body}")
            pos += size
    return "".join(out)


def test_a_transaction_on_several_lines_is_priced_once_and_its_rows_on_each_line(tmp_path: Path, monkeypatch,
                                                                                 capsys) -> None:
    """10 transactions of three lines each (sysbench's oltp_write_only writes four lines a transaction): the
    profile and the plan count 10 transactions, each line keeps its 10 rows, and every per-transaction term (commit,
    fsync, wake-up) is priced as for 10 transactions of 3 rows."""
    from .test_costmodel import synthetic

    profiler = prof.Profiler()
    profiler.feed(SNIPPET_FILE, binlogfile.events([_three_lines(10).encode()]))
    p = profiler.build("synthetic")
    assert [(ln.table, ln.kind, ln.transactions, ln.rows) for ln in p.lines] == [
        ("orders", "delete", 10, 10), ("orders", "insert", 10, 10), ("stock", "update", 10, 10)]
    assert (p.workload.transactions, p.workload.rows, p.span_s) == (10, 30, 10)
    mixes, _, _ = prof.workload_mixes(p, ["bench_idx"])
    model = model_of(fitted_model(*synthetic()))
    plan = costmodel.predict(model, mixes["bench_idx"])
    assert (plan.transactions_per_s, plan.rows_per_s) == (pytest.approx(1.0), pytest.approx(3.0))
    whole = costmodel.predict(model, [("update", 3, 1.0)])  # the same writes as one line of 3-row transactions
    for figure in ("master_cpu_cores", "replica_cpu_cores", "bytes_per_s_to_each_replica", "replica_apply_rho",
                   "fsyncs_per_s"):
        assert getattr(plan, figure) is not None and getattr(plan, figure) == pytest.approx(getattr(whole, figure)), \
            figure
    path = _saved_for_predict(tmp_path, monkeypatch, model, p)
    assert prof.read(path) == p
    args = argparse.Namespace(profile=str(path), setting="ROW-FULL", replica_cores=1.0, parallel=1, link=None)
    assert predict_from_profile(args) == 0
    out = capsys.readouterr().out
    assert "Capacity plan under ROW-FULL on bench_idx: 1 transactions/s" in out, out


def _saved_for_predict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: Any, profile: Any) -> Path:
    """The model where `model predict` reads it (a results folder of the test's own) and the profile in a file."""
    results = tmp_path / "results"
    (results / "model").mkdir(parents=True)
    write_record(results / "model" / "model.json", model)
    monkeypatch.setenv("REPLBENCH_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("REPLBENCH_RESULTS", str(results))
    path = tmp_path / "three.json"
    write_record(path, profile)
    return path


def test_the_plans_binlog_is_the_profiles_own_bytes_not_the_model_tables(tmp_path: Path, monkeypatch,
                                                                          capsys) -> None:
    """Issue 72: rows far smaller than bench_idx's (a 1-column table; the model's rows cost 440 B each). Under the
    setting the binlog was written with (ROW FULL) the plan's binlog, and each replica's bytes, are the profile's own
    bytes per second, exact; under MINIMAL its estimate from the row images, said so; under STATEMENT, which its
    unannotated statements cannot tell, the model's price from its table's rows, said so. `model validate` checks the
    model's fit: it keeps the model's price."""
    from .test_costmodel import F_BINLOG, G_BINLOG, synthetic

    profiler = prof.Profiler()
    profiler.feed(SNIPPET_FILE, binlogfile.events([_three_lines(10).encode()]))
    p = profiler.build("synthetic")
    own = p.workload.settings["ROW-FULL"].bytes / p.span_s
    assert p.workload.settings["ROW-FULL"].basis == "exact" and own == p.workload.bytes / p.span_s == 329.0
    assert own * 4 < F_BINLOG + 3 * G_BINLOG  # what the model's table would write for the same transactions
    fitted = fitted_model(*synthetic())
    for setting in ("ROW-MINIMAL", "STATEMENT"):  # the ROW-FULL fit's copy: a model with those settings
        fitted["settings"][f"{setting} bench_idx"] = fitted["settings"]["ROW-FULL bench_idx"]
    model = model_of(fitted)
    mixes, mapped, _ = prof.workload_mixes(p, ["bench_idx"])

    def plan(setting: str, **kw) -> Plan:
        sheets = prof.price(model, p, mixes, mapped, setting, **kw)
        assert len(sheets) == 1
        return sheets[0].plan

    full = plan("ROW-FULL")
    assert full.binlog_mb_per_s["value"] == pytest.approx(own / 1e6, rel=1e-12)
    assert full.binlog_gb_per_day["value"] == pytest.approx(own * 86_400 / 1e9, rel=1e-12)
    assert full.bytes_per_s_to_each_replica["value"] == pytest.approx(own, rel=1e-12)
    assert full.binlog_basis == "measured"
    minimal = plan("ROW-MINIMAL")
    assert minimal.binlog_basis == "estimated" and p.workload.settings["ROW-MINIMAL"].basis == "estimated"
    assert minimal.bytes_per_s_to_each_replica["value"] == pytest.approx(
        p.workload.settings["ROW-MINIMAL"].bytes / p.span_s, rel=1e-12)
    priced = costmodel.predict(model, mixes["bench_idx"], "STATEMENT")
    statement = plan("STATEMENT")  # no annotated statements: the profile cannot tell
    assert statement.binlog_basis == "model" and p.workload.settings["STATEMENT"].bytes is None
    assert statement.binlog_mb_per_s == priced.binlog_mb_per_s
    assert plan("ROW-FULL", model_binlog=True).binlog_mb_per_s == \
        costmodel.predict(model, mixes["bench_idx"]).binlog_mb_per_s
    path = _saved_for_predict(tmp_path, monkeypatch, model, p)
    args = argparse.Namespace(profile=str(path), setting=None, replica_cores=1.0, replicas_asked="2", parallel=1,
                              link=None)
    assert predict_from_profile(args) == 0
    out = capsys.readouterr().out
    sheets = {s.split(" ", 1)[0]: s for s in out.split("Capacity plan under ")[1:]}
    assert "Binlog: 0.000329 MB/s, 0.0284 GB/day; to each replica 329 B/s, from the binlog's own bytes" in \
        sheets["ROW-FULL"], out
    assert "To 2 replica(s): 658 B/s out of the master" in sheets["ROW-FULL"], out
    assert "estimated from its row images" in sheets["ROW-MINIMAL"], out
    assert "priced by the model from bench_idx's rows" in sheets["STATEMENT"], out


def test_each_table_is_priced_on_the_model_table_it_resembles() -> None:
    p = _snippet_profile()
    idx, noidx = _line(p, "bench_idx"), _line(p, "bench_noidx")
    assert prof.model_table(idx, ["bench_idx", "bench_noidx"]) == ("bench_idx", "")
    assert prof.model_table(noidx, ["bench_idx", "bench_noidx"]) == ("bench_noidx", "")
    assert prof.model_table(noidx, ["bench_idx"]) == ("bench_idx", " (the model has no fit on bench_noidx)")
    own = idx.model_copy(update={"schema_name": "shop", "table": "orders"})
    table, note = prof.model_table(own, ["bench_idx", "bench_noidx", "bench_nopk"])
    assert table == "bench_idx" and "cannot be known from the binlog" in note


def test_a_profile_feeds_model_predict_without_the_heartbeat(tmp_path: Path, monkeypatch, capsys) -> None:
    from .test_costmodel import synthetic

    results = tmp_path / "results"
    (results / "model").mkdir(parents=True)
    write_record(results / "model" / "model.json", model_of(fitted_model(*synthetic())))  # ROW-FULL, bench_idx
    monkeypatch.setenv("REPLBENCH_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("REPLBENCH_RESULTS", str(results))
    p = _snippet_profile(prof.EVERY_ROW)
    path = tmp_path / "snippet.json"
    write_record(path, p)
    assert prof.read(path) == p
    # the profiler gives every field, so write_record (the keys given) writes the whole profile, as its dump did
    assert path.read_text() == json.dumps(p.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    mixes, mapped, notes = prof.workload_mixes(p, ["bench_idx"])
    assert sorted(mixes["bench_idx"]) == sorted([("update", 1, 5 / 77), ("update", 100, 1 / 77),
                                                 ("update", 1, 2 / 77)])  # 8 transactions over 77 s, no heartbeat
    assert "the model has no fit on bench_noidx" in " ".join(notes)
    args = argparse.Namespace(profile=str(path), setting=None, replica_cores=1.0, replicas_asked="2",  # as parsed
                              parallel=1, link=None)
    assert predict_from_profile(args) == 0
    out = capsys.readouterr().out
    assert "Capacity plan under ROW-FULL on bench_idx" in out and "To 2 replica(s)" in out
    # its largest transaction, the 100-row update, priced by the apply fit at its rows
    took = costmodel.apply_seconds(model_of(fitted_model(*synthetic())), "ROW-FULL", "bench_idx", 100)
    big = max(p.largest, key=lambda t: t.rows)
    assert big.rows == 100 and (f"The largest transaction ({big.gtid}, 100 rows) takes one SQL thread "
                                f"{took['value'] * 1e3:.3g} [" in out), out  # in ms below a second
    assert "B/s, from the binlog's own bytes (written under ROW-FULL; the heartbeat left out)" in out, out
    plan = costmodel.predict(read_model(results / "model"), mixes["bench_idx"])
    assert plan.transactions_per_s == pytest.approx(8 / 77) and plan.rows_per_s == pytest.approx(107 / 77)
    for bad, needle, cores in ((tmp_path / "none.json", "no such file", 1.0), (SNIPPET, "not a profile", 1.0),
                               (path, "--replica-cores", 0.0)):
        with pytest.raises(UsageError, match=needle):
            predict_from_profile(argparse.Namespace(profile=str(bad), setting=None, replica_cores=cores))


def test_bad_input_exits_2_with_the_commands_usage_and_one_line(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a binlog\n")
    for args, needle in ((["profile", str(tmp_path / "missing")], "no such file"),
                         (["profile", str(text)], "not a MySQL/MariaDB binlog file"),
                         (["profile", str(tmp_path)], "a folder, not a binlog file"),
                         (["profile", str(SAMPLE), "--out", str(tmp_path)], "a folder; name the file"),
                         (["profile", str(SAMPLE), "--out"], "expected one argument")):
        code, out, err = run_main(args)
        lines = err.strip().splitlines()
        assert code == 2 and out == "" and "Traceback" not in err, err
        assert lines[0].startswith("usage: ./run.sh profile") and lines[-1].startswith("./run.sh: error:")
        assert needle in lines[-1] and sum(ln.startswith("./run.sh: error:") for ln in lines) == 1, err


# --- a window (--since / --until) and a server's binlogs (--topology FILE, or the native topology) --------------

def _second(text: str) -> int:
    """A --since/--until value as the decoder's clock second (Event.time)."""
    return calendar.timegm(datetime.fromisoformat(text).timetuple())


def _windowed_snippet(since: str | None, until: str | None) -> prof.Profile:
    profiler = prof.Profiler(None, prof.Window(since and _second(since), until and _second(until)))
    profiler.feed(SNIPPET_FILE, binlogfile.events(_chunks(SNIPPET.read_bytes(), 64 << 10), "binlog.000005"))
    return profiler.build("mariadb-binlog (snippet)")


@pytest.mark.parametrize("args, needle", [
    (["--since", "2026-11-27 25:00:00"], "'2026-11-27 25:00:00' is not a date and time: use YYYY-MM-DD HH:MM:SS"),
    (["--until", "27/11/2026 10:00"], "is not a date and time"),
    (["--since", "2026-11-27 10:00:00+02:00"], "the local time of this machine, without a UTC offset"),
    (["--since", "2026-11-27 10:00:00.5"], "to the second"),
    (["--since", "2026-11-27 10:15:00", "--until", "2026-11-27 10:15:00"],
     "--until 2026-11-27 10:15:00 is not after --since 2026-11-27 10:15:00"),
    (["--since", "2026-11-27 10:15:00", "--until", "2026-11-27 10:00:00"], "is not after --since"),
    (["--topology", "servers.toml"], "FILE and --topology: profile either files or the binlogs of a server"),
    (["--state", "somewhere", "--keep"], "FILE and --state, --keep: profile either files"),
])
def test_a_bad_window_or_files_with_a_server_exit_2_with_the_usage_and_one_line(args: list[str],
                                                                                  needle: str) -> None:
    code, out, err = run_main(["profile", str(SAMPLE), *args])
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and "Traceback" not in err, err
    assert lines[0].startswith("usage: ./run.sh profile") and lines[-1].startswith("./run.sh: error:")
    assert needle in lines[-1] and sum(ln.startswith("./run.sh: error:") for ln in lines) == 1, err


def test_a_window_keeps_its_transactions_and_its_own_span() -> None:
    """The snippet of the sample's text: from 10:14:45 to 10:15:00 only bench_idx's six updates (at 10:14:50) are
    in it; the heartbeats (10:14:30) and bench_noidx's updates (10:15:38) are not. The rates are over the window's
    15 s, not the files' 77."""
    whole, p = _snippet_profile(), _windowed_snippet("2026-11-27 10:14:45", "2026-11-27 10:15:00")
    assert (whole.workload.transactions, p.workload.transactions) == (8, 6) and p.heartbeat is None
    assert (p.first_event, p.last_event, p.span_s) == ("2026-11-27 10:14:45", "2026-11-27 10:14:59", 15)
    assert p.workload.mean_per_s == pytest.approx(6 / 15)
    idx = _line(p, "bench_idx")
    assert [ln.schema_name for ln in p.lines] == ["bench_idx"]
    assert (idx.rates.mean_per_s, idx.rates.busiest_minute_per_s) == (pytest.approx(6 / 15), pytest.approx(6 / 15))
    assert idx.rates.busiest_minute_start == "2026-11-27 10:14:45"
    kept = _line(whole, "bench_idx")  # whole transactions: the same rows and bytes as without a window
    assert (idx.transactions, idx.rows, idx.bytes, idx.rows_per_transaction) == \
        (kept.transactions, kept.rows, kept.bytes, kept.rows_per_transaction)
    assert p.other == {}  # the start event (10:14:28) is outside the window: its bytes are not counted


def test_a_window_past_the_files_end_is_over_what_they_cover_and_says_so() -> None:
    p = _windowed_snippet("2026-11-27 10:15:00", "2026-11-27 10:20:00")
    assert (p.first_event, p.last_event, p.span_s) == ("2026-11-27 10:15:00", "2026-11-27 10:15:44", 45)
    assert p.workload.transactions == 2 and p.workload.mean_per_s == pytest.approx(2 / 45)
    assert any("before --until" in n for n in p.notes), p.notes


def test_a_window_with_no_event_says_so() -> None:
    with pytest.raises(prof.EmptyWindow, match=r"^no event from 2026-11-27 09:00:00 to 2026-11-27 09:10:00 \(the "
                       r"local time of this machine\) in the file \(opened at"):
        _windowed_snippet("2026-11-27 09:00:00", "2026-11-27 09:10:00")
    with pytest.raises(prof.EmptyWindow, match="no event from 2026-11-28 00:00:00 to the last event"):
        _windowed_snippet("2026-11-28 00:00:00", None)


# what mariadb-binlog prints with --start-datetime past the file's start: the start event, then the events from the
# first one at or after that time (samples/write-mix.binlog from 10:15:00, its first transaction, names changed)
WINDOWED = """# at 4
#261127 10:14:28 server id 1  end_log_pos 256 CRC32 0x3bf4ffd5 \tStart: binlog v 4, server v 10.11.19-MariaDB-log
# at 2877861
#261127 10:15:00 server id 1  end_log_pos 2877903 CRC32 0xfc1d6a1d \tGTID 0-1-3913 trans
START TRANSACTION
/*!*/;
# at 2877903
# at 2878059
#261127 10:15:00 server id 1  end_log_pos 2878059 CRC32 0x363cd0cd \tAnnotate_rows:
#Q> UPDATE shop.stock SET n = 4 WHERE id = 3
#261127 10:15:00 server id 1  end_log_pos 2878138 CRC32 0x253f6d3c \tTable_map: `shop`.`stock` mapped to number 18
# at 2878138
#261127 10:15:00 server id 1  end_log_pos 2878415 CRC32 0xa6a95fae \tUpdate_rows: table id 18 flags: STMT_END_F
### UPDATE `shop`.`stock`
### WHERE
###   @1=3 /* INT meta=0 nullable=0 is_null=0 */
### SET
###   @1=4 /* INT meta=0 nullable=0 is_null=0 */
# Number of rows: 1
# at 2878415
#261127 10:15:00 server id 1  end_log_pos 2878446 CRC32 0x55ab87e8 \tXid = 5960
COMMIT/*!*/;
"""


@pytest.mark.parametrize("size", [60, 1 << 20])
def test_the_first_event_after_the_decoders_skip_takes_only_its_own_bytes(size: int) -> None:
    """The events the decoder skipped to reach the window are not the first printed one's: its `# at` line says
    where it begins (whatever the pieces the text comes in)."""
    events = list(binlogfile.events(_chunks(WINDOWED.encode(), size)))
    assert [(e.kind, e.size) for e in events] == [("other", 252), ("gtid", 42), ("annotate", 156),
                                                   ("table_map", 79), ("update", 277), ("xid", 31)]
    profiler = prof.Profiler(None, prof.Window(_second("2026-11-27 10:15:00"), None))
    profiler.feed(SNIPPET_FILE, events)
    p = profiler.build("synthetic")
    assert (p.workload.transactions, p.workload.bytes) == (1, 2878446 - 2877861)


def test_the_decoder_is_told_the_window_with_a_margin(monkeypatch) -> None:
    monkeypatch.setattr(binlogfile, "find_tool", lambda name: f"/usr/bin/{name}")  # installed or not
    file = binlogfile.BinlogFile(SAMPLE, 3_300_244, "10.11.19-MariaDB-0+deb12u1-log")
    argv = binlogfile.decoder(file, (_second("2026-11-27 10:15:00"), _second("2026-11-27 10:15:20")))
    margin = binlogfile.WINDOW_MARGIN_S
    assert margin >= 1 and argv[-1] == str(SAMPLE)
    assert argv[-3:-1] == [f"--start-datetime={binlogfile.clock(_second('2026-11-27 10:15:00') - margin)}",
                           f"--stop-datetime={binlogfile.clock(_second('2026-11-27 10:15:20') + margin)}"]
    assert binlogfile.decoder(file)[-2] == "--print-table-metadata"  # no window, no flag


def test_a_profile_records_where_it_came_from_without_this_machines_paths() -> None:
    outside = binlogfile.BinlogFile(Path("/var/lib/mysql/binlog.000005"), 501, "10.11.19-MariaDB-log")
    inside = binlogfile.BinlogFile(SAMPLE.resolve(), 501, "10.11.19-MariaDB-log")
    source = prof.Source(read_from="server", server="db1.example:3306 (the master of staging.toml)",
                         since="2026-11-27 09:00:00", until="2026-11-27 09:10:00", time_zone="UTC (UTC+00:00)")
    profiler = prof.Profiler(None, prof.Window(_second("2026-11-27 09:00:00"), _second("2026-11-27 09:10:00")))
    profiler.feed(outside, binlogfile.events([TWO_TABLES.encode()]))
    profiler.feed(inside, [])
    profiler.covers(_second("2026-11-27 09:30:00"))  # copied from the server then: the files cover the window
    p = profiler.build("synthetic", source)
    assert [f.path for f in p.files] == ["binlog.000005", "samples/write-mix.binlog"]
    text = json.dumps(p.model_dump(mode="json"))
    assert "/var/lib" not in text and str(ROOT) not in text
    assert p.source == source and p.span_s == 600  # the window's ten minutes, the files covering it
    shown = render(p)
    assert shown.startswith("Binlog profile: the binlogs of db1.example:3306 (the master of staging.toml)")
    assert "Window: 2026-11-27 09:00:00 to 2026-11-27 09:10:00 in UTC (UTC+00:00), the end left out" in shown


@pytest.mark.parametrize("where", ["topology", "native"])
def test_an_unreachable_master_is_one_line_and_leaves_no_copy(where: str, tmp_path: Path, monkeypatch) -> None:
    """No connection is made to a real server: the topology file's master is on port 9 (nothing listens), the
    native one's socket is in a state folder with no server."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    if where == "topology":
        path = tmp_path / "servers.toml"
        path.write_text('[master]\nhost = "127.0.0.1"\nport = 9\n[replica1]\nhost = "127.0.0.1"\nport = 10\n')
        code, out, err = run_main(["profile", "--topology", str(path), "--since", "2026-11-27 10:00:00"],
                                  env_for(tmp_path / "state"))
        needle = "127.0.0.1:9 (the master of servers.toml) does not answer as 'replbench'"
    else:
        code, out, err = run_main(["profile", "--state", str(tmp_path / "state")], env_for(tmp_path / "state"))
        needle = "the native topology's master does not answer as 'replbench_admin'"
    assert code == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"replbench: {needle}"), err
    assert not list(scratch.glob("replbench-binlogs-*"))  # the temporary folder is removed


# --- on the committed sample, with the decoder (no server) ------------------------------------------------------

@pytest.mark.integration  # runs mariadb-binlog
def test_the_sample_binlog_profiles_to_its_known_counts(tmp_path: Path) -> None:
    """samples/write-mix.binlog, counted by hand from mariadb-binlog's output: 894 single-row and 106 100-row
    updates of bench_idx (write-mix), 500 single-row updates of bench_noidx (write-noindex), 538 heartbeats."""
    out = tmp_path / "p.json"
    code, text, err = run_main(["profile", str(SAMPLE), "--out", str(out), "--every-row"])
    assert code == 0, err
    p = prof.read(out)
    idx, noidx, beat = _line(p, "bench_idx"), _line(p, "bench_noidx"), _line(p, "replbench_meta", True)
    assert idx.rows_per_transaction.histogram == {1: 894, 100: 106} and idx.rows == 11_494
    # a 100-row statement is three Update_rows events (8 kB each at most): 894 + 3 × 106; their bytes, summed from
    # the end_log_pos of mariadb-binlog's header lines
    assert (idx.rows_events, idx.row_event_bytes, noidx.row_event_bytes) == (1_212, 2_563_578, 123_397)
    assert noidx.rows_per_transaction.histogram == {1: 500}
    assert (beat.transactions, p.heartbeat.transactions if p.heartbeat else None) == (538, 538)
    assert (p.workload.transactions, p.workload.rows) == (1_500, 11_994)
    assert [ln for ln in p.lines if ln.heartbeat] == [beat] and len(p.lines) == 3
    accounted = sum(ln.bytes for ln in p.lines) + sum(v for k, v in p.other.items() if k.startswith("bytes"))
    assert accounted == SAMPLE.stat().st_size - 4  # every event's bytes, once (after the magic number)
    assert {c.column: c.rows for c in idx.columns}["@3"] == 894  # first_name: the single-row updates only
    assert "bench_idx.accounts" in text and "Heartbeat (replbench_meta.heartbeat)" in text


@pytest.mark.integration  # runs mariadb-binlog
def test_the_committed_sample_profile_is_what_profile_writes(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    code, _, err = run_main(["profile", "samples/write-mix.binlog", "--out", str(out)])
    assert code == 0, err
    assert prof.read(out) == prof.read(SAMPLE_PROFILE), \
        "samples/write-mix.profile.json is stale: ./run.sh profile samples/write-mix.binlog --out " \
        "samples/write-mix.profile.json"


@pytest.mark.integration  # runs mariadb-binlog
def test_json_and_timing_print_and_a_decoding_failure_is_one_line(tmp_path: Path) -> None:
    code, out, err = run_main(["profile", str(SAMPLE), "--out", str(tmp_path / "p.json"), "--json", "--timing"])
    assert code == 0 and json.loads(out)["schema_version"] == prof.SCHEMA_VERSION
    assert "Timing: the decoder alone" in err  # figures only: a timing is never asserted
    broken = tmp_path / "broken.binlog"
    broken.write_bytes(SAMPLE.read_bytes()[:1000])  # a header, then an event cut short
    code, out, err = run_main(["profile", str(broken), "--out", str(tmp_path / "b.json")])
    assert code == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "failed on" in err and "truncated" in err


@pytest.mark.integration  # runs mariadb-binlog on the committed sample (no server)
def test_model_predict_takes_a_profile_on_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "sample.profile.json"
    code, _, err = run_main(["profile", str(ROOT / "samples" / "write-mix.binlog"), "--out", str(out)])
    assert code == 0, err
    # the model the committed report campaign published (read only)
    env = env_for(tmp_path / "state", REPLBENCH_RESULTS=str(ROOT / "results"), REPLBENCH_PORT_BASE="9")
    code, text, err = run_main(["model", "predict", "--profile", str(out)], env)
    assert code == 0, err
    assert "ROW-FULL" in text and "ROW-MINIMAL" in text, text


@pytest.mark.integration  # runs mariadb-binlog on the committed sample (no server)
def test_a_window_over_the_sample_binlog_is_what_filtering_its_whole_text_gives(tmp_path: Path) -> None:
    """The decoder told the window (with its margin) prints only what is near it; the profile is the one that
    reading every event and keeping the window's gives: 14 of the 1,500 transactions, over the window's 20 s."""
    out = tmp_path / "p.json"
    code, text, err = run_main(["profile", str(SAMPLE), "--since", "2026-11-27 10:15:00", "--until",
                                "2026-11-27 10:15:20", "--out", str(out)])
    assert code == 0, err
    p = prof.read(out)
    assert (p.first_event, p.last_event, p.span_s) == ("2026-11-27 10:15:00", "2026-11-27 10:15:19", 20)
    assert (p.workload.transactions, p.workload.bytes) == (14, 74_429) and "--start-datetime=" in p.decoder
    assert p.source is not None and (p.source.read_from, p.source.since, p.source.until) == \
        ("files", "2026-11-27 10:15:00", "2026-11-27 10:15:20")
    file = binlogfile.inspect(SAMPLE)
    profiler = prof.Profiler(None, prof.Window(_second("2026-11-27 10:15:00"), _second("2026-11-27 10:15:20")))
    profiler.feed(file, binlogfile.events(binlogfile.stream(binlogfile.decoder(file)), file.path.name))
    whole = profiler.build(p.decoder, p.source)  # every event decoded, the window kept by the profiler alone
    assert whole == p
    assert "Window: 2026-11-27 10:15:00 to 2026-11-27 10:15:20" in text


def test_profile_reads_a_window_of_the_test_topologys_master_and_finds_a_runs_writes(
        topo: Settings, tmp_path: Path) -> None:
    """A short write run, then `profile --state` (the native topology) and `profile --topology FILE` (the same
    master over TCP with a password) over a window around it: the run's updates are on bench_idx's line, the
    rates are over the window, the copies are removed (or kept with --keep). One run for both ways (its cost is
    the run's, not the profile's)."""
    since = time.time()
    time.sleep(1.0 - since % 1 + 0.01)  # the window starts on a whole second of its own
    since = int(time.time())
    run = run_cli(["write", "20", "--duration", "2s"], env_for(topo.state))
    assert run.returncode == 0, run.stderr
    summary = json.loads((run_folder(run.stdout) / "summary.json").read_text())
    time.sleep(1.1)
    until = int(time.time())
    window = ["--since", time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(since)),
              "--until", time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(until))]
    for via in ("state", "topology"):
        here = tmp_path / via
        here.mkdir()
        out = here / "p.json"
        if via == "state":
            env = env_for(topo.state)
            args = ["profile", "--state", str(topo.state), *window, "--out", str(out)]
        else:
            env = env_for(here / "state", REPLBENCH_DB_USER="replbench_admin",
                          REPLBENCH_DB_PASSWORD=topo.admin_password)
            args = ["profile", "--topology", str(write_topology(here, topo, UNREACHED_EXPORTER)), *window,
                    "--out", str(out), "--keep"]
        proc = run_cli(args, env)
        assert proc.returncode == 0, proc.stderr
        p = prof.read(out)
        assert p.source is not None and p.source.read_from == "server" and p.span_s == until - since
        assert ("native" in p.source.server) == (via == "state") and str(topo.state) not in out.read_text()
        idx = _line(p, "bench_idx")
        assert idx.kind == "update" and idx.transactions >= summary["successes"] > 0
        assert idx.rates.mean_per_s == pytest.approx(idx.transactions / (until - since))
        assert p.heartbeat is not None and p.heartbeat.transactions > 0  # the harness's, on its own line
        kept = [ln.split(" in ", 1)[1].strip() for ln in proc.stderr.splitlines() if "binlogs are kept in" in ln]
        if via == "topology":
            assert kept and list(Path(kept[0]).glob("*.0*")), proc.stderr
            shutil.rmtree(kept[0])
        else:
            assert not kept


def test_a_profiles_capacity_per_role_is_priced_with_cores(tmp_path: Path, monkeypatch, capsys) -> None:
    """model predict --profile FILE --cores …: each sheet carries the capacity per role, the roles not given not
    judged; a model without the app's fit says "no data" for it."""
    from .test_costmodel import roles_model, synthetic

    p = _snippet_profile()
    for model, app in ((roles_model(), "app (gunicorn workers): needs "),
                       (model_of(fitted_model(*synthetic())), "app (gunicorn workers): no data: the model has no "
                                                               "fit of the app's CPU per request")):
        path = _saved_for_predict(tmp_path / str(len(app)), monkeypatch, model, p)
        args = argparse.Namespace(profile=str(path), setting="ROW-FULL", replica_cores=None, parallel=1, link=None,
                                  cores={"master": 1.0, "app": 1.0})
        assert predict_from_profile(args) == 0
        out = capsys.readouterr().out
        assert "Capacity per role at 0.104 transactions/s asked (--cores master=1,app=1):" in out, out
        assert app in out and "  load (vegeta): not judged (not in --cores)" in out, out
