"""A replay study checked by hand (README.md): every unit's replay started from the position replica1 was held at
(positions.txt) and applied exactly the transactions sysbench says it committed in the window (sysbench.txt); then
each unit's apply rate and CPU per transaction, read from its apply.json, in the study's order.
Run from this folder: python check.py"""

import json
import re
from pathlib import Path

held = re.search(r"held at (\S+)", Path("positions.txt").read_text())
committed = re.search(r"transactions:\s+(\d+)", Path("sysbench.txt").read_text())
assert held and committed
study = json.loads(Path("study/study.json").read_text())
print(f"replica1 held at {held.group(1)}; sysbench committed {int(committed.group(1)):,} transactions")
for unit in study["units"]:
    apply = json.loads((Path("study") / unit["folder"] / "apply.json").read_text())
    entry = apply["replicas"]["replica1"]
    same = apply["replay"]["start"] == held.group(1) and entry["transactions"] == int(committed.group(1))
    print(f"{unit['cell']:<15} repeat {unit['repeat']}: from {apply['replay']['start']}, applied "
          f"{entry['transactions']:,} trx ({'as held and as sysbench counted' if same else 'DIFFERS'}), "
          f"{entry['apply_rate_trx_per_s']:,} trx/s, {entry['cpu_ms_per_trx']} CPU-ms/trx")
