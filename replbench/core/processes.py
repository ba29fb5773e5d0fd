"""Process helpers shared by the topology and the app tier: liveness that treats zombies as gone (a node started
by another process of ours may linger as a zombie until its parent reaps it) and bounded waits for exit; and the
checkout's commit and whether its tree differs from it, which every run and campaign records."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

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


def git_state(root: Path) -> tuple[str | None, bool]:
    """(commit, dirty) of the checkout at `root`: None where git cannot tell. Dirty: a file git tracks differs from
    the commit, or a file it does not track sits outside results/ (a new module would be measured too). What a
    measurement writes under results/ (an evidence folder's first files, before the command that measures) leaves
    the tree clean: the code measured is the commit's."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD") or None
        changed = git("status", "--porcelain", "--", ".", ":(exclude)results")
        tracked = git("status", "--porcelain", "--untracked-files=no", "--", "results")
    except OSError:
        return None, False
    return commit, bool(changed or tracked)
