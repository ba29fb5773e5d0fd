"""By hand, from the files alone (no replbench import): each replica's apply rate in the eight interleaved drains
(pinned: the replica alone on core 1, the master and the app on core 0; unpinned: every process on both cores),
the busy share of its core(s) (CPU net of idle over the drain), and the medians per condition beside what
`model predict --cores replica=1` and `replica=2` said for the same single-row updates (predict-*.txt).

Usage, from this folder: python compare.py
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

rates: dict[str, list[float]] = {"pinned": [], "unpinned": []}
print("drain  condition  replica   trx/s    CPU-ms/trx  busy (cores)")
for path in sorted(Path(".").glob("*-apply.json"), key=lambda p: int(p.name.split("-")[0])):
    condition = path.name.split("-")[1]
    data = json.loads(path.read_text())
    for name, r in data["replicas"].items():
        busy = r["cpu_ms_per_trx"] * r["transactions"] / 1000 / r["seconds"]
        rates[condition].append(r["apply_rate_trx_per_s"])
        print(f"{path.name.split('-')[0]:>5}  {condition:<9}  {name:<8} {r['apply_rate_trx_per_s']:8,.0f}  "
              f"{r['cpu_ms_per_trx']:10.3f}  {busy:.2f}")
for condition, got in rates.items():
    print(f"{condition}: median {statistics.median(got):,.0f} trx/s [{min(got):,.0f}-{max(got):,.0f}], n = {len(got)}")
for cores, condition in (("1-core", "pinned"), ("2-cores", "unpinned")):
    text = Path(f"predict-{cores}.txt").read_text()
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("each replica"))
    sustains = re.search(r"sustains ([\d,]+) \[([\d,]+)–([\d,]+)\]", line)
    assert sustains is not None
    value = float(sustains.group(1).replace(",", ""))
    measured = statistics.median(rates[condition])
    print(f"predict --cores replica={cores[0]}: sustains {sustains.group(1)} [{sustains.group(2)}–{sustains.group(3)}]"
          f" trx/s; measured {condition} median {measured:,.0f}: predicted / measured {value / measured:.2f}")
