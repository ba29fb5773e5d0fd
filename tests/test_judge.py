"""A run judged from what it recorded (analysis/judge): the guards, the saturation and the status they leave, from
a summary and a meta.json alone. Unit tier."""

from __future__ import annotations

from replbench.analysis import judge as judging
from replbench.analysis.judge import RunFacts
from replbench.analysis.rules import CRITERIA_GUARD
from replbench.core.records import STATUS_FAILED, STATUS_OK, STATUS_WARNING
from replbench.core.results import meta_of, summary_of
from replbench.core.scenario import PassCriteria


def judge(summary: dict, meta: dict, facts: RunFacts, status: str) -> tuple[list[str], list[str], str]:
    """analysis/judge.judge over the records of a summary and a meta.json."""
    return judging.judge(summary_of(summary), meta_of(meta), facts, status)


FACTS = RunFacts(criteria=PassCriteria(), rate=100, catch_up_timeout=300.0, cores=2)
CLEAN = {"rate_sent": 100.0, "goodput": 100.0, "server_success": 1.0, "latency_ms": {"p99": 4.0},
         "catch_up_s": {"replica1": 0.02},
         "cpu_mean_percent": {"host_busy": 80.0, "vegeta": 5.0}}


def test_a_clean_run_is_ok_with_no_guard() -> None:
    assert judge(CLEAN, {"settle": {"settled": True}}, FACTS, STATUS_OK) == ([], [], STATUS_OK)


def test_each_warning_is_a_guard_and_turns_ok_into_a_warning() -> None:
    summary = {**CLEAN, "rate_sent": 90.0, "goodput": 90.0, "cpu_mean_percent": {"host_busy": 195.0, "vegeta": 95.0},
               "catch_up_s": {"replica1": 45.0, "replica2": None}, "lag": {"replica2": {"growth_s_per_s": 0.5}},
               "replicas_not_replicating": ["replica2"]}
    meta = {"settle": {"settled": False, "waited_s": 15.0, "why": ["host 120 % busy"]},
            "knob_mismatches": ["binlog_format on replica1: MIXED"]}
    guards, saturation, status = judge(summary, meta, RunFacts(**{**FACTS.__dict__, "planned_nodes":
                                                                  frozenset({"replica2"})}), STATUS_OK)
    assert status == STATUS_WARNING
    assert saturation == ["host CPU saturated (195 % of 200 %)", "vegeta at 95 % of a core"]
    assert guards == [
        f"{CRITERIA_GUARD}: goodput 90.0/s < 99% of 100/s",
        f"{CRITERIA_GUARD}: replica2's lag grew 0.5 s per s (limit 0.01: falling behind)",
        "host CPU saturated (195 % of 200 %): latencies include queueing for CPU; the numbers describe this box, "
        "not only the database",
        "vegeta at 95 % of a core: the load generator competes for CPU",
        "replica2 was not replicating during the run (a planned fault)",
        "started unsettled after 15 s: host 120 % busy (the previous work may still cost CPU in this run)",
        "setting not in effect: binlog_format on replica1: MIXED",
        f"{CRITERIA_GUARD}: replica1 caught up 45.0 s after the last request was sent (limit 30 s)",
        "replica2 did not catch up within 300 s; lag grew 0.50 s per s during the attack"]


def test_diverged_replicas_or_an_error_fail_the_run() -> None:
    diverged = {**CLEAN, "consistency": {"equal": False, "scope": "rows", "missing": ["replica2"]}}
    guards, _, status = judge(diverged, {}, FACTS, STATUS_OK)
    assert guards == ["the written rows' checksum differs between nodes after catch-up: replicas diverged — RUN "
                      "FAILED", "consistency checked without replica2 (not answering)"]
    assert status == STATUS_WARNING  # the consistency check itself set FAILED where it ran (experiments/run)
    guards, _, status = judge(CLEAN, {}, RunFacts(**{**FACTS.__dict__, "errors": ("run: OSError: gone",)}),
                              STATUS_OK)
    assert guards == ["error: run: OSError: gone"] and status == STATUS_FAILED


def test_a_replica_reading_thousands_of_rows_per_search_trips_the_read_guard() -> None:
    """find_users on bench_idx reads tens of rows a search on idx_first_last; a replica that read thousands per read
    ran another plan (idx_last's last-name range), so its read figures are not the scenario's. Only where the
    scenario searched the indexed table with long prefixes and the node had the index."""
    having = {"nodes": {n: {"PRIMARY": ["id"], "idx_first_last": ["first_name", "last_name"]}
                        for n in ("replica1", "replica2")}}
    summary = {**CLEAN, "served_by": {"master": 600, "replica1": 2700, "replica2": 2700},
               "replication": {"nodes": {"master": {"rows_read": 1100}, "replica1": {"rows_read": 2700 * 38},
                                         "replica2": {"rows_read": 2700 * 5900}}}}
    meta = {"settle": {"settled": True}, "indexes": having}
    searched = RunFacts(**{**FACTS.__dict__, "searched": "bench_idx"})
    guards, _, status = judge(summary, meta, searched, STATUS_OK)
    assert guards == ["replica2 read 5,900 rows per read it served, above 1,000 (find_users' plan on idx_first_last "
                      "reads tens): its reads were not the designed ones"] and status == STATUS_WARNING
    assert judge(summary, meta, FACTS, STATUS_OK)[0] == []  # no indexed search in the scenario
    assert judge(summary, meta, RunFacts(**{**FACTS.__dict__, "searched": "bench_noidx"}), STATUS_OK)[0] == []
    without = {"nodes": {**having["nodes"], "replica2": {"PRIMARY": ["id"]}}}  # a per-index cell without it
    assert judge(summary, {**meta, "indexes": without}, searched, STATUS_OK)[0] == []
