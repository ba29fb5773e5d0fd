"""The cost model: from measured write runs to a capacity plan for a stated workload.

Fitted per replication setting (ROW-FULL, ROW-MINIMAL, ROW-NOBLOB, STATEMENT, MIXED) and table (bench_idx with
its four secondary indexes, bench_noidx without) by least squares through the origin (statsmodels WLS, weighted
for relative noise), each run one observation: a node role's CPU seconds net of idle = a·transactions + b·rows
(master; replica = the mean of the replicas, from runs whose replicas served no reads), the binlog bytes the
application wrote = f·transactions + g·rows, and one replica's apply time alone (apply-capacity drains) =
c·transactions + d·rows. Where every run changed one row per transaction, transactions and rows cannot be told
apart and the fit is per transaction only (said in the model). Runs above the knee (success under the pass
criterion) are left out: queues, not the work, set their CPU. The master's fsyncs (InnoDB + binlog) are fitted the
same way (a big transaction syncs more than once); their median per commit is shown. Each coefficient keeps its
95 % interval, each fit its R² and
relative residuals, and model.json keeps the observations it came from.

predict() turns a mix ("update_user=3000/s,update_users:100=20/s") into binlog MB/s and GB/day, bytes per second
to each replica, master and replica CPU in cores (and the replica's share of its --replica-cores), each replica's
apply utilisation ρ (seconds of one SQL thread's apply per second; lag stays bounded while ρ < 1 and grows by
1 − 1/ρ seconds per second beyond), the mix's rate at which a replica starts falling behind (its transactions/s
over ρ), and the master's fsyncs per second — each with its 95 % interval from the fit's covariance.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..core.config import MIN_SUCCESS
from ..core.records import STATUS_SUCCEEDED, UNIT_OK
from ..core.results import (
    ApplyRecord,
    Binlog,
    NodeCounters,
    RowsChecked,
    RunMeta,
    RunSummary,
    apply_of,
    has,
    load,
    meta_of,
    read_meta,
    read_summary,
    summary_of,
)
from ..measure.rowcheck import MIN_CHANGED

SETTINGS: dict[str, dict[str, str]] = {  # the model's settings, as the knobs a run changed from the reference
    "ROW-FULL": {},
    "ROW-MINIMAL": {"binlog_row_image": "MINIMAL"},
    "ROW-NOBLOB": {"binlog_row_image": "NOBLOB"},
    "STATEMENT": {"binlog_format": "STATEMENT"},
    "MIXED": {"binlog_format": "MIXED"},
}
ENDPOINT_ROWS = {"update_user": 1}  # update_users:N changes N rows in one statement
MIX_ITEM = re.compile(r"^(update_user|update_users:(\d+))=(\d+(?:\.\d+)?)/s$")
SECONDS_PER_DAY = 86_400
EXPECTED = ("binlog_bytes", "master_cpu_s", "replica_cpu_s")  # what a measured run is checked against
HELD_OUT = "validate-"  # the folders of model validate's runs: never fitted on


class MixError(ValueError):
    """A mix or a setting the model cannot read; the message says what is wrong."""


def setting_of(knobs_changed: dict[str, Any] | None) -> str | None:
    """The model's name for a run's settings, or None when it changed anything else."""
    changed = {k: str(v) for k, v in (knobs_changed or {}).items()}
    return next((name for name, knobs in SETTINGS.items() if knobs == changed), None)


def node_counters(summary: RunSummary, name: str) -> NodeCounters:
    """A node's server counters over the run (all None where the run has none for it)."""
    nodes = (summary.replication.nodes if summary.replication else None) or {}
    return nodes.get(name) or NodeCounters()


