# needs servers: the 8M native topology; run from the repository root of a clean clone at the commit measured
# Three more sysbench shapes the suite did not write, each in one 5-minute live window at 300 transactions/s under
# ROW FULL (`apply-capacity --live 300s --replica replica1`: replica1 held and drained, replica2 following), its
# binlog profiled and priced by the model alone (`model predict --profile`, the report campaign's model, which prices
# a foreign table as bench_idx), as own-fit-20261203/drive-more.sh did for three shapes; and write_only again, the
# control: the same shape as there, in this session. Shapes: write_only (control; 4 tables of 200,000 rows),
# multi_update (oltp_write_only with 4 indexed and 4 non-indexed updates a transaction, no delete/insert),
# insert (oltp_insert: one new row a transaction, auto-increment), nopk_write_only (oltp_write_only on tables whose id
# is a secondary key, no primary key: InnoDB's hidden row id clusters them).
STATE=${REPLBENCH_STATE:-.state}; S=$STATE/master/mariadbd.sock; OUT=results/readme-assets/shapes-interval-20261203
q() { mariadb -S "$1" -uroot -N -e "$2"; }
SB="--db-driver=mysql --mysql-socket=$S --mysql-user=root"
TABLES="--tables=4 --table-size=200000"
for db in sbtest sbtest_s; do
  if [ "$(q $S "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='$db'")" != 4 ]; then
    q $S "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
    extra=""; [ $db = sbtest_s ] && extra="--secondary=on"
    sysbench oltp_write_only $SB --mysql-db=$db $TABLES $extra prepare > $OUT/prepare-$db.txt 2>&1
  fi
done
for cell in write_only-300 multi_update-300 insert-300 nopk_write_only-300; do
  shape=${cell%%-*}
  case $shape in
    write_only) args="oltp_write_only --mysql-db=sbtest $TABLES";;
    multi_update) args="oltp_write_only --mysql-db=sbtest $TABLES --index_updates=4 --non_index_updates=4 --delete_inserts=0";;
    insert) args="oltp_insert --mysql-db=sbtest $TABLES";;
    nopk_write_only) args="oltp_write_only --mysql-db=sbtest_s $TABLES --secondary=on";;
  esac
  q $S "FLUSH BINARY LOGS"
  t=$(q $S "SELECT @@gtid_binlog_pos")
  for r in replica1 replica2; do q $STATE/$r/mariadbd.sock "SELECT MASTER_GTID_WAIT('$t', 900)" > /dev/null; done
  first=$(q $S "SHOW MASTER STATUS" | cut -f1)
  ./run.sh apply-capacity --live 300s --replica replica1 > $OUT/live-$cell.txt 2> $OUT/live-$cell.err &
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
  ./run.sh model predict --profile $OUT/profile-$cell.json --setting ROW-FULL > $OUT/predict-$cell-model.txt 2>&1
done
