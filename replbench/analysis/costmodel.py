"""The cost model: from measured write runs to a capacity plan for a stated workload.

Fitted per replication setting (ROW-FULL, ROW-MINIMAL, ROW-NOBLOB, STATEMENT, MIXED) and table (bench_idx with
its four secondary indexes, bench_noidx without), each run one observation: a node role's CPU seconds net of idle =
a·transactions + b·rows (master; replica = the mean of the replicas, + r·reads each replica served where the fit has
runs whose replicas served reads, docs/cost-model.md), the binlog bytes the application wrote = f·transactions +
g·rows, and one replica's apply time alone (apply-capacity drains) = c·transactions + d·rows (+ e·rows², and
priced between the drained sizes on straight lines: apply_time). Where every run
changed one row per transaction, transactions and rows cannot be told apart and the fit is per transaction only
(said in the model). Runs above the knee (success under the pass criterion) are left out: queues, not the work, set
their CPU. The master's fsyncs (InnoDB + binlog, net of the idle window's: the heartbeat's commits are not the
workload's) are fitted the same way (a big transaction syncs more than once); their median per commit is shown.
The row images' CPU fits are one per table, pooled over ROW_IMAGES: a cost per transaction for all, a cost per row
each (split_part; docs/cost-model.md, "Row images").

The fit (fit_part) is least squares through the origin, weighted for relative noise, with every coefficient bounded
at zero (scipy.optimize.nnls): a cost cannot be negative, and a thin cell that would make one so gets 0 instead.
Each coefficient's 95 % interval, and the covariance a prediction's interval comes from, are those of the bounded fit
over MODEL_BOOTSTRAP_ROUNDS resamples of whole cells (a cell: the repeats of one scenario at one rate and size);
with fewer than MODEL_BOOTSTRAP_MIN_CELLS cells they are the weighted least-squares covariance of the coefficients
the bound left free (the active set: conditional on which are zero, so a coefficient at zero gets [0, 0]). Each fit
also keeps the run-to-run variance: the pooled within-cell variance of each repeat's figure per transaction over its
cell's mean (core/stats.pooled_variance), or, where no cell was repeated, the relative residuals' (n − terms degrees
of freedom); R²,
relative residuals, and model.json the observations it came from.

predict() turns a mix ("update_user=3000/s,update_users:100=20/s") into binlog MB/s and GB/day, bytes per second
to each replica, master and replica CPU in cores (and the replica's share of its --replica-cores), each replica's
apply utilisation ρ (seconds of one SQL thread's apply per second; lag stays bounded while ρ < 1 and grows by
1 − 1/ρ seconds per second beyond), the mix's rate at which a replica starts falling behind (its transactions/s
over ρ), and the master's fsyncs per second — each with its 95 % prediction interval: the fit's variance at the mix
plus one run's (value² × the run-to-run relative variance), so a figure's interval holds what a repeat would
measure, not only where the mean is. A transaction costs more CPU at a low rate (a core woken between
transactions): the CPU fits weigh each run's transactions by a rate shape measured between single-row cells
(rate_shape; a replica's reads by a read shape, read_shape), so a is the cost per transaction at the shape's fastest
rate; where no setting's runs cover enough rates they keep a term per second of writing instead. A plan reads the
shape at the master's total transactions/s. Writes whose replicas served reads on the same cores are outside the
master CPU's domain (AMID_READS). docs/cost-model.md, "Rates" and "Reads"; docs/decisions/cost-model-rate.md. The
model states its domain (the rates it saw per transaction size) and flags a mix outside it.

The same runs fit the app's and the load generator's (vegeta's) CPU per write and per read request (request_fit,
one fit each over every setting and table). Given cores per role (parse_cores: master, replica, app, load), a plan
says what hosts of those cores sustain of the mix and which role saturates first (capacity: each role's cores
needed at the asked rate, their share of its cores and the rate it sustains, a replica also bounded by its SQL
thread; CAPACITY_ASSUMPTION says what it takes for granted). docs/cost-model.md, "Capacity per role".
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from ..core.config import (
    MIN_SUCCESS,
    MODEL_BOOTSTRAP_MIN_CELLS,
    MODEL_BOOTSTRAP_ROUNDS,
    MODEL_DOMAIN_SLACK,
    MODEL_REPLICA_CORES,
    MODEL_SHAPE_MERGE,
    MODEL_SHAPE_MIN_RATES,
    MODEL_SHAPE_MIN_READ_RATES,
    SEMI_SYNC_AFTER_SYNC_OVERLAP_RTTS,
    SEMI_SYNC_LONE_RTTS,
    SEMI_SYNC_OVERLAP_IN_FLIGHT,
)
from ..core.records import UNIT_OK
from ..core.results import (
    ApplyRecord,
    AppSettings,
    CostModel,
    Domain,
    Drain,
    FinishedRun,
    Fit,
    FittedSetting,
    KnobSetting,
    NodeCounters,
    NodeFigures,
    Num,
    Observation,
    Pooled,
    RowsChecked,
    RunMeta,
    RunSummary,
    Shape,
    apply_of,
    finished,
    load,
    read_meta,
    read_summary,
)
from ..core.stats import BOOTSTRAP_SEED, group_bootstrap, mean_error, pooled_variance
from ..measure.rowcheck import MIN_CHANGED

if TYPE_CHECKING:  # numpy is imported where a model is fitted, not by every command's start
    import numpy as np
    from numpy.typing import ArrayLike, NDArray

    Floats = NDArray[np.float64]

SETTINGS: dict[str, KnobSetting] = {  # the model's settings, as the knobs a run changed from the reference
    "ROW-FULL": KnobSetting(),
    "ROW-MINIMAL": KnobSetting(binlog_row_image="MINIMAL"),
    "ROW-NOBLOB": KnobSetting(binlog_row_image="NOBLOB"),
    "STATEMENT": KnobSetting(binlog_format="STATEMENT"),
    "MIXED": KnobSetting(binlog_format="MIXED"),
}
# the row images: ROW's settings differ in what a row event carries, not in what a commit does, so their CPU fits
# share the per-transaction term (and the per-second and per-read ones), each image keeping its own cost per row
# (docs/cost-model.md, "Row images"); STATEMENT and MIXED replay statements and keep fits of their own
ROW_IMAGES = ("ROW-FULL", "ROW-MINIMAL", "ROW-NOBLOB")
ENDPOINT_ROWS = {"update_user": 1}  # update_users:N changes N rows in one statement
MIX_ITEM = re.compile(r"^(update_user|update_users:(\d+))=(\d+(?:\.\d+)?)/s$")
SECONDS_PER_DAY = 86_400
EXPECTED = ("binlog_bytes", "master_cpu_s", "replica_cpu_s")  # what a measured run is checked against
RATE_DEPENDENT = "the CPU and fsync figures"  # what a rate outside the model's domain makes extrapolations
Z95 = 1.96
# a MariaDB GTID event is 2 bytes longer when its transaction committed in a group (an 8-byte commit id instead of 6
# zero bytes: https://mariadb.com/kb/en/gtid_event): how many commits group depends on the concurrency at the time,
# not on the transaction's rows, so a binlog figure's interval is this much per transaction wider either way
GROUP_COMMIT_ID_BYTES = 2.0
HELD_OUT = "validate-"  # the folders of model validate's runs: never fitted on
# the master's CPU of writes whose replicas served reads on the same cores: outside the model's domain (fitted on
# none, predicted for none): docs/decisions/cost-model-rate.md, "Decided (28 Nov)"
AMID_READS = ("writes amid reads on the same host's cores: outside the master CPU's domain (the model prices writes "
              "on a master whose cores nothing else keeps busy; on one host, reads beside them made the master's "
              "writes 20-30 % cheaper)")
CPU_PARTS = ("master_cpu_s", "replica_cpu_s")  # the fits whose per-transaction cost follows the rate shape
# model predict --cores: the roles a host's cores are given to, each priced by its own CPU figure (predict's
# "<role>_cpu_cores"): the master's mariadbd, each replica's, the app (aiohttp under gunicorn) and the load
# generator (vegeta)
ROLES = ("master", "replica", "app", "load")
CORES_EXAMPLE = "master=4,replica=2,app=2,load=1"
# what a capacity per role takes for granted, printed with it (docs/cost-model.md, "Capacity per role")
CAPACITY_ASSUMPTION = ("per-core costs as measured on this machine, one core = one core of this host's speed; no "
                       "contention between roles (each on cores of its own); each role's rate scaled linearly from "
                       "the asked one, the mix's proportions kept; one request of this suite's app (and of vegeta) "
                       "per transaction")


class MixError(ValueError):
    """A mix or a setting the model cannot read; the message says what is wrong."""


def setting_of(knobs_changed: KnobSetting | None) -> str | None:
    """The model's name for a run's settings (the knobs it changed from the reference), or None when it changed
    anything else."""
    changed = KnobSetting() if knobs_changed is None else knobs_changed
    return next((name for name, knobs in SETTINGS.items() if knobs == changed), None)


def node_counters(summary: RunSummary, name: str) -> NodeCounters:
    """A node's server counters over the run (all None where the run has none for it)."""
    nodes = (summary.replication.nodes if summary.replication else None) or {}
    return nodes.get(name) or NodeCounters()


