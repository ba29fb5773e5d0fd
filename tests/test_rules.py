"""Pass and fail as data (analysis/rules): one table, one evaluator. A run's guards, a sweep step's verdict, a study
unit's `passed` and a run's reading above the knee are driven to the same boundary and give the same verdict, naming
the rule that tripped."""

from __future__ import annotations

from typing import Any

import pytest

from replbench.analysis import judge, rules, studymetrics, summary, verdicts
from replbench.core.results import meta_of, summary_of
from replbench.core.scenario import PassCriteria

CRITERIA = PassCriteria()  # success ≥ 99.9 %, goodput ≥ 99 % of asked, p99 ≤ 1 s, lag p99 ≤ 1 s, growth < 0.01
RATE = 400


def run(**changes: Any) -> dict[str, Any]:
    """A run's summary at RATE inside every criterion; `changes` moves one figure."""
    base: dict[str, Any] = {
        "status": "ok", "guards": [], "rate": RATE, "cores": 2, "requests": 4000, "successes": 4000,
        "success": 1.0, "server_success": 1.0, "rate_sent": 400.0, "goodput": 400.0, "duration_s": 10.0,
        "latency_ms": {"p99": 20.0}, "cpu_mean_percent": {"host_busy": 120.0, "vegeta": 20.0},
        "lag": {"replica1": {"p99_ms": 5.0, "growth_s_per_s": 0.0}, "replica2": {"p99_ms": 6.0, "growth_s_per_s": 0.0}},
        "catch_up_s": {"replica1": 0.1, "replica2": 0.1}}
    return {**base, **changes}


def run_guards(s: dict[str, Any]) -> tuple[list[str], str]:
    facts = judge.RunFacts(criteria=CRITERIA, rate=RATE, catch_up_timeout=300.0, cores=2)
    no_guards = {k: v for k, v in s.items() if k != "guards"}
    guards, _, status = judge.judge(summary_of(no_guards), meta_of({}), facts, "ok")
    return guards, status


def verdicts_of(s: dict[str, Any]) -> dict[str, bool]:
    """Pass or fail as each consumer sees it: a run (its status and a criteria guard), a step of three such repeats,
    a study unit."""
    guards, status = run_guards(s)
    return {
        "run": status == "ok" and not any(g.startswith(rules.CRITERIA_GUARD) for g in guards),
        "step": verdicts.step_verdict([summary_of(s)] * 3, CRITERIA, RATE).passed,
        "unit": bool(studymetrics.unit_metrics("run", summary_of({**s, "guards": guards}), CRITERIA).passed),
    }


# (rule, the figure at its limit: passes, just beyond it: fails)
BOUNDARIES = [
    ("min_success", {"server_success": 0.999}, {"server_success": 0.9989}),
    ("min_rate_ratio", {"goodput": 396.0}, {"goodput": 395.9}),
    ("max_p99", {"latency_ms": {"p99": 1000.0}}, {"latency_ms": {"p99": 1000.1}}),
    ("max_lag_p99", {"lag": {"replica1": {"p99_ms": 1000.0, "growth_s_per_s": 0.0}}},
     {"lag": {"replica1": {"p99_ms": 1000.5, "growth_s_per_s": 0.0}}}),
    ("max_lag_growth", {"lag": {"replica1": {"p99_ms": 5.0, "growth_s_per_s": 0.0099}}},
     {"lag": {"replica1": {"p99_ms": 5.0, "growth_s_per_s": 0.01}}}),
]


@pytest.mark.parametrize(("rule", "at", "beyond"), BOUNDARIES, ids=[b[0] for b in BOUNDARIES])
def test_a_run_a_step_and_a_unit_are_judged_alike_at_each_criterions_boundary(rule: str, at: dict[str, Any],
                                                                                 beyond: dict[str, Any]) -> None:
    assert verdicts_of(run(**at)) == {"run": True, "step": True, "unit": True}
    assert verdicts_of(run(**beyond)) == {"run": False, "step": False, "unit": False}
    tripped = rules.judge(summary_of(run(**beyond)), CRITERIA, RATE).tripped
    assert [t.rule for t in tripped] == [rule]  # and it says which rule tripped
    guards, status = run_guards(run(**beyond))
    assert status == "ok-with-warnings" and guards == [f"{rules.CRITERIA_GUARD}: {tripped[0].text}"]


