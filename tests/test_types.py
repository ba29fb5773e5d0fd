"""The code type-checks (mypy, configured in pyproject.toml: every module at mypy's default strictness, the results
records, the run's pipeline and the cost model strict). mypy runs in-process, so this is a unit test."""

from __future__ import annotations

from mypy import api

from replbench.core.config import ROOT


def test_mypy_is_clean() -> None:
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), "--no-error-summary"])
    assert status == 0, out + err
