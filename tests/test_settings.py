"""Settings that shape a run's cost around the attack: the idle window (derived from the rate unless set) and the
harness's own time as the block states it. Unit tier: no server."""

from __future__ import annotations

import pytest

from replbench.core.config import IDLE_REQUESTS, IDLE_WINDOW, IDLE_WINDOW_MAX, ConfigError, Settings, idle_window
from replbench.core.results import summary_of
from replbench.report.block import _harness_time_lines

from .conftest import run_main


def test_the_idle_window_by_default_is_2000_requests_worth_of_the_rate_from_3_to_20_s() -> None:
    assert (IDLE_REQUESTS, IDLE_WINDOW, IDLE_WINDOW_MAX) == (2000, 3.0, 20.0)
    assert idle_window(100) == 20.0 and idle_window(20) == 20.0  # capped: 2,000 requests at 100/s is 20 s
    assert idle_window(400) == 5.0 and idle_window(1000) == 3.0 and idle_window(3000) == 3.0  # floored at 3 s
    assert idle_window(100, 3.0) == 3.0 and idle_window(3000, 7.5) == 7.5  # a set window wins, whatever the rate


def test_the_idle_window_setting_is_auto_or_a_duration() -> None:
    assert Settings.from_env({}).idle_window == 0.0  # auto
    assert Settings.from_env({"REPLBENCH_IDLE_WINDOW": "5s"}).idle_window == 5.0
    assert Settings.from_env({"REPLBENCH_IDLE_WINDOW": "2.5"}).idle_window == 2.5
    assert Settings.from_env({"REPLBENCH_IDLE_WINDOW": "500ms"}).idle_window == 0.5
    assert Settings.from_env({}).with_overrides(idle_window="4s").idle_window == 4.0
    assert Settings.from_env({"REPLBENCH_IDLE_WINDOW": "4s"}).with_overrides(app_port=9999).idle_window == 4.0
    for bad in ("soon", "-1", "5x"):
        with pytest.raises(ConfigError, match="idle window"):
            Settings.from_env({"REPLBENCH_IDLE_WINDOW": bad})


def test_a_bad_idle_window_flag_exits_2_with_usage() -> None:
    code, _, err = run_main(["get", "100", "--idle-window", "soon"])
    assert code == 2 and "usage: ./run.sh <scenario> <rate>" in err and "idle window" in err.splitlines()[-1]


def test_the_block_states_the_harness_time_around_the_attack() -> None:
    parts = {"start_up": 0.62, "before_attack": 1.04, "idle_window": 3.05, "attack": 5.08, "after_attack": 0.81}
    assert _harness_time_lines(summary_of({"harness_time_s": parts})) == [
        "Harness time: 0.6 s start-up, 1.0 s preparing, 3.0 s idle window, 5.1 s attack, 0.8 s after the attack "
        "(catch-up, reports, checks); 10.6 s in all"]
    assert _harness_time_lines(summary_of({})) == []  # a run recorded before the line existed


def test_off_a_terminal_every_step_is_a_line_and_a_long_steps_ticks_come_every_few_seconds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from replbench.core import progress

    now = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    out = io.StringIO()
    shown = progress.Progress("run", stream=out)
    shown.say("measuring the idle cost")
    shown.say("1/60 s, app answered 40", tick=True)  # the first tick right after a step: shown
    now[0] += 1
    shown.say("2/60 s, app answered 80", tick=True)  # within LOG_INTERVAL of the last tick: not
    shown.say("a step's own line")  # a step always
    now[0] += progress.LOG_INTERVAL
    shown.say("7/60 s, app answered 280", tick=True)
    shown.say("attack finished", final=True)
    assert [line.split("] ", 1)[1] for line in out.getvalue().splitlines()] == [
        "measuring the idle cost", "1/60 s, app answered 40", "a step's own line", "7/60 s, app answered 280",
        "attack finished"]