def observation(summary: RunSummary, m: RunMeta) -> Observation | None:
    """One write run as the fit sees it, or None when it cannot serve (not finished, no net CPU, rows not verified
    as changed, a setting outside the model)."""
    setting = setting_of(m.knobs_changed)
    s = finished(summary)
    if setting is None or s is None or s.success < MIN_SUCCESS:
        return None  # above the knee: queues, not the work, set the CPU
    master = node_counters(s, "master")
    net = s.cpu_seconds_net or {}
    share = (s.rows_checked or RowsChecked()).share
    b = s.binlog
    replicas = [n for n in net if n.startswith("replica")]
    served = s.served_by or {}
    if not b.successful_writes and replicas and any(served.get(r) for r in replicas):
        return _read_observation(s, m, setting, net, replicas, served)
    if not master.transactions or "master" not in net or (share is not None and share < MIN_CHANGED) \
            or not b.successful_writes or (bytes_per_write := b.bytes_per_write) is None:
        return None
    # net of the idle window's (the heartbeat commits and syncs whether or not the app writes); a summary from
    # before the idle counter rates were recorded has only the gross counts, which the fsync fit leaves out
    fsyncs = None if master.fsyncs_per_write_net is None else \
        master.fsyncs_per_write_net + (master.binlog_syncs_per_write_net or 0)
    rows = master.rows_changed or master.transactions
    return Observation(setting=setting, table=s.schema_name, folder=s.folder, scenario=s.scenario,
                       cell=cell_name(s.scenario, s.rate, rows / master.transactions),
                       transactions=master.transactions, rows=rows,
                       seconds=s.cpu_span_s or s.duration_s,
                       write_seconds=s.cpu_span_s or s.duration_s,  # the app wrote in every second of the run
                       master_cpu_s=net["master"],
                       replica_cpu_s=sum(_net_cpu(net, r) for r in replicas) / len(replicas) if replicas else None,
                       # reads the replicas served (all of them; replica_cpu_s is their mean): priced by a read
                       # term where the fit has such runs, else those runs are left out of the replica fit
                       replica_reads=sum(v for k, v in served.items() if k in replicas), replicas=len(replicas),
                       binlog_bytes=bytes_per_write * b.successful_writes,
                       fsyncs_per_commit=fsyncs, resolution=_resolution(s, replicas),
                       **_requests(s, m, net, b.successful_writes))


class Requests(TypedDict):
    """What the app and the load generator did in a run (_requests'), as Observation's fields."""

    writes: int
    reads: int
    app_cpu_s: Num | None
    load_cpu_s: Num | None
    app_settings: str


def _requests(s: RunSummary, m: RunMeta, net: NodeFigures, writes: int) -> Requests:
    """What the app and the load generator did in a run, as their fits see it (request_fit): its successful write
    and read requests (every success that was not a write: a read, wherever it was served), the app's and vegeta's
    CPU seconds net of idle, and the app's settings (its driver and worker class, which set its cost per request).
    A figure not recorded is None: a summary from before the groups were netted, and vegeta's on a topology file's
    attacker hosts, whose CPU this machine does not see (the summary writes 0 there, not a measurement)."""
    app = m.app or AppSettings()
    vegeta = None if s.remote_attackers else net.get("vegeta")
    return Requests(writes=writes, reads=max(0, (s.successes or 0) - writes),
                    app_cpu_s=net.get("app") or None, load_cpu_s=vegeta or None,
                    app_settings=f"{app.driver or '?'}/{app.worker_class or '?'}")


def _resolution(s: RunSummary, replicas: list[str]) -> dict[str, float]:
    """The resolution of a run's net CPU figures (the replicas' mean: the widest replica's), where recorded: below
    it a figure cannot be told from zero, and validation compares it with nothing."""
    got = s.cpu_seconds_net_resolution or {}
    out = {"master_cpu_s": got.get("master")}
    widest = [r for n in replicas if (r := got.get(n)) is not None]
    out["replica_cpu_s"] = max(widest) if widest and len(widest) == len(replicas) else None
    return {k: v for k, v in out.items() if v is not None}


def _read_observation(s: FinishedRun, m: RunMeta, setting: str, net: NodeFigures, replicas: list[str],
                      served: dict[str, int]) -> Observation:
    """A run that only read, as the replica fit sees it (docs/cost-model.md, "Reads"): no transaction, no row, no
    second of writing, its replicas' mean CPU net of idle and the reads they served. The master's CPU and the
    binlog of such a run are not the workload's (the heartbeat alone), so the other fits leave it out."""
    seconds = s.cpu_span_s or s.duration_s
    return Observation(setting=setting, table=s.schema_name, folder=s.folder, scenario=s.scenario,
                       cell=f"{s.scenario or 'read'} {'' if s.rate is None else f'@{s.rate:g}/s '}reads",
                       transactions=0, rows=0, seconds=seconds, write_seconds=0.0,
                       master_cpu_s=None, replica_cpu_s=sum(_net_cpu(net, r) for r in replicas) / len(replicas),
                       replica_reads=sum(v for k, v in served.items() if k in replicas), replicas=len(replicas),
                       binlog_bytes=None, fsyncs_per_commit=None, resolution=_resolution(s, replicas),
                       **_requests(s, m, net, 0))


def _net_cpu(net: NodeFigures, group: str) -> float:
    """A group's CPU seconds net of idle: analysis/summary.net_of_idle writes every group's, never null."""
    seconds = net[group]
    assert seconds is not None
    return seconds


def squares_of(drain: Drain) -> float:
    """Σ rows² over a drain's transactions, taking them all of one size (a drain's backlog is)."""
    return drain.rows ** 2 / drain.transactions if drain.transactions else 0.0


def writes_of(obs: Observation) -> bool:
    """Whether an observation wrote (every fit but the replicas' reads only those)."""
    return bool(obs.transactions)


def write_seconds(obs: Observation) -> float:
    """The seconds an observation's app wrote in (a model fitted before they were recorded: its seconds, as every
    run then wrote in each)."""
    return float(obs.seconds if obs.write_seconds is None else obs.write_seconds)


def measured(obs: Observation, part: str) -> float:
    """An observation's figure of a part whose fit takes it (each fit takes only the observations that have it)."""
    value = obs.figure(part)
    assert value is not None, (obs.folder, part)
    return value


def cell_name(scenario: str | None, rate: float | None, rows_per_trx: float) -> str:
    """The cell a run repeats: its scenario at its rate and transaction size (rows per transaction to a tenth of
    a decade, so repeats whose mixes drew a few rows more or less stay together)."""
    size = 10 ** round(math.log10(max(rows_per_trx, 1e-9)), 1)
    return f"{scenario or 'drain'} {'' if rate is None else f'@{rate:g}/s '}{size:.3g} rows"


def cell_of(obs: Observation) -> str:
    """An observation's cell: its own, or (a model fitted before cells were recorded, or a test's synthetic run)
    one made from its figures, the rate from its transactions over its seconds."""
    if obs.cell:
        return obs.cell
    rate = obs.transactions / obs.seconds if obs.seconds else None
    name = cell_name(obs.scenario, None if rate is None else float(f"{rate:.2g}"), obs.rows / obs.transactions)
    return name if rate is not None else f"{name} × {obs.transactions}"


def drain_cell(drain: Drain) -> str:
    """A drain's cell: its size and its transactions (a backlog of that many)."""
    return f"{cell_name(None, None, drain.rows / drain.transactions)} × {drain.transactions}"


def apply_observation(a: ApplyRecord) -> list[Drain]:
    """Each replica's drain of an apply-capacity run (alone) as the apply fit sees it."""
    setting = setting_of(a.knobs_changed)
    method = a.method if a.method is not None else "alone"  # apply.json from before `together` had no method
    if setting is None or a.status != UNIT_OK or method != "alone":
        return []
    out = []
    for name, r in (a.replicas or {}).items():
        if r is not None and r.seconds and r.transactions:
            out.append(Drain(setting=setting, table=a.schema_name, replica=name, transactions=r.transactions,
                             rows=r.rows or r.transactions, apply_s=r.seconds,
                             backlog=a.folder))  # every replica of one run drained the same backlog
    return out


def collect(results: Path) -> tuple[list[Observation], list[Drain]]:
    """Every usable write run and apply-capacity drain under results/."""
    runs: list[Observation] = []
    drains: list[Drain] = []
    for path in sorted(results.rglob("summary.json")):
        meta_path = path.parent / "meta.json"
        if not meta_path.exists() or any(part.startswith(HELD_OUT) for part in path.parts):
            continue
        try:
            obs = observation(read_summary(path.parent), read_meta(path.parent))
        except (OSError, ValueError):
            continue
        if obs is not None:
            runs.append(obs.model_copy(update={"folder": str(path.parent.relative_to(results))}))
    for path in sorted(results.rglob("apply.json")):
        if any(part.startswith(HELD_OUT) for part in path.parts):
            continue
        try:
            drains += apply_observation(apply_of(load(path)))
        except (OSError, ValueError):
            continue
    return runs, drains


