"""apply-capacity --live against replica1 timed by hand (by-hand.sh), two interleaved rounds of the same sysbench
workload: each round's apply rate and CPU per transaction, read from the committed apply.json and by-hand-N.txt."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

HERE = Path(__file__).parent


def live(n: int) -> tuple[float, float]:
    entry = json.loads((HERE / f"live-{n}" / "apply.json").read_text())["replicas"]["replica1"]
    return float(entry["apply_rate_trx_per_s"]), float(entry["cpu_ms_per_trx"])


def by_hand(n: int) -> tuple[float, float]:
    text = (HERE / f"by-hand-{n}.txt").read_text()
    rate = re.search(r"= ([0-9.]+) trx/s", text)
    cpu = re.search(r"net ([0-9.]+) CPU-ms", text)
    assert rate and cpu, text
    return float(rate.group(1)), float(cpu.group(1))


def main() -> None:
    rows = [(n, live(n), by_hand(n)) for n in (1, 2)]
    print("| round | live trx/s | by hand trx/s | live / by hand | live CPU-ms/trx | by hand CPU-ms/trx |")
    print("|---|---|---|---|---|---|")
    for n, (lr, lc), (hr, hc) in rows:
        print(f"| {n} | {lr:,.1f} | {hr:,.1f} | {lr / hr - 1:+.1%} | {lc:.3f} | {hc:.3f} |")
    lr_mean = statistics.mean(r[1][0] for r in rows)
    hr_mean = statistics.mean(r[2][0] for r in rows)
    lc_mean = statistics.mean(r[1][1] for r in rows)
    hc_mean = statistics.mean(r[2][1] for r in rows)
    print(f"| mean | {lr_mean:,.1f} | {hr_mean:,.1f} | {lr_mean / hr_mean - 1:+.1%} | {lc_mean:.3f} | "
          f"{hc_mean:.3f} ({lc_mean / hc_mean - 1:+.1%}) |")


if __name__ == "__main__":
    main()
