"""The cost model as text: the coefficients per setting with their intervals and the fit's quality, a capacity
plan for a mix with every figure's 95 % interval, model validate's predicted-beside-measured table and lag onset;
report.md's section (the coefficients, the validation's coverage against the bounds) and report-model.md (the whole
fit, the validation case by case), from results/model/."""

from __future__ import annotations

import math
from collections.abc import Callable

from ..analysis.costmodel import HELD_OUT, Z95, Band, Capacity, ParallelApply, Plan, RoleCapacity, SemiSyncWait
from ..analysis.profile import Largest
from ..analysis.validation import PATHS, case_label, coverage, drained, drains_of, repeats_of
from ..core.results import (
    Checked,
    CostModel,
    Coverage,
    CpuSigns,
    Fit,
    FittedSetting,
    Interval,
    Onset,
    Point,
    ProfileCheck,
    Shape,
    Validation,
    ValidationCase,
    Worst,
    read_model,
    read_validation,
)
from .assets import Writer

COEFFICIENTS = "Per transaction and per row, by setting"  # the model page's table of the fitted costs
COEFFICIENTS_ANCHOR = "per-transaction-and-per-row-by-setting"
MODEL_PAGE = "report-model.md"  # beside report.md: the whole fit, which report.md's table summarises
CHECKED = "Checked on runs it was not fitted on"
CHECKED_ANCHOR = "checked-on-runs-it-was-not-fitted-on"
# the figures a held-out case checks: (its name, as not_predicted keys it; the figure, of a case's counts or of its
# binlog's profile; label)
Figure = Callable[[ValidationCase | ProfileCheck], Checked | None]
VALIDATED: tuple[tuple[str, Figure, str], ...] = (
    ("binlog_bytes", lambda c: c.binlog_bytes, "binlog bytes"),
    ("master_cpu_s", lambda c: c.master_cpu_s, "master CPU s"),
    ("replica_cpu_s", lambda c: c.replica_cpu_s, "replica CPU s"))
PATH_LABEL = dict(PATHS)
Part = tuple[Callable[[FittedSetting], Fit | None], str, str, float]  # (the fit, label, unit, scale)
TABLED: tuple[Part, ...] = (  # the fits report.md's table shows (coefficient_table)
    (lambda f: f.master_cpu_s, "master CPU", "ms", 1e3), (lambda f: f.replica_cpu_s, "replica CPU", "ms", 1e3),
    (lambda f: f.binlog_bytes, "binlog", "B", 1.0), (lambda f: f.apply_s, "one replica's apply alone", "ms", 1e3))
PARTS: tuple[Part, ...] = (*TABLED, (lambda f: f.master_fsyncs, "master fsyncs (InnoDB + binlog)", "fsyncs", 1.0))


def _coef(part: Fit, term: str, scale: float) -> str:
    assert part.ci95 is not None and part.coef is not None  # analysis/costmodel writes both with every fit
    low, high = part.ci95[term]
    return f"{part.coef[term] * scale:.4g} [{low * scale:.4g}–{high * scale:.4g}]"


