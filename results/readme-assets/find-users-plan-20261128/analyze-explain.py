# needs servers: a running replbench topology at 8M (.state/NODE/mariadbd.sock, from the repository's root) and a
# recorded run's targets (TARGETS), which git does not keep
"""By hand: EXPLAIN of step 2 for 60 searches of one recorded run on a replica, after 0..N-1 ANALYZE TABLE runs (not
binlogged), with the sampled n_diff_pfx01 of both name indexes. Run from the repository: python analyze-explain.py
NODE TARGETS ROUNDS."""
import collections
import json
import sys
import urllib.parse
from typing import Any

import pymysql

node = sys.argv[1]
path = sys.argv[2]
rounds = int(sys.argv[3])
c = pymysql.connect(unix_socket=f".state/{node}/mariadbd.sock", user="root", autocommit=True)
cur = c.cursor()
cur.execute("set session sql_log_bin=0")
qs = []
for line in open(path):
    t = json.loads(line)
    u = urllib.parse.urlparse(t["url"])
    if u.path.endswith("find_users"):
        q = dict(urllib.parse.parse_qsl(u.query))
        qs.append((q["first_name"], q["last_name"]))
    if len(qs) >= 60:
        break
prepared = []
for first, last in qs:
    cur.execute("SELECT first_name FROM bench_idx.accounts WHERE first_name LIKE %s GROUP BY first_name LIMIT 301",
                (first + "%",))
    names = [r[0] for r in cur.fetchall()]
    if names:
        prepared.append((names, last))
for r in range(rounds):
    if r:
        cur.execute("analyze table bench_idx.accounts")
        cur.fetchall()
    cur.execute("select index_name, stat_value from mysql.innodb_index_stats where database_name='bench_idx' "
                "and stat_name='n_diff_pfx01' and index_name in ('idx_first_last','idx_last')")
    st = dict(cur.fetchall())
    keys: collections.Counter[tuple[Any, Any]] = collections.Counter()
    for names, last in prepared:
        marks = ",".join(["%s"] * len(names))
        cur.execute(f"EXPLAIN SELECT id, first_name, last_name, city, birth_date FROM bench_idx.accounts WHERE "
                    f"first_name IN ({marks}) AND last_name LIKE %s ORDER BY first_name, last_name, id LIMIT 20",
                    (*names, last + "%"))
        row = cur.fetchone()
        keys[(row[5], row[9])] += 1
    print(r, st, dict(keys), flush=True)
