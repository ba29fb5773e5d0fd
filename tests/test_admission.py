"""The app's admission (issue: above the knee, measure the databases): codel by default, shedding only while a
queue stands; REPLBENCH_ADMISSION=none sheds nothing and vegeta's pool of connections bounds what the app holds;
none with REPLBENCH_CLIENT_CONNECTIONS=unlimited is the unbounded app; the block reads a run above the knee in one
line. On the small topology, with real gunicorn and vegeta."""

from __future__ import annotations

import json

from replbench.analysis.summary import above_knee
from replbench.core.config import CODEL_INTERVAL_MS, CODEL_LEARN_SECONDS, Settings
from replbench.report.block import above_knee_text
from replbench.topology import appserver

from .conftest import env_for, run_cli, run_folder

# one app worker asked far more than any Python worker serves (each request a database round trip): an overload
# on any machine, for a few seconds
OVERLOAD = ("get", "8000", "--duration", "3s")
# the same, long enough that codel's bound has learned the worker's throughput (CODEL_LEARN_SECONDS) while it lasts
LONG_OVERLOAD = ("get", "8000", "--duration", "8s")


def run(topo: Settings, args: tuple[str, ...], **env: str) -> tuple[dict, dict, str]:
    proc = run_cli([*args], env_for(topo.state, REPLBENCH_APP_WORKERS="1", **env))
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    folder = run_folder(proc.stdout)
    return (json.loads((folder / "summary.json").read_text()), json.loads((folder / "meta.json").read_text()),
            proc.stdout)


def test_admission_none_holds_the_app_to_vegetas_pool_under_an_overload(topo: Settings) -> None:
    # a pool far smaller than what the overload would put in flight: the app never holds more, sheds nothing, and
    # the excess waits in vegeta
    summary, meta, out = run(topo, OVERLOAD, REPLBENCH_ADMISSION="none", REPLBENCH_CLIENT_CONNECTIONS="20")
    adm = summary["app_admission"]
    assert meta["app"]["admission"]["mode"] == "none" and adm["mode"] == "none"
    assert adm["shed"] == 0 and 0 < adm["peak_in_flight"] <= 20
    assert "vegeta's 20 connections (REPLBENCH_CLIENT_CONNECTIONS) bound what it holds" in out
    knee = summary["above_knee"]
    assert knee is not None and knee["asked"] == 8000 and knee["shed_per_s"] == 0 and knee["client_pool_full"]
    assert "Above the knee: this machine served " in out and "the excess waited in the client" in out


def test_the_default_admission_sheds_nothing_at_a_low_rate(topo: Settings) -> None:
    summary, meta, out = run(topo, ("get", "40", "--duration", "3s"))
    adm = summary["app_admission"]
    assert adm["mode"] == "codel" and adm["shed"] == 0 and adm["admitted"] == 120
    assert summary["above_knee"] is None and "Above the knee" not in out


def test_the_default_admission_sheds_under_an_overload_and_says_what_happened(topo: Settings) -> None:
    # vegeta's pool wider than the bound once it has learned the worker's throughput (a worker on the small set
    # serves more than 512 × 4 answers/s on a fast box: the default pool would hold the excess in the client)
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
    assert knee is not None and knee["asked"] == 8000 and knee["shed_per_s"] > 0
    assert "Above the knee: this machine served " in out and "shed by the app's admission" in out


def test_admission_none_with_unlimited_connections_is_the_unbounded_app_and_is_recorded(topo: Settings) -> None:
    summary, meta, out = run(topo, OVERLOAD, REPLBENCH_ADMISSION="none", REPLBENCH_CLIENT_CONNECTIONS="unlimited")
    adm = summary["app_admission"]
    assert meta["app"]["admission"] == {"mode": "none", "limit_per_worker": 0, "queue_ms": 0}
    assert adm["mode"] == "none" and adm["shed"] == 0 and adm["episodes"] == 0
    assert meta["attack_options"]["client_connections"].startswith("unlimited")
    assert "none: the unbounded app (REPLBENCH_ADMISSION=none, REPLBENCH_CLIENT_CONNECTIONS=unlimited" in out


def test_codels_target_is_honoured_and_recorded(topo: Settings) -> None:
    # a target no queue reaches within the interval: the same overload is never a standing queue, nothing is shed
    summary, meta, out = run(topo, OVERLOAD, REPLBENCH_CODEL_TARGET_MS="10000")
    assert meta["app"]["admission"]["mode"] == "codel" and meta["app"]["admission"]["target_ms"] == 10000
    adm = summary["app_admission"]
    assert adm["shed"] == 0 and adm["episodes"] == 0


def test_a_bad_admission_exits_2() -> None:
    proc = run_cli(["get", "10", "--duration", "1s"], {"REPLBENCH_ADMISSION": "sometimes"})
    assert proc.returncode == 2 and "admission" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli(["get", "10", "--duration", "1s"], {"REPLBENCH_CODEL_TARGET_MS": "0"})
    assert proc.returncode == 2 and "codel target" in proc.stderr and "Traceback" not in proc.stderr


