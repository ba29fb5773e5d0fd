"""By hand, from the files alone (no replbench import): the model's CPU price of each sysbench shape at 300/s (its
window's profile priced by the model alone, predict-<cell>-model.txt) divided by what its live window measured
(CPU-ms per transaction net of idle × the profile's rate: the master and replica2, which followed), for the three
shapes of ../own-fit-20261203 and the three of this folder; write_only measured again here as a control, by which a
ratio measured here is scaled to own-fit's host (its CPU per transaction there ÷ here, per role); per role,
the spread of those six ratios (their logarithms' mean and Student t prediction interval, one new shape's) and each
shape left out in turn against the other five's interval; and each new window's count and bytes against sysbench's
and its files'.

Usage, from this folder: python compare.py
"""

from __future__ import annotations

import json
import math
import re
import statistics
from pathlib import Path

from scipy.stats import t

FIGURE = r"([\d.]+) \[([\d.]+)–([\d.]+)\]"
OWN_FIT = Path("../own-fit-20261203")
SHAPES = ((OWN_FIT, "write_only"), (OWN_FIT, "update_non_index"), (OWN_FIT, "update_index"),
          (Path("."), "multi_update"), (Path("."), "insert"), (Path("."), "nopk_write_only"))
ROLES = (("master", "Master CPU", "master"), ("replica", "Replica CPU", "replica2"))


def price(folder: Path, cell: str, label: str) -> float:
    found = re.search(rf"^{label}: {FIGURE} cores", (folder / f"predict-{cell}-model.txt").read_text(), re.M)
    assert found is not None, (folder, cell, label)
    return float(found.group(1))


def profile(folder: Path, cell: str) -> dict:
    return json.loads((folder / f"profile-{cell}.json").read_text())


def measured(folder: Path, cell: str, node: str) -> tuple[float, float]:
    """The window's CPU-ms per transaction of the node and in cores at the profile's rate."""
    p = profile(folder, cell)
    rate = p["workload"]["transactions"] / p["span_s"]
    ms = json.loads((folder / f"live-{cell}" / "apply.json").read_text())["live"]["cpu"][node]["cpu_ms_per_trx"]
    return ms, ms * rate / 1000


def sysbench_trx(folder: Path, cell: str) -> int:
    found = re.search(r"transactions:\s+(\d+)", (folder / f"sysbench-{cell}.txt").read_text())
    assert found is not None
    return int(found.group(1))


def interval(ratios: list[float]) -> tuple[float, float, float]:
    """The geometric mean ratio and the ratio's 95 % prediction interval for one more shape."""
    logs = [math.log(r) for r in ratios]
    n, mean = len(logs), statistics.fmean(logs)
    half = t.ppf(0.975, n - 1) * statistics.stdev(logs) * math.sqrt(1 + 1 / n)
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


# this session's host against own-fit's: write_only's CPU per transaction there ÷ here, per role (the control)
SCALE = {role: measured(OWN_FIT, "write_only-300", node)[0] / measured(Path("."), "write_only-300", node)[0]
         for role, _, node in ROLES}
ratios: dict[str, list[float]] = {role: [] for role, _, _ in ROLES}
print("shape at 300/s     folder          role     CPU-ms/trx  measured cores  model's price  price / measured  "
      "scaled to own-fit's host")
for folder, shape in SHAPES:
    cell = f"{shape}-300"
    for role, label, node in ROLES:
        ms, cores = measured(folder, cell, node)
        ratio = price(folder, cell, label) / cores
        scaled = ratio if folder == OWN_FIT else ratio / SCALE[role]
        ratios[role].append(round(scaled, 3))
        print(f"{shape:<18} {folder.name or 'here':<15} {role:<8} {ms:10.4f}  {cores:14.4f}  "
              f"{price(folder, cell, label):13.4f}  {ratio:16.3f}  {scaled:23.3f}")
print()
print("control: write_only at 300/s measured again here (same model price per transaction); a ratio measured here is "
      "scaled by it to own-fit's host")
for role, _label, node in ROLES:
    then, now = measured(OWN_FIT, "write_only-300", node)[0], measured(Path("."), "write_only-300", node)[0]
    print(f"  {role:<8} CPU-ms/trx {then:.4f} in own-fit-20261203, {now:.4f} here ({now / then - 1:+.1%}): scale "
          f"{SCALE[role]:.3f}")
print()
print("per role over the six shapes (ratios to 3 decimals, scaled): model's price / measured, geometric mean [95 % "
      "prediction interval of a new shape's]; a new shape's measured CPU = the model's price × [1/high – 1/low]; "
      "width high/low")
for role, values in ratios.items():
    mean, low, high = interval(values)
    print(f"  {role:<8} {mean:.3f} [{low:.3f}–{high:.3f}]  measured within {1 / high:.3f}–{1 / low:.3f}× the "
          f"model's price; width {high / low:.2f}×")
print()
print("each shape left out: its ratio against the other five's prediction interval")
for role, values in ratios.items():
    for i, (_, shape) in enumerate(SHAPES):
        _mean, low, high = interval([v for j, v in enumerate(values) if j != i])
        held = "held" if low <= values[i] <= high else "NOT held"
        print(f"  {role:<8} {shape:<18} {values[i]:.3f} in [{low:.3f}–{high:.3f}]: {held}")
print()
print("window (here)             profile's transactions  sysbench's  profile's workload bytes  the files' bytes  "
      "(the rest: the files' headers)")
for cell in ("write_only-300", "multi_update-300", "insert-300", "nopk_write_only-300"):
    p = profile(Path("."), cell)
    files = sum(f["bytes"] for f in p["files"])
    print(f"{cell:<25} {p['workload']['transactions']:>22,}  {sysbench_trx(Path('.'), cell):>10,}  "
          f"{p['workload']['bytes']:>24,}  {files:>16,}  ({files - p['workload']['bytes']:,} B)")
