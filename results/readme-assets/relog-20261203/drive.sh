# needs servers: the 8M native topology with sysbench's sbtest tables (4 × 200,000 rows); run from the repository root of a clean clone at the commit measured
# One captured FULL window, its other row images measured by a re-logging replica (docs/apply-capacity.md, "Other
# row images"): replica1 held at the window's first GTID (STOP SLAVE), sysbench oltp_write_only (4 threads, 150
# transactions/s, 120 s) against the master, the window's binlog copied aside (captured/, not committed), then
# `./run.sh study` of three cells, the files re-logged by replica1 under FULL, MINIMAL and NOBLOB and then replayed
# (serial apply), three repeats each, interleaved. by_hand.sh then decodes the files with mariadb-binlog alone.
set -euo pipefail
STATE=${REPLBENCH_STATE:-.state}; S=$STATE/master/mariadbd.sock; OUT=results/readme-assets/relog-20261203
q() { mariadb -S "$1" -uroot -N -e "$2"; }
./run.sh up > /dev/null
q $S "FLUSH BINARY LOGS"  # the window in files of its own
t=$(q $S "SELECT @@gtid_binlog_pos")
for r in replica1 replica2; do q $STATE/$r/mariadbd.sock "SELECT MASTER_GTID_WAIT('$t', 600)" > /dev/null; done
q $STATE/replica1/mariadbd.sock "STOP SLAVE"
echo "replica1 held at $(q $STATE/replica1/mariadbd.sock 'SELECT @@gtid_slave_pos')" > $OUT/positions.txt
first=$(q $S "SHOW MASTER STATUS" | cut -f1)
sysbench oltp_write_only --db-driver=mysql --mysql-socket=$S --mysql-user=root --mysql-db=sbtest --tables=4 \
  --table-size=200000 --threads=4 --rate=150 --time=120 run > $OUT/sysbench.txt 2>&1
q $S "FLUSH BINARY LOGS"
last=$(q $S "SHOW MASTER STATUS" | cut -f1)
rm -rf captured && mkdir captured
for f in $(sed 's|^\./||' $STATE/master/data/binlog.index | awk -v a="$first" -v b="$last" '$0>=a && $0<b'); do
  cp $STATE/master/data/$f captured/
done
files=$(ls captured | sed 's|^|"captured/|; s|$|"|' | paste -sd, -)
echo "files: $(ls captured | paste -sd' ')" >> $OUT/positions.txt
cat > $OUT/relog.toml <<TOML
description = "one captured sysbench oltp_write_only window (4 tables, 150/s, 120 s, ROW FULL) and its re-logs"
question = "What would MINIMAL and NOBLOB write for this window, and what would the replica's apply cost?"
primary = ["replay_binlog_bytes_per_trx", "apply_trx_per_s", "apply_ms_per_trx"]
measure = ["replay"]
binlogs = [$files]
repeat = 3
[[cells]]
name = "FULL (re-logged)"
binlog_row_image = "FULL"
[[cells]]
name = "MINIMAL (re-logged)"
binlog_row_image = "MINIMAL"
[[cells]]
name = "NOBLOB (re-logged)"
binlog_row_image = "NOBLOB"
TOML
./run.sh study $OUT/relog.toml > $OUT/study.txt 2> $OUT/study.err
folder=$(sed -n 's/^study folder: //p' $OUT/study.txt)
grep -h "putting replica1 back at\|keeping replica1\|re-logs the files" $OUT/study.err >> $OUT/positions.txt || true
bash $OUT/by_hand.sh "$folder" > $OUT/by_hand.txt 2>&1
rm -rf $OUT/study && cp -r "$folder" $OUT/study && find $OUT/study -path '*/relogged/*' -delete
rm -rf captured
