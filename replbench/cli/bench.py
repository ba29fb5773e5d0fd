"""The benchmark subcommands of ./run.sh: one run (<scenario> <rate>), sweep, study, apply-capacity,
big-transaction, report, compare, bench-app and list. Each turns flags into calls on the experiments, report and
compare and prints the outcome; errors are raised and the command line reports them."""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import __version__
from ..analysis import costmodel
from ..analysis.compare import CompareError, compare, resolve
from ..analysis.studymetrics import verdict_text
from ..analysis.verdicts import describe_max
from ..core import scenario as scenarios
from ..core import workload
from ..core.config import (
    APPLY_RATE,
    BENCH_APP_RATE,
    CATCH_UP_TIMEOUT,
    DRIVERS,
    FIND_USERS_SHAPES,
    LIVE_MIN_WINDOW_S,
    MAX_BULK_ROWS,
    MAX_CLIENTS,
    MODEL_REPLICA_CORES,
    MODEL_VALIDATE_REPEATS,
    REQUEST_TIMEOUT,
    SOAK_DURATION,
    SOAK_WINDOW,
    STUDY_DIR,
    WORKER_CLASS_NAMES,
    ReplbenchError,
    Settings,
    parse_duration,
)
from ..core.records import (
    DONE,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    UNIT_FAILED,
    UNIT_OK,
    collection_exit_code,
    new_folder,
    shown_path,
)
from ..core.results import (
    model_of,
    read_model,
    read_validation,
    study_of,
    sweep_of,
    write_record,
)
from ..core.stats import spread, spread_text
from ..core.workload import Workload
from ..experiments import applycap, benchapp, bigtx, campaign, modelcheck, replay, study, studyfile
from ..experiments.run import Run, RunOptions
from ..experiments.sweep import Sweep
from ..load import cpus, faults
from ..report.markdown import generate
from ..report.model import render_fit, render_plan, render_validation
from ..report.sources import SourceError, asset_sources, pick, split_kept
from ..topology import links
from ..topology.install import VEGETA_VERSION, mariadb_binaries
from ..topology.knobs import KNOB_LIST, MAX_PARALLEL_THREADS, Knobs
from . import profile
from .args import (
    ArgumentParser,
    UsageError,
    add_app_flags,
    add_topology_flags,
    help_formatter,
    parse_rate,
    parse_seconds,
    setting_flag,
    settings_from,
)

# the stack's floor, get_user (one round trip by primary key: what a round trip costs), find_users, update_user


