"""A soak whose InnoDB flushes in bursts reaches no flat equilibrium (analysis/soak.equilibrium asks every node to
flush in each of its last windows): its steady state is a cycle. This derives, with the code at hand, the soak's
windows (analysis/soak.cost_windows, from the CSVs recorded beside its summary) and per node its flushing bursts
(windows that flushed pages), the cycles between them (from the window after one burst to the last window of the
next) and the per-write figures over whole cycles, weighted by writes, against the windows before the first burst.
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


def figure(w: Any, node: str, key: str) -> float:
    """A window's per-write figure of a node (every node is in every window of a soak that finished)."""
    return float(w.nodes[node][key] or 0.0)


def mean_of(windows: list[Any], node: str, key: str) -> float:
    """Per write over the windows: each window's per-write figure weighted by its writes."""
    writes = sum(w.writes for w in windows)
    return sum(figure(w, node, key) * w.writes for w in windows) / writes


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
    keys = ("cpu_ms_per_write_net", "pages_flushed_per_write", "kb_written_per_write")
    for node in windows[0].nodes or {}:
        flushed = [i for i, w in enumerate(windows) if figure(w, node, "pages_flushed_per_write") > 0]
        bursts: list[list[int]] = []
        for i in flushed:
            if bursts and i == bursts[-1][-1] + 1:
                bursts[-1].append(i)
            else:
                bursts.append([i])
        starts = [windows[b[0]].from_s for b in bursts]
        print(f"{node}: bursts from {', '.join(f'{s:g} s' for s in starts) or 'none'}")
        if not bursts:
            continue
        before = windows[:bursts[0][0]]
        print(f"  before the first burst ({len(before)} windows): "
              + ", ".join(f"{k} {mean_of(before, node, k):.3f}" for k in keys))
        for a, b in zip(bursts, bursts[1:]):
            cycle = windows[a[-1] + 1:b[-1] + 1]
            end = (windows[b[-1]].from_s or 0) + 60
            print(f"  cycle {windows[a[-1] + 1].from_s:g}–{end:g} s ({len(cycle)} windows): "
                  + ", ".join(f"{k} {mean_of(cycle, node, k):.3f}" for k in keys))
        if len(bursts) > 2:
            whole = windows[bursts[0][-1] + 1:bursts[-1][-1] + 1]
            print(f"  every whole cycle ({len(whole)} windows): "
                  + ", ".join(f"{k} {mean_of(whole, node, k):.3f}" for k in keys))


if __name__ == "__main__":
    main()
