"""The app tier as a process: gunicorn serving app/ with aiohttp workers, started and stopped by pid, its log in
the state folder. The app reads its configuration from the REPLBENCH_* environment given here."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Literal, NotRequired, TypedDict

import psutil

from app.tuning import APP_LATENCY_BOUNDS_MS, CODEL_INTERVAL_MS, CODEL_LEARN_SECONDS, CODEL_QUEUE_MS

from ..core.config import (
    APP_BACKLOG,
    APP_START_TIMEOUT,
    ROOT,
    ReplbenchError,
    Settings,
)
from ..core.processes import wait_gone
from ..core.results import Admission, AppSettings
from ..core.stats import histogram_percentile
from .nodes import port_owner

ADMISSION_SETTLE = 1.2  # seconds after an attack, at most, for every worker to publish its counters once more
FINGERPRINT = "settings.json"  # in the app folder: the settings the running app was started with
HARNESS_ONLY = ("REPLBENCH_RESULTS", "REPLBENCH_IDLE_WINDOW")  # settings the app never reads
# aiohttp's worker classes, with gunicorn's --backlog honoured (app/worker.py: aiohttp's own listen with 128)
WORKER_CLASSES = {"aiohttp": "app.worker.WebWorker", "uvloop": "app.worker.UVLoopWebWorker"}


class AppError(ReplbenchError):
    """The app could not be started or stopped; the message says why."""


def pid_file(settings: Settings):
    return settings.app_dir / "gunicorn.pid"


def app_pid(settings: Settings) -> int | None:
    """The gunicorn master's pid, if its pid file names a live gunicorn of ours (never for an app at a URL): one
    started with this state's pid file, whatever port it was given (a `down` with the state but not its ports stops
    it too), or one bound to this state's address."""
    if settings.app_url:
        return None
    try:
        pid = int(pid_file(settings).read_text().strip())
        proc = psutil.Process(pid)
        command = proc.cmdline()
        ours = ("--pid" in command and command[command.index("--pid") + 1:][:1] == [str(pid_file(settings))]) \
            or f"{settings.app_listen}:{settings.app_port}" in " ".join(command)
        if proc.status() != psutil.STATUS_ZOMBIE and "gunicorn" in " ".join(command) and ours:
            return pid
    except (OSError, ValueError, psutil.NoSuchProcess, psutil.AccessDenied):
        pass
    return None


def app_processes(settings: Settings) -> list[psutil.Process]:
    """The gunicorn master and all its workers (for CPU accounting)."""
    pid = app_pid(settings)
    if not pid:
        return []
    master = psutil.Process(pid)
    return [master, *master.children(recursive=True)]


class AppCounters(TypedDict):
    """The app workers' counters summed (admission()); the keys summary.json's app_admission takes from them."""

    admitted: int
    shed: int
    peak_in_flight: int
    answered: int
    failed: int
    workers: int  # 0: none published (an app not started here, or not yet)
    latency_counts: list[int]  # per APP_LATENCY_BOUNDS_MS bucket, the last one open
    limit_low: int | None  # an adaptive bound's range since the workers started; None: none set
    limit_high: int | None
    episodes: int
    standing_s: float
    mode: NotRequired[str]  # the admission a worker published, when one did


class Answered(TypedDict):
    """What the app answered between two admission() readings (answered_since)."""

    requests: int
    failed: int
    p99_ms: float | None  # None: nothing answered


# the counters admission() adds up over the workers
SUMMED: tuple[Literal["admitted", "shed", "peak_in_flight", "answered", "failed", "episodes"], ...] = (
    "admitted", "shed", "peak_in_flight", "answered", "failed", "episodes")


def admission(settings: Settings) -> AppCounters:
    """The app workers' counters summed, as each worker last published them (app/main.py, every ADMISSION_PUBLISH):
    requests admitted and shed, the sum of their peaks in flight, answers, failed answers (5xx, shed included)
    and the app's latency histogram (counts per APP_LATENCY_BOUNDS_MS bucket); with an adaptive bound
    (REPLBENCH_MAX_QUEUE_MS) also the lowest and highest bound any worker set since it started."""
    total: AppCounters = {"admitted": 0, "shed": 0, "peak_in_flight": 0, "answered": 0, "failed": 0, "workers": 0,
                          "latency_counts": [0] * (len(APP_LATENCY_BOUNDS_MS) + 1), "limit_low": None,
                          "limit_high": None, "episodes": 0, "standing_s": 0.0}
    if settings.app_url:  # an app not started here publishes nothing we can read
        return total
    for path in settings.app_dir.glob("admission-*.json"):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        total["workers"] += 1
        for key in SUMMED:
            total[key] += int(data.get(key, 0))
        total["standing_s"] = max(total["standing_s"], float(data.get("standing_s", 0.0)))  # the longest worker's
        if data.get("mode"):
            total["mode"] = data["mode"]
        for i, count in enumerate(data.get("latency_counts", [])[:len(total["latency_counts"])]):
            total["latency_counts"][i] += int(count)
        total["limit_low"] = _bound(total["limit_low"], data.get("limit_low"), min)
        total["limit_high"] = _bound(total["limit_high"], data.get("limit_high"), max)
    return total