def fit_part(y: Iterable[float], trx: Iterable[float], rows: Iterable[float], cells: Sequence[str] | None = None,
             reads: Iterable[float] | None = None, seconds: Iterable[float] | None = None,
             squares: Iterable[float] | None = None, factors: Iterable[float] | None = None,
             kinds: Sequence[str] | None = None) -> Fit | None:
    """y = a·trx + b·rows (+ w·seconds of writing) (+ r·reads) through the origin, every coefficient ≥ 0 (scipy's
    nnls), least squares weighted for relative noise: the coefficients with their 95 % intervals and covariance (a
    bootstrap over the cells, or the active set's covariance with few cells: the module's docstring), the run-to-run
    relative variance, R² and relative residuals; per transaction only when rows never differ from transactions, a
    term per second of writing only where the runs' rates can tell it from the per-transaction and per-row terms
    (docs/decisions/cost-model-rate.md), a read term only where some run has reads and they can be told apart
    from the rest, and (`squares`: each transaction's rows², summed) a cost per row per row of its transaction
    where the sizes tell it (the apply fit: docs/cost-model.md, "Apply"). `factors`: each run's rate-shape factor
    (rate_shape), its transactions counted as that many transactions at the shape's fastest rate. `kinds`: each
    run's setting, for a fit pooled over settings (ROW_IMAGES): one per-transaction term for all, a per-row term per
    setting ("per_row ROW-MINIMAL") where its own runs tell rows from transactions; split_part gives each its fit."""
    import numpy as np

    y_, t_, r_ = (np.asarray(list(v), dtype=float) for v in (y, trx, rows))
    n = len(y_)
    if n < 2:
        return None
    shaped = t_ if factors is None else t_ * np.asarray(list(factors), dtype=float)
    names, columns = ["per_trx"], [shaped]
    kind_ = None if kinds is None else np.asarray(list(kinds))
    if kind_ is None:
        if n >= 3 and np.linalg.matrix_rank(np.column_stack([t_, r_])) == 2:
            names.append("per_row")
            columns.append(r_)
    else:
        for k in dict.fromkeys(kind_):
            mine = kind_ == k
            if separates(t_[mine], r_[mine]):
                names.append(f"per_row {k}")
                columns.append(np.where(mine, r_, 0.0))
    groups = _groups(cells if cells is not None else [str(i) for i in range(n)])
    for name, extra in (("per_row_sq", squares), ("per_second", seconds), ("per_read", reads)):
        if extra is None:
            continue
        e_ = np.asarray(list(extra), dtype=float)
        if e_.any() and n > len(columns) and _tells(groups, [*columns, e_]):
            names.append(name)
            columns.append(e_)
    x = np.column_stack(columns)
    # run-to-run noise is relative (two identical runs differ by a share, not by a constant): each run weighted by
    # 1/its cell's mean, so a 1,000-row run does not drown the per-transaction term of 1-row runs, and a run that
    # measured low (a busy idle window netted off) weighs no more than its cell's other repeats (1/y would give it
    # the most weight of all: docs/cost-model.md, "Weights")
    level = np.empty(n)
    for g in groups:
        level[g] = np.mean(np.abs(y_[g]))
    weight = 1.0 / np.maximum(level, 1e-12)
    coef = _nnls(x, y_, weight)
    fitted = x @ coef
    low, high, cov, method = _intervals(x, y_, weight, coef, groups, t_,
                                        None if kind_ is None else [str(kind_[g[0]]) for g in groups], names)
    relative = (y_ - fitted) * weight
    run_var, dof, source = _run_variance(y_, t_, relative, groups, len(names))
    part = Fit(coef=dict(zip(names, map(float, coef))),
               ci95={name: [float(a), float(b)] for name, a, b in zip(names, low, high)},
               cov=np.asarray(cov).tolist(), terms=names,
               r2=float(1 - np.sum(relative ** 2) / n),  # weighted, through the origin: 1 − Σ relative residual² / n
               n=n, cells=len(groups), interval_method=method,
               run_variance=run_var, run_variance_dof=dof, run_variance_from=source,
               relative_residuals=[round(float(v), 4) for v in relative],
               rows_separated="per_row" in names)
    if kind_ is None:
        return part
    return part.model_copy(update={"kinds": [str(k) for k in kind_], "run_cells": list(cells or [])})


def separates(trx: ArrayLike, rows: ArrayLike) -> bool:
    """Whether runs tell rows from transactions: two transaction sizes or more, a tenth of a decade apart (as
    cell_name rounds them; a single-row cell whose count of rows changed is off by a few is still one size)."""
    import numpy as np

    t, r = np.asarray(trx, dtype=float), np.asarray(rows, dtype=float)
    return len({round(math.log10(b / a), 1) for a, b in zip(t, r) if a > 0 and b > 0}) >= 2


def split_part(joint: Fit | None, kind: str) -> Fit | None:
    """One setting's fit out of a fit pooled over settings (fit_part's `kinds`): the shared terms, its own per-row
    term as per_row, their intervals and covariance, R², residuals and cells over its own runs (the run-to-run
    variance stays the pool's: the host's noise), and which settings shared the rest ("pooled"); None where it had
    no run in the pool."""
    import numpy as np

    if joint is None or joint.kinds is None or kind not in joint.kinds:
        return None
    kinds, terms, run_cells = joint.kinds, joint.terms or [], joint.run_cells or []
    coef, ci95, residuals = joint.coef or {}, joint.ci95 or {}, joint.relative_residuals or []
    mine = [i for i, k in enumerate(kinds) if k == kind]
    own = f"per_row {kind}"
    keep = [t for t in terms if not t.startswith("per_row ") or t == own]
    index = [terms.index(t) for t in keep]
    names = ["per_row" if t == own else t for t in keep]
    relative = [residuals[i] for i in mine]
    cov = np.asarray(joint.cov)[np.ix_(index, index)]
    shared = joint.model_dump(exclude_unset=True, exclude={"kinds", "run_cells"})
    return Fit(**{**shared,
                  "coef": {n: coef[t] for n, t in zip(names, keep)},
                  "ci95": {n: ci95[t] for n, t in zip(names, keep)}, "cov": cov.tolist(), "terms": names,
                  "r2": float(1 - sum(v * v for v in relative) / len(mine)), "n": len(mine),
                  "cells": len({run_cells[i] for i in mine}),
                  "relative_residuals": relative, "rows_separated": own in keep,
                  "pooled": Pooled(settings=list(dict.fromkeys(kinds)), n=joint.n, cells=joint.cells, r2=joint.r2)})


def _tells(groups: list[list[int]], columns: list[Floats]) -> bool:
    """Whether the last column can be told from the others by the cells: the cells' mean inputs (each column scaled
    to its largest) have full rank at a tolerance of 1e-3. Within a cell the columns differ only by noise (two
    20 s runs' spans, 20.1 and 20.3 s, make the seconds of two cells look independent of their transactions and
    rows); so a term needs a cell of its own to be fitted (docs/cost-model.md, "Rates")."""
    import numpy as np

    means = np.array([[float(np.mean(c[g])) for c in columns] for g in groups])
    scale = np.max(np.abs(means), axis=0)
    if len(groups) < len(columns) or not scale.all():
        return False
    return int(np.linalg.matrix_rank(means / scale, tol=1e-3)) == len(columns)


def _nnls(x: Floats, y: Floats, weight: Floats) -> Floats:
    """The weighted least-squares coefficients, each bounded at zero."""
    import numpy as np
    from scipy.optimize import nnls  # imported where a model is fitted, not by every command's start

    return np.asarray(nnls(x * weight[:, None], y * weight)[0], dtype=float)


def _groups(cells: Sequence[str]) -> list[list[int]]:
    """The observations' indexes per cell, in the order the cells first appear."""
    out: dict[str, list[int]] = {}
    for index, cell in enumerate(cells):
        out.setdefault(cell, []).append(index)
    return list(out.values())


def _intervals(x: Floats, y: Floats, weight: Floats, coef: Floats, groups: list[list[int]], trx: Floats,
               strata: list[str] | None = None, names: list[str] | None = None,
               ) -> tuple[Floats, Floats, Floats, str]:
    """The coefficients' 95 % intervals and covariance: the bounded fit over resamples of whole cells (percentiles,
    and the resamples' covariance), or with fewer than MODEL_BOOTSTRAP_MIN_CELLS cells the weighted least-squares
    covariance of the free coefficients (t interval, cut at the bound), zero for those at the bound. A fit pooled
    over settings (`strata`: each cell's setting) resamples each setting's cells among its own, and a resample in
    which a setting's cells no longer tell its rows from its transactions says nothing of its per-row term."""
    import numpy as np

    k = x.shape[1]
    if len(groups) >= MODEL_BOOTSTRAP_MIN_CELLS:
        strata = strata or [""] * len(groups)
        members = {s: [i for i, t in enumerate(strata) if t == s] for s in dict.fromkeys(strata)}
        draws = [group_bootstrap(len(m), MODEL_BOOTSTRAP_ROUNDS, seed=BOOTSTRAP_SEED + n)
                 for n, m in enumerate(members.values())]
        own = [j for j, name in enumerate(names or []) if name.startswith("per_row ")]
        samples = np.array([_resampled(x, y, weight, [i for m, d in zip(members.values(), draws)
                                                      for g in d[round_] for i in groups[m[g]]], trx, own)
                            for round_ in range(MODEL_BOOTSTRAP_ROUNDS)])
        # the resamples with an estimate of every term (_resampled): intervals and a covariance from the same
        # rounds (one from pairs of terms, each over its own rounds, need not be positive semidefinite)
        complete = samples[~np.isnan(samples).any(axis=1)]
        if len(complete) >= 2:
            low, high = np.percentile(complete, [2.5, 97.5], axis=0)
            per = "" if len(members) == 1 else (
                f", each setting's among its own ({', '.join(members)}; {len(complete)} of "
                f"{MODEL_BOOTSTRAP_ROUNDS} resamples kept every setting's sizes)")
            return low, high, np.atleast_2d(np.cov(complete, rowvar=False)), \
                f"bootstrap over {len(groups)} cells{per}"
    import statsmodels.api as sm  # imported where a model is fitted

    free = coef > 0
    cov, low, high = np.zeros((k, k)), coef.copy(), coef.copy()
    if free.any() and len(y) > free.sum():
        wls = sm.WLS(y, x[:, free], weights=weight ** 2).fit()
        cov[np.ix_(free, free)] = wls.cov_params()
        low[free], high[free] = np.asarray(wls.conf_int(0.05)).T
    return np.maximum(low, 0.0), high, cov, f"active-set covariance ({len(groups)} cells" + (
        ")" if len(groups) < MODEL_BOOTSTRAP_MIN_CELLS else ": too few resamples kept every setting's sizes)")


