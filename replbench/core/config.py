"""Configuration: every default of replbench in one place, overridable by environment and CLI.

The environment names are a contract (docs/settings.md, tests and scripts rely on them):
REPLBENCH_STATE, REPLBENCH_PORT_BASE, REPLBENCH_APP_PORT, REPLBENCH_ACCOUNTS, REPLBENCH_SEED, and the others
listed in ``SETTING_LIST``. CLI flags override the environment through ``Settings.with_overrides``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .nodenames import DEFAULT_REPLICAS, MAX_REPLICAS, MIN_REPLICAS, node_names

if TYPE_CHECKING:
    from .topofile import AttackerHost, TopologyFile

ROOT = Path(__file__).resolve().parents[2]  # replbench/core/config.py -> the repository
MYSQL_DIR = ROOT / "mysql"
SCENARIO_DIR = ROOT / "scenarios"
STUDY_DIR = ROOT / "studies"
WORKLOAD_DIR = ROOT / "workloads"  # external tools a live study unit drives (core/workload)
TOOLS_DIR = ROOT / "tools"
TOOLS_BIN = ROOT / ".tools" / "bin"
INDEXED_TABLE = "bench_idx.accounts"  # the table whose secondary indexes mysql/indexes.sql adds
# one index clause of mysql/indexes.sql's ALTER: ADD [UNIQUE] KEY name (columns)
INDEX_CLAUSE_RE = re.compile(r"ADD\s+((?:UNIQUE\s+)?KEY\s+(\w+)\s*\([^)]*\))", re.IGNORECASE)
# a knob's or a setting's value as a study file gives it, and as study.json records a cell's (knobs and changes): a
# word or a whole number (experiments/studyfile._word_or_number; sync_binlog = 0 stays a number). Here, not in
# studyfile, for analysis and the results records to read them by their type (imports run towards core)
Word = int | str
# a cell key's value as a study file gives it, once its type has checked it: a knob's or a setting's word or number,
# a scenario or link (text), a load (a number, whole or not), rows, writes or clients, or a list of names
FileValue = int | float | str | list[str]

@dataclass(frozen=True)
class Setting:
    """One setting: its field in Settings, the environment variable that overrides it, its default (as the
    environment would spell it), the parser that checks and types it, what it means, and the key a study cell sets
    it by ("": a cell cannot; experiments/studyfile takes its cell keys from here)."""

    name: str
    env: str
    default: str
    parse: Callable[[str], Any]
    help: str
    cell: str = ""


def _text(value: str) -> str:
    return value


SETTING_LIST: tuple[Setting, ...] = (
    Setting("state", "REPLBENCH_STATE", ".state", lambda v: _path(v), "state folder (datadirs, sockets, logs, "
            "pristine snapshot)"),
    Setting("results", "REPLBENCH_RESULTS", "results", lambda v: _path(v), "where runs and sweeps are written"),
    Setting("port_base", "REPLBENCH_PORT_BASE", "3306", lambda v: _positive_int(v, "port base"),
            "master port; replicas +1, +2, … +N"),
    Setting("replicas_asked", "REPLBENCH_REPLICAS", "", lambda v: _replica_count(v),
            f"replicas of the native topology, {MIN_REPLICAS} to {MAX_REPLICAS} (empty: as many as the state "
            f"folder has now, {DEFAULT_REPLICAS} at first; a topology file names its own)", cell="replicas"),
    Setting("app_port", "REPLBENCH_APP_PORT", "8080", lambda v: _positive_int(v, "app port"), "app port"),
    Setting("accounts", "REPLBENCH_ACCOUNTS", "8000000", lambda v: _positive_int(v, "accounts"), "dataset size"),
    Setting("seed", "REPLBENCH_SEED", "42", int, "dataset seed (also fixes the ids a run's targets draw)"),
    Setting("buffer_pool", "REPLBENCH_BUFFER_POOL", "4G", _text,
            "innodb_buffer_pool_size each node starts with: the reference --buffer-pool"),
    Setting("drop_indexes", "REPLBENCH_DROP_INDEXES", "", lambda v: _index_names(v),
            f"secondary indexes of {INDEXED_TABLE} a measurement runs without: names, comma-separated, or all "
            "(empty or none: it keeps them all); dropped on the master (replicated) before it, re-created in place "
            "by the next measurement that keeps them and at the end of a study whose cells drop some",
            cell="drop_indexes"),
    Setting("app_workers", "REPLBENCH_APP_WORKERS", str(os.cpu_count() or 2),
            lambda v: _positive_int(v, "app workers"), "gunicorn workers (default: cores)", cell="app_workers"),
    Setting("driver", "REPLBENCH_DRIVER", "asyncmy", lambda v: _choice(v, DRIVERS, "driver"),
            "the app's MySQL driver (chosen by measurement: see bench-app)"),
    Setting("worker_class", "REPLBENCH_WORKER_CLASS", "uvloop",
            lambda v: _choice(v, WORKER_CLASS_NAMES, "worker class"), "gunicorn worker class"),
    Setting("pool_size", "REPLBENCH_POOL_SIZE", "16", lambda v: _positive_int(v, "pool size"),
            "connections per node per worker"),
    Setting("statement_timeout", "REPLBENCH_STATEMENT_TIMEOUT", "2",
            lambda v: _positive_float(v, "statement timeout"), "seconds, server-side limit of every app query"),
    Setting("flavour", "REPLBENCH_FLAVOUR", "mariadb", lambda v: _choice(v, ("mariadb", "mysql"), "flavour"),
            "mysql switches every statement to its MySQL 8 spelling"),
    Setting("app_password", "REPLBENCH_APP_PASSWORD", "replbench-app", _text, "the app users' password"),
    Setting("repl_password", "REPLBENCH_REPL_PASSWORD", "replbench-repl", _text, "the replication user's password"),
    Setting("admin_password", "REPLBENCH_ADMIN_PASSWORD", "replbench-admin", _text,
            "the harness's admin user's password (native nodes)"),
    Setting("read_fallback", "REPLBENCH_READ_FALLBACK", "1", lambda v: v.lower() in ("1", "true", "yes", "on"),
            "1: reads go to the master when no replica can serve"),
    Setting("db_timeout", "REPLBENCH_DB_TIMEOUT", "3", lambda v: _positive_float(v, "db timeout"),
            "seconds to connect, or to wait for a free connection before answering 503"),
    Setting("max_body", "REPLBENCH_MAX_BODY", "16384", lambda v: _positive_int(v, "max body"),
            "largest request body the app accepts (bytes)"),
    Setting("db_hosts", "REPLBENCH_DB_HOSTS", "", _text,
            "host:port ×3 where the app finds the nodes (compose); empty: 127.0.0.1 and the native ports"),
    Setting("max_lag", "REPLBENCH_MAX_LAG", "0", lambda v: _non_negative_float(v, "max lag"),
            "seconds of heartbeat lag above which the app takes a replica out of the read rotation (0: off)"),
    Setting("admission", "REPLBENCH_ADMISSION", "codel", lambda v: _choice(v, ADMISSIONS, "admission"),
            "codel: the in-flight bound (below) holds only while a queue stands (CoDel's test); always: it holds "
            "at all times; none: the app sheds nothing and holds at most vegeta's pool of connections "
            "(REPLBENCH_CLIENT_CONNECTIONS), the excess waiting in the client", cell="admission"),
    Setting("codel_target_ms", "REPLBENCH_CODEL_TARGET_MS", "20",
            lambda v: _bounded_int(v, 1, 10_000, "codel target (ms)"),
            "codel: the queueing delay (ms) that, held for the whole interval, means a queue stands",
            cell="codel_target_ms"),
    Setting("max_inflight", "REPLBENCH_MAX_INFLIGHT", "0", lambda v: _non_negative_int(v, "max in-flight"),
            "requests in flight per app worker above which the excess is answered 503 at once (0: unbounded)",
            cell="max_inflight"),
    Setting("max_queue_ms", "REPLBENCH_MAX_QUEUE_MS", "0", lambda v: _non_negative_int(v, "max queue (ms)"),
            "the bound per worker follows its best answers/s of the last 5 s × this many ms of queue (0: off)",
            cell="max_queue_ms"),
    Setting("client_connections", "REPLBENCH_CLIENT_CONNECTIONS", "auto", lambda v: _client_connections(v),
            "the most connections vegeta opens to the app: auto (CLIENT_CONNECTIONS_PER_WORKER per app worker), "
            "a number, or unlimited (vegeta's descriptor limit)", cell="client_connections"),
    Setting("app_transport", "REPLBENCH_APP_TRANSPORT", "tcp",
            lambda v: _choice(v, APP_TRANSPORTS, "app transport"), "unix: the app reaches the native nodes by "
            "their unix sockets", cell="app_transport"),
    Setting("heartbeat_ms", "REPLBENCH_HEARTBEAT_MS", "100",
            lambda v: _bounded_int(v, 10, 10_000, "heartbeat interval (ms)"),
            "heartbeat period (10 ms and up, as pt-heartbeat allows): the floor of the heartbeat lag (the "
            "cross-check; lag figures come from GTID positions every 10 ms)"),
    Setting("idle_window", "REPLBENCH_IDLE_WINDOW", "auto", lambda v: _idle_window(v),
            "seconds of idle measured before each attack, whose cost every net figure subtracts: auto (2,000 "
            "requests' worth of the rate, 3 to 20 s) or a duration such as 5s"),
    Setting("host_busy", "REPLBENCH_HOST_BUSY", "50", lambda v: _positive_float(v, "host busy threshold"),
            "% of one core other processes may keep busy and the host still count as near idle before a unit "
            "starts (the settle waits up to 15 s for it); the test suite's lanes, which share the host on "
            "purpose, raise it"),
    Setting("find_users", "REPLBENCH_FIND_USERS", "two-step",
            lambda v: _choice(v, FIND_USERS_SHAPES, "find_users shape"),
            "find_users' SQL: two-step, one-trip or server-steps (see bench-app --find-users)"),
    Setting("topology", "REPLBENCH_TOPOLOGY", "", lambda v: str(_path(v)) if v else "",
            "a topology file naming your own servers (empty: the native topology)"),
    Setting("db_user", "REPLBENCH_DB_USER", "replbench", _text, "the harness's user on a topology file's servers"),
    Setting("db_password", "REPLBENCH_DB_PASSWORD", "", _text,
            "its password (environment only: never written to a results file)"),
    Setting("app_user", "REPLBENCH_APP_USER", "", _text,
            "the app's user on a topology file's servers (empty: the harness's)"),
    Setting("ssh_key", "REPLBENCH_SSH_KEY", "", lambda v: str(_path(v)) if v else "",
            "the private key ssh uses to reach a topology file's attacker hosts (empty: ssh's own choice)"),
    Setting("ssh_config", "REPLBENCH_SSH_CONFIG", "", lambda v: str(_path(v)) if v else "",
            "an ssh_config file for the attacker hosts (ssh -F; empty: a file named ssh_config beside the topology "
            "file, as ./run.sh lab up writes one, else ~/.ssh/config as usual)"),
    Setting("lab", "REPLBENCH_LAB", ".lab", lambda v: _path(v), "the folder ./run.sh lab keeps its hosts' files in "
            "(topology.toml, ssh_config, the key, the datadirs, the record lab down and lab status read)"),
)
SETTINGS = {s.name: s for s in SETTING_LIST}


FIND_USERS_SHAPES: tuple[str, ...] = ("two-step", "one-trip", "server-steps")
DRIVERS: tuple[str, ...] = ("aiomysql", "asyncmy")  # the app's MySQL drivers (app/db.py imports the one chosen)
# gunicorn worker classes of the app (topology/appserver maps them)
WORKER_CLASS_NAMES: tuple[str, ...] = ("aiohttp", "uvloop")
APP_TRANSPORTS: tuple[str, ...] = ("tcp", "unix")
ADMISSIONS: tuple[str, ...] = ("codel", "always", "none")
BENCH_APP_RATE = 800  # bench-app's rate: below the 8M read limit (about 1500/s), so queueing does not inflate CPU
REPLICAS_FILE = "replicas"  # in the state folder: how many replicas the native topology has now
SCHEMAS = ("bench_idx", "bench_noidx", "bench_nopk")
MAX_BULK_ROWS = 10_000  # rows one update_users request may change (scenario files, study cells, the app)
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z' -]*$")  # the names and cities the app accepts: letters first, no wildcards
MAX_NAME = 60  # characters of a first or last name the app accepts
MAX_CITY = 60
MAX_PREFIX = 30  # characters of a find_users prefix
NOPK_ACCOUNTS = 100_000  # rows of bench_nopk (capped by the dataset size): each replica scans it once per row
META_SCHEMA = "replbench_meta"
HEARTBEAT_DOMAIN_ID = 99  # heartbeat writes get their own GTID domain, kept out of per-write figures
OPEN_FILES_WANTED = 262_144  # descriptors for vegeta and gunicorn: an overloaded run holds ~rate × timeout sockets
MAX_CLIENTS = 1024  # --clients: a closed loop's clients (vegeta workers), each holding one connection
OPEN_FILES_RESERVE = 1024  # descriptors vegeta keeps for itself (files, pipes) below its connection cap
APP_BACKLOG = 4096  # gunicorn's --backlog: connections waiting to be accepted (capped by net.core.somaxconn)
# vegeta's connections to the app (REPLBENCH_CLIENT_CONNECTIONS=auto): this many per app worker, a client's pool.
# Unlimited, an attack far above the knee opens a connection for every request it cannot place, and they wait in the
# app's accept queue where no admission sees them. 512 per worker stays above codel's bound at the box's max, so the
# app, not the client, decides what is shed; under REPLBENCH_ADMISSION=none the pool bounds the app and the excess
# waits in vegeta, where its wait is counted. docs/decisions/client-connections.md
CLIENT_CONNECTIONS_PER_WORKER = 512

# timeouts and intervals (seconds)
NODE_START_TIMEOUT = 120.0
NODE_STOP_TIMEOUT = 300.0
REPLICATION_START_TIMEOUT = 60.0
# ./run.sh test: pytest sessions side by side for the tests that need servers, each with its own small topology
# (the host is 35 % busy with one: most of a test's time is spent waiting on servers; three end about a minute
# before two on this 2-core box); docs/development.md#tests
TEST_LANES = 3
MAX_TEST_LANES = 4  # a lane's ports are 50 above the last's (tests/conftest.py): four stay apart
LANE_STOP_S = 60.0  # seconds an interrupted lane may take to tear its topology down before it is killed
CATCH_UP_TIMEOUT = 300.0
RESUME_MAX_BEHIND = 80_000  # transactions a stopped replica may lag the master and still be started again rather
# than cloned from replica1: the break-even of a clone's copy and a catch-up on this box.
# docs/decisions/replica-resume.md
APP_START_TIMEOUT = 30.0
SETTLE_TIMEOUT = 120.0  # seconds a unit waits for the previous one's work to drain before it starts anyway (marked)
SETTLE_HOST_SAMPLE = 0.5  # seconds of host CPU each look at the host averages
SETTLE_HOST_WAIT = 15.0  # seconds the host may take to get there once our own work has drained (other tenants' load
#                          is not ours to wait out: past this the unit starts, marked with the reason)
# connections to the app in TIME_WAIT (60 s in Linux after a close) above this share of the ephemeral port range:
# the last unit's, not drained; after an unbounded overload the next run's vegeta burns a core finding free ports and
# cannot send its rate. docs/decisions/settle-time-wait.md
SETTLE_TIME_WAIT_SHARE = 0.05
# each node's InnoDB at rest before a unit: the earlier units' dirty pages flushed (at this I/O capacity, put back
# after) and their undo purged, within SETTLE_INNODB_WAIT; else the next idle window gets the flushing they start.
# docs/decisions/settle-innodb-rest.md
SETTLE_DIRTY_PAGES = 100  # pages a node may keep dirty and count as flushed (a few are dirtied while it is read)
SETTLE_HISTORY_LENGTH = 1000  # undo log records not yet purged that count as purged
SETTLE_FLUSH_IO_CAPACITY = 50_000  # innodb_io_capacity (and _max) while the flush runs: 25,000 pages in ~2 s here
SETTLE_INNODB_WAIT = 60.0  # seconds the flush and purge may take before the unit starts anyway (marked)
SETTLE_INNODB_POLL = 0.1  # seconds between two looks at the nodes' dirty pages and history (a small flush ends in
#                            less, and every run now waits for its own in its tail)
IDLE_WINDOW = 3.0  # seconds before each attack, on the run's clock, with the heartbeat on and the app idle: the
#                   heartbeat's binlog bytes and every group's idle CPU (purge, flushing, heartbeat), subtracted.
# At a low rate the idle share of each request is large and its estimate must be good: CPU is read in 10 ms ticks
# and the background (purge, flushing) comes in bursts, so the window grows to IDLE_REQUESTS requests' worth of the
# run's rate, up to IDLE_WINDOW_MAX (400/s: 5 s; 100/s and below: 20 s). docs/decisions/idle-window.md
IDLE_REQUESTS = 2000
IDLE_WINDOW_MAX = 20.0
# a net-of-idle CPU figure's resolution: this many standard errors of the idle cost subtracted from it (the idle
# window's per-second CPU spread, both for the rate estimated from the window and for the background's own
# variation over the run). A net figure below its resolution is printed as "< resolution", not as a cost.
# docs/decisions/idle-window.md
NET_RESOLUTION_Z = 2.0
# How two sets of repeats are compared, wherever a figure is set against another (study tables and findings, the
# answers, compare): the one rule set, docs/metrics.md "Comparing two figures", applied by core/stats.judgement.
# A count of the workload (bytes, rows, pages, syncs, threads) is compared exactly with its spread, never tested; a
# count whose repeats span more than COUNT_SPREAD of their median shows its range and says why it can differ.
COUNT_SPREAD = 0.005
# A measured quantity (CPU, latency, lag, an apply rate) is tested, and a finding stated, only with at least this
# many repeats on each side: with two, Welch's test has one to two degrees of freedom and cannot tell a 12× effect
# whose ranges are disjoint from noise, so fewer repeats are described ("disjoint ranges, n = 2, not tested"), never
# called "not shown" by a test without power.
FINDING_MIN_REPEATS = 3
FINDING_ALPHA = 0.05  # a study's family-wise error rate over its tested comparisons (Holm's step-down correction)
FINDING_MIN_FACTOR = 1.10  # a difference smaller than 10 % is not worth a finding, however it holds
# a verdict on the reference write-up's conclusions (analysis/reference): our same-rate ratio within this factor of
# the write-up's (either way) reproduces its size; beyond it the direction holds "with a different size" — the two
# hosts differ in cores, server and disk, so only a factor this coarse is read as the same size (docs/metrics.md,
# "The reference write-up's conclusions")
REFERENCE_SIZE_FACTOR = 2.0
# the lag's floor (docs/metrics.md "Lag", docs/decisions/lag-floor.md): every node's GTID position is read every
# POSITION_INTERVAL seconds (measure/poslag), so lag below about one interval is not resolved. A run records the
# interval it achieved (summary.json lag_floor_ms); a lag under its floor prints as "< 10 ms" (core/stats.floor_text),
# never as a value, and gives no ratio.
POSITION_INTERVAL = 0.010
LAG_FLOOR_MS = 1000 * POSITION_INTERVAL


def idle_window(rate: int, fixed: float = 0.0) -> float:
    """Seconds of idle measured before a run at this rate: `fixed` (REPLBENCH_IDLE_WINDOW, --idle-window) when set,
    else IDLE_REQUESTS requests' worth of the rate, from IDLE_WINDOW to IDLE_WINDOW_MAX."""
    if fixed > 0:
        return fixed
    return min(IDLE_WINDOW_MAX, max(IDLE_WINDOW, IDLE_REQUESTS / max(1, rate)))

