"""model validate's comparisons (experiments/modelcheck runs the cases, docs/cost-model.md "Validate"): a held-out
run's binlog bytes and master and replica CPU (net of idle) as the cost model predicts them along two paths, each
beside the measured figure with its error and whether the measurement lies in the prediction's 95 % interval:

- from the run's counts: its own transactions and rows (and reads served) through costmodel.expected;
- from its binlog profile: the master's binlog over the run's attack window profiled and priced as
  `model predict --profile` prices a profile (profile.workload_mixes, costmodel.predict under the run's setting):
  each plan figure is per second over the profile's span, so times the span it is the total over the window, the
  unit the run's figures are in.

Then the coverage (coverage()): per path how many predicted figures their intervals hold, and per kind of figure
the worst error against its bound (core/config MODEL_BINLOG_BOUND_PCT, MODEL_CPU_BOUND_PCT, MODEL_ONSET_BOUND_PCT),
and the lag onset's."""

from __future__ import annotations

from typing import Any

from ..core.config import (
    MODEL_BINLOG_BOUND_PCT,
    MODEL_COVERAGE_GOAL,
    MODEL_CPU_BOUND_PCT,
    MODEL_ONSET_BOUND_PCT,
)
from ..core.results import Checked, Interval, Validation, ValidationCase, filled, validation_of
from . import costmodel
from .profile import NoWorkload, Profile, model_tables, price, workload_mixes

PATHS = (("counts", "from the run's counts"), ("profile", "from its binlog profile"))
# each kind of figure: the parts it holds and the bound its worst error is judged against
KINDS = (("binlog", ("binlog_bytes",), MODEL_BINLOG_BOUND_PCT),
         ("CPU", ("master_cpu_s", "replica_cpu_s"), MODEL_CPU_BOUND_PCT))
FIGURES = {"binlog_bytes": "binlog bytes", "master_cpu_s": "master CPU", "replica_cpu_s": "replica CPU"}
PLAN = {"binlog_bytes": "bytes_per_s_to_each_replica",  # the binlog's bytes per second (every replica gets them)
        "master_cpu_s": "master_cpu_cores", "replica_cpu_s": "replica_cpu_cores"}  # CPU seconds per second
GOAL = MODEL_COVERAGE_GOAL


def error_pct(predicted: float, measured: float | None) -> float | None:
    return round(100 * (predicted - measured) / measured, 1) if measured else None


def checked(predicted: dict[str, float] | None, measured: float | None) -> dict[str, Any]:
    """One figure: predicted (with its interval) against measured, the error and whether it is inside."""
    return {"measured": measured, "predicted": predicted,
            "error_pct": None if predicted is None else error_pct(predicted["value"], measured),
            "inside": None if predicted is None or measured is None else
            predicted["low"] <= measured <= predicted["high"]}


def from_counts(model: dict[str, Any], obs: dict[str, Any]) -> dict[str, Any]:
    """A run (costmodel.observation's) predicted from its own transactions and rows: each figure checked, why any
    is not predicted, and whether its rate lay outside the fit's domain."""
    predicted = costmodel.expected(model, obs)
    fitted = model["settings"].get(costmodel.key(obs["setting"], obs["table"] or ""))
    out: dict[str, Any] = {"transactions": obs["transactions"], "rows": obs["rows"],
                           "replica_reads": obs["replica_reads"], "not_predicted": costmodel.not_predicted(model, obs),
                           "outside_domain": costmodel.outside_domain(
                               fitted, obs["transactions"] / obs["seconds"], obs["rows"] / obs["seconds"])
                           if fitted and obs["seconds"] else None}
    for part in costmodel.EXPECTED:  # the replicas' CPU: with their reads where a read is priced
        out[part] = checked(predicted[part], obs[part])
    return out


def from_profile(model: dict[str, Any], profile: Profile, obs: dict[str, Any]) -> dict[str, Any]:
    """The same run predicted from its binlog's profile under its setting, as `model predict --profile` prices it:
    each plan's figure per second times the profile's span (the total over the window), summed over the model
    tables the profiled tables map to; beside the run's measured figures (obs: costmodel.observation's)."""
    w = profile.workload
    out: dict[str, Any] = {"span_s": profile.span_s, "transactions": w.transactions, "rows": w.rows,
                           "heartbeat_transactions": profile.heartbeat.transactions if profile.heartbeat else 0,
                           "bytes_as_written": w.bytes, "notes": [], "not_predicted": {}, "outside_domain": None}
    try:
        mixes, mapped, out["notes"] = workload_mixes(profile, model_tables(model))
        sheets = price(model, profile, mixes, mapped, obs["setting"], alone=True)
    except NoWorkload as exc:
        sheets, out["not_predicted"] = [], {part: str(exc) for part in costmodel.EXPECTED}
    for part in costmodel.EXPECTED:
        total, why = _total(model, sheets, part, profile.span_s)
        if part == "replica_cpu_s" and obs.get("replica_reads"):
            total, why = None, (f"the replicas also served {obs['replica_reads']:,} reads, which no binlog shows "
                                "(a profile prices the writes alone)")
        if why and part not in out["not_predicted"]:
            out["not_predicted"][part] = why
        out[part] = checked(total, obs[part])
    out["outside_domain"] = next((s["plan"]["outside_domain"] for s in sheets
                                  if s.get("plan") and s["plan"].get("outside_domain")), None)
    return out


