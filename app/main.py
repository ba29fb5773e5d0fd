"""The replbench service: an aiohttp application (served by gunicorn) that reads from the replicas and writes
to the master. Configuration comes from the REPLBENCH_* environment (replbench.config), errors are JSON."""

from __future__ import annotations

import asyncio
import bisect
import logging
import math
import os
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson
from aiohttp import web

from replbench.core.config import Settings

from . import handlers
from .db import Database, NoNodeAvailable, Overloaded, QueryTimeout
from .tuning import (
    APP_LATENCY_BOUNDS_MS,
    CODEL_INTERVAL_MS,
    CODEL_LEARN_SECONDS,
    CODEL_QUEUE_MS,
    CODEL_TICK_MS,
    QUEUE_FLOOR,
    QUEUE_MEMORY,
)
from .validation import ClientError

log = logging.getLogger("replbench.app")
ADMISSION_TUNE = 1.0  # seconds between two tune() calls: the bound follows answers per second
ADMISSION_PUBLISH = 0.2  # seconds between two writes of a worker's admission counters: the harness reads
# them right after an attack, so a short period is a short wait (a write costs tens of microseconds)
DUPLICATE_KEY = 1062
READ_ONLY = 1290

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def error(message: str, status: int, headers: dict[str, str] | None = None) -> web.Response:
    response = handlers.json_response({"error": message}, status=status)
    if headers:
        response.headers.update(headers)
    return response