PROGRESS_INTERVAL = 1.0
# honesty guards of a run, and the default pass criteria of a scenario (a scenario file may set its own)
# `sweep --confirm N`: the maximum is confirmed when its rate passes in at least this share of N rounds run
# interleaved with the first failing rate above it (2 of 3), and that rate does not (docs/sweeps.md)
SWEEP_CONFIRM_SHARE = 2 / 3
MIN_SUCCESS = 0.999  # fewer successful requests than this share: flagged
FALLING_BEHIND = 0.01  # lag growing by this many seconds per second or more over a run: the replica falls behind
MIN_RATE_RATIO = 0.99  # goodput below this share of the asked rate: flagged (analysis/rules)
MAX_P99 = 1.0  # seconds
MAX_CATCH_UP = 30.0  # seconds after the last request was sent for the replicas to catch up
# the replicas kept up during a step: their lag did not grow (its least-squares slope over the attack below
# MAX_LAG_GROWTH) and its p99 stayed within MAX_LAG_P99; catch-up alone would pass a replica that fell behind for a
# whole step and caught up within MAX_CATCH_UP after it (docs/scenarios.md, "Sweeps")
MAX_LAG_GROWTH = FALLING_BEHIND  # seconds of lag per second
MAX_LAG_P99 = 1.0  # seconds
REQUEST_TIMEOUT = 30.0  # vegeta's per-request timeout (its own default), seconds
# rows a replica may read per read it served in a scenario of 3-letter-or-longer find_users prefixes on bench_idx
# with idx_first_last: the pinned plan reads tens (37-39 at 8M), idx_last's range thousands (a guard trips above)
# (docs/decisions/find-users-plan.md)
SEARCH_ROWS_GUARD = 1000
SEARCH_INDEX = "idx_first_last"  # the index every find_users statement names (app/handlers.find_hint)
SEARCH_GUARD_MIN_PREFIX = 3  # shorter first-name prefixes may take the one-step statement (every entry under it)
HOST_SATURATED = 0.95  # host CPU above this share of all cores (steady part): flagged
# any CPU resource (the host, a node's mariadbd, the app's workers, vegeta) at or above this share of its capacity
# limited the run (analysis/limits); the host's is the same threshold as its saturation note
LIMIT_SHARE = HOST_SATURATED
VEGETA_SATURATED = 90.0  # vegeta above this % of one core (steady part): flagged as load-generator bound
# a soak run (docs/runs.md, "Soak"): the lag's growth is fitted per window; a second is a stall when its p99 is
# STALL_P99_FACTOR times the run's median second's or a replica's lag is STALL_LAG_MS above its median second's;
# the counters are read STALL_CONTEXT_S either side of it
SOAK_WINDOW = 60.0
SOAK_DURATION = "30m"  # a soak's default length: long enough for checkpoints and purge to show their cycles
STALL_P99_FACTOR = 5.0
STALL_LAG_MS = 500.0
STALL_CONTEXT_S = 5.0
# the cost model's fit (analysis/costmodel.py, docs/cost-model.md): each coefficient's interval is the spread of
# the non-negative fit over MODEL_BOOTSTRAP_ROUNDS resamples of whole cells (a cell's repeats go together); with
# fewer than MODEL_BOOTSTRAP_MIN_CELLS cells a resample cannot show the scatter between cells, and the interval is
# the least-squares covariance of the coefficients left free (the active set) instead
MODEL_BOOTSTRAP_ROUNDS = 1000
MODEL_BOOTSTRAP_MIN_CELLS = 4
# the model's domain: a mix is priced inside it when its transactions/s lie between the lowest rate at which the fit
# saw transactions of its size or smaller and the highest rate it saw at all (rows per transaction compared with
# this much slack); outside, the CPU and fsync figures are flagged. docs/decisions/cost-model-rate.md
MODEL_DOMAIN_SLACK = 0.05
# the rate shape of a transaction's and a read's CPU (docs/cost-model.md, "Rates"): the single-row cells' CPU per
# transaction by rate, from the setting whose cells cover at least MODEL_SHAPE_MIN_RATES rates (reads: 2), cells
# whose rates lie within MODEL_SHAPE_MERGE of each other taken as one rate
MODEL_SHAPE_MIN_RATES = 3
MODEL_SHAPE_MIN_READ_RATES = 2
MODEL_SHAPE_MERGE = 0.10
# model validate's bounds (issue 50's done-when; docs/cost-model.md, "Validate"): a held-out figure is on target when
# its prediction lies within this many percent of the measured one, and the 95 % intervals should cover at least
# MODEL_COVERAGE_GOAL of the held-out figures
MODEL_BINLOG_BOUND_PCT = 5.0
MODEL_CPU_BOUND_PCT = 15.0
MODEL_ONSET_BOUND_PCT = 15.0
# the cores the model's replica has to itself (predict's, without --cores replica=N); a live onset run whose other
# groups left the replica less of this host is not the premise the onset is priced on (docs/cost-model.md, "Validate")
MODEL_REPLICA_CORES = 1.0
MODEL_COVERAGE_GOAL = 0.9
# model validate's repeats (docs/cost-model.md, "Validate"): two identical runs on this shared 2-core box differ by
# up to 30 % in CPU, so one run cannot decide whether a case's error is within its bound; each case runs this many
# times, the cases interleaved in rounds, and the bounds judge the mean. The onset's drained check likewise drains
# its backlog MODEL_ONSET_DRAIN_REPEATS times and takes the median of every replica's rate
MODEL_VALIDATE_REPEATS = 3
MODEL_ONSET_DRAIN_REPEATS = 2

