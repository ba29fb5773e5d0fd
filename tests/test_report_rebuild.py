"""report.md is rebuilt from the committed assets byte for byte (a fresh clone has no raw results): what the
report's code renders today is what the repository shows. Unit tier: no server, no process (about 12 s)."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

from replbench.core.config import ROOT

from .conftest import run_main


def test_report_md_and_its_assets_rebuild_byte_for_byte_from_the_committed_assets(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(ROOT / "results" / "report-assets", results / "report-assets")
    pages = ("report-archive.md", "report-app-tier.md")  # beside report.md, which links them
    for page in pages:
        shutil.copy(ROOT / page, tmp_path / page)
    code, out, err = run_main(["report", "--output", str(tmp_path / "report.md")],
                              {"REPLBENCH_RESULTS": str(results), "REPLBENCH_STATE": str(tmp_path / "state")})
    assert code == 0, out + err
    for page in ("report.md", *pages):
        assert (tmp_path / page).read_text() == (ROOT / page).read_text(), page
    compared = filecmp.dircmp(ROOT / "results" / "report-assets", results / "report-assets")
    assert not _differences(compared), _differences(compared)


def _differences(cmp: filecmp.dircmp) -> list[str]:
    """Files that differ or exist on one side only, through every subfolder."""
    found = [*cmp.diff_files, *cmp.left_only, *cmp.right_only]
    for sub in cmp.subdirs.values():
        found += [f"{sub.left}/{name}" for name in _differences(sub)]
    return found
