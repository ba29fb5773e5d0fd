"""A workload's own cost per transaction, from its own live windows (`apply-capacity --live`: the master and the
replicas that followed it, their CPU over the window net of idle, and the held replicas' drains): what
`model predict --profile P --own-runs apply.json[,…]` prices the workload's CPU and apply with, in place of the
model's fit on this suite's accounts table (a foreign table is priced as bench_idx, which on sysbench's shapes
came to 1.05–2.15× the measured CPU: core/config.FOREIGN_CPU_RATIOS, analysis/shapes, docs/profile.md).

A fit on one rate: the CPU per transaction measured at the windows' rate is held at any other rate (cores =
rate × CPU-ms per transaction), its interval the windows' whole minutes' (each minute a repeat: Student's t over
them, livewindow.cpu_of). A replica's CPU is a following replica's (one applying as the client wrote, the way a
replica runs), never a drain's (a catch-up applies in batches, cheaper per transaction); its apply capacity, one
SQL thread's, is the drains' measured rate."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..core.config import OWN_RATE_NEAR
from ..core.results import ApplyRecord, LiveCpu
from ..core.stats import mean_error
from . import costmodel
from .costmodel import Band, Plan


class OwnRunsError(ValueError):
    """An --own-runs file that holds no live window's figures; the message says which and why."""


@dataclass(frozen=True)
class OwnRole:
    """One role's CPU per transaction over the windows: all of them pooled (CPU ÷ transactions), the 95 %
    interval of their whole minutes' mean (None under two minutes), net of idle or gross, and which nodes."""

    ms_per_trx: float
    low: float | None
    high: float | None
    net: bool
    nodes: tuple[str, ...]
    minutes: int
    # every window's write-back included: its nodes' dirty pages forced out after it (a workload file's windows;
    # a client of the DBA's may go on writing after its window, so its windows have none)
    writeback: bool = False


@dataclass(frozen=True)
class OwnFit:
    """The workload's own runs: the files, the setting they ran under, their windows' mean rate, the master's and a
    following replica's CPU per transaction, and the drains' apply rates (trx/s, one per replica drained)."""

    files: tuple[str, ...]
    setting: str
    rate: float
    master: OwnRole | None
    replica: OwnRole | None
    apply_trx_per_s: tuple[float, ...]


def _role(figures: list[tuple[str, LiveCpu]]) -> OwnRole | None:
    usable = [(n, c) for n, c in figures if c.cpu_ms_per_trx is not None and c.transactions]
    if not usable:
        return None
    trx = sum(c.transactions or 0 for _, c in usable)
    ms = sum((c.cpu_ms_per_trx or 0.0) * (c.transactions or 0) for _, c in usable) / trx
    minutes = [float(m) for _, c in usable for m in c.minutes_ms_per_trx or []]
    error = mean_error(minutes)
    mean = sum(minutes) / len(minutes) if minutes else ms
    low, high = (None, None) if error is None else (min(ms, mean - error[1]), max(ms, mean + error[1]))
    # the flush after each window, per its transactions: added to the window's figure and its interval alike (one
    # flush a window: no spread of its own)
    flushes = [(c.writeback.cpu_ms_per_write_net, c.transactions or 0) for _, c in usable
               if c.writeback is not None and c.writeback.cpu_ms_per_write_net is not None]
    back = sum(f * t for f, t in flushes) / trx if len(flushes) == len(usable) else 0.0
    return OwnRole(ms_per_trx=ms + back, low=None if low is None else low + back,
                   high=None if high is None else high + back, net=all(c.net for _, c in usable),
                   nodes=tuple(sorted({n for n, _ in usable})), minutes=len(minutes),
                   writeback=len(flushes) == len(usable))


def fit_of(records: list[tuple[Path, ApplyRecord]]) -> OwnFit:
    """The workload's own fit from its live windows' apply.json files; OwnRunsError where a file is not a finished
    live window with its CPU figures, or where the files ran under different settings."""
    settings: set[str] = set()
    master: list[tuple[str, LiveCpu]] = []
    following: list[tuple[str, LiveCpu]] = []
    applied: list[float] = []
    trx, seconds = 0, 0.0
    for path, a in records:
        live = a.live
        if a.method != "live" or live is None:
            raise OwnRunsError(f"{path}: not a live window's apply.json (`./run.sh apply-capacity --live WINDOW` "
                               "writes one)")
        if a.status != "ok" or not live.cpu:
            raise OwnRunsError(f"{path}: the window has no CPU figures (status {a.status}; windows measured before "
                               "2026-12-03 did not record them)")
        setting = costmodel.setting_of(a.knobs_changed)
        if setting is None:
            changed = None if a.knobs_changed is None else a.knobs_changed.given()
            raise OwnRunsError(f"{path}: its settings ({changed}) are none of the model's")
        settings.add(setting)
        master += [(n, c) for n, c in live.cpu.items() if c.role == "master"]
        following += [(n, c) for n, c in live.cpu.items() if c.role == "following"]
        applied += [float(e.apply_rate_trx_per_s) for e in (a.replicas or {}).values()
                    if e is not None and e.apply_rate_trx_per_s]
        trx += live.transactions or 0
        seconds += float(live.window_s or 0.0)
    if len(settings) > 1:
        raise OwnRunsError(f"the files ran under different settings ({', '.join(sorted(settings))}): give the "
                           "windows of one setting")
    return OwnFit(files=tuple(str(p) for p, _ in records), setting=settings.pop(),
                  rate=trx / seconds if seconds else 0.0, master=_role(master), replica=_role(following),
                  apply_trx_per_s=tuple(applied))


