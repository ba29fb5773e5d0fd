# needs servers: the 8M native topology; run from the repository root of a clean clone at the commit measured
# After drive.sh: a third shape (oltp_update_index: the indexed k of sbtest's 4 tables) at 300 transactions/s under
# ROW FULL; then each of the two first shapes' live window at 300 transactions/s under ROW MINIMAL
# (--binlog-row-image MINIMAL on the master and the held replica), its binlog profiled: its own bytes (measured)
# against what the FULL window's profile estimated for MINIMAL, and its sheet priced with --own-runs of itself and of
# the FULL window (another setting: the model's price, said so).
STATE=${REPLBENCH_STATE:-.state}; S=$STATE/master/mariadbd.sock; OUT=results/readme-assets/own-fit-20261203
q() { mariadb -S "$1" -uroot -N -e "$2"; }
SB="--db-driver=mysql --mysql-socket=$S --mysql-user=root"
for cell in update_index-300 write_only-300-minimal update_non_index-300-minimal; do
  shape=${cell%%-*}; image=FULL; [ "${cell##*-}" = minimal ] && image=MINIMAL
  case $shape in
    write_only) args="oltp_write_only --mysql-db=sbtest --tables=4 --table-size=200000";;
    update_index) args="oltp_update_index --mysql-db=sbtest --tables=4 --table-size=200000";;
    *) args="oltp_update_non_index --mysql-db=sbtest_u --tables=1 --table-size=1000000";;
  esac
  q $S "FLUSH BINARY LOGS"
  t=$(q $S "SELECT @@gtid_binlog_pos")
  for r in replica1 replica2; do q $STATE/$r/mariadbd.sock "SELECT MASTER_GTID_WAIT('$t', 900)" > /dev/null; done
  first=$(q $S "SHOW MASTER STATUS" | cut -f1)
  ./run.sh apply-capacity --live 300s --replica replica1 --binlog-row-image $image > $OUT/live-$cell.txt 2> $OUT/live-$cell.err &
  pid=$!
  until grep -q "of the window" $OUT/live-$cell.err 2>/dev/null; do sleep 0.2; done
  sysbench $args $SB --threads=4 --rate=300 --time=298 run > $OUT/sysbench-$cell.txt 2>&1
  wait $pid
  folder=$(grep "→" $OUT/live-$cell.err | sed 's|.*/||')
  mkdir -p $OUT/live-$cell && cp results/apply-capacity/$folder/apply.json results/apply-capacity/$folder/window.csv $OUT/live-$cell/
  last=$(q $S "SHOW MASTER STATUS" | cut -f1)
  rm -rf /tmp/own-$cell && mkdir -p /tmp/own-$cell
  for f in $(sed 's|^\./||' $STATE/master/data/binlog.index | awk -v a="$first" -v b="$last" '$0>=a && $0<=b'); do
    cp $STATE/master/data/$f /tmp/own-$cell/
  done
  ls -l /tmp/own-$cell | awk 'NR>1{print $9, $5}' > $OUT/files-$cell.txt
  ./run.sh profile /tmp/own-$cell/* --out $OUT/profile-$cell.json > $OUT/profile-$cell.txt 2>&1
  if [ $image = FULL ]; then
    ./run.sh model predict --profile $OUT/profile-$cell.json --setting ROW-FULL > $OUT/predict-$cell-model.txt 2>&1
    continue
  fi
  ./run.sh model predict --profile $OUT/profile-$cell.json --setting ROW-MINIMAL \
    --own-runs $OUT/live-$cell/apply.json > $OUT/predict-$cell.txt 2>&1
  ./run.sh model predict --profile $OUT/profile-$shape-300.json --setting ROW-MINIMAL \
    --own-runs $OUT/live-$shape-300/apply.json > $OUT/predict-$shape-300-as-minimal.txt 2>&1
done
./run.sh apply-capacity --live 1s --replica replica1 > /dev/null 2>&1 || true  # the reference settings back (nothing writes: fails in one line)
