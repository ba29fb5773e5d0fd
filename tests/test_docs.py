"""The manual holds together (unit tier: no server, no process): README is a short front page with the two set-up
commands on its first screen, every relative link of README, report.md, its side pages and docs/ resolves in a fresh
clone (the file, and a markdown file's heading for an anchor), every flag of every command is documented,
docs/settings.md is what the code generates, and the layout section names every module."""

from __future__ import annotations

import dataclasses
import re
import urllib.parse
from pathlib import Path

from replbench.cli import docs
from replbench.core.config import ROOT, SETTING_LIST, Settings

README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_BYTES = 15_000
# folders git ignores (.gitignore): a link into one resolves here and not in a fresh clone
IGNORED = (".state", ".tools", ".venv", ".lab")
COMMITTED_RESULTS = ("results/readme-assets", "results/report-assets", "results/.gitkeep")

LINK_RE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE_RE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE_SPAN_RE = re.compile(r"(`+).+?\1", re.S)


def manual_pages() -> list[Path]:
    # report.md's side pages too (report-studies.md, report-model.md …): report.md's links lead into them
    return [README, ROOT / "report.md", *sorted(ROOT.glob("report-*.md")), *sorted(DOCS.rglob("*.md"))]


def without_code(text: str) -> str:
    """Markdown with its fenced blocks and code spans blanked: a link inside code is not a link."""
    text = FENCE_RE.sub("", text)
    return CODE_SPAN_RE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text lowercased, punctuation but - and _ dropped, spaces to -."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading anchors by its text
    parts = text.split("`")  # HTML tags count outside code spans only: `<rate>` in backticks is text
    text = "".join(part if i % 2 else re.sub(r"<[^>]+>", "", part) for i, part in enumerate(parts)).replace("*", "")
    text = "".join(ch for ch in text.strip().lower() if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a markdown file, duplicates numbered as GitHub numbers them (-1, -2, ...)."""
    seen: dict[str, int] = {}
    found = set()
    for line in FENCE_RE.sub("", path.read_text()).splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def relative_links(path: Path) -> list[str]:
    return [target for target in LINK_RE.findall(without_code(path.read_text()))
            if target and not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I)]


def broken(page: Path, target: str) -> str | None:
    """Why a relative link of `page` does not resolve in a fresh clone, or None."""
    raw, _, anchor = target.partition("#")
    where = (page.parent / urllib.parse.unquote(raw)).resolve() if raw else page
    try:
        inside = where.relative_to(ROOT).as_posix()
    except ValueError:
        return "points outside the repository"
    if inside.split("/")[0] in IGNORED or (inside.startswith("results/")
                                            and not inside.startswith(COMMITTED_RESULTS)):
        return "points into a folder git ignores"
    if not where.exists():
        return "no such file"
    if anchor and where.suffix == ".md" and urllib.parse.unquote(anchor) not in anchors(where):
        return f"no heading #{anchor} in {inside}"
    return None


def test_slugs_follow_githubs_rules() -> None:
    assert slug("Study `binlog-format` — `study-20261126-171314-binlog-format`") == \
        "study-binlog-format--study-20261126-171314-binlog-format"
    assert slug("What indexes cost the replicas under row-based replication") == \
        "what-indexes-cost-the-replicas-under-row-based-replication"
    assert slug("When do the replicas fall behind?") == "when-do-the-replicas-fall-behind"
    assert slug("`./run.sh <scenario> <rate>`") == "runsh-scenario-rate"


def test_every_relative_link_resolves() -> None:
    problems = []
    for page in manual_pages():
        for target in relative_links(page):
            why = broken(page, target)
            if why:
                problems.append(f"{page.relative_to(ROOT)}: ({target}) {why}")
    assert not problems, "\n".join(problems)


def test_docs_has_a_page_per_concept() -> None:
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    for page in ("README.md", "topology.md", "own-servers.md", "settings.md", "knobs.md", "scenarios.md",
                 "studies.md", "metrics.md", "cost-model.md", "app.md", "admission.md", "faults.md",
                 "development.md"):
        assert page in pages, page
    assert any(p.startswith("decisions/") for p in pages)
    index = (DOCS / "README.md").read_text()
    unlisted = sorted(p for p in pages if p != "README.md" and f"({p})" not in index)
    assert not unlisted, f"docs/README.md does not link {unlisted}"


def test_every_flag_of_every_command_is_documented() -> None:
    text = "\n".join(p.read_text() for p in sorted(DOCS.rglob("*.md")))
    missing = sorted({flag for _, _, parser in docs.command_parsers() for flag in docs.flags(parser)
                      if not re.search(re.escape(flag) + r"(?![\w-])", text)})
    assert not missing, f"flags no page of docs/ mentions: {missing}"


def test_settings_page_is_what_the_code_generates() -> None:
    assert docs.SETTINGS_PAGE.read_text() == docs.settings_markdown(), \
        "docs/settings.md is stale: run ./run.sh docs and commit the page"


def test_each_setting_is_one_row_and_the_settings_page_lists_it() -> None:
    assert [f.name for f in dataclasses.fields(Settings)] == [s.name for s in SETTING_LIST]
    page = docs.SETTINGS_PAGE.read_text()
    missing = [s.env for s in SETTING_LIST if f"`{s.env}`" not in page]
    assert not missing, f"docs/settings.md misses {missing}"
    assert Settings.from_env({}).heartbeat_ms == int(next(s.default for s in SETTING_LIST if s.name == "heartbeat_ms"))


def test_the_layout_section_names_every_module() -> None:
    text = (DOCS / "development.md").read_text()
    section = text[text.index("## How the code is laid out"):]
    section = section[:section.index("\n## ", 5)] if "\n## " in section[5:] else section
    packages = sorted(p.parent for p in (ROOT / "replbench").glob("*/__init__.py"))
    assert packages
    for package in packages:
        for path in sorted(package.glob("*.py")):
            if path.stem != "__init__":
                name = f"{package.name}/{path.stem}"
                assert name in section, f"docs/development.md's layout section misses {name}"


def test_readme_is_a_front_page() -> None:
    size = len(README.read_bytes())
    assert size <= README_MAX_BYTES, f"README.md is {size:,} bytes; the front page keeps to {README_MAX_BYTES:,}"
    first_screen = "\n".join(README.read_text().splitlines()[:40])
    for command in ("./run.sh read 3000", "./run.sh test"):
        assert command in first_screen, f"README's first 40 lines lack `{command}`"
    text = README.read_text()
    assert "./run.sh test --fast" in text
    for word in ("unit", "integration", "disruptive"):
        assert word in text


def test_development_page_keeps_the_tier_times_placeholder() -> None:
    lines = (DOCS / "development.md").read_text().splitlines()
    assert "<!-- tier-times -->" in lines


def test_the_manual_counts_four_secondary_indexes() -> None:
    """mysql/indexes.sql adds four secondary indexes to bench_idx; `write` changes columns of three of them."""
    assert (ROOT / "mysql" / "indexes.sql").read_text().count("ADD ") == 4
    stale = [p.relative_to(ROOT).as_posix() for p in (README, *DOCS.rglob("*.md"))
             if "three secondary indexes" in p.read_text()]
    assert not stale, stale