def render_fit(model: CostModel) -> str:
    """The fit as text (model.json's record, or a fit's in memory as its record)."""
    assert model.settings is not None  # analysis/costmodel.fit writes it
    reading = sum(1 for o in model.observations or [] if not o.transactions)
    lines = [f"Cost model from {len(model.observations or []) - reading} write runs"
             + (f", {reading} read runs" if reading else "") + f" and {len(model.drains or [])} apply drains "
             "(95 % intervals in brackets):"]
    for name, fitted in model.settings.items():
        lines.append(f"{name} ({fitted.runs} runs, {fitted.drains} drains):")
        for fit_of, label, unit, scale in PARTS:
            part = fit_of(fitted)
            if part is None:  # no fit: too few runs (analysis/costmodel writes null, never {})
                lines.append(f"  {label}: no data")
                continue
            text = f"{_coef(part, 'per_trx', scale)} {unit} per transaction" + _at_fastest(part.rate_shape)
            if part.rows_separated:
                text += f" + {_coef(part, 'per_row', scale)} {unit} per row"
            else:
                text += " (every run changed one row per transaction: rows not separated)"
            if "per_row_sq" in (part.terms or []):
                text += f" + {_coef(part, 'per_row_sq', scale)} {unit} per row per row of its transaction"
            if "per_second" in (part.terms or []):
                text += f" + {_coef(part, 'per_second', scale)} {unit} per second of writing"
            if "per_read" in (part.terms or []):
                text += f" + {_coef(part, 'per_read', scale)} {unit} per read served" + _at_fastest(part.read_shape)
            assert part.relative_residuals is not None  # analysis/costmodel.fit_part writes it with every fit
            lines.append(f"  {label}: {text}; R² {part.r2:.3f}, n {part.n}, residuals within "
                         f"±{100 * max(map(abs, part.relative_residuals)):.0f} %" + _noise(part))
            if part.pooled:
                lines.append(f"    pooled: one fit over {', '.join(part.pooled.settings)} (n {part.pooled.n}, "
                             f"{part.pooled.cells} cells, R² {part.pooled.r2:.3f}) shares every term but each "
                             "image's cost per row, and one run's spread: a row image changes a row event, not a "
                             "commit (docs/cost-model.md, \"Row images\")")
            if part.reads:
                lines.append(f"    reads: {part.reads}")
            if part.sizes:
                lines.append(f"    drained sizes (mean {unit} per transaction; a size between two is priced on the "
                             "line between them, beyond them from the nearest by the curve: docs/cost-model.md, "
                             "\"Apply\"): "
                             + ", ".join(f"{_num(n)} row{'s' if n != 1 else ''} {t * scale:.4g} ({k:g} "
                                         f"drain{'s' if k != 1 else ''}" + _backlogs(k, b) + ")"
                                         for n, t, k, *b in part.sizes))
            for name, shape in (("rate shape", part.rate_shape), ("read shape", part.read_shape)):
                if shape:
                    lines.append(f"    {name} (× the cost at the fastest rate, from {shape.source}): "
                                 + ", ".join(f"{f:.2f} at {_num(r)}/s" for r, f in shape.points))
        if fitted.fsyncs_per_commit is not None:
            lines.append(f"  fsyncs per commit (master, InnoDB + binlog), median over the runs: "
                         f"{fitted.fsyncs_per_commit:.2f}")
        if fitted.domain and fitted.domain.points:
            lines.append(f"  domain (rows per transaction at transactions/s): {_domain(fitted.domain.points)}")
    # a model fitted before the app's and the load generator's fits has neither key (a later fit writes both, null
    # where no run recorded them): its fit prints as it did, so the committed report pages rebuild unchanged
    lines += [_request_fit(label, part) for label, part, key in (
        ("The app's CPU", model.app_cpu_s, "app_cpu_s"),
        ("The load generator's (vegeta's) CPU", model.load_cpu_s, "load_cpu_s")) if key in model.model_fields_set]
    return "\n".join(lines)


def _request_fit(label: str, part: Fit | None) -> str:
    """The app's or the load generator's fit (costmodel.request_fit): per write request and per read request, or
    why there is no figure."""
    if part is None:
        return (f"{label} per request: no data (a model fitted before it was, or no usable run recorded it; "
                "`./run.sh model fit` fits it)")
    assert part.relative_residuals is not None  # analysis/costmodel.fit_part writes it with every fit
    reads = (f" + {_coef(part, 'per_read', 1e3)} ms per read request" if "per_read" in (part.terms or []) else
             f"; reads: {part.reads}")
    shape = part.rate_shape
    return (f"{label} per request ({part.basis}): {_coef(part, 'per_trx', 1e3)} ms per write request"
            f"{_at_fastest(shape)}{reads}; R² {part.r2:.3f}, n {part.n}, residuals within "
            f"±{100 * max(map(abs, part.relative_residuals)):.0f} %" + _noise(part)
            + ("" if not shape else f"\n    rate shape (× the cost at the fastest rate, from {shape.source}): "
               + ", ".join(f"{f:.2f} at {_num(r)}/s" for r, f in shape.points)))


