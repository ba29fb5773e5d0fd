"""./run.sh profile FILE…: the workload a binlog shows (decoded by the server's own tool, docs/profile.md), written
as a profile file and printed as a summary; and predict_from_profile, what `./run.sh model predict --profile FILE`
runs: the cost model's sheet for that workload on each setting the model has."""

from __future__ import annotations

import argparse
import calendar
import json
import resource
import shutil
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from ..analysis import costmodel
from ..analysis.ownfit import OwnFit, OwnRunsError, fit_of
from ..analysis.profile import (
    EVERY_ROW,
    NoWorkload,
    ProfileError,
    Sampling,
    Source,
    Window,
    model_tables,
    price,
    profile_files,
    read,
    source_of,
    workload_mixes,
)
from ..core.config import MODEL_REPLICA_CORES, SETTINGS, ReplbenchError, Settings
from ..core.progress import Progress
from ..core.records import shown_path
from ..core.results import CostModel, apply_of, load, read_model, write_record
from ..measure import binlogfile
from ..report.profile import render, render_predictions
from ..report.sources import published_model
from .args import UsageError, help_formatter, setting_flag, settings_from

TIMING_REPEATS = 3  # the decoder alone runs this many times; its best is the yardstick


def add_parser(sub: Any) -> None:
    p = sub.add_parser("profile", help="the workload a binlog shows: per table and kind, rates, rows, bytes, and "
                       "what each replication setting would write", formatter_class=help_formatter)
    p.add_argument("files", nargs="*", metavar="FILE", type=_binlog, help="binlog files (MariaDB, or MySQL with "
                   "MySQL's mysqlbinlog installed), in the order the server wrote them; none: the master's binlogs, "
                   "copied from the server (--topology FILE, else the native topology of --state)")
    p.add_argument("--since", type=_when, metavar="DATETIME",
                   help=f"only the transactions from this time on ({WHEN_FORMAT}, the local time of this machine: "
                        "the decoder reads and prints times in it)")
    p.add_argument("--until", type=_when, metavar="DATETIME",
                   help="only the transactions before this time (same format and time zone)")
    p.add_argument("--out", type=_out_file,
                   help="the profile file to write (default: results/profiles/<first file's name>.json; from a "
                        "server <topology>-master.json; a window adds its times)")
    p.add_argument("--json", action="store_true", help="print the profile file's JSON instead of the summary")
    p.add_argument("--every-row", action="store_true",
                   help="read every row image instead of a sample (exact column shares; slower on a large binlog)")
    p.add_argument("--timing", action="store_true",
                   help="also time the decoder alone on the same files (to /dev/null, best of "
                        f"{TIMING_REPEATS}) and print both times")
    g = p.add_argument_group("from a server (no FILE)")
    setting_flag(g, "--topology", "topology", "a TOML file naming your own master, whose binlogs are copied "
                 "(SHOW BINARY LOGS, then mariadb-binlog --read-from-remote-server --raw); credentials from "
                 "REPLBENCH_DB_USER / REPLBENCH_DB_PASSWORD", default_text="the native topology's master")
    setting_flag(g, "--state", "state", "the native topology's state folder",
                 default_text=f"{SETTINGS['state'].default}")
    g.add_argument("--keep", action="store_true",
                   help="keep the copied binlogs (their folder is printed) instead of removing them afterwards")
    p.set_defaults(profile_parser=p)


WHEN_FORMAT = "YYYY-MM-DD HH:MM:SS"


