"""The app's admission (issue: above the knee, measure the databases): codel by default, shedding only while a
queue stands; REPLBENCH_ADMISSION=none sheds nothing and vegeta's pool of connections bounds what the app holds;
none with REPLBENCH_CLIENT_CONNECTIONS=unlimited is the unbounded app; the block reads a run above the knee in one
line. On the small topology, with real gunicorn and vegeta."""

from __future__ import annotations

import json
import math

import pytest

from app.tuning import CODEL_INTERVAL_MS, CODEL_LEARN_SECONDS, CODEL_QUEUE_MS, QUEUE_FLOOR, QUEUE_MEMORY
from replbench.analysis import summary as summaries
from replbench.analysis.rules import CRITERIA_GUARD
from replbench.core.config import Settings
from replbench.core.records import STATUS_SUCCEEDED, STATUS_WARNING
from replbench.core.results import AboveKnee, Admission, summary_of
from replbench.report.block import above_knee_text
from replbench.topology import appserver, links

from .conftest import env_for, run_cli, run_folder, run_main

# An overload by construction, not by the box being slow: the app reaches each replica through a 20 ms link with one
# database connection per node, so it serves at most 2 × 1000 / 20 = 100 reads a second on any machine.
SLOW_READS = ("--link", "app-replica1=20ms", "--link", "app-replica2=20ms")
SLOW_ENV = {"REPLBENCH_POOL_SIZE": "1"}
OVERLOAD = ("get", "300", "--duration", "3s", *SLOW_READS)  # three times what the app can serve
# long enough that codel's bound has learned the worker's throughput (CODEL_LEARN_SECONDS) while it lasts
LONG_OVERLOAD = ("get", "400", "--duration", "8s", *SLOW_READS)