# apply-capacity --live (experiments/applycap, analysis/livewindow; docs/apply-capacity.md): a window shorter than
# five minutes is measured but labelled short (an application's rate varies by the minute; its busiest minute is
# what a replica must keep up with), the master's count read once a second
LIVE_MIN_WINDOW_S = 300.0
APPLY_RATE = 500  # apply-capacity's rate of writing its own backlog through the app, per second
LIVE_SAMPLE_S = 1.0
LIVE_BUSIEST_SPAN_S = 60.0
# model predict --own-runs (analysis/ownfit; docs/profile.md, "Your own runs"): a plan within 10 % of the live
# windows' rate is priced at their rate; further away, the note says the cost per transaction was held across a step
# its interval does not cover
OWN_RATE_NEAR = 0.10
# The model's CPU price of a table the suite did not write (priced as bench_idx's rows) ÷ the measured, per role, one
# per sysbench shape at 300/s, the shapes in FOREIGN_SHAPES' order, those measured in another session scaled to the
# first's host by a control (results/readme-assets/shapes-interval-20261203/compare.txt, which tests/test_ownfit checks
# them against): the spread a table of another shape is priced with (analysis/shapes; docs/profile.md, "A table the
# model does not know")
FOREIGN_SHAPES = ("write_only", "update_non_index", "update_index", "multi_update", "insert", "nopk_write_only")
FOREIGN_CPU_RATIOS = {"master": (1.049, 1.917, 1.773, 0.763, 1.088, 0.734),
                      "replica": (1.513, 2.152, 1.81, 1.131, 1.492, 1.0)}
