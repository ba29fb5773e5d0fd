"""What limited a run (analysis/limits): the most utilised CPU resource against its capacity, named, and what else
held the run back; the block's line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replbench.analysis import limits
from replbench.core.results import Limit, summary_of
from replbench.report.block import render_block

pytestmark = pytest.mark.unit

GOLDEN = Path(__file__).parent / "fixtures" / "golden-run"


def _summary(**means: float) -> dict[str, Any]:
    return {"cores": 2, "requests": 1000, "app_admission": {"workers": 2, "shed": 0},
            "cpu_mean_percent": {"host_busy": 100.0, "app": 50.0, "master": 40.0, "replica1": 30.0,
                                 "replica2": 30.0, "vegeta": 10.0, **means}}


def test_the_host_at_194_of_200_is_the_limit_not_replication() -> None:
    got = limits.limiting(summary_of(_summary(host_busy=194.0, replica1=62.0)))
    assert got is not None and got["resource"] == "host CPU" and got["saturated"] is True and got["share"] == 0.97
    assert got["utilisation"]["replica1's mariadbd (serial apply: one core)"]["share"] == 0.62


def test_a_replica_applying_serially_is_limited_by_one_core_and_parallel_threads_by_theirs() -> None:
    summary = summary_of(_summary(host_busy=150.0, replica1=97.0))
    got = limits.limiting(summary)
    assert got is not None and got["resource"] == "replica1's mariadbd (serial apply: one core)" and got["saturated"]
    # four applier threads on two cores: the same 97 % is half of what they can use
    parallel = limits.limiting(summary, parallel_threads=4)
    assert parallel is not None and parallel["resource"] == "host CPU" and not parallel["saturated"]
    assert parallel["utilisation"]["replica1's mariadbd (4 applier threads on 2 core(s))"]["share"] == 0.485


def test_nothing_saturated_says_what_came_closest_and_what_else_held_the_run_back() -> None:
    data = _summary(host_busy=98.0)
    data["app_admission"]["shed"] = 210
    data["replication"] = {"nodes": {"replica1": {"pool_disk_reads_per_write": 3.5}}}
    data["lag"] = {"replica1": {"growth_s_per_s": 0.116}, "replica2": {"growth_s_per_s": 0.0}}
    got = limits.limiting(summary_of(data))
    assert got is not None and not got["saturated"] and got["resource"] == "host CPU"
    assert got["also"] == ["the app's admission shed 210 of 1,000 requests",
                           "disk reads (replica1 3.5 pages read from disk per write)", "replica1 falling behind"]
    text = limits.text(Limit.model_validate(got))
    assert text.startswith("no CPU resource saturated (the closest: host CPU at 49% of its capacity; saturated: 95%)"
                           "; also: the app's admission shed 210"), text
    assert "Steady CPU against capacity: host CPU 98 % of 200 %; replica1's mariadbd (serial apply: one core) 30 % " \
        "of 100 %" in text  # the most used share first
    assert limits.limiting(summary_of({"cores": 2})) is None  # no CPU figures: nothing to name


def test_the_block_names_the_limit() -> None:
    summary = json.loads((GOLDEN / "summary.json").read_text())
    assert "Limited by: " not in render_block(summary_of(summary), GOLDEN.resolve())  # recorded before it was
    summary["limit"] = limits.limiting(summary_of(_summary(host_busy=194.0)))
    line = next(ln for ln in render_block(summary_of(summary), GOLDEN.resolve()).splitlines()
                if ln.startswith("Limited by: "))
    assert line.startswith("Limited by: host CPU saturated (97% of its capacity). Steady CPU against capacity: "), line
