"""report.md: regenerated from one campaign's folder (the newest finished `report` campaign, or the one named), or
without one from everything in results/ — deterministic (the same results give the same file).

A page a DBA reads (issue 73; docs/studies.md, "Report and compare"), in this order: the answers (one sentence per
question, each linked to its table) and where the figures come from (campaign, commit, dates, machine,
calibration range); "Your own workload" (the commands that measure or price one's own, what they need, how far they
held on a workload the suite did not write); the definitions (how to read the columns, the terms the answers use);
the cost sheet (per workload and setting: bytes, CPU, apply capacity, latency) and the large transactions; when the
replicas fall behind; a verdict on each of the reference write-up's conclusions. Then the rest: what indexes cost
the replicas, the findings (only what the one rule set of docs/metrics.md, "Comparing two figures", supports), one
line per study (its question and headline, linked to its section on report-studies.md), the cost model (its whole
fit and validation on report-model.md), the fault runs, the newest sweep of each scenario (its verdicts and charts;
its step table and blocks on a linked page), the paired sweeps, what was measured (the SQL each endpoint runs), on
what. Assets go to results/report-assets/<folder>/ (committed); a committed asset folder whose raw data is not in
results/ is left alone and listed, never deleted; with a campaign, every other committed section is listed on an
archive page. No absolute path is written.

This module only orders the sections; each lives in its own module (sources, assets, page, answers, ownworkload,
costsheet, archive, studies, model, faults, sweeps, reference, plots).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..analysis.verdicts import describe_max
from ..core.config import ROOT, Settings
from ..core.results import StudyRecord, read_sweep
from . import ownworkload, reference, soaks
from .answers import falling_behind
from .archive import archive_page
from .assets import Writer
from .costsheet import big_transactions, cost_sheet
from .faults import fault_section
from .model import model_section
from .page import bookkeeping, definitions, findings, measured, metas_of, on_what, opening
from .sources import (
    Origin,
    fault_runs,
    find_studies,
    find_sweeps,
    newest_per_name,
    newest_per_scenario,
    sweep_key,
)
from .studies import APP_TIER_PAGE, APP_TIER_STUDIES, STUDIES_PAGE, index_cost, study_line, study_section
from .sweeps import SWEEPS_PAGE, ShownSweep, comparison, shared_criteria, sweep_line, sweep_section

STUDIES_INTRO = ("Each study: its question, its cells, how it ran, its largest findings and its chart; its CPU is net "
                 "of idle and each of its write runs was verified to change its rows unless its section says "
                 "otherwise. Its data state, its command and every table are in its study.md.")


def _side_pages(output: Path, app_text: list[str], studies_text: list[str]) -> Path:
    """The app tier's studies (when any) and every other study's section on their pages beside report.md; returns
    the app tier's page's path."""
    app_page = output.parent / APP_TIER_PAGE
    if app_text:
        app_page.write_text("\n".join(["# replbench: the app tier", "",
                                       "How the suite's own app should be run (its in-flight bound, workers and "
                                       "transport), measured by studies: not what a DBA reads first. Back to "
                                       f"[{output.name}]({output.name}).", "", *app_text]).rstrip("\n") + "\n")
    studies_page = output.parent / STUDIES_PAGE
    studies_page.write_text("\n".join(["# replbench: the studies", "",
                                       f"The studies behind [{output.name}]({output.name}), a section each, in "
                                       "the order it lists them. "
                                       + STUDIES_INTRO, "",
                                       *(studies_text or ["No study in results/ yet: `./run.sh study <name>`."])
                                       ]).rstrip("\n") + "\n")
    return app_page


def _sweeps(output: Path, sweeps_text: list[str], shown: list[ShownSweep], criteria: tuple[str, str],
            superseded: list[str]) -> list[str]:
    """report.md's sweeps: a line each (its maximum, how far the replicas kept up), its section (settings, charts,
    rows changed) written on SWEEPS_PAGE beside it and its steps on its blocks.md page (issue 73: report.md a page a
    DBA reads); *replica* is the definitions'."""
    said = [*([f"Every sweep's pass criteria: {criteria[0]}."] if criteria[0] and sweeps_text else []),
            *([f"The replicas kept up at a step when, from its own lag: {criteria[1]}.", ""] if criteria[1]
              and sweeps_text else [""] if criteria[0] and sweeps_text else [])]
    older = ["Older sweeps (superseded by the newest of their scenario): "
             + ", ".join(f"`{name}`" for name in superseded), ""] if superseded else []
    (output.parent / SWEEPS_PAGE).write_text("\n".join(
        ["# replbench: the sweeps", "", f"The newest sweep of each scenario behind [{output.name}]({output.name}), "
         "a section each: its settings, maximum, how far the replicas kept up, whether its rows changed, its charts, "
         "and a link to every step's table and blocks.", "", *said, *sweeps_text, *older]).rstrip("\n") + "\n")
    return ["## Sweeps: where each setup breaks", "", *said] + (
        [f"Each sweep's section (settings, charts, every step) is on [{SWEEPS_PAGE}]({SWEEPS_PAGE}).", "",
         *(sweep_line(s) for s in shown), ""] if sweeps_text else
        ["No sweep found in results/: run `./run.sh sweep <scenario>` first.", ""])


