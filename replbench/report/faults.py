"""The fault runs' section: each planned fault's before, during and after windows, and how the app's routing
followed the node that went down and came back.
"""

from __future__ import annotations

from pathlib import Path

from ..core.results import read_summary
from .assets import Writer
from .figures import num


def fault_section(folder: Path, writer: Writer) -> list[str]:
    summary = read_summary(folder)
    assets = writer.folder(folder)
    assert summary.planned_faults is not None  # sources.fault_runs: the runs that carried out planned faults
    lines = [f"### `{summary.scenario}` at {summary.rate} rps — `{folder.name}`", "",
             "Faults: " + "; ".join(f"`{p.fault}` (done at {p.at_s:.1f} s)" for p in summary.planned_faults)
             + f"; status {summary.status}", "",
             "| window | seconds | requests | rate/s | errors % | p50 ms | p99 ms | served by |",
             "|---|---|---|---|---|---|---|---|"]
    for name, w in (summary.fault_windows or {}).items():
        served = ", ".join(f"{k} {v:,}" for k, v in (w.served_by or {}).items()) or "–"
        lines.append(f"| {name} | {w.start_s:.1f}–{w.end_s:.1f} | {w.requests:,} | {num(w.rate)} | "
                     f"{num(w.error_pct)} | {num(w.p50_ms)} | {num(w.p99_ms)} | {served} |")
    lines.append("")
    for r in summary.routing or []:
        if r.last_served_s is None and r.node not in (summary.served_by or {}):
            continue
        if r.last_served_s is None:
            stopped = "served nothing after it went down"
        else:
            assert r.down_at_s is not None  # measure/timeline.build writes every outage's
            stopped = f"served its last request {r.last_served_s - r.down_at_s:.2f} s after it went down"
        back = "" if r.back_at_s is None else (
            ", was not used again" if r.first_served_back_s is None else
            f", was used again {r.first_served_back_s - r.back_at_s:.2f} s after it was back")
        lines.append(f"- `{r.node}` {stopped}{back}.")
    for src in ("latency.png", "block.txt", "summary.json"):
        if (folder / src).exists():
            writer.copy(folder / src, assets / src)
    if (assets / "latency.png").exists():
        lines += ["", f"![{summary.scenario} latency over time]({writer.rel(assets / 'latency.png')})"]
    return lines + [""]
