# needs servers: the 8M topology up (its state folder's mariadbd.pid and mariadbd.sock), the mariadb client and vegeta
"""By hand, with none of replbench's measurement code: 30 s of `write` at 400/s sent by vegeta straight at the app
(the requests of the run named, their text values shuffled among them), the replicas' positions awaited with the
mariadb client, then each node's dirty pages forced out with three SET GLOBALs, its counters (SHOW GLOBAL STATUS),
its /proc/<pid>/io and its /proc/<pid>/stat CPU read before and after the flush. Prints, per node, the server's
bytes (data files, doublewrite included, and redo) against the bytes /proc says the process wrote over the same
flush, and the flush per write. Run from the repository's root with the 8M topology up:
python3 results/readme-assets/write-back-20261202/by_hand.py RUN_FOLDER (a write-400 run's folder)."""

import base64
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

STATE = Path(".state")
NODES = ("master", "replica1", "replica2")
COUNTERS = ("Innodb_buffer_pool_pages_dirty", "Innodb_buffer_pool_pages_flushed", "Innodb_pages_written",
            "Innodb_dblwr_pages_written", "Innodb_data_written", "Innodb_os_log_written")
TICK = os.sysconf("SC_CLK_TCK")


def sql(node: str, query: str) -> list[list[str]]:
    out = subprocess.run(["mariadb", "-S", str(STATE / node / "mariadbd.sock"), "-uroot", "-N", "-B", "-e", query],
                         check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines()]


def look(node: str) -> dict[str, float]:
    pid = int((STATE / node / "mariadbd.pid").read_text())
    status = {k: float(v) for k, v in sql(node, "SHOW GLOBAL STATUS WHERE Variable_name IN ("
                                               + ",".join(f"'{c}'" for c in COUNTERS) + ")")}
    io = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return {**status, "proc_write_bytes": float(io["write_bytes"]),
            "cpu_s": (int(stat[11]) + int(stat[12])) / TICK, "at": time.monotonic()}


def force_out() -> None:
    """Every node's dirty pages out, as fast as the disk allows, its three settings put back after."""
    saved = {n: sql(n, "SELECT @@innodb_io_capacity_max, @@innodb_io_capacity, @@innodb_max_dirty_pages_pct")[0]
             for n in NODES}
    for n in NODES:
        sql(n, "SET GLOBAL innodb_io_capacity_max = 50000; SET GLOBAL innodb_io_capacity = 50000; "
               "SET GLOBAL innodb_max_dirty_pages_pct = 0")
    while any(look(n)["Innodb_buffer_pool_pages_dirty"] > 100 for n in NODES):
        time.sleep(0.5)
    for n in NODES:
        cap_max, cap, pct = saved[n]
        sql(n, f"SET GLOBAL innodb_max_dirty_pages_pct = {pct}; SET GLOBAL innodb_io_capacity = {cap}; "
               f"SET GLOBAL innodb_io_capacity_max = {cap_max}")


def main() -> None:
    run = Path(sys.argv[1])
    vegeta = Path(".tools/bin/vegeta")
    force_out()  # what an earlier command left dirty, so the flush below holds these writes' pages alone
    print("dirty pages before the writes:", {n: look(n)["Innodb_buffer_pool_pages_dirty"] for n in NODES})
    targets = Path("/tmp/by-hand-targets.json")  # the run's requests, each text value taken from another request
    # (shuffled, as random as the run's own): the same bodies again would set each row to what it holds already
    requests = [json.loads(line) for line in (run / "targets.json").read_text().splitlines()]
    bodies = [json.loads(base64.b64decode(r["body"])) for r in requests]
    for field in [k for k, v in bodies[0].items() if isinstance(v, str)]:
        values = [b[field] for b in bodies]
        random.Random(field).shuffle(values)
        for b, v in zip(bodies, values):
            b[field] = v
    with targets.open("w") as out:
        for request, body in zip(requests, bodies):
            request["body"] = base64.b64encode(json.dumps(body).encode()).decode()
            out.write(json.dumps(request) + "\n")
    attack = subprocess.run([str(vegeta), "attack", "-format=json", f"-targets={targets}",
                             "-rate=400/1s", "-duration=30s", "-max-connections=1024"],
                            check=True, capture_output=True)
    codes = subprocess.run([str(vegeta), "report", "-type=json"], input=attack.stdout, check=True,
                           capture_output=True).stdout
    writes = json.loads(codes)["status_codes"].get("200", 0)
    target = sql("master", "SELECT @@gtid_binlog_pos")[0][0]
    for replica in NODES[1:]:
        sql(replica, f"SELECT MASTER_GTID_WAIT('{target}', 600)")
    before = {n: look(n) for n in NODES}
    force_out()
    after = {n: look(n) for n in NODES}
    print(f"{writes:,} successful writes; dirty pages forced out after the replicas reached {target}")
    for n in NODES:
        d = {k: after[n][k] - before[n][k] for k in after[n]}
        server_kb = (d["Innodb_data_written"] + d["Innodb_os_log_written"]) / 1024
        proc_kb = d["proc_write_bytes"] / 1024
        print(f"{n}: dirty {before[n]['Innodb_buffer_pool_pages_dirty']:,.0f} -> "
              f"{after[n]['Innodb_buffer_pool_pages_dirty']:,.0f} in {d['at']:.2f} s; "
              f"pages flushed {d['Innodb_buffer_pool_pages_flushed']:,.0f}, written {d['Innodb_pages_written']:,.0f}, "
              f"doublewrite {d['Innodb_dblwr_pages_written']:,.0f}; server data+redo {server_kb:,.0f} KB vs /proc "
              f"{proc_kb:,.0f} KB (server/proc {server_kb / proc_kb:.3f}); per write: "
              f"{d['Innodb_buffer_pool_pages_flushed'] / writes:.2f} pages flushed, {proc_kb / writes:.1f} KB "
              f"written, {1000 * d['cpu_s'] / writes:.3f} CPU-ms gross")


if __name__ == "__main__":
    main()
