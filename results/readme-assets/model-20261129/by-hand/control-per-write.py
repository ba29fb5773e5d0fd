"""The control cell (write at 200/s, ROW FULL, bench_idx) by hand: master and replica1 CPU per write net of idle,
in the fitted study's runs and in the validation's control runs, from each run's summary.json; and the fit's
price of one such write from model.json (the rate shape's factor at 195/s is 1.00). Run from this folder."""
import json
from pathlib import Path

here = Path(__file__).resolve().parent.parent
for label, pattern in (("fit (study cost-model, 1 row)", "campaign-*/study-*-cost-model/cell1-1-row/*/summary.json"),
                       ("validate (control)", "validate-*/*-write-200/summary.json")):
    for path in sorted(here.glob(pattern)):
        s = json.loads(path.read_text())
        net = s["cpu_ms_per_success_net"]
        print(f"{label:32} {path.parent.name}: master {net['master']:.3f} ms, replica1 {net['replica1']:.3f} ms "
              "per write")
m = json.loads((here / "model.json").read_text())["settings"]["ROW-FULL bench_idx"]
for part in ("master_cpu_s", "replica_cpu_s"):
    c = m[part]["coef"]
    print(f"model {part}: {1000 * (c['per_trx'] + c['per_row']):.4f} ms per single-row write at the "
          "fastest rate (rate shape factor 1.00 at 195/s)")
