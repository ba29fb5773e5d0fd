"""Per cell of a study folder: net master and replica CPU per transaction (ms) of each run, and the mean."""
import json
import sys
from pathlib import Path

root = Path(sys.argv[1])
for cell in sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith("cell")):
    rows = []
    for s in sorted(cell.glob("*/summary.json")):
        d = json.loads(s.read_text())
        n = d.get("cpu_seconds_net") or {}
        m = d["replication"]["nodes"]["master"]
        t = m.get("transactions")
        res = d.get("cpu_seconds_net_resolution") or {}
        if not t:
            continue
        span = d.get("cpu_span_s")
        rows.append((t / span, 1000 * n["master"] / t, 500 * (n["replica1"] + n["replica2"]) / t,
                     1000 * res.get("master", 0) / t, d["settle"]["settled"]))
    if rows:
        ms = [r[1] for r in rows]
        rs = [r[2] for r in rows]
        print(f"{cell.name:32s} trx/s {rows[0][0]:6.1f}  master {' '.join(f'{x:.3f}' for x in ms)} "
              f"(mean {sum(ms)/len(ms):.3f}, res {rows[0][3]:.3f})  replica {' '.join(f'{x:.3f}' for x in rs)} "
              f"(mean {sum(rs)/len(rs):.3f})  settled {[r[4] for r in rows]}")