def coefficient_table(model: CostModel) -> list[str]:
    """The fit's main terms as one table, a setting per row: what report.md shows (the page has the rest)."""
    assert model.settings is not None  # analysis/costmodel.fit writes it
    head = ["setting", "runs", "drains"] + [f"{label} {unit}/{per}" for _, label, unit, _ in TABLED
                                             for per in ("trx", "row")]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, fitted in model.settings.items():
        cells = [name, str(fitted.runs), str(fitted.drains)]
        for fit_of, _, _, scale in TABLED:
            part = fit_of(fitted)
            if part is None:
                cells += ["no data", "–"]
                continue
            cells += [_coef(part, "per_trx", scale),
                      _coef(part, "per_row", scale) if part.rows_separated else "not separated"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _at_fastest(shape: Shape | None) -> str:
    """' at 400/s': a shaped cost is the cost at its shape's fastest rate (the shape's line gives the others)."""
    return f" at {_num(shape.points[-1][0])}/s" if shape else ""


def _noise(part: Fit) -> str:
    """How the intervals were made and the run-to-run spread every prediction's interval includes; nothing for a
    model fitted before they were kept."""
    if part.interval_method is None:
        return ""
    spread = {"repeats": f"{part.run_variance_dof} degrees of freedom of repeats",
              "residuals": "from the residuals: no cell repeated"}.get(part.run_variance_from or "", "unknown")
    method = part.interval_method + (f" (the read term's: {part.read_interval})" if part.read_interval else "")
    return (f"; intervals: {method}; one run ±{100 * Z95 * (part.run_variance or 0) ** 0.5:.0f} % "
            f"({spread})")


def _domain(points: list[Point]) -> str:
    """Each transaction size's rates, lowest to highest."""
    rates: dict[float, list[float]] = {}
    for size, rate in points:
        rates.setdefault(size, []).append(rate)
    return ", ".join(f"{size:g} at {_num(min(r))}" + (f"–{_num(max(r))}/s" if _num(max(r)) != _num(min(r)) else "/s")
                     for size, r in sorted(rates.items()))


def _num(v: float) -> str:
    """Three significant digits, thousands separated, never in e-notation (2,140,000 not 2.14e+06)."""
    if v == float("inf"):
        return "∞"
    return f"{float(f'{v:.3g}'):,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def _figure(value: Band | None) -> str:
    if value is None:
        return "no data (or no fit that separates rows from transactions: add write-bulk runs)"
    if value.get("low") is None:
        return _num(value["value"])
    return f"{_num(value['value'])} [{_num(value['low'])}–{_num(value['high'])}]"


def _shape_line(bands: dict[str, Band]) -> str:
    """The CPU a table of another shape than the model's gets (analysis/shapes.corrected)."""
    return ("CPU for a table of another shape (the model's price ÷ its mean ratio to the measured, with the shapes' "
            "95 % prediction interval): " + ", ".join(f"{role} {_figure(band)} cores" for role, band in bands.items()))


def render_plan(plan: Plan, replicas: int | None = None) -> str:
    """costmodel.predict's plan as text; with `replicas`, the bytes out of the master to that many. A profile's plan
    says where its binlog figures come from (analysis/profile.own_binlog's binlog_note)."""
    each = plan.bytes_per_s_to_each_replica
    return "\n".join([
        f"Capacity plan under {plan.setting} on {plan.table}: {plan.transactions_per_s:,.0f} transactions/s, "
        f"{plan.rows_per_s:,.0f} rows/s (95 % intervals in brackets)",
        f"Binlog: {_figure(plan.binlog_mb_per_s)} MB/s, {_figure(plan.binlog_gb_per_day)} GB/day; to each "
        f"replica {_figure(plan.bytes_per_s_to_each_replica)} B/s"
        + (f", {plan.binlog_note}" if plan.binlog_note else ""),  # a profile's: measured or estimated
        f"Master CPU: {_figure(plan.master_cpu_cores)} cores",
        f"Replica CPU: {_figure(plan.replica_cpu_cores)} cores, {_figure(plan.replica_cpu_utilisation)} of "
        f"its {plan.replica_cores:g} core(s)",
        *([f"CPU and apply {plan.cpu_note}"] if plan.cpu_note else []),  # --own-runs: measured, not the model's
        *([_shape_line(plan.shape_cpu_cores)] if plan.shape_cpu_cores else []),  # a table the model does not know
        f"Replica apply utilisation ρ (one SQL thread): {_figure(plan.replica_apply_rho)}; lag "
        f"{plan.lag or 'unknown (no apply data)'}"
        + (f" ({_figure(plan.lag_growth_s_per_s)} s per s)" if plan.lag_growth_s_per_s else ""),
        f"A replica starts falling behind at {_figure(plan.onset_transactions_per_s)} transactions/s of this mix"
        if plan.onset_transactions_per_s else
        f"The rate at which a replica starts falling behind: {_figure(None)}",
        *_parallel(plan.parallel),
        f"Fsyncs on the master: {_figure(plan.fsyncs_per_s)} per second",
        *([f"To {replicas} replica(s): {_figure(_times(each, replicas))} B/s out of the master (each replica's "
           "stream, once per replica)"] if replicas and each else []),
        *_semi_sync(plan.semi_sync, plan.transactions_per_s),
        *render_capacity(plan.capacity),  # none without --cores
        *([f"Outside the model's domain: {plan.outside_domain}"] if plan.outside_domain else []),
    ])


ROLE_LABEL = {"master": "master (mariadbd)", "replica": "each replica (mariadbd)", "app": "app (gunicorn workers)",
              "load": "load (vegeta)"}


def render_capacity(c: Capacity | None) -> list[str]:
    """--cores: per role given, the cores it needs at the asked rate, their share of its cores and the rate it
    sustains; the rate the plan sustains and the role that saturates first; the roles not judged; the assumption
    (costmodel.capacity). Nothing without --cores."""
    if not c:
        return []
    trx, roles = c.transactions_per_s, c.roles
    given = ",".join(f"{role}={role_.cores:g}" for role, role_ in roles.items())
    over = f" over the workload's tables ({', '.join(c.tables)})" if c.tables else ""
    lines = [f"Capacity per role{over} at {_num(trx)} transactions/s asked (--cores {given}):"]
    for role, got in roles.items():
        lines.append(f"  {ROLE_LABEL[role]}: " + _role_line(role, got, c.threads or 1))
    for role in c.not_judged:
        lines.append(f"  {ROLE_LABEL[role]}: not judged (not in --cores)")
    first, sustained, threads = c.saturates_first, c.sustained_transactions_per_s, c.threads or 1
    if first is None or sustained is None:
        lines.append("Sustained rate: not judged (no role given has a figure)")
    else:
        why = "" if roles[first].bound != "apply" else " (its SQL thread)" if threads <= 1 else \
            f" (its {threads} applier threads, if its transactions are independent)"
        near = ("; within the interval: " + ", ".join(c.near) + " (which saturates first is not sure)"
                if c.near else "")
        short = (f"; below the {_num(trx)} asked: the mix does not fit these cores" if sustained["value"] < trx
                 else "")
        lines.append(f"Sustained: {_figure(sustained)} transactions/s of this mix, the {first} saturating "
                     f"first{why}{near}{short}"
                     + ("; the roles not judged may saturate sooner" if c.not_judged else ""))
        if c.outside_domain:
            lines.append(f"The sustained rate lies outside the model's domain: {c.outside_domain}")
    lines.append(f"Assumed: {c.assumption}")
    return lines


def _role_line(role: str, got: RoleCapacity, threads: int) -> str:
    """One role's cores needed, their share of its cores and the rate it sustains (costmodel.capacity's); a
    replica's SQL thread beside its cores."""
    if got.cores_needed is None:
        text = got.no_data or ""
    else:
        text = f"needs {_figure(got.cores_needed)} cores, {_figure(got.utilisation)} of its {got.cores:g}"
    if role == "replica" and got.apply:  # no apply fit: the replica judged on its cores alone
        text += f"; its SQL thread {got.apply}"
    elif role == "replica":
        if got.cores_max_transactions_per_s:
            text += f" ({_figure(got.cores_max_transactions_per_s)} transactions/s on them)"
        thread = ("its SQL thread (serial apply: one core whatever its cores)" if threads <= 1 else
                  f"its {threads} applier threads ({got.apply_at_once or 1:g} transaction(s) at once if "
                  f"independent: min({threads}, its cores))")
        text += f"; {thread} busy {_figure(got.apply_utilisation)}"
        if got.apply_max_transactions_per_s:
            text += f", keeping up with {_figure(got.apply_max_transactions_per_s)} transactions/s"
        if got.apply_max_conflicting:
            text += f" ({_figure(got.apply_max_conflicting)} if they conflict)"
    most = got.max_transactions_per_s
    if most:
        bound = (" (bound by its SQL thread, not its cores)" if threads <= 1 else
                 " (bound by its applier threads, not its cores)") if got.bound == "apply" else ""
        return f"{text}; sustains {_figure(most)} transactions/s{bound}"
    if got.cores_needed is not None:
        return f"{text}; not limiting at any rate the model can tell (it needs no CPU the fit prices)"
    return text


def _times(value: Band, factor: float) -> Band:
    return {k: v * factor for k, v in value.items()}


def _parallel(p: ParallelApply | None) -> list[str]:
    """--parallel N's bounds (costmodel.parallel_apply); nothing for one thread: the plan's own ρ."""
    if not p or p.threads <= 1:
        return []
    n, at_once = p.threads, p.at_once
    head = (f"ρ with {n} applier threads, a bound, not a measurement (the model times one SQL thread; study "
            "parallel-apply measures threads):")
    if at_once <= 1:
        return [f"{head} one thread's, {_figure(p.worst)}: min({n}, the replica's cores) = 1 transaction applies "
                f"at once (give the replica's cores with --cores replica=N); lag {p.lag}"]
    return [f"{head} from {_figure(p.best)} (independent transactions, min({n}, the replica's cores) = "
            f"{at_once:g} at once) to {_figure(p.worst)} (conflicting ones, or one transaction: no thread splits "
            f"it); lag {p.lag}",
            f"With {n} applier threads a replica starts falling behind between {_figure(p.onset_worst)} "
            f"(conflicting) and {_figure(p.onset_best)} (independent) transactions/s of this mix"]


def _semi_sync(s: dict[str, SemiSyncWait] | None, trx: float) -> list[str]:
    """--link RTT's semi-sync wait per commit per wait point and the commits in flight it takes
    (costmodel.semi_sync)."""
    if not s:
        return []
    rtt = s["AFTER_COMMIT"].latency_s["value"] / s["AFTER_COMMIT"].rtts["value"]
    lines = [f"Semi-sync at a {_num(rtt * 1e3)} ms round trip to the replica that acknowledges (round trips per "
             f"commit as measured by hand, docs/decisions/semi-sync-by-hand.md; in flight: {_num(trx)} "
             "transactions/s × the wait, Little's law, the commits the application must have open at once):"]
    for point, basis in (("AFTER_COMMIT", "MariaDB's default: one round trip, measured 1.00–1.09"),
                         ("AFTER_SYNC", "up to two round trips once commits overlap, as they do at this rate"
                          if s["AFTER_SYNC"].overlap else
                          "one round trip while commits do not overlap, up to two when they do")):
        got = s[point]
        lines.append(f"  {point} ({basis}): +{_figure(_times(got.latency_s, 1e3))} ms per commit, "
                     f"{_figure(got.in_flight)} commits in flight")
    return lines

def render_largest(big: Largest | None) -> list[str]:
    """model predict --profile: the profile's largest transaction on a sheet's table (analysis/profile.largest_on),
    one SQL thread's apply time for it from the apply fit."""
    if not big:
        return []
    took = big.apply_s
    head = f"The largest transaction ({big.gtid}, {big.rows:,} rows)"
    if took is None:
        return [f"{head}: no apply time (the model has no apply fit that prices rows)"]
    seconds = took["value"] >= 1
    shown = took if seconds else _times(took, 1e3)
    unit = "s" if seconds else "ms"
    return [f"{head} takes one SQL thread {_figure(shown)} {unit} to apply (the apply fit at its size): the "
            "replica's lag grows by at least that while it applies it; parallel threads do not split it"]


def render_validation(data: Validation) -> str:
    """model validate's table: predicted beside measured per held-out case, from the run's counts and from its
    binlog profile, then the coverage against the bounds and the lag onset (validate.json's record, or a
    validation's in memory as its record)."""
    lines = ["| case | runs | predicted | transactions | rows | "
             + " | ".join(f"{label}: predicted / measured (error, runs inside their interval)"
                          for _, _, label in VALIDATED) + " |",
             "|---|---|---|---|---|" + "---|" * len(VALIDATED),
             ]
    shown = [(c, case_label(c)) for c in data.cases or []]
    if data.control is not None:  # modelcheck writes a control case, or none
        shown.append((data.control, f"{case_label(data.control)} (control: a fitted cell)"))
    for c, label in shown:
        runs = [r for r in repeats_of(c) if r.usable]
        used = f"{len(runs)} of {len(repeats_of(c))}"
        if not c.usable:
            lines.append(f"| {label} | {used} | not usable (failed, above the knee or not verified) |"
                         + " |" * (len(VALIDATED) + 2))
            continue
        lines.append(f"| {label} | {used} | {PATH_LABEL['counts']} | {_mean(c.transactions, len(runs))} | "
                     f"{_mean(c.rows, len(runs))} | "
                     + " | ".join(_cell(c, c, name, figure) for name, figure, _ in VALIDATED) + " |")
        p = c.profile
        if p is None:
            continue
        if p.error:
            lines.append(f"| {label} | {used} | {PATH_LABEL['profile']} | no profile: {p.error} |"
                         + " |" * (len(VALIDATED) + 1))
            continue
        profiled = sum(1 for r in runs if r.profile is not None and not r.profile.error)
        lines.append(f"| {label} | {profiled} of {len(repeats_of(c))} | {PATH_LABEL['profile']} | "
                     f"{_mean(p.transactions, profiled)} | {_mean(p.rows, profiled)} | "
                     + " | ".join(_cell(c, p, name, figure) for name, figure, _ in VALIDATED) + " |")
    if any(c.repeats for c in data.cases or []):
        lines += ["", "Each figure is the mean per run over the case's usable runs (the runs' own figures for "
                  "inside k/N); the error is the mean's."]
    if data.recordings:
        rounds = data.rounds or len(data.recordings)
        lines += ["", f"The runs were recorded in {rounds:g} round{'s' if rounds != 1 else ''} by `model validate "
                  "--record` with no model yet (campaign model-check interleaves them with the fit's studies, so the "
                  "fit and these runs sample the same hours) and priced after the fit (`--recorded`)"
                  + (f"; left out, interrupted: {', '.join(data.left_out)}." if data.left_out else ".")]
    outside = [f"- {case_label(c)}: {c.outside_domain}" for c in data.cases or [] if c.usable and c.outside_domain]
    if outside:
        lines += ["", "Outside the fit's domain:", *outside]
    covered = render_coverage(coverage(data))
    if covered:
        lines += ["", *covered]
    if data.onset is not None:  # modelcheck writes the onset's keys, or none
        lines += ["", render_onset(data.onset)]
    return "\n".join(lines)


def _cell(c: ValidationCase, source: ValidationCase | ProfileCheck, part: str, figure: Figure) -> str:
    """One figure of one path over the case's runs: predicted / measured, each the mean per run, (the mean's error,
    inside k/N: how many runs' own figures lie in their own interval), or why it is not predicted. A case of a
    validate.json from before repeats is its one run (its figure's own inside). `part`: the figure's name."""
    v = figure(source)
    if v is None:
        return "no prediction"
    n = v.runs or 1
    p = v.predicted
    why = (source.not_predicted or {}).get(part)
    if p is None and why:
        return f"not predicted: {why} (measured {_measured(v.measured, n)})"
    if p is None and part == "replica_cpu_s" and c.replica_reads:  # a validate.json from before the reasons
        return (f"not predicted: the replicas also served {_mean(c.replica_reads, n)} reads "
                f"(measured {_measured(v.measured, n)})")
    below = _below(v)
    if v.below_resolution and not v.runs:  # every run's (or a case of one run's) figure below its resolution
        return f"below its resolution: {below}"
    if p is None or v.measured is None:
        return "no prediction" if p is None else f"{_num(_value(p) / n)} / not measured"
    inside = v.inside_runs if v.runs else int(bool(v.inside))
    err = "no error of a zero" if v.error_pct is None else f"{v.error_pct:+.1f} %"  # error_pct: measured 0
    return (f"{_num(_value(p) / n)} / {_num(v.measured / n)} ({err}, inside {inside}/{n}"
            + (f"; {v.runs_below_resolution} more below its resolution, left out: {below}" if below else "") + ")")


def _value(interval: Interval) -> float:
    """A prediction's value: analysis/costmodel writes it with its interval."""
    assert interval.value is not None
    return interval.value


def _below(v: Checked) -> str:
    """A figure left out below its resolution, in words: 'net 0.0 s < 0.21 s' ('' for one that was not)."""
    b = v.below_resolution
    return "" if not b else f"net {_num(b['net'])} s < {_num(b['resolution'])} s"


def _mean(total: float | None, n: float) -> str:
    """A case's count (its runs' sum) per run, as a whole number."""
    return "-" if total is None or not n else f"{round(total / n):,}"


def _measured(v: float | None, n: float = 1) -> str:
    return "nothing" if v is None else _num(v / n)


def render_coverage(summary: Coverage) -> list[str]:
    """The done-when's figures: per path how many held-out figures lie inside their 95 % interval, the worst error
    per kind against its bound, and the lag onset's."""
    # analysis/validation.coverage gives every one of them
    assert summary.bounds_pct is not None and summary.goal is not None and summary.paths is not None
    bounds, goal = summary.bounds_pct, summary.goal
    lines = [f"Against the bounds (binlog ±{bounds['binlog']:g} %, CPU ±{bounds['CPU']:g} %, lag onset "
             f"±{bounds['onset']:g} %; the 95 % intervals should cover at least {100 * goal:g} % of the "
             "figures):"]
    repeats = summary.repeats or 1  # a summary from before repeats: one run per case
    for path, label in PATHS:
        got = summary.paths.get(path)
        if not got or not got.figures:
            continue
        share = (got.inside or 0) / got.figures
        text = (f"- {label}: {got.inside} of {got.figures} run figures inside their intervals "
                f"({100 * share:.0f} %{'' if share >= goal else ', below the goal'})")
        if got.not_predicted:
            text += f", {got.not_predicted} more not predicted"
        if got.below_resolution:
            text += f", {got.below_resolution} more below their resolution (left out)"
        if got.cases_without:
            text += f", {got.cases_without} usable case(s) without this path"
        worst = [f"{kind} {_worst_text(w)}" for kind, w in (got.worst or {}).items()]
        judged = f"worst error of a case's mean over {repeats} repeats" if repeats > 1 else "worst error"
        lines.append(text + (f"; {judged}: " + ", ".join(worst) if worst else "") + _signs_text(got.cpu_signs))
    control = summary.control
    if control:
        measured = ", ".join(f"{figure} ×{r:.2f}" for figure, r in (control.ratio or {})["counts"].items())
        text = (f"- control {control.case} (a cell the model was fitted on, run in every round): measured "
                f"{measured} of its prediction from the counts, "
                + ("the fit's residual there and the runs' noise (recorded in the fit's hours)"
                   if control.interleaved else
                   "mostly the host's drift since the fit (the rest the fit's residual there and the runs' noise)"))
        scaled = [f"{label} {_worst_text(w)}" for path, label in PATHS if (w := (control.scaled_worst or {}).get(path))]
        if scaled:
            text += ("; the held-out CPU predictions scaled by the control's measured/predicted on the same path, "
                     "worst error " + ", ".join(scaled) + " (beside the bounds, which judge the errors as measured)")
        lines.append(text)
    onset = summary.onset
    if onset:
        lines.append("- lag onset: " + ", ".join(
            f"{name} {o.error_pct:+.1f} % ({'within' if o.within else 'outside'} ±{bounds['onset']:g} %, "
            f"{'inside' if o.inside else 'outside'} its interval)"
            for name, o in (("drained", onset.drained), ("live", onset.live)) if o is not None))
    return lines if len(lines) > 1 else []


def _worst_text(w: Worst) -> str:
    """'-2.0 % (mixed @ 200/s ROW-FULL, binlog bytes; within ±5 %)'."""
    return (f"{w.error_pct:+.1f} % ({w.case}, {w.figure}; {'within' if w.within else 'outside'} "
            f"±{w.bound_pct:g} %)")


def _signs_text(signs: CpuSigns | None) -> str:
    """The CPU errors' signs over the cases' means and what the sign test says of them (analysis/validation)."""
    if not signs:
        return ""
    assert signs.below is not None and signs.above is not None  # analysis/validation._signs gives both
    n = signs.below + signs.above
    side, count = ("low", signs.below) if signs.below >= signs.above else ("high", signs.above)
    return (f"; CPU predicted {side} in {count} of {n} case means (sign test p = {signs.p:.2g}: "
            + ("a bias)" if signs.biased else "no bias shown)"))


def render_onset(o: Onset) -> str:
    p = o.predicted
    if p is None:
        return (f"Lag onset ({o.rows}-row transactions): no prediction (the model has no apply fit that prices "
                "rows: fit over apply-capacity drains of several row counts, e.g. study cost-model)")
    # analysis/costmodel.onset's interval has both ends (inf: open); experiments/modelcheck.py writes the runs
    assert p.high is not None and o.runs is not None
    lines = [f"Lag onset, {o.rows}-row transactions (a size the fit had no drain of), one replica applying "
             f"alone: predicted {p.value:,.1f} [{p.low:,.1f}–{_rate(p.high)}] transactions/s"
             + ("" if math.isfinite(p.high) else " (the apply fit's interval reaches 0 s a transaction: no upper "
                "bound)")]
    drains = drains_of(o)
    if drains:
        d, (_, error) = drains[0], drained(o)
        rates = "; ".join(", ".join(f"{r:,.1f}" for r in x.apply_rate_trx_per_s or []) or "none" for x in drains)
        times = f"{len(drains)} times, " if len(drains) > 1 else ""
        lines.append(f"- drained alone (a backlog of {d.writes:,} written at {d.fill_rate}/s, {times}each replica "
                     f"in turn): {rates} transactions/s"
                     + (f"; predicted {error:+.1f} % off the median" if error is not None else ""))
    lines += ["- live, the other replicas stopped:", "",
              "| load | rate | master trx/s | success | lag growth s/s | fell behind | applied trx/s | "
              f"cores left to {o.replica or 'the replica'} |", "|---|---|---|---|---|---|---|---|"]
    for r in o.runs:
        growth = "-" if r.lag_growth_s_per_s is None else f"{r.lag_growth_s_per_s:+.3f}"
        tps = "-" if r.master_transactions_per_s is None else f"{r.master_transactions_per_s:,.1f}"
        applied = "-" if r.applied_per_s is None else f"{r.applied_per_s:,.1f}"
        success = "-" if r.success is None else f"{100 * r.success:.1f} %"
        room = "-" if r.replica_room_cores is None else f"{r.replica_room_cores:.2f}"
        lines.append(f"| {r.load:g}× | {r.rate}/s | {tps} | {success} | {growth} | "
                     f"{'yes' if r.fell_behind else 'no'} | {applied} | {room} |")
    lines.append("")
    if o.measured is None:
        lines.append(f"Live onset: not reached ({o.live_note or 'no run fell behind'})")
    else:
        lines.append(f"Live onset: {o.measured:,.1f} transactions/s; predicted {o.error_pct:+.1f} % off")
    return "\n".join(lines)


def _rate(v: float) -> str:
    """A rate to a tenth, or ∞ (an interval's open end: a cost whose interval reaches 0)."""
    return f"{v:,.1f}" if math.isfinite(v) else "∞"


def model_section(writer: Writer) -> list[str]:
    """report.md's cost model: the coefficients fitted from model/model.json and the newest validation beside them
    (both kept in the report's assets, so a fresh clone rebuilds the section from them); nothing where no model was
    fitted."""
    raw = writer.raw / "model"
    source = raw if (raw / "model.json").exists() else writer.root / "model"
    path = source / "model.json"
    if not path.exists():
        return []
    validations = sorted(source.glob(f"{HELD_OUT}*/validate.json"))
    kept = writer.folder(source)
    writer.copy(path, kept / "model.json")
    if validations:
        (kept / validations[-1].parent.name).mkdir(exist_ok=True)
        writer.copy(validations[-1], kept / validations[-1].parent.name / "validate.json")
    model = read_model(source)
    validation = read_validation(validations[-1].parent) if validations else None
    # the case-by-case validation is on the model's page, report.md keeps its coverage against the bounds: a page a
    # DBA reads (issue 73)
    page = writer.base / MODEL_PAGE
    page.write_text("\n".join(["# replbench: the cost model's whole fit", "",
                               "Every coefficient of the fit behind report.md's cost model, with its interval, the "
                               "fit's quality, the rate and read shapes and each setting's domain, as "
                               "`./run.sh model fit` prints them; then its check on runs it was not fitted on. Back "
                               "to [report.md](report.md).", "",
                               f"## {COEFFICIENTS}", "",
                               "Per transaction and per row, 95 % intervals in brackets; CPU per transaction at the "
                               "fastest rate fitted.", "", *coefficient_table(model), "",
                               "A setting's level comes from the occasions its runs ran on (the host's speed that "
                               "hour): compare two settings' terms here only as report.md's cost sheet does, within "
                               "one study that ran both, interleaved ([docs/cost-model.md](docs/cost-model.md#fit), "
                               "the STATEMENT and ROW FULL terms).", "",
                               "## The fit as `./run.sh model fit` prints it", "",
                               "```", render_fit(model), "```", "", *_no_apply(model),
                               *([f"## {CHECKED}", "", "`./run.sh model validate`:", "",
                                  render_validation(validation)] if validation else [])]).rstrip("\n") + "\n")
    # the coefficients and the whole fit on the model's page, report.md keeps what the model is and how far it held:
    # a page a DBA reads (issue 73)
    lines = ["## The cost model: what a transaction and a row cost", "",
             "Fitted by `./run.sh model fit` over this report's write runs (CPU net of idle, binlog bytes) and "
             "apply-capacity drains (one replica alone); `./run.sh model predict --mix ...` turns it into a "
             f"capacity plan. Its {len(model.settings or {})} settings' costs per transaction and per row, with their "
             f"95 % intervals, are on [{MODEL_PAGE}]({MODEL_PAGE}#{COEFFICIENTS_ANCHOR}), with the whole fit (rate "
             "shapes, extra terms, fsyncs, domains).", ""]
    if validation:
        covered = render_coverage(coverage(validation)) or ["No case was usable."]
        lines += [f"{CHECKED} (`./run.sh model validate`): each case predicted beside measured, and the lag onset "
                  f"(the rate at which a replica starts falling behind), on [{MODEL_PAGE}]({MODEL_PAGE}#"
                  f"{CHECKED_ANCHOR}). {covered[0]}", "", *covered[1:], ""]
    return lines


def _no_apply(model: CostModel) -> list[str]:
    """Why a setting's apply columns say *no data*, and the study that fills them: without an apply fit, `model
    predict` gives that setting no utilisation and no rate at which a replica falls behind (docs/cost-model.md)."""
    assert model.settings is not None  # analysis/costmodel.fit writes it
    missing = [name for name, fitted in model.settings.items() if fitted.apply_s is None]
    if not missing:
        return []
    return [f"*no data* under one replica's apply alone ({', '.join(missing)}): these runs drained no backlog "
            "under that setting, so `./run.sh model predict` gives it no apply utilisation and no rate at which a "
            "replica falls behind. `./run.sh study apply-settings` drains single-row and 100-row backlogs under "
            "ROW FULL, MINIMAL, NOBLOB, STATEMENT and MIXED on bench_idx (campaign `model` runs it).", ""]


def _backlogs(drains: float, backlogs: list[float]) -> str:
    """How many backlogs a size's drains came from, where it is fewer (every replica drains each one); a model.json
    from before kept no count."""
    return f" of {backlogs[0]:g} backlog{'s' if backlogs[0] != 1 else ''}" if backlogs and backlogs[0] < drains else ""
