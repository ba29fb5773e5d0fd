"""The topology subcommands of ./run.sh (up, down, status, dataset, reset, test): each turns parsed arguments into
calls on the harness modules and prints the outcome. Errors are raised; the command line reports them."""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..core.config import LANE_STOP_S, ROOT, SCHEMAS, Settings
from ..core.progress import Progress
from ..topology import appserver, dataset, knobs, links, nodes
from ..topology.bringup import ensure_topology
from ..topology.install import (
    ensure_compose_tool,
    ensure_datagen,
    ensure_mariadb,
    ensure_node_exporter,
    ensure_toxiproxy,
    ensure_vegeta,
)
from .args import settings_from


def cmd_up(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    already = all(nodes.node_up(n, settings) for n in settings.nodes) and appserver.app_pid(settings)
    ensure_topology(settings)
    counts = dataset.row_counts(settings)
    for schema in SCHEMAS:
        per_node = {name: c[schema] for name, c in counts.items()}
        if len(set(per_node.values())) != 1:
            raise nodes.TopologyError(f"row counts of {schema}.accounts differ between nodes: {per_node}")
    print("replbench: already running" if already else "replbench: up")
    print_status(settings, count_rows=False)
    print("row counts: " + ", ".join(f"{s} {counts['master'][s]:,} on all {len(settings.nodes)} nodes"
                                     for s in SCHEMAS))
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    app = appserver.stop(settings)
    links.stop(settings)
    stopped = nodes.stop_all(settings)
    if not stopped and not app:
        print("replbench: nothing was running")
    else:
        print(f"replbench: stopped {', '.join(([] if not app else ['app']) + stopped)}")
    if settings.external:
        print(f"replbench: the servers of {settings.topology_name} are not ours: left running, untouched")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    return print_status(settings, count_rows=args.rows)


def print_status(settings: Settings, count_rows: bool) -> int:
    info = dataset.dataset_info(settings)
    print(f"state: {settings.state}")
    if settings.external:
        print(f"topology: {settings.topology_name} (your servers, SQL over TCP as {settings.db_user!r}; never "
              "started, stopped or copied by replbench)")
    print("dataset: " + ("not built" if info is None else
                         f"{info['accounts']:,} accounts, seed {info['seed']}, built {info['built_at']}"))
    where = "host:port" if settings.external else "port"
    width = max([5] + [len(f"{n.host}:{n.port}") for n in settings.nodes]) if settings.external else 5
    header = f"{'node':<9} {'role':<8} {where:>{width}} {'pid':>8} {'state':<5} {'replication':<26} {'lag':>6}"
    if count_rows:
        header += "".join(f" {s:>12}" for s in SCHEMAS)
    print(header)
    healthy = True
    for node in settings.nodes:
        st = nodes.node_status(node, settings, count_rows=count_rows)
        alive = bool(st.pid) or (node.external and st.replication != "-")
        up = "up" if alive else "down"
        healthy &= alive and (node.role == "master" or st.replication == "IO=Yes SQL=Yes")
        address = f"{node.host}:{node.port}" if node.external else str(st.port)
        line = (f"{st.name:<9} {st.role:<8} {address:>{width}} {st.pid or '-':>8} {up:<5} {st.replication:<26} "
                f"{st.lag:>6}")
        if count_rows:
            rows = st.rows or {}
            line += "".join(f" {('-' if rows.get(s) is None else format(rows[s], ',')):>12}" for s in SCHEMAS)
        print(line)
        if st.error:
            print(f"          last error: {st.error}")
    app_pid = appserver.app_pid(settings)
    print(f"app       gunicorn {settings.app_port:>5} {app_pid or '-':>8} {'up' if app_pid else 'down'}"
          f"  workers={settings.app_workers} driver={settings.driver} worker={settings.worker_class}")
    return 0 if healthy else 1


def cmd_dataset(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    info = dataset.dataset_info(settings)
    if info is not None and not args.rebuild:
        dataset.check_matches(settings)
        print(f"replbench: dataset already built ({info['accounts']:,} accounts, seed {info['seed']}); "
              "use --rebuild to rebuild")
        return 0
    appserver.stop(settings)
    progress = Progress("dataset")
    info = dataset.build(settings, progress)
    print(f"dataset built: {settings.accounts:,} accounts in both schemas on all {len(settings.nodes)} nodes")
    print("phase timings:\n" + progress.summary())
    print_checksums(info["checksums"])
    return 0


def print_checksums(sums: dict[str, dict[str, int | None]]) -> None:
    print("CHECKSUM TABLE:")
    for node, per_schema in sums.items():
        print(f"  {node:<9} " + "  ".join(f"{schema}.accounts={value}" for schema, value in per_schema.items()))


def cmd_reset(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    app_was_running = appserver.stop(settings)
    links.stop(settings)  # the replicas come back on their direct connections
    progress = Progress("reset")
    dataset.reset(settings, progress)
    if settings.external:
        with progress.phase("replication settings back to the reference"):
            knobs.apply(settings, knobs.Knobs())
    if app_was_running:
        appserver.start(settings)
    if settings.external:
        print(f"replbench: {settings.topology_name}: replication settings restored to the reference and replication "
              "running on both replicas. The data is NOT restored (your servers are never copied): the accounts "
              "runs changed stay changed; ./run.sh dataset --rebuild loads them again through SQL\n"
              + progress.summary())
        return 0
    print("replbench: all nodes restored to the pristine dataset\n" + progress.summary())
    return 0


def cmd_test(args: argparse.Namespace) -> int:
    """Install what the tests need (MariaDB, node_exporter, docker-compose, pinned vegeta and toxiproxy), then
    run pytest; --fast runs the unit tier alone, which needs none of them."""
    extra = [a for a in args.pytest_args if a != "--"]
    if args.fast:  # the unit tier shares no server: its files spread over every core (pytest-xdist), one file a worker
        with machine_type_caches():
            return run_tests(["-m", "unit", "-n", "auto", "--dist", "loadfile", *extra])
    ensure_mariadb()
    ensure_node_exporter()
    ensure_compose_tool()
    settings = Settings.from_env()
    ensure_vegeta(settings)
    ensure_toxiproxy(settings)
    ensure_datagen(settings)
    if "-m" in extra or any((ROOT / a.split("::")[0]).exists() for a in extra if not a.startswith("-")):
        return run_tests(extra)  # the tests or the tier asked for
    # the unit tier first, over every core while no server runs (as --fast), then the rest in lanes
    with machine_type_caches():
        unit = run_tests(["-m", "unit", "-n", "auto", "--dist", "loadfile", *extra])
    rest = ["-m", "not unit", *extra]
    return (run_lanes(rest, args.lanes) if args.lanes > 1 else run_tests(rest)) or unit


TYPE_CACHES = ("mypy-cache", "mypy-cache-evidence")  # pyproject.toml's cache_dir, tests/test_evidence.py's


@contextlib.contextmanager
def machine_type_caches(state: Path = ROOT / ".state") -> Iterator[None]:
    """The unit tier's type checks start from the machine's copy of mypy's caches when this clone has none (a fresh
    clone), and leave theirs there after: mypy re-reads a module whose path or time differs by its hash, so a copy
    from another clone is as good as its own (docs/development.md). Kept in REPLBENCH_VENV_CACHE, which run.sh sets;
    without it (pytest run directly) the clone keeps its own."""
    machine = os.environ.get("REPLBENCH_VENV_CACHE")
    if not machine:
        yield
        return
    for name in TYPE_CACHES:
        ours, shared = state / name, Path(machine) / name
        if not ours.exists() and shared.is_dir():
            with _machine_lock(Path(machine)):
                shutil.copytree(shared, ours)  # copy2: its files' times kept, as mypy's records of them expect
    try:
        yield
    finally:
        for name in TYPE_CACHES:
            if (state / name).is_dir():
                _leave_on_machine(state / name, Path(machine) / name)


@contextlib.contextmanager
def _machine_lock(machine: Path) -> Iterator[None]:
    machine.mkdir(parents=True, exist_ok=True)
    with open(machine / "type-caches.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another clone may be copying the same caches
        yield


def _leave_on_machine(ours: Path, shared: Path) -> None:
    """This clone's cache becomes the machine's: copied beside it, then swapped in by rename."""
    with _machine_lock(shared.parent):
        fresh, old = shared.with_name(shared.name + ".new"), shared.with_name(shared.name + ".old")
        for leftover in (fresh, old):
            shutil.rmtree(leftover, ignore_errors=True)
        shutil.copytree(ours, fresh)
        if shared.exists():
            shared.rename(old)
        fresh.rename(shared)
        shutil.rmtree(old, ignore_errors=True)


def pytest_command(extra: list[str]) -> list[str]:
    """pytest over the whole suite, or over the test files or node ids given
    (`./run.sh test -- tests/test_campaign.py -k resumes`); matplotlib's font cache built first."""
    named = any((ROOT / a.split("::")[0]).exists() for a in extra if not a.startswith("-"))
    # matplotlib builds its font cache on first import by running fc-list: on a fresh machine that first import
    # would be a unit test's (the report's charts), which may start no process; so it is built here, once
    subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], cwd=ROOT, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return [sys.executable, "-m", "pytest", "-ra", *([] if named else [str(ROOT / "tests")]), *extra]


def run_tests(extra: list[str]) -> int:
    """pytest in one session (the tests bring up their own small topology on other ports and state)."""
    return subprocess.call(pytest_command(extra), cwd=ROOT, env=dict(os.environ))


def run_lanes(extra: list[str], lanes: int) -> int:
    """pytest in `lanes` sessions side by side, each with its own small topology (tests/conftest.py gives lane k its
    ports), taking the test files from one queue; lane 0 prints as it goes, each other lane's output follows it.
    The first failing lane's exit code; an interrupt reaches every lane, so each tears its topology down."""
    cmd = pytest_command(extra)
    with tempfile.TemporaryDirectory(prefix="replbench-lanes-") as tmp:
        claims = Path(tmp) / "claims"
        claims.mkdir()
        procs: list[subprocess.Popen[bytes]] = []
        with contextlib.ExitStack() as logs:
            try:
                for lane in range(lanes):
                    out = logs.enter_context(open(Path(tmp) / f"lane{lane}.log", "wb")) if lane else None
                    env = dict(os.environ, REPLBENCH_TEST_LANE=str(lane), REPLBENCH_TEST_CLAIMS=str(claims))
                    procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out,
                                                  stderr=subprocess.STDOUT if out else None))
                codes = [proc.wait() for proc in procs]
            finally:
                _interrupt_lanes(procs)
        for lane in range(1, lanes):
            print(f"\n--- lane {lane} of {lanes} (its own topology; the files it took) ---", flush=True)
            sys.stdout.buffer.write((Path(tmp) / f"lane{lane}.log").read_bytes())
            sys.stdout.flush()
    return next((code for code in codes if code), 0)


def _interrupt_lanes(procs: list[subprocess.Popen[bytes]]) -> None:
    """Every lane still running gets SIGINT (pytest tears its topology down), then SIGKILL after LANE_STOP_S."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    for proc in procs:
        try:
            proc.wait(timeout=LANE_STOP_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