# report.md's "Your own workload" (analysis/ownworkload, report/ownworkload): how far profile, model predict
# --profile [--own-runs] and apply-capacity --live and --binlog held on a workload the suite did not write
# (sysbench), read from the committed evidence under these repository-relative folders (each README says how it was
# measured)
OWN_WORKLOAD_SYSBENCH = "results/readme-assets/sysbench-20261202"
OWN_WORKLOAD_LIVE = "results/readme-assets/live-apply-20261202"
OWN_WORKLOAD_REPLAY = "results/readme-assets/replay-20261202"
OWN_WORKLOAD_FIT = "results/readme-assets/own-fit-20261203"
OWN_WORKLOAD_RELOG = "results/readme-assets/relog-20261203"  # its study/ (a replay study re-logging each row image)
# report.md's "Write-back at steady state" (analysis/soak.steady_state, report/soaks): the soak runs it states, each a
# run folder with its summary.json and meta.json and the page that says how it was measured: write at 4G, write and
# write-noindex at 128M, one commit (soak-20261203/drive.sh; re-run it at a later campaign's commit)
SOAK = "results/readme-assets/soak-20261203"
SOAK_RUNS = tuple((f"{SOAK}/{name}", f"{SOAK}/README.md")
                  for name in ("soak-write-400", "soak-write-100-128m", "soak-write-noindex-400-128m"))
