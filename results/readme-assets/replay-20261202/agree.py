"""The same window's apply capacity measured live on one replica and replayed from the master's binlog on the other
(drive.sh), two rounds with the roles swapped: each round's apply rate and CPU per transaction, read from the
committed apply.json files."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


def entry(kind: str, n: int) -> tuple[str, dict[str, Any], dict[str, Any]]:
    data = json.loads((HERE / f"{kind}-{n}" / "apply.json").read_text())
    name, figures = next(iter(data["replicas"].items()))
    return name, figures, data


def main() -> None:
    print("| round | live: replica, trx applied, trx/s, CPU-ms/trx | replay: replica, trx applied, trx/s, CPU-ms/trx "
          "| replay / live |")
    print("|---|---|---|---|")
    rates: dict[str, list[float]] = {"live": [], "binlog": []}
    for n in (1, 2):
        sides = {kind: entry(kind, n) for kind in ("live", "binlog")}
        for kind, (_, figures, _) in sides.items():
            rates[kind].append(float(figures["apply_rate_trx_per_s"]))
        text = {kind: f"{name}, {f['transactions']:,}, {f['apply_rate_trx_per_s']:,.1f}, {f['cpu_ms_per_trx']:.3f}"
                for kind, (name, f, _) in sides.items()}
        ratio = sides["binlog"][1]["apply_rate_trx_per_s"] / sides["live"][1]["apply_rate_trx_per_s"]
        print(f"| {n} | {text['live']} | {text['binlog']} | {ratio - 1:+.1%} |")
    live, replay = statistics.mean(rates["live"]), statistics.mean(rates["binlog"])
    print(f"| mean | {live:,.1f} trx/s | {replay:,.1f} trx/s | {replay / live - 1:+.1%} |")


if __name__ == "__main__":
    main()
