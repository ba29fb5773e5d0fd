# needs servers: a running replbench topology at 8M (REPLBENCH_* environment, PYTHONPATH=.)
"""By-hand apply capacity of replica1 alone at 8M (the DBA's method): SQL threads stopped on both replicas, a backlog of
N single-row updates of the three indexed columns written from one master connection, then replica1's SQL thread
started once and MASTER_GTID_WAIT timed; its mariadbd CPU net of its idle CPU (2 s, SQL thread stopped)."""
import os
import random
import string
import sys
import time

import psutil

from replbench.core import sql
from replbench.core.config import Node, Settings
from replbench.topology import nodes

N = int(sys.argv[1]) if len(sys.argv) > 1 else 30000
RATE = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0  # writes per second (0: as fast as one connection goes)
s = Settings.from_env(dict(os.environ))
r1, r2 = s.node("replica1"), s.node("replica2")


def cpu(node: Node) -> float:
    t = psutil.Process(nodes.node_pid(node)).cpu_times()
    return t.user + t.system


def word() -> str:
    return "".join(rnd.choice(string.ascii_letters) for _ in range(8))


for r in (r1, r2):
    with sql.admin(r, s) as cur:
        cur.execute("STOP SLAVE SQL_THREAD")
with sql.admin(s.master, s) as cur:
    cur.execute("SELECT MAX(id) FROM bench_idx.accounts")
    top = int(sql.one_row(cur)[0])
    rnd = random.Random(7)
    t0 = time.monotonic()
    replay = None
    if os.environ.get("TARGETS"):  # the harness's own targets' values, replayed over one connection
        import base64
        import json
        replay = [json.loads(base64.b64decode(json.loads(line)["body"])) for line in open(os.environ["TARGETS"])][:N]
    for i in range(N):
        if replay is not None:
            b = replay[i]
            cur.execute("UPDATE bench_idx.accounts SET first_name=%s, last_name=%s, city=%s, updated_at=NOW() "
                        "WHERE id=%s", (b["first_name"], b["last_name"], b["city"], b["id"]))
            continue
        if RATE:
            due = t0 + i / RATE
            if due > time.monotonic():
                time.sleep(due - time.monotonic())
        cur.execute("UPDATE bench_idx.accounts SET first_name=%s, last_name=%s, city=%s, updated_at=NOW() WHERE id=%s",
                    (word(), word(), word(), rnd.randint(1, top)))
    wrote = time.monotonic() - t0
gtid = nodes.master_gtid(s)
print(f"backlog: {N} updates in {wrote:.1f} s ({N/wrote:.0f}/s), gtid {gtid}")
c0 = cpu(r1)
time.sleep(2)
idle = (cpu(r1) - c0) / 2
c1 = cpu(r1)
t1 = time.monotonic()
with sql.admin(r1, s) as cur:
    cur.execute("START SLAVE SQL_THREAD")
    cur.execute("SELECT MASTER_GTID_WAIT(%s, 600)", (gtid,))
    res = sql.one_row(cur)[0]
took = time.monotonic() - t1
used = cpu(r1) - c1
net = used - idle * took
print(f"replica1 alone: {N/took:.0f} trx/s ({took:.2f} s, wait result {res}), CPU {used:.2f} s gross, "
      f"idle {idle*100:.1f} % of a core, {1000*net/N:.3f} CPU-ms per trx net ({1000*used/N:.3f} gross)")
with sql.admin(r2, s) as cur:
    cur.execute("START SLAVE SQL_THREAD")
