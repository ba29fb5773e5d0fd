"""Each held-out write case's master CPU measured/predicted over the control's in the same round (repeat i of a
case and of the control ran in round i), from validate.json: is the drift a round's (all cases alike within a
round) or a rate's (the 100/s cases apart from the 200/s control in every round)? Run from this folder."""
import json
from pathlib import Path

here = Path(__file__).resolve().parent.parent
d = json.loads(next(here.glob("validate-*/validate.json")).read_text())


def ratio(run: dict) -> float:
    return run["master_cpu_s"]["measured"] / run["master_cpu_s"]["predicted"]["value"]


control = [ratio(r) for r in d["control"]["repeats"]]
print("control measured/predicted per round:", ", ".join(f"{x:.3f}" for x in control))
for c in d["cases"]:
    runs = [r for r in c["repeats"] if (r.get("master_cpu_s") or {}).get("predicted")]
    if runs:
        rel = [ratio(r) / control[i] for i, r in enumerate(runs)]
        print(f"{c['scenario']} @ {c['rate']}/s {c['setting']}: over the round's control "
              + ", ".join(f"{x:.3f}" for x in rel) + f" (mean {sum(rel) / len(rel):.3f})")
