"""A run's summary figures from recorded data, against values computed by hand (no database: the summary is a
pure function of what the run recorded)."""

from __future__ import annotations

from replbench.analysis import summary
from replbench.core import results
from replbench.core.results import (
    AttackCpu,
    Latency,
    RunSummary,
    StudyCell,
    StudyUnit,
    VegetaReport,
    study_of,
    summary_of,
)
from replbench.measure.counters import NodeCounters, describe
from replbench.measure.timeline import Timeline

# vegeta's report.json, with a key of vegeta's the summary does not use (ignored, not refused)
REPORT = VegetaReport.model_validate({
    "requests": 1000, "success": 0.998, "rate": 100.004, "throughput": 99.61,
    "latencies": {"min": 1e6, "mean": 2e6, "50th": 1.5e6, "90th": 3e6, "95th": 4e6, "99th": 9e6, "max": 2e7},
    "status_codes": {"200": 998, "503": 2}, "errors": ["503 Service Unavailable"], "duration": 10e9,
    "bytes_in": {"total": 0, "mean": 0}})


def node(trx: int, rows: float, beats: int, replica: bool = False) -> NodeCounters:
    status = {"Handler_update": rows + beats, "Innodb_data_fsyncs": trx, "Binlog_commits": trx,
              "Binlog_group_commits": trx / 2}
    if replica:  # MariaDB's userstat figure for the application's tables
        status["app_rows_changed"] = rows
    return NodeCounters(status, {0: trx, 99: beats}, write_bytes=1024 * trx)


def test_rows_changed_come_from_userstats_table_figures_not_the_handler_counters_less_the_beats() -> None:
    # a heartbeat caught between the handler counters and the GTID position: its Handler_update is in the closing
    # snapshot, its seq_no not yet; the handler count less the beats would say 1001 rows (docs/metrics.md)
    before = NodeCounters({"Handler_update": 50.0, "app_rows_changed": 7.0}, {0: 0, 99: 40})
    after = NodeCounters({"Handler_update": 50.0 + 1000 + 11, "app_rows_changed": 1007.0}, {0: 10, 99: 50})
    assert describe({"master": before}, {"master": after}, 2.0, 0, 10)["nodes"]["master"]["rows_changed"] == 1000
    without = {"master": NodeCounters({"Handler_update": 50.0}, {0: 0, 99: 40})}
    assert describe(without, {"master": NodeCounters({"Handler_update": 1061.0}, {0: 10, 99: 50})}, 2.0, 0,
                    10)["nodes"]["master"]["rows_changed"] == 1001  # MySQL: no userstat, the handler's count


def test_the_clients_figures() -> None:
    tl = Timeline(outcomes={"update_user": {"200": 996, "503": 2}}, client_errors=2, served={"master": 996})
    got = summary.client(REPORT, tl)
    assert got.successes == 998 and got.rate_sent == 100.0 and got.goodput == 99.61
    assert got.server_success == round(998 / 998, 6)  # the 2 client-side errors are not the server's
    assert got.latency_ms == Latency(min=1.0, mean=2.0, p50=1.5, p90=3.0, p95=4.0, p99=9.0, max=20.0)
    assert got.model_fields_set == {"served_by", "requests", "successes", "rate_sent", "goodput", "success",
                                    "server_success", "client_errors", "status_codes", "errors_seen", "outcomes",
                                    "latency_ms"}  # the client's keys, and only those
    assert summary.writes_of(tl) == 996


