# needs servers: a running replbench topology at 8M (REPLBENCH_* environment, PYTHONPATH=.)
"""Issue 50's onset miss, by hand: is a replica's apply time per row set by the transaction's size or by the
backlog's length? Drains (each replica alone, apply-capacity's own measure) of 500- and 1,000-row updates with a
short backlog (150,000 rows) and a long one (450,000 rows), written at 3,000 rows/s as model validate writes its
onset backlog."""
import json
import os
from dataclasses import replace

from replbench.core import scenario as scenarios
from replbench.core.config import Settings
from replbench.core.records import new_folder
from replbench.core.results import apply_of
from replbench.experiments import applycap
from replbench.topology import knobs

s = Settings.from_env(dict(os.environ))
out = []
for rows, writes in ((500, 300), (1000, 450), (500, 900), (1000, 150)):
    sc = replace(scenarios.load("write-bulk"), bulk_rows=rows)
    fill = max(1, round(3000 / rows))
    folder = new_folder(s, sc, fill, parent=s.results / "onset-by-hand")
    data = apply_of(applycap.measure(s, sc, knobs.Knobs(), writes, fill, folder))
    rates = {n: r.apply_rate_trx_per_s for n, r in (data.replicas or {}).items() if r is not None}
    c = {"rows": rows, "writes": writes, "backlog_rows": rows * writes, "status": data.status, "trx_per_s": rates,
         "ms_per_trx": {n: round(1000 / v, 3) for n, v in rates.items() if v},
         "ms_per_row": {n: round(1000 / v / rows, 5) for n, v in rates.items() if v}, "folder": folder.name}
    out.append(c)
    print(json.dumps(c), flush=True)
json.dump(out, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "drains.json"), "w"), indent=1)
