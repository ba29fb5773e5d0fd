#!/bin/bash
# needs servers: the 8M native topology during the study (run beside it); writes pool-by-hand.txt
# every 20 s: each node's buffer pool size and its reads from disk / read requests (by hand, beside the study)
STATE=${REPLBENCH_STATE:-.state}; FLAG=${1:?a file that exists while the study runs}
while test -e "$FLAG"; do
  for n in master replica1 replica2; do
    v=$(mariadb -S $STATE/$n/mariadbd.sock -uroot -N -e "SELECT @@innodb_buffer_pool_size, (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME='INNODB_BUFFER_POOL_READS'), (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME='INNODB_BUFFER_POOL_READ_REQUESTS'), @@gtid_current_pos" 2>/dev/null | tr '\t' ' ')
    echo "$(date +%H:%M:%S) $n $v"
  done
  sleep 20
done
