"""A soak's windows and steady state, derived again by the code at hand (analysis/soak) from the files the soak
recorded beside its summary: timeline.csv (successes per second), cpu.csv, innodb.csv and io.csv, and the idle rates,
the attack's span and the share of writes from its summary.json. Run from the repository's root:
python results/readme-assets/write-back-20261202/steady.py FOLDER [--cycles] (a soak's folder, e.g. the soak-write-400
beside; --cycles: each node's flushing bursts and whole cycles too, analysis/soak.cycles)."""

import csv
import json
import sys
from pathlib import Path
from typing import Any

from replbench.analysis import soak


def rows(path: Path) -> list[dict[str, Any]]:
    with path.open() as f:
        return [{k: (v if k in ("node", "binlog_file") else (float(v) if v != "" else "")) for k, v in r.items()}
                for r in csv.DictReader(f)]


def main() -> None:
    folder = Path(sys.argv[1])
    summary = json.loads((folder / "summary.json").read_text())
    seconds = [{"second": int(r["second"]), "requests": int(r["requests"]), "errors": int(r["errors"])}
               for r in rows(folder / "timeline.csv")]
    cpu: list[dict[str, float]] = [{k: float(v) for k, v in r.items() if v != ""} for r in rows(folder / "cpu.csv")]
    t0 = summary["attack_start_s"]
    t1 = t0 + summary["harness_time_s"]["attack"]
    share = summary["binlog"]["successful_writes"] / summary["successes"]
    windows = soak.cost_windows(seconds, share, cpu, summary["cpu_idle_per_s"], rows(folder / "innodb.csv"),
                                rows(folder / "io.csv"), t0, t1, summary["soak"]["growth"]["replica1"]["window_s"])
    print(f"{folder.name}: {len(windows)} windows of {summary['scenario']} at {summary['rate']}/s")
    print("from_s writes | per node: CPU-ms/write net of idle, pages flushed/write, KB written/write, "
          "mean dirty pages, mean checkpoint age MB")
    for w in windows:
        print(f"{w.from_s:>5} {w.writes:>6} | " + "; ".join(
            f"{n} {f['cpu_ms_per_write_net']} {f['pages_flushed_per_write']} {f['kb_written_per_write']} "
            f"{f['dirty_pages']:,.0f} {f['checkpoint_age_mb']}" for n, f in (w.nodes or {}).items()))
    eq = soak.equilibrium(windows)
    print(f"equilibrium: {json.dumps(eq.model_dump(exclude_unset=True), sort_keys=True)}")
    if len(sys.argv) > 2 and sys.argv[2] == "--cycles":  # a soak that writes back in bursts: its whole cycles
        for node, c in soak.cycles(windows).items():
            print(f"cycles {node}: {json.dumps(c.model_dump(exclude_unset=True), sort_keys=True)}")


if __name__ == "__main__":
    main()
