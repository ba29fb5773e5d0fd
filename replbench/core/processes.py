"""Process helpers shared by the topology and the app tier: liveness that treats zombies as gone (a node started
by another process of ours may linger as a zombie until its parent reaps it) and bounded waits for exit."""

from __future__ import annotations

import time

import psutil

POLL = 0.1


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_gone(pids: list[int], timeout: float) -> list[int]:
    """Wait until none of pids is alive (zombies count as gone); returns those still alive at the timeout."""
    deadline = time.monotonic() + timeout
    left = [p for p in pids if alive(p)]
    while left and time.monotonic() < deadline:
        time.sleep(POLL)
        left = [p for p in left if alive(p)]
    return left