def test_the_servers_figures_per_request_and_per_write() -> None:
    before = {"app": 1.0, "master": 2.0, "replica1": 1.0, "replica2": 1.0, "host_busy": 10.0}
    after = {"app": 1.5, "master": 3.0, "replica1": 1.4, "replica2": 1.6, "host_busy": 14.0}
    rows = [{"elapsed_s": float(t), "app": 50.0, "master": 100.0} for t in range(0, 13)]
    w = summary.Window(
        t_start=1.0, t_end=11.0, cpu_before=before, cpu_after=after, attack_cpu_s=AttackCpu(vegeta=0.25),
        harness_cpu_s=0.1234, cpu_rows=rows, memory_rows=[{"elapsed_s": 0.0, "master": 300.0}],
        lag={}, not_replicating=[], nodes_lost=[],
        counters_before={"master": node(0, 0, 0), "replica1": node(0, 0, 0, True), "replica2": None},
        counters_after={"master": node(500, 500, 100), "replica1": node(500, 500, 100, True), "replica2": None},
        heartbeats=100)
    got = summary.servers(w, requests=1000, successes=500, writes=500, sending_s=10.0, databases_here=True,
                          cores=2)
    assert got.cpu_seconds is not None and got.cpu_ms_per_success is not None and got.cpu_ms_per_request is not None
    assert got.cpu_seconds["master"] == 1.0 and got.cpu_seconds["vegeta"] == 0.25
    assert got.cpu_seconds["harness"] == 0.123
    assert got.cpu_ms_per_success["master"] == 2.0 and got.cpu_ms_per_request["master"] == 1.0
    assert got.db_share_of_host == round((1.0 + 0.4 + 0.6) / 4.0, 3)
    assert got.cpu_mean_percent == {"app": 50.0, "master": 100.0}
    assert got.replication is not None and got.replication.nodes is not None
    master = got.replication.nodes["master"]
    assert master is not None
    assert master.transactions == 500 and master.rows_changed == 500  # the heartbeat's rows left out
    assert master.transactions_per_s == 50.0 and master.commits_per_group == 2.0
    assert got.replication.nodes["replica2"] is None  # a node that did not answer loses no other figure
    # no binlog snapshots, no binlog figures; no idle window, no figure net of idle; lag_settled_s not read
    assert not {"binlog", "cpu_seconds_net", "lag_settled_s"} & got.model_fields_set
    assert "idle_fsyncs_per_s" not in master.model_fields_set
    remote = summary.servers(w, requests=1000, successes=0, writes=0, sending_s=10.0, databases_here=False,
                             cores=2)
    assert remote.db_share_of_host is None and remote.cpu_ms_per_success == {}
    assert {"db_share_of_host", "cores"} <= remote.model_fields_set  # None, written null


def test_cpu_net_of_idle_subtracts_what_a_group_burns_with_nothing_but_the_heartbeat() -> None:
    cpu_s = {"master": 2.0, "replica1": 0.5, "vegeta": 1.0}
    # 20 s between the snapshots; idle: the master 5 % of a core, replica1 3 %, vegeta not running then
    got = summary.net_of_idle(cpu_s, {"master": 0.05, "replica1": 0.03}, 20.0, ["master", "replica1", "vegeta"],
                              requests=1000, successes=500)
    assert got.cpu_seconds_net == {"master": 1.0, "replica1": 0.0, "vegeta": 1.0}  # never below zero
    assert got.cpu_ms_per_success_net == {"master": 2.0, "replica1": 0.0, "vegeta": 2.0}
    assert got.cpu_ms_per_request_net is not None and got.cpu_ms_per_request_net["master"] == 1.0
    assert summary.net_of_idle(cpu_s, {}, 20.0, ["master"], 1000, 500) == RunSummary()  # no idle window, no net figure


