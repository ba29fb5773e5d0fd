"""model validate: the cost model against runs it was not fitted on. Each held-out case (the mixed scenario and a
mix of single-row and 100-row updates, each at two rates) runs as an ordinary run; the model is then asked what
that run should have cost from the run's own transactions and rows, and the table sets predicted beside measured
for binlog bytes and master and replica CPU (net of idle), with the error and whether the measurement falls in
the prediction's interval (the replicas' CPU where they also served reads only when the fit prices a read; else the
case says why not), and whether the run's rate lay outside the fit's domain.

Then the lag onset: the model's rate at which one replica (one SQL thread, on its own host) starts falling behind
under transactions of ONSET_ROWS rows (a row count no fitted drain had), checked twice. Drained: a backlog of such
transactions (written at ONSET_FILL_ROWS_PER_S rows/s, below the master's knee) applied by each replica alone, the
rate the model's premise names. Live: write-bulk runs of that many rows at ONSET_LOADS of it, with every replica but
replica1 stopped for the run (the model's replica has its host to itself; on one small box two replicas applying at
once share its cores). A run whose replica1 lag grows by FALLING_BEHIND s per s or more fell behind, and then its
apply rate is the master's transactions/s × (1 − that growth); where no run fell behind because the master could
not commit the rate, the table says so.

The runs stay in results/model/validate-<time>/ and are never fitted on (model fit skips that folder)."""

from __future__ import annotations

import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..analysis import costmodel
from ..core import scenario as scenarios
from ..core.config import FALLING_BEHIND, IDLE_WINDOW_MAX, Settings
from ..core.progress import Progress
from ..core.records import new_folder, write_json
from ..core.results import apply_of, read_meta, summary_of
from ..load import faults
from ..topology import knobs
from . import applycap
from .run import Run, RunOptions
from .study import RUN_OVERHEAD, TABLE_CHECKSUM_SECONDS, apply_seconds, run_seconds

CASES = (("mixed", 200), ("mixed", 400), ("write-mix", 100), ("write-mix", 200))  # below the knee at 8M on 2 cores
DURATION = 30.0
ONSET_ROWS = 500  # rows per transaction of the onset runs: between the fitted drains' 100 and 1,000
ONSET_LOADS = (0.8, 1.25)  # of the predicted onset: just below (lag bounded) and just above (falling behind)
ONSET_DURATION = 60.0
ONSET_REPLICA = "replica1"
ONSET_FILL_ROWS_PER_S = 3000  # the drain's backlog is written at this many rows/s: below the master's knee at 8M
ONSET_DRAIN_S = 3.0  # the drain's backlog: about this many seconds of apply at the predicted onset
ONSET_MIN_WRITES = 50


def estimate(cases: tuple[tuple[str, int], ...] = CASES, duration: float = DURATION) -> float:
    """Seconds model validate should take: its runs, and the onset runs with their stopped replicas' catch-up."""
    drain = apply_seconds(60, 1)  # about a minute of writing the backlog, then a few seconds per replica
    onset = ONSET_DURATION + IDLE_WINDOW_MAX + RUN_OVERHEAD + TABLE_CHECKSUM_SECONDS  # faults: the whole table
    return sum(run_seconds(duration, rate) for _, rate in cases) + drain + len(ONSET_LOADS) * onset


def validate(settings: Settings, model: dict[str, Any], cases: tuple[tuple[str, int], ...] = CASES,
             duration: float = DURATION, onset_rows: int = ONSET_ROWS,
             onset_duration: float = ONSET_DURATION, onset_backlog: float = ONSET_DRAIN_S) -> dict[str, Any]:
    folder = settings.results / "model" / f"{costmodel.HELD_OUT}{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"
    folder.mkdir(parents=True)
    progress = Progress("model validate")
    out: dict[str, Any] = {"folder": folder.name, "cases": []}
    for index, (name, rate) in enumerate(cases):
        sc = scenarios.load(name)
        run_folder = new_folder(settings, sc, rate, parent=folder)
        # the rows each run wrote; the whole table by the last run (the onset runs have faults: they check it)
        last = index == len(cases) - 1 and not onset_rows
        summary = Run(settings, sc, rate, RunOptions(duration=duration, checksum="table" if last else "rows"),
                      run_folder, progress).execute()
        obs = costmodel.observation(summary, read_meta(run_folder))
        case: dict[str, Any] = {"scenario": name, "rate": rate, "run": run_folder.name, "usable": obs is not None}
        if obs:
            predicted = costmodel.expected(model, obs)
            case["transactions"], case["rows"] = obs["transactions"], obs["rows"]
            case["replica_reads"] = obs["replica_reads"]
            case["not_predicted"] = costmodel.not_predicted(model, obs)
            fitted = model["settings"].get(costmodel.key(obs["setting"], obs["table"] or ""))
            case["outside_domain"] = costmodel.outside_domain(
                fitted, obs["transactions"] / obs["seconds"], obs["rows"] / obs["seconds"]) \
                if fitted and obs["seconds"] else None
            for part in costmodel.EXPECTED:
                p, m = predicted[part], obs[part]  # the replicas' CPU: with their reads where a read is priced
                case[part] = {"measured": m, "predicted": p,
                              "error_pct": None if p is None or not m else round(100 * (p["value"] - m) / m, 1),
                              "inside": None if p is None or m is None else p["low"] <= m <= p["high"]}
        out["cases"].append(case)
        write_json(folder / "validate.json", out)
    if onset_rows:
        out["onset"] = _onset(settings, model, onset_rows, onset_duration, onset_backlog, folder, progress)
        write_json(folder / "validate.json", out)
    return out


