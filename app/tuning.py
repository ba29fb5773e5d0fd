"""The app's own tuning: its latency histogram and its admission's constants. The app reads nothing else of the
harness's defaults; the harness reads these to describe the app it started (replbench/topology/appserver.py)
and to decode the counters the app publishes. Imports nothing."""

# the app's own latency histogram (upper bounds, ms; 25 % apart from 0.1 ms to ~80 s): the live progress line's p99
# comes from it, so the harness never decodes vegeta's results while the attack runs
APP_LATENCY_BOUNDS_MS = tuple(round(0.1 * 1.25 ** i, 3) for i in range(62))
# the app's adaptive in-flight bound (REPLBENCH_MAX_QUEUE_MS): seconds of answers/s it remembers (its best second,
# so a stall does not lower it) and the bound per worker it never goes under when REPLBENCH_MAX_INFLIGHT is 0:
# 64, the fixed bound that shed nothing at half the max, so it starts there. docs/decisions/fixed-bounds.md
QUEUE_MEMORY = 5
QUEUE_FLOOR = 64
# the default admission (REPLBENCH_ADMISSION=codel: unbounded, an overload longer than vegeta's timeout collapses;
# docs/decisions/admission-default.md): the adaptive bound above, CODEL_QUEUE_MS of queue when REPLBENCH_MAX_QUEUE_MS
# is 0 (docs/decisions/codel-queue-bound.md), enforced only while a queue stands — CoDel's test (Nichols & Jacobson
# 2012; Facebook's RPC queues, "Fail at Scale" 2015): for CODEL_INTERVAL_MS every observed queueing delay stayed at
# or above the target (REPLBENCH_CODEL_TARGET_MS, 20 ms by default: docs/decisions/codel-target.md). The delays
# observed: the worker's event loop running late (a tick every CODEL_TICK_MS) and each request's wait for a database
# connection. A burst that drains within the interval is never shed. Nor is anything shed before a worker's bound
# has learned its throughput: until it has answered requests in CODEL_LEARN_SECONDS seconds (the bound's memory,
# QUEUE_MEMORY), a fresh worker (every run gets fresh workers) would hold the floor or a partial second as its bound.
# docs/decisions/codel-learning.md
CODEL_INTERVAL_MS = 500
CODEL_TICK_MS = 20
CODEL_QUEUE_MS = 250
CODEL_LEARN_SECONDS = QUEUE_MEMORY
