"""A soak whose InnoDB flushes in bursts reaches no flat equilibrium (analysis/soak.equilibrium asks every node to
flush in each of its last windows): its steady state is a cycle. This derives, with the code at hand, the soak's
windows (analysis/soak.cost_windows, from the CSVs recorded beside its summary) and per node its flushing bursts,
the cycles between them (from the window after one burst to the last window of the next) and the per-write figures
over whole cycles, weighted by writes, against the windows before the first burst (analysis/soak.cycles, which a
soak's summary holds since 2026-12-03; this soak was recorded before).
Run from the repository's root: python results/readme-assets/soak-noindex-20261203/cycles.py FOLDER."""

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


def line(figures: dict[str, Any] | None) -> str:
    return ", ".join(f"{k} {float(v or 0.0):.3f}" for k, v in (figures or {}).items())


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
    for node, c in soak.cycles(windows).items():
        print(f"{node}: bursts from {', '.join(f'{s:g} s' for s in c.bursts_from_s or []) or 'none'}"
              + (f", every {c.period_s:g} s" if c.period_s is not None else ""))
        print(f"  before the first burst ({c.before_windows} windows): {line(c.before)}")
        found = soak.bursts(windows, node)
        for a, b in zip(found, found[1:]):
            if b.stop < len(windows):
                cycle = windows[a.stop:b.stop]
                end = (windows[b.stop - 1].from_s or 0) + 60
                print(f"  cycle {windows[a.stop].from_s:g}–{end:g} s ({len(cycle)} windows): "
                      f"{line(soak._weighted(cycle, node))}")
        if c.per_write:
            print(f"  every whole cycle ({c.cycles} of them, {c.windows} windows): {line(c.per_write)}")


if __name__ == "__main__":
    main()
