"""Where the report's data comes from: the newest sweep of each scenario and setting, the newest run of each
study, the fault runs, from results/ or, where the raw data is absent (a fresh clone), from the committed asset
folders that keep what each section needs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..core.stats import lookup, median
from ..topology.knobs import Knobs


def asset_sources(results: Path) -> list[Path]:
    """Committed asset folders whose raw data is not in results/ (a fresh clone, another machine): the report
    rebuilds their sections from the files kept in them (a study's study.json; a sweep's sweep.json with each
    step's summary and block; a fault run's summary), so regenerating never drops what was published."""
    root = results / "report-assets"
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not (results / p.name).is_dir())


def find_sweeps(results: Path) -> list[Path]:
    raw = [p.parent for p in results.glob("*/sweep.json")]
    return sorted(raw + [p for p in asset_sources(results) if (p / "sweep.json").exists()], key=lambda p: p.name)


def find_studies(results: Path) -> list[Path]:
    raw = [p.parent for p in results.glob("study-*/study.json")]
    return sorted(raw + [p for p in asset_sources(results) if (p / "study.json").exists()], key=lambda p: p.name)


def sweep_key(sweep: dict[str, Any]) -> str:
    """A sweep's scenario, with the settings that differ from the reference: 'write', 'write [buffer_pool=128M]'."""
    reference = Knobs()
    changed = {k: v for k, v in (sweep.get("knobs") or {}).items() if getattr(reference, k, v) != v}
    return sweep["scenario"] + (f" [{', '.join(f'{k}={v}' for k, v in changed.items())}]" if changed else "")


def newest_per_scenario(sweeps: list[Path]) -> dict[str, Path]:
    """The newest sweep of each scenario and setting (folders are time-stamped, so the last by name), which the
    report shows."""
    newest: dict[str, Path] = {}
    for sweep_dir in sorted(sweeps, key=lambda p: p.name):
        newest[sweep_key(json.loads((sweep_dir / "sweep.json").read_text()))] = sweep_dir
    return newest


def newest_per_name(studies: list[Path]) -> dict[str, Path]:
    newest: dict[str, Path] = {}
    for folder in sorted(studies, key=lambda p: p.name):
        newest[json.loads((folder / "study.json").read_text())["name"]] = folder
    return newest


STEP_FILES = ("latency.png", "summary.json", "block.txt")  # what a sweep's assets keep of each step


def load_steps(sweep_dir: Path, sweep: dict[str, Any]) -> list[dict[str, Any]]:
    """Each step with its repeats' summaries, meta and files: from the step folders, or, for a sweep rebuilt from
    its committed assets, from the `<step>-<file>` copies beside its sweep.json (meta then only where kept)."""
    steps = []
    for step in sweep["steps"]:
        repeats = []
        for name in step["folders"]:
            folder = sweep_dir / name
            if folder.is_dir():
                files = {f: folder / f for f in STEP_FILES}
                meta_file = folder / "meta.json"
            else:
                files = {f: sweep_dir / f"{name}-{f}" for f in STEP_FILES}
                meta_file = sweep_dir / "meta.json"
            if files["summary.json"].exists():
                repeats.append({"name": name, "files": files,
                                "summary": json.loads(files["summary.json"].read_text()),
                                "meta": json.loads(meta_file.read_text()) if meta_file.exists() else {}})
        if repeats:
            steps.append({**step, "repeats": repeats})
    return steps


def step_median(step: dict[str, Any], path: tuple[str, ...]) -> float | None:
    return median([lookup(r["summary"], path) for r in step["repeats"]])


def fault_runs(results: Path) -> dict[str, Path]:
    """The newest top-level run of each scenario that carried out planned faults (raw, or its committed assets)."""
    newest: dict[str, Path] = {}
    paths = [*results.glob("*/summary.json"), *(p / "summary.json" for p in asset_sources(results))]
    for path in sorted((p for p in paths if p.exists()), key=lambda p: p.parent.name):
        try:
            summary = json.loads(path.read_text())
        except ValueError:
            continue
        if summary.get("planned_faults"):
            newest[summary.get("scenario", path.parent.name)] = path.parent
    return newest


def split_kept(results: Path, kept: list[str]) -> tuple[list[str], list[str]]:
    """The kept asset folders as (raw data not in results/, superseded: raw data here but a newer run shown)."""
    newer = [name for name in kept if (results / name).is_dir()]
    return [name for name in kept if name not in newer], newer
