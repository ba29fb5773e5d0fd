"""By hand, from the files alone (no replbench import): the own-workload study's live units (study/, as the study
wrote it), each window's transaction count against sysbench's own (driver.txt), and per workload and cell the
figures of its repeats: the window's rate, the master's and the following replica's CPU-ms per transaction over the
window (net of idle), the held replica's serial apply rate and CPU per transaction, and its write-back after the
drain (pages and KB written per transaction, forced out). Then each cell against the baseline cell (ROW FULL,
150/s, 4G pool) of its workload: the ratio of medians, and whether the repeats' ranges are disjoint (2 repeats a
side: not tested, docs/metrics.md). Then each cell against the cell that differs from it in one setting only
(BASELINE), the same way.

Usage, from this folder: python summary.py
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

STUDY = Path("study")
# each cell against the one that differs from it in one setting only: the rate, the row image or the pool
BASELINE = {"ROW FULL, 300/s": "ROW FULL, 150/s", "ROW MINIMAL, 150/s": "ROW FULL, 150/s",
            "ROW MINIMAL, 300/s": "ROW FULL, 300/s", "ROW FULL, 150/s, 128M pool": "ROW FULL, 150/s"}
FIGURES = (  # (label, figure of a unit's apply.json)
    ("window trx/s", lambda a: a["live"]["mean_trx_per_s"]),
    ("master CPU-ms/trx", lambda a: role(a, "master")),
    ("following CPU-ms/trx", lambda a: role(a, "following")),
    ("drain trx/s", lambda a: held(a)["apply_rate_trx_per_s"]),
    ("drain CPU-ms/trx", lambda a: held(a)["cpu_ms_per_trx"]),
    ("drain CPU-ms/trx with write-back", lambda a: back(a, "cpu_ms_per_write_net")),
    ("drain pages flushed/trx with write-back", lambda a: back(a, "pages_flushed_per_write")),
    ("drain KB written/trx with write-back", lambda a: back(a, "kb_written_per_write")),
)


def role(apply: dict[str, Any], name: str) -> float:
    return max(c["cpu_ms_per_trx"] for c in apply["live"]["cpu"].values() if c["role"] == name)


def held(apply: dict[str, Any]) -> dict[str, Any]:
    (entry,) = apply["replicas"].values()
    return dict(entry)


def back(apply: dict[str, Any], figure: str) -> float:
    """The held replica's figure per transaction with its write-back (its dirty pages forced out after the drain)."""
    return float(held(apply)["writeback"][f"{figure}_with_writeback"])


def sysbench_trx(folder: Path) -> int:
    found = re.search(r"transactions:\s+(\d+)", (folder / "driver.txt").read_text())
    assert found is not None, folder
    return int(found.group(1))


def main() -> None:
    study = json.loads((STUDY / "study.json").read_text())
    cells = [c["name"] for c in study["cells"]]
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    print("unit: workload, cell, repeat, status | window transactions = sysbench's")
    for u in study["units"]:
        folder = STUDY / u["folder"]
        apply = json.loads((folder / "apply.json").read_text())
        counted, theirs = apply["live"]["transactions"], sysbench_trx(folder)
        print(f"  {u['scenario']}, {u['cell']}, {u['repeat']}, {u['status']} | {counted:,} "
              f"{'=' if counted == theirs else '≠'} {theirs:,}")
        if u["status"] == "ok":
            by.setdefault((u["scenario"], u["cell"]), []).append(apply)
    for workload in dict.fromkeys(s for s, _ in by):
        print(f"\n{workload}: median [min–max] of the repeats; against the cell that differs in one setting")
        for cell in cells:
            got = by.get((workload, cell), [])
            if not got:
                continue
            against = BASELINE.get(cell)
            base = by.get((workload, against), []) if against else []
            print(f"  {cell} ({len(got)} repeats){f', against {against}' if base else ''}")
            for label, figure in FIGURES:
                values = [figure(a) for a in got]
                line = f"    {label}: {statistics.median(values):,.4g} [{min(values):,.4g}–{max(values):,.4g}]"
                if base:
                    ours = [figure(a) for a in base]
                    ratio = statistics.median(values) / statistics.median(ours)
                    apart = max(values) < min(ours) or min(values) > max(ours)
                    line += (f"   ×{ratio:.2f}, ranges {'disjoint' if apart else 'overlap'} "
                             f"(n = {len(values)}/{len(ours)}, not tested)")
                print(line)


main()