def test_a_net_figure_has_the_resolution_of_the_idle_cost_it_subtracts() -> None:
    from replbench.core.stats import net_resolution
    from replbench.measure.cpu import per_second_within
    from replbench.report.block import net_text

    # σ of [0.01, 0.03] is 0.01414; over 20 s with 2 samples: 2 × 0.01414 × sqrt(400 / 2 + 20)
    assert abs(net_resolution([0.01, 0.03], 20.0, 2.0) - 0.41952) < 1e-4
    assert net_resolution([0.02], 20.0, 2.0) is None  # one sample: no spread to estimate
    assert net_resolution([0.02, 0.02, 0.02], 20.0, 2.0) == 0.0
    # the samples wholly inside the idle window [10, 13]: a sample covers the second before its elapsed_s
    rows = [{"elapsed_s": 10.0, "master": 50.0}, {"elapsed_s": 11.0, "master": 1.0},
            {"elapsed_s": 12.0, "master": 3.0}, {"elapsed_s": 13.0, "master": 2.0},
            {"elapsed_s": 14.0, "master": 90.0}]
    assert per_second_within(rows, 10.0, 13.0) == {"master": [0.01, 0.03, 0.02]}
    cpu_s = {"master": 2.0, "replica1": 0.5}
    got = summary.net_of_idle(cpu_s, {"master": 0.02, "replica1": 0.02}, 20.0, ["master", "replica1"],
                              requests=1000, successes=500,
                              idle_per_second={"master": [0.01, 0.03, 0.02], "replica1": [0.02, 0.02, 0.02]})
    # master: 2 × 0.01 × sqrt(400 / 3 + 20) = 0.2477 CPU-s, 0.495 ms over 500 successes; replica1 had no spread
    assert got.cpu_seconds_net_resolution == {"master": 0.2477, "replica1": 0.0}
    assert got.cpu_ms_per_success_net_resolution is not None
    assert got.cpu_ms_per_success_net_resolution["master"] == 0.4954 and got.idle_samples == 3
    assert net_text("master", 0.3, 0.4954) == "master < 0.495" and net_text("master", 3.2, 0.4954) == "master 3.200"
    assert "cpu_seconds_net_resolution" not in summary.net_of_idle(
        cpu_s, {"master": 0.02}, 20.0, ["master"], 1000, 500).model_fields_set  # no samples: no resolution claimed


def test_a_study_cell_below_its_resolution_is_no_cost_and_gives_no_finding() -> None:
    from replbench.analysis.findings import study_findings
    from replbench.analysis.studymetrics import cell_text, compare_cells, unit_metrics

    def run(cpu: float, resolution: float) -> dict:
        return {"binlog": {"successful_writes": 100}, "cpu_seconds": {"master": 1.0, "replica1": cpu + 0.5},
                "cpu_seconds_net": {"master": 0.5, "replica1": cpu},
                "cpu_seconds_net_resolution": {"master": 0.01, "replica1": resolution},
                "replication": {"nodes": {"master": {"transactions": 100}, "replica1": {"transactions": 100}}}}

    # keyed: 0.0-0.01 CPU-s net of idle with a 0.05 resolution (0.5 ms per write); nopk: 0.9-1.1 CPU-s, well above
    units = [{"cell": c, "scenario": "write", "metrics": unit_metrics("run", summary_of(run(cpu, 0.05)))}
             for c, cpus in {"keyed": [0.0, 0.005, 0.01], "nopk": [0.9, 1.0, 1.1]}.items() for cpu in cpus]
    assert units[0]["metrics"].resolution["replica_ms_per_write"] == 0.5
    records = [StudyUnit.model_validate(u) for u in units]
    rows = compare_cells(records, ["keyed", "nopk"])["write"]["replica_ms_per_write"]
    assert rows["keyed"].resolution == 0.5 and cell_text(rows["keyed"]) == "below resolution (< 0.5)"
    # above its resolution: the figure itself, but no ratio to a baseline that cannot be told from zero
    assert cell_text(rows["nopk"]) == "10.0 [9–11.0]" and rows["nopk"].verdict == "n/a"
    # a ratio to a baseline that cannot be told from zero is at most a lower bound (tests/test_answers.py), never a
    # tested ratio; a cell below its resolution gives no finding against any baseline
    assert [f.kind for f in study_findings(study_of({"comparison": compare_cells(records, ["keyed", "nopk"])}),
                                              ["replica_ms_per_write"])] == ["lower bound"]
    assert [f.cell for f in study_findings(study_of({"comparison": compare_cells(records, ["nopk", "keyed"])}),
                                              ["master_ms_per_write", "replica_ms_per_write"])] == []


def test_idle_rates_from_two_snapshots() -> None:
    from replbench.measure.samplers import Snapshot, idle_rates

    first = Snapshot(None, {}, {"master": 10.0, "app": 1.0}, own_cpu=5.0, beats=0, admission={}, at=100.0)
    second = Snapshot(None, {}, {"master": 10.3, "app": 1.0}, own_cpu=5.06, beats=30, admission={}, at=103.0)
    assert idle_rates(first, second) == {"master": 0.1, "app": 0.0, "harness": 0.02}