def _resampled(x: Floats, y: Floats, weight: Floats, rows: list[int], trx: Floats, own: list[int]) -> Floats:
    """The bounded fit on a resample's rows; NaN where the resample left a setting of a pooled fit (`own`: the
    settings' per-row columns) with runs all of one size (separates): such a round has no estimate of that
    setting's cost per row, and fitted anyway its rows' cost would go into the shared terms."""
    import numpy as np

    xs = x[rows]
    if any(not separates(trx[rows][xs[:, j] != 0], xs[xs[:, j] != 0, j]) for j in own):
        return np.full(x.shape[1], np.nan)
    return _nnls(xs, y[rows], weight[rows])


def _run_variance(y: Floats, trx: Floats, relative: Floats, groups: list[list[int]],
                  terms: int) -> tuple[float, int, str]:
    """One run's relative variance: pooled over the repeats of each cell (each repeat's figure per transaction over
    its cell's mean: the measurement's own spread, whatever the fit says) where some cell was repeated, else the
    relative residuals' (n − terms degrees of freedom); 0 where neither has any (the interval is then the fit's
    alone, and says so by its 0)."""
    import numpy as np

    per_trx = y / np.maximum(trx, 1e-12)
    shares = []
    for g in groups:
        mean = float(np.mean(per_trx[g]))
        if mean > 0:
            shares.append([float(per_trx[i]) / mean for i in g])
    pooled = pooled_variance(shares)
    if pooled is not None:
        return float(pooled[0]), pooled[1], "repeats"
    dof = len(y) - terms
    if dof <= 0:
        return 0.0, 0, "none"
    return float(np.sum(relative ** 2) / dof), dof, "residuals"


def fit(runs: list[Observation], drains: list[Drain]) -> CostModel:
    """The model per setting: CPU per role, binlog bytes, one replica's apply time, fsyncs per commit, and the
    domain of rates and sizes its runs cover."""
    import numpy as np

    settings: dict[str, FittedSetting] = {}
    # the observations: observation()'s and apply_observation()'s records (model.json keeps them), each with its
    # table (None where the summary named none)
    tables = sorted({o.table or "" for o in runs} | {d.table or "" for d in drains})
    shapes = {part: rate_shape(runs, part) for part in CPU_PARTS}
    reads_shape = read_shape(runs)

    def cpu(ours: list[Observation], pooled: bool = False) -> dict[str, Fit | None]:
        # writes amid reads on the same cores are outside the master's domain (AMID_READS)
        return {"master_cpu_s": _fit_of([o for o in ours if writes_of(o) and not reads_each(o)], "master_cpu_s",
                                        timed=True, shape=shapes["master_cpu_s"], pooled=pooled),
                "replica_cpu_s": _replica_fit(ours, shapes["replica_cpu_s"], reads_shape, pooled=pooled)}

    # the row images' CPU fits, one per table pooled over those whose own runs tell rows from transactions (one
    # whose runs are all of one size would push its rows' cost into the shared terms: it keeps a fit of its own);
    # the runs that only read (the reference settings', ROW FULL) go in as they are: a read costs the same under
    # every image
    pools = {t: _pool(runs, t) for t in tables}
    images = {t: cpu([o for o in runs if o.setting in pool and (o.table or "") == t], pooled=True)
              for t, pool in pools.items()}
    for setting, table in ((s, t) for s in SETTINGS for t in tables):
        ours = [o for o in runs if o.setting == setting and (o.table or "") == table]
        mine = [o for o in ours if writes_of(o)]  # runs that only read price the replicas' reads alone
        drained = [d for d in drains if d.setting == setting and (d.table or "") == table]
        if not mine and not drained:
            continue
        synced = [(o, f) for o in mine if (f := o.fsyncs_per_commit) is not None]  # net of idle (observation())
        cpus = {part: split_part(joint, setting) for part, joint in images[table].items()} \
            if setting in pools[table] else cpu(ours)
        settings[key(setting, table)] = FittedSetting(
            setting=setting, table=table, runs=len(mine), drains=len(drained),
            master_cpu_s=cpus["master_cpu_s"], replica_cpu_s=cpus["replica_cpu_s"],
            binlog_bytes=_fit_of(mine, "binlog_bytes"),
            apply_s=_apply_fit(drained),
            fsyncs_per_commit=float(np.median([f for _, f in synced])) if synced else None,
            # the master's fsyncs (InnoDB + binlog) per run: big transactions sync more than once per commit
            master_fsyncs=fit_part([f * o.transactions for o, f in synced],
                                   [o.transactions for o, _ in synced], [o.rows for o, _ in synced],
                                   [cell_of(o) for o, _ in synced], seconds=[write_seconds(o) for o, _ in synced]),
            domain=domain_of(mine),
        )
    # the app's and the load generator's CPU per request: one fit each over every setting and table (neither sees
    # the binlog's settings or the table's indexes: a request is one statement to them), docs/cost-model.md,
    # "Capacity per role"
    return CostModel(settings=settings, observations=runs, drains=drains,
                     app_cpu_s=request_fit(runs, "app_cpu_s", one_app=True),
                     load_cpu_s=request_fit(runs, "load_cpu_s"))


def _apply_fit(drained: list[Drain]) -> Fit | None:
    """One replica's apply time: the curve c·transactions + d·rows + e·rows² (fit_part), and, where the curve prices
    rows and two sizes or more were drained, each drained size's mean apply seconds per transaction ("sizes":
    [[rows per transaction, seconds, drains, backlogs], …], smallest first; a size: the drains of one cell's size,
    to a tenth of a decade as cell_name groups them, placed at their mean rows per transaction), which price a size
    between them (apply_time; docs/cost-model.md, "Apply")."""
    part = fit_part([d.apply_s for d in drained], [d.transactions for d in drained],
                    [d.rows for d in drained], [drain_cell(d) for d in drained],
                    squares=[squares_of(d) for d in drained])
    by_size: dict[str, list[tuple[float, float, str | int]]] = {}  # (rows, seconds, backlog) per transaction
    for i, d in enumerate(drained):
        if d.transactions:
            n = d.rows / d.transactions
            by_size.setdefault(cell_name(None, None, n), []).append(
                (n, d.apply_s / d.transactions, d.backlog or i))  # no folder (old model.json): its own
    sizes = sorted([sum(n for n, *_ in v) / len(v), sum(t for _, t, _ in v) / len(v), len(v), len({b for *_, b in v})]
                   for v in by_size.values())
    if part is not None and part.rows_separated and len(sizes) >= 2:
        return part.model_copy(update={"sizes": [[round(n, 3), t, k, b] for n, t, k, b in sizes]})
    return part


def apply_time(part: Fit | None, items: Iterable[tuple[float, float]]) -> dict[str, float] | None:
    """One SQL thread's apply seconds for `items` (count, rows per transaction): per second for a mix's rates, or
    one transaction. A size within the drained sizes is priced on the straight line between the two drained sizes
    around it (their mean seconds per transaction: a curve through every size lets the small sizes bend it where
    the time per row is flat, docs/decisions/cost-model-rate.md, "Two more validations"); a size beyond them at
    the nearest drained size's mean plus the fit's curve's change from there (so the figure does not jump where
    the drained sizes end). The 95 % interval: each drained size's mean's variance (the fit's run-to-run relative
    variance over its backlogs, each drained by every replica), the curve's change's, plus one run's; None without
    an apply fit that prices the items' rows. No transactions: 0."""
    import numpy as np

    items = [(float(c), float(n)) for c, n in items if c > 0]
    if part is None:
        return None
    if not items:
        return {"value": 0.0, "low": 0.0, "high": 0.0}
    sizes = part.sizes
    if not sizes or len(sizes) < 2:
        trx, rows = sum(c for c, _ in items), sum(c * n for c, n in items)
        return _predict_one(part, trx, rows, squares=sum(c * n * n for c, n in items))
    at = [float(s[0]) for s in sizes]
    terms, coef = _terms(part), part.coef or {}

    def curve(n: float) -> Floats:  # the curve's inputs for one transaction of n rows
        return np.array([{"per_trx": 1.0, "per_row": n, "per_row_sq": n * n}[t] for t in terms])

    weights = np.zeros(len(sizes))  # each drained size's share of the figure (count × interpolation weight)
    change = np.zeros(len(terms))  # the curve's inputs beyond the drained sizes, from the nearest one
    for count, n in items:
        if at[0] <= n <= at[-1]:
            i = min(int(np.searchsorted(at, n, side="right")) - 1, len(at) - 2)
            w = (n - at[i]) / (at[i + 1] - at[i])
            weights[i] += count * (1 - w)
            weights[i + 1] += count * w
        else:
            end = 0 if n < at[0] else len(at) - 1
            weights[end] += count
            change += count * (curve(n) - curve(at[end]))
    means = np.array([float(s[1]) for s in sizes])
    # a size's mean is as sure as its backlogs, not its drains: the replicas that drained one backlog back to back
    # mostly share the host's state (docs/cost-model.md, "Apply"); a model.json from before counts its drains
    backlogs = np.array([float(s[3] if len(s) > 3 else s[2]) for s in sizes])
    run_var = float(part.run_variance or 0.0)
    value = max(0.0, float(weights @ means + change @ np.array([coef[t] for t in terms])))
    variance = float(np.sum((weights * means) ** 2 * run_var / backlogs)) \
        + float(change @ np.asarray(part.cov) @ change)
    sd = math.sqrt(max(0.0, variance + value ** 2 * run_var))
    return {"value": value, "low": max(0.0, value - Z95 * sd), "high": value + Z95 * sd}


