# needs servers: the 8M native topology; run from the repository root of a clean clone at the commit measured
# Two sysbench shapes the suite did not write, each at two rates (150 and 300 transactions/s), one 5-minute live
# window each (apply-capacity --live 300s --replica replica1, replica2 left following), interleaved
# write_only@300, update_non_index@150, write_only@150, update_non_index@300; each window's binlog profiled; the
# master's and replica2's CPU read by hand from /proc over sysbench's run beside the command's own reading.
STATE=${REPLBENCH_STATE:-.state}; S=$STATE/master/mariadbd.sock; OUT=results/readme-assets/own-fit-20261203
q() { mariadb -S "$1" -uroot -N -e "$2"; }
ticks() { awk '{print $14 + $15}' /proc/$(cat $STATE/$1/mariadbd.pid)/stat; }
SB="--db-driver=mysql --mysql-socket=$S --mysql-user=root"
q $S "CREATE DATABASE IF NOT EXISTS sbtest_u"
[ "$(q $S "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='sbtest_u'")" = 1 ] || \
  sysbench oltp_update_non_index $SB --mysql-db=sbtest_u --tables=1 --table-size=1000000 prepare > $OUT/prepare-update.txt 2>&1
for cell in write_only-300 update_non_index-150 write_only-150 update_non_index-300; do
  shape=${cell%-*}; rate=${cell##*-}
  if [ $shape = write_only ]; then args="oltp_write_only --mysql-db=sbtest --tables=4 --table-size=200000"
  else args="oltp_update_non_index --mysql-db=sbtest_u --tables=1 --table-size=1000000"; fi
  q $S "FLUSH BINARY LOGS"
  t=$(q $S "SELECT @@gtid_binlog_pos")
  for r in replica1 replica2; do q $STATE/$r/mariadbd.sock "SELECT MASTER_GTID_WAIT('$t', 900)" > /dev/null; done
  first=$(q $S "SHOW MASTER STATUS" | cut -f1)
  ./run.sh apply-capacity --live 300s --replica replica1 > $OUT/live-$cell.txt 2> $OUT/live-$cell.err &
  pid=$!
  until grep -q "of the window" $OUT/live-$cell.err 2>/dev/null; do sleep 0.2; done
  m0=$(ticks master); r0=$(ticks replica2); s0=$(date +%s.%N)
  sysbench $args $SB --threads=4 --rate=$rate --time=298 run > $OUT/sysbench-$cell.txt 2>&1
  q $S "SELECT MASTER_GTID_WAIT('$(q $S "SELECT @@gtid_binlog_pos")', 60)" > /dev/null
  q $STATE/replica2/mariadbd.sock "SELECT MASTER_GTID_WAIT('$(q $S "SELECT @@gtid_binlog_pos")', 60)" > /dev/null
  m1=$(ticks master); r1=$(ticks replica2); s1=$(date +%s.%N)
  echo "$cell master_ticks $((m1 - m0)) replica2_ticks $((r1 - r0)) seconds $(echo "$s1 - $s0" | bc)" >> $OUT/by-hand.txt
  wait $pid
  folder=$(grep "→" $OUT/live-$cell.err | sed 's|.*/||')
  mkdir -p $OUT/live-$cell && cp results/apply-capacity/$folder/apply.json results/apply-capacity/$folder/window.csv $OUT/live-$cell/
  last=$(q $S "SHOW MASTER STATUS" | cut -f1)
  rm -rf /tmp/own-$cell && mkdir -p /tmp/own-$cell
  for f in $(sed 's|^\./||' $STATE/master/data/binlog.index | awk -v a="$first" -v b="$last" '$0>=a && $0<=b'); do
    cp $STATE/master/data/$f /tmp/own-$cell/
  done
  ./run.sh profile /tmp/own-$cell/* --out $OUT/profile-$cell.json > $OUT/profile-$cell.txt 2>&1
done
for shape in write_only update_non_index; do
  for pair in 150:300 300:150; do
    fit=${pair%:*}; at=${pair#*:}
    ./run.sh model predict --profile $OUT/profile-$shape-$at.json --setting ROW-FULL \
      --own-runs $OUT/live-$shape-$fit/apply.json > $OUT/predict-$shape-$at-from-$fit.txt 2>&1
  done
  ./run.sh model predict --profile $OUT/profile-$shape-300.json --setting ROW-FULL > $OUT/predict-$shape-300-model.txt 2>&1
  ./run.sh model predict --profile $OUT/profile-$shape-150.json --setting ROW-FULL > $OUT/predict-$shape-150-model.txt 2>&1
done
