# needs servers: a running replbench topology at 8M (.state/<node>/mariadbd.sock and mariadbd.pid, from the
# repository's root); starts a spinner process per core
"""Issue 50, by hand: is the rate dependence of CPU per write the host's vCPUs halting between requests?
One PyMySQL client on the master's socket commits single-row updates of bench_idx.accounts (fresh values) paced at
20, 200 and 400/s, each with and without a spinner: one SCHED_IDLE busy loop per core (it runs only when nothing
else wants the core, so it takes no CPU from mariadbd; it keeps the vCPUs from halting). Interleaved, rotated
rounds; each window net of an idle window of the same length just before it, with the same spinner state.
mariadbd CPU from /proc/<pid>/stat (master and each replica)."""
import json
import os
import random
import string
import subprocess
import sys
import time
from typing import Any

import pymysql

SOCK = {n: f".state/{n}/mariadbd.sock" for n in ("master", "replica1", "replica2")}
TCK = os.sysconf("SC_CLK_TCK")
SPIN = ("import os\nos.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\nwhile True:\n    pass\n")


def pid(node: str) -> int:
    return int(open(f".state/{node}/mariadbd.pid").read().split()[0])


def cpu(p: int) -> float:
    f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TCK


def cpus() -> dict[str, float]:
    return {n: cpu(pid(n)) for n in SOCK}


def word(n: int) -> str:
    return "".join(random.choice(string.ascii_lowercase) for _ in range(n))


def window(conn: pymysql.connections.Connection, rate: float, seconds: float) -> tuple[int, float]:
    cur = conn.cursor()
    start = time.monotonic()
    n = 0
    while True:
        due = start + n / rate
        now = time.monotonic()
        if due - start >= seconds:
            break
        if due > now:
            time.sleep(due - now)
        cur.execute("UPDATE bench_idx.accounts SET first_name=%s, last_name=%s, city=%s WHERE id=%s",
                    (word(8), word(10), word(9), random.randint(1, 8_000_000)))
        n += 1
    return n, time.monotonic() - start


def measure(conn: pymysql.connections.Connection, rate: float, seconds: float, spin: bool) -> dict[str, Any]:
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(os.cpu_count() or 1)] if spin else []
    try:
        time.sleep(1.0)
        a = cpus()
        time.sleep(seconds)
        b = cpus()
        idle = {k: b[k] - a[k] for k in a}
        a = cpus()
        n, span = window(conn, rate, seconds)
        time.sleep(1.0)
        b = cpus()
    finally:
        for s in spinners:
            s.kill()
            s.wait()
    busy = {k: b[k] - a[k] for k in a}
    net = {k: busy[k] - idle[k] * (span + 1.0) / seconds for k in a}
    return {"rate": rate, "spin": spin, "commits": n, "span_s": round(span, 2), "idle_cpu_s": idle,
            "busy_cpu_s": busy, "net_ms_per_trx": {k: round(1000 * v / n, 4) for k, v in net.items()}}


conn = pymysql.connect(unix_socket=SOCK["master"], user="root", autocommit=True)
conds = [(r, s) for r in (20, 200, 400) for s in (False, True)]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
out = []
for i in range(rounds):
    order = conds[i % len(conds):] + conds[:i % len(conds)]
    if i % 2:
        order = order[::-1]
    for rate, spin in order:
        m = measure(conn, rate, 20, spin)
        out.append(m)
        print(json.dumps(m), flush=True)
        json.dump(out, open(sys.argv[1], "w"), indent=1)