# the semi-sync check by hand (docs/decisions/semi-sync-by-hand.md): each link's round trip as measured through its
# proxy, and the commits/s 1, 4 and 8 clients made on the 20 ms link, read by analysis/byhand for report.md's answer
SEMI_SYNC_BY_HAND = "results/readme-assets/semi-sync-by-hand-20261127"
# model predict --link RTT: a semi-sync commit's added wait in round trips of the link, per wait point, as measured
# by hand (docs/decisions/semi-sync-by-hand.md; its data in results/readme-assets/semi-sync-by-hand-20261127/):
# one client committing, 1.00–1.09 round trips under either wait point (cells.json, 1, 5 and 20 ms links); 4 and 8
# clients at once on 20 ms, AFTER_COMMIT still about one, AFTER_SYNC about two (concurrent.json; why two is inferred
# from the counters, not traced). AFTER_SYNC waits its upper figure once commits overlap: SEMI_SYNC_OVERLAP_IN_FLIGHT
# or more commits in flight at one round trip each (rate × RTT, Little's law)
SEMI_SYNC_LONE_RTTS = (1.00, 1.09)  # one commit at a time (low, high), both wait points
SEMI_SYNC_AFTER_SYNC_OVERLAP_RTTS = 2.0  # AFTER_SYNC with commits overlapping
SEMI_SYNC_OVERLAP_IN_FLIGHT = 1.0
# attackers on other hosts (a topology file's [[attacker]], load/remote.py; docs/own-servers.md, "Attackers on
# several hosts"): each starts at one agreed instant, this far ahead of the last host's check at least (and 3 ssh
# connections' time); its first request more than ATTACKER_LATE_S after that instant (on this host's clock, its
# own corrected by the measured skew) is a late start; clocks further apart than ATTACKER_SKEW_WARN_MS are flagged
ATTACKER_START_LEAD_S = 1.0
ATTACKER_LATE_S = 0.5
ATTACKER_SKEW_WARN_MS = 100.0


