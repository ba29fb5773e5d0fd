# needs servers: the 8M native topology; run from the repository root of a clean clone at the commit measured
# Two sysbench workloads the suite did not write, one 5-minute window each at 300 transactions/s: measured live on
# replica1 (apply-capacity --live --replica replica1) and replayed from the window's binlog on replica2 (held at
# the window's start), then the window's binlog profiled and priced (profile, model predict --profile).
STATE=${REPLBENCH_STATE:-.state}; S=$STATE/master/mariadbd.sock; OUT=results/readme-assets/shapes-20261202
q() { mariadb -S "$1" -uroot -N -e "$2"; }
SB="--db-driver=mysql --mysql-socket=$S --mysql-user=root"
q $S "CREATE DATABASE IF NOT EXISTS sbtest_u"
sysbench oltp_update_non_index $SB --mysql-db=sbtest_u --tables=1 --table-size=1000000 prepare > $OUT/prepare-update.txt 2>&1
for shape in write_only update_non_index; do
  if [ $shape = write_only ]; then args="oltp_write_only --mysql-db=sbtest --tables=4 --table-size=200000"
  else args="oltp_update_non_index --mysql-db=sbtest_u --tables=1 --table-size=1000000"; fi
  q $S "FLUSH BINARY LOGS"
  t=$(q $S "SELECT @@gtid_binlog_pos")
  for r in replica1 replica2; do q $STATE/$r/mariadbd.sock "SELECT MASTER_GTID_WAIT('$t', 900)" > /dev/null; done
  q $STATE/replica2/mariadbd.sock "STOP SLAVE"
  first=$(q $S "SHOW MASTER STATUS" | cut -f1)
  ./run.sh apply-capacity --live 300s --replica replica1 > $OUT/live-$shape.txt 2> $OUT/live-$shape.err &
  pid=$!
  until grep -q "of the window" $OUT/live-$shape.err 2>/dev/null; do sleep 0.5; done
  sysbench $args $SB --threads=4 --rate=300 --time=299 run > $OUT/sysbench-$shape.txt 2>&1
  wait $pid
  last=$(q $S "SHOW MASTER STATUS" | cut -f1)
  rm -rf /tmp/shape-$shape && mkdir -p /tmp/shape-$shape
  for f in $(sed 's|^\./||' $STATE/master/data/binlog.index | awk -v a="$first" -v b="$last" '$0>=a && $0<=b'); do
    cp $STATE/master/data/$f /tmp/shape-$shape/
  done
  ls -l /tmp/shape-$shape | awk 'NR>1{print $9, $5}' > $OUT/files-$shape.txt
  ./run.sh apply-capacity --binlog /tmp/shape-$shape/* --replica replica2 > $OUT/binlog-$shape.txt 2> $OUT/binlog-$shape.err
  ./run.sh profile /tmp/shape-$shape/* --out $OUT/profile-$shape.json > $OUT/profile-$shape.txt 2>&1
  ./run.sh model predict --profile $OUT/profile-$shape.json > $OUT/predict-$shape.txt 2>&1
done
