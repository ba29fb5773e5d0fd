"""Test fixtures: one small real topology (3 mariadbd + gunicorn) for the whole session, on its own ports and
state folder so it never touches the user's dataset. Built once, torn down at the end.

The tiers (docs/development.md): a test is `unit` unless it asks for the topology (the `topo` fixture, directly
or through another fixture) or is marked otherwise; a unit test starts no process (the command line's usage errors
are checked in-process with `run_main`). `integration` tests share the session topology; `disruptive` ones (they
kill nodes, rebuild, add replicas, resize the pool) run last. `./run.sh test --fast` runs the unit tier alone.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from replbench.analysis import costmodel
from replbench.core import sql
from replbench.core.config import ROOT, ReplbenchError, Settings
from replbench.core.progress import Progress
from replbench.core.results import Drain, Observation
from replbench.topology import appserver, dataset, links, nodes

TEST_ACCOUNTS = int(os.environ.get("REPLBENCH_TEST_ACCOUNTS", "20000"))
# `./run.sh test` runs the tests that need servers in lanes: pytest sessions side by side, each with a topology of
# its own, on ports LANE_PORT_STEP (and LANE_APP_PORT_STEP) apart, taking the test files from one queue in order
# (pytest_runtestloop below); docs/development.md#tests
LANE = int(os.environ.get("REPLBENCH_TEST_LANE", "0"))
LANE_CLAIMS = os.environ.get("REPLBENCH_TEST_CLAIMS", "")  # the queue: a folder the lanes share ("": no lanes)
# past a lane's own nodes (+0..+4), a second small topology (+10..+12) and toxiproxy (+90..+99: API, 9 proxies)
LANE_PORT_STEP = 50
LANE_APP_PORT_STEP = 20  # apart from every lane's own second app (test_external's, at its app port + 50)
TEST_PORT_BASE = int(os.environ.get("REPLBENCH_TEST_PORT_BASE", "3406")) + LANE_PORT_STEP * LANE
TEST_APP_PORT = int(os.environ.get("REPLBENCH_TEST_APP_PORT", "8180")) + LANE_APP_PORT_STEP * LANE
# lanes share the host on purpose: the settle's wait for a near-idle host would wait on the other lane
LANE_HOST_BUSY = str(100 * (os.cpu_count() or 1))
TEST_IDLE_WINDOW = "0.5s"
FIXTURES = Path(__file__).parent / "fixtures" / "vegeta"  # a copy of the files used from ../shared/fixtures/vegeta


def env_for(state: Path, **extra: str) -> dict[str, str]:
    env = {
        "REPLBENCH_STATE": str(state),
        "REPLBENCH_RESULTS": str(state / "results"),
        "REPLBENCH_PORT_BASE": str(TEST_PORT_BASE),
        "REPLBENCH_APP_PORT": str(TEST_APP_PORT),
        "REPLBENCH_ACCOUNTS": str(TEST_ACCOUNTS),
        "REPLBENCH_SEED": "42",
        "REPLBENCH_BUFFER_POOL": "256M",
        "REPLBENCH_APP_WORKERS": "2",
        "REPLBENCH_DB_TIMEOUT": "2",
        # half a second of idle before each attack instead of the 20 s a rate of 100/s or less gets
        # (REPLBENCH_IDLE_WINDOW): the tests check what the figures are made of, not how well they resolve a small
        # cost. It holds none of cpu.csv's one-second samples (a net figure's resolution needs two or more): the
        # test of the resolution, and test_run's of the samplers' clock before the attack, read a run with a longer
        # window (IDLE_SAMPLED_RUN)
        "REPLBENCH_IDLE_WINDOW": TEST_IDLE_WINDOW,
        **({"REPLBENCH_HOST_BUSY": LANE_HOST_BUSY} if LANE_CLAIMS else {}),
    }
    env.update(extra)
    return env


STATE_PREFIX = "replbench-test-"
SESSION_LOCK = ".session.lock"  # held (flock) by the live test session that owns the folder
STALE_AFTER_S = 60.0  # a folder this old whose lock nobody holds was left by a killed session


def sweep_stale_topologies(tmp: Path | None = None) -> list[str]:
    """Stop and remove what a killed test session left behind (its teardown never ran: an interrupt during the
    topology's setup, a `timeout` kill): every replbench-test-* folder whose session lock no live session holds.
    Returns the folders swept."""
    swept = []
    for folder in sorted(Path(tmp or tempfile.gettempdir()).glob(f"{STATE_PREFIX}*")):
        try:
            if not folder.is_dir() or time.time() - folder.stat().st_mtime < STALE_AFTER_S:
                continue  # a session that has just created its folder has not locked it yet
            fd = os.open(folder / SESSION_LOCK, os.O_RDWR | os.O_CREAT)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # a live session holds it
        try:
            stale = Settings.from_env(env_for(folder))
            for stop in (links.stop, appserver.stop, nodes.stop_all):  # by the pid files in the folder
                try:
                    stop(stale)
                except (ReplbenchError, OSError) as exc:
                    print(f"replbench tests: could not stop what {folder} left: {exc}", file=sys.stderr)
        finally:
            os.close(fd)
        shutil.rmtree(folder, ignore_errors=True)
        swept.append(folder.name)
    return swept


@pytest.fixture(scope="session")
def state_dir() -> Iterator[Path]:
    swept = sweep_stale_topologies()
    if swept:
        print(f"replbench tests: stopped and removed {len(swept)} test topology folder(s) a killed session left: "
              + ", ".join(swept), file=sys.stderr)
    folder = Path(tempfile.mkdtemp(prefix=STATE_PREFIX))
    lock = os.open(folder / SESSION_LOCK, os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        yield folder
    finally:
        os.close(lock)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def settings(state_dir: Path) -> Settings:
    return Settings.from_env(env_for(state_dir))


@pytest.fixture(scope="session")
def topo(settings: Settings) -> Iterator[Settings]:
    """The running test topology with its dataset and app; stopped (no stray processes) at the end."""
    try:
        dataset.build(settings, Progress("test-dataset"))
        nodes.start_all(settings)
        appserver.start(settings)
        yield settings
    finally:
        appserver.stop(settings)
        nodes.stop_all(settings)


# Runs made once per session and read by several tests (each costs ~10 s of settle, settings, app, idle window,
# catch-up and checksum around its attack): made in the session's environment when a test first asks for one, in
# whatever order the tests come. No test writes into a shared run's folder; a test whose check needs a run right
# after something of its own (a setting to forget, a divergence, a window of its own) makes its own run.
WRITE_RUN = ("write", "40", "--duration", "2s")  # also test_run's short run of write
GET_RUN = ("get", "40", "--duration", "2s")  # also test_run's short run of get
BULK_RUN = ("write-bulk", "10", "--duration", "2s", "--binlog-format", "ROW")  # ROW FULL: the reference's
DRAIN_RUN = ("apply-capacity", "write", "--writes", "300", "--rate", "100")  # each replica alone
# an idle window of its own, long enough for the one-second idle samples a net figure's resolution needs (and for
# cpu.csv to hold samples before the attack): the session's is shorter (TEST_IDLE_WINDOW)
IDLE_SAMPLED_RUN = ("write", "40", "--duration", "3s", "--idle-window", "4s")


@dataclass(frozen=True)
class Made:
    """A shared run: its process, and whether every replica replicated right after it (read then, not when a
    test that reads the run later looks: other tests' runs may have come between)."""

    proc: subprocess.CompletedProcess[str]
    replicating_after: bool


class SharedRuns:
    """shared_run(*args): the session's run of `./run.sh ARGS`, made on the first call, the same one after."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.made: dict[tuple[str, ...], Made] = {}

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.made_of(*args).proc

    def made_of(self, *args: str) -> Made:
        if args not in self.made:
            proc = run_cli(list(args), env_for(self.settings.state))
            try:
                after = replicating(self.settings)
            except (ReplbenchError, sql.MySQLError, OSError):
                after = False
            self.made[args] = Made(proc, after)
        return self.made[args]


@pytest.fixture(scope="session")
def shared_run(topo: Settings) -> SharedRuns:
    return SharedRuns(topo)


SEMI_SYNC_RUN = ("write", "20", "--duration", "2s", "--semi-sync", "after_sync")
FAR_LINKS = ("--link", "replica1=20ms", "--link", "replica2=20ms")


@dataclass(frozen=True)
class SemiSyncRuns:
    """SEMI_SYNC_RUN with both replicas 20 ms away, then at once the same run without links (near), and the port
    replica1 replicated from right after the near run (the run without links puts it back on the master's own)."""

    far: subprocess.CompletedProcess[str]
    near: subprocess.CompletedProcess[str]
    replica1_source_port_after_near: int


@pytest.fixture(scope="session")
def semi_sync_runs(topo: Settings) -> SemiSyncRuns:
    """The pair semi-sync's tests read: the wait's round trip (far against near), and what near alone records."""
    env = env_for(topo.state)
    far = run_cli([*SEMI_SYNC_RUN, *FAR_LINKS], env)
    near = run_cli(list(SEMI_SYNC_RUN), env)
    return SemiSyncRuns(far, near, master_port_of(topo, "replica1"))


TIERS = ("unit", "integration", "disruptive")
SERVER_FIXTURES = {"topo"}  # asking for one of these (directly or not) makes a test an integration test


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "unit: needs no server and starts no process (./run.sh test --fast)")
    config.addinivalue_line("markers", "integration: runs against the shared session topology, or starts a process")
    config.addinivalue_line("markers", "disruptive: disturbs the topology (kills, rebuilds, resizes): runs last")


def tier_of(item: pytest.Item) -> str:
    """The tier a test belongs to: its own marker, else integration when it asks for the topology, else unit."""
    for tier in reversed(TIERS):
        if item.get_closest_marker(tier):
            return tier
    return "integration" if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())) else "unit"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test gets its tier's marker (so `-m unit` selects the fast tier), and the tiers run in order: unit,
    integration, disruptive, each in the files' own order (a stable sort) but for its slowest files, which go
    first (HEAVY_FIRST)."""
    for item in items:
        tier = tier_of(item)
        if not item.get_closest_marker(tier):
            item.add_marker(getattr(pytest.mark, tier))
    items.sort(key=lambda item: (TIERS.index(tier_of(item)), _heavy_rank(item)))


# each tier's slowest files, slowest first (a fresh clone's --durations): xdist hands the unit tier's files out in
# collection order, and the lanes take the others' from one queue in that order, so the longest start first and the
# short ones fill in around them (the last file taken sets when the tier ends)
HEAVY_FIRST = {
    "unit": ("test_report_rebuild.py", "test_types.py", "test_costmodel.py", "test_evidence.py", "test_codec.py",
             "test_study.py"),
    "integration": ("test_costmodel.py", "test_run.py", "test_cli.py", "test_replication_settings.py",
                    "test_faults.py", "test_netns.py", "test_rows_change.py", "test_sweep_report.py", "test_study.py",
                    "test_external.py", "test_admission.py", "test_app.py"),
    "disruptive": ("test_fanout.py", "test_topology.py", "test_run.py", "test_faults.py"),
}


def _heavy_rank(item: pytest.Item) -> int:
    heavy = HEAVY_FIRST[tier_of(item)]
    return heavy.index(item.path.name) if item.path.name in heavy else len(heavy)


# a file whose tests leave the app's ports in TIME_WAIT (overloads: 60 s, which the next run's settle waits out,
# docs/decisions/settle-time-wait.md) and the file taken with it, whose tests send the app no run (HTTP requests
# alone), so they fill that minute in the same lane
TAKEN_WITH = {"test_app.py": "test_admission.py"}


def _file_groups(items: list[pytest.Item]) -> list[list[pytest.Item]]:
    """The items (in their tiers' order) cut where the file or the tier changes, but for a file TAKEN_WITH the one
    before it: the units lanes take."""
    groups: list[list[pytest.Item]] = []
    for item in items:
        last = groups[-1][-1] if groups else None
        if last is not None and tier_of(last) == tier_of(item) and (
                last.path == item.path or TAKEN_WITH.get(item.path.name) == last.path.name):
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups


def _claimed(folder: Path, index: int) -> bool:
    """True when this lane is the first to take group `index` of the queue (a file made once, atomically)."""
    try:
        os.close(os.open(folder / f"{index:05d}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool | None:
    """In a lane, pytest's own loop over the groups this lane takes from the shared queue: every lane walks the same
    groups in the same order (integration before disruptive), taking the next one nobody took, so the lanes end
    together and each runs its disruptive tests after its integration ones, on its own topology."""
    if not LANE_CLAIMS or session.config.option.collectonly:
        return None
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        raise session.Interrupted(f"{session.testsfailed} error(s) during collection")
    folder = Path(LANE_CLAIMS)
    groups = _file_groups(session.items)
    mine = (group for index, group in enumerate(groups) if _claimed(folder, index))
    current = next(mine, None)
    while current is not None:
        following = None
        for position, item in enumerate(current):
            last = position == len(current) - 1
            if last:  # the next group taken decides which fixtures this item's teardown keeps
                following = next(mine, None)
            nextitem = (current[position + 1] if not last else following[0] if following else None)
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if session.shouldfail:
                raise session.Failed(session.shouldfail)
            if session.shouldstop:
                raise session.Interrupted(session.shouldstop)
        current = following
    return True


class ProcessStarted(AssertionError):
    """A unit test tried to start a process."""


@contextlib.contextmanager
def _no_process(item: pytest.Item) -> Iterator[None]:
    """Within a unit test's setup (its fixtures of every scope included), call and teardown, starting a process
    fails with the command tried: mark the test integration, or check it in-process (run_main)."""
    if tier_of(item) != "unit":
        yield
        return
    original = subprocess.Popen.__init__

    def refuse(self: subprocess.Popen, args: Any, *rest: Any, **kwargs: Any) -> None:
        raise ProcessStarted(f"a unit test started a process: {args!r} (mark it integration or run it in-process)")

    subprocess.Popen.__init__ = refuse  # type: ignore[method-assign]
    try:
        yield
    finally:
        subprocess.Popen.__init__ = original  # type: ignore[method-assign]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    with _no_process(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with _no_process(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    with _no_process(item):
        return (yield)


# what every finished run's summary records (core/results.FinishedRun), neutral: a synthetic summary a test gives
# its own figures on top of (one with a write among its outcomes needs its consistency too)
FINISHED_RUN: dict[str, Any] = {
    "folder": "20000101-000000-run", "cores": 2, "duration_s": 30, "errors": [], "guards": [], "requests": 0,
    "latency_ms": dict.fromkeys(("min", "mean", "p50", "p90", "p95", "p99", "max"), 0), "status_codes": {},
    "outcomes": {}, "cpu_seconds": {}, "cpu_mean_percent": {}, "cpu_ms_per_request": {}, "lag": {}, "catch_up_s": {},
    "binlog": {"master_binlog_bytes": 0, "replica_received_bytes": {}, "successful_writes": 0, "master_com_insert": 0,
               "master_com_update": 0, "heartbeat_writes": 0, "heartbeat_bytes_estimated": 0,
               "heartbeat_bytes_per_write": 0},
    "replicas_not_replicating": []}


def finished_run(doc: dict[str, Any]) -> dict[str, Any]:
    """A synthetic finished run's summary: FINISHED_RUN's fields under the test's own (its latency_ms and binlog
    figures over FINISHED_RUN's)."""
    return {**FINISHED_RUN, **doc, **{part: {**FINISHED_RUN[part], **doc[part]} for part in ("latency_ms", "binlog")
                                      if part in doc}}


UNUSED_PORT_BASE = "9"  # discard, daytime...: nothing of ours listens there, so a slip fails at once


def run_main(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """The command line in this process, as `./run.sh ARGS` would run it: (exit code, stdout, stderr). For what
    ends before anything starts (usage errors, help, listings); the signal handlers it installs are put back. By
    default it sees a state folder of its own and ports where nothing listens, never the user's topology."""
    from replbench.cli.main import main

    scratch = None
    if env is None:
        scratch = Path(tempfile.mkdtemp(prefix="replbench-main-"))
        env = env_for(scratch, REPLBENCH_PORT_BASE=UNUSED_PORT_BASE, REPLBENCH_APP_PORT="13")
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    saved = {k: os.environ.get(k) for k in env}
    out, err = io.StringIO(), io.StringIO()
    try:
        os.environ.update(env)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(args)
            except SystemExit as exc:  # argparse's --help
                code = exc.code if isinstance(exc.code, int) else 0
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return code, out.getvalue(), err.getvalue()


def run_cli(args: list[str], env: dict[str, str], timeout: float = 600,
            **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """./run.sh's Python side (python -m replbench) with the given environment."""
    full_env = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-m", "replbench", *args], cwd=ROOT, env=full_env, text=True,
                          capture_output=True, timeout=timeout, **kwargs)


def http(settings: Settings, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
         content_type: str = "application/json", timeout: float = 10) -> tuple[int, dict[str, str], Any]:
    """One HTTP request to the app; returns (status, headers, decoded JSON body)."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(appserver.base_url(settings) + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            return resp.status, dict(resp.headers), json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        payload = err.read()
        try:
            decoded = json.loads(payload)
        except ValueError:
            decoded = {"_raw": payload.decode(errors="replace")}
        return err.code, dict(err.headers), decoded


def wait_until(predicate, timeout: float = 20, interval: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False


def run_folder(output: str) -> Path:
    """The results folder a run printed on its Status line."""
    line = next(line for line in output.splitlines() if line.startswith("Status:"))
    path = Path(line.split("Results:")[1].strip())
    return path if path.is_absolute() else ROOT / path


def study_folder(output: str) -> tuple[Path, dict[str, Any]]:
    """The folder a study printed on its 'study folder:' line, and its study.json."""
    line = next(line for line in output.splitlines() if line.startswith("study folder:"))
    path = Path(line.split(": ", 1)[1].strip())
    path = path if path.is_absolute() else ROOT / path
    return path, json.loads((path / "study.json").read_text())


def master_port_of(settings: Settings, replica: str) -> int:
    """The port a replica replicates from (its Master_Port): the master's own, or a link's proxy."""
    with sql.admin(settings.node(replica), settings) as cur:
        cur.execute("SHOW SLAVE STATUS")
        return int(sql.dict_rows(cur)[0]["Master_Port"])


def replicating(settings: Settings) -> bool:
    """Both threads of every replica running."""
    for replica in settings.replicas:
        with sql.admin(replica, settings) as cur:
            state = sql.replica_threads(cur, settings.flavour)
        if (state.get("io"), state.get("sql")) != ("Yes", "Yes"):
            return False
    return True


# what every cost-model observation records (core/results.Observation), neutral: a test's synthetic run gives its
# own figures on top (no seconds: a cell made from its figures is named by its size and transactions, not a rate)
OBSERVED = {"table": None, "folder": None, "scenario": None, "seconds": 0, "master_cpu_s": None, "replica_cpu_s": None,
            "replica_reads": 0, "binlog_bytes": None, "fsyncs_per_commit": None}


def observed(doc: dict[str, Any]) -> Observation:
    """A synthetic run as the cost model sees it: OBSERVED's fields under the test's own."""
    return Observation(**{**OBSERVED, **doc})


def drained(doc: dict[str, Any]) -> Drain:
    """A synthetic apply-capacity drain (its table None unless the test gives one)."""
    return Drain(**{"table": None, **doc})


def fitted_model(runs: list[dict[str, Any]], drains: list[dict[str, Any]] | tuple[()] = ()) -> dict[str, Any]:
    """The cost model (analysis/costmodel.fit) of a test's synthetic runs and drains, as model.json holds it (the
    keys it was given; core/results.model_of reads it back)."""
    return costmodel.fit([observed(o) for o in runs], [drained(d) for d in drains]).model_dump(
        by_alias=True, exclude_unset=True)