def add_knob_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per knob (knobs.KNOB_LIST); a knob not given gets its reference value."""
    g = parser.add_argument_group("replication settings (a setting not given gets its reference value)")
    ref = Knobs()
    for knob in KNOB_LIST:
        values = f" ({'|'.join(knob.choices)})" if knob.choices else "" if knob.size else \
            f" ({knob.low}..{knob.high})"
        reference = getattr(ref, knob.name)
        if knob.size and not reference:  # a size's reference is the pool the nodes start with (0 is a value)
            reference = "the nodes' own (REPLBENCH_BUFFER_POOL, default 4G)"
        g.add_argument("--" + knob.name.replace("_", "-"), dest=knob.name, metavar="V",
                       help=f"{knob.help}{values}; reference {reference}")


def knobs_from(args: argparse.Namespace) -> Knobs:
    try:
        return Knobs.from_values({k.name: getattr(args, k.name, None) for k in KNOB_LIST})
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def add_run_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--duration", help="attack duration, e.g. 60s, 5m, 90m (default: the scenario's)")
    parser.add_argument("--timeout", default=f"{REQUEST_TIMEOUT:g}s", help="per-request timeout of vegeta")
    parser.add_argument("--strict", action="store_true", default=_env_strict(),
                        help="exit 1 when a guard trips (env REPLBENCH_STRICT=1)")
    parser.add_argument("--fault", action="append", default=[], metavar="ACTION:NODE@TIME",
                        help="a fault on purpose during the attack, e.g. kill:replica1@20s, start:replica1@40s, "
                             "stop-replication:replica2@10s, stop-sql-thread:replica1@5s, cut:replica1@5s, "
                             "bigtx=100000:master@10s (one UPDATE "
                             "of that many rows, done once every replica applied it) (repeatable; default: the "
                             "scenario's)")
    parser.add_argument("--cpus", metavar="GROUP=CORES,...",
                        help="pin each group to its cores, e.g. app=0,master=1,replica1=1,replica2=1,vegeta=0 "
                             "(groups: app, master, replica1, replica2, vegeta)")
    parser.add_argument("--attackers", type=int, default=1,
                        help="vegeta attack processes sharing the rate (their result files read together)")
    parser.add_argument("--clients", type=int, metavar="N",
                        help="a closed loop: N clients, each sending its next request as soon as its last is "
                             "answered (vegeta -rate=0 -max-workers=N); the rate then only sizes the targets (give "
                             "one above what N clients reach) and the run measures the goodput they get")
    parser.add_argument("--link", action="append", default=[], metavar="NAME=LATENCY[±JITTER]",
                        help="a connection through toxiproxy with that round trip, e.g. replica1=5ms, "
                             "replica2=20ms±2ms, app-master=1ms (repeatable)")
    parser.add_argument("--nonce", metavar="HEX",
                        help="replay the values of an earlier run (its meta.json targets.nonce); default: new values")
    setting_flag(parser, "--idle-window", "idle_window", "idle measured before the attack, whose cost the net "
                 "figures subtract: auto (2,000 requests' worth of the rate, 3 to 20 s) or a duration such as 5s",
                 metavar="auto|DURATION")
    parser.add_argument("--checksum", choices=("table", "rows"), default="table",
                        help="after a write run, compare the whole table on every node (CHECKSUM TABLE, the "
                             "default) or only the rows the run wrote (every column; seconds less at 8M)")
    add_knob_flags(parser)
    add_topology_flags(parser)
    add_app_flags(parser)


def _env_strict() -> bool:
    return os.environ.get("REPLBENCH_STRICT", "").lower() in ("1", "true", "yes", "on")


def run_parser() -> ArgumentParser:
    names = ", ".join(scenarios.available())
    parser = ArgumentParser(prog="./run.sh <scenario> <rate>", formatter_class=help_formatter,
                            description=f"One constant-rate benchmark run. Scenarios: {names}")
    parser.add_argument("scenario", help=f"one of: {names}")
    parser.add_argument("rate", help="requests per second (1..100000)")
    add_run_flags(parser)
    return parser


def run_options(args: argparse.Namespace, scenario: scenarios.Scenario, settings: Settings) -> RunOptions:
    duration = scenario.duration if args.duration is None else parse_seconds(args.duration, "--duration")
    try:
        planned = faults.parse_all(list(args.fault or scenario.faults), duration)
        linked = links.parse_all(args.link or [])
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        pinned = cpus.parse(args.cpus)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not 1 <= args.attackers <= 64:
        raise UsageError("--attackers must be from 1 to 64")
    clients = getattr(args, "clients", None)
    if clients is not None and not 1 <= clients <= MAX_CLIENTS:
        raise UsageError(f"--clients must be from 1 to {MAX_CLIENTS}")
    if clients is not None and (args.attackers > 1 or settings.attacker_hosts):
        raise UsageError("--clients is a closed loop in one local vegeta process: leave out --attackers and the "
                         "topology file's attacker hosts")
    named = {f.node for f in planned} | {link.node if link.name.startswith("app-") else link.name for link in linked}
    named |= set(pinned) - {"app", "vegeta"}
    absent = sorted(named - set(settings.node_names))
    if absent:
        raise UsageError(f"{', '.join(absent)}: not in this topology ({', '.join(settings.node_names)}); "
                         "add replicas with --replicas N")
    cut = {f.node for f in planned if f.action in ("cut", "restore")} - {link.name for link in linked}
    if cut:
        raise UsageError(f"a cut or restore fault needs a link: name it with --link {sorted(cut)[0]}=0ms")
    if settings.external:
        refuse_on_external(settings, planned, linked, args.cpus or "", args.attackers)
    return RunOptions(duration=duration, timeout=parse_seconds(args.timeout, "--timeout"), knobs=knobs_from(args),
                      catch_up_timeout=scenario.catch_up_timeout or CATCH_UP_TIMEOUT, strict=args.strict,
                      faults=planned, links=linked, attackers=args.attackers, cpus=args.cpus or "",
                      nonce=_nonce(args), checksum=getattr(args, "checksum", "table"), clients=clients)


def drain_pinning(spec: str | None, settings: Settings) -> str:
    """apply-capacity --cpus: the groups the drains run pinned (load/cpus), each a node of this native topology or
    the app; or the usage error saying why not (exit 2)."""
    try:
        pinned = cpus.parse(spec)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if settings.external and pinned:
        raise UsageError(f"--cpus: the servers of {settings.topology_name} do not run on this machine")
    absent = sorted(set(pinned) - {"app", "vegeta"} - set(settings.node_names))
    if absent:
        raise UsageError(f"--cpus {absent[0]}=...: not in this topology ({', '.join(settings.node_names)})")
    if "vegeta" in pinned:
        raise UsageError("--cpus vegeta=...: the drains send no requests; pin the nodes and the app")
    return spec or ""


def check_share(rate: int, attackers: int, settings: Settings) -> None:
    """Each attacker needs at least one request a second: vegeta reads -rate=0 as no limit at all."""
    n = len(settings.attacker_hosts) or attackers
    if rate < n:
        raise UsageError(f"rate {rate}/s is below its {n} attackers' one request/s each: raise the rate or use fewer "
                         "attackers")


def _nonce(args: argparse.Namespace) -> str:
    nonce = getattr(args, "nonce", None) or ""
    if nonce and not all(c in "0123456789abcdef" for c in nonce.lower()):
        raise UsageError(f"--nonce must be hexadecimal (a run's meta.json targets.nonce); got {nonce!r}")
    return nonce.lower()


def refuse_on_external(settings: Settings, planned: tuple[faults.Fault, ...], linked: tuple[links.Link, ...],
                       pinning: str, attackers: int = 1) -> None:
    """What needs the servers' processes or their network cannot be done to a topology file's servers; with the
    file's attacker hosts, the attack is theirs (one vegeta each), not this host's."""
    where = settings.topology_name
    hosts = settings.attacker_hosts
    if hosts and attackers != 1:
        raise UsageError(f"--attackers {attackers}: {where} names {len(hosts)} attacker host(s), one vegeta each; "
                         "add [[attacker]] tables to the file for more")
    if hosts and "vegeta" in cpus.parse(pinning):
        raise UsageError(f"--cpus vegeta=...: the attack runs on {where}'s attacker hosts, not on this machine")
    touching = sorted({f.action for f in planned if f.action in ("kill", "start")})
    if touching:
        raise UsageError(f"a {touching[0]} fault needs the native topology: replbench never kills or starts the "
                         f"servers of {where} (stop-replication and start-replication faults work there)")
    if linked:
        raise UsageError(f"--link needs the native topology: the servers of {where} cannot be moved onto a proxy "
                         "on this machine")
    nodes = sorted(set(cpus.parse(pinning)) & {n.name for n in settings.nodes})
    if nodes:
        raise UsageError(f"--cpus {nodes[0]}=...: the servers of {where} do not run on this machine (pin app and "
                         "vegeta only)")


def load_scenario(name: str) -> scenarios.Scenario:
    try:
        return scenarios.load(name)
    except scenarios.ScenarioError as exc:
        raise UsageError(str(exc)) from None


def run_scenario(argv: list[str]) -> int:
    """./run.sh <scenario> <rate> [options]."""
    parser = run_parser()
    try:
        args = parser.parse_args(argv)
        scenario = load_scenario(args.scenario)
        rate = parse_rate(args.rate)
        settings = settings_from(args)
        options = run_options(args, scenario, settings)
        check_share(rate, options.attackers, settings)
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        print(f"scenarios: {', '.join(scenarios.available())}", file=sys.stderr)
        print(f"./run.sh: error: {exc.args[0]}", file=sys.stderr)
        return EXIT_USAGE
    return _run_and_print(settings, scenario, rate, options,
                          f"{scenario.name} at {rate} rps for {options.duration:g} s ({options.knobs.describe()})")


def _run_and_print(settings: Settings, scenario: scenarios.Scenario, rate: int, options: RunOptions,
                   what: str) -> int:
    """One run as its process's command (a scenario run, a soak): its folder named first, its block printed last."""
    folder = new_folder(settings, scenario, rate)
    print(f"replbench: {what} → {shown_path(folder)}", file=sys.stderr)
    run = Run(settings, scenario, rate, options, folder, own_process=True)
    result = run.execute()
    summary = result.summary
    print(result.block or f"Status: {summary.status} (no results: {'; '.join(summary.errors or [])})    "
                          f"Results: {shown_path(folder)}")
    return result.exit_code


