"""The archive page of a report made from one campaign: every other committed section (loose runs, studies and
sweeps from before the campaign, other campaigns), listed with a link, never mixed into report.md."""

from __future__ import annotations

from pathlib import Path

from ..core.results import read_campaign
from .assets import Writer

ARCHIVE_PAGE = "report-archive.md"
MAIN_FILE = (("study.md", "study"), ("study.json", "study"), ("blocks.md", "sweep"), ("sweep.json", "sweep"),
             ("block.txt", "run"), ("summary.json", "run"), ("campaign.json", "campaign"))


def _entry(folder: Path, writer: Writer) -> str:
    for name, kind in MAIN_FILE:
        if (folder / name).exists():
            return f"- {kind} [`{folder.name}`]({writer.rel(folder / name)})"
    return f"- [`{folder.name}`]({writer.rel(folder)})"


def archive_page(writer: Writer, output: Path) -> str | None:
    """Write the archive page beside the report; returns its file name, or None when the report is not from a
    campaign or nothing else is committed."""
    if writer.origin.campaign is None:
        return None
    top = writer.results / "report-assets"
    others = sorted(p for p in top.iterdir() if p.is_dir() and p.resolve() != writer.root.resolve()) \
        if top.is_dir() else []
    if not others:
        return None
    campaigns = [p for p in others if (p / "campaign.json").exists()]
    loose = [p for p in others if p not in campaigns]
    lines = ["# replbench: the archive", "",
             f"Sections published before, or by other campaigns; [{output.name}]({output.name}) shows one campaign "
             "only, and none of these is mixed into it. Each was measured at its own commit and day.", ""]
    if campaigns:
        lines += ["## Other campaigns", ""]
        for p in campaigns:
            data = read_campaign(p)
            lines.append(f"- [`{p.name}`]({writer.rel(p / 'campaign.json')}): campaign {data.name} at "
                         f"{data.commit}, {data.status}")
        lines.append("")
    if loose:
        lines += ["## Loose sections (not from a campaign)", "", *(_entry(p, writer) for p in loose), ""]
    (output.parent / ARCHIVE_PAGE).write_text("\n".join(lines).rstrip("\n") + "\n")
    return ARCHIVE_PAGE