def _binlog(name: str) -> binlogfile.BinlogFile:
    """A FILE argument: a binlog, or the command's usage and one line saying why not (exit 2)."""
    try:
        return binlogfile.inspect(Path(name))
    except binlogfile.NotABinlog as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _when(text: str) -> int:
    """--since / --until: a date and time of this machine's local time, as a second of the decoder's clock
    (Event.time)."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date and time: use {WHEN_FORMAT} (the local time of "
                                         "this machine)") from None
    if moment.tzinfo is not None:
        raise argparse.ArgumentTypeError(f"{text!r}: give the local time of this machine, without a UTC offset")
    if moment.microsecond:
        raise argparse.ArgumentTypeError(f"{text!r}: to the second (the binlog's times have no fraction)")
    return calendar.timegm(moment.timetuple())


def _out_file(name: str) -> Path:
    if Path(name).is_dir():
        raise argparse.ArgumentTypeError(f"{name}: a folder; name the file to write")
    return Path(name)


def cmd_profile(args: argparse.Namespace) -> int:
    usage = args.profile_parser
    if args.since is not None and args.until is not None and args.until <= args.since:
        raise UsageError(f"--until {binlogfile.clock(args.until)} is not after --since "
                         f"{binlogfile.clock(args.since)}", usage)
    window = Window(args.since, args.until)
    if args.files:
        given = [flag for flag, value in (("--topology", args.topology), ("--state", args.state),
                                          ("--keep", args.keep)) if value]
        if given:
            raise UsageError(f"FILE and {', '.join(given)}: profile either files or the binlogs of a server "
                             "(--topology FILE, or no FILE for the native topology), not both", usage)
        source = source_of("files", "", window)
        return _profile(args, args.files, window, source, args.out or _default_out(args.files[0].path.name, window))
    settings = settings_from(args)
    progress = Progress("profile")
    folder = Path(tempfile.mkdtemp(prefix="replbench-binlogs-"))
    try:
        files, listed = binlogfile.copy_from_server(settings, folder, args.since, progress)
        stem = Path(settings.topology).stem if settings.topology else "native"
        out = args.out or _default_out(f"{stem}-master", window)
        return _profile(args, files, window, source_of("server", listed.where, window), out,
                        covered=binlogfile.local_second(listed.now))
    finally:
        if args.keep:
            print(f"profile: the copied binlogs are kept in {folder}", file=sys.stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)


def _default_out(name: str, window: Window) -> Path:
    """results/profiles/<name>.json; a window adds its times (….20261127-101500-20261127-101600.json)."""
    if window.since is not None or window.until is not None:
        name += "." + "-".join(binlogfile.clock(t).replace("-", "").replace(":", "").replace(" ", "-")
                               if t is not None else edge for t, edge in ((window.since, "start"),
                                                                          (window.until, "end")))
    return Settings.from_env().results / "profiles" / f"{name}.json"


def _profile(args: argparse.Namespace, files: list[binlogfile.BinlogFile], window: Window, source: Source,
             out: Path, covered: int | None = None) -> int:
    """Profiles the files (each decoded near the window), writes the profile file and prints it."""
    decoders = [binlogfile.decoder(f, (window.since, window.until)) for f in files]
    alone = [sorted(binlogfile.time_alone(argv) for _ in range(TIMING_REPEATS)) for argv in decoders] \
        if args.timing else []
    wall, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
    profile = profile_files(files, window, source, EVERY_ROW if args.every_row else Sampling(), covered)
    wall, cpu, children = time.perf_counter() - wall, time.process_time() - cpu, _children_cpu() - children
    out.parent.mkdir(parents=True, exist_ok=True)
    write_record(out, profile)
    print(json.dumps(profile.model_dump(mode="json"), indent=2) if args.json else render(profile))
    print(f"profile: {shown_path(out)}", file=sys.stderr if args.json else sys.stdout)
    if alone:
        print(timing_text(sum(t[0] for t in alone), sum(t[len(t) // 2] for t in alone), wall, cpu, children),
              file=sys.stderr if args.json else sys.stdout)
    return 0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timing_text(best: float, median: float, wall: float, cpu: float, decoder_cpu: float) -> str:
    """--timing's line: figures only (a timing depends on the machine and its load: nothing asserts one)."""
    return (f"Timing: the decoder alone {best:.3f} s (to /dev/null, best of {TIMING_REPEATS}; median {median:.3f} s); "
            f"the profile {wall:.3f} s, {wall / best:.2f}× the best (decoding and reading, one run, without Python's "
            f"start); CPU: the decoder {decoder_cpu:.3f} s, reading its text {cpu:.3f} s")


# --- model predict --profile ---------------------------------------------------------------------------------

