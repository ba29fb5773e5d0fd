# needs servers: the 8M native topology with sysbench's sbtest tables (4 × 200,000 rows); run from the repository root of a clean clone at the commit measured
# One captured window replayed by a replay study (docs/studies.md, "Replay units"): replica1 held at the window's
# first GTID (STOP SLAVE), sysbench oltp_write_only (4 threads, 150 transactions/s, 120 s) against the master, the
# window's binlog files copied aside (captured/, not committed: 30 MB), then `./run.sh study` of three apply settings
# (serial; 4 threads conservative; 4 threads optimistic), two repeats each, interleaved: replica1 kept as it stood
# before the first unit and put back (datadir and buffer pool) before each other.
set -euo pipefail
STATE=${REPLBENCH_STATE:-.state}; S=$STATE/master/mariadbd.sock; OUT=results/readme-assets/replay-study-20261203
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
cat > $OUT/replay.toml <<TOML
description = "one captured sysbench oltp_write_only window (4 tables, 150/s, 120 s) replayed serially and by 4 threads"
question = "How fast does one replica apply this window serially, and with 4 threads conservative or optimistic?"
primary = ["apply_trx_per_s", "apply_ms_per_trx"]
measure = ["replay"]
binlogs = [$files]
repeat = 2
[[cells]]
name = "serial"
[[cells]]
name = "4 conservative"
parallel_threads = 4
parallel_mode = "conservative"
[[cells]]
name = "4 optimistic"
parallel_threads = 4
parallel_mode = "optimistic"
TOML
./run.sh study $OUT/replay.toml > $OUT/study.txt 2> $OUT/study.err
folder=$(sed -n 's/^study folder: //p' $OUT/study.txt)
rm -rf $OUT/study && cp -r "$folder" $OUT/study
grep -h "putting replica1 back at\|keeping replica1" $OUT/study.err >> $OUT/positions.txt || true
rm -rf captured
