# needs servers: a running replbench topology (its state folder's mariadbd.pid and mariadbd.sock) and the mariadb client
"""After a run: each node's mariadbd CPU (% of a core per 1 s), InnoDB history list and dirty pages, for N seconds."""
import subprocess
import sys
import time
from pathlib import Path

import psutil

root = Path(sys.argv[1])
secs = int(sys.argv[2])
nodes = ["master", "replica1", "replica2"]
procs = {n: psutil.Process(int((root / n / "mariadbd.pid").read_text())) for n in nodes}


def q(n: str) -> dict[str, str]:
    out = subprocess.run(["mariadb", "-S", str(root / n / "mariadbd.sock"), "-uroot", "-N", "-e",
        "show global status where variable_name in ('Innodb_history_list_length','Innodb_buffer_pool_pages_dirty')"],
        capture_output=True, text=True).stdout.split()
    return dict(zip(out[::2], out[1::2]))


last = {n: sum(p.cpu_times()[:2]) for n, p in procs.items()}
t0 = time.monotonic()
print("t_s " + " ".join(f"{n}_cpu% {n}_hist {n}_dirty" for n in nodes), flush=True)
while time.monotonic() - t0 < secs:
    time.sleep(1.0)
    row = [f"{time.monotonic()-t0:5.1f}"]
    for n, p in procs.items():
        now = sum(p.cpu_times()[:2])
        c = 100 * (now - last[n])
        last[n] = now
        s = q(n)
        row += [f"{c:5.1f}", s.get("Innodb_history_list_length", "?"), s.get("Innodb_buffer_pool_pages_dirty", "?")]
    print(" ".join(row), flush=True)
