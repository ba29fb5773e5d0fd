"""The test sessions themselves: a session killed before its teardown (an interrupt during the topology's setup, a
`timeout` kill) leaves nodes and an app behind; the next session stops and removes them, never a live session's."""

from __future__ import annotations

import fcntl
import os
import subprocess
import time

import psutil
import pytest

from .conftest import SESSION_LOCK, STALE_AFTER_S, sweep_stale_topologies


@pytest.mark.integration  # starts a process for the sweep to stop
def test_a_killed_sessions_leftovers_are_swept_and_a_live_sessions_are_not(tmp_path) -> None:
    killed, live, starting = (tmp_path / f"replbench-test-{n}" for n in ("killed", "live", "starting"))
    for folder in (killed, live, starting):
        folder.mkdir()
    # a process the killed session left, known by its pid file as the harness knows toxiproxy's (not our child:
    # its shell parent exits, as a killed session's processes outlive it)
    (killed / "toxiproxy").mkdir()
    pid = int(subprocess.run(["sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!"], capture_output=True, text=True,
                             check=True).stdout)
    (killed / "toxiproxy" / "toxiproxy.pid").write_text(str(pid))
    lock = os.open(live / SESSION_LOCK, os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        aged = time.time() - 2 * STALE_AFTER_S
        for folder in (killed, live):
            os.utime(folder, (aged, aged))
        assert sweep_stale_topologies(tmp_path) == [killed.name]
        assert not killed.exists() and live.exists() and starting.exists()
        deadline = time.time() + 10
        while psutil.pid_exists(pid) and time.time() < deadline:
            time.sleep(0.1)
        assert not psutil.pid_exists(pid)
    finally:
        os.close(lock)
        if psutil.pid_exists(pid):
            os.kill(pid, 9)
