"""The code stays ruff-clean (configuration in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from replbench.core.config import ROOT


@pytest.mark.integration  # runs ruff's binary
def test_ruff_is_clean() -> None:
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "replbench", "app", "tests", "tools",
                           "results/readme-assets"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
