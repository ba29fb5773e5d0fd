# needs servers: a running replbench topology at 8M with toxiproxy (REPLBENCH_* environment, PYTHONPATH=.)
"""By-hand semi-sync commit cost at 8M (issue 49): ONE sequential client on the master (autocommit single-row
UPDATEs of bench_idx with fresh values, random ids), each commit timed on the client, with both replicas' replication
connections through toxiproxy at a 1, 5 and 20 ms round trip (the harness's links, the same proxies as study
semi-sync-distance), semi-sync off / after_sync / after_commit (the harness's knobs), interleaved over REPEATS
rounds. Also the master's own counters over each cell: Rpl_semi_sync_master_tx_avg_wait_time (µs),
_net_avg_wait_time (µs), _yes_tx, _no_tx, and the round trip measured through each proxy (timed SELECT 1).
Prints one line per cell and a table of medians; writes cells.json beside it."""
import json
import os
import random
import statistics
import string
import sys
import time
from typing import Any

from replbench.core import sql
from replbench.core.config import Settings
from replbench.topology import knobs, links

N = int(sys.argv[1]) if len(sys.argv) > 1 else 150
REPEATS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
LINKS = (1, 5, 20)
MODES = ("off", "after_sync", "after_commit")
s = Settings.from_env(dict(os.environ))
rnd = random.Random(os.urandom(16))
COUNTERS = ("Rpl_semi_sync_master_tx_avg_wait_time", "Rpl_semi_sync_master_net_avg_wait_time",
            "Rpl_semi_sync_master_yes_tx", "Rpl_semi_sync_master_no_tx", "Rpl_semi_sync_master_tx_waits",
            "Rpl_semi_sync_master_net_waits", "Rpl_semi_sync_master_tx_wait_time", "Rpl_semi_sync_master_net_wait_time")


def status(cur: sql.Cursor) -> dict[str, Any]:
    cur.execute("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master%'")
    return {k: v for k, v in sql.fetch_all(cur)}


def letters(n: int) -> str:
    return "".join(rnd.choice(string.ascii_letters) for _ in range(n))


def cell(ms: int, mode: str) -> dict[str, Any]:
    knobs.apply(s, knobs.Knobs(semi_sync=mode))
    conn = sql.connect(s.master, s)
    cur = conn.cursor()
    for _ in range(10):  # warm: the connection, the first commits after the IO threads reconnected
        cur.execute("UPDATE bench_idx.accounts SET first_name=%s, updated_at=NOW() WHERE id=%s",
                    (letters(8), rnd.randint(1, 8_000_000)))
    before = status(cur)
    times = []
    for _ in range(N):
        args = (letters(8), letters(10), letters(9), rnd.randint(1, 8_000_000))
        t0 = time.perf_counter()
        cur.execute("UPDATE bench_idx.accounts SET first_name=%s, last_name=%s, city=%s, updated_at=NOW() "
                    "WHERE id=%s", args)
        times.append(1000 * (time.perf_counter() - t0))
    after = status(cur)
    conn.close()
    delta = {k: int(after.get(k, 0)) - int(before.get(k, 0)) for k in COUNTERS if k in after and "avg" not in k}
    return {"link_ms": ms, "mode": mode, "n": N, "median_ms": statistics.median(times),
            "mean_ms": statistics.fmean(times), "p90_ms": statistics.quantiles(times, n=10)[-1],
            "tx_avg_wait_us": int(after.get("Rpl_semi_sync_master_tx_avg_wait_time", 0)),
            "net_avg_wait_us": int(after.get("Rpl_semi_sync_master_net_avg_wait_time", 0)), "delta": delta}


out = []
try:
    for ms in LINKS:
        applied = links.apply(s, links.parse_all([f"replica1={ms}ms", f"replica2={ms}ms"]))
        rtts = {name: links.measure_rtt(s, links.parse(f"{name}={ms}ms")) for name in ("replica1", "replica2")}
        for r in range(REPEATS):
            order = list(MODES)
            rnd.shuffle(order)
            for mode in order:
                c = cell(ms, mode) | {"round": r + 1, "rtt_measured_ms": rtts}
                out.append(c)
                print(json.dumps(c), flush=True)
finally:
    knobs.apply(s, knobs.Knobs())
    links.apply(s, ())
json.dump(out, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "cells.json"), "w"), indent=1)
print("\n| link RTT | mode | median ms (rounds) | median − off | in RTTs | MariaDB tx_avg_wait ms |")
print("|---|---|---|---|---|---|")
for ms in LINKS:
    base = statistics.median(c["median_ms"] for c in out if c["link_ms"] == ms and c["mode"] == "off")
    for mode in MODES:
        cs = [c for c in out if c["link_ms"] == ms and c["mode"] == mode]
        med = statistics.median(c["median_ms"] for c in cs)
        print(f"| {ms} ms | {mode} | {med:.2f} ({', '.join(format(c['median_ms'], '.2f') for c in cs)}) | "
              f"{med - base:+.2f} | {(med - base) / ms:.2f} | "
              f"{statistics.median(c['tx_avg_wait_us'] for c in cs) / 1000:.2f} |")
