"""By hand, from the files alone (no replbench import): study semi-sync-clients' goodput per cell (median of its 3
repeats, each repeat's from study.json's units) beside what Little's law gives from the same runs (clients ÷ mean
write latency), and beside the commits/s the semi-sync check by hand measured on the same 20 ms link without the
app (../semi-sync-by-hand-20261127/concurrent.json, min–max over its rounds).

Usage, from this folder: python compare.py
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

study = json.loads(Path("study.json").read_text())
by_hand = json.loads(Path("../semi-sync-by-hand-20261127/concurrent.json").read_text())
hand: dict[tuple[str, int], list[float]] = {}
for run in by_hand:
    hand.setdefault((run["mode"], int(run["clients"])), []).append(float(run["commits_per_s"]))
cells: dict[tuple[str, int], list[tuple[float, float]]] = {}
for unit in study["units"]:
    knobs = {k: v for k, v in (part.split("=", 1) for part in unit["cell"].split(" "))}
    metrics = unit["metrics"]
    cells.setdefault((knobs["semi_sync"], int(knobs["clients"])), []).append(
        (metrics["goodput"], int(knobs["clients"]) / metrics["commit_mean_ms"] * 1000))
print("semi_sync     clients  goodput/s (median [min-max])  clients/mean latency  by hand, no app (commits/s)")
for (mode, clients), runs in sorted(cells.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    got = [g for g, _ in runs]
    little = statistics.median(v for _, v in runs)
    lo, hi = min(hand[(mode, clients)]), max(hand[(mode, clients)])
    print(f"{mode:<13} {clients:>7}  {statistics.median(got):7.1f} [{min(got):.1f}-{max(got):.1f}]"
          f"{little:22.1f}  {lo:.1f}-{hi:.1f}")
