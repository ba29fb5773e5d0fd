"""MySQL 8 spelling of every statement the harness sends (not exercised against a MySQL server here: none is
packaged on these machines; these tests check the generated SQL)."""

from __future__ import annotations

import pytest

from replbench.core import sql
from replbench.topology import knobs


@pytest.mark.parametrize("make,mariadb,mysql", [
    (sql.start_replica_sql, "START SLAVE", "START REPLICA"),
    (sql.stop_replica_sql, "STOP SLAVE", "STOP REPLICA"),
    (sql.replica_status_sql, "SHOW SLAVE STATUS", "SHOW REPLICA STATUS"),
    (sql.master_gtid_sql, "SELECT @@gtid_binlog_pos", "SELECT @@gtid_executed"),
    (sql.wait_gtid_sql, "SELECT MASTER_GTID_WAIT(%s, %s)", "SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, %s)"),
    (sql.set_replica_gtid_sql, "SET GLOBAL gtid_slave_pos = %s", "SET GLOBAL gtid_purged = %s"),
    (sql.change_port_sql, "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%s",
     "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=%s"),
])
def test_each_statement_has_its_mysql_8_form(make, mariadb: str, mysql: str) -> None:
    assert make("mariadb") == mariadb and make("mysql") == mysql


def test_change_master_spells_source_for_mysql() -> None:
    statement, args = sql.change_master_sql("mysql", 3306, "repl", "pw")
    assert statement.startswith("CHANGE REPLICATION SOURCE TO SOURCE_HOST") and "SOURCE_AUTO_POSITION=1" in statement
    assert args == (3306, "repl", "pw")
    assert "MASTER_USE_GTID=slave_pos" in sql.change_master_sql("mariadb", 3306, "repl", "pw")[0]


@pytest.mark.parametrize("variable,spelled", [
    ("slave_parallel_threads", "replica_parallel_workers"),
    ("rpl_semi_sync_master_enabled", "rpl_semi_sync_source_enabled"),
    ("rpl_semi_sync_master_wait_point", "rpl_semi_sync_source_wait_point"),
    ("rpl_semi_sync_master_timeout", "rpl_semi_sync_source_timeout"),
    ("rpl_semi_sync_slave_enabled", "rpl_semi_sync_replica_enabled"),
    ("log_bin_compress", "binlog_transaction_compression"),
    ("binlog_annotate_row_events", "binlog_rows_query_log_events"),
    ("sync_binlog", "sync_binlog"),
])
def test_every_knob_variable_has_its_mysql_name(variable: str, spelled: str) -> None:
    assert sql.set_global_sql("mysql", variable) == f"SET GLOBAL {spelled} = %s"
    assert sql.set_global_sql("mariadb", variable) == f"SET GLOBAL {variable} = %s"


def test_a_knob_mysql_lacks_is_refused_not_ignored() -> None:
    assert sql.set_global_sql("mysql", "log_bin_compress_min_len") is None
    assert knobs.mysql_value("mysql", "slave_parallel_mode", "optimistic") == "ON"
    assert sql.status_name("mysql", "Rpl_semi_sync_master_yes_tx") == "Rpl_semi_sync_source_yes_tx"
    assert sql.status_name("mariadb", "Rpl_semi_sync_master_yes_tx") == "Rpl_semi_sync_master_yes_tx"


def test_find_users_server_steps_runs_the_built_statement_in_each_flavour() -> None:
    """MariaDB runs the built text with EXECUTE IMMEDIATE; MySQL 8 has none, so PREPARE/EXECUTE/DEALLOCATE."""
    from app.handlers import server_steps_sql

    mariadb, mysql = server_steps_sql("bench_idx", "mariadb"), server_steps_sql("bench_idx", "mysql")
    assert mariadb.endswith("; EXECUTE IMMEDIATE @replbench_find_users")
    assert mysql.endswith("; PREPARE replbench_find_users FROM @replbench_find_users; EXECUTE replbench_find_users; "
                          "DEALLOCATE PREPARE replbench_find_users")
    assert mariadb.split(";")[0] == mysql.split(";")[0] and mariadb.count("%s") == 7


def test_the_received_position_is_read_in_each_flavour_s_spelling() -> None:
    from replbench.measure.poslag import received_sql

    assert received_sql("mariadb") == "SHOW SLAVE STATUS"
    assert received_sql("mysql") == ("SELECT RECEIVED_TRANSACTION_SET FROM "
                                     "performance_schema.replication_connection_status")