def add_parsers(sub: Any) -> None:
    """The benchmark commands' parsers, one function each."""
    for add in (_add_soak_parser, _add_sweep_parser, _add_study_parser, _add_apply_capacity_parser,
                _add_big_transaction_parser, _add_model_parser, _add_campaign_parser, _add_report_parser,
                _add_compare_parser,
                _add_bench_app_parser, _add_list_parser):
        add(sub)


def _add_soak_parser(sub: Any) -> None:
    p = sub.add_parser("soak", help="one long run that finds the stalls: lag growth per window, InnoDB's counters "
                                    "every second, the seconds whose p99 or lag jumps", formatter_class=help_formatter)
    p.add_argument("scenario", help=f"one of: {', '.join(scenarios.available())}")
    p.add_argument("rate", help="requests per second (1..100000)")
    p.add_argument("--window", default=f"{SOAK_WINDOW:g}s",
                   help="the windows the lag's growth is fitted over, e.g. 60s (docs/runs.md, Soak)")
    add_run_flags(p)
    p.set_defaults(duration_default=SOAK_DURATION)


def cmd_soak(args: argparse.Namespace) -> int:
    """./run.sh soak <scenario> <rate> [--duration 30m] [--window 60s]: a run with its soak sampler and analysis."""
    scenario = load_scenario(args.scenario)
    rate = parse_rate(args.rate)
    settings = settings_from(args)
    if args.duration is None:
        args.duration = args.duration_default
    window = parse_seconds(args.window, "--window")
    options = dataclasses.replace(run_options(args, scenario, settings), soak_window=window)
    check_share(rate, options.attackers, settings)
    if window * 2 > options.duration:
        raise UsageError(f"--window {args.window} leaves fewer than two windows in {options.duration:g} s")
    return _run_and_print(settings, scenario, rate, options, f"soak of {scenario.name} at {rate} rps for "
                          f"{options.duration:g} s, lag growth per {window:g} s window")


def _add_sweep_parser(sub: Any) -> None:
    p = sub.add_parser("sweep", help="a ladder of runs of one scenario: where does it break?",
                       formatter_class=help_formatter)
    p.add_argument("scenario", help=f"one of: {', '.join(scenarios.available())}")
    p.add_argument("--rates", help="comma-separated rates (default: the scenario's ladder)")
    p.add_argument("--repeat", type=int, default=1, help="runs per step; the verdict uses the median")
    p.add_argument("--refine", action="store_true", help="bisect between the last pass and the first fail")
    p.add_argument("--confirm", type=int, default=0, metavar="N",
                   help="after the ladder, run the maximum and the first failing rate above it in N interleaved "
                        "rounds: the maximum is confirmed when it passes in 2 of 3 and that rate does not "
                        "(default 0: none)")
    add_run_flags(p)


def _add_study_parser(sub: Any) -> None:
    p = sub.add_parser("study", help="compare replication settings side by side, interleaved, with repeats",
                       formatter_class=help_formatter)
    p.add_argument("file", help=f"a study TOML file (or a name in {STUDY_DIR.name}/)")
    p.add_argument("--repeat", type=int, help="repeats of every cell (default: the study's, else 3)")
    p.add_argument("--rate", type=int, help="override the study's rate")
    p.add_argument("--duration", help="override the study's duration per run, e.g. 20s")
    p.add_argument("--only", action="append", default=[], metavar="KEY=VALUE[,VALUE...]",
                   help="run only the cells whose knob, cell key or name has one of these values, e.g. "
                        "buffer_pool=128M (repeatable: a cell must meet every one)")
    p.add_argument("--dry-run", action="store_true", help="print the cells, the order and the estimated duration")
    add_topology_flags(p)
    add_app_flags(p)


def _add_apply_capacity_parser(sub: Any) -> None:
    p = sub.add_parser("apply-capacity", help="how fast can each replica apply a write workload at best?",
                       formatter_class=help_formatter)
    p.add_argument("scenario", nargs="?", help="a write scenario (none with --live)")
    p.add_argument("--writes", type=int, help="writes to queue up (default: 60 s worth at --rate)")
    p.add_argument("--rate", type=int, help="rate at which the backlog is written through the app (default: 500)")
    p.add_argument("--live", metavar="WINDOW",
                   help="no scenario: hold the replicas' SQL threads for WINDOW (e.g. 5m) while any client writes to "
                        "the master (your application, a benchmark tool), then time each replica's catch-up; "
                        f"at least {LIVE_MIN_WINDOW_S / 60:g} minutes, or it is labelled short")
    p.add_argument("--binlog", nargs="+", metavar="FILE",
                   help="no scenario: replay these binlog files (in order) as --replica's relay logs and time its "
                        "SQL thread; the replica must stand at one of their transaction boundaries (checked by "
                        "GTID first; refused otherwise)")
    p.add_argument("--replica", help="--binlog: the replica that replays them (default: replica1); --live: the "
                   "one replica held and timed, the others left as they are (default: every replica)")
    p.add_argument("--workload", metavar="NAME",
                   help="with --live: the suite runs this workload file's tool (workloads/, e.g. "
                        "sysbench-write-only) against the master at --rate per second for the window, the first "
                        "replica held and the others following")
    p.add_argument("--together", action="store_true",
                   help="every replica drains at once (they share this host's cores); default: each alone")
    p.add_argument("--cpus", metavar="GROUP=CORES,...",
                   help="the drains with each group pinned to its cores, e.g. replica1=1,replica2=1,master=0,app=0: "
                        "a replica's apply capacity on the cores it is given (groups: app, master, replica1…; "
                        "default: every group on every core)")
    add_knob_flags(p)
    add_topology_flags(p)
    add_app_flags(p)


def _add_big_transaction_parser(sub: Any) -> None:
    p = sub.add_parser("big-transaction", help="what one UPDATE of 10^3 to 10^6 rows costs the binlog, the master "
                       "and each replica", formatter_class=help_formatter)
    p.add_argument("--rows", default=",".join(str(n) for n in bigtx.DEFAULT_ROWS),
                   help="rows per transaction, comma-separated (default: %(default)s)")
    p.add_argument("--table", choices=sorted(bigtx.TABLES), default="idx",
                   help="bench_idx (four secondary indexes) or bench_noidx (default: idx)")
    p.add_argument("--repeat", type=int, default=1, help="times each size runs, sizes interleaved (default: 1)")
    add_knob_flags(p)
    add_topology_flags(p)


