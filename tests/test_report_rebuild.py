"""report.md is rebuilt from the committed assets byte for byte (a fresh clone has no raw results): what the
report's code renders today is what the repository shows; it is a page a DBA reads (issue 73): at most 45 KB, its
sections in the DBA's order, every study's section on report-studies.md beside it. Unit tier: no server, no process
(about 12 s).

A committed report.md rendered before the answers opened it (issue 49) is held to its structure instead (every
section of the committed file, in its order, with the answers first) while every data asset, and the side pages,
still rebuild byte for byte; one that opens with the answers (the report campaign at 4562afe on) byte for byte."""

from __future__ import annotations

import filecmp
import re
import shutil
from pathlib import Path

import pytest

from replbench.analysis.studymetrics import REPLICA_MEANS
from replbench.core.config import ROOT
from replbench.report import ownworkload, reference
from replbench.report.answers import the_answers
from replbench.report.studies import STUDIES_PAGE
from replbench.report.sweeps import SWEEPS_PAGE

from .conftest import run_main
from .test_docs import anchors

pytestmark = pytest.mark.unit

ANSWERS = the_answers({}, [], {})[0]  # the heading that opens a report.md rendered by this code


PAGES = ("report-archive.md", "report-app-tier.md", "report-model.md", STUDIES_PAGE, SWEEPS_PAGE)  # beside report.md
MAX_BYTES = 45_000  # report.md's cap (issue 73: a page a DBA reads); the studies and the model's fit on their pages
# the DBA's sections first, in this order (issue 73; docs/studies.md, "Report and compare"); the rest after them
DBA_ORDER = (ANSWERS, f"## {ownworkload.HEADING}", "## How to read the columns",
             "## What each replication setting costs", "## When do the replicas fall behind?",
             f"## {reference.HEADING}")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """report.md and its assets rendered from the committed assets alone, as a fresh clone has them."""
    tmp_path = tmp_path_factory.mktemp("rebuild")
    results = tmp_path / "results"
    shutil.copytree(ROOT / "results" / "report-assets", results / "report-assets")
    for page in PAGES:
        shutil.copy(ROOT / page, tmp_path / page)
    code, out, err = run_main(["report", "--output", str(tmp_path / "report.md")],
                              {"REPLBENCH_RESULTS": str(results), "REPLBENCH_STATE": str(tmp_path / "state")})
    assert code == 0, out + err
    return tmp_path


def test_report_md_and_its_assets_rebuild_byte_for_byte_from_the_committed_assets(rendered: Path) -> None:
    tmp_path, results, pages = rendered, rendered / "results", PAGES
    committed = (ROOT / "report.md").read_text()
    strict = ANSWERS in committed.splitlines()
    for page in pages:
        assert (tmp_path / page).read_text() == (ROOT / page).read_text(), page
    rebuilt = (tmp_path / "report.md").read_text()
    if strict:
        assert rebuilt == committed
    else:
        assert _headings(rebuilt)[:2] == ["# replbench report", ANSWERS]
        assert [h for h in _headings(rebuilt) if h != ANSWERS] == _headings(committed)
    compared = filecmp.dircmp(ROOT / "results" / "report-assets", results / "report-assets")
    differ = _differences(compared)
    if not strict:  # the study pages hold to their structure until the campaign rewrites them
        for name in [d for d in differ if d.endswith(".md")]:
            left, right = Path(name), results / "report-assets" / Path(name).relative_to(ROOT / "results" /
                                                                                      "report-assets")
            assert right.exists() and _headings(right.read_text()) == _headings(left.read_text()), name
            differ.remove(name)
    assert not differ, differ


def _headings(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"#{1,4} ", line)]


def _differences(cmp: filecmp.dircmp) -> list[str]:
    """Files that differ or exist on one side only, through every subfolder (paths on the committed side)."""
    found = [f"{cmp.left}/{name}" for name in [*cmp.diff_files, *cmp.left_only, *cmp.right_only]]
    for sub in cmp.subdirs.values():
        found += _differences(sub)
    return found


def test_report_md_stays_under_45_kb_and_says_what_replica_means_above_each_table(rendered: Path) -> None:
    text = (rendered / "report.md").read_text()
    assert len(text.encode()) <= MAX_BYTES, len(text.encode())
    assert text.index("## The answers") < text.index("|")  # the answers first, before any table
    # every table with a replica column, outside the cost model's section (report/model.py), has what "replica"
    # means stated between its section's heading and itself, unless its columns name the replica ("slowest
    # replica", "each replica", "worse replica") or a role ("served by")
    section, said, in_table, tables = "", "", False, 0
    for line in text.splitlines():
        if line.startswith("## "):
            section, said = line, ""
        if not line.startswith("|"):
            said, in_table = said + line, False
        elif not in_table:  # a table's header row
            in_table, tables = True, tables + 1
            named = any(w in line.lower() for w in ("slowest replica", "each replica", "worse replica", "served by"))
            assert "replica" not in line or named or REPLICA_MEANS in said or "cost model" in section, \
                (section, line[:120])
    assert tables >= 10


def test_report_md_puts_the_dbas_sections_first_and_the_studies_on_their_own_page(rendered: Path) -> None:
    text = (rendered / "report.md").read_text()
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections[:len(DBA_ORDER)] == list(DBA_ORDER), sections
    for later in ("## Findings", "## Studies", "## What was measured", "## On what"):
        assert later in sections[len(DBA_ORDER):], later
    # each study: a line in report.md (its question and headline) linked to its section on the side page, which
    # report.md no longer holds
    page = (rendered / STUDIES_PAGE).read_text()
    studies = re.findall(r"^## Study `([^`]+)` — `([^`]+)`$", page, re.M)
    assert len(studies) >= 10 and "## Study " not in text
    listed = re.findall(rf"^- \[`([^`]+)`\]\({re.escape(STUDIES_PAGE)}#study-[^)]+\): \S", text, re.M)
    assert listed == [name for name, _ in studies]
    # each sweep: a line in report.md (its maximum, how far the replicas kept up) linked to its section on its page
    sweeps = re.findall(r"^## Sweep `([^`]+)` — `([^`]+)`$", (rendered / SWEEPS_PAGE).read_text(), re.M)
    assert len(sweeps) >= 3 and "Sweep `" not in text
    assert re.findall(rf"^- \[`([^`]+)`\]\({re.escape(SWEEPS_PAGE)}#sweep-[^)]+\): \*\*max sustainable rate", text,
                      re.M) == [key for key, _ in sweeps]
    # every anchor report.md links resolves: its own headings, its side pages' (as rendered), the manual's
    for target in re.findall(r"\]\(([^)]*#[^)]+)\)", text):
        where, _, anchor = target.partition("#")
        linked = rendered / (where or "report.md")
        assert anchor in anchors(linked if linked.exists() else ROOT / where), target

