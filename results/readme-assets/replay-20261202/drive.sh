# needs servers: the 8M native topology with sysbench's sbtest tables (4 × 200,000 rows); run from the repository root of a clean clone at the commit measured
# The same 5-minute window measured twice: live on one replica (apply-capacity --live --replica), and replayed from
# the master's binlog on the other, held at the window's start (STOP SLAVE before it opened); the roles swap in
# round 2. sysbench oltp_write_only, 4 threads, 100 transactions/s, starts once the window has opened.
STATE=${REPLBENCH_STATE:-.state}; S=$STATE/master/mariadbd.sock; OUT=results/readme-assets/replay-20261202
q() { mariadb -S "$1" -uroot -N -e "$2"; }
for round in 1 2; do
  if [ $round = 1 ]; then live=replica1; held=replica2; else live=replica2; held=replica1; fi
  q $S "FLUSH BINARY LOGS"  # the window in files of its own
  t=$(q $S "SELECT @@gtid_binlog_pos")
  for r in replica1 replica2; do q $STATE/$r/mariadbd.sock "SELECT MASTER_GTID_WAIT('$t', 600)" > /dev/null; done
  q $STATE/$held/mariadbd.sock "STOP SLAVE"
  echo "round $round: $held held at $(q $STATE/$held/mariadbd.sock 'SELECT @@gtid_slave_pos')" >> $OUT/positions.txt
  first=$(q $S "SHOW MASTER STATUS" | cut -f1)
  ./run.sh apply-capacity --live 300s --replica $live > $OUT/live-$round.txt 2> $OUT/live-$round.err &
  pid=$!
  until grep -q "of the window" $OUT/live-$round.err 2>/dev/null; do sleep 0.5; done
  sysbench oltp_write_only --db-driver=mysql --mysql-socket=$S --mysql-user=root --mysql-db=sbtest --tables=4 \
    --table-size=200000 --threads=4 --rate=100 --time=299 run > $OUT/live-$round-sysbench.txt 2>&1
  wait $pid
  last=$(q $S "SHOW MASTER STATUS" | cut -f1)
  rm -rf /tmp/replay-$round && mkdir -p /tmp/replay-$round
  for f in $(sed 's|^\./||' $STATE/master/data/binlog.index | awk -v a="$first" -v b="$last" '$0>=a && $0<=b'); do
    cp $STATE/master/data/$f /tmp/replay-$round/
  done
  echo "round $round: files $(ls /tmp/replay-$round | paste -sd' ')" >> $OUT/positions.txt
  ./run.sh apply-capacity --binlog /tmp/replay-$round/* --replica $held > $OUT/binlog-$round.txt 2> $OUT/binlog-$round.err
done
