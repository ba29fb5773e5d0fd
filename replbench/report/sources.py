"""Where the report's data comes from: one campaign's folder (results/campaign-<name>-<time>/, what `./run.sh
campaign` wrote at one commit) or, without one, everything in results/ ("loose"); in either, the newest sweep of
each scenario and setting, the newest run of each study, the fault runs, and, where the raw data is absent (a fresh
clone), the committed asset folders that keep what each section needs (a campaign's under
results/report-assets/campaign-<name>-<time>/, with its campaign.json).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..core.records import DONE
from ..core.results import (
    CampaignRecord,
    Latency,
    Record,
    RunMeta,
    RunSummary,
    SweepRecord,
    SweepStep,
    campaign_of,
    load,
    meta_of,
    read_campaign,
    read_study,
    read_summary,
    read_sweep,
    summary_of,
)
from ..core.stats import median
from ..topology.knobs import Knobs

ASSETS = "report-assets"
REPORT_CAMPAIGN = "report"  # the campaign `./run.sh report` shows when it names none (campaigns/report.toml)


class SourceError(Exception):
    """The campaign asked for is not there, or not finished."""


@dataclass(frozen=True)
class Origin:
    """One report's data: raw folders under `raw`, committed assets under `assets`, and the campaign's record."""

    raw: Path
    assets: Path
    campaign: CampaignRecord | None = None

    @classmethod
    def loose(cls, results: Path) -> Origin:
        return cls(results, results / ASSETS)


def campaigns(results: Path) -> dict[str, tuple[Path, CampaignRecord]]:
    """Every campaign folder (raw, else its committed assets) by folder name, with its campaign.json."""
    found: dict[str, tuple[Path, CampaignRecord]] = {}
    for path in [*(results / ASSETS).glob("campaign-*/campaign.json"), *results.glob("campaign-*/campaign.json")]:
        try:
            found[path.parent.name] = (path.parent, campaign_of(load(path)))
        except (OSError, ValueError):  # a record that does not validate too (pydantic's error is a ValueError)
            continue
    return found


def pick(results: Path, campaign: str | None = None, loose: bool = False) -> Origin:
    """The report's origin: the newest finished campaign of that name (or the folder given); without a name, the
    newest finished `report` campaign when there is one, else everything in results/ (loose)."""
    if loose:
        return Origin.loose(results)
    if campaign and Path(campaign).is_dir() and (Path(campaign) / "campaign.json").exists():
        folder = Path(campaign)
        data = read_campaign(folder)
        name = folder.name
    else:
        wanted = campaign or REPORT_CAMPAIGN
        done = sorted(((name, data) for name, (_, data) in campaigns(results).items()
                       if data.name == wanted and data.status == DONE), key=lambda found: found[0])
        if not done:
            if campaign is None:
                return Origin.loose(results)
            raise SourceError(f"no finished campaign {wanted!r} in {results.name}/ (run `./run.sh campaign "
                              f"{wanted}`, or --resume an unfinished one)")
        name, data = done[-1]
    if data.status != "done":
        raise SourceError(f"campaign {name} has not finished ({data.status}): `./run.sh campaign "
                          f"{data.name} --resume` first")
    return Origin(results / name, results / ASSETS / name, data)


def published_model(results: Path) -> tuple[Path, CampaignRecord] | None:
    """The cost model fitted by the campaign `./run.sh report` shows (its raw folder, else its committed assets):
    what `model predict` uses when the user has fitted none, with that campaign's record (name, commit)."""
    try:
        origin = pick(results)
    except SourceError:
        return None
    if origin.campaign is None:
        return None
    for base in (origin.raw, origin.assets):
        path = base / "model" / "model.json"
        if path.exists():
            return path, origin.campaign
    return None


def asset_sources(origin: Origin) -> list[Path]:
    """Committed asset folders whose raw data is not here (a fresh clone, another machine): the report
    rebuilds their sections from the files kept in them (a study's study.json; a sweep's sweep.json with each
    step's summary and block; a fault run's summary), so regenerating never drops what was published."""
    if not origin.assets.is_dir():
        return []
    return sorted(p for p in origin.assets.iterdir() if p.is_dir() and not (origin.raw / p.name).is_dir())


def find_sweeps(origin: Origin) -> list[Path]:
    raw = [p.parent for p in origin.raw.glob("*/sweep.json")]
    return sorted(raw + [p for p in asset_sources(origin) if (p / "sweep.json").exists()], key=lambda p: p.name)