def observation(summary: dict[str, Any] | RunSummary, meta: dict[str, Any] | RunMeta) -> dict[str, Any] | None:
    """One write run as the fit sees it, or None when it cannot serve (not ok, no net CPU, rows not verified as
    changed, a setting outside the model)."""
    s, m = summary_of(summary), meta_of(meta)
    setting = setting_of(m.knobs_changed)
    master = node_counters(s, "master")
    net = s.cpu_seconds_net or {}
    share = (s.rows_checked or RowsChecked()).share
    b = s.binlog or Binlog()
    if setting is None or s.status not in STATUS_SUCCEEDED or not master.transactions \
            or "master" not in net or (share is not None and share < MIN_CHANGED) or not b.successful_writes \
            or (s.success or 0) < MIN_SUCCESS:  # above the knee: queues, not the work, set the CPU
        return None
    replicas = [n for n in net if n.startswith("replica")]
    served = s.served_by or {}
    fsyncs = (master.fsyncs_per_write or 0) + (master.binlog_syncs_per_write or 0)
    return {"setting": setting, "table": s.schema_name, "folder": s.folder, "scenario": s.scenario,
            "transactions": master.transactions, "rows": master.rows_changed or master.transactions,
            "seconds": s.cpu_span_s or s.duration_s,
            "master_cpu_s": net["master"],
            "replica_cpu_s": sum(net[r] for r in replicas) / len(replicas) if replicas else None,  # type: ignore[misc]
            # reads the replicas served: their CPU is in replica_cpu_s, and the model prices writes only
            "replica_reads": sum(v for k, v in served.items() if k in replicas),
            "binlog_bytes": b.bytes_per_write * b.successful_writes,  # type: ignore[operator]
            "fsyncs_per_commit": fsyncs}


def apply_observation(data: dict[str, Any] | ApplyRecord) -> list[dict[str, Any]]:
    """Each replica's drain of an apply-capacity run (alone) as the apply fit sees it."""
    a = apply_of(data)
    setting = setting_of(a.knobs_changed)
    method = a.method if has(a, "method") else "alone"  # apply.json from before `together` had no method
    if setting is None or a.status != UNIT_OK or method != "alone":
        return []
    out = []
    for name, r in (a.replicas or {}).items():
        if r is not None and r.seconds and r.transactions:
            out.append({"setting": setting, "table": a.schema_name, "replica": name, "transactions": r.transactions,
                        "rows": r.rows or r.transactions, "apply_s": r.seconds})
    return out


