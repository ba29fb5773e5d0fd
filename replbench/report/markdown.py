"""report.md: regenerated from one campaign's folder (the newest finished `report` campaign, or the one named), or
without one from everything in results/ — deterministic (the same results give the same file).

It opens with the answers (one sentence per question a DBA asks, each linked to its table), then one page for a
DBA: where the figures come from (campaign, commit, dates, machine, calibration range),
the cost sheet (per workload and setting: bytes, CPU, apply capacity, latency), large transactions, when the
replicas fall behind, what indexes cost, the findings (only what the one rule set of docs/metrics.md, "Comparing
two figures", supports), what was measured (the SQL each endpoint runs), on what, and how to read the columns. Then
every study (one table per scenario: per cell the median and min–max over repeats, the ratio to the baseline and
the rule's judgement; a bar chart), then the newest sweep of each scenario (table, plots; the per-step blocks in a
linked file of their own), then the paired sweeps, then a verdict on each of the reference write-up's
conclusions. Assets go to results/report-assets/<folder>/ (committed); a
committed asset folder whose raw data is not in results/ is left alone and listed, never deleted; with a campaign,
every other committed section is listed on an archive page. No absolute path is written.

This module only orders the sections; each lives in its own module (sources, assets, page, costsheet, archive,
studies, faults,
sweeps, reference, plots).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..analysis.studymetrics import REPLICA_MEANS
from ..analysis.verdicts import describe_max
from ..core.config import ROOT, Settings
from ..core.results import StudyRecord, read_sweep
from . import reference
from .archive import archive_page
from .assets import Writer
from .faults import fault_section
from .model import model_section
from .page import bookkeeping, one_page
from .sources import (
    Origin,
    fault_runs,
    find_studies,
    find_sweeps,
    newest_per_name,
    newest_per_scenario,
    sweep_key,
)
from .studies import APP_TIER_PAGE, APP_TIER_STUDIES, study_section
from .sweeps import comparison, shared_criteria, sweep_section

STUDIES_INTRO = ("Each study: its question, its cells, how it ran, its largest findings and its chart; its CPU is net "
                 "of idle and each of its write runs was verified to change its rows unless its section says "
                 "otherwise. Its data state, its command and every table are in its study.md.")


def generate(settings: Settings, output: Path | None = None, origin: Origin | None = None) -> tuple[Path, list[str]]:
    """Write report.md from the origin (default: everything in results/); returns its path and the committed asset
    folders it left alone."""
    results = settings.results
    output = output or ROOT / "report.md"
    origin = origin or Origin.loose(results)
    output.parent.mkdir(parents=True, exist_ok=True)
    writer = Writer(results, output, origin)
    if origin.campaign is not None:
        writer.keep_campaign()
    studies_text: list[str] = []
    studies: list[StudyRecord] = []
    app_text: list[str] = []
    links: dict[str, str] = {}  # each study's section, by name: the answers link to it
    for folder in sorted(newest_per_name(find_studies(origin)).values()):
        lines, data = study_section(folder, writer)
        assert data.name is not None  # experiments/study.py writes it (newest_per_name keys on it)
        if data.name.startswith(APP_TIER_STUDIES):
            app_text += lines
        else:
            studies_text += lines
            studies.append(data)
            links[data.name] = f"#study-{data.name}--{folder.name}"
    app_page = output.parent / APP_TIER_PAGE
    if app_text:
        app_page.write_text("\n".join(["# replbench: the app tier", "",
                                       "How the suite's own app should be run (its in-flight bound, workers and "
                                       "transport), measured by studies: not what a DBA reads first. Back to "
                                       f"[{output.name}]({output.name}).", "", *app_text]).rstrip("\n") + "\n")
    faults_text: list[str] = []
    for folder in sorted(fault_runs(origin).values()):
        faults_text += fault_section(folder, writer)
    sweeps = find_sweeps(origin)
    shown = newest_per_scenario(sweeps)
    sweeps_text: list[str] = []
    latest: dict[str, dict[str, Any]] = {}
    criteria = shared_criteria(list(shown.values()))
    for sweep_dir in sorted(shown.values()):
        lines, info = sweep_section(sweep_dir, writer, criteria)
        sweeps_text += lines
        if info["steps"]:
            latest[info["key"]] = info
    superseded = [p for p in sweeps if p not in shown.values()]
    for path in superseded:  # the one page states what the other sweeps of a scenario found
        sweep = read_sweep(path)
        if sweep_key(sweep) in latest:
            latest[sweep_key(sweep)].setdefault("earlier_max", []).append(describe_max(sweep))
    model_text = model_section(writer)
    kept = writer.kept()
    text = one_page(latest, studies, kept, writer, links)
    archive = archive_page(writer, output)
    text += ["## Studies: what each replication setting costs", "", STUDIES_INTRO, ""] + (
        studies_text or ["No study in results/ yet: `./run.sh study <name>`.", ""])
    if app_text:
        text += [f"The app tier's studies (in-flight bound, workers, transport) are on their own page: "
                 f"[{APP_TIER_PAGE}]({APP_TIER_PAGE}).", ""]
    text += model_text
    if faults_text:
        text += ["## Faults: before, during and after", ""] + faults_text
    text += ["## Sweeps: where each setup breaks", "", f"*replica*, in every table below: {REPLICA_MEANS}.",
             *([f"Every sweep's pass criteria: {criteria[0]}."] if criteria[0] and sweeps_text else []),
             *([f"The replicas kept up at a step when, from its own lag: {criteria[1]}.", ""] if criteria[1]
               and sweeps_text else [""] if criteria[0] and sweeps_text else [])] + (
        sweeps_text or ["No sweep found in results/: run `./run.sh sweep <scenario>` first.", ""])
    if superseded:
        text += ["Older sweeps (superseded by the newest of their scenario): "
                 + ", ".join(f"`{p.name}`" for p in superseded), ""]
    text += comparison(latest)
    text += reference.section(latest, studies)
    if archive:
        text += [f"Sections published before this campaign, or by other campaigns, are listed on "
                 f"[{archive}]({archive}), not mixed in" + (f"; the app tier's earlier studies are on "
                                                          f"[{APP_TIER_PAGE}]({APP_TIER_PAGE})"
                                                          if not app_text and app_page.exists() else "") + ".", ""]
    text += bookkeeping(kept, writer)
    output.write_text("\n".join(text).rstrip("\n") + "\n")
    return output, kept