@dataclass(frozen=True)
class Node:
    """One mariadbd of the topology: its role, port and files under the state folder."""

    name: str
    port: int
    server_id: int
    state: Path
    host: str = "127.0.0.1"
    metrics: str = ""  # node_exporter URL (a topology file's node), "" = none
    external: bool = False  # a topology file's server: SQL over TCP only, no pid, no files

    @property
    def role(self) -> str:
        return "master" if self.name == "master" else "replica"

    @property
    def cpu_source(self) -> str:
        """Where this node's CPU figures come from (printed beside them)."""
        if not self.external:
            return "process"
        return "host CPU from node_exporter" if self.metrics else "n/a (no metrics URL)"

    @property
    def home(self) -> Path:
        return self.state / self.name

    @property
    def datadir(self) -> Path:
        return self.home / "data"

    @property
    def socket(self) -> Path:
        return self.home / "mariadbd.sock"

    @property
    def pid_file(self) -> Path:
        return self.home / "mariadbd.pid"

    @property
    def log_file(self) -> Path:
        return self.home / "error.log"

    @property
    def cnf(self) -> Path:
        return self.home / "my.cnf"


@dataclass(frozen=True)
class Settings:
    """Resolved configuration of one replbench topology (state folder, ports, dataset, app)."""

    state: Path
    results: Path
    port_base: int
    replicas_asked: int  # 0: as many as the state folder has (replica_count resolves it)
    app_port: int
    accounts: int
    seed: int
    buffer_pool: str
    drop_indexes: str  # the indexes' names, comma-separated in mysql/indexes.sql's order ("": none dropped)
    app_workers: int
    driver: str
    worker_class: str
    pool_size: int
    statement_timeout: float
    flavour: str
    app_password: str
    repl_password: str
    admin_password: str
    read_fallback: bool
    db_timeout: float
    max_body: int
    db_hosts: str
    max_lag: float
    admission: str
    codel_target_ms: int
    max_inflight: int
    max_queue_ms: int
    client_connections: str  # auto, unlimited or a number (see client_connection_cap)
    app_transport: str
    heartbeat_ms: int
    idle_window: float  # seconds; 0: auto, derived from the run's rate (idle_window())
    host_busy: float  # % of one core
    find_users: str
    topology: str
    db_user: str
    db_password: str
    app_user: str
    ssh_key: str
    ssh_config: str
    lab: Path

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = dict(os.environ if env is None else env)
        return cls._parse({s.name: env.get(s.env, s.default) for s in SETTING_LIST})

    @classmethod
    def _parse(cls, raw: dict[str, str]) -> Settings:
        if raw["topology"] and _path(raw["state"]) == _path(SETTINGS["state"].default):
            raw = {**raw, "state": f".state-{Path(raw['topology']).stem}"}  # never the native topology's state
        try:
            parsed = cls(**{s.name: s.parse(raw[s.name]) for s in SETTING_LIST})
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        if parsed.topology and parsed.replicas_asked:
            named = len(_topology_file(parsed.topology).nodes) - 1
            if parsed.replicas_asked != named:
                raise ConfigError(f"--replicas {parsed.replicas_asked}: the topology file names {named} replica(s); "
                                  "edit the file to change them")
        return parsed

    def with_overrides(self, **values: object) -> Settings:
        """Return a copy with the non-None values replaced (CLI flags win over the environment)."""
        given = {k: v for k, v in values.items() if v is not None}
        if not given:
            return self
        raw = {f.name: str(getattr(self, f.name)) for f in dataclasses.fields(self)}
        raw.update({k: str(v) for k, v in given.items()})
        return Settings._parse(raw)

    def as_env(self) -> dict[str, str]:
        """The environment that reproduces these settings in a child process (app, tests)."""
        return {s.env: str(getattr(self, s.name)) for s in SETTING_LIST}

    @property
    def external(self) -> TopologyFile | None:
        """The topology file's servers (the harness never starts, stops or copies them), or None: native."""
        return _topology_file(self.topology) if self.topology else None

    @property
    def app_url(self) -> str:
        """An app already serving elsewhere (a topology file's [app] url): never started or stopped here."""
        return _topology_file(self.topology).app_url if self.topology else ""

    @property
    def app_listen(self) -> str:
        """The address the app started here listens on (a topology file's [app] listen; else loopback)."""
        return _topology_file(self.topology).app_listen if self.topology else "127.0.0.1"

    @property
    def attacker_hosts(self) -> tuple[AttackerHost, ...]:
        """A topology file's client hosts, driven over SSH (none: vegeta runs here)."""
        return _topology_file(self.topology).attackers if self.topology else ()

    @property
    def app_cpu_source(self) -> str:
        """Where the app's CPU figures come from (like Node.cpu_source)."""
        return "n/a (an app at a URL)" if self.app_url else "process"

    @property
    def topology_name(self) -> str:
        """The topology file's name (no machine path), or "native"."""
        return Path(self.topology).name if self.topology else "native"

    def app_credentials(self, role: str) -> tuple[str, str]:
        """(user, password) the app connects with: native app_rw / app_ro; a topology file's servers:
        REPLBENCH_APP_USER / REPLBENCH_APP_PASSWORD, or the harness's own user when no app user is named."""
        if not self.topology:
            return ("app_rw" if role == "master" else "app_ro"), self.app_password
        if self.app_user:
            return self.app_user, self.app_password
        return self.db_user, self.db_password

    @property
    def nodes(self) -> tuple[Node, ...]:
        if self.topology:
            ext = _topology_file(self.topology)
            return tuple(Node(a.name, a.port, i + 1, self.state, host=a.host, metrics=a.metrics,
                              external=True) for i, a in enumerate(ext.nodes))
        return tuple(Node(name, self.port_base + i, i + 1, self.state)
                     for i, name in enumerate(node_names(self.replica_count)))

    @property
    def client_connection_cap(self) -> int | None:
        """The most connections vegeta may open to the app, or None: as many as its descriptors allow."""
        if self.client_connections == "unlimited":
            return None
        if self.client_connections == "auto":
            return self.app_workers * CLIENT_CONNECTIONS_PER_WORKER
        return int(self.client_connections)

    @property
    def replica_count(self) -> int:
        """The replicas this command works with: a topology file's, --replicas N, else the state folder's."""
        if self.topology:
            return len(_topology_file(self.topology).nodes) - 1
        return self.replicas_asked or recorded_replicas(self.state)

    @property
    def node_names(self) -> tuple[str, ...]:
        return tuple(n.name for n in self.nodes)

    def address(self, name: str) -> tuple[str, int]:
        """(host, port) at which the app reaches a node."""
        if self.topology:
            node = self.node(name)
            return node.host, node.port
        if self.db_hosts:
            entries = [e.strip() for e in self.db_hosts.split(",")]
            names = self.node_names
            if len(entries) != len(names):
                raise ConfigError(f"REPLBENCH_DB_HOSTS needs {len(names)} host:port entries ({', '.join(names)})")
            host, _, port = entries[names.index(name)].partition(":")
            return host, int(port or 3306)
        return "127.0.0.1", self.node(name).port

    def app_socket(self, name: str) -> str | None:
        """The unix socket the app reaches a node by (REPLBENCH_APP_TRANSPORT=unix), or None for TCP: only the
        native nodes have one here, and a node the app reaches through a proxy (an app-* link) stays on TCP."""
        if self.app_transport != "unix" or self.topology or self.db_hosts:
            return None
        return str(self.node(name).socket)

    def node(self, name: str) -> Node:
        return next(n for n in self.nodes if n.name == name)

    @property
    def master(self) -> Node:
        return self.node("master")

    @property
    def replicas(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.role == "replica")

    @property
    def bin_dir(self) -> Path:
        """Built tools (pinned vegeta, datagen): shared by every topology, they hold no state."""
        return TOOLS_BIN

    @property
    def dataset_dir(self) -> Path:
        return self.state / "dataset"

    @property
    def pristine_dir(self) -> Path:
        return self.state / "pristine"

    @property
    def app_dir(self) -> Path:
        return self.state / "app"

    @property
    def warm_marker(self) -> Path:
        """Which node's buffer pool holds which schema since when (written by warm-up, cleared by a resize)."""
        return self.state / "warm.json"