def collect(results: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every usable write run and apply-capacity drain under results/."""
    runs, drains = [], []
    for path in sorted(results.rglob("summary.json")):
        meta_path = path.parent / "meta.json"
        if not meta_path.exists() or any(part.startswith(HELD_OUT) for part in path.parts):
            continue
        try:
            obs = observation(read_summary(path.parent), read_meta(path.parent))
        except (OSError, ValueError):
            continue
        if obs:
            obs["folder"] = str(path.parent.relative_to(results))
            runs.append(obs)
    for path in sorted(results.rglob("apply.json")):
        if any(part.startswith(HELD_OUT) for part in path.parts):
            continue
        try:
            drains += apply_observation(load(path))
        except (OSError, ValueError):
            continue
    return runs, drains


def ols(y: Iterable[float], trx: Iterable[float], rows: Iterable[float]) -> dict[str, Any] | None:
    """y = a·trx + b·rows through the origin (statsmodels, least squares weighted for relative noise): the
    coefficients with their 95 % intervals and covariance, R² and relative residuals; per transaction only when
    rows never differ from transactions."""
    import numpy as np
    import statsmodels.api as sm  # imported where a model is fitted, not by every command's start

    y_, t_, r_ = (np.asarray(list(v), dtype=float) for v in (y, trx, rows))
    if len(y_) < 2:
        return None
    separable = len(y_) >= 3 and np.linalg.matrix_rank(np.column_stack([t_, r_])) == 2
    x = np.column_stack([t_, r_]) if separable else t_[:, None]
    # run-to-run noise is relative (two identical runs differ by a share, not by a constant): weighted least
    # squares with weights 1/y², so a 1,000-row run does not drown the per-transaction term of 1-row runs
    fit = sm.WLS(y_, x, weights=1.0 / np.maximum(np.abs(y_), 1e-12) ** 2).fit()
    low, high = fit.conf_int(0.05).T
    names = ["per_trx", "per_row"] if separable else ["per_trx"]
    return {"coef": dict(zip(names, map(float, fit.params))),
            "ci95": {n: [float(a), float(b)] for n, a, b in zip(names, low, high)},
            "cov": np.asarray(fit.cov_params()).tolist(), "terms": names,
            "r2": float(fit.rsquared), "n": len(y_),
            "relative_residuals": [round(float(v), 4) for v in fit.resid / np.maximum(np.abs(y_), 1e-12)],
            "rows_separated": bool(separable)}


def fit(runs: list[dict[str, Any]], drains: list[dict[str, Any]]) -> dict[str, Any]:
    """The model per setting: CPU per role, binlog bytes, one replica's apply time, fsyncs per commit."""
    import numpy as np

    model: dict[str, Any] = {"settings": {}, "observations": runs, "drains": drains}
    # the observations: observation()'s and apply_observation()'s dictionaries (model.json keeps them), each with
    # its table (None where the summary named none)
    tables = sorted({o["table"] or "" for o in [*runs, *drains]})
    for setting, table in ((s, t) for s in SETTINGS for t in tables):
        mine = [o for o in runs if o["setting"] == setting and (o["table"] or "") == table]
        drained = [d for d in drains if d["setting"] == setting and (d["table"] or "") == table]
        if not mine and not drained:
            continue
        trx, rows = [o["transactions"] for o in mine], [o["rows"] for o in mine]
        replica = [o for o in mine if o["replica_cpu_s"] is not None and not o.get("replica_reads")]
        model["settings"][key(setting, table)] = {
            "setting": setting, "table": table, "runs": len(mine), "drains": len(drained),
            "master_cpu_s": ols([o["master_cpu_s"] for o in mine], trx, rows),
            "replica_cpu_s": ols([o["replica_cpu_s"] for o in replica], [o["transactions"] for o in replica],
                                 [o["rows"] for o in replica]),
            "binlog_bytes": ols([o["binlog_bytes"] for o in mine], trx, rows),
            "apply_s": ols([d["apply_s"] for d in drained], [d["transactions"] for d in drained],
                           [d["rows"] for d in drained]),
            "fsyncs_per_commit": float(np.median([o["fsyncs_per_commit"] for o in mine])) if mine else None,
            # the master's fsyncs (InnoDB + binlog) per run: big transactions sync more than once per commit
            "master_fsyncs": ols([o["fsyncs_per_commit"] * o["transactions"] for o in mine], trx, rows),
        }
    return model


def key(setting: str, table: str) -> str:
    """A fitted model's name: the setting and the table it was measured on ('ROW-FULL bench_idx')."""
    return f"{setting} {table}".strip()


def parse_mix(text: str) -> list[tuple[str, int, float]]:
    """'update_user=3000/s,update_users:100=20/s' -> [(endpoint, rows per transaction, transactions/s), …]."""
    items = [part.strip() for part in (text or "").split(",") if part.strip()]
    if not items:
        raise MixError("the mix is empty; e.g. --mix 'update_user=3000/s,update_users:100=20/s'")
    out = []
    for item in items:
        match = MIX_ITEM.match(item)
        if not match:
            raise MixError(f"cannot read {item!r}: write endpoint=RATE/s, the endpoint update_user or "
                           "update_users:ROWS, e.g. update_users:100=20/s")
        rows = int(match.group(2)) if match.group(2) else ENDPOINT_ROWS["update_user"]
        if rows < 1:
            raise MixError(f"{item!r}: update_users needs 1 row or more")
        out.append((match.group(1).split(":")[0], rows, float(match.group(3))))
    return out


def _predict_one(part: dict[str, Any] | None, trx: float, rows: float) -> dict[str, float] | None:
    """A fitted quantity per second for trx and rows per second, with its 95 % interval (normal, from the
    coefficients' covariance)."""
    import numpy as np

    if not part or (not part["rows_separated"] and rows != trx):
        return None  # several rows per transaction, and a fit that cannot price a row: no figure, not a guess
    x = np.array([trx, rows][:len(part["terms"])]) if part["rows_separated"] else np.array([trx])
    coef = np.array([part["coef"][t] for t in part["terms"]])
    value = float(x @ coef)
    sd = float(np.sqrt(max(0.0, x @ np.asarray(part["cov"]) @ x)))
    return {"value": value, "low": value - 1.96 * sd, "high": value + 1.96 * sd}


def predict(model: dict[str, Any], mix: list[tuple[str, int, float]], setting: str = "ROW-FULL",
            replica_cores: float = 1.0, table: str = "bench_idx") -> dict[str, Any]:
    """Every figure of a capacity plan for the mix under the setting on the table; each {value, low, high} or None
    where the model has no data."""
    if setting not in SETTINGS:
        raise MixError(f"unknown setting {setting!r}; settings: {', '.join(SETTINGS)}")
    fitted = model["settings"].get(key(setting, table))
    if not fitted:
        raise MixError(f"the model has no data for {setting} on {table}: run `./run.sh model fit` over runs of "
                       "that setting and table")
    trx = sum(rate for _, _, rate in mix)
    rows = sum(rate * n for _, n, rate in mix)

    def scaled(value: dict[str, float] | None, factor: float) -> dict[str, float] | None:
        return None if value is None else {k: v * factor for k, v in value.items()}

    binlog = _predict_one(fitted["binlog_bytes"], trx, rows)
    rho = _predict_one(fitted["apply_s"], trx, rows)  # one SQL thread: seconds of apply per second
    replica_cpu = _predict_one(fitted["replica_cpu_s"], trx, rows)
    return {
        "setting": setting, "table": table, "transactions_per_s": trx, "rows_per_s": rows,
        "binlog_mb_per_s": scaled(binlog, 1e-6), "binlog_gb_per_day": scaled(binlog, SECONDS_PER_DAY / 1e9),
        "bytes_per_s_to_each_replica": binlog,
        "master_cpu_cores": _predict_one(fitted["master_cpu_s"], trx, rows),
        "replica_cpu_cores": replica_cpu, "replica_cores": replica_cores,
        "replica_cpu_utilisation": scaled(replica_cpu, 1 / replica_cores),
        "replica_apply_rho": rho,
        "lag": None if rho is None else (
            "bounded (ρ < 1 with its interval)" if rho["high"] < 1 else
            f"grows by {lag_growth(rho['value']):.2f} s per s" if rho["low"] > 1 else
            "at the edge (the interval spans 1)"),
        "lag_growth_s_per_s": None if rho is None or rho["value"] <= 1 else
        {"value": lag_growth(rho["value"]), "low": lag_growth(max(rho["low"], 1.0)),
         "high": lag_growth(rho["high"])},
        "onset_transactions_per_s": _reciprocal(rho, trx),
        "fsyncs_per_s": _predict_one(fitted.get("master_fsyncs"), trx, rows),
    }


def lag_growth(rho: float) -> float:
    """Seconds of lag a replica gains per second at apply utilisation ρ > 1: it applies 1/ρ of each second's
    transactions, so the oldest one it has not applied gets 1 − 1/ρ seconds older every second (its backlog grows
    by (1 − 1/ρ) × the mix's transactions per second)."""
    return 1.0 - 1.0 / rho


def _reciprocal(per: dict[str, float] | None, scale: float = 1.0) -> dict[str, float] | None:
    """scale / x with its interval (the interval's ends swap); None where x may be 0 or less."""
    if per is None or per["value"] <= 0:
        return None
    return {"value": scale / per["value"], "low": scale / per["high"],
            "high": scale / per["low"] if per["low"] > 0 else float("inf")}


def onset(model: dict[str, Any], rows_per_trx: float, setting: str = "ROW-FULL",
          table: str = "bench_idx") -> dict[str, float] | None:
    """The rate of rows_per_trx-row transactions at which one replica (one SQL thread, on its own) starts falling
    behind: 1 / its apply seconds per transaction, with the interval; None without an apply fit that prices rows."""
    fitted = model["settings"].get(key(setting, table))
    return _reciprocal(_predict_one(fitted["apply_s"] if fitted else None, 1.0, float(rows_per_trx)))


def expected(model: dict[str, Any], obs: dict[str, Any]) -> dict[str, dict[str, float] | None]:
    """What the model says a measured run should have cost, from its own transactions and rows: binlog bytes and
    master and replica CPU seconds (net of idle), each with its interval; None where the model cannot say."""
    fitted = model["settings"].get(key(obs["setting"], obs["table"] or ""))  # an observation() of the run
    if not fitted:
        return {part: None for part in EXPECTED}
    return {part: _predict_one(fitted[part], obs["transactions"], obs["rows"]) for part in EXPECTED}
