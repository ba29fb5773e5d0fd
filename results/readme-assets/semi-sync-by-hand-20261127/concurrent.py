# needs servers: a running replbench topology at 8M with toxiproxy (REPLBENCH_* environment, PYTHONPATH=.)
"""Issue 49 by hand, second part: the same single-row commits from K concurrent clients (each sequential, no pacing)
over a 20 ms round trip, semi-sync off / after_sync / after_commit: does a commit pay more than one round trip when
others are in flight? Per cell: each commit's time on its client, and the master's tx_wait_time / tx_waits."""
import json
import os
import random
import statistics
import string
import threading
import time

from replbench.core import sql
from replbench.core.config import Settings
from replbench.topology import knobs, links

s = Settings.from_env(dict(os.environ))
N = 60
out = []


def letters(rnd: random.Random, n: int) -> str:
    return "".join(rnd.choice(string.ascii_letters) for _ in range(n))


def client(times: list[float]) -> None:
    rnd = random.Random(os.urandom(8))
    conn = sql.connect(s.master, s)
    cur = conn.cursor()
    for _ in range(N):
        t0 = time.perf_counter()
        cur.execute("UPDATE bench_idx.accounts SET first_name=%s, last_name=%s, city=%s, updated_at=NOW() WHERE id=%s",
                    (letters(rnd, 8), letters(rnd, 10), letters(rnd, 9), rnd.randint(1, 8_000_000)))
        times.append(1000 * (time.perf_counter() - t0))
    conn.close()


def status() -> dict[str, int]:
    with sql.admin(s.master, s) as cur:
        cur.execute("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_tx_wait%'")
        return {k: int(v) for k, v in sql.fetch_all(cur)}


try:
    links.apply(s, links.parse_all(["replica1=20ms", "replica2=20ms"]))
    for rnd_ in range(2):
        for mode in ("off", "after_sync", "after_commit"):
            knobs.apply(s, knobs.Knobs(semi_sync=mode))
            for k in (1, 4, 8):
                times: list[float] = []
                b = status()
                t0 = time.perf_counter()
                th = [threading.Thread(target=client, args=(times,)) for _ in range(k)]
                for t in th:
                    t.start()
                for t in th:
                    t.join()
                wall = time.perf_counter() - t0
                a = status()
                w = a["Rpl_semi_sync_master_tx_waits"] - b["Rpl_semi_sync_master_tx_waits"]
                wt = a["Rpl_semi_sync_master_tx_wait_time"] - b["Rpl_semi_sync_master_tx_wait_time"]
                c = {"round": rnd_ + 1, "mode": mode, "clients": k, "commits_per_s": round(len(times) / wall, 1),
                     "median_ms": round(statistics.median(times), 2),
                     "p90_ms": round(statistics.quantiles(times, n=10)[-1], 2),
                     "master_wait_per_tx_ms": round(wt / w / 1000, 2) if w else None, "tx_waits": w}
                out.append(c)
                print(json.dumps(c), flush=True)
finally:
    knobs.apply(s, knobs.Knobs())
    links.apply(s, ())
json.dump(out, open("concurrent.json", "w"), indent=1)