def test_a_replica_that_never_caught_up_counts_as_did_not_catch_up() -> None:
    from replbench.analysis.studymetrics import cell_text, compare_cells, unit_metrics

    def unit(cell: str, catch: dict) -> StudyUnit:
        return StudyUnit.model_validate({"cell": cell, "scenario": "write",
                                         "metrics": unit_metrics("run", summary_of({"catch_up_s": catch}))})

    units = [unit("a", {"replica1": 0.2, "replica2": 0.3}), unit("a", {"replica1": 0.1, "replica2": 0.2}),
             unit("b", {"replica1": 0.2, "replica2": None}), unit("b", {"replica1": 5.0, "replica2": 6.0})]
    rows = compare_cells(units, ["a", "b"])["write"]["catch_up_s"]
    assert rows["b"].never == 1 and rows["b"].values == [None, 6.0]  # not the 0.2 of the replica that did
    assert cell_text(rows["b"]).endswith("1 of 2 did not catch up")
    assert rows["a"].never == 0 and "did not" not in cell_text(rows["a"])


def test_fsyncs_and_binlog_syncs_net_of_idle_subtract_the_idle_windows_rate_over_the_span() -> None:
    from replbench.measure import counters

    # the idle window: 2 s of the heartbeat alone, 20 InnoDB fsyncs and 20 group commits on the master
    idle_start = {"master": NodeCounters({"Innodb_data_fsyncs": 100.0, "Binlog_group_commits": 50.0}, at=10.0),
                  "replica1": None}
    idle_end = {"master": NodeCounters({"Innodb_data_fsyncs": 120.0, "Binlog_group_commits": 70.0}, at=12.0),
                "replica1": None}
    idle = counters.idle_rates(idle_start, idle_end)
    assert idle["replica1"] is None and idle["master"]["kb_written_per_s"] is None  # no process bytes recorded
    assert {k: v for k, v in idle["master"].items() if v} == {"fsyncs_per_s": 10.0, "binlog_group_commits_per_s": 10.0}
    # the run: 500 writes over 10 s of counters, 500 fsyncs and 250 group commits (sync_binlog=1: 250 syncs)
    w = summary.Window(
        t_start=1.0, t_end=11.0, cpu_before={}, cpu_after={}, attack_cpu_s=AttackCpu(), harness_cpu_s=0.0, cpu_rows=[],
        memory_rows=[], lag={}, not_replicating=[], nodes_lost=[], counters_before={"master": node(0, 0, 0)},
        counters_after={"master": node(500, 500, 100)}, heartbeats=100, seconds=10.0, sync_binlog={"master": 1},
        idle_counters_per_s=idle)
    rep = summary.servers(w, requests=500, successes=500, writes=500, sending_s=10.0, databases_here=True,
                          cores=2).replication
    assert rep is not None and rep.nodes is not None and (master := rep.nodes["master"]) is not None
    assert master.fsyncs_per_write == 1.0 and master.binlog_syncs_per_write == 0.5  # gross, as before
    assert master.innodb_fsyncs_net == 400 and master.fsyncs_per_write_net == 0.8  # 500 − 10/s × 10 s
    assert master.binlog_syncs_net == 150 and master.binlog_syncs_per_write_net == 0.3  # 250 − 10/s × 10 s
    # never below zero; and a run without idle counter rates (recorded before them) gets no net figures
    assert summary.counters_net_of_idle(results.NodeCounters(innodb_fsyncs=5), {
        "fsyncs_per_s": 10.0, "binlog_group_commits_per_s": 0.0}, 10.0, 5).innodb_fsyncs_net == 0
    assert summary.counters_net_of_idle(results.NodeCounters(innodb_fsyncs=5), None, 10.0, 5) == results.NodeCounters()


