"""By hand, from the files alone (no replbench import): for each sysbench shape, `model predict --profile
--own-runs` fitted on the live window at one rate and priced at the other rate's profile, against what the other
rate's window measured (CPU-ms per transaction, net of idle, times the profile's rate); the model's own price
(no --own-runs) beside it; and the command's CPU reading against /proc read by hand over sysbench's run
(by-hand.txt: ticks of 10 ms, gross, per transaction sysbench reported). Then (drive-more.sh) the model's price
against the measured for three shapes at 300/s (the third, oltp_update_index, priced by the model alone), and
ROW MINIMAL: the bytes per transaction its window wrote (measured) against what the FULL window's profile estimated
for MINIMAL, its CPU per transaction beside FULL's, and its sheet priced with its own window.

Usage, from this folder: python compare.py
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

FIGURE = r"([\d.]+) \[([\d.]+)–([\d.]+)\]"


def band(text: str, label: str) -> tuple[float, float, float]:
    found = re.search(rf"^{label}: {FIGURE} cores", text, re.M)
    assert found is not None, label
    value, low, high = (float(g) for g in found.groups())
    return value, low, high


def live(cell: str) -> dict[str, Any]:
    return json.loads(Path(f"live-{cell}/apply.json").read_text())["live"]


def sysbench_trx(cell: str) -> int:
    found = re.search(r"transactions:\s+(\d+)", Path(f"sysbench-{cell}.txt").read_text())
    assert found is not None
    return int(found.group(1))


def profile_rate(cell: str) -> float:
    p = json.loads(Path(f"profile-{cell}.json").read_text())
    return p["workload"]["transactions"] / p["span_s"]


print("shape             at   fit  role     predicted cores [95 %]     measured  error   inside  | model's price "
      "[95 %]        error   inside")
for shape in ("write_only", "update_non_index"):
    for fit, at in ((150, 300), (300, 150)):
        own = Path(f"predict-{shape}-{at}-from-{fit}.txt").read_text()
        model = Path(f"predict-{shape}-{at}-model.txt").read_text()
        cpu = live(f"{shape}-{at}")["cpu"]
        rate = profile_rate(f"{shape}-{at}")
        for role, label, node in (("master", "Master CPU", "master"), ("replica", "Replica CPU", "replica2")):
            measured = cpu[node]["cpu_ms_per_trx"] * rate / 1000
            p, m = band(own, label), band(model, label)
            print(f"{shape:<16} {at:>4} {fit:>5}  {role:<8} {p[0]:.4f} [{p[1]:.4f}–{p[2]:.4f}]  {measured:8.4f} "
                  f"{p[0] / measured - 1:+6.1%}  {'yes' if p[1] <= measured <= p[2] else 'no':<6} | "
                  f"{m[0]:.4f} [{m[1]:.4f}–{m[2]:.4f}]  {m[0] / measured - 1:+6.1%}  "
                  f"{'yes' if m[1] <= measured <= m[2] else 'no'}")
print()
print("window                 node      CPU-ms/trx net [minutes' 95 %]  gross (command)  gross (by hand)  by hand / "
      "command")
hand = {line.split()[0]: line.split() for line in Path("by-hand.txt").read_text().splitlines() if line.strip()}
for cell in ("write_only-300", "update_non_index-150", "write_only-150", "update_non_index-300"):
    w = live(cell)
    fields = hand[cell]
    ticks = {"master": int(fields[2]), "replica2": int(fields[4])}
    trx = sysbench_trx(cell)
    for node in ("master", "replica2"):
        c = w["cpu"][node]
        gross = 1000 * c["cpu_s"] / c["transactions"]
        by_hand = 1000 * ticks[node] / 100 / trx
        low, high = c["ci95_ms_per_trx"]
        print(f"{cell:<22} {node:<9} {c['cpu_ms_per_trx']:.4f} [{low:.4f}–{high:.4f}]     {gross:.4f}           "
              f"{by_hand:.4f}           {by_hand / gross - 1:+.1%}")
    print(f"{cell:<22} window {w['transactions']:,} trx at {w['mean_trx_per_s']:.1f}/s, sysbench {trx:,}; idle "
          f"sample saw {w['idle_trx']} transactions")

print()
print("shape at 300/s     role     model's price / measured (the model prices the table as bench_idx)")
for shape in ("write_only", "update_non_index", "update_index"):
    model = Path(f"predict-{shape}-300-model.txt").read_text()
    cpu = live(f"{shape}-300")["cpu"]
    rate = profile_rate(f"{shape}-300")
    for role, label, node in (("master", "Master CPU", "master"), ("replica", "Replica CPU", "replica2")):
        measured = cpu[node]["cpu_ms_per_trx"] * rate / 1000
        print(f"{shape:<18} {role:<8} {band(model, label)[0] / measured:.2f}")
print()
print("ROW MINIMAL at 300/s   bytes/trx measured (MINIMAL window)  estimated (FULL window's profile)  estimate / "
      "measured   CPU-ms/trx master, replica2: MINIMAL | FULL")
for shape in ("write_only", "update_non_index"):
    minimal = json.loads(Path(f"profile-{shape}-300-minimal.json").read_text())["workload"]
    full = json.loads(Path(f"profile-{shape}-300.json").read_text())["workload"]
    measured = minimal["settings"]["ROW-MINIMAL"]["bytes"] / minimal["transactions"]
    assert minimal["settings"]["ROW-MINIMAL"]["basis"] == "exact"
    estimated = full["settings"]["ROW-MINIMAL"]["bytes"] / full["transactions"]
    m, f = live(f"{shape}-300-minimal")["cpu"], live(f"{shape}-300")["cpu"]
    print(f"{shape:<22} {measured:10,.1f}  {estimated:34,.1f}  {estimated / measured - 1:+17.1%}   "
          f"{m['master']['cpu_ms_per_trx']:.3f}, {m['replica2']['cpu_ms_per_trx']:.3f} | "
          f"{f['master']['cpu_ms_per_trx']:.3f}, {f['replica2']['cpu_ms_per_trx']:.3f}")
print()
print("window                        profile's transactions  sysbench's  profile's workload bytes  the files' bytes  "
      "(the rest: the files' headers)")
for cell in ("write_only-300", "update_non_index-150", "write_only-150", "update_non_index-300", "update_index-300",
             "write_only-300-minimal", "update_non_index-300-minimal"):
    p = json.loads(Path(f"profile-{cell}.json").read_text())
    files = sum(f["bytes"] for f in p["files"])
    print(f"{cell:<29} {p['workload']['transactions']:>22,}  {sysbench_trx(cell):>10,}  {p['workload']['bytes']:>24,}  "
          f"{files:>16,}  ({files - p['workload']['bytes']:,} B)")
