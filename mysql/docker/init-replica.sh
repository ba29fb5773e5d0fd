#!/bin/bash
# Docker entrypoint init step (compose replicas only): replicate from the master over GTID (slave_pos), as the
# native topology does. Replicas are initialised with the same schema and users, so replication starts empty.
set -eu
docker_process_sql <<SQL
CHANGE MASTER TO MASTER_HOST='master', MASTER_PORT=3306, MASTER_USER='repl',
  MASTER_PASSWORD='${REPLBENCH_REPL_PASSWORD}', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1;
START SLAVE;
SQL
