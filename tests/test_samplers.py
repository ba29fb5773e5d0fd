"""The samplers' own cost when a node is down: every loop that reads a node backs off (docs/decisions/sampler-cost.md)
instead of reconnecting at its full rate, which burnt most of a core of the 2-core box the surviving nodes ran on."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from replbench.core.config import Settings
from replbench.measure.lag import LagMonitor
from replbench.measure.loops import BACKOFF_MAX, Backoff

from .conftest import env_for


def test_the_backoff_doubles_up_to_its_longest_and_an_answer_resets_it() -> None:
    b = Backoff(0.01)
    assert [b.failed() for _ in range(9)] == [0.02, 0.04, 0.08, 0.16, 0.32, 0.64, BACKOFF_MAX, BACKOFF_MAX,
                                                BACKOFF_MAX]
    assert b.ok() == 0.01 and b.failed() == 0.02 and b.failures == 10


@pytest.mark.integration  # mysql-connector's connect runs lsb_release once, which the unit tier forbids
def test_nodes_that_do_not_answer_are_tried_about_once_a_second(tmp_path: Path) -> None:
    # a state folder with no server in it: every node's socket is missing, as a killed node's is
    settings = Settings.from_env(env_for(tmp_path / "state"))
    monitor = LagMonitor(settings, tmp_path / "lag.csv", time.monotonic())
    monitor.start()
    time.sleep(2.0)
    monitor.stop()
    # at full rate: 200 position reads and 20 heartbeat reads per node in 2 s; backing off: 8 to 10 attempts
    for name in settings.node_names:
        assert 2 <= monitor.positions.backoff[name].failures <= 15, (name, monitor.positions.backoff[name].failures)
        assert 2 <= monitor.backoff[name].failures <= 10, (name, monitor.backoff[name].failures)