def _cores(role: OwnRole | None, trx: float) -> Band | None:
    """A role's cores at trx transactions/s; its interval the minutes' (none under two minutes: the value at both
    ends, as capacity reads a band)."""
    if role is None:
        return None
    low, high = (role.ms_per_trx, role.ms_per_trx) if role.low is None or role.high is None else (role.low, role.high)
    return {"value": trx * role.ms_per_trx / 1000, "low": trx * low / 1000, "high": trx * high / 1000}


def _note(fit: OwnFit, trx: float) -> str:
    roles = [f"{what} {r.ms_per_trx:.3f} CPU-ms per transaction ({', '.join(r.nodes)}, "
             f"{'net of idle' if r.net else 'gross: no idle measured'}"
             f"{', with the write-back its windows left, forced out after each' if r.writeback else ''})"
             for what, r in (("master", fit.master), ("following replica", fit.replica)) if r is not None]
    missing = [f"{what}'s from the model" for what, r in (("master", fit.master), ("replica", fit.replica))
               if r is None]
    applied = (f"; one SQL thread applied {min(fit.apply_trx_per_s):,.0f}–{max(fit.apply_trx_per_s):,.0f} trx/s "
               "in the drains" if fit.apply_trx_per_s else "")
    # each role says when its figure has the write-back in; else none has
    back = "" if any(r.writeback for r in (fit.master, fit.replica) if r is not None) else \
        " (the windows' CPU, without the write-back they left)"
    return (f"from your own live window(s) at {fit.rate:,.1f} trx/s under {fit.setting}: "
            + "; ".join(roles + missing) + back + applied
            + "; " + _held(fit.rate, trx))


def _held(fitted: float, trx: float) -> str:
    """What holding the cost per transaction means at the plan's rate: nothing beyond the windows' own noise near
    their rate; away from it, a step the interval does not hold (docs/profile.md, "Your own runs": sysbench's
    cost per transaction moved 3–17 % between 150 and 300/s)."""
    if fitted and abs(trx / fitted - 1) <= OWN_RATE_NEAR:
        return "the plan's rate is the windows' own"
    return (f"the cost per transaction held at {trx / fitted:.2f}× the windows' rate (a fit on one rate: its interval "
            "is the windows' noise, not the step to another rate)" if fitted else "the windows' rate unknown")


def own_cpu(plan: Plan, fit: OwnFit, no_data: dict[str, str] | None = None) -> Plan:
    """The plan with its CPU (master, replica) and its apply (ρ, the onset, lag) from the workload's own runs,
    where they ran under the plan's setting; `cpu_basis` and `cpu_note` say which. Under another setting the
    model's price stays, and the note says why."""
    if fit.setting != plan.setting:
        return replace(plan, cpu_basis="model",
                       cpu_note=f"priced by the model: your own runs ran under {fit.setting}, not {plan.setting}")
    trx = plan.transactions_per_s
    master = _cores(fit.master, trx) or plan.master_cpu_cores
    replica = _cores(fit.replica, trx) or plan.replica_cpu_cores
    own = replace(plan, master_cpu_cores=master, replica_cpu_cores=replica,
                  replica_cpu_utilisation=None if replica is None else
                  {k: v / plan.replica_cores for k, v in replica.items()},
                  cpu_basis="own runs", cpu_note=_note(fit, trx))
    drained = sorted(fit.apply_trx_per_s)
    if drained:  # one SQL thread's utilisation, the drains' range as its bracket
        rho = {"value": trx / drained[len(drained) // 2], "low": trx / drained[-1], "high": trx / drained[0]}
        own = replace(own, **costmodel.apply_figures(rho, trx),
                      parallel=None if plan.parallel is None else
                      costmodel.parallel_apply(rho, trx, plan.parallel.threads, plan.replica_cores))
    if plan.capacity is not None:
        held = costmodel.capacity(costmodel.needs_of(own), own.replica_apply_rho, trx, plan.cores,
                                  plan.capacity.threads, no_data)
        own = replace(own, capacity=held)
    return own