def _add_model_parser(sub: Any) -> None:
    p = sub.add_parser("model", help="fit the cost model from recorded runs, or predict a capacity plan for a mix",
                       formatter_class=help_formatter)
    p.add_argument("action", choices=("fit", "predict", "validate"),
                   help="fit: from the runs under --from; predict: a mix; validate: run held-out cases against it")
    p.add_argument("--cases", help="validate: scenario@rate[:SETTING], comma-separated, the setting one of "
                   f"{', '.join(costmodel.SETTINGS)} (default ROW-FULL; default cases: "
                   + ",".join(c.text for c in modelcheck.CASES) + ")")
    p.add_argument("--control",
                   help="validate: a cell the model was fitted on, run in every round beside the cases: its error "
                        "is mostly the host's drift since the fit: scenario@rate[:SETTING], or none (default: "
                        f"{modelcheck.CONTROL.text})")
    p.add_argument("--duration", help="validate: each case's duration (default: 30s)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--record", action="store_true",
                     help="validate: run and profile the cases (and the control) with no model yet, each run kept "
                          "to be priced by --recorded once the model is fitted (a campaign interleaves such rounds "
                          "with the fit's studies)")
    how.add_argument("--recorded", action="store_true",
                     help="validate: price the runs --record recorded under results/model (those no validation "
                          "has priced yet) with the fitted model, then the lag onset")
    p.add_argument("--repeat", type=int,
                   help="validate: runs of each case, in rounds that run every case in an order rotated by one a "
                        f"round; the bounds judge each case's mean (default: {MODEL_VALIDATE_REPEATS})")
    p.add_argument("--onset-rows", type=int,
                   help=f"validate: rows per transaction of the lag-onset runs (default: {modelcheck.ONSET_ROWS}; "
                        "0: none)")
    p.add_argument("--onset-duration", help="validate: each lag-onset run's duration (default: 60s)")
    p.add_argument("--onset-backlog", type=float,
                   help="validate: the held-out drain's backlog, in seconds of apply at the predicted onset (it is "
                        "written at 3,000 rows/s; a smaller one is quicker and less precise; default: "
                        f"{modelcheck.ONSET_DRAIN_S:g})")
    p.add_argument("--from", dest="source", help="the folder whose runs the fit reads (default: results/)")
    p.add_argument("--mix", help="predict: e.g. 'update_user=3000/s,update_users:100=20/s'")
    p.add_argument("--profile", help="predict: a profile file from ./run.sh profile, priced instead of a --mix")
    p.add_argument("--own-runs", metavar="APPLY_JSON[,…]",
                   help="predict --profile: the workload's own live windows (apply.json of `apply-capacity --live`, "
                        "comma-separated, one setting): its CPU per transaction on the master and a following "
                        "replica, and its drains' apply rate, price the plan instead of the model's fit on the "
                        "suite's table (held at any rate: a fit on the windows' rate)")
    p.add_argument("--setting", help=f"predict: one of {', '.join(costmodel.SETTINGS)} (default: ROW-FULL; with "
                   "--profile, every setting the model has)")
    p.add_argument("--cores", type=_cores, metavar="ROLE=N,…",
                   help="predict: cores per role, of master, replica (each replica's), app and load (vegeta), e.g. "
                        f"{costmodel.CORES_EXAMPLE}: what hosts of those cores sustain of the mix and which role "
                        "saturates first; a role left out is not judged (default: none judged; the replica's CPU "
                        f"share read against {MODEL_REPLICA_CORES:g} core)")
    p.add_argument("--replica-cores", type=float, metavar="N",
                   help="predict: deprecated, --cores replica=N (kept as its alias)")
    p.add_argument("--table", choices=("bench_idx", "bench_noidx"), default="bench_idx",
                   help="predict: the table the mix writes (default: bench_idx, with its four secondary indexes)")
    p.add_argument("--parallel", type=_threads, default=1, metavar="N",
                   help="predict: the replica's applier threads; ρ with N is printed as bounds, from independent "
                        "transactions (ρ / min(N, the replica's cores: --cores replica=N)) to conflicting ones (ρ) "
                        "(default: 1)")
    p.add_argument("--link", type=_round_trip, metavar="RTT",
                   help="predict: the round trip to the replica that acknowledges, e.g. 20ms or 0.5ms: semi-sync's "
                        "added commit latency per wait point and the commits in flight it takes")
    add_topology_flags(p)
    p.set_defaults(model_parser=p)  # a usage error found after parsing prints this command's usage


