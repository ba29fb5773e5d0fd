"""The suite's lanes (docs/development.md#tests): pytest sessions side by side, each with its own small topology,
taking the test files from one queue. What must hold: every group of tests is run by exactly one lane, in the
queue's order (integration before disruptive), and no two lanes' ports meet."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from replbench.cli.setup import machine_type_caches
from replbench.core.config import MAX_TEST_LANES
from replbench.topology import links

from .conftest import LANE_APP_PORT_STEP, LANE_PORT_STEP, _claimed, _file_groups, run_main


def _item(path: str, tier: str) -> Any:
    return SimpleNamespace(path=Path(path), get_closest_marker=lambda name: name == tier, fixturenames=())


def test_the_queue_is_cut_where_the_file_or_the_tier_changes() -> None:
    items = [_item("a.py", "integration"), _item("a.py", "integration"), _item("b.py", "integration"),
             _item("a.py", "disruptive"), _item("c.py", "disruptive")]
    groups = _file_groups(items)
    assert [len(g) for g in groups] == [2, 1, 1, 1]
    assert [(g[0].path.name, g[0].get_closest_marker("disruptive")) for g in groups] == [
        ("a.py", False), ("b.py", False), ("a.py", True), ("c.py", True)]


def test_the_file_after_the_overloads_is_taken_with_them() -> None:
    # test_admission's overloads leave the app's ports in TIME_WAIT for a minute: test_app's requests (no run, so
    # no settle to wait it out) follow them in the same lane; test_app's disruptive tests are a group of their own
    items = [_item("test_admission.py", "integration"), _item("test_app.py", "integration"),
             _item("test_app.py", "integration"), _item("test_bigtx.py", "integration"),
             _item("test_app.py", "disruptive")]
    assert [[i.path.name for i in g] for g in _file_groups(items)] == [
        ["test_admission.py", "test_app.py", "test_app.py"], ["test_bigtx.py"], ["test_app.py"]]


def test_each_group_is_taken_by_exactly_one_lane_in_the_queues_order(tmp_path: Path) -> None:
    # two lanes walking the same queue, turn by turn as their tests end: each takes the next group nobody took
    lanes: list[list[int]] = [[], []]
    for index in range(7):
        for lane in (index % 2, 1 - index % 2):
            if _claimed(tmp_path, index):
                lanes[lane].append(index)
        assert not _claimed(tmp_path, index)  # taken once: no lane takes it again
    assert sorted(lanes[0] + lanes[1]) == list(range(7)) and not set(lanes[0]) & set(lanes[1])
    assert all(lane == sorted(lane) for lane in lanes)


def test_no_two_lanes_ports_meet() -> None:
    def ports(lane: int) -> set[int]:
        base = 3406 + LANE_PORT_STEP * lane
        own = set(range(base, base + 5))  # the master, three replicas, the fan-out test's fourth node
        second = set(range(base + 10, base + 13))  # test_topology's second small topology
        proxies = {base + links.API_OFFSET + i for i in range(len(links.LINK_NAMES) + 1)}
        app = 8180 + LANE_APP_PORT_STEP * lane
        return own | second | proxies | {app, app + 50}  # test_external's second app

    taken: set[int] = set()
    for lane in range(MAX_TEST_LANES):
        assert not ports(lane) & taken, lane
        taken |= ports(lane)


@pytest.mark.parametrize("lanes", ["0", "5", "two"])
def test_lanes_out_of_range_is_a_usage_error(lanes: str) -> None:
    code, _, err = run_main(["test", "--lanes", lanes])
    assert code == 2 and "--lanes" in err and "whole number from 1 to" in err


def test_a_fresh_clone_starts_from_the_machines_type_caches_and_leaves_its_own(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """--fast from a fresh clone: mypy's caches copied from the machine's (its files' times kept, which mypy's
    records of them expect), and the clone's left there after, for the next clone."""
    machine, state = tmp_path / "machine", tmp_path / "clone" / ".state"
    (machine / "mypy-cache" / "3.11").mkdir(parents=True)
    (machine / "mypy-cache" / "3.11" / "cache.0.db").write_text("from another clone")
    os.utime(machine / "mypy-cache" / "3.11" / "cache.0.db", (1_000_000, 1_000_000))
    monkeypatch.setenv("REPLBENCH_VENV_CACHE", str(machine))
    with machine_type_caches(state):
        copied = state / "mypy-cache" / "3.11" / "cache.0.db"
        assert copied.read_text() == "from another clone" and copied.stat().st_mtime == 1_000_000
        assert not (state / "mypy-cache-evidence").exists()  # the machine has none yet: mypy starts cold
        copied.write_text("this clone's")
        (state / "mypy-cache-evidence").mkdir()
    assert (machine / "mypy-cache" / "3.11" / "cache.0.db").read_text() == "this clone's"
    assert (machine / "mypy-cache-evidence").is_dir()
    assert sorted(p.name for p in machine.iterdir()) == ["mypy-cache", "mypy-cache-evidence", "type-caches.lock"]
