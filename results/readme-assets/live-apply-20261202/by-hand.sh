# needs servers: the 8M native topology up with sysbench's sbtest tables prepared (4 × 200,000 rows); run from the repository root
# One replica timed by hand on a live window, with none of replbench's code: both replicas' SQL threads held while
# sysbench writes to the master for WINDOW seconds, then replica1 alone applies up to the master's position
# (MASTER_GTID_WAIT), its CPU from /proc (ticks of 10 ms), its idle over 5 s with the SQL thread stopped, just before.
STATE=${REPLBENCH_STATE:-.state}; WINDOW=${WINDOW:-300}; RATE=${RATE:-100}
S=$STATE/master/mariadbd.sock; R1=$STATE/replica1/mariadbd.sock; R2=$STATE/replica2/mariadbd.sock
q() { mariadb -S "$1" -uroot -N -e "$2"; }
cpu() { awk '{print $14+$15}' /proc/$(cat $STATE/replica1/mariadbd.pid)/stat; }
q $R1 "STOP SLAVE SQL_THREAD"; q $R2 "STOP SLAVE SQL_THREAD"
from=$(q $R1 "SELECT @@gtid_slave_pos")
sysbench oltp_write_only --db-driver=mysql --mysql-socket=$S --mysql-user=root --mysql-db=sbtest --tables=4 \
  --table-size=200000 --threads=4 --rate=$RATE --time=$WINDOW run > /tmp/by-hand-sysbench.log 2>&1
target=$(q $S "SELECT @@gtid_binlog_pos")
c0=$(cpu); sleep 5; c1=$(cpu)
t0=$(date +%s.%N); q $R1 "START SLAVE SQL_THREAD"; got=$(q $R1 "SELECT MASTER_GTID_WAIT('$target', 1800)"); t1=$(date +%s.%N)
c2=$(cpu)
q $R2 "START SLAVE SQL_THREAD"; q $R2 "SELECT MASTER_GTID_WAIT('$target', 1800)" >/dev/null
trx=$(( $(echo "$target" | tr ',' '\n' | awk -F- '$1==0{print $3}') - $(echo "$from" | tr ',' '\n' | awk -F- '$1==0{print $3}') ))
secs=$(echo "$t1 - $t0" | bc -l)
echo "from $from target $target wait=$got"
echo "replica1 applied $trx trx in $secs s = $(echo "$trx / $secs" | bc -l | cut -c1-8) trx/s"
echo "cpu ticks idle $c0 -> $c1 (5 s), drain $c1 -> $c2: net $(echo "(($c2 - $c1) - ($c1 - $c0) / 5 * $secs) * 10 / $trx" | bc -l | cut -c1-6) CPU-ms per trx"
grep -E "transactions:" /tmp/by-hand-sysbench.log