def test_every_per_write_count_of_a_slow_write_run_is_net_of_the_heartbeat() -> None:
    """Study nopk at 5 writes/s read 3.08 binlog syncs and 3.3 fsyncs a write (5 writes and 10 heartbeats a second):
    net of the idle window, as CPU is, a write costs about one of each, and the pages and bytes too."""
    from replbench.analysis.studymetrics import BY_KEY
    from replbench.core.results import summary_of
    from replbench.measure import counters

    def snap(at: float, commits: float, pages: float, reads: float, kb: float) -> NodeCounters:
        return NodeCounters({"Innodb_data_fsyncs": commits, "Binlog_commits": commits, "Binlog_group_commits": commits,
                             "Innodb_pages_written": pages, "Innodb_buffer_pool_pages_flushed": pages,
                             "Innodb_pages_read": reads, "Innodb_buffer_pool_reads": reads,
                             "Innodb_data_read": 16384 * reads, "Handler_update": commits},
                            {0: 0, 99: 0}, write_bytes=int(1024 * kb), at=at)

    # the idle window, 4 s of the heartbeat alone: 10 commits, 2 pages written and 1 read, 20 KB written a second
    idle = counters.idle_rates({"master": snap(0.0, 0, 0, 0, 0)}, {"master": snap(4.0, 40, 8, 4, 80)})
    # the run, 10 s: 50 writes and 100 heartbeats, one commit each (no group at 5/s); 3 pages written and 2 read a
    # write beside the heartbeat's, 16 KB written a write
    before, after = snap(100.0, 1000, 500, 300, 5000), snap(110.0, 1150, 670, 410, 6000)
    after.seq = {0: 50, 99: 100}
    w = summary.Window(
        t_start=100.0, t_end=110.0, cpu_before={}, cpu_after={}, attack_cpu_s=AttackCpu(), harness_cpu_s=0.0,
        cpu_rows=[],
        memory_rows=[], lag={}, not_replicating=[], nodes_lost=[], counters_before={"master": before},
        counters_after={"master": after}, heartbeats=100, seconds=10.0, sync_binlog={"master": 1},
        idle_counters_per_s=idle)
    rep = summary.servers(w, requests=50, successes=50, writes=50, sending_s=10.0, databases_here=True, cores=2)
    assert rep.replication is not None and rep.replication.nodes is not None
    master = rep.replication.nodes["master"]
    assert master is not None
    assert (master.binlog_syncs_per_write, master.fsyncs_per_write) == (3.0, 3.0)  # gross: the heartbeat's too
    assert (master.binlog_syncs_per_write_net, master.fsyncs_per_write_net) == (1.0, 1.0)
    assert (master.pages_written_per_write_net, master.pool_disk_reads_per_write_net) == (3.0, 2.0)
    assert master.kb_written_per_write_net == 16.0 and master.kb_read_per_write_net == 32.0
    # the study's metrics read the net figures (the gross ones only in a run recorded without idle rates)
    run = summary_of({**rep.model_dump(by_alias=True, exclude_unset=True),
                      "binlog": {"successful_writes": 50, "bytes_per_write": 570.0}})
    assert BY_KEY["binlog_syncs_per_write"].get(run) == 1.0 and BY_KEY["fsyncs_per_write"].get(run) == 1.0
    assert BY_KEY["master_kb_written_per_write"].get(run) == 16.0


def test_binlog_syncs_follow_sync_binlog_and_the_group_commits() -> None:
    assert summary.binlog_syncs(400, 1, 800).model_dump(exclude_unset=True) == {
        "sync_binlog": 1, "binlog_syncs": 400, "binlog_syncs_per_write": 0.5}
    assert summary.binlog_syncs(400, 0, 800).binlog_syncs == 0  # the OS flushes it
    assert summary.binlog_syncs(400, 100, 800).binlog_syncs == 4
    assert summary.binlog_syncs(400, 1, 0).model_dump(exclude_unset=True)["binlog_syncs_per_write"] is None