def _cores(text: str) -> dict[str, float]:
    """--cores ROLE=N,…: cores per role (costmodel.parse_cores), or the model command's usage and why not (exit 2)."""
    try:
        return costmodel.parse_cores(text)
    except costmodel.MixError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _threads(text: str) -> int:
    """--parallel N: whole, 1 to the most applier threads a replica may have (the knob's own bound)."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_PARALLEL_THREADS:
        raise argparse.ArgumentTypeError(f"{text!r}: give applier threads as a whole number from 1 to "
                                         f"{MAX_PARALLEL_THREADS}")
    return n


def _round_trip(text: str) -> float:
    """--link RTT: a round trip ('20ms', '0.5ms') in seconds."""
    try:
        return parse_duration(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give the round trip as a positive duration with its unit, "
                                         "e.g. 20ms or 0.5ms") from None


def _add_campaign_parser(sub: Any) -> None:
    p = sub.add_parser("campaign", help="run a campaign file's units at one commit into one folder",
                       formatter_class=help_formatter)
    p.add_argument("file", help="a campaign TOML file (or a name in campaigns/)")
    p.add_argument("--resume", action="store_true", help="continue the newest unfinished campaign of that name")
    p.add_argument("--dry-run", action="store_true", help="print the units and the estimated duration")
    p.add_argument("--allow-dirty", action="store_true", help="run from a tree with uncommitted changes (recorded)")
    add_topology_flags(p)


def _add_report_parser(sub: Any) -> None:
    p = sub.add_parser("report", help="regenerate report.md from one campaign (default: the newest finished "
                       "'report' campaign; without one, everything in results/)", formatter_class=help_formatter)
    p.add_argument("--output", help="where to write the report (default: report.md at the top level)")
    p.add_argument("--campaign", help="the campaign to report: a name (its newest finished folder) or a folder")
    p.add_argument("--loose", action="store_true", help="everything in results/, not one campaign")
    setting_flag(p, "--results", "results", "results folder")


def _add_compare_parser(sub: Any) -> None:
    p = sub.add_parser("compare", help="compare two runs or two sweeps (folders or names under results/)",
                       formatter_class=help_formatter)
    p.add_argument("base")
    p.add_argument("new")
    p.add_argument("--band", type=float, default=5.0, help="smallest change in percent ever called a change")
    setting_flag(p, "--results", "results", "results folder")


def _add_bench_app_parser(sub: Any) -> None:
    p = sub.add_parser("bench-app", help="measure the app tier's CPU-ms per request (find_users, update_user)",
                       formatter_class=help_formatter)
    p.add_argument("--rate", type=int, default=BENCH_APP_RATE, help="constant rate of each measurement")
    p.add_argument("--duration", default="20s", help="length of each measurement")
    p.add_argument("--combinations", action="store_true",
                   help="measure every driver × worker class combination, not only the configured one")
    p.add_argument("--load", action="store_true",
                   help="also measure the attack pipeline against a bare `vegeta attack -output=FILE`")
    p.add_argument("--find-users", action="store_true",
                   help="instead: find_users' SQL shapes side by side, interleaved")
    p.add_argument("--shapes", default=",".join(FIND_USERS_SHAPES),
                   help="with --find-users: the shapes to compare, the first one the baseline")
    p.add_argument("--repeat", type=int, default=3,
                   help="interleaved rounds (floor, get_user, find_users, update_user; or each find_users shape)")
    add_topology_flags(p)
    add_app_flags(p)


def _add_list_parser(sub: Any) -> None:
    sub.add_parser("list", help="the scenarios and studies, with what each one runs")


def cmd_sweep(args: argparse.Namespace) -> int:

    scenario = load_scenario(args.scenario)
    rates = list(scenario.rates)
    if args.rates:
        rates = [parse_rate(r.strip()) for r in args.rates.split(",") if r.strip()]
        if not rates:
            raise UsageError("--rates needs at least one rate")
    if args.repeat < 1:
        raise UsageError("--repeat must be 1 or more")
    if args.confirm < 0:
        raise UsageError("--confirm must be 0 (none) or more rounds")
    settings = settings_from(args)
    options = run_options(args, scenario, settings)
    if options.nonce:
        raise UsageError("--nonce replays one run's values; every step of a sweep writes new ones")
    if options.clients is not None:
        raise UsageError("--clients runs a closed loop, which asks no rate: a sweep's ladder of rates has nothing to "
                         "vary (run `./run.sh SCENARIO RATE --clients N` per client count)")
    sweep = Sweep(settings, scenario, rates, options, repeat=args.repeat, refine=args.refine, confirm=args.confirm)
    print(f"replbench: sweep {scenario.name} over {rates} rps, {options.duration:g} s per step → "
          f"{shown_path(sweep.folder)}", file=sys.stderr)
    data = sweep.execute()
    print(f"\nsweep {scenario.name}: {shown_path(sweep.folder)}")
    for step in sweep.steps:
        print(f"  {step.rate:>6} rps{' (refine)' if step.refined else '         '}  {step.verdict}")
    for run in sweep.boundary.runs or [] if sweep.boundary else []:
        print(f"  {run.rate:>6} rps (confirm, round {run.round})  {'PASS' if run.passed else 'FAIL'}"
              + ("" if run.passed else f" ({'; '.join(run.reasons or [])})"))

    record = sweep_of(data)
    print(f"max sustainable rate: {describe_max(record)} ({scenario.criteria.describe()})")
    status = record.status
    assert status is not None  # Sweep._write always records one
    return collection_exit_code(status)  # complete or interrupted


def cmd_study(args: argparse.Namespace) -> int:

    try:
        spec = studyfile.only(studyfile.load(args.file), args.only)
    except studyfile.StudyError as exc:
        raise UsageError(str(exc)) from None
    if args.repeat is not None and args.repeat < 1:
        raise UsageError("--repeat must be 1 or more")
    settings = settings_from(args)
    overrides = {"repeat": args.repeat, "rate": None if args.rate is None else parse_rate(str(args.rate)),
                 "duration": None if args.duration is None else parse_seconds(args.duration, "--duration")}
    plan = study.Plan.of(spec, **overrides, idle=settings.idle_window)
    print(plan.describe())
    if args.dry_run:
        return 0
    runner = study.Study(settings, plan)
    data = study_of(runner.execute())
    print(study.render_table(data))
    print(f"study folder: {shown_path(runner.folder)}")
    status = data.status
    assert status is not None  # Study._write always records one
    return collection_exit_code(status)  # complete or interrupted


def cmd_apply_capacity(args: argparse.Namespace) -> int:
    if args.live is not None and args.binlog:
        raise UsageError("--live and --binlog are two ways to measure your workload: give one")
    if args.live is not None:
        return _live_apply_capacity(args)
    if args.binlog:
        return _replay_apply_capacity(args)
    if args.scenario is None:
        raise UsageError("apply-capacity needs a write scenario, or --live WINDOW or --binlog FILE… with none")
    if args.replica is not None:
        raise UsageError("--replica goes with --live or --binlog: a scenario's backlog is drained by every replica")
    scenario = load_scenario(args.scenario)
    if not scenario.writes:
        raise UsageError(f"apply-capacity needs a write scenario; {scenario.name!r} only reads")
    rate = parse_rate(str(args.rate if args.rate is not None else APPLY_RATE))
    writes = args.writes if args.writes is not None else 60 * rate
    if writes < 1:
        raise UsageError("--writes must be 1 or more")
    settings = settings_from(args)
    pinning = drain_pinning(args.cpus, settings)
    folder = new_folder(settings, scenario, rate, parent=settings.results / "apply-capacity")
    print(f"replbench: apply capacity of {scenario.name}: {writes:,} writes at {rate}/s with the replicas' SQL "
          f"threads stopped ({knobs_from(args).describe()}) → {shown_path(folder)}", file=sys.stderr)
    data = applycap.measure(settings, scenario, knobs_from(args), writes, rate, folder, together=args.together,
                            pinning=pinning)
    print(applycap.render(data))
    return collection_exit_code(data.status or UNIT_FAILED, UNIT_OK)  # measure always sets a status


def _live_apply_capacity(args: argparse.Namespace) -> int:
    """apply-capacity --live WINDOW: the replicas held while the DBA's own client writes (experiments/applycap)."""
    if args.scenario is not None or args.writes is not None or (args.rate is not None and args.workload is None):
        raise UsageError("--live measures whatever writes to the master during its window: give no scenario, "
                         "--writes or --rate with it (--rate only with --workload)")
    work = _workload(args)
    if args.together:  # the client may still write: a replica's SQL thread is held again before its flush
        raise UsageError("--live drains each replica alone; --together is for the suite's own backlog")
    try:
        window = parse_duration(args.live)
    except ValueError as exc:
        raise UsageError(f"--live: {exc}") from None
    settings = settings_from(args)
    _known_replica(settings, args.replica)
    pinning = drain_pinning(args.cpus, settings)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    folder = settings.results / "apply-capacity" / f"{stamp}-live-{window:g}s"
    folder.mkdir(parents=True, exist_ok=False)
    short = "" if window >= LIVE_MIN_WINDOW_S else (f"; shorter than {LIVE_MIN_WINDOW_S / 60:g} minutes, so labelled "
                                                    "short")
    print(f"replbench: apply capacity of what the master is written by over a {window:g} s window, the replicas' "
          f"SQL threads held ({knobs_from(args).describe()}){short} → {shown_path(folder)}", file=sys.stderr)
    if work is None:
        data = applycap.measure_live(settings, knobs_from(args), window, folder, only=args.replica, pinning=pinning)
    else:
        data = applycap.measure_workload(settings, knobs_from(args), work, parse_rate(str(args.rate)), window,
                                         folder, pinning=pinning)
    print(applycap.render(data))
    return collection_exit_code(data.status or UNIT_FAILED, UNIT_OK)  # measure always sets a status


