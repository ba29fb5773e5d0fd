"""Scenarios: the declarative files in scenarios/ (TOML), loaded and validated."""

from __future__ import annotations

from .config import SCENARIO_DIR


def available() -> list[str]:
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.toml"))