def predict_from_profile(args: argparse.Namespace) -> int:
    """The cost sheet of a profile's workload (the heartbeat left out) on each setting the model has, or on
    --setting alone; each table on the model's table it resembles (profile.model_table)."""
    settings = settings_from(args)
    cores, replica_cores = model_cores(args)
    try:
        profile = read(Path(args.profile))
    except ProfileError as exc:
        raise UsageError(f"--profile {exc}") from None
    model, source = load_model(settings)
    try:
        mixes, mapped, notes = workload_mixes(profile, model_tables(model))
    except NoWorkload as exc:
        raise UsageError(f"--profile: {exc}") from None
    own = own_runs(getattr(args, "own_runs", None))
    wanted = [args.setting] if getattr(args, "setting", None) else list(costmodel.SETTINGS)
    sheets = []
    for setting in wanted:
        if setting not in costmodel.SETTINGS:
            raise UsageError(f"unknown --setting {setting!r}; settings: {', '.join(costmodel.SETTINGS)}")
        sheets += price(model, profile, mixes, mapped, setting, replica_cores, alone=len(wanted) == 1,
                        threads=getattr(args, "parallel", 1), rtt_s=getattr(args, "link", None), cores=cores,
                        own=own)
    if not sheets:
        raise ReplbenchError(f"the model ({source}) has none of the settings asked for the profile's tables")
    asked = getattr(args, "replicas_asked", None)  # --replicas N (the topology flag's, read as the setting)
    replicas = settings.with_overrides(replicas_asked=asked).replicas_asked if asked else None
    print(render_predictions(args.profile, profile, sheets, replicas, notes))
    print(source)
    return 0


def own_runs(text: str | None) -> OwnFit | None:
    """--own-runs FILE[,FILE…]: the workload's own live windows read as its fit (analysis/ownfit), or a usage error
    in one line naming the file and what is wrong."""
    if not text:
        return None
    records = []
    for name in (part.strip() for part in text.split(",") if part.strip()):
        path = Path(name)
        try:
            records.append((path, apply_of(load(path))))
        except (OSError, ValueError) as exc:
            raise UsageError(f"--own-runs {name}: not a readable apply.json ({exc})") from None
    try:
        return fit_of(records)
    except OwnRunsError as exc:
        raise UsageError(f"--own-runs {exc}") from None


def model_cores(args: argparse.Namespace) -> tuple[dict[str, float], float]:
    """`model predict`'s cores per role (--cores, parsed by costmodel.parse_cores) with the deprecated
    --replica-cores N read as --cores replica=N, and the replica's cores (MODEL_REPLICA_CORES where neither names
    them); UsageError, with the model command's usage, for cores not above 0 or the replica's given both ways."""
    usage = [parser] if (parser := getattr(args, "model_parser", None)) is not None else []
    cores = dict(getattr(args, "cores", None) or {})
    alias = getattr(args, "replica_cores", None)
    if alias is not None:
        if not 0 < alias < float("inf"):  # argparse's float reads "nan" and "inf" too
            raise UsageError("--replica-cores must be a number above 0", *usage)
        if "replica" in cores:
            raise UsageError("--replica-cores N is --cores replica=N (deprecated): give the replica's cores once",
                             *usage)
        cores["replica"] = alias
        print("./run.sh: --replica-cores N is deprecated: give --cores replica=N", file=sys.stderr)
    return cores, cores.get("replica", MODEL_REPLICA_CORES)


def load_model(settings: Settings) -> tuple[CostModel, str]:
    """Your own `model fit`'s model, else the report campaign's (as `model predict --mix` finds it)."""
    path = settings.results / "model" / "model.json"
    source = f"model: {shown_path(path)} (your own `./run.sh model fit`)"
    if not path.exists():
        published = published_model(settings.results)
        if published is None:
            raise ReplbenchError(f"no model yet: run `./run.sh model fit` first ({shown_path(path)} is missing, "
                                 "and no finished report campaign holds one)")
        path, record = published
        # what a campaign.json older than these keys lacks (experiments/campaign writes each as a str, never null)
        fitted_by = record.folder if record.folder is not None else path.parent.parent.name
        commit = record.commit if record.commit is not None else "?"
        finished = (record.finished_at or "")[:10]
        source = (f"model: {shown_path(path)} (fitted by campaign {fitted_by} at commit {commit}, {finished}, "
                  "on the machine that ran it; `./run.sh model fit` fits one from your own runs)")
    return read_model(path.parent), source


HANDLERS = {"profile": cmd_profile}
