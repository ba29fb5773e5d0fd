# needs servers: the 8M native topology; run from the repository root of a clean clone at the commit measured
# Interleaved: apply-capacity --live over sysbench oltp_write_only (4 threads, 100 trx/s), then by-hand.sh on the
# same workload, twice. sysbench starts once the live window has opened, and lasts the window.
STATE=${REPLBENCH_STATE:-.state}; S=$STATE/master/mariadbd.sock; OUT=results/readme-assets/live-apply-20261202
for round in 1 2; do
  ./run.sh apply-capacity --live 300s > $OUT/live-$round.txt 2> $OUT/live-$round.err &
  pid=$!
  until grep -q "of the window" $OUT/live-$round.err 2>/dev/null; do sleep 0.5; done
  sysbench oltp_write_only --db-driver=mysql --mysql-socket=$S --mysql-user=root --mysql-db=sbtest --tables=4 \
    --table-size=200000 --threads=4 --rate=100 --time=299 run > $OUT/live-$round-sysbench.txt 2>&1
  wait $pid
  bash $OUT/by-hand.sh > $OUT/by-hand-$round.txt 2>&1
done