def test_semi_syncs_commit_cost_is_against_the_same_link_with_semi_sync_off() -> None:
    from replbench.analysis.studymetrics import compare_cells, semi_sync_cost

    def cell(name: str, semi: str, link: str) -> dict:
        changed = {**({"semi_sync": semi} if semi != "off" else {}), **({"link": link} if link != "none" else {})}
        return {"name": name, "knobs": {"semi_sync": semi}, "changed": changed}

    cells = [cell("off-0", "off", "none"), cell("off-20", "off", "r=20ms"), cell("as-0", "after_sync", "none"),
             cell("as-20", "after_sync", "r=20ms")]
    p50 = {"off-0": [1.0, 1.2], "off-20": [1.1, 1.3], "as-0": [1.5, 1.7], "as-20": [21.0, 23.0]}
    units = [StudyUnit.model_validate({"cell": c, "scenario": "write",
                                       "metrics": {"commit_p50_ms": v, "commit_mean_ms": v + 1}})
             for c, vs in p50.items() for v in vs]
    rows = semi_sync_cost([StudyCell.model_validate(c) for c in cells],
                          compare_cells(units, [c["name"] for c in cells]))
    by_cell = {r.cell: r for r in rows}
    assert by_cell["as-20"].baseline == "off-20" and by_cell["as-0"].baseline == "off-0"
    p50_20, p50_0 = by_cell["as-20"].costs["commit_p50_ms"], by_cell["as-0"].costs["commit_p50_ms"]
    assert p50_20 is not None and p50_0 is not None
    assert p50_20.cost_ms == 22.0 - 1.2 and p50_0.cost_ms == round(1.6 - 1.1, 3)
    assert p50_20.verdict == "different"


def test_position_parsing_for_both_flavours() -> None:
    from replbench.measure.poslag import parse_position

    assert parse_position("mariadb", "0-1-100,99-1-7") == {"0": 100, "99": 7}
    assert parse_position("mariadb", "") == {}
    assert parse_position("mysql", "u1:1-5:7-9,\nu2:1-3") == {"u1": 9, "u2": 3}
    assert parse_position("mysql", "u1:4") == {"u1": 4}


def test_position_lag_is_the_age_of_the_oldest_transaction_not_applied() -> None:
    from replbench.measure.poslag import History

    h = History()
    h.add(1.00, {"0": 10, "99": 1})
    h.add(1.01, {"0": 12, "99": 1})  # 11 and 12 first seen at 1.01
    h.add(1.02, {"0": 12, "99": 2})
    assert h.lag_at(1.05, {"0": 12, "99": 2}) == 0  # everything applied
    assert abs(h.lag_at(1.05, {"0": 11, "99": 2}) - 0.04) < 1e-9  # 12 seen at 1.01
    assert abs(h.lag_at(1.05, {"0": 12, "99": 1}) - 0.03) < 1e-9  # the heartbeat's domain counts too
    assert abs(h.lag_at(1.05, {"0": 9, "99": 2}) - 0.05) < 1e-9  # behind the first read: its time is the bound
    assert h.lag_at(1.05, {"0": 13, "99": 2}) == 0  # ahead of the master's last read


def test_lag_growth_is_the_fitted_slope() -> None:
    from replbench.measure.lag import growth

    assert growth([(0.0, 0.0), (1.0, 500.0), (2.0, 1000.0)]) == 0.5
    assert growth([(0.0, 5.0), (1.0, 5.0)]) is None


def test_a_mix_of_updates_checks_each_row_by_its_own_kind() -> None:
    from replbench.core.scenario import load
    from replbench.measure.rowcheck import _changed, checked_columns, column_sets

    mix = load("write-mix")
    assert column_sets(mix) == (("first_name", "last_name", "city"), ("interests",))
    assert checked_columns(mix) == ("first_name", "last_name", "city", "interests")
    sets = [[0, 1, 2], [3]]
    assert _changed(("a", "b", "c", "x"), ("d", "e", "f", "x"), sets)  # an update_user row
    assert _changed(("a", "b", "c", "x"), ("a", "b", "c", "y"), sets)  # an update_users row
    assert not _changed(("a", "b", "c", "x"), ("a", "e", "f", "x"), sets)  # first_name kept: not what it says
    assert column_sets(load("write")) == (("first_name", "last_name", "city"),)
