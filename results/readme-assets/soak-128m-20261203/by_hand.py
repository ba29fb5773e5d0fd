"""By hand, from by-hand/at-60.txt and at-175.txt alone (by_hand.sh read them from replica1 beside a 3-minute soak):
the writes replica1 applied between (its gtid_slave_pos in domain 0), and per write its pages flushed, the bytes its
server says it wrote (data files, doublewrite included, and redo) against /proc's, and its CPU (gross, ticks of
10 ms); beside them the soak's own windows over the same two minutes (its summary.json, weighted by writes).
Usage, from this folder: python by_hand.py"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path("by-hand")


def read(name: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in (HERE / name).read_text().splitlines():
        key, value = line.split(maxsplit=1)
        if key == "gtid":
            value = next(g.split("-")[2] for g in value.split(",") if g.startswith("0-"))
        out[key] = float(value)
    return out


a, b = read("at-60.txt"), read("at-175.txt")
d = {k: b[k] - a[k] for k in a}
writes = d["gtid"]
server_kb = (d["Innodb_data_written"] + d["Innodb_os_log_written"]) / 1024
pages = d["Innodb_buffer_pool_pages_flushed"]
print(f"replica1 between about the soak's 60th and 175th second ({d['clock']:.1f} s by the clock): {writes:,.0f} "
      "writes applied")
print(f"  pages flushed {pages:,.0f}: {pages / writes:.3f} per write")
print(f"  server data + redo {server_kb:,.0f} KB, /proc write_bytes {d['write_bytes'] / 1024:,.0f} KB "
      f"(server/proc {server_kb / (d['write_bytes'] / 1024):.3f}): {d['write_bytes'] / 1024 / writes:.2f} KB per write")
print(f"  CPU {d['ticks']:.0f} ticks: {10 * d['ticks'] / writes:.3f} CPU-ms per write, gross")
summary = json.loads((HERE / "summary.json").read_text())
windows = [w for w in summary["soak"]["windows"] if 60 <= w["from_s"] < 180]
total = sum(w["writes"] for w in windows)
figures = {k: sum(w["nodes"]["replica1"][k] * w["writes"] for w in windows) / total
           for k in ("pages_flushed_per_write", "kb_written_per_write", "cpu_ms_per_write_net")}
idle = summary["cpu_idle_per_s"]["replica1"]
print(f"the soak's windows from 60 s and 120 s ({total:,} writes): {figures['pages_flushed_per_write']:.3f} pages "
      f"flushed, {figures['kb_written_per_write']:.2f} KB written, {figures['cpu_ms_per_write_net']:.3f} CPU-ms net of "
      f"idle per write (its idle {idle:.4f} CPU-s a second: {1000 * idle * d['clock'] / writes:.3f} CPU-ms a write "
      "over the by-hand span)")
