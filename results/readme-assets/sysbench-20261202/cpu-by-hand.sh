# needs servers: the 8M native topology up with sysbench's sbtest tables prepared (4 × 200,000 rows); run from the repository root
cpu() { for n in master replica1 replica2; do p=$(cat .state/$n/mariadbd.pid); awk '{print $14+$15}' /proc/$p/stat; done | paste -sd' '; }
S=.state/master/mariadbd.sock
a=$(cpu); t0=$(date +%s.%N); sleep 20; b=$(cpu); t1=$(date +%s.%N)
g0=$(mariadb -S $S -uroot -N -e "SELECT @@gtid_binlog_pos")
sysbench oltp_write_only --db-driver=mysql --mysql-socket=$S --mysql-user=root --mysql-db=sbtest --tables=4 --table-size=200000 --threads=4 --rate=100 --time=60 run > /tmp/sb2.log 2>&1
for r in 2 3; do mariadb -S .state/master/mariadbd.sock -uroot -N -e "SELECT 1" >/dev/null; done
target=$(mariadb -S $S -uroot -N -e "SELECT @@gtid_binlog_pos")
for n in replica1 replica2; do mariadb -S .state/$n/mariadbd.sock -uroot -N -e "SELECT MASTER_GTID_WAIT('$target', 60)" >/dev/null; done
c=$(cpu); t2=$(date +%s.%N)
echo "idle $a -> $b over $(echo "$t1 - $t0" | bc) s; run $b -> $c over $(echo "$t2 - $t1" | bc) s; gtid $g0 -> $target"
grep -E "transactions:" /tmp/sb2.log
