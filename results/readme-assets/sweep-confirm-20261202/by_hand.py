"""By hand, from the sweep's files alone (no replbench import): each run of `sweep write --confirm 3` judged again
against the criteria sweep.json recorded (success, goodput against the rate asked, client p99, each replica's lag
p99 and growth, catch-up), beside the verdict the sweep wrote; and the host's CPU over the attack window read from
cpu.csv's host_busy column (the mean of the samples inside it) beside the limit the run's summary names.

Usage: python by_hand.py SWEEP_FOLDER
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path


def host_busy(run: Path, start: float, seconds: float) -> float:
    """The mean of cpu.csv's host_busy samples taken inside the attack window (percent of one core)."""
    with open(run / "cpu.csv") as f:
        got = [float(r["host_busy"]) for r in csv.DictReader(f) if start < float(r["elapsed_s"]) <= start + seconds]
    return sum(got) / len(got)


def judged(s: dict, c: dict, rate: int) -> list[str]:
    """What fails the criteria, each in a word; empty: it passes."""
    fails = []
    if s["success"] < c["min_success"]:
        fails.append("success")
    if s["goodput"] < c["min_rate_ratio"] * rate:
        fails.append("goodput")
    if s["latency_ms"]["p99"] > 1000 * c["max_p99"]:
        fails.append("p99")
    for name, lag in sorted(s["lag"].items()):
        if lag["p99_ms"] > 1000 * c["max_lag_p99"]:
            fails.append(f"{name} lag p99")
        if lag["growth_s_per_s"] >= c["max_lag_growth"]:
            fails.append(f"{name} lag growth")
    if any(v is None or v > c["max_catch_up"] for v in s["catch_up_s"].values()):
        fails.append("catch-up")
    return fails


def main(folder: Path) -> None:
    sweep = json.loads((folder / "sweep.json").read_text())
    c = sweep["criteria"]
    verdicts = {f: step["passed"] for step in sweep["steps"] for f in step["folders"]}
    rounds = {run["folder"]: run for run in sweep["boundary"]["runs"]}
    verdicts |= {f: run["passed"] for f, run in rounds.items()}
    print("run | rate | sweep's verdict | by hand | host busy % (cpu.csv / summary) | limit named | calibration")
    for run in sorted(p for p in folder.iterdir() if (p / "summary.json").exists()):
        s = json.loads((run / "summary.json").read_text())
        meta = json.loads((run / "meta.json").read_text())
        rate = meta["rate"]
        fails = judged(s, c, rate)
        where = f"confirm round {rounds[run.name]['round']}" if run.name in rounds else "ladder"
        busy = host_busy(run, s["attack_start_s"], s["duration_s"])
        limit = s["limit"]
        print(f"{run.name} ({where}) | {rate} | {'PASS' if verdicts[run.name] else 'FAIL'} | "
              f"{'PASS' if not fails else 'FAIL: ' + ', '.join(fails)} | "
              f"{busy:.1f} / {limit['utilisation']['host CPU']['percent']} | {limit['resource']} at "
              f"{limit['share']:.0%} of its capacity{'; ' + '; '.join(limit['also']) if limit['also'] else ''} | "
              f"{meta['host']['calibration_score']}")
    b = sweep["boundary"]
    print(f"boundary: {b['pass_rate']}/s passed {sum(r['passed'] for r in b['runs'] if r['rate'] == b['pass_rate'])}"
          f" of {b['rounds']}, {b['fail_rate']}/s {sum(r['passed'] for r in b['runs'] if r['rate'] == b['fail_rate'])}"
          f" of {b['rounds']}; confirmed: {b['confirmed']}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