@web.middleware
async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every failure becomes a JSON error; client mistakes are 4xx, and no SQL text ever reaches the client."""
    driver = request.app[handlers.DB_KEY].driver
    try:
        return await handler(request)
    except ClientError as exc:
        return error(str(exc), exc.status)
    except web.HTTPException as exc:  # unknown route (404), wrong method (405), body too large (413)
        if exc.status < 400:
            raise
        allow = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None
        return error(exc.reason.lower(), exc.status, allow)
    except NoNodeAvailable as exc:
        return error(str(exc), 503)
    except Overloaded as exc:
        return error(f"overloaded ({exc})", 503)
    except QueryTimeout as exc:
        return error(f"query timed out ({exc})", 504)
    except driver.IntegrityError as exc:
        if exc.args and exc.args[0] == DUPLICATE_KEY:
            return error("an account with this email already exists", 409)
        log.exception("integrity error")
        return error("the database refused the change", 409)
    except driver.Error as exc:
        if exc.args and exc.args[0] == READ_ONLY:
            return error("the master is read-only", 503)
        log.exception("database error on %s %s", request.method, request.path)
        return error("database error", 500)


class StandingQueue:
    """CoDel's test for one queue: it stands once every delay observed for `interval` seconds was at or above
    `target` (one observation under it, and it does not). Observations carry their own time (seconds, any clock)."""

    def __init__(self, target: float, interval: float) -> None:
        self.target = target
        self.interval = interval
        self.above_since: float | None = None  # when the delays went above target and stayed there

    def observe(self, delay: float, now: float) -> None:
        if delay < self.target:
            self.above_since = None
        elif self.above_since is None:
            self.above_since = now

    def standing(self, now: float) -> bool:
        return self.above_since is not None and now - self.above_since >= self.interval


class Admission:
    """One worker's admission: its counters and bound (`state`, published as JSON), CoDel's two queues and the
    gate that says whether the bound holds now. The methods are what the app wires up (see admission())."""

    def __init__(self, limit: int, queue_ms: int, mode: str, target_ms: int, clock: Callable[[], float]) -> None:
        if mode == "none":
            limit, queue_ms = 0, 0
        elif mode == "codel":
            queue_ms = queue_ms or CODEL_QUEUE_MS
        self.mode, self.fixed, self.queue_ms, self.clock = mode, limit, queue_ms, clock
        self.state: dict[str, Any] = {
            "in_flight": 0, "shed": 0, "limit": limit, "peak_in_flight": 0, "admitted": 0, "answered": 0,
            "failed": 0, "latency_counts": [0] * (len(APP_LATENCY_BOUNDS_MS) + 1), "queue_ms": queue_ms,
            "limit_low": None, "limit_high": None, "rates": [], "mode": mode, "standing_s": 0.0, "episodes": 0,
            "learned": mode != "codel", "served_seconds": 0}
        self.rates: deque[int] = deque(maxlen=QUEUE_MEMORY)
        if queue_ms:
            self.state["limit"] = limit or QUEUE_FLOOR
        self.last_ok = 0
        target, interval = target_ms / 1000, CODEL_INTERVAL_MS / 1000
        self.loop_queue, self.wait_queue = StandingQueue(target, interval), StandingQueue(target, interval)
        self.gate_standing, self.gate_since = mode != "codel", 0.0

    def standing(self, now: float) -> bool:
        """Whether the bound holds now (always, or while a queue stands); counts the time and episodes it stood."""
        if self.mode != "codel":
            return True
        now_standing = self.loop_queue.standing(now) or self.wait_queue.standing(now)
        if now_standing and not self.gate_standing:
            self.gate_since = now
            self.state["episodes"] += 1
        elif self.gate_standing and not now_standing:
            self.state["standing_s"] = round(self.state["standing_s"] + now - self.gate_since, 3)
        self.gate_standing = now_standing
        return now_standing

    def observe_wait(self, delay: float) -> None:
        self.wait_queue.observe(delay, self.clock())

    def observe_loop(self, lateness: float) -> None:
        now = self.clock()
        self.loop_queue.observe(lateness, now)
        self.standing(now)

    def tune(self) -> None:
        """Once a second: the bound from the answers served (not failed) since the last call."""
        state = self.state
        ok = state["answered"] - state["failed"]
        self.rates.append(ok - self.last_ok)
        if ok > self.last_ok:
            state["served_seconds"] += 1
            state["learned"] = state["learned"] or state["served_seconds"] >= CODEL_LEARN_SECONDS
        self.last_ok = ok
        state["rates"] = list(self.rates)
        if self.queue_ms:
            state["limit"] = max(self.fixed or QUEUE_FLOOR, math.ceil(max(self.rates) * self.queue_ms / 1000))
            low, high = state["limit_low"], state["limit_high"]
            state["limit_low"] = state["limit"] if low is None else min(low, state["limit"])
            state["limit_high"] = state["limit"] if high is None else max(high, state["limit"])
        if self.gate_standing and self.mode == "codel":  # the time a standing episode has lasted so far, published
            now = self.clock()
            state["standing_s"] = round(state["standing_s"] + now - self.gate_since, 3)
            self.gate_since = now

    def sheds(self) -> bool:
        """Whether a request arriving now is answered 503 at once."""
        state = self.state
        return bool(state["limit"] and state["in_flight"] >= state["limit"] and self.standing(self.clock())
                    and state["learned"])

    async def serve(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Also counts every answer, its failures (5xx) and its latency in the app (the live progress line)."""
        state = self.state
        if request.path == "/health":  # probes are not the load
            return await handler(request)
        if self.sheds():
            state["shed"] += 1
            state["answered"] += 1
            state["failed"] += 1
            state["latency_counts"][0] += 1  # answered at once
            return error("overloaded: too many requests in flight", 503, {"Retry-After": "1"})
        state["in_flight"] += 1
        state["admitted"] += 1
        state["peak_in_flight"] = max(state["peak_in_flight"], state["in_flight"])
        began = time.perf_counter()
        failed = True
        try:
            response = await handler(request)
            failed = response.status >= 500
            return response
        finally:
            state["in_flight"] -= 1
            state["answered"] += 1
            state["failed"] += failed
            state["latency_counts"][bisect.bisect_left(APP_LATENCY_BOUNDS_MS,
                                                       1000 * (time.perf_counter() - began))] += 1