DURATION_RE = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h)$")
UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """'60s', '90m', '1h', '500ms' -> seconds (a positive number); ValueError otherwise."""
    match = DURATION_RE.match(str(text).strip())
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"bad duration {text!r}: use a positive number with ms, s, m or h (e.g. 60s, 90m)")
    return float(match.group(1)) * UNIT_SECONDS[match.group(2)]


class ConfigError(Exception):
    """A configuration value is invalid; the message says which and why."""


class ReplbenchError(Exception):
    """An operational failure the user can act on: printed as one line, exit 1 (every module's error derives)."""


def _path(value: str) -> Path:
    p = Path(value)
    return p if p.is_absolute() else ROOT / p


def _idle_window(value: str) -> float:
    """'auto' (or 0) -> 0.0, derived from each run's rate; else a duration ('5s', '2.5') -> seconds."""
    word = value.strip().lower()
    if word in ("auto", "0", "0.0"):
        return 0.0
    try:
        return float(word) if float(word) > 0 else parse_duration(word)
    except ValueError:
        try:
            return parse_duration(word)
        except ValueError:
            raise ValueError(f"idle window must be auto or a duration such as 5s, got {value!r}") from None


def _replica_count(value: str) -> int:
    """'' or '0' -> 0 (as many as the state folder has: Settings.replica_count); else 1 to 4."""
    if value.strip() in ("", "0"):
        return 0
    return _bounded_int(value, MIN_REPLICAS, MAX_REPLICAS, "replicas")