def _pool(runs: list[Observation], table: str) -> tuple[str, ...]:
    """The row images whose CPU fits are pooled on a table: those whose write runs tell rows from transactions
    (separates), where there are two or more of them; else none (each fits alone)."""
    def sized(setting: str) -> bool:
        mine = [o for o in runs if o.setting == setting and writes_of(o) and (o.table or "") == table]
        return separates([o.transactions for o in mine], [o.rows for o in mine])

    pool = tuple(s for s in ROW_IMAGES if sized(s))
    return pool if len(pool) >= 2 else ()


def _fit_of(obs: list[Observation], part: str, reads: list[float] | None = None,
            timed: bool = False, shape: Shape | None = None, pooled: bool = False) -> Fit | None:
    """One part's fit over the observations; `timed`: with a term per second of writing (CPU, fsyncs), or, where
    the runs give a rate shape (rate_shape), each run's transactions weighed by the shape at its rate instead;
    `pooled`: over several settings (ROW_IMAGES), a cost per row each (fit_part's `kinds`)."""
    factors = [shape_factor(shape, rate_of(o)) for o in obs] if shape else None
    fitted = fit_part([measured(o, part) for o in obs], [o.transactions for o in obs], [o.rows for o in obs],
                      [f"{o.setting} {cell_of(o)}" if pooled else cell_of(o) for o in obs], reads,
                      [write_seconds(o) for o in obs] if timed and not shape else None, factors=factors,
                      kinds=[o.setting for o in obs] if pooled else None)
    if fitted is not None and shape:
        return fitted.model_copy(update={"rate_shape": shape})
    return fitted


def reads_each(obs: Observation) -> float:
    """The reads one replica served over the run (the replicas' total over their count: replica_cpu_s is their
    mean)."""
    return obs.replica_reads / max(1, obs.replicas or 1)


def _replica_fit(runs: list[Observation], shape: Shape | None = None,
                 reads_shape: Shape | None = None, pooled: bool = False) -> Fit | None:
    """The replicas' CPU: with a read term where runs whose replicas served reads can price one (each run's reads
    weighed by the read shape at its read rate, where the read-only runs give one), else from the runs whose
    replicas served none (a run with reads would charge its reads to the writes), saying why."""
    replica = [o for o in runs if o.replica_cpu_s is not None]
    readers = [o for o in replica if reads_each(o)]
    if readers:
        reads = [reads_each(o) * (shape_factor(reads_shape, read_rate_of(o)) if reads_shape else 1.0)
                 for o in replica]
        part = _fit_of(replica, "replica_cpu_s", reads, timed=True, shape=shape, pooled=pooled)
        if part is not None and "per_read" in _terms(part):
            if reads_shape:
                part = part.model_copy(update={"read_shape": reads_shape})
            if not any(o.transactions for o in readers):
                part = _read_interval(part, [measured(o, "replica_cpu_s") / w
                                             for o, w in zip(replica, reads, strict=True) if reads_each(o)])
            return part
    part = _fit_of([o for o in replica if not reads_each(o)], "replica_cpu_s", timed=True, shape=shape,
                   pooled=pooled)
    if part is not None:
        return part.model_copy(update={"reads": (
            f"{len(readers)} run(s) whose replicas served reads left out: too few to tell a read's cost from a "
            "write's") if readers else "no run whose replicas served reads: reads not priced"})
    return part


def request_fit(runs: list[Observation], part: str, one_app: bool = False) -> Fit | None:
    """A role's CPU per request (part: app_cpu_s, the app's; load_cpu_s, vegeta's) = w·write requests·s(rate) +
    r·read requests, through the origin and bounded at zero as every fit (fit_part, given no rows apart from the
    requests: the app and vegeta send one statement per request whatever its rows, so no per-row term), over every
    setting's and table's runs that recorded it, each cell its setting's and table's. s is the role's own rate
    shape (rate_shape over these runs): a slow stream costs more per request (over the runs of
    results/readme-assets/model-20261129c, the app 1.60× at 19.9/s what it costs at 394/s, vegeta 2.18×), so w is a
    write's cost at the shape's fastest rate. A read term where runs that read tell it from the writes (its interval
    a t interval where only runs that read alone price it, as the replica's: _read_interval), else those runs are
    left out (their reads would be charged to the writes) and `reads` says so. `one_app`: only the runs of the app
    settings most runs had (a driver or worker class costs its own per request: docs/app.md), the others named as
    left out in `basis`. None without a run that wrote (a plan's requests are its transactions)."""
    ours = [o for o in runs if o.figure(part) is not None and (o.writes or o.reads)]
    basis = "every setting and table"
    if one_app and ours:
        counts: dict[str, int] = {}
        for o in ours:
            counts[o.app_settings or "?/?"] = counts.get(o.app_settings or "?/?", 0) + 1
        app = max(counts, key=lambda k: counts[k])  # the first of the most common: runs come in their folders' order
        left = len(ours) - counts[app]
        ours = [o for o in ours if (o.app_settings or "?/?") == app]
        basis += f"; the app as {app}" + (f", {left} run(s) of other app settings left out" if left else "")
    if not any(o.writes for o in ours):
        return None
    shape = rate_shape(ours, part)

    def fitted(obs: list[Observation], reads: bool) -> Fit | None:
        # its requests as its rows: rows never differ from transactions, so fit_part adds no per-row term
        return fit_part([measured(o, part) for o in obs], [o.writes or 0 for o in obs], [o.writes or 0 for o in obs],
                        [f"{o.setting} {o.table or ''} {cell_of(o)}" for o in obs],
                        reads=[o.reads or 0 for o in obs] if reads else None,
                        factors=[shape_factor(shape, rate_of(o)) for o in obs])

    readers = [o for o in ours if o.reads]
    got = fitted(ours, True) if readers else None
    if got is not None and "per_read" in _terms(got) and not any(o.writes for o in readers):
        got = _read_interval(got, [measured(o, part) / (o.reads or 1) for o in readers])
    if got is None or "per_read" not in _terms(got):
        got = fitted([o for o in ours if not o.reads], False)
        if got is not None:
            got = got.model_copy(update={"reads": (
                f"no data: {len(readers)} run(s) that read left out, too few to tell a read's cost from a "
                "write's") if readers else "no data: no run read"})
    if got is None:
        return None
    return got.model_copy(update={"basis": basis, **({"rate_shape": shape} if shape else {})})


def _read_interval(part: Fit, per_read: list[float]) -> Fit:
    """The read term's interval and variance where only runs that read alone price it: a Student t interval of the
    mean cost per read over those runs (each weighed by the read shape at its rate), around the fitted term. A
    bootstrap over cells cannot give one: the read shape takes its factors from the same few cells, so every
    resample with a read cell gets the same cost per read and every one without gets none ([0–value]: issue 50's
    note; docs/cost-model.md, "Reads"). No run that wrote informs it, so its covariance with the other terms is 0."""
    import numpy as np

    got = mean_error(per_read)
    if got is None:
        return part
    se, half = got
    value = (part.coef or {})["per_read"]
    i = _terms(part).index("per_read")
    cov = np.asarray(part.cov, dtype=float)
    cov[i, :] = cov[:, i] = 0.0
    cov[i, i] = se * se
    return part.model_copy(update={"cov": cov.tolist(), "read_interval": f"t over the {len(per_read)} runs that only "
                                   "read", "ci95": {**(part.ci95 or {}), "per_read": [max(0.0, value - half),
                                                                                      value + half]}})


def rate_of(obs: Observation) -> float:
    """An observation's transactions per second (0 for a run that only read)."""
    return obs.transactions / obs.seconds if obs.seconds and obs.transactions else 0.0


def read_rate_of(obs: Observation) -> float:
    """The reads per second one replica served in an observation."""
    return reads_each(obs) / obs.seconds if obs.seconds else 0.0


def _points(cells: dict[str, list[tuple[float, float]]]) -> list[tuple[float, float, int]]:
    """Each cell's mean rate and mean cost, cells whose rates lie within MODEL_SHAPE_MERGE of each other merged (a
    mean over their runs): (rate, cost, runs), slowest first."""
    means = sorted((sum(r for r, _ in v) / len(v), sum(c for _, c in v) / len(v), len(v)) for v in cells.values())
    out: list[tuple[float, float, int]] = []
    for rate, cost, n in means:
        if out and rate <= out[-1][0] * (1 + MODEL_SHAPE_MERGE):
            r0, c0, n0 = out[-1]
            out[-1] = ((r0 * n0 + rate * n) / (n0 + n), (c0 * n0 + cost * n) / (n0 + n), n0 + n)
        else:
            out.append((rate, cost, n))
    return out


def _shape(points: list[tuple[float, float, int]], source: str) -> Shape | None:
    """The points' costs made non-increasing with the rate (a weighted isotonic regression, each point weighed by its
    runs), as factors of the fastest point's: a core woken between transactions cannot make a faster stream dearer
    per transaction, so a point dearer than a slower one is the noise of a few runs (docs/decisions/cost-model-rate.md,
    "A monotone shape"). None where the fastest point costs nothing."""
    from scipy.optimize import isotonic_regression

    costs = isotonic_regression([cost for _, cost, _ in points], weights=[float(n) for *_, n in points],
                                increasing=False).x
    if costs[-1] <= 0:
        return None
    return Shape(source=source, points=[(round(rate, 2), round(float(cost / costs[-1]), 4))
                                        for (rate, *_), cost in zip(points, costs)])


