"""What the report says of each section's data: whether its writes were verified to change their rows, whether its
CPU is net of idle, whether its scenario writes at all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..analysis.studymetrics import measured
from ..core import scenario as scenario_file


def scenarios_write(name: str) -> bool:
    """The scenario (as its file says today) sends updates."""
    try:
        return scenario_file.load(name).writes
    except scenario_file.ScenarioError:
        return False


def net_of_idle(data: dict[str, Any], folder: Path) -> bool:
    """Whether every run of the study has CPU net of idle: from each unit's summary where the raw data is here,
    else as recorded (kept in the assets' study.json, so a rebuild from the assets says the same)."""
    if "cpu_net_of_idle" in data:
        return bool(data["cpu_net_of_idle"])

    def net(unit: dict[str, Any]) -> bool:
        summary = folder / unit["folder"] / "summary.json" if unit.get("folder") else None
        if summary is not None and summary.exists():
            return "cpu_seconds_net" in json.loads(summary.read_text())
        return bool(unit["metrics"].get("cpu_net_of_idle"))

    flags = [net(u) for u in data["units"] if measured(u) and u.get("measure", "run") == "run"]
    return bool(flags) and all(flags)


def cpu_kind(data: dict[str, Any]) -> str:
    if data.get("cpu_net_of_idle"):
        return "- **CPU figures**: net of idle (each run's CPU with nothing but the heartbeat running, subtracted)"
    return ("- **CPU figures**: gross (measured before runs had an idle window: heartbeat, purge and flushing "
            "included, which inflates the per-write cost most at low rates)")


def verified(data: dict[str, Any]) -> bool:
    """A study whose write units were all checked to change their rows (or that writes nothing)."""
    if not any(scenarios_write(s) for s in data.get("scenarios", [])):
        return True
    units = [u for u in data["units"] if measured(u)]
    return bool(units) and all(u["metrics"].get("rows_changed_pct") is not None for u in units
                               if u.get("measure", "run") == "run")


def rows_verified(shares: list[float | None], writes: bool) -> str:
    """Whether the section's writes were checked to change their rows (before that check existed, every run of a
    scenario after the dataset's first rewrote the values its rows held: only updated_at changed)."""
    if not writes:
        return "- **Rows changed**: no update to check"
    got = [s for s in shares if s is not None]
    if not got:
        return ("- **Rows changed**: **not verified** — measured before each write run was checked; from a dataset's "
                "second write run on, updates then rewrote the values the rows held (only updated_at changed), so "
                "its write figures may measure that, not the update it names")
    share = f"{min(got):g} %" if min(got) == max(got) else f"{min(got):g}–{max(got):g} %"
    return (f"- **Rows changed**: verified in {len(got)} of {len(shares)} units (the updated columns changed in "
            f"{share} of row updates)")