def test_the_reading_above_the_knee() -> None:
    base = {"rate": 2400, "duration_s": 10, "requests": 24000, "successes": 17900, "success": 17900 / 24000,
            "goodput": 1790.0, "app_admission": {"shed": 6000}, "cores": 2,
            "cpu_seconds": {"host_busy": 19.6, "app": 12.0, "vegeta": 4.3},
            "cpu_mean_percent": {"host_busy": 196.0}, "db_share_of_host": 0.47}
    knee = above_knee(base)
    assert knee == {"asked": 2400, "served": 1790.0, "share": 0.746, "client_connections": None,
                    "client_pool_full": False, "shed_per_s": 600.0,
                    "failed_otherwise_per_s": 10.0, "host_busy_percent": 196.0, "cores": 2, "saturated": True,
                    "shares_of_busy": {"app": 0.612, "vegeta": 0.219, "databases": 0.47}}
    assert above_knee_text(knee) == (
        "Above the knee: this machine served 1,790 of the 2,400 requests/s asked (75%); 600/s were shed by the "
        "app's admission (503 at once) and 10/s failed otherwise; the host was saturated (busy 196 % of 200): "
        "app 61%, vegeta 22%, databases 47% of the busy CPU")
    assert above_knee({**base, "successes": 24000, "success": 1.0, "goodput": 2399.0}) is None
    # every one of vegeta's connections in use: the queue was partly in the client, and the line says so
    full = above_knee({**base, "client_connections": 1024, "app_admission": {"shed": 6000, "peak_in_flight": 1024}})
    assert full is not None and full["client_pool_full"]
    assert above_knee_text(full).endswith("; all 1,024 of vegeta's connections were in use, so requests also waited "
                                          "in the client (REPLBENCH_CLIENT_CONNECTIONS)")
    roomy = above_knee({**base, "client_connections": 1024, "app_admission": {"shed": 6000, "peak_in_flight": 700}})
    assert roomy is not None and not roomy["client_pool_full"] and "vegeta's connections" not in above_knee_text(roomy)


def test_vegetas_connections_follow_the_app_workers_and_unlimited_is_honoured(topo: Settings) -> None:
    from replbench.core.config import CLIENT_CONNECTIONS_PER_WORKER, OPEN_FILES_RESERVE

    summary, meta, out = run(topo, ("get", "20", "--duration", "1s"))  # one app worker (run's default here)
    opts = meta["attack_options"]
    assert opts["max_connections"] == CLIENT_CONNECTIONS_PER_WORKER == summary["client_connections"]
    assert opts["client_connections"] == "auto (REPLBENCH_CLIENT_CONNECTIONS)"
    assert f"-max-connections={CLIENT_CONNECTIONS_PER_WORKER}" in meta["attack_command"]
    summary, meta, out = run(topo, ("get", "20", "--duration", "1s"), REPLBENCH_CLIENT_CONNECTIONS="unlimited")
    opts = meta["attack_options"]
    assert opts["max_connections"] == opts["open_files_limit"] - OPEN_FILES_RESERVE
    summary, meta, out = run(topo, ("get", "20", "--duration", "1s"), REPLBENCH_CLIENT_CONNECTIONS="300")
    assert meta["attack_options"]["max_connections"] == 300


def test_a_bad_client_connections_exits_2() -> None:
    proc = run_cli(["get", "10", "--duration", "1s"], {"REPLBENCH_CLIENT_CONNECTIONS": "lots"})
    assert proc.returncode == 2 and "client connections" in proc.stderr and "Traceback" not in proc.stderr


def test_the_apps_listen_queue_has_gunicorns_backlog(topo: Settings) -> None:
    # aiohttp's worker listens again with 128 whatever gunicorn's --backlog says (aiohttp #5283); app/worker.py
    # gives it gunicorn's, capped by the kernel's somaxconn
    import subprocess

    from replbench.core.config import APP_BACKLOG

    run(topo, ("get", "10", "--duration", "1s"))  # the app is up
    somaxconn = int(open("/proc/sys/net/core/somaxconn").read())
    listing = subprocess.run(["ss", "-Hltn", f"sport = :{topo.app_port}"], capture_output=True, text=True,
                             check=True).stdout.split()
    assert listing[0] == "LISTEN" and int(listing[2]) == min(APP_BACKLOG, somaxconn)


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


def test_codel_sheds_nothing_until_the_bound_has_learned_the_workers_throughput() -> None:
    # a fresh worker (every run restarts the app) holds its floor as the bound: a start-up burst near the max is
    # served, as unbounded would, and the bound holds only once the worker has answered for CODEL_LEARN_SECONDS
    import asyncio
    import time
    import types

    from aiohttp import web

    from app.main import admission

    async def handler(_: object) -> web.StreamResponse:
        return web.json_response({})

    def ask(bound: object) -> int:
        async def one() -> int:
            return (await bound(types.SimpleNamespace(path="/users/1"), handler)).status  # type: ignore[operator]
        return asyncio.run(one())

    bound = admission(0, 0, "codel", 20)
    state = bound.state  # type: ignore[attr-defined]
    bound.observe_loop(0.05)  # type: ignore[attr-defined]
    time.sleep(CODEL_INTERVAL_MS / 1000 + 0.05)
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


def test_the_blocks_bound_names_its_unit_before_codels_conditions() -> None:
    adm = {"mode": "codel", "queue_ms": 1000, "limit_low": 64, "limit_high": 1365, "target_ms": 20,
           "interval_ms": 500, "learn_s": 5}
    assert appserver.bound_text(adm, per_worker=True) == (
        "codel: adaptive, 1000 ms of queue: 64–1365 in flight per worker, only while a queue stood ≥ 20 ms for "
        "500 ms, after each worker's first 5 s of answers")
    fixed = {"mode": "always", "limit_per_worker": 64}
    assert appserver.bound_text(fixed, per_worker=True) == "64 in flight per worker"