def rate_shape(runs: list[Observation], part: str) -> Shape | None:
    """How a transaction's CPU (part: master_cpu_s or replica_cpu_s) changes with the rate, where the runs tell it:
    the single-row write runs' CPU per transaction per cell, of the setting and table whose cells cover the most
    rates (at least MODEL_SHAPE_MIN_RATES), made non-increasing with the rate, as a factor of its fastest cell's;
    None where no setting has that many. The shape is the host's, not the setting's (a core woken between
    transactions: docs/decisions/cost-model-rate.md), so every setting's fit weighs its transactions by it and fits
    its own level (the row images one, pooled: ROW_IMAGES)."""
    groups: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for o in runs:
        value = o.figure(part)
        if value is None or not o.transactions or o.rows != o.transactions or reads_each(o) or not o.seconds:
            continue
        groups.setdefault(key(o.setting, o.table or ""), {}).setdefault(cell_of(o), []).append(
            (rate_of(o), value / o.transactions))
    order = {name: i for i, name in enumerate(SETTINGS)}
    best = max(((len(pts := _points(cells)), sum(n for *_, n in pts), -order.get(name.split()[0], 99), name, pts)
                for name, cells in groups.items()), default=None)
    if best is None or best[0] < MODEL_SHAPE_MIN_RATES:
        return None
    return _shape(best[4], best[3])


def read_shape(runs: list[Observation]) -> Shape | None:
    """How a read's CPU on a replica changes with the reads per second it serves: the read-only runs' replica CPU
    per read per cell, every setting's (a read does not depend on the binlog's settings), made non-increasing with
    the read rate as the rate shape is, as a factor of the fastest cell's; None with fewer than
    MODEL_SHAPE_MIN_READ_RATES rates."""
    cells: dict[str, list[tuple[float, float]]] = {}
    for o in runs:
        if o.transactions or not reads_each(o) or o.replica_cpu_s is None or not o.seconds:
            continue
        cells.setdefault(cell_of(o), []).append((read_rate_of(o), o.replica_cpu_s / reads_each(o)))
    points = _points(cells)
    if len(points) < MODEL_SHAPE_MIN_READ_RATES:
        return None
    return _shape(points, "read-only runs")


def shape_factor(shape: Shape | None, rate: float) -> float:
    """The shape's factor at a rate: linear in log rate between its points, its end's value beyond them (the
    domain flags such a rate: outside_domain); 1 without a shape or a rate."""
    import numpy as np

    if not shape or rate <= 0:
        return 1.0
    rates, factors = zip(*shape.points)
    return float(np.interp(math.log(rate), [math.log(r) for r in rates], factors))


def domain_of(runs: list[Observation]) -> Domain | None:
    """The sizes and rates the fit saw: each run's rows per transaction and transactions per second."""
    points = sorted({(float(f"{o.rows / o.transactions:.3g}"), round(o.transactions / o.seconds, 1))
                     for o in runs if o.seconds and o.transactions})
    return Domain(points=points) if points else None


def outside_domain(fitted: FittedSetting, trx: float, rows: float) -> str | None:
    """Why trx transactions/s of rows/trx rows each lie outside the rates the fit saw, or None inside (or where
    the model recorded no domain: one fitted before it was). Below the lowest rate at which the fit saw
    transactions this small or smaller, the rate shape holds its slowest point (a fit without one: a transaction's
    wake-up cost is higher than the model's); above the highest rate, group commit shares more of each commit's
    syncs (docs/decisions/cost-model-rate.md)."""
    points = fitted.domain.points if fitted.domain else None
    if not points or trx <= 0:
        return None
    size, slack = rows / trx, MODEL_DOMAIN_SLACK
    smaller = [rate for n, rate in points if n <= size * (1 + slack)]
    highest = max(rate for _, rate in points)
    if not smaller:
        return (f"transactions of {_g(size)} rows, smaller than any the fit saw ({_g(min(n for n, _ in points))} "
                f"rows): {RATE_DEPENDENT} are extrapolated")
    if trx < min(smaller) * (1 - slack):
        master = fitted.master_cpu_s or Fit()
        if master.rate_shape:
            return (f"{_g(trx)} transactions/s, below the lowest rate at which the fit saw transactions of "
                    f"{_g(size)} rows or fewer ({_g(min(smaller))}/s): the rate shape is extrapolated there, so "
                    f"{RATE_DEPENDENT} are less sure")
        timed = "per_second" in (master.terms or [])
        return (f"{_g(trx)} transactions/s, below the lowest rate at which the fit saw transactions of "
                f"{_g(size)} rows or fewer ({_g(min(smaller))}/s): "
                + (f"the cost per second of writing is extrapolated there, so {RATE_DEPENDENT} are less sure"
                   if timed else f"a transaction's wake-up cost is higher at low rates than the model's, so "
                   f"{RATE_DEPENDENT} are likely low"))
    if trx > highest * (1 + slack):
        return (f"{_g(trx)} transactions/s, above the highest rate the fit saw ({_g(highest)}/s): "
                f"{RATE_DEPENDENT} are extrapolated")
    return None