def recorded_replicas(state: Path) -> int:
    """How many replicas the native topology in this state folder has now (written by the fan-out step)."""
    try:
        count = int((state / REPLICAS_FILE).read_text().strip())
    except (OSError, ValueError):
        return DEFAULT_REPLICAS
    return count if MIN_REPLICAS <= count <= MAX_REPLICAS else DEFAULT_REPLICAS


def _positive_int(value: str, what: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{what} must be a whole number, got {value!r}") from None
    if number <= 0:
        raise ValueError(f"{what} must be positive, got {number}")
    return number


def _non_negative_int(value: str, what: str) -> int:
    return 0 if value.strip() == "0" else _positive_int(value, what)


def _client_connections(value: str) -> str:
    word = value.strip().lower()
    if word in ("auto", "unlimited"):
        return word
    try:
        return str(_positive_int(word, "client connections"))
    except ValueError:
        raise ValueError(f"client connections must be auto, unlimited or a positive whole number, got {value!r}") \
            from None


def _bounded_int(value: str, low: int, high: int, what: str) -> int:
    number = _positive_int(value, what)
    if not low <= number <= high:
        raise ValueError(f"{what} must be from {low} to {high}, got {number}")
    return number


def _non_negative_float(value: str, what: str) -> float:
    return _float(value, what, zero_allowed=True)


def _positive_float(value: str, what: str) -> float:
    return _float(value, what, zero_allowed=False)


def _float(value: str, what: str, zero_allowed: bool) -> float:
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{what} must be a number, got {value!r}") from None
    if number < 0 or (number == 0 and not zero_allowed):
        raise ValueError(f"{what} must be {'0 or more' if zero_allowed else 'positive'}, got {number}")
    return number


@functools.lru_cache(maxsize=8)
def _topology_file(path: str) -> TopologyFile:
    # imported here: the topology file's model needs pydantic, which the app (it imports this module) never loads
    from .topofile import TopologyFileError, load

    try:
        return load(Path(path))
    except TopologyFileError as exc:
        raise ConfigError(str(exc)) from None


@functools.lru_cache(maxsize=1)
def secondary_indexes() -> dict[str, str]:
    """The secondary indexes the dataset gives INDEXED_TABLE, by name, in mysql/indexes.sql's order: each one's
    definition as that file writes it (UNIQUE KEY uq_email (email)), which re-creates it as it was built."""
    text = (MYSQL_DIR / "indexes.sql").read_text()
    return {name: clause for clause, name in INDEX_CLAUSE_RE.findall(text)}


def _index_names(value: str) -> str:
    """'idx_last, uq_email' -> 'uq_email,idx_last' (mysql/indexes.sql's order); 'all' -> every one; '' or 'none'
    -> ''. A name the table is not built with is refused, naming the ones it is."""
    known = secondary_indexes()
    words = [w.strip() for w in str(value).split(",") if w.strip()]
    if [w.lower() for w in words] in ([], ["none"]):
        return ""
    if [w.lower() for w in words] == ["all"]:
        return ",".join(known)
    unknown = [w for w in words if w not in known]
    if unknown:
        raise ValueError(f"drop indexes: no secondary index {', '.join(repr(w) for w in unknown)} on "
                         f"{INDEXED_TABLE}; its indexes (mysql/indexes.sql): {', '.join(known)}, or all, or none")
    return ",".join(name for name in known if name in words)


def index_names(value: str) -> tuple[str, ...]:
    """A drop_indexes value (as the setting's parser leaves it, or as a study file gives it) as index names."""
    return tuple(n for n in _index_names(value).split(",") if n)


def _choice(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(allowed)}; got {value!r}")
    return value
