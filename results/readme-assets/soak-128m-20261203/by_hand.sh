# needs servers: the 8M native topology; run from the repository root of a clean clone at the commit measured
# By hand, beside a 3-minute `soak write-noindex 400 --buffer-pool 128M`: replica1's own counters (SHOW GLOBAL STATUS),
# its /proc/<pid>/io and /proc/<pid>/stat read with the mariadb client and cat at about the soak's 60th and 175th second
# of attack, and the writes it applied between (its gtid_slave_pos in domain 0); printed per write, to set beside the
# soak's windows from 60 s and 120 s (its summary.json). No replbench measurement code.
STATE=${REPLBENCH_STATE:-.state}; OUT=results/readme-assets/soak-128m-20261203/by-hand
mkdir -p $OUT
./run.sh soak write-noindex 400 --duration 180s --window 60s --buffer-pool 128M > $OUT/soak.txt 2>&1 &
read_all() {
  pid=$(cat $STATE/replica1/mariadbd.pid)
  mariadb -S $STATE/replica1/mariadbd.sock -uroot -N -B -e "SHOW GLOBAL STATUS WHERE Variable_name IN
    ('Innodb_buffer_pool_pages_flushed','Innodb_data_written','Innodb_os_log_written'); SELECT 'gtid', @@gtid_slave_pos"
  echo "write_bytes $(awk '/^write_bytes/{print $2}' /proc/$pid/io)"
  echo "ticks $(awk '{print $14 + $15}' /proc/$pid/stat)"
  echo "clock $(date +%s.%N)"
}
# the soak prints its progress every 5 s ("   61/180 s, …"): read at the first line at or past the second asked
at() { until grep -oE " [0-9]+/180 s" $OUT/soak.txt 2>/dev/null | tail -1 | awk -v t=$1 'END {exit !($1+0 >= t)}'; do sleep 0.2; done; }
at 60
read_all > $OUT/at-60.txt
at 175
read_all > $OUT/at-175.txt
wait