def _g(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


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


def _terms(part: Fit) -> list[str]:
    """A fit's terms, in its coefficients' order (analysis/costmodel.fit_part writes them with every fit)."""
    assert part.terms is not None
    return part.terms


def _predict_one(part: Fit | None, trx: float, rows: float, reads: float = 0.0,
                 seconds: float = 0.0, squares: float | None = None, rate: float = 0.0,
                 read_rate: float = 0.0) -> dict[str, float] | None:
    """A fitted quantity for trx transactions, rows rows over `seconds` seconds of writing (and reads reads per
    replica), the transactions coming at `rate` per second on the master and the reads at `read_rate` per replica
    (weighed by the fit's rate and read shapes, where it has them), with its 95 % prediction
    interval (normal): the fit's variance there (x·cov·x) plus one run's, value² × the run-to-run relative variance
    (a model fitted before it was kept has none: the fit's alone). The low end is cut at 0, as the coefficients are."""
    import numpy as np

    if part is None or (not part.rows_separated and rows != trx):
        return None  # several rows per transaction, and a fit that cannot price a row: no figure, not a guess
    if squares is None:  # transactions of one size
        squares = rows * rows / trx if trx else 0.0
    inputs = {"per_trx": trx * shape_factor(part.rate_shape, rate), "per_row": rows,
              "per_read": reads * shape_factor(part.read_shape, read_rate), "per_second": seconds,
              "per_row_sq": squares}
    terms, fitted = _terms(part), part.coef or {}
    x = np.array([inputs[t] for t in terms], dtype=float)
    coef = np.array([fitted[t] for t in terms])
    value = float(x @ coef)
    variance = float(x @ np.asarray(part.cov) @ x) + value ** 2 * float(part.run_variance or 0.0)
    sd = float(np.sqrt(max(0.0, variance)))
    return {"value": value, "low": max(0.0, value - Z95 * sd), "high": value + Z95 * sd}


def _fitted(model: CostModel, setting: str, table: str) -> FittedSetting | None:
    """The model's fits of one setting on one table (None: it has none)."""
    return (model.settings or {}).get(key(setting, table))


def _part(fitted: FittedSetting, part: str) -> Fit | None:
    """One of a setting's fits by its name (EXPECTED's: binlog_bytes, master_cpu_s, replica_cpu_s)."""
    got: Fit | None = {"binlog_bytes": fitted.binlog_bytes, "master_cpu_s": fitted.master_cpu_s,
                       "replica_cpu_s": fitted.replica_cpu_s}[part]
    return got


# a figure with its 95 % interval: {"value", "low", "high"}; a figure measured, not priced, has "value" alone
Band = dict[str, float]


@dataclass(frozen=True)
class ParallelApply:
    """A replica's apply with `threads` applier threads, as bounds (parallel_apply's)."""

    threads: int
    at_once: float  # min(threads, the replica's cores), at least 1
    best: Band  # ρ / at_once: independent transactions
    worst: Band  # ρ: conflicting ones, or one transaction
    onset_best: Band | None
    onset_worst: Band | None
    lag: str


@dataclass(frozen=True)
class SemiSyncWait:
    """One wait point's commit wait at a round trip (semi_sync's): in round trips, in seconds, and the commits in
    flight that sustain the rate."""

    rtts: Band
    latency_s: Band
    in_flight: Band
    overlap: bool


@dataclass(frozen=True)
class RoleCapacity:
    """One role's part of capacity(): its cores, the cores it needs at the asked rate, the rate it sustains and
    what bounds it; a replica's SQL thread beside its cores."""

    cores: float
    cores_needed: Band | None
    no_data: str | None = None  # why there is no figure
    utilisation: Band | None = None
    cores_max_transactions_per_s: Band | None = None
    max_transactions_per_s: Band | None = None
    bound: str | None = None  # "cores" or "apply"
    apply: str | None = None  # a replica without an apply fit: why its SQL thread is not judged
    apply_at_once: float | None = None
    apply_utilisation: Band | None = None
    apply_max_transactions_per_s: Band | None = None
    apply_max_conflicting: Band | None = None


@dataclass(frozen=True)
class Capacity:
    """What hosts of the given cores per role sustain of a mix, and which role saturates first (capacity's)."""

    assumption: str
    transactions_per_s: float
    threads: int
    roles: dict[str, RoleCapacity]
    not_judged: list[str]
    saturates_first: str | None
    sustained_transactions_per_s: Band | None
    near: list[str]
    tables: list[str] = field(default_factory=list)  # workload_capacity's: the tables the roles serve
    outside_domain: str | None = None  # the sustained rate against the rates the fit saw


@dataclass(frozen=True)
class Plan:
    """A capacity plan (predict's): every figure per second, each a Band or None where the model has no data."""

    setting: str
    table: str
    transactions_per_s: float
    rows_per_s: float
    binlog_mb_per_s: Band | None
    binlog_gb_per_day: Band | None
    bytes_per_s_to_each_replica: Band | None
    master_cpu_cores: Band | None
    replica_cpu_cores: Band | None
    replica_cores: float
    replica_cpu_utilisation: Band | None
    replica_apply_rho: Band | None
    lag: str | None
    lag_growth_s_per_s: Band | None
    onset_transactions_per_s: Band | None
    fsyncs_per_s: Band | None
    outside_domain: str | None
    parallel: ParallelApply | None
    semi_sync: dict[str, SemiSyncWait] | None
    app_cpu_cores: Band | None
    load_cpu_cores: Band | None
    cores: dict[str, float]
    capacity: Capacity | None = None
    # a profile's plan (analysis/profile.own_binlog): where its binlog figures come from
    binlog_basis: str | None = None
    binlog_note: str | None = None
    # a profile's plan priced with the workload's own runs (analysis/ownfit.own_cpu): where its CPU comes from
    cpu_basis: str | None = None
    cpu_note: str | None = None
    # a profile's plan on a table the model does not know (analysis/shapes): the CPU a table of another shape gets
    shape_cpu_cores: dict[str, Band] | None = None


def predict(model: CostModel, mix: list[tuple[str, int, float]], setting: str = "ROW-FULL",
            replica_cores: float = MODEL_REPLICA_CORES, table: str = "bench_idx", threads: int = 1,
            rtt_s: float | None = None, master_rate: float | None = None,
            cores: dict[str, float] | None = None) -> Plan:
    """Every figure of a capacity plan for the mix under the setting on the table; each {value, low, high} or None
    where the model has no data. With `threads` applier threads, their bounds (parallel_apply); with a round trip
    rtt_s, semi-sync's commit wait per wait point (semi_sync). The CPU's rate shape reads the master's transactions
    per second: `master_rate` where the mix is one table's part of a larger workload, else the mix's own. With
    `cores` (parse_cores' roles; a replica's there is its replica_cores), what hosts of those cores per role sustain
    and which role saturates first (capacity)."""
    if setting not in SETTINGS:
        raise MixError(f"unknown setting {setting!r}; settings: {', '.join(SETTINGS)}")
    fitted = _fitted(model, setting, table)
    if fitted is None:
        raise MixError(f"the model has no data for {setting} on {table}: run `./run.sh model fit` over runs of "
                       "that setting and table")
    trx = sum(rate for _, _, rate in mix)
    rows = sum(rate * n for _, n, rate in mix)

    binlog = binlog_bytes(fitted, trx, rows)
    rho = apply_time(fitted.apply_s, [(rate, n) for _, n, rate in mix])  # one SQL thread: seconds per second
    writing = 1.0 if trx > 0 else 0.0  # each second of the plan has writes: its per-second costs, once
    rate = master_rate or trx
    replica_cpu = _predict_one(fitted.replica_cpu_s, trx, rows, seconds=writing, rate=rate)
    cores = dict(cores or {})
    replica_cores = cores.get("replica", replica_cores)
    master_cpu = _predict_one(fitted.master_cpu_s, trx, rows, seconds=writing, rate=rate)
    plan = Plan(
        setting=setting, table=table, transactions_per_s=trx, rows_per_s=rows,
        binlog_mb_per_s=_scaled(binlog, 1e-6), binlog_gb_per_day=_scaled(binlog, SECONDS_PER_DAY / 1e9),
        bytes_per_s_to_each_replica=binlog,
        master_cpu_cores=master_cpu,
        replica_cpu_cores=replica_cpu, replica_cores=replica_cores,
        replica_cpu_utilisation=_scaled(replica_cpu, 1 / replica_cores),
        **apply_figures(rho, trx),
        fsyncs_per_s=_predict_one(fitted.master_fsyncs, trx, rows, seconds=writing),
        outside_domain=outside_domain(fitted, trx, rows),
        parallel=parallel_apply(rho, trx, threads, replica_cores),
        semi_sync=None if rtt_s is None else semi_sync(trx, rtt_s),
        # each transaction one request of this suite's app, sent by its load generator (the mix's items are its
        # endpoints; a profile's transactions are priced as such requests: CAPACITY_ASSUMPTION)
        app_cpu_cores=per_request(model.app_cpu_s, trx, rate),
        load_cpu_cores=per_request(model.load_cpu_s, trx, rate),
        cores=cores,
    )
    held = capacity(needs_of(plan), rho, trx, cores, threads, no_data_of(model)) if cores else None
    most = held.sustained_transactions_per_s if held is not None else None
    if held is not None and most and trx > 0:
        # the rate it sustains, as a mix of the same proportions, against the rates the fit saw
        held = replace(held, outside_domain=outside_domain(fitted, most["value"], rows * most["value"] / trx))
    return replace(plan, capacity=held)


class ApplyFigures(TypedDict):
    """A plan's apply fields (apply_figures'), as Plan's."""

    replica_apply_rho: Band | None
    lag: str | None
    lag_growth_s_per_s: Band | None
    onset_transactions_per_s: Band | None


def apply_figures(rho: Band | None, trx: float) -> ApplyFigures:
    """A plan's apply fields from one SQL thread's utilisation ρ at trx transactions/s: ρ, the lag (bounded, growing
    or at the edge, by ρ's interval), its growth and the rate at which a replica starts falling behind."""
    return ApplyFigures(
        replica_apply_rho=rho,
        lag=None if rho is None else (
            "bounded (ρ < 1 with its interval)" if rho["high"] < 1 else
            f"grows by {lag_growth(rho['value']):.2f} s per s" if rho["low"] > 1 else
            "at the edge (the interval spans 1)"),
        lag_growth_s_per_s=None if rho is None or rho["value"] <= 1 else
        {"value": lag_growth(rho["value"]), "low": lag_growth(max(rho["low"], 1.0)),
         "high": lag_growth(rho["high"])},
        onset_transactions_per_s=_reciprocal(rho, trx))


def per_request(part: Fit | None, requests: float, rate: float) -> dict[str, float] | None:
    """A role's CPU cores for `requests` write requests per second (request_fit's write term, weighed by its rate
    shape at `rate`, the master's transactions/s; a mix has no reads), with its 95 % prediction interval; None
    without a fit."""
    # rows = requests: the fit has no per-row term (a request is one statement whatever its rows), so the row count
    # is never read, and _predict_one's "no per-row price" refusal must not apply
    return _predict_one(part, requests, requests, rate=rate)


def needs_of(plan: Plan) -> dict[str, Band | None]:
    """The CPU cores each role needs for a plan's rate (predict's figures), by ROLES' name."""
    return {"master": plan.master_cpu_cores, "replica": plan.replica_cpu_cores, "app": plan.app_cpu_cores,
            "load": plan.load_cpu_cores}


def no_data_of(model: CostModel) -> dict[str, str]:
    """Why a role has no figure, where the model says: the app's and the load generator's fits are absent from a
    model fitted before they were, or fitted over runs that never recorded them."""
    return {role: f"no data: the model has no fit of {what} CPU per request (`./run.sh model fit` fits one from "
                  "runs that recorded it)"
            for role, what, part in (("app", "the app's", model.app_cpu_s), ("load", "the load generator's",
                                                                             model.load_cpu_s)) if part is None}


def capacity(needs: dict[str, Band | None], rho: Band | None, trx: float,
             cores: dict[str, float], threads: int = 1, no_data: dict[str, str] | None = None) -> Capacity:
    """What hosts of `cores` per role sustain of a mix asked at trx transactions/s, and which role saturates first
    (docs/cost-model.md, "Capacity per role"). Each role given: the cores it needs at the asked rate (`needs`,
    {value, low, high}), their share of its N cores, and the rate it sustains, trx × N / cores needed (the mix's
    proportions kept, its cost per transaction as at the asked rate). A replica also has its SQL thread: apply is
    serial, one core whatever N, unless applier threads are asked (parallel_apply: min(threads, N) transactions at
    once if they are independent, one if they conflict), so its rate is the lower of its cores' and its apply's
    (trx × at once / ρ); a replica without an apply fit is judged on its cores alone and says so. The plan sustains
    the lowest role's rate (`sustained_transactions_per_s`, its interval that role's) and names it
    (`saturates_first`), and the roles whose interval reaches into it (`near`: which saturates first is not sure
    between them). A role not in `cores` is not judged (`not_judged`); one without a figure says why (`no_data`,
    `no_data` given by the model)."""
    roles: dict[str, RoleCapacity] = {}
    for role in ROLES:
        if role not in cores:
            continue
        n, need = cores[role], needs.get(role)
        got = RoleCapacity(cores=n, cores_needed=need)
        if need is None:
            got = replace(got, no_data=(no_data or {}).get(role) or (
                "no data: the model has no figure of its CPU for this mix (or no fit that separates rows from "
                "transactions)"))
        else:
            most = _reciprocal(need, trx * n)
            got = replace(got, utilisation=_scaled(need, 1 / n), cores_max_transactions_per_s=most,
                          max_transactions_per_s=most, bound="cores")
        if role == "replica":
            got = _apply_bound(got, parallel_apply(rho, trx, threads, n))
        roles[role] = got
    judged = {r: most for r, g in roles.items() if (most := g.max_transactions_per_s)}
    first = min(judged, key=lambda r: judged[r]["value"]) if judged else None
    return Capacity(assumption=CAPACITY_ASSUMPTION, transactions_per_s=trx, threads=threads, roles=roles,
                    not_judged=[r for r in ROLES if r not in cores], saturates_first=first,
                    sustained_transactions_per_s=judged[first] if first else None,
                    near=[r for r, m in judged.items() if first and r != first and m["low"] <= judged[first]["high"]])


def _apply_bound(got: RoleCapacity, parallel: ParallelApply | None) -> RoleCapacity:
    """A replica's SQL thread beside its cores (capacity): its utilisation (ρ over the transactions applied at
    once), the rate at which it falls behind (the onset), and the lower of that and the cores' rate as the
    replica's, `bound` saying which ("apply" or "cores")."""
    if parallel is None:
        return replace(got, apply="not judged: the model has no apply fit for this mix (drains: docs/cost-model.md, "
                                  "\"Apply\")")
    onset_ = parallel.onset_best
    got = replace(got, apply_at_once=parallel.at_once, apply_utilisation=parallel.best,
                  apply_max_transactions_per_s=onset_,
                  apply_max_conflicting=parallel.onset_worst if parallel.threads > 1 else None)
    cores_max = got.cores_max_transactions_per_s
    if onset_ is not None and (cores_max is None or onset_["value"] < cores_max["value"]):
        got = replace(got, max_transactions_per_s=onset_, bound="apply")
    return got


def workload_capacity(plans: list[Plan], cores: dict[str, float], threads: int = 1,
                      no_data: dict[str, str] | None = None) -> Capacity:
    """capacity() of several plans on the same hosts (a profile's tables under one setting, each priced on its own
    fit): each role's cores needed and the replica's ρ summed over them (their intervals' ends summed: conservative,
    as if their errors moved together), at the plans' transactions/s summed."""
    def summed(figures: list[Band | None]) -> Band | None:
        if any(f is None for f in figures):
            return None
        return {k: sum(f[k] for f in figures if f is not None) for k in ("value", "low", "high")}

    needs = {role: summed([needs_of(p)[role] for p in plans]) for role in ROLES}
    rho = summed([p.replica_apply_rho for p in plans])
    return replace(capacity(needs, rho, sum(p.transactions_per_s for p in plans), cores, threads, no_data),
                   tables=[p.table for p in plans])


def parse_cores(text: str) -> dict[str, float]:
    """'master=4,replica=2,app=2,load=1' -> {role: cores} (ROLES'); MixError naming what is wrong: an item that is
    not ROLE=N, a role not in ROLES, a role given twice, cores that are not a number above 0."""
    items = [part.strip() for part in (text or "").split(",") if part.strip()]
    if not items:
        raise MixError(f"no role given; e.g. --cores {CORES_EXAMPLE}")
    out: dict[str, float] = {}
    for item in items:
        role, equals, value = (part.strip() for part in item.partition("="))
        if not equals or not role:
            raise MixError(f"cannot read {item!r}: write ROLE=N, ROLE one of {', '.join(ROLES)}, e.g. {CORES_EXAMPLE}")
        if role not in ROLES:
            raise MixError(f"unknown role {role!r}; roles: {', '.join(ROLES)}")
        if role in out:
            raise MixError(f"{role} given twice")
        try:
            n = float(value)
        except ValueError:
            n = math.nan
        if not math.isfinite(n) or n <= 0:
            raise MixError(f"{item!r}: {role}'s cores must be a number above 0")
        out[role] = n
    return out


def _scaled(value: dict[str, float] | None, factor: float) -> dict[str, float] | None:
    return None if value is None else {k: v * factor for k, v in value.items()}


def parallel_apply(rho: Band | None, trx: float, threads: int, replica_cores: float) -> ParallelApply | None:
    """A replica's apply utilisation with `threads` applier threads, as bounds and not a measurement: the fit times
    one SQL thread (docs/cost-model.md, "Predict"; study parallel-apply measures threads, docs/studies.md). Best:
    independent transactions, min(threads, the replica's cores) applied at once (a thread beyond the cores waits for
    one) → ρ / that; worst: conflicting transactions, or one transaction, which no thread splits → ρ. Each end keeps
    ρ's interval; the rate at which the replica starts falling behind is the mix's transactions/s over each end.
    (Optimistic mode retries a conflicting transaction, which can cost more than ρ: the model does not price it.)"""
    if rho is None:
        return None
    at_once = max(1.0, min(float(threads), replica_cores))
    best = {k: v / at_once for k, v in rho.items()}
    return ParallelApply(
        threads=threads, at_once=at_once, best=best, worst=dict(rho),
        onset_best=_reciprocal(best, trx), onset_worst=_reciprocal(rho, trx),
        lag="bounded however the transactions conflict" if rho["high"] < 1 else
        "grows even if every transaction applies in parallel" if best["low"] > 1 else
        "bounded only if enough transactions apply in parallel (the model cannot tell how many conflict)")


def semi_sync(trx: float, rtt_s: float) -> dict[str, SemiSyncWait]:
    """Semi-sync's cost per commit at a round trip of rtt_s to the replica whose ACK the master waits for, per wait
    point, from the round trips measured by hand (core/config.SEMI_SYNC_*, docs/decisions/semi-sync-by-hand.md):
    the added commit latency {value, low, high} in seconds, its round trips, and the commits in flight that sustain
    trx transactions/s (Little's law: rate × wait), the concurrency the application needs. AFTER_COMMIT (MariaDB's
    default) waits one round trip; AFTER_SYNC one when commits do not overlap, up to two when they do (rate × RTT of
    SEMI_SYNC_OVERLAP_IN_FLIGHT or more)."""
    low, high = SEMI_SYNC_LONE_RTTS
    overlap = trx * rtt_s * low >= SEMI_SYNC_OVERLAP_IN_FLIGHT
    rtts = {"AFTER_COMMIT": {"value": low, "low": low, "high": high},
            "AFTER_SYNC": {"value": SEMI_SYNC_AFTER_SYNC_OVERLAP_RTTS if overlap else low, "low": low,
                           "high": SEMI_SYNC_AFTER_SYNC_OVERLAP_RTTS}}
    out = {}
    for point, r in rtts.items():
        wait = {k: v * rtt_s for k, v in r.items()}
        out[point] = SemiSyncWait(rtts=r, latency_s=wait, in_flight={k: v * trx for k, v in wait.items()},
                                  overlap=overlap)
    return out


def apply_seconds(model: CostModel, setting: str, table: str, rows: float) -> dict[str, float] | None:
    """One SQL thread's apply time for one transaction of `rows` rows under the setting on the table (apply_time:
    between the drained sizes, or the apply fit's per_trx + per_row·rows + per_row_sq·rows² beyond them), with its
    interval; None without an apply fit that prices rows. The replica's lag grows by at least this while it applies
    it: no parallel thread splits a transaction."""
    fitted = _fitted(model, setting, table)
    return apply_time(fitted.apply_s if fitted is not None else None, [(1.0, float(rows))])


def binlog_bytes(fitted: FittedSetting, trx: float, rows: float) -> dict[str, float] | None:
    """The binlog's bytes for trx transactions and rows rows, the interval widened by GROUP_COMMIT_ID_BYTES per
    transaction either way (whether a commit groups is the concurrency's doing, not the mix's)."""
    got = _predict_one(fitted.binlog_bytes, trx, rows)
    if got is None:
        return None
    return {"value": got["value"], "low": max(0.0, got["low"] - GROUP_COMMIT_ID_BYTES * trx),
            "high": got["high"] + GROUP_COMMIT_ID_BYTES * trx}


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


def onset(model: CostModel, rows_per_trx: float, setting: str = "ROW-FULL",
          table: str = "bench_idx") -> dict[str, float] | None:
    """The rate of rows_per_trx-row transactions at which one replica (one SQL thread, on its own) starts falling
    behind: 1 / its apply seconds per transaction, with the interval; None without an apply fit that prices rows."""
    return _reciprocal(apply_seconds(model, setting, table, rows_per_trx))


def expected(model: CostModel, obs: Observation) -> dict[str, dict[str, float] | None]:
    """What the model says a measured run should have cost, from its own transactions and rows (and the reads its
    replicas served, where the replica fit prices a read): binlog bytes and master and replica CPU seconds (net of
    idle), each with its interval; None where the model cannot say (not_predicted says why)."""
    fitted = _fitted(model, obs.setting, obs.table or "")  # an observation() of the run
    if fitted is None:
        return {part: None for part in EXPECTED}
    seconds, rate = write_seconds(obs), rate_of(obs)
    out = {part: _predict_one(_part(fitted, part), obs.transactions, obs.rows, seconds=seconds, rate=rate)
           for part in EXPECTED}
    out["binlog_bytes"] = binlog_bytes(fitted, obs.transactions, obs.rows)
    replica = fitted.replica_cpu_s
    if reads_each(obs):
        out["master_cpu_s"] = None  # AMID_READS
        out["replica_cpu_s"] = _predict_one(replica, obs.transactions, obs.rows, reads_each(obs), seconds,
                                            rate=rate, read_rate=read_rate_of(obs)) \
            if replica is not None and "per_read" in _terms(replica) else None
    return out


def not_predicted(model: CostModel, obs: Observation) -> dict[str, str]:
    """Why expected() has no figure, per part it has none for."""
    fitted = _fitted(model, obs.setting, obs.table or "")
    if fitted is None:
        return {part: f"the model has no fit of {key(obs.setting, obs.table or '')}" for part in EXPECTED}
    got = expected(model, obs)
    out = {}
    for part in EXPECTED:
        if got[part] is not None:
            continue
        fit_ = _part(fitted, part)
        if part == "master_cpu_s" and reads_each(obs):
            out[part] = AMID_READS
        elif part == "replica_cpu_s" and reads_each(obs):
            out[part] = (f"the replicas also served {obs.replica_reads:,} reads, and "
                         + ((fit_.reads if fit_ is not None else None) or "the fit has no read term"))
        elif fit_ is None:
            out[part] = "too few runs to fit"
        else:
            out[part] = "several rows per transaction, and a fit whose runs never told rows from transactions"
    return out