def _workload(args: argparse.Namespace) -> Workload | None:
    """--workload's file, with the --rate it writes at (a workload chooses which replica follows: no --replica)."""
    if args.workload is None:
        return None
    if args.rate is None:
        raise UsageError("--workload writes at --rate per second: give --rate")
    if args.replica is not None:
        raise UsageError("--workload holds the first replica and leaves the others following: give no --replica")
    try:
        return workload.load(args.workload)
    except workload.WorkloadError as exc:
        raise UsageError(str(exc)) from None


def _known_replica(settings: Settings, name: str | None) -> None:
    if name is not None and name not in {r.name for r in settings.replicas}:
        raise UsageError(f"--replica: no replica {name!r} (this topology's: "
                         f"{', '.join(r.name for r in settings.replicas)})")


def _replay_apply_capacity(args: argparse.Namespace) -> int:
    """apply-capacity --binlog FILE…: captured binlogs replayed as one replica's relay logs (experiments/replay)."""
    if args.scenario is not None or args.writes is not None or args.rate is not None or args.together:
        raise UsageError("--binlog measures what the files hold: give no scenario, --writes, --rate or --together "
                         "with it")
    outside = sorted(set(knobs_from(args).changed()) - {"parallel_threads", "parallel_mode"})
    if outside:
        raise UsageError(f"--binlog replays what the files hold: only the replica's apply settings apply "
                         f"(--parallel-threads, --parallel-mode), not {', '.join(outside)}")
    files = [Path(f) for f in args.binlog]
    for f in files:
        if not f.is_file():
            raise UsageError(f"--binlog: {f}: no such file")
    settings = settings_from(args)
    replica = args.replica or "replica1"
    _known_replica(settings, replica)
    pinning = drain_pinning(args.cpus, settings)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    folder = settings.results / "apply-capacity" / f"{stamp}-binlog-{replica}"
    folder.mkdir(parents=True, exist_ok=False)
    print(f"replbench: apply capacity of {len(files)} binlog file(s) replayed on {replica} "
          f"({knobs_from(args).describe()}) → {shown_path(folder)}", file=sys.stderr)
    try:
        data = replay.measure(settings, knobs_from(args), files, replica, folder, pinning)
    except ReplbenchError:
        shutil.rmtree(folder, ignore_errors=True)  # refused before anything ran: nothing to keep
        raise
    print(applycap.render(data))
    return collection_exit_code(data.status or UNIT_FAILED, UNIT_OK)  # measure always sets a status


def cmd_big_transaction(args: argparse.Namespace) -> int:
    try:
        rows = tuple(int(n) for n in str(args.rows).replace("_", "").split(","))
    except ValueError:
        raise UsageError(f"--rows takes whole numbers separated by commas, got {args.rows!r}") from None
    if not rows or any(n < 1 for n in rows):
        raise UsageError(f"--rows must be 1 or more each, got {args.rows!r}")
    if args.repeat < 1:
        raise UsageError("--repeat must be 1 or more")
    settings = settings_from(args)
    scenario = load_scenario(bigtx.SCENARIO_OF[args.table])
    folder = new_folder(settings, scenario, max(rows), parent=settings.results / "big-transaction")
    print(f"replbench: big transactions of {', '.join(f'{n:,}' for n in rows)} rows on {bigtx.TABLES[args.table]} "
          f"({knobs_from(args).describe()}) → {shown_path(folder)}", file=sys.stderr)
    data = bigtx.measure(settings, args.table, rows, knobs_from(args), scenario, folder, args.repeat)
    print(bigtx.render(data))
    return collection_exit_code(data.status or UNIT_FAILED, UNIT_OK)  # measure always sets a status


def _interrupted_validation(settings: Settings, before: set[Path]) -> None:
    """An interrupted `model validate` reports what it measured: its table so far, from the validate.json it
    rewrites after each run and drain (the command then ends as interrupted)."""
    new = sorted(set((settings.results / "model").glob(f"{costmodel.HELD_OUT}*")) - before)
    record = new[-1] / "validate.json" if new else None
    if record is None or not record.exists():
        return
    print(render_validation(read_validation(record.parent)))
    print(f"replbench: model validate interrupted; what it measured is above and in {shown_path(record)}",
          file=sys.stderr)

