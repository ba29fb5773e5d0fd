-- Users of the topology, created on the master before the replicas are cloned from it.
-- :name placeholders are replaced by quoted values from the configuration (passwords).
-- root keeps its default socket-only authentication: there is no password-less TCP root.
CREATE USER IF NOT EXISTS 'replbench_admin'@'localhost' IDENTIFIED BY :admin_password;
CREATE USER IF NOT EXISTS 'replbench_admin'@'127.0.0.1' IDENTIFIED BY :admin_password;
GRANT ALL PRIVILEGES ON *.* TO 'replbench_admin'@'localhost' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO 'replbench_admin'@'127.0.0.1' WITH GRANT OPTION;

CREATE USER IF NOT EXISTS 'repl'@'%' IDENTIFIED BY :repl_password;
GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%';

CREATE USER IF NOT EXISTS 'app_rw'@'%' IDENTIFIED BY :app_password;
GRANT SELECT, INSERT, UPDATE ON bench_idx.* TO 'app_rw'@'%';
GRANT SELECT, INSERT, UPDATE ON bench_noidx.* TO 'app_rw'@'%';
GRANT SELECT, INSERT, UPDATE ON bench_nopk.* TO 'app_rw'@'%';

CREATE USER IF NOT EXISTS 'app_ro'@'%' IDENTIFIED BY :app_password;
GRANT SELECT ON bench_idx.* TO 'app_ro'@'%';
GRANT SELECT ON bench_noidx.* TO 'app_ro'@'%';
GRANT SELECT ON bench_nopk.* TO 'app_ro'@'%';
-- the app's probe reads the heartbeat (lag-aware reads, REPLBENCH_MAX_LAG)
GRANT SELECT ON replbench_meta.heartbeat TO 'app_ro'@'%';
