"""Run records as readers find them: a run killed from outside (its harness gone, meta.json still "running", no
summary.json) is marked "incomplete" by the next command that looks, with a summary.json saying so, so no reader
waits for it or takes it for a finished run."""

from __future__ import annotations

import json
import time
from pathlib import Path

from .processes import alive

INCOMPLETE = "incomplete"


def mark_incomplete(results: Path) -> list[Path]:
    """Every run folder under results whose harness died mid-run; returns the folders it marked."""
    marked = []
    for meta_path in list(results.glob("*/meta.json")) + list(results.glob("*/*/meta.json")) \
            + list(results.glob("*/*/*/meta.json")):
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError):
            continue
        if meta.get("status") != "running" or (meta.get("pid") and alive(int(meta["pid"]))):
            continue
        folder = meta_path.parent
        meta.update(status=INCOMPLETE, exit_code=1,
                    marked_incomplete_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        meta_path.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        summary = folder / "summary.json"
        if not summary.exists():
            summary.write_text(json.dumps({"status": INCOMPLETE, "scenario": meta.get("scenario"),
                                           "rate": meta.get("rate"), "folder": folder.name,
                                           "errors": ["the harness stopped before the run finished"]},
                                          indent=2, sort_keys=True) + "\n")
        marked.append(folder)
    return marked
