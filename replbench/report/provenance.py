"""What the report says of each section's data: whether its writes were verified to change their rows, whether its
CPU is net of idle, whether its scenario writes at all, which server its runs recorded.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..analysis.studymetrics import measured
from ..core import scenario as scenario_file
from ..core.results import RunMeta, StudyRecord, StudyUnit, read_summary


def scenarios_write(name: str) -> bool:
    """The scenario (as its file says today) sends updates."""
    try:
        return scenario_file.load(name).writes
    except scenario_file.ScenarioError:
        return False


CPU_MEASURES = ("run", "apply-capacity")  # the unit kinds with CPU figures (big-transaction times and counts bytes)


def _measure(unit: StudyUnit) -> str | None:
    """What a unit measured: a run, where a study.json from before measures has no key (never null)."""
    return "run" if unit.measure is None else unit.measure


def _measured(unit: StudyUnit) -> bool:
    return measured(unit)


def _units(data: StudyRecord) -> list[StudyUnit]:
    """A study's units: experiments/study.py writes them (a study.json without them fails, as it did)."""
    assert data.units is not None
    return data.units


def _changed_pct(unit: StudyUnit) -> float | None:
    """A measured unit's share of row updates that changed their rows (None: not checked)."""
    return unit.metrics.rows_changed_pct if unit.metrics else None


def net_of_idle(data: StudyRecord, folder: Path) -> bool | None:
    """Whether every unit with CPU figures (runs, apply-capacity drains) has them net of idle: from each run's
    summary where the raw data is here, else as each unit's metrics recorded it (kept in the assets' study.json,
    so a rebuild from the assets says the same). None: the study has no CPU figures at all."""

    def net(unit: StudyUnit) -> bool:
        run = folder / unit.folder if unit.folder else None
        if _measure(unit) == "run" and run is not None and (run / "summary.json").exists():
            return read_summary(run).cpu_seconds_net is not None  # analysis/summary writes a map or nothing
        return bool(unit.metrics and unit.metrics.cpu_net_of_idle)

    flags = [net(u) for u in _units(data) if _measured(u) and _measure(u) in CPU_MEASURES]
    return all(flags) if flags else None


def cpu_kind(data: StudyRecord) -> str:
    units = data.units or []  # [] where the study holds none
    if data.cpu_net_of_idle is None and not any(_measure(u) in CPU_MEASURES for u in units):
        return "- **CPU figures**: none (each unit times one transaction and counts its bytes and lag)"
    if data.cpu_net_of_idle:
        kinds = {_measure(u) for u in units}
        whose = " and ".join(w for k, w in (("run", "each run's"), ("apply-capacity", "each drain's")) if k in kinds)
        return f"- **CPU figures**: net of idle ({whose} CPU with nothing but the heartbeat running, subtracted)"
    return ("- **CPU figures**: gross (measured before runs had an idle window: heartbeat, purge and flushing "
            "included, which inflates the per-write cost most at low rates)")


def verified(data: StudyRecord) -> bool:
    """A study whose write units were all checked to change their rows (or that writes nothing)."""
    if not any(scenarios_write(s) for s in data.scenarios or []):
        return True
    units = [u for u in _units(data) if _measured(u)]
    return bool(units) and all(_changed_pct(u) is not None for u in _write_runs(units))


def _write_runs(units: list[StudyUnit]) -> list[StudyUnit]:
    """The run units but those of a scenario that does not write: a read run has no rows to check (cost-model-rates'
    reads); a unit that names no scenario is taken to write, as its study's scenarios do."""
    return [u for u in units if _measure(u) == "run" and (u.scenario is None or scenarios_write(u.scenario))]


def study_rows(data: StudyRecord) -> str:
    """Whether a study's writes changed their rows, per kind of unit: runs checked by decoding their binlog (or
    not, before that check existed), big transactions checked on the master afterwards (a unit is ok only when
    every row of its range holds the new value), apply-capacity drains not checked row by row."""
    units = [u for u in _units(data) if _measured(u)]
    writes = any(scenarios_write(s) for s in data.scenarios or [])
    runs = _write_runs(units)
    reads = [u for u in units if _measure(u) == "run" and u not in runs]
    if not writes or len(runs) + len(reads) == len(units):
        return rows_verified([_changed_pct(u) for u in runs], writes)
    parts = []
    if runs:
        got = [_changed_pct(u) for u in runs]
        parts.append(f"verified in {sum(g is not None for g in got)} of {len(runs)} run units")
    big = [u for u in units if u.measure == "big-transaction"]
    if big:
        parts.append(f"{sum(u.status == 'ok' for u in big)} of {len(big)} big transactions left every row "
                     "of their range holding the new value (checked on the master afterwards)")
    drains = [u for u in units if u.measure == "apply-capacity"]
    if drains:
        parts.append(f"{len(drains)} apply-capacity drains not checked row by row (their backlog is the "
                     "scenario's own updates, each writing fresh values)")
    return "- **Rows changed**: " + "; ".join(parts)


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


def server_versions(metas: list[RunMeta]) -> list[str]:
    """The MariaDB versions the runs recorded ('10.11.19' of '10.11.19-MariaDB-0+deb12u1-log'), in order."""
    found = [str(m.versions and m.versions.mariadb or "") for m in metas]
    return sorted({match.group(0) for v in found if (match := re.match(r"\d+(\.\d+)+", v))})


def server_text(metas: list[RunMeta]) -> str:
    """Which server the figures are of, from the runs' recorded versions, and that MySQL 8 is not among them."""
    versions = server_versions(metas)
    return (f"MariaDB {', '.join(versions)}" if versions else "MariaDB (its version not recorded)") + \
        " (MySQL 8 is not measured here, only its SQL spelling is unit-tested)"