def _bound(held: int | None, published: int | None, pick: Callable[[int, int], int]) -> int | None:
    """A worker's published bound (None: it set none) folded into the range the workers before it gave."""
    if published is None:
        return held
    return int(published) if held is None else pick(held, int(published))


def admission_settings(settings: Settings) -> Admission:
    """The admission the app runs with, as the app itself resolves it (app/main.py admission()): the settings'
    fields of the record its counters later join."""
    mode = settings.admission
    if mode == "none":
        return Admission(mode=mode, limit_per_worker=0, queue_ms=0)
    queue_ms = settings.max_queue_ms or (CODEL_QUEUE_MS if mode == "codel" else 0)
    if mode == "codel":
        return Admission(mode=mode, limit_per_worker=settings.max_inflight, queue_ms=queue_ms,
                         target_ms=settings.codel_target_ms, interval_ms=CODEL_INTERVAL_MS,
                         learn_s=CODEL_LEARN_SECONDS)
    return Admission(mode=mode, limit_per_worker=settings.max_inflight, queue_ms=queue_ms)


def app_settings(settings: Settings) -> AppSettings:
    """The app as the settings start it, as meta.json records it."""
    return AppSettings(workers=settings.app_workers, driver=settings.driver, worker_class=settings.worker_class,
                       pool_size=settings.pool_size, statement_timeout_s=settings.statement_timeout,
                       max_inflight=settings.max_inflight, max_queue_ms=settings.max_queue_ms,
                       admission=admission_settings(settings),
                       transport="unix socket" if settings.app_socket("master") else "tcp")


def bound_text(adm: Admission, taken: bool = True, pool: int | None = None, per_worker: bool = False) -> str:
    """The admission as a run's summary records it: "none" with the client's pool of connections that bounds the
    app then (pool, the summary's client_connections), "64", an adaptive bound with the range it took ("adaptive,
    250 ms of queue: 64–412"; taken=False leaves the range out), and under codel the condition it held in ("…, only
    while a queue stood ≥ 20 ms for 500 ms, after each worker's first 5 s of answers"); per_worker names the
    bound's unit right after it ("…: 64–412 in flight per worker, only while …")."""
    mode = adm.mode or "always"
    if mode == "none":
        return (f"none in the app: vegeta's {pool:,} connections" if pool
                else "none (REPLBENCH_ADMISSION=none: the unbounded app)")
    limit = adm.limit_per_worker or 0
    queue_ms = adm.queue_ms or 0
    if not queue_ms:
        text = str(limit or "none")
    else:
        low, high = adm.limit_low, adm.limit_high
        span = f": {low}–{high}" if taken and low is not None and high is not None else ""
        text = f"adaptive, {queue_ms} ms of queue{span}"
    if per_worker:
        text += " in flight per worker"
    if mode == "codel":
        text = f"codel: {text}, only while a queue stood ≥ {adm.target_ms} ms for {adm.interval_ms} ms"
        if taken and adm.learn_s:  # the block says it; a sweep's table row stays short
            text += f", after each worker's first {adm.learn_s} s of answers"
    return text


def answered_since(before: AppCounters, now: AppCounters) -> Answered:
    """What the app answered between two admission() snapshots: requests, failed ones, and the app-side p99 (ms)."""
    counts = [b - a for a, b in zip(before.get("latency_counts", []), now.get("latency_counts", []))]
    return {"requests": now.get("answered", 0) - before.get("answered", 0),
            "failed": now.get("failed", 0) - before.get("failed", 0),
            "p99_ms": histogram_percentile(counts, APP_LATENCY_BOUNDS_MS, 99)}


def base_url(settings: Settings) -> str:
    return settings.app_url or f"http://{settings.app_listen}:{settings.app_port}"


