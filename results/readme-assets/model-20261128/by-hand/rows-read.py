"""By hand: each mixed validate run's and each read-only cell's replica1 CPU net of idle per read served, InnoDB rows
read per read served, and CPU per 10^6 rows read (summary.json: cpu_seconds_net, served_by, replication.nodes)."""
import json
import sys
from pathlib import Path

for folder in sys.argv[1:]:
    for p in sorted(Path(folder).glob("**/summary.json")):
        d = json.loads(p.read_text())
        served = (d.get("served_by") or {}).get("replica1")
        if not served:
            continue
        cpu = d["cpu_seconds_net"]["replica1"]
        rows = d["replication"]["nodes"]["replica1"].get("rows_read") or 0
        print(f"{p.parent.name:32s} reads {served:6d}  CPU {cpu:6.2f} s  {1000 * cpu / served:5.2f} ms/read  "
              f"{rows / served:7.1f} rows read/read  {1e6 * cpu / max(1, rows):6.2f} s per 10^6 rows read")