def _total(model: dict[str, Any], sheets: list[dict[str, Any]], part: str,
           span: float) -> tuple[dict[str, float] | None, str | None]:
    """A figure's total over the span, summed over the sheets (value and the interval's ends alike), or None and
    why (a sheet without a plan, or a plan without the figure: costmodel.not_predicted's reason)."""
    if not sheets:
        return None, None
    total = {"value": 0.0, "low": 0.0, "high": 0.0}
    for sheet in sheets:
        plan = sheet.get("plan")
        if plan is None:
            return None, f"{sheet['setting']} on {sheet['table']}: {sheet['error']}"
        figure = plan[PLAN[part]]
        if figure is None:
            as_run = {"setting": plan["setting"], "table": plan["table"], "transactions": plan["transactions_per_s"]
                      * span, "rows": plan["rows_per_s"] * span, "replica_reads": 0}
            return None, costmodel.not_predicted(model, as_run).get(part, "the model cannot say")
        for end in total:
            total[end] += figure[end] * span
    return total, None


# --- the coverage ----------------------------------------------------------------------------------------------

def case_label(c: ValidationCase) -> str:
    """'write-mix @ 200/s ROW-MINIMAL' (a validate.json of before settings: without one)."""
    return f"{c.scenario} @ {c.rate}/s" + (f" {c.setting}" if c.setting else "")


def figures(c: ValidationCase, path: str) -> dict[str, Checked]:
    """A usable case's checked figures along one path ({} where it has none: not profiled, or failed)."""
    if not c.usable:
        return {}
    source = c if path == "counts" else c.profile
    if source is None or (path == "profile" and source.error):
        return {}
    return {part: v for part in costmodel.EXPECTED if (v := getattr(source, part)) is not None}


def coverage(doc: dict[str, Any] | Validation) -> dict[str, Any]:
    """Per path: the figures predicted and measured, how many lie inside their 95 % interval, those not predicted,
    the usable cases without any (not profiled, or the profile failed), and per kind the worst error (the largest
    in size) with its case, figure and bound; the lag onset's errors (drained and live) against their bound; and
    the bounds and the coverage goal themselves."""
    data = validation_of(doc)
    paths = {}
    for path, _ in PATHS:
        shown = [(case_label(c), part, v) for c in data.cases or [] for part, v in figures(c, path).items()
                 if v.predicted is not None and v.measured is not None]
        missing = sum(1 for c in data.cases or [] for v in figures(c, path).values() if v.predicted is None)
        worst = {}
        for kind, parts, bound in KINDS:
            errors = [(abs(v.error_pct), v.error_pct, case, part) for case, part, v in shown
                      if part in parts and v.error_pct is not None]
            if errors:
                _, err, case, part = max(errors)
                worst[kind] = {"error_pct": err, "case": case, "figure": FIGURES[part], "bound_pct": bound,
                               "within": abs(err) <= bound}
        paths[path] = {"figures": len(shown), "inside": sum(1 for *_, v in shown if v.inside),
                       "not_predicted": missing, "worst": worst,
                       "cases_without": sum(1 for c in data.cases or [] if c.usable and not figures(c, path))}
    return {"paths": paths, "onset": _onset(data), "goal": GOAL,
            "bounds_pct": {**{kind: bound for kind, _, bound in KINDS}, "onset": MODEL_ONSET_BOUND_PCT}}


def _onset(data: Validation) -> dict[str, Any] | None:
    """The lag onset's error, drained and live, against its bound, and whether each lies in the interval."""
    o = data.onset
    if not filled(o) or o.predicted is None:
        return None
    out = {}
    for name, measured, err in (("drained", o.drain.measured if o.drain else None, o.drain.error_pct if o.drain
                                 else None), ("live", o.measured, o.error_pct)):
        if measured is not None and err is not None:
            out[name] = {"error_pct": err, "within": abs(err) <= MODEL_ONSET_BOUND_PCT,
                         "inside": _inside(o.predicted, measured)}
    return out or None


def _inside(p: Interval, measured: float) -> bool | None:
    return None if p.low is None or p.high is None else p.low <= measured <= p.high