def admission(limit: int, queue_ms: int = 0, mode: str = "always", target_ms: int = 20,
              clock: Callable[[], float] = time.monotonic) -> Callable[..., Awaitable[web.StreamResponse]]:
    """Bounded requests in flight per worker (REPLBENCH_MAX_INFLIGHT): the excess is answered 503 with
    Retry-After at once, before any parsing or database work, so an overloaded app keeps the databases busy at
    their capacity instead of spending the machine on connections it cannot serve. 0 = unbounded.

    With queue_ms (REPLBENCH_MAX_QUEUE_MS) the bound follows the worker's throughput instead (Little's law): the
    best answers/s of the last QUEUE_MEMORY seconds × queue_ms, never under the fixed bound (or QUEUE_FLOOR when
    that is 0), recomputed every second by tune(). A fresh worker (every run gets fresh workers) starts at the floor.

    mode (REPLBENCH_ADMISSION): "always" enforces the bound at all times; "none" never (nothing is shed: the
    client's pool of connections bounds what the app holds); "codel", the default, enforces the adaptive bound
    (CODEL_QUEUE_MS of queue unless queue_ms is set) only while a queue
    stands: the worker's event loop running target_ms (REPLBENCH_CODEL_TARGET_MS) late, or requests waiting that
    long for a database connection, without a break for CODEL_INTERVAL_MS — and only once the bound has learned the
    worker's throughput (answers in CODEL_LEARN_SECONDS seconds; before that a fresh worker sheds nothing). Bursts
    that drain within the interval are served, as unbounded would; a standing overload is cut to the bound.
    observe_wait() takes the connection waits (app/db.py), observe_loop() the loop's lateness (a tick every
    CODEL_TICK_MS). clock: the seconds the standing-queue test reads (time.monotonic; a test's own clock)."""
    gate = Admission(limit, queue_ms, mode, target_ms, clock)

    @web.middleware
    async def bound(request: web.Request, handler: Handler) -> web.StreamResponse:
        return await gate.serve(request, handler)

    bound.state = gate.state  # type: ignore[attr-defined]
    bound.tune = gate.tune  # type: ignore[attr-defined]
    bound.observe_wait = gate.observe_wait  # type: ignore[attr-defined]
    bound.observe_loop = gate.observe_loop  # type: ignore[attr-defined]
    return bound


async def create_app() -> web.Application:
    """App factory for gunicorn's aiohttp workers (app.main:create_app)."""
    settings = Settings.from_env()
    db = Database(settings)
    await db.start()
    bound = admission(settings.max_inflight, settings.max_queue_ms, settings.admission, settings.codel_target_ms)
    if settings.admission == "codel":
        db.observe_wait = bound.observe_wait  # type: ignore[attr-defined]
    app = web.Application(client_max_size=settings.max_body, middlewares=[bound, json_errors])
    app[handlers.DB_KEY] = db
    app[handlers.ADMISSION_KEY] = bound.state  # type: ignore[attr-defined]
    app.router.add_get("/find_users", handlers.find_users)
    app.router.add_get("/users/{id}", handlers.get_user)
    app.router.add_post("/users", handlers.create_user)
    app.router.add_post("/update_user", handlers.update_user)
    app.router.add_post("/update_users", handlers.update_users)
    app.router.add_get("/health", handlers.health)
    app.router.add_get("/constant", handlers.constant)

    counters = settings.app_dir / f"admission-{os.getpid()}.json"

    async def publish(_: web.Application) -> AsyncIterator[None]:
        """Each worker's admission counters, rewritten every ADMISSION_PUBLISH for the harness to read (runs
        record the requests shed and the peak in flight); the bound tuned every ADMISSION_TUNE."""
        async def loop() -> None:
            clock = asyncio.get_running_loop()
            next_tune = clock.time() + ADMISSION_TUNE
            while True:
                await asyncio.sleep(ADMISSION_PUBLISH)
                if clock.time() >= next_tune:
                    next_tune += ADMISSION_TUNE
                    bound.tune()  # type: ignore[attr-defined]
                tmp = counters.with_suffix(".tmp")
                tmp.write_bytes(orjson.dumps(bound.state))  # type: ignore[attr-defined]
                tmp.replace(counters)

        async def ticker() -> None:
            """The event loop's lateness, CoDel's view of the queue no request can see (the loop's own backlog)."""
            tick = CODEL_TICK_MS / 1000
            clock = asyncio.get_running_loop()
            while True:
                began = clock.time()
                await asyncio.sleep(tick)
                bound.observe_loop(clock.time() - began - tick)  # type: ignore[attr-defined]

        tasks = [asyncio.create_task(loop())]
        if settings.admission == "codel":
            tasks.append(asyncio.create_task(ticker()))
        yield
        for task in tasks:
            task.cancel()
        counters.unlink(missing_ok=True)

    async def close_db(_: web.Application) -> None:
        await db.close()

    app.cleanup_ctx.append(publish)
    app.on_cleanup.append(close_db)
    return app