def _model_validate(args: argparse.Namespace, settings: Settings, path: Path) -> int:
    """model validate: the cases run and priced now, or (--record) run and kept, or (--recorded) the kept ones
    priced."""
    if args.recorded and (given := [flag for flag, value in (("--cases", args.cases), ("--duration", args.duration),
                                                            ("--repeat", args.repeat), ("--control", args.control))
                                    if value is not None]):
        raise UsageError(f"--recorded prices the runs as --record ran them: {', '.join(given)} belong to --record")
    if args.record and (given := [flag for flag, value in (("--onset-rows", args.onset_rows),
                                                           ("--onset-duration", args.onset_duration),
                                                           ("--onset-backlog", args.onset_backlog))
                                  if value is not None]):
        raise UsageError(f"--record runs the cases alone: {', '.join(given)} belong to --recorded (the onset needs "
                         "the model)")
    repeat = MODEL_VALIDATE_REPEATS if args.repeat is None else args.repeat
    onset_rows = modelcheck.ONSET_ROWS if args.onset_rows is None else args.onset_rows
    onset_backlog = modelcheck.ONSET_DRAIN_S if args.onset_backlog is None else args.onset_backlog
    cases = modelcheck.CASES
    if args.cases is not None:
        try:
            cases = modelcheck.parse_cases(args.cases)
        except modelcheck.CaseError as exc:
            raise UsageError(f"--cases {exc}") from None
        for case in cases:
            load_scenario(case.scenario)
    control = None
    control_text = modelcheck.CONTROL.text if args.control is None else args.control
    if control_text.lower() != "none":
        try:
            (control,) = modelcheck.parse_cases(control_text)
        except modelcheck.CaseError as exc:
            raise UsageError(f"--control {exc}") from None
        except ValueError:
            raise UsageError(f"--control {control_text!r}: one case, {modelcheck.CASE_FORMAT}, or none") from None
        load_scenario(control.scenario)
    duration = parse_seconds(args.duration, "--duration") if args.duration else modelcheck.DURATION
    if repeat < 1:
        raise UsageError("--repeat must be 1 or more")
    if not 0 <= onset_rows <= MAX_BULK_ROWS:
        raise UsageError(f"--onset-rows must be from 0 to {MAX_BULK_ROWS:,}")
    onset_duration = (parse_seconds(args.onset_duration, "--onset-duration") if args.onset_duration
                      else modelcheck.ONSET_DURATION)
    if not 0 < onset_backlog <= 600:
        raise UsageError("--onset-backlog must be from 0 to 600 seconds (more than 0)")
    if args.record:
        recording = modelcheck.record(settings, cases, duration, repeat, control)
        assert recording.folder is not None  # record names its folder
        runs = sum(len(c.repeats or []) for c in (*(recording.cases or []), *filter(None, [recording.control])))
        print(f"model validate --record: {runs} runs recorded in "
              f"{shown_path(settings.results / 'model' / recording.folder)}; price them once the model is fitted: "
              "./run.sh model validate --recorded")
        return 0
    if not path.exists():
        raise ReplbenchError(f"no model yet: run `./run.sh model fit` first ({shown_path(path)} is missing)")
    before = set((settings.results / "model").glob(f"{costmodel.HELD_OUT}*"))
    model = read_model(path.parent)
    try:
        data = (modelcheck.priced_recordings(settings, model, onset_rows, onset_duration, onset_backlog)
                if args.recorded else
                modelcheck.validate(settings, model, cases, duration, onset_rows, onset_duration,
                                    onset_backlog, repeat, control))
    except KeyboardInterrupt:
        _interrupted_validation(settings, before)
        raise
    print(render_validation(data))
    return 0