def _onset(settings: Settings, model: dict[str, Any], rows: int, duration: float, backlog_s: float, folder: Path,
           progress: Progress) -> dict[str, Any]:
    """The predicted onset against a held-out drain (each replica alone applying a backlog of such transactions:
    its rate is the onset under the model's own premise) and against live runs just below and just above it."""
    predicted = costmodel.onset(model, rows)
    out: dict[str, Any] = {"rows": rows, "replica": ONSET_REPLICA, "predicted": predicted, "runs": [],
                           "drain": None, "measured": None, "error_pct": None, "live_note": None}
    if predicted is None:
        return out
    sc = replace(scenarios.load("write-bulk"), bulk_rows=rows)
    fill = max(1, round(ONSET_FILL_ROWS_PER_S / rows))
    writes = max(ONSET_MIN_WRITES, round(backlog_s * predicted["value"]))
    drain_folder = new_folder(settings, sc, fill, parent=folder / "apply")
    data = apply_of(applycap.measure(settings, sc, knobs.Knobs(), writes, fill, drain_folder))
    rates = [r.apply_rate_trx_per_s for r in (data.replicas or {}).values() if r is not None and r.apply_rate_trx_per_s]
    out["drain"] = {"folder": f"apply/{drain_folder.name}", "writes": writes, "fill_rate": fill,
                    "status": data.status, "apply_rate_trx_per_s": rates,
                    "measured": statistics.median(rates) if rates else None}
    if rates:
        out["drain"]["error_pct"] = _error(predicted["value"], out["drain"]["measured"])
    # live: the other replicas stop at the start and replicate again one second before the last request (the
    # run's catch-up then times their backlog too, instead of waiting its timeout out on a stopped replica)
    others = [n.name for n in settings.replicas if n.name != ONSET_REPLICA]
    alone = tuple(sorted((faults.parse(f"{action}:{name}@{at:g}s") for name in others
                         for action, at in (("stop-replication", 0), ("start-replication", max(0.5, duration - 1)))),
                         key=lambda f: f.at))
    for load in ONSET_LOADS:
        rate = max(1, round(load * predicted["value"]))
        run_folder = new_folder(settings, sc, rate, parent=folder)
        summary = summary_of(Run(settings, sc, rate, RunOptions(duration=duration, faults=alone), run_folder,
                                 progress).execute())
        lag = (summary.lag or {}).get(ONSET_REPLICA)
        growth = lag.growth_s_per_s if lag else None
        tps = costmodel.node_counters(summary, "master").transactions_per_s
        behind = growth is not None and growth >= FALLING_BEHIND
        out["runs"].append({"load": load, "rate": rate, "run": run_folder.name, "status": summary.status,
                            "success": summary.success,
                            "master_transactions_per_s": tps, "lag_growth_s_per_s": growth, "fell_behind": behind,
                            "applied_per_s": round(tps * (1 - growth), 2) if behind and tps else None})
    applied = [r["applied_per_s"] for r in out["runs"] if r["applied_per_s"]]
    committed = max((r["master_transactions_per_s"] or 0 for r in out["runs"]), default=0)
    if applied:
        out["measured"] = statistics.median(applied)
        out["error_pct"] = _error(predicted["value"], out["measured"])
    elif committed < predicted["value"]:
        out["live_note"] = (f"the master committed at most {committed:,.1f} of these transactions/s here, below the "
                            "predicted onset: a replica cannot fall behind a master that slow")
    else:
        out["live_note"] = f"replica1 kept up at {committed:,.1f} transactions/s: the onset is above it"
    return out


def _error(predicted: float, measured: float) -> float | None:
    return round(100 * (predicted - measured) / measured, 1) if measured else None

