"""Writes change what they say they change (fresh values per run, verified per run), and the buffer pool as a
knob: set online on every node, read back, and back at the reference for the next plain run."""

from __future__ import annotations

import json
import random
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from app.validation import ClientError, field_value, find_users_params
from replbench.core import sql
from replbench.core.results import RowsChecked
from replbench.core.scenario import load
from replbench.load import targets
from replbench.measure import rowcheck
from replbench.topology.knobs import Knobs, parse_size

from .conftest import env_for, run_cli, run_folder, run_main

BINLOG_SNIPPET = Path(__file__).parent / "fixtures" / "binlog-rows-full.txt"  # mariadb-binlog -v of a write run


def run(topo, *args: str) -> tuple[dict, dict, str]:
    proc = run_cli([*args], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = run_folder(proc.stdout)
    return (json.loads((folder / "summary.json").read_text()), json.loads((folder / "meta.json").read_text()),
            proc.stdout)


@pytest.mark.parametrize("scenario,extra", [
    ("write", []),  # the three indexed columns, from the binlog's row images
    ("write-wide", []),  # interests (TEXT), from the row images
    ("write", ["--binlog-format", "STATEMENT"]),  # no row images: from a sample read back before and after
])
def test_two_identical_write_runs_in_a_row_both_change_their_columns(topo, scenario: str, extra: list[str]) -> None:
    checks, nonces = [], []
    for _ in range(2):  # no reset between them: the second run must not write what the first one wrote
        summary, meta, out = run(topo, scenario, "50", "--duration", "2s", *extra)
        check = summary["rows_checked"]
        assert check["checked"] >= 90 and check["share"] >= rowcheck.MIN_CHANGED, check
        assert not any("changed their" in g for g in summary["guards"])
        assert "Rows: " + rowcheck.describe(RowsChecked.model_validate(check)) in out
        checks.append(check)
        nonces.append(meta["targets"]["nonce"])
    assert nonces[0] != nonces[1]
    assert checks[0]["method"] == ("sample" if extra else "binlog")
    assert checks[0]["indexed"] is (scenario == "write")  # interests is in no index
    if scenario == "write":
        assert "indexed columns (first_name, last_name, city) changed in" in out


def test_the_seed_fixes_the_ids_and_the_nonce_the_values(topo, tmp_path: Path) -> None:
    scenario = load("write")
    files = {}
    for name, nonce in (("a", "01"), ("b", "01"), ("c", "02")):
        targets.generate(topo, scenario, "http://x", tmp_path / name, rate=100, duration=5, nonce=nonce)
        files[name] = [json.loads(line) for line in (tmp_path / name).read_text().splitlines()]
    assert files["a"] == files["b"]  # seed + nonce replays a run
    assert [t["url"] for t in files["a"]] == [t["url"] for t in files["c"]]
    assert [t["body"] for t in files["a"]] != [t["body"] for t in files["c"]]
    # no update writes the value its row holds now, in any of the three columns
    ids = rowcheck.sample_ids(tmp_path / "c", 500)
    now = rowcheck.read_values(topo, "bench_idx", ("first_name", "last_name", "city"), ids)
    bodies = [json.loads(__import__("base64").b64decode(t["body"])) for t in files["c"][:500]]
    for body in bodies:
        held = now[body["id"]]
        assert all(body[c] != v for c, v in zip(("first_name", "last_name", "city"), held)), (body, held)


def test_a_write_runs_targets_cover_every_request_it_sends() -> None:
    scenario = load("write")
    assert targets.target_count(scenario, 3600, 60) >= 3600 * 60  # vegeta loops the file: no value twice
    assert 400 * 20 <= targets.target_count(scenario, 400, 20) < 100_000  # and no more: building them reads rows
    assert targets.target_count(load("read"), 3600, 60) == load("read").target_count


def test_donors_and_searches_the_app_would_refuse_are_passed_over() -> None:
    """A row written outside the app's rules (a name with digits, a dot) never becomes a value or a search."""
    bad = ("f540.726243", "Smith", "Paris")
    good = ("Anna", "Berg", "Oslo")
    rows = {1: ("Ola", "Nordmann", "Bergen"), 2: bad, 3: good}
    values = targets._Values(random.Random(7), ("first_name", "last_name", "city"), rows, [2, 3] * 20)
    picks = [values.fresh(1) for _ in range(3)]
    assert picks[0] == good and values.refused > 0  # the bad donor was drawn and passed over
    for name, value in zip(("first_name", "last_name", "city"), picks[0]):
        field_value(name, value)  # the app takes what the targets write
    with pytest.raises(ClientError):
        field_value("first_name", bad[0])  # and would have refused the donor
    # a donor that is bad only in a column the scenario does not write is fine
    city_only = targets._Values(random.Random(7), ("city",), {1: rows[1], 2: bad}, [2] * 5)
    assert city_only.fresh(1) == bad and city_only.refused == 0
    scenario = load("read")
    find = targets._target("find_users", 2, values, scenario, "http://x", "bench_idx", 3)
    assert find is None and values.searches_refused == 1
    find = targets._target("find_users", 3, values, scenario, "http://x", "bench_idx", 3)
    assert find is not None
    find_users_params(dict(parse_qsl(urlsplit(find["url"]).query)))


def test_several_attackers_each_send_their_own_targets_in_the_files_order(tmp_path: Path) -> None:
    # several attackers reading one whole file each sent its first lines: every write twice with two, the repeat
    # writing what the row then held (a write run from two SSH attackers found 50.9 % of its rows changed). Dealt
    # out by share instead, each line goes to one attacker, and what they have sent after any second is the
    # file's first lines, which the sample (rowcheck.sample_ids) reads
    from replbench.load import attack

    path = tmp_path / "targets.json"
    path.write_text("".join(json.dumps({"n": i}) + "\n" for i in range(1000)))
    parts = attack.split_targets(path, [101, 100])
    assert parts == attack.target_parts(path, 2) == [tmp_path / "targets-1.json", tmp_path / "targets-2.json"]
    sent = [[json.loads(line)["n"] for line in p.read_text().splitlines()] for p in parts]
    assert sorted(sent[0] + sent[1]) == list(range(1000)) and (len(sent[0]), len(sent[1])) == (502, 498)
    assert sorted(sent[0][:101 * 3] + sent[1][:100 * 3]) == list(range(603))  # 3 s at 101/s and 100/s
    assert [len(p.read_text().splitlines()) for p in attack.split_targets(path, [3, 1, 0])] == [750, 250, 0]
    with pytest.raises(ValueError, match="no attacker has a share"):
        attack.split_targets(path, [0, 0])


def test_two_local_attackers_read_their_own_parts(tmp_path: Path) -> None:
    from replbench.load import attack

    (tmp_path / "targets.json").write_text("".join(json.dumps({"n": i}) + "\n" for i in range(10)))
    run = attack.Attack(Path("/opt/vegeta"), tmp_path, tmp_path / "targets.json",
                        attack.AttackOptions(41, 3.0, max_connections=8, attackers=2), "get-41")
    assert [len((tmp_path / f"targets-{i}.json").read_text().splitlines()) for i in (1, 2)] == [5, 5]
    assert [c[3] for c in run.commands] == [f"-targets={tmp_path / 'targets-1.json'}",
                                            f"-targets={tmp_path / 'targets-2.json'}"]
    single = attack.Attack(Path("/opt/vegeta"), tmp_path, tmp_path / "targets.json",
                           attack.AttackOptions(41, 3.0, max_connections=8), "get-41")
    assert single.command[3] == f"-targets={tmp_path / 'targets.json'}"


def test_the_row_images_are_compared_column_by_column() -> None:
    text = BINLOG_SNIPPET.read_text()
    pairs = list(rowcheck.parse_updates(text.splitlines(), "bench_idx"))
    assert len(pairs) == 3  # the heartbeat's updates are not the table's
    assert all(old[3] != new[3] and old[7] != new[7] for old, new in pairs)
    assert all(old[1] == new[1] for old, new in pairs)  # same row
    # the same images with the SET written back as the WHERE: nothing changed
    update = text.index("### UPDATE `bench_idx`")
    first = text.index("### SET", update)
    block_end = text.index("# Number of rows", first)
    where = text[text.index("### WHERE", update):first].replace("### WHERE", "### SET")
    unchanged = text[:first] + where + text[block_end:]
    old, new = next(iter(rowcheck.parse_updates(unchanged.splitlines(), "bench_idx")))
    assert old == new
    assert len(list(rowcheck.parse_updates(text.splitlines(), "bench_idx", limit=2))) == 2


def test_the_guard_trips_below_99_percent() -> None:
    check = RowsChecked(method="binlog", columns=["first_name"], indexed=True, checked=8000, changed=17,
                        share=17 / 8000, first_rows_only=False)
    assert "0.2 % of row updates changed their indexed columns" in rowcheck.guard(check, 1.0)
    assert rowcheck.guard(check.model_copy(update={"changed": 7996, "share": 0.9995}), 1.0) is None
    # a sample counts the failed requests too: held to 99 % of the success ratio
    sample = check.model_copy(update={"method": "sample", "share": 0.5})
    assert rowcheck.guard(sample, 0.5) is None and rowcheck.guard(sample, 1.0)


@pytest.mark.disruptive  # resizes every node's buffer pool
def test_the_buffer_pool_is_set_read_back_and_restored(topo) -> None:
    summary, meta, out = run(topo, "write-noindex", "40", "--duration", "2s", "--buffer-pool", "128M")
    assert meta["knobs_changed"] == {"buffer_pool": "128M"}
    for node in ("master", "replica1", "replica2"):
        assert int(meta["knobs_readback"][node]["innodb_buffer_pool_size"]) == 128 << 20
        assert summary["buffer_pools"][node]["pool_bytes"] == 128 << 20
        assert summary["buffer_pools"][node]["flush_method"]
    assert "Buffer pool: 128 MiB on every node" in out and "innodb_flush_method" in out
    assert "pages read from disk" in out and not meta["knob_mismatches"]
    summary, meta, out = run(topo, "write-noindex", "40", "--duration", "2s")  # the next plain run: reference
    reference = parse_size(topo.buffer_pool)
    for node in topo.nodes:
        assert int(meta["knobs_readback"][node.name]["innodb_buffer_pool_size"]) == reference
        assert int(sql.query_one(node, topo, "SELECT @@innodb_buffer_pool_size")) == reference


@pytest.mark.parametrize("size", ["lots", "1M", "2T", "-5G", "12Q"])
def test_a_bad_buffer_pool_size_exits_2_with_usage(size: str) -> None:
    code, out, err = run_main(["write", "100", "--buffer-pool", size])
    assert code == 2, out + err
    assert "usage:" in err and "--buffer-pool" in err


def test_sizes_read_as_mariadb_reads_them() -> None:
    assert parse_size("128M") == 128 << 20 and parse_size("4g") == 4 << 30 and parse_size("1048576") == 1 << 20
    assert Knobs.from_values({"buffer_pool": "1g"}).buffer_pool == "1G"
    assert Knobs().describe() == "reference settings"


def test_a_resize_forgets_what_warm_up_read_into_those_pools(tmp_path: Path) -> None:
    from replbench.core.config import Settings
    from replbench.topology.knobs import forget_warm

    settings = Settings.from_env({"REPLBENCH_STATE": str(tmp_path)})
    marks = {"master:bench_idx": "1:pool=4294967296", "replica1:bench_idx": "2:pool=4294967296",
             "replica1:bench_noidx": "2:pool=4294967296"}
    settings.warm_marker.write_text(json.dumps(marks))
    forget_warm(settings, ["replica1"])  # a pool shrunk and grown back holds little: warm it again next time
    assert json.loads(settings.warm_marker.read_text()) == {"master:bench_idx": "1:pool=4294967296"}