def cmd_model(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    path = settings.results / "model" / "model.json"
    if args.action == "fit":
        source = Path(args.source) if args.source else settings.results
        if not source.is_dir():
            raise UsageError(f"--from {args.source}: not a folder")
        model = model_of(costmodel.fit(*costmodel.collect(source)))
        if not model.settings:
            raise ReplbenchError(f"no usable write run under {shown_path(source)} (ok, net of idle, rows verified, "
                                 "one of the model's settings)")
        path.parent.mkdir(parents=True, exist_ok=True)
        write_record(path, model)
        print(render_fit(model))
        print(f"model: {shown_path(path)}")
        return 0
    if args.action == "validate":
        return _model_validate(args, settings, path)
    if args.profile:
        return profile.predict_from_profile(args)
    if getattr(args, "own_runs", None):
        raise UsageError("--own-runs prices a profile's workload: give it with --profile FILE", args.model_parser)
    args.setting = args.setting or "ROW-FULL"
    if not args.mix:
        raise UsageError("model predict needs --mix, e.g. --mix 'update_user=3000/s,update_users:100=20/s'")
    cores, replica_cores = profile.model_cores(args)
    if args.setting not in costmodel.SETTINGS:
        raise UsageError(f"unknown --setting {args.setting!r}; settings: {', '.join(costmodel.SETTINGS)}")
    try:
        mix = costmodel.parse_mix(args.mix)
    except costmodel.MixError as exc:
        raise UsageError(str(exc)) from None
    model, model_source = profile.load_model(settings)
    try:
        plan = costmodel.predict(model, mix, args.setting, replica_cores, args.table, args.parallel, args.link,
                                 cores=cores)
    except costmodel.MixError as exc:
        raise ReplbenchError(str(exc)) from None
    print(render_plan(plan, settings.replicas_asked if args.replicas_asked else None))
    print(model_source)
    return 0


def cmd_campaign(args: argparse.Namespace) -> int:
    try:
        plan = campaign.load(args.file)
    except campaign.CampaignError as exc:
        raise UsageError(str(exc)) from None
    print(plan.describe())
    if args.dry_run:
        return 0
    try:
        record = campaign.run(settings_from(args), plan, resume=args.resume, allow_dirty=args.allow_dirty)
    except campaign.CampaignError as exc:
        raise ReplbenchError(str(exc)) from None
    print(campaign.render(record))
    status = record.status
    assert status is not None  # campaign.run always records one
    return collection_exit_code(status, DONE)


def cmd_report(args: argparse.Namespace) -> int:

    settings = settings_from(args)
    if args.campaign and args.loose:
        raise UsageError("--campaign and --loose exclude each other")
    try:
        origin = pick(settings.results, args.campaign, args.loose)
    except SourceError as exc:
        raise UsageError(str(exc)) from None
    output, kept = generate(settings, Path(args.output).resolve() if args.output else None, origin)
    print(f"replbench: wrote {shown_path(output)}"
          + (f" from campaign {origin.raw.name}" if origin.campaign else " from everything in results/"))
    rebuilt = [p.name for p in asset_sources(origin) if p.name not in kept]
    if rebuilt:
        print(f"replbench: rebuilt {len(rebuilt)} section(s) from committed assets whose raw data is not here: "
              + ", ".join(rebuilt))
    absent, newer = split_kept(origin, kept)
    if absent:
        print(f"replbench: left alone {len(absent)} committed asset folder(s) whose raw data is not here: "
              + ", ".join(absent))
    if newer:
        print(f"replbench: left alone {len(newer)} committed asset folder(s) superseded by a newer run "
              "(delete them with git rm if no longer wanted): " + ", ".join(newer))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:

    settings = settings_from(args)
    try:
        base, new = resolve(args.base, settings.results), resolve(args.new, settings.results)
    except CompareError as exc:
        raise UsageError(str(exc)) from None
    text = compare(base, new, args.band, settings.results)
    settings.results.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    out = settings.results / f"compare-{stamp}-{base.name}-vs-{new.name}.md"
    out.write_text(text)
    print(text + f"\nsaved: {shown_path(out)}")
    return 0


def cmd_bench_app(args: argparse.Namespace) -> int:
    """App CPU-ms per successful request of find_users (read) and update_user (write) beside the same stack's
    floor (a constant JSON body, no database), measured in one command; --load adds the load generator's cost
    against a bare `vegeta attack -output=FILE` at the same rate."""

    settings = settings_from(args)
    duration = parse_seconds(args.duration, "--duration")
    rate = parse_rate(str(args.rate))
    if settings.app_url:
        raise UsageError(f"bench-app measures an app started here, not the one at {settings.app_url}")
    if args.find_users:
        if args.repeat < 1:
            raise UsageError("--repeat must be at least 1")
        shapes = tuple(s.strip() for s in args.shapes.split(",") if s.strip())
        unknown = [s for s in shapes if s not in FIND_USERS_SHAPES]
        if unknown or len(shapes) < 2 or len(set(shapes)) < len(shapes):
            raise UsageError(f"--shapes takes two or more of {', '.join(FIND_USERS_SHAPES)}, each once "
                             f"(got {args.shapes!r})")
        return find_users_shapes(settings, rate, duration, args.repeat, shapes)
    combos = [(settings.driver, settings.worker_class)]
    if args.combinations:
        combos = [(d, w) for d in DRIVERS for w in WORKER_CLASS_NAMES]
    if args.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    cost = benchapp.stack_cost(settings, combos, rate, duration, args.repeat)
    if cost.interrupted:
        return EXIT_INTERRUPTED
    print(f"\napp tier cost at {rate} rps, {duration:g} s each, {args.repeat} interleaved round(s) (CPU-ms per "
          "successful request, median [min–max]; × floor = app ÷ the same round's floor, a constant JSON body "
          "served by the same stack)")
    print(f"{'driver':<9} {'worker':<8} {'scenario':<8} {'app ms':>21} {'× floor':>19} {'db ms':>8} "
          f"{'success':>8} {'p99 ms':>8}")
    for (driver, worker, name), f in cost.figures.items():
        floor_times = "" if name == "floor" else spread_text(f["ratio"], "{:.2f}×", "n/a")
        print(f"{driver:<9} {worker:<8} {name:<8} {spread_text(f['app'], '{:.3f}', 'n/a'):>21} {floor_times:>19} "
              f"{spread(f['db'])['median'] or 0:>8.3f} {100 * (spread(f['success'])['median'] or 0):>7.2f}% "
              f"{spread(f['p99'])['median'] or 0:>8.1f}")
    for driver, worker in combos:
        one_trip = spread(cost.figures[(driver, worker, "get")]["ratio"])["median"]
        if one_trip is not None:
            print(f"a single round trip (get_user, one primary-key SELECT) costs {one_trip:.2f}× the floor with "
                  f"{driver}/{worker}: the least any endpoint that reads the database costs this stack")
    print(f"data in {shown_path(cost.parent)}")
    if args.load and cost.floor_folder is not None:
        gen = benchapp.load_generator(settings, cost.floor_folder, rate, duration, cost.parent)
        bare_ms, attack_ms = gen["bare_ms"], gen["attack_ms"]
        print(f"\nload generator at {rate} rps against the floor: bare `vegeta attack -output=FILE` {bare_ms:.3f} "
              f"CPU-ms/request; the run's pipeline (its attack process, nothing beside it) {attack_ms:.3f} "
              f"({attack_ms / bare_ms:.2f}× bare); the harness process itself {gen['harness_ms']:.3f}"
              if bare_ms else "load generator: no bare measurement")
    return 0


def find_users_shapes(settings: Settings, rate: int, duration: float, repeat: int,
                      shapes: tuple[str, ...] = FIND_USERS_SHAPES) -> int:
    """bench-app --find-users: each shape against the first, with the study's verdict wording."""
    cost = benchapp.find_users_shapes(settings, rate, duration, repeat, shapes)
    if cost.interrupted:
        return EXIT_INTERRUPTED
    print(f"\nfind_users at {rate} rps, {duration:g} s each, {repeat} interleaved repeats (CPU-ms per successful "
          "query, median [min–max]; replicas = the sum over the replicas)")
    print(f"{'shape':<13} {'app ms':>22} {'replicas ms':>22} {'p99 ms':>22}")
    for shape in shapes:
        f = cost.figures[shape]
        app, replicas = spread_text(f["app"], "{:.3f}", "n/a"), spread_text(f["replicas"], "{:.3f}", "n/a")
        print(f"{shape:<13} {app:>22} {replicas:>22} {spread_text(f['p99'], '{:.1f}', 'n/a'):>22}")
    base = shapes[0]
    for shape in shapes[1:]:
        for key, what in (("app", "app"), ("replicas", "replica")):
            a, b = cost.figures[base][key], cost.figures[shape][key]
            factor = benchapp.times(b, a)
            shown = "n/a" if factor is None else f"{factor:.2f}×"
            print(f"{what} CPU per query, {shape} against {base}: {shown}, {verdict_text(b, a)}")
    print(f"data in {shown_path(cost.parent)}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:

    print("scenarios (./run.sh <scenario> <rate>):")
    for name in scenarios.available():
        try:
            s = scenarios.load(name)
        except scenarios.ScenarioError as exc:
            print(f"  {name:<15} (invalid: {exc})")
            continue
        requests = ", ".join(f"{r.endpoint}×{r.weight:g}" for r in s.requests)
        print(f"  {name:<15} {s.description}  [{requests}; schema {s.schema}]")
    print("studies (./run.sh study <name>):")
    for name in studyfile.available():
        try:
            spec = studyfile.load(name)
            print(f"  {name:<15} {spec.description}  [{len(spec.cells)} cells × {', '.join(spec.scenarios)}]")
        except studyfile.StudyError as exc:
            print(f"  {name:<15} (invalid: {exc})")
    return 0


def versions_text() -> str:

    mariadbd = mariadb_binaries().get("mariadbd")
    server = "not installed"
    if mariadbd:
        out = subprocess.run([mariadbd, "--version"], capture_output=True, text=True, check=False).stdout.strip()
        server = out.split(" Ver ")[-1] if out else "unknown"
    return (f"replbench {__version__}\nvegeta {VEGETA_VERSION} (pinned in tools/go.mod)\n"
            f"MariaDB {server}\nPython {sys.version.split()[0]}")


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "soak": cmd_soak, "sweep": cmd_sweep, "study": cmd_study, "apply-capacity": cmd_apply_capacity,
    "big-transaction": cmd_big_transaction, "campaign": cmd_campaign, "model": cmd_model, "report": cmd_report,
    "compare": cmd_compare, "bench-app": cmd_bench_app, "list": cmd_list,
}
