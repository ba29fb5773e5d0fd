# needs servers: a running replbench topology at 8M (.state/replica1/mariadbd.sock, from the repository's root) and
# a recorded run's targets (TARGETS), which git does not keep
"""By hand: rows read and time per find_users on replica1 (8M), the app's two steps with step 2 pinned to
idx_first_last (the app's plan) against step 2 read through idx_last, over the find_users targets of one recorded
run (targets.json). Run from the repository: python idx-last.py TARGETS [N]."""
import json
import sys
import time
import urllib.parse

import pymysql

c = pymysql.connect(unix_socket=".state/replica1/mariadbd.sock", user="root")
cur = c.cursor()
searches = []
for line in open(sys.argv[1]):
    u = urllib.parse.urlparse(json.loads(line)["url"])
    if u.path.endswith("find_users"):
        q = dict(urllib.parse.parse_qsl(u.query))
        searches.append((q["first_name"], q["last_name"]))
searches = searches[:int(sys.argv[2]) if len(sys.argv) > 2 else 500]


def handler_reads() -> int:
    cur.execute("SHOW SESSION STATUS LIKE 'Handler_read%'")
    return sum(int(r[1]) for r in cur.fetchall())


for index in ("idx_first_last", "idx_last", "idx_first_last"):
    rows = 0
    began = time.process_time()
    wall = time.monotonic()
    for first, last in searches:
        r0 = handler_reads()
        cur.execute("SELECT first_name FROM bench_idx.accounts FORCE INDEX (idx_first_last) WHERE first_name LIKE %s "
                    "GROUP BY first_name LIMIT 301", (first + "%",))
        names = [r[0] for r in cur.fetchall()]
        if names:
            marks = ",".join(["%s"] * len(names))
            cur.execute(f"SELECT id, first_name, last_name, city, birth_date FROM bench_idx.accounts "
                        f"FORCE INDEX ({index}) WHERE first_name IN ({marks}) AND last_name LIKE %s "
                        "ORDER BY first_name, last_name, id LIMIT 20", (*names, last + "%"))
            cur.fetchall()
        rows += handler_reads() - r0 - 2  # less the SHOW STATUS's own reads? (see below)
    print(f"step 2 via {index:15s} {len(searches)} searches  {rows / len(searches):8.1f} rows read a search  "
          f"{1000 * (time.monotonic() - wall) / len(searches):6.2f} ms a search (wall, client included)", flush=True)