def run(topo: Settings, args: tuple[str, ...], **env: str) -> tuple[dict, dict, str]:
    """A run with one app worker; exit 0 (nothing failed). An overload (SLOW_READS) must end ok-with-warnings for
    the pass criteria it broke, and the session's app is put back on its direct connections afterwards."""
    slow = args[-len(SLOW_READS):] == SLOW_READS
    try:
        proc = run_cli([*args], env_for(topo.state, REPLBENCH_APP_WORKERS="1", **(SLOW_ENV if slow else {}), **env))
    finally:
        if slow:
            links.apply(topo, ())
            appserver.fresh(topo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = run_folder(proc.stdout)
    summary, meta = (json.loads((folder / name).read_text()) for name in ("summary.json", "meta.json"))
    if slow:
        assert set(meta["links"]) == {"app-replica1", "app-replica2"}, meta["links"]  # the overload's construction
        assert summary["status"] == STATUS_WARNING, (summary["guards"], summary["errors"])
        assert any(g.startswith(CRITERIA_GUARD) for g in summary["guards"]), summary["guards"]
    else:
        assert summary["status"] in STATUS_SUCCEEDED, (summary["guards"], summary["errors"])
    return summary, meta, proc.stdout


# The runs below leave vegeta's closed connections in TIME_WAIT for 60 s, and a run waits while more than 5 %
# of the ephemeral ports sit there (settle): they run in an order whose sum stays under that, the one with the
# most connections (unlimited) last, before test_app's requests, which need no settle.


@pytest.fixture(scope="module")
def low_rate(topo: Settings) -> tuple[dict, dict, str]:
    """get at 40/s for 2 s with one app worker and every default, made once for the tests that read what such a
    run records (vegeta's pool, an admission that sheds nothing) or need the app it started (its listen queue).
    No test writes into its folder."""
    return run(topo, ("get", "40", "--duration", "2s"))


def test_vegetas_connections_follow_the_app_workers(low_rate: tuple[dict, dict, str]) -> None:
    # a number of connections (20) and unlimited are checked on the overloads below that set them
    from replbench.core.config import CLIENT_CONNECTIONS_PER_WORKER

    summary, meta, out = low_rate  # one app worker (run's default here)
    opts = meta["attack_options"]
    assert opts["max_connections"] == CLIENT_CONNECTIONS_PER_WORKER == summary["client_connections"]
    assert opts["client_connections"] == "auto (REPLBENCH_CLIENT_CONNECTIONS)"
    assert f"-max-connections={CLIENT_CONNECTIONS_PER_WORKER}" in meta["attack_command"]


def test_the_apps_listen_queue_has_gunicorns_backlog(topo: Settings, low_rate: tuple[dict, dict, str]) -> None:
    # aiohttp's worker listens again with 128 whatever gunicorn's --backlog says (aiohttp #5283); app/worker.py
    # gives it gunicorn's, capped by the kernel's somaxconn
    import subprocess

    from replbench.core.config import APP_BACKLOG

    # the app is up: a run started it (this module's runs leave it up, the overloads' put it back with fresh())
    somaxconn = int(open("/proc/sys/net/core/somaxconn").read())
    listing = subprocess.run(["ss", "-Hltn", f"sport = :{topo.app_port}"], capture_output=True, text=True,
                             check=True).stdout.split()
    assert listing[0] == "LISTEN" and int(listing[2]) == min(APP_BACKLOG, somaxconn)


def test_admission_none_holds_the_app_to_vegetas_pool_under_an_overload(topo: Settings) -> None:
    # a pool far smaller than what the overload puts in flight (300/s asked, 100/s served): the app holds every one
    # of its 20 connections' requests and never more, sheds nothing, and the excess waits in vegeta
    summary, meta, out = run(topo, OVERLOAD, REPLBENCH_ADMISSION="none", REPLBENCH_CLIENT_CONNECTIONS="20")
    assert meta["attack_options"]["max_connections"] == 20  # a number of connections is honoured
    adm = summary["app_admission"]
    assert meta["app"]["admission"]["mode"] == "none" and adm["mode"] == "none"
    assert adm["shed"] == 0 and adm["peak_in_flight"] == 20
    assert "vegeta's 20 connections (REPLBENCH_CLIENT_CONNECTIONS) bound what it holds" in out
    knee = summary["above_knee"]
    assert knee is not None and knee["asked"] == 300 and knee["shed_per_s"] == 0 and knee["client_pool_full"]
    assert "Above the knee: this machine served " in out and "the excess waited in the client" in out


def test_the_default_admission_sheds_nothing_at_a_low_rate(low_rate: tuple[dict, dict, str]) -> None:
    summary, meta, out = low_rate
    adm = summary["app_admission"]
    assert adm["mode"] == "codel" and adm["shed"] == 0 and adm["admitted"] == 80  # 40/s for 2 s
    assert summary["above_knee"] is None and "Above the knee" not in out


def test_codels_target_is_honoured_and_recorded(topo: Settings) -> None:
    # the overload that sheds at the default target (above), with a target no delay can reach: a connection wait
    # ends at REPLBENCH_DB_TIMEOUT (2 s here) and the loop is never 10 s late, so no queue ever stands
    # (at twice what the app serves, not four times: the queue nothing sheds drains within the attack's wait)
    summary, meta, out = run(topo, ("get", "200", "--duration", "8s", *SLOW_READS), REPLBENCH_CODEL_TARGET_MS="10000")
    assert meta["app"]["admission"]["mode"] == "codel" and meta["app"]["admission"]["target_ms"] == 10000
    adm = summary["app_admission"]
    assert adm["shed"] == 0 and adm["episodes"] == 0


def test_the_default_admission_sheds_under_an_overload_and_says_what_happened(topo: Settings) -> None:
    # 400/s asked of an app that serves at most 100/s: every connection wait from the first second on is far above
    # codel's 20 ms target, so a queue stands; once the bound has learned (CODEL_LEARN_SECONDS of answers) it is
    # QUEUE_FLOOR in flight, and vegeta's pool (wider than that) keeps hundreds waiting in the app: they are shed
    summary, meta, out = run(topo, LONG_OVERLOAD, REPLBENCH_CLIENT_CONNECTIONS="4096")
    adm = summary["app_admission"]
    assert adm["shed"] > 0, adm
    assert meta["app"]["admission"]["mode"] == "codel" and adm["mode"] == "codel"
    assert meta["app"]["admission"]["target_ms"] == 20  # REPLBENCH_CODEL_TARGET_MS's default
    assert adm["shed"] > 0 and adm["episodes"] >= 1 and adm["standing_s"] > 0
    assert meta["app"]["admission"]["learn_s"] == CODEL_LEARN_SECONDS
    assert "codel: adaptive" in out and "only while a queue stood" in out
    assert f"after each worker's first {CODEL_LEARN_SECONDS} s of answers" in out
    knee = summary["above_knee"]
    assert knee is not None and knee["asked"] == 400 and knee["shed_per_s"] > 0
    assert "Above the knee: this machine served " in out and "shed by the app's admission" in out


def test_admission_none_with_unlimited_connections_is_the_unbounded_app_and_is_recorded(topo: Settings) -> None:
    from replbench.core.config import OPEN_FILES_RESERVE

    summary, meta, out = run(topo, OVERLOAD, REPLBENCH_ADMISSION="none", REPLBENCH_CLIENT_CONNECTIONS="unlimited")
    adm = summary["app_admission"]
    assert meta["app"]["admission"] == {"mode": "none", "limit_per_worker": 0, "queue_ms": 0}
    assert adm["mode"] == "none" and adm["shed"] == 0 and adm["episodes"] == 0
    opts = meta["attack_options"]
    assert opts["client_connections"].startswith("unlimited")
    assert opts["max_connections"] == opts["open_files_limit"] - OPEN_FILES_RESERVE  # unlimited is honoured
    assert "none: the unbounded app (REPLBENCH_ADMISSION=none, REPLBENCH_CLIENT_CONNECTIONS=unlimited" in out


def test_a_bad_admission_exits_2() -> None:
    code, _, err = run_main(["get", "10", "--duration", "1s"], {"REPLBENCH_ADMISSION": "sometimes"})
    assert code == 2 and "admission" in err and "Traceback" not in err
    code, _, err = run_main(["get", "10", "--duration", "1s"], {"REPLBENCH_CODEL_TARGET_MS": "0"})
    assert code == 2 and "codel target" in err and "Traceback" not in err


def test_the_reading_above_the_knee() -> None:
    base = {"rate": 2400, "duration_s": 10, "requests": 24000, "successes": 17900, "success": 17900 / 24000,
            "goodput": 1790.0, "app_admission": {"shed": 6000}, "cores": 2,
            "cpu_seconds": {"host_busy": 19.6, "app": 12.0, "vegeta": 4.3},
            "cpu_mean_percent": {"host_busy": 196.0}, "db_share_of_host": 0.47}
    def above_knee(doc: dict) -> AboveKnee | None:
        return summaries.above_knee(summary_of(doc))

    knee = above_knee(base)
    assert knee is not None and knee.model_dump(exclude_unset=True) == {
        "asked": 2400, "served": 1790.0, "share": 0.746, "client_connections": None, "client_pool_full": False,
        "shed_per_s": 600.0, "failed_otherwise_per_s": 10.0, "host_busy_percent": 196.0, "cores": 2, "saturated": True,
        "shares_of_busy": {"app": 0.612, "vegeta": 0.219, "databases": 0.47}, "cores_needed": {}}
    assert above_knee_text(knee) == (
        "Above the knee: this machine served 1,790 of the 2,400 requests/s asked (75%); 600/s were shed by the "
        "app's admission (503 at once) and 10/s failed otherwise; the host was saturated (busy 196 % of 200): "
        "app 61%, vegeta 22%, databases 47% of the busy CPU")
    assert above_knee({**base, "successes": 24000, "success": 1.0, "goodput": 2399.0}) is None
    # every one of vegeta's connections in use: the queue was partly in the client, and the line says so
    full = above_knee({**base, "client_connections": 1024, "app_admission": {"shed": 6000, "peak_in_flight": 1024}})
    assert full is not None and full.client_pool_full
    assert above_knee_text(full).endswith(
        "; all 1,024 of vegeta's connections were in use, so requests also waited in the client "
        "(REPLBENCH_CLIENT_CONNECTIONS)")
    # what the rate asked would need, role by role, at the run's CPU per successful request net of idle
    priced = above_knee({**base, "cpu_ms_per_success_net": {"app": 0.7, "replica1": 0.4, "replica2": 0.45,
                                                            "vegeta": 0.15, "harness": 0.1, "host_busy": 2.0}})
    assert priced is not None and priced.cores_needed == {"app": 1.68, "replica1": 0.96, "replica2": 1.08,
                                                             "vegeta": 0.36}
    assert above_knee_text(priced).endswith(
        ". 2,400/s would need, at this run's CPU-ms per successful request net of idle (above the knee a request "
        "costs more, so an upper bound; no contention between roles assumed): app 1.7, replica1 1.0, replica2 1.1, "
        "vegeta 0.4 cores, 4.1 in all against this host's 2")
    roomy = above_knee({**base, "client_connections": 1024, "app_admission": {"shed": 6000, "peak_in_flight": 700}})
    assert roomy is not None and not roomy.client_pool_full
    assert "vegeta's connections" not in above_knee_text(roomy)


def test_a_bad_client_connections_exits_2() -> None:
    code, _, err = run_main(["get", "10", "--duration", "1s"], {"REPLBENCH_CLIENT_CONNECTIONS": "lots"})
    assert code == 2 and "client connections" in err and "Traceback" not in err


def test_a_queue_stands_only_when_every_delay_of_an_interval_was_above_target() -> None:
    from app.main import StandingQueue

    q = StandingQueue(target=0.020, interval=0.5)
    q.observe(0.030, now=10.0)
    assert not q.standing(10.4)  # above target, but not for a whole interval yet
    q.observe(0.025, now=10.45)
    assert q.standing(10.5)
    q.observe(0.001, now=10.6)  # one delay under target: the queue emptied, it does not stand
    assert not q.standing(10.6) and not q.standing(20.0)
    q.observe(0.5, now=21.0)
    assert not q.standing(21.2) and q.standing(21.5)


class Clock:
    """The seconds app.main.admission's standing-queue test reads (its clock), moved by the test."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def ask(bound: object) -> int:
    """One request through the admission middleware to a handler that answers at once: its status."""
    import asyncio
    import types

    from aiohttp import web

    async def handler(_: object) -> web.StreamResponse:
        return web.json_response({})

    async def one() -> int:
        return (await bound(types.SimpleNamespace(path="/users/1"), handler)).status  # type: ignore[operator]
    return asyncio.run(one())


def learn(bound: object, answers: int) -> None:
    """CODEL_LEARN_SECONDS seconds, each with `answers` served: the bound has learned the worker's throughput."""
    for _ in range(CODEL_LEARN_SECONDS):
        bound.state["answered"] += answers  # type: ignore[attr-defined]
        bound.tune()  # type: ignore[attr-defined]


def test_codel_sheds_nothing_until_the_bound_has_learned_the_workers_throughput() -> None:
    # a fresh worker (every run restarts the app) holds its floor as the bound: a start-up burst near the max is
    # served, as unbounded would, and the bound holds only once the worker has answered for CODEL_LEARN_SECONDS
    from app.main import admission

    clock = Clock()
    bound = admission(0, 0, "codel", 20, clock=clock)
    state = bound.state  # type: ignore[attr-defined]
    bound.observe_loop(0.05)  # type: ignore[attr-defined]
    clock.now += CODEL_INTERVAL_MS / 1000
    bound.observe_loop(0.05)  # type: ignore[attr-defined]  # every delay above target for an interval: it stands
    state["in_flight"] = 10 * state["limit"]  # far above the bound
    assert ask(bound) == 200 and state["shed"] == 0 and not state["learned"]
    for _ in range(CODEL_LEARN_SECONDS):
        assert not state["learned"]
        state["answered"] += 100
        bound.tune()  # type: ignore[attr-defined]  # one second with answers
    assert state["learned"] and state["served_seconds"] == CODEL_LEARN_SECONDS
    assert ask(bound) == 503 and state["shed"] == 1 and state["episodes"] == 1
    # seconds without answers (an idle window) do not count as learning
    idle = admission(0, 0, "codel", 20)
    for _ in range(2 * CODEL_LEARN_SECONDS):
        idle.tune()  # type: ignore[attr-defined]
    assert not idle.state["learned"]  # type: ignore[attr-defined]
    # a bound at all times (REPLBENCH_ADMISSION=always) holds from the first request, as the inflight studies ran
    always = admission(64, 0, "always")
    always.state["in_flight"] = 64  # type: ignore[attr-defined]
    assert ask(always) == 503


def test_codel_sheds_at_the_bound_only_while_a_queue_stands_and_records_how_long_it_stood() -> None:
    from app.main import admission

    clock = Clock()
    bound = admission(0, 0, "codel", 20, clock=clock)
    state = bound.state  # type: ignore[attr-defined]
    learn(bound, 1000)  # 1,000 answers a second: CODEL_QUEUE_MS of queue is that many in flight
    assert state["limit"] == max(QUEUE_FLOOR, math.ceil(1000 * CODEL_QUEUE_MS / 1000))
    state["in_flight"] = state["limit"]  # at the bound
    bound.observe_wait(0.030)  # type: ignore[attr-defined]  # a connection wait above the 20 ms target ...
    assert ask(bound) == 200 and state["episodes"] == 0  # ... not yet for a whole interval: served
    clock.now += CODEL_INTERVAL_MS / 1000
    bound.observe_wait(0.025)  # type: ignore[attr-defined]
    assert ask(bound) == 503 and state["shed"] == 1 and state["episodes"] == 1  # a standing queue: shed at once
    clock.now += 0.5
    bound.tune()  # type: ignore[attr-defined]  # the episode's time so far, published every second
    assert state["standing_s"] == pytest.approx(0.5)
    clock.now += 0.2
    bound.observe_wait(0.001)  # type: ignore[attr-defined]  # one wait under target: the queue drained
    assert ask(bound) == 200 and state["shed"] == 1 and state["episodes"] == 1
    assert state["standing_s"] == pytest.approx(0.7)  # the episode lasted 0.7 s
    bound.observe_wait(0.5)  # type: ignore[attr-defined]  # a queue again, standing for an interval ...
    clock.now += CODEL_INTERVAL_MS / 1000
    state["in_flight"] = state["limit"] - 1  # ... but below the bound: admitted
    assert ask(bound) == 200 and state["shed"] == 1


def test_codels_target_decides_what_counts_as_a_standing_queue() -> None:
    from app.main import admission

    clock = Clock()
    patient = admission(0, 0, "codel", 10_000, clock=clock)  # REPLBENCH_CODEL_TARGET_MS=10000
    learn(patient, 1000)
    patient.state["in_flight"] = 10 * patient.state["limit"]  # type: ignore[attr-defined]
    for _ in range(10):  # five seconds of waits of 5 s: long, but all under the target
        patient.observe_wait(5.0)  # type: ignore[attr-defined]
        patient.observe_loop(5.0)  # type: ignore[attr-defined]
        clock.now += CODEL_INTERVAL_MS / 1000
    assert ask(patient) == 200
    assert patient.state["shed"] == 0 and patient.state["episodes"] == 0  # type: ignore[attr-defined]


def test_an_adaptive_bound_is_the_best_remembered_seconds_answers_times_its_queue() -> None:
    # the decision behind test_faults' adaptive bound on a real worker, second by second (tune() once a second)
    from app.main import admission

    bound = admission(1, 1000, "always")  # REPLBENCH_MAX_INFLIGHT=1, REPLBENCH_MAX_QUEUE_MS=1000
    state = bound.state  # type: ignore[attr-defined]
    assert state["limit"] == 1  # a fresh worker starts at its floor

    def second(answers: int, failed: int = 0) -> None:
        state["answered"] += answers
        state["failed"] += failed
        bound.tune()  # type: ignore[attr-defined]

    second(7, failed=2)  # 5 served: what failed is not throughput
    assert state["rates"] == [5] and state["limit"] == 5  # 1000 ms of queue at 5 answers/s
    second(3)
    assert state["rates"] == [5, 3] and state["limit"] == 5  # the best second remembered
    for _ in range(QUEUE_MEMORY - 1):
        second(3)
    assert state["rates"] == [3] * QUEUE_MEMORY and state["limit"] == 3  # the 5 forgotten after QUEUE_MEMORY s
    assert (state["limit_low"], state["limit_high"]) == (3, 5)
    state["in_flight"] = 3
    assert ask(bound) == 503 and state["shed"] == 1  # the bound holds at all times (always)
    state["in_flight"] = 2
    assert ask(bound) == 200
    quarter = admission(1, 250, "always")
    quarter.state["answered"] += 10  # type: ignore[attr-defined]
    quarter.tune()  # type: ignore[attr-defined]
    assert quarter.state["limit"] == 3  # type: ignore[attr-defined]  # ceil(10/s × 250 ms)
    floored = admission(4, 1000, "always")
    floored.state["answered"] += 2  # type: ignore[attr-defined]
    floored.tune()  # type: ignore[attr-defined]
    assert floored.state["limit"] == 4  # type: ignore[attr-defined]  # never under the fixed bound
    assert admission(0, 1000, "always").state["limit"] == QUEUE_FLOOR  # type: ignore[attr-defined]


def test_the_blocks_bound_names_its_unit_before_codels_conditions() -> None:
    adm = Admission(mode="codel", queue_ms=1000, limit_low=64, limit_high=1365, target_ms=20, interval_ms=500,
                    learn_s=5)
    assert appserver.bound_text(adm, per_worker=True) == (
        "codel: adaptive, 1000 ms of queue: 64–1365 in flight per worker, only while a queue stood ≥ 20 ms for "
        "500 ms, after each worker's first 5 s of answers")
    fixed = Admission(mode="always", limit_per_worker=64)
    assert appserver.bound_text(fixed, per_worker=True) == "64 in flight per worker"