def test_a_replica_that_never_caught_up_fails_the_step_and_the_unit_and_the_run_says_so() -> None:
    late = run(catch_up_s={"replica1": 0.1, "replica2": None})
    got = verdicts_of(late)
    assert got["step"] is False and got["unit"] is False
    guards, status = run_guards(late)
    assert status == "ok-with-warnings" and guards[0].startswith("replica2 did not catch up within 300 s")
    assert verdicts_of(run(catch_up_s={"replica1": 30.0, "replica2": 0.1}))["step"] is True
    assert rules.judge(summary_of(run(catch_up_s={"replica1": 30.1})), CRITERIA, RATE).broke("max_catch_up")


def test_above_the_knee_is_the_same_judgement_on_goodput_not_on_the_rate_sent() -> None:
    # every request sent on time, fewer served: what the user got decides
    served_less = run(rate_sent=400.0, goodput=395.9)
    assert summary.above_knee(summary_of(run(goodput=396.0)), CRITERIA) is None
    knee = summary.above_knee(summary_of(served_less), CRITERIA)
    assert knee is not None and knee.served == 395.9
    assert not verdicts.step_verdict([summary_of(served_less)], CRITERIA, RATE).passed
    # client-side errors are the load generator's: a note, not a failure, and not above the knee
    client = run(success=0.99, client_errors=40)
    assert summary.above_knee(summary_of(client), CRITERIA) is None
    step = verdicts.step_verdict([summary_of(client)], CRITERIA, RATE)
    assert step.passed and [n.rule for n in step.notes] == ["client_errors"]


def test_saturation_is_a_note_at_the_same_limit_for_a_run_a_step_and_the_knee() -> None:
    at, beyond = run(cpu_mean_percent={"host_busy": 190.0}), run(cpu_mean_percent={"host_busy": 190.1})
    assert rules.judge(summary_of(at), CRITERIA, RATE).notes == ()
    step = verdicts.step_verdict([summary_of(beyond)], CRITERIA, RATE)
    assert step.passed and [n.rule for n in step.notes] == ["host_saturated"]
    guards, status = run_guards(beyond)
    assert status == "ok-with-warnings" and guards[0].startswith("host CPU saturated (190 % of 200 %)")
    knee = summary.above_knee(summary_of({**beyond, "goodput": 300.0}), CRITERIA)
    assert knee is not None and knee.saturated is True
    knee = summary.above_knee(summary_of({**at, "goodput": 300.0}), CRITERIA)
    assert knee is not None and knee.saturated is False


def test_a_summary_from_before_the_rename_is_judged_on_its_throughput() -> None:
    old = {k: v for k, v in run().items() if k not in ("goodput", "rate_sent")}
    assert rules.judge(summary_of({**old, "throughput": 396.0}), CRITERIA, RATE).passed
    assert rules.judge(summary_of({**old, "throughput": 395.0}), CRITERIA, RATE).broke("min_rate_ratio")


def test_a_closed_loop_is_judged_on_everything_but_a_rate_it_never_asked() -> None:
    """--clients N (docs/runs.md, "Closed loop"): the rate only sized the targets, so a goodput far under it is the
    measurement, not a shortfall; every other criterion still judges it."""
    slow = run(goodput=150.0, clients=4)
    assert rules.judge(summary_of(slow), CRITERIA, RATE).tripped == ()
    assert run_guards(slow) == ([], "ok")
    assert studymetrics.unit_metrics("run", summary_of(slow), CRITERIA).passed is True
    assert [t.rule for t in rules.judge(summary_of(run(goodput=150.0)), CRITERIA, RATE).tripped] == ["min_rate_ratio"]
    late = run(goodput=150.0, clients=4, latency_ms={"p99": 1500.0})
    assert [t.rule for t in rules.judge(summary_of(late), CRITERIA, RATE).tripped] == ["max_p99"]


def test_a_run_that_sent_more_requests_than_its_targets_says_vegeta_looped_them() -> None:
    """A closed loop that outran the rate its targets were sized by: vegeta sends them again, and a write sent again
    changes nothing; a note says so (the run still passes on its criteria), a run within its targets has none."""
    looped = run(clients=8, requests=4000, targets=2500)
    verdict = rules.judge(summary_of(looped), CRITERIA, RATE)
    assert verdict.passed and [n.rule for n in verdict.notes] == ["targets_looped"]
    assert verdict.notes[0].text.startswith("4,000 requests over 2,500 targets: vegeta sent them again")
    guards, status = run_guards(looped)  # the run's own guard: ok with a warning
    assert status == "ok-with-warnings" and guards == [verdict.notes[0].text]
    for within in (run(targets=4000), run(), run(clients=8, targets=5000)):
        assert rules.judge(summary_of(within), CRITERIA, RATE).notes == ()
