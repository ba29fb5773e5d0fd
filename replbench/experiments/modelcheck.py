"""model validate: the cost model against runs it was not fitted on. Each held-out case (the mixed scenario and a
mix of single-row and 100-row updates, each at two rates) runs as an ordinary run; the model is then asked what
that run should have cost from the run's own transactions and rows, and the table sets predicted beside measured
for binlog bytes and master and replica CPU (net of idle), with the error and whether the measurement falls in
the prediction's interval. The runs stay in results/model/validate-<time>/ and are never fitted on (model fit
skips that folder)."""

from __future__ import annotations

import json
import time
from typing import Any

from ..analysis import costmodel
from ..core import scenario as scenarios
from ..core.config import Settings
from ..core.progress import Progress
from ..core.records import new_folder, write_json
from .run import Run, RunOptions

CASES = (("mixed", 500), ("mixed", 1000), ("write-mix", 100), ("write-mix", 200))
DURATION = 30.0
PARTS = (("binlog_bytes", "binlog bytes"), ("master_cpu_s", "master CPU s"), ("replica_cpu_s", "replica CPU s"))


def validate(settings: Settings, model: dict[str, Any], cases: tuple[tuple[str, int], ...] = CASES,
             duration: float = DURATION) -> dict[str, Any]:
    folder = settings.results / "model" / f"{costmodel.HELD_OUT}{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"
    folder.mkdir(parents=True)
    progress = Progress("model validate")
    out: dict[str, Any] = {"folder": folder.name, "cases": []}
    for name, rate in cases:
        sc = scenarios.load(name)
        run_folder = new_folder(settings, sc, rate, parent=folder)
        summary = Run(settings, sc, rate, RunOptions(duration=duration), run_folder, progress).execute()
        meta = json.loads((run_folder / "meta.json").read_text())
        obs = costmodel.observation(summary, meta)
        case: dict[str, Any] = {"scenario": name, "rate": rate, "run": run_folder.name, "usable": obs is not None}
        if obs:
            predicted = costmodel.expected(model, obs)
            case["transactions"], case["rows"] = obs["transactions"], obs["rows"]
            for part, _ in PARTS:
                p, m = predicted[part], obs[part]
                case[part] = {"measured": m, "predicted": p,
                              "error_pct": None if p is None or not m else round(100 * (p["value"] - m) / m, 1),
                              "inside": None if p is None or m is None else p["low"] <= m <= p["high"]}
        out["cases"].append(case)
        write_json(folder / "validate.json", out)
    return out


def render(data: dict[str, Any]) -> str:
    lines = ["| case | transactions | rows | " + " | ".join(f"{label}: predicted [interval] / measured (error)"
                                                          for _, label in PARTS) + " |",
             "|---|---|---|" + "---|" * len(PARTS)]
    for c in data["cases"]:
        if not c["usable"]:
            lines.append(f"| {c['scenario']} @ {c['rate']}/s | not usable (failed, above the knee or not "
                         f"verified) |" + " |" * (len(PARTS) + 1))
            continue
        cells = []
        for part, _ in PARTS:
            v = c[part]
            p = v["predicted"]
            cells.append("no prediction" if p is None else
                         f"{p['value']:,.4g} [{p['low']:,.4g}–{p['high']:,.4g}] / {v['measured']:,.4g} "
                         f"({v['error_pct']:+.1f} %{'' if v['inside'] else ', outside'})")
        lines.append(f"| {c['scenario']} @ {c['rate']}/s | {c['transactions']:,} | {c['rows']:,} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)