def generate(settings: Settings, output: Path | None = None, origin: Origin | None = None) -> tuple[Path, list[str]]:
    """Write report.md from the origin (default: everything in results/), its studies' sections on STUDIES_PAGE
    beside it; returns its path and the committed asset folders it left alone."""
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
    links: dict[str, str] = {}  # each study's section on its page, by name: the answers and the study lines link it
    for folder in sorted(newest_per_name(find_studies(origin)).values()):
        lines, data = study_section(folder, writer)
        assert data.name is not None  # experiments/study.py writes it (newest_per_name keys on it)
        if data.name.startswith(APP_TIER_STUDIES):
            app_text += lines
        else:
            studies_text += lines
            studies.append(data)
            links[data.name] = f"{STUDIES_PAGE}#study-{data.name}--{folder.name}"
    app_page = _side_pages(output, app_text, studies_text)
    faults_text: list[str] = []
    for folder in sorted(fault_runs(origin).values()):
        faults_text += fault_section(folder, writer)
    sweeps = find_sweeps(origin)
    shown = newest_per_scenario(sweeps)
    sweeps_text: list[str] = []
    latest: dict[str, ShownSweep] = {}
    order: list[str] = []  # the sweeps' keys as their sections follow each other
    criteria = shared_criteria(list(shown.values()))
    for sweep_dir in sorted(shown.values()):
        lines, info = sweep_section(sweep_dir, writer, criteria)
        sweeps_text += lines
        order.append(info.key)
        if info.steps:
            latest[info.key] = info
    superseded = [p for p in sweeps if p not in shown.values()]
    for path in superseded:  # the one page states what the other sweeps of a scenario found
        sweep = read_sweep(path)
        if (shown_of := latest.get(sweep_key(sweep))) is not None:
            latest[shown_of.key] = replace(shown_of, earlier_max=(*shown_of.earlier_max, describe_max(sweep)))
    model_text = model_section(writer)
    kept = writer.kept()
    archive = archive_page(writer, output)
    # the DBA's page first (issue 73): the answers, their own workload, the definitions, the cost sheet, when the
    # replicas fall behind, the reference write-up's conclusions; then the rest
    text = [*opening(latest, studies, writer, links), *ownworkload.section(), *definitions(), *cost_sheet(studies),
            *big_transactions(studies), *soaks.section(studies=studies), *falling_behind(studies, latest, writer),
            *reference.section(latest, studies),
            *index_cost(studies), *findings(latest, studies)]
    text += ["## Studies", "", f"Each study's question and headline; its section (cells, how it ran, findings, "
             f"chart) on [{STUDIES_PAGE}]({STUDIES_PAGE}).", ""]
    text += [study_line(data, links[data.name or ""]) for data in studies] or [
        "No study in results/ yet: `./run.sh study <name>`."]
    text += [""]
    if app_text:
        text += [f"The app tier's studies (in-flight bound, workers, transport) are on their own page: "
                 f"[{APP_TIER_PAGE}]({APP_TIER_PAGE}).", ""]
    text += model_text
    if faults_text:
        text += ["## Faults: before, during and after", ""] + faults_text
    text += _sweeps(output, sweeps_text, [latest[k] for k in order if k in latest], criteria,
                    [p.name for p in superseded])
    text += comparison(latest)
    text += [*measured(), *on_what(metas_of(latest, studies))]
    if archive:
        text += [f"Sections published before this campaign, or by other campaigns, are listed on "
                 f"[{archive}]({archive}), not mixed in" + (f"; the app tier's earlier studies are on "
                                                          f"[{APP_TIER_PAGE}]({APP_TIER_PAGE})"
                                                          if not app_text and app_page.exists() else "") + ".", ""]
    text += bookkeeping(kept, writer)
    output.write_text("\n".join(text).rstrip("\n") + "\n")
    return output, kept