def find_studies(origin: Origin) -> list[Path]:
    raw = [p.parent for p in origin.raw.glob("study-*/study.json")]
    return sorted(raw + [p for p in asset_sources(origin) if (p / "study.json").exists()], key=lambda p: p.name)


def sweep_key(sweep: SweepRecord) -> str:
    """A sweep's scenario, with the settings that differ from the reference: 'write', 'write [buffer_pool=128M]'."""
    reference = Knobs()
    given = sweep.knobs.given() if sweep.knobs is not None else {}
    changed = {k: v for k, v in given.items() if getattr(reference, k, v) != v}
    assert sweep.scenario is not None  # experiments/sweep.py writes it
    return sweep.scenario + (f" [{', '.join(f'{k}={v}' for k, v in changed.items())}]" if changed else "")


def newest_per_scenario(sweeps: list[Path]) -> dict[str, Path]:
    """The newest sweep of each scenario and setting (folders are time-stamped, so the last by name), which the
    report shows."""
    newest: dict[str, Path] = {}
    for sweep_dir in sorted(sweeps, key=lambda p: p.name):
        newest[sweep_key(read_sweep(sweep_dir))] = sweep_dir
    return newest


def newest_per_name(studies: list[Path]) -> dict[str, Path]:
    newest: dict[str, Path] = {}
    for folder in sorted(studies, key=lambda p: p.name):
        name = read_study(folder).name
        assert name is not None  # experiments/study.py writes it
        newest[name] = folder
    return newest


STEP_FILES = ("latency.png", "summary.json", "block.txt")  # what a sweep's assets keep of each step


class Repeat(Record):
    """One run of a sweep step as the report reads it: its summary and meta (empty where none was kept), and where
    its files are."""

    name: str
    files: dict[str, Path]
    summary: RunSummary
    meta: RunMeta


class ShownStep(SweepStep):
    """A step of sweep.json with the repeats whose summary is here."""

    repeats: list[Repeat]


def load_steps(sweep_dir: Path, sweep: SweepRecord) -> list[ShownStep]:
    """Each step with its repeats' summaries, meta and files: from the step folders, or, for a sweep rebuilt from
    its committed assets, from the `<step>-<file>` copies beside its sweep.json (meta then only where kept)."""
    steps = []
    assert sweep.steps is not None  # experiments/sweep.py writes them, and each step's folders
    for step in sweep.steps:
        repeats = []
        assert step.folders is not None
        for name in step.folders:
            folder = sweep_dir / name
            if folder.is_dir():
                files = {f: folder / f for f in STEP_FILES}
                meta_file = folder / "meta.json"
            else:
                files = {f: sweep_dir / f"{name}-{f}" for f in STEP_FILES}
                meta_file = sweep_dir / "meta.json"
            if files["summary.json"].exists():
                repeats.append(Repeat(name=name, files=files, summary=summary_of(load(files["summary.json"])),
                                      meta=meta_of(load(meta_file)) if meta_file.exists() else RunMeta()))
        if repeats:
            steps.append(ShownStep.model_validate({**step.model_dump(exclude_unset=True), "repeats": repeats}))
    return steps


Figure = Callable[[RunSummary], float | None]  # one figure of a run's summary, None where it has none


def latency_of(summary: RunSummary) -> Latency:
    """The run's client latency (an empty record where it has none: every figure None)."""
    return summary.latency_ms or Latency()


def step_median(step: ShownStep, figure: Figure) -> float | None:
    """A step's figure: the median of its repeats'."""
    return median([figure(r.summary) for r in step.repeats])


def fault_runs(origin: Origin) -> dict[str, Path]:
    """The newest top-level run of each scenario that carried out planned faults (raw, or its committed assets)."""
    newest: dict[str, Path] = {}
    paths = [*origin.raw.glob("*/summary.json"), *(p / "summary.json" for p in asset_sources(origin))]
    for path in sorted((p for p in paths if p.exists()), key=lambda p: p.parent.name):
        try:
            summary = read_summary(path.parent)
        except ValueError:  # a record that does not validate too (pydantic's error is a ValueError)
            continue
        if summary.planned_faults:
            # the scenario, never null; a summary too old to name it, by its folder
            newest[path.parent.name if summary.scenario is None else summary.scenario] = path.parent
    return newest


def split_kept(origin: Origin, kept: list[str]) -> tuple[list[str], list[str]]:
    """The kept asset folders as (raw data not here, superseded: raw data here but a newer run shown)."""
    newer = [name for name in kept if (origin.raw / name).is_dir()]
    return [name for name in kept if name not in newer], newer