def start(settings: Settings) -> int:
    """Start gunicorn unless it runs already; waits until /health answers. An app at a URL (a topology file's
    [app]) is only checked: it must answer /health."""
    if settings.app_url:
        try:
            with urllib.request.urlopen(base_url(settings) + "/health", timeout=5) as resp:
                if resp.status == 200:
                    return 0
        except (urllib.error.URLError, OSError) as exc:
            raise AppError(f"the app at {settings.app_url} does not answer /health: {exc}") from None
        raise AppError(f"the app at {settings.app_url} does not answer /health with 200")
    pid = app_pid(settings)
    if pid and _started_with(settings):
        return pid
    if pid:  # started with other settings: the app reads them once, at its start
        stop(settings)

    owner = port_owner(settings.app_port)
    if owner:
        raise AppError(f"app port {settings.app_port} is already in use by {owner}; set REPLBENCH_APP_PORT")
    settings.app_dir.mkdir(parents=True, exist_ok=True)
    pid_file(settings).unlink(missing_ok=True)
    for stale in settings.app_dir.glob("admission-*.json"):  # counters of workers that are gone
        stale.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "gunicorn", "app.main:create_app",
           "--bind", f"{settings.app_listen}:{settings.app_port}",
           "--workers", str(settings.app_workers),
           "--worker-class", WORKER_CLASSES[settings.worker_class],
           "--pid", str(pid_file(settings)),
           "--control-socket", str(settings.app_dir / "gunicorn.ctl"),
           "--graceful-timeout", "5",
           "--keep-alive", "75",
           "--backlog", str(APP_BACKLOG),
           "--preload"]  # the app's modules imported once, so a worker forked on a reload (fresh()) starts at once
    env = dict(os.environ, **settings.as_env(), PYTHONPATH=str(ROOT))
    with open(settings.app_dir / "gunicorn.log", "ab") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    (settings.app_dir / FINGERPRINT).write_text(json.dumps({"pid": proc.pid, "settings": _fingerprint(settings)},
                                                           sort_keys=True))
    deadline = time.monotonic() + APP_START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AppError(f"gunicorn exited (code {proc.returncode}); see {settings.app_dir / 'gunicorn.log'}")
        if _healthy(settings) and app_pid(settings):
            return proc.pid
        time.sleep(0.05)
    stop(settings)
    raise AppError(f"the app did not answer /health within {APP_START_TIMEOUT:.0f} s; "
                   f"see {settings.app_dir / 'gunicorn.log'}")


def fresh(settings: Settings) -> int:
    """The app a run measures, ready: renew(settings) and wait for it."""
    return renew(settings)()


def renew(settings: Settings) -> Callable[[], int]:
    """Begin making the app a run measures: fresh workers (new database connections, which see the settings just
    applied, and admission counters, bound and learning from zero, as at a start), started with these settings.
    Returns the wait for it (the app's pid), so the caller can do other work meanwhile. An app already running with
    these settings gets its workers replaced (gunicorn's HUP: new workers forked from the preloaded master, the
    old ones stopped gracefully, which takes them a few tenths of a second); otherwise it is (re)started."""
    pid = app_pid(settings)
    if not pid or not _started_with(settings):
        stop(settings)
        started = start(settings)
        return lambda: started
    old = _workers(pid)
    os.kill(pid, signal.SIGHUP)

    def replaced() -> int:
        deadline = time.monotonic() + APP_START_TIMEOUT
        while time.monotonic() < deadline:
            workers = _workers(pid)
            if len(workers) >= settings.app_workers and not set(workers) & set(old) and _healthy(settings):
                for stale in old:  # a worker stopped gracefully removes its own; one killed does not
                    (settings.app_dir / f"admission-{stale}.json").unlink(missing_ok=True)
                return pid
            time.sleep(0.05)
        stop(settings)
        raise AppError(f"the app's workers were not replaced within {APP_START_TIMEOUT:.0f} s; "
                       f"see {settings.app_dir / 'gunicorn.log'}")

    return replaced


def wait_published(settings: Settings, since: float, timeout: float = ADMISSION_SETTLE) -> None:
    """Wait until every worker has published its counters after `since` (a time.time()), at most `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pid = app_pid(settings)
        files = [settings.app_dir / f"admission-{w}.json" for w in (_workers(pid) if pid else [])]
        try:
            if all(f.stat().st_mtime >= since for f in files):
                return
        except OSError:
            pass  # not yet published
        time.sleep(0.05)


def _workers(pid: int) -> list[int]:
    """The gunicorn master's live workers (one that exits meanwhile is not one)."""
    try:
        children = psutil.Process(pid).children()
    except psutil.NoSuchProcess:
        return []
    live = []
    for child in children:
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                live.append(child.pid)
        except psutil.NoSuchProcess:
            continue
    return live


def _healthy(settings: Settings) -> bool:
    try:
        with urllib.request.urlopen(base_url(settings) + "/health", timeout=2) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _fingerprint(settings: Settings) -> dict[str, str]:
    return {k: v for k, v in settings.as_env().items() if k not in HARNESS_ONLY}


def _started_with(settings: Settings) -> bool:
    """Whether the running app was started here with these settings (its fingerprint file names its pid and them;
    an app another version of replbench started has none, or an older one)."""
    try:
        recorded = json.loads((settings.app_dir / FINGERPRINT).read_text())
    except (OSError, ValueError):
        return False
    return recorded.get("pid") == app_pid(settings) and recorded.get("settings") == _fingerprint(settings)


def stop(settings: Settings, timeout: float = 15.0) -> bool:
    """Stop gunicorn (SIGTERM to the master by pid, workers follow); True if it was running."""
    pid = app_pid(settings)
    if not pid:
        return False
    pids = [p.pid for p in app_processes(settings)]
    os.kill(pid, signal.SIGTERM)
    for left in wait_gone(pids, timeout):
        os.kill(left, signal.SIGKILL)
    pid_file(settings).unlink(missing_ok=True)
    return True
