"""./run.sh compare A B: headline figures of two runs or two sweeps side by side, with delta, delta % and a noise
figure. Two sweeps: a bootstrap interval of the difference from the repeats of each step. Two single runs: the
seconds of one run do not know how much two runs differ, so the noise is the spread between recorded runs of the
same scenario, rate and settings on this machine (sweep repeats, study units, loose runs: at least
MIN_RECORDED_RUNS of them; the 95 % prediction interval of a difference between two new runs from their standard
deviation, scipy's t); without them compare says plainly that one
run each cannot separate a change from run-to-run noise, and calls nothing better or worse. A metric is called
better or worse only when the difference lies outside that noise *and* beyond the --band floor; a run compared
with itself is all noise. The one rule set of docs/metrics.md ("Comparing two figures", core/stats.judgement)
holds here too: a count (binlog bytes per write) is compared exactly, never against a noise interval; two sweeps
whose steps have fewer than FINDING_MIN_REPEATS repeats a side are described ("disjoint ranges, n = 2, not
tested"), not bootstrapped; a lag under its floor prints "< 10", never as a value. compare also warns when the two
sides' machine calibrations differ by more than 10 %. The table is printed and saved under results/."""

from __future__ import annotations

import csv
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

from ..core.config import FINDING_MIN_REPEATS
from ..core.nodenames import replicas_in
from ..core.records import STATUS_SUCCEEDED
from ..core.results import Host, KnobSetting, Latency, RunSummary, read_meta, read_summary, read_sweep
from ..core.stats import below_floor, bootstrap_interval, floor_text, judgement, median, percentile, testable
from .studymetrics import BY_KEY, lag_floor_ms

DEFAULT_BAND = 5.0  # percent: the smallest change ever called a change
CALIBRATION_WARN = 0.10
HIGHER_IS_BETTER = ("sent/s", "goodput/s", "success", "max sustainable rate")
STEADY_TRIM = 0.1
MIN_RECORDED_RUNS = 3  # recorded runs of the same scenario, rate and settings that make a between-run noise figure
# the figures that are counts of the workload (analysis/studymetrics declares which, and why they can differ):
# compared exactly, never against a noise interval
COUNTS = {"binlog bytes/write": BY_KEY["bytes_per_write"].count}
LAG = "lag p99 ms"  # the figures with the lag's floor


class CompareError(Exception):
    """An input is not a run or sweep folder; the message says which."""


def resolve(name: str, results: Path) -> Path:
    for candidate in (Path(name), results / name):
        if (candidate / "summary.json").exists() or (candidate / "sweep.json").exists():
            return candidate.resolve()
    raise CompareError(f"{name!r} is neither a run folder (summary.json) nor a sweep folder (sweep.json), "
                       f"as a path or under {results}")


def _read_csv(path: Path) -> list[dict[str, str]]:
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError:
        return []


def _num(value: str | None) -> float | None:
    """A CSV cell as a number; None where it is empty, absent (a short row's: csv gives None) or not a number."""
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _replicas(summary: RunSummary) -> tuple[str, ...]:
    """The run's replicas (two in a summary that names none: a run before fan-out, or one with no CPU figures)."""
    return replicas_in([*(summary.cpu_mean_percent or {}), *(summary.lag or {})]) or ("replica1", "replica2")


def run_samples(folder: Path, s: RunSummary) -> dict[str, list[float]]:
    """Per-second samples of the steady part of one run, per headline metric (what the noise is estimated from)."""
    out: dict[str, list[float]] = {}
    seconds = _read_csv(folder / "timeline.csv")
    if seconds:
        n = len(seconds)
        steady = seconds[int(n * STEADY_TRIM):max(int(n * STEADY_TRIM) + 1, int(n * (1 - STEADY_TRIM)))]
        out["sent/s"] = [v for v in (_num(s["requests"]) for s in steady) if v is not None]
        for key, name in (("p50_ms", "p50 latency ms"), ("p99_ms", "p99 latency ms")):
            out[name] = [v for v in (_num(s[key]) for s in steady) if v is not None]
    start = s.attack_start_s
    duration = s.duration_s
    replicas = _replicas(s)
    cpu = _read_csv(folder / "cpu.csv")
    if cpu and start is not None and duration:
        trim = duration * STEADY_TRIM
        steady_cpu = [r for r in cpu if start + trim <= (_num(r["elapsed_s"]) or 0) <= start + duration - trim]
        per_second = {int(_num(s["second"]) or 0): _num(s["requests"]) or 0 for s in seconds}
        for node in ("app", "master", *replicas, "vegeta"):
            values = [_num(r.get(node)) for r in steady_cpu]
            out[f"{node} CPU %"] = [v for v in values if v is not None]
            per_req = []
            for r in steady_cpu:
                second = int((_num(r["elapsed_s"]) or 0) - start) - 1
                requests = per_second.get(second)
                value = _num(r.get(node))
                if requests and value is not None:
                    per_req.append(10.0 * value / requests)  # % of a core over 1 s = 10 ms per %
            out[f"{node} CPU-ms/req"] = per_req
    if start is not None and duration:
        # lag from the GTID positions (positions.csv), or the heartbeat's for a run measured before them
        positions = folder / "positions.csv"
        rows, node, column = ((_read_csv(positions), "node", "lag_ms") if positions.exists()
                              else (_read_csv(folder / "lag.csv"), "replica", "heartbeat_lag_ms"))
        for row_replica in replicas:
            out[f"{row_replica} lag p99 ms"] = [
                v for v in (_num(r.get(column)) for r in rows
                            if r.get(node) == row_replica
                            and start <= (_num(r["elapsed_s"]) or 0) <= start + duration) if v is not None]
    return out


def run_figures(s: RunSummary, prefix: str = "") -> dict[str, float | None]:
    latency = s.latency_ms or Latency()
    figures: dict[str, float | None] = {
        # summaries from before the rename said rate_achieved and throughput, those after it the new names only
        # (block.py tells the two kinds apart by rate_sent, so they are read where they are used, not migrated)
        f"{prefix}sent/s": s.rate_sent if s.rate_sent is not None else s.rate_achieved,
        f"{prefix}goodput/s": s.goodput if s.goodput is not None else s.throughput,
        f"{prefix}success": s.success,
        f"{prefix}p50 latency ms": latency.p50,
        f"{prefix}p99 latency ms": latency.p99,
    }
    replicas = _replicas(s)
    for node in ("app", "master", *replicas, "vegeta"):
        figures[f"{prefix}{node} CPU %"] = (s.cpu_mean_percent or {}).get(node)
        figures[f"{prefix}{node} CPU-ms/req"] = (s.cpu_ms_per_request or {}).get(node)
    for replica in replicas:
        lag = (s.lag or {}).get(replica)
        figures[f"{prefix}{replica} lag p99 ms"] = lag.p99_ms if lag else None
    figures[f"{prefix}binlog bytes/write"] = s.binlog.bytes_per_write if s.binlog else None
    return figures


Side = tuple[dict[str, float | None], dict[str, list[float]], Host, float]  # figures, samples, host, lag floor


def _stat_for(metric: str) -> Callable[[Sequence[float]], float]:
    if "lag p99" in metric:
        return lambda xs: percentile(list(xs), 99) or 0.0
    if "p99 latency" in metric or "p50 latency" in metric:
        return statistics.median
    return statistics.fmean


def side_of(folder: Path) -> Side:
    """(figures, samples per figure, host, the lag's floor) of a run folder or a sweep folder."""
    if (folder / "sweep.json").exists():
        sweep = read_sweep(folder)
        figures: dict[str, float | None] = {"max sustainable rate": sweep.max_sustainable_rate}
        samples: dict[str, list[float]] = {}
        host: Host | None = None
        every: list[RunSummary] = []
        for step in sorted(sweep.steps or [], key=lambda s: s.rate):  # type: ignore[arg-type,return-value]
            summaries = [(folder / f, read_summary(folder / f))
                         for f in step.folders or [] if (folder / f / "summary.json").exists()]
            if not summaries:
                continue
            every += [s for _, s in summaries]
            per_repeat = [run_figures(s, f"@{step.rate} ") for _, s in summaries]
            for key in per_repeat[0]:
                figures[key] = median([r[key] for r in per_repeat])
                samples[key] = [v for r in per_repeat if (v := r[key]) is not None]  # repeats are the samples
            host = host or _host(summaries[0][0])  # the first step whose run says what it ran on
        return figures, samples, host or Host(), lag_floor_ms(every)
    summary = read_summary(folder)
    return run_figures(summary), run_samples(folder, summary), _host(folder) or Host(), lag_floor_ms([summary])


def _host(folder: Path) -> Host | None:
    """The machine a run ran on, as its meta.json says; None where it says nothing."""
    try:
        host = read_meta(folder).host
    except (OSError, ValueError):
        return None
    return host if host is not None and host.model_fields_set | set(host.model_extra or {}) else None


def verdict(metric: str, base: float | None, new: float | None, band: float,
            noise: tuple[float, float] | None) -> tuple[str, str, str, str]:
    """(delta, delta %, noise interval text, label) for one metric."""
    if base is None and new is None:
        return "–", "–", "–", "missing on both sides"
    if base is None or new is None:
        return "–", "–", "–", "missing on one side"
    delta = new - base
    pct = None if base == 0 else 100.0 * delta / abs(base)
    noise_text = "–" if noise is None else f"[{noise[0]:+.3g}, {noise[1]:+.3g}]"
    inside_noise = noise is not None and noise[0] <= delta <= noise[1]
    within_band = (abs(pct) <= band) if pct is not None else delta == 0
    if delta == 0 or inside_noise or within_band:
        label = "noise"
    elif noise is None:
        label = "changed? (no noise estimate: one value per side)"
    else:
        better = (delta > 0) == any(metric.endswith(h) for h in HIGHER_IS_BETTER)
        label = "better" if better else "worse"
    return f"{delta:+.4g}", ("–" if pct is None else f"{pct:+.1f}%"), noise_text, label


def recorded_runs(results: Path, s: RunSummary, knobs: KnobSetting | None,
                  leave_out: set[Path]) -> list[RunSummary]:
    """Finished runs under results/ of the same scenario, rate, duration and settings as `summary` (any folder:
    sweep steps, study units, loose runs), the compared ones left out. `knobs`: the base run's knobs_changed, only
    compared for equality with each run's."""
    found = []
    for path in results.rglob("summary.json"):
        folder = path.parent.resolve()
        if folder in leave_out or not (folder / "meta.json").exists():
            continue
        try:
            other, meta = read_summary(folder), read_meta(folder)
        except (OSError, ValueError):
            continue
        if (other.scenario, other.rate, other.duration_s, meta.knobs_changed) == \
                (s.scenario, s.rate, s.duration_s, knobs) and other.status in STATUS_SUCCEEDED:
            found.append(other)
    return found


def lag_methods(summary: RunSummary) -> set[str | None]:
    """How the run measured its replicas' lag: GTID positions or, in summaries from before them (no method
    recorded), the heartbeat."""
    return {lag.method if lag is not None and lag.method is not None else "heartbeat"  # measure/lag writes a name
            for lag in (summary.lag or {}).values()}


def between_runs(runs: list[RunSummary],
                 lag_method: str | None = None) -> dict[str, tuple[float, float]]:
    """Per headline metric: the 95 % prediction interval of the difference between two new single runs, from the
    recorded runs' spread: ± t(0.975, n − 1) × s × √2 (s their standard deviation, n ≥ MIN_RECORDED_RUNS). Lag
    figures only from runs whose lag was measured the same way (GTID positions or the heartbeat)."""
    from scipy import stats  # imported where a comparison is computed, not by every command's start

    figures = [run_figures(r) for r in runs]
    methods = [lag_methods(r) for r in runs]
    out = {}
    for key in figures[0] if figures else ():
        lag = key.endswith("lag p99 ms")
        values = [v for f, m in zip(figures, methods) if (v := f.get(key)) is not None
                  and (not lag or m == {lag_method or "heartbeat"})]
        if len(values) >= MIN_RECORDED_RUNS:
            half = float(stats.t.ppf(0.975, len(values) - 1)) * statistics.stdev(values) * 2 ** 0.5
            out[key] = (-half, half)
    return out


def ruled(key: str, va: float | None, vb: float | None, samples: tuple[list[float], list[float]],
          floor: float) -> list[str] | None:
    """A row the one rule decides before any noise interval (docs/metrics.md, "Comparing two figures"): a count,
    compared exactly; a lag under its floor, printed '< 10' with no difference; two sweeps' figure from fewer than
    FINDING_MIN_REPEATS repeats a side, described, not tested. None for a row judged against its noise. Its cells:
    base, new, delta, delta %, noise, verdict."""
    if va is None or vb is None:
        return None
    if key.endswith(LAG) and (below_floor(va, floor) or below_floor(vb, floor)):
        shown = [floor_text(floor) if below_floor(v, floor) else _fmt(v) for v in (va, vb)]
        return [*shown, "–", "–", "–", f"under the lag's floor ({floor:g} ms) on "
                + ("both sides" if below_floor(va, floor) and below_floor(vb, floor) else "one side")
                + ": not a value"]
    count = next((why for name, why in COUNTS.items() if key.endswith(name)), "")
    a, b = samples
    if count:
        words = judgement(a or [va], b or [vb], count=count).text
    elif a and b and not testable(a, b):
        words = judgement(a, b).text
    else:
        return None
    delta = vb - va
    return [_fmt(va), _fmt(vb), f"{delta:+.4g}", "–" if not va else f"{100.0 * delta / abs(va):+.1f}%", "–", words]


def compare(base: Path, new: Path, band: float = DEFAULT_BAND, results: Path | None = None) -> str:
    (fa, sa, ha, floor_a), (fb, sb, hb, floor_b) = side_of(base), side_of(new)
    floor = max(floor_a, floor_b)
    keys = [k for k in fa if k in fb] + [k for k in fb if k not in fa]
    single = not (base / "sweep.json").exists() and not (new / "sweep.json").exists()
    lines = [f"# compare: `{base.name}` (base) vs `{new.name}` (new)", ""]
    recorded: dict[str, tuple[float, float]] = {}
    if single:
        summary = read_summary(base)
        knobs = read_meta(base).knobs_changed if (base / "meta.json").exists() else None
        runs = recorded_runs(results, summary, knobs, {base.resolve(), new.resolve()}) if results else []
        methods = lag_methods(summary)
        recorded = between_runs(runs, next(iter(methods)) if len(methods) == 1 else None) \
            if len(runs) >= MIN_RECORDED_RUNS else {}
        lines += [f"Two single runs: the noise is the 95 % prediction interval of the difference between two runs, "
                  f"from the spread of {len(runs)} recorded runs of `{summary.scenario}` at "
                  f"{summary.rate}/s with the same settings on this machine (± t × s × √2); a metric is "
                  f"called better or worse only beyond it and beyond ±{band:g} %."
                  if recorded else
                  f"Two single runs, and fewer than {MIN_RECORDED_RUNS} recorded runs of `{summary.scenario}` "
                  f"at {summary.rate}/s with the same settings here: **one run each cannot separate a change "
                  "from run-to-run noise** (on this machine two identical runs differ by up to ~30 % in CPU per "
                  "request), so nothing is called better or worse. Repeat both (a sweep with --repeat, or a "
                  "study) to compare.", ""]
    else:
        lines += [f"A metric is called better or worse only when the difference is outside the noise interval (95 % "
                  f"bootstrap of the difference, from each step's repeats, at least {FINDING_MIN_REPEATS} a side) "
                  f"and beyond ±{band:g} %; with fewer repeats a step's figure is described, not tested, and a "
                  "count is compared exactly (docs/metrics.md, \"Comparing two figures\").", ""]
    ca, cb = ha.calibration_score, hb.calibration_score
    machines_differ = bool(ca and cb and abs(cb - ca) / ca > CALIBRATION_WARN)
    if machines_differ:
        assert ca is not None and cb is not None  # both, to differ
        lines += [f"**Warning**: the machines' calibration differs by {100 * (cb - ca) / ca:+.0f} % "
                  f"({ca:g} vs {cb:g}): a difference beyond the noise may be the machine, not the change "
                  "(labelled so below).", ""]
    lines += ["| metric | base | new | delta | delta % | noise (95 %) | verdict |", "|---|---|---|---|---|---|---|"]
    for key in keys:
        va, vb = fa.get(key), fb.get(key)
        # counts, lags under their floor, and sweeps' figures from too few repeats: the rule decides, not noise
        said = ruled(key, va, vb, ([], []) if single else (sa.get(key) or [], sb.get(key) or []), floor)
        if said is not None:
            lines.append(f"| {key} | " + " | ".join(said) + " |")
            continue
        if single:  # a run's own seconds say nothing of how much two runs differ
            noise = recorded.get(key)
            delta, pct, noise_text, label = verdict(key, va, vb, band, noise)
            if noise is None and label.startswith("changed?"):
                label = "one run each: not separable from run-to-run noise"
            lines.append(f"| {key} | {_fmt(va)} | {_fmt(vb)} | {delta} | {pct} | {noise_text} | {label} |")
            continue
        noise = bootstrap_interval(sa.get(key) or [], sb.get(key) or [], _stat_for(key))
        if noise is not None and va is not None and vb is not None:
            # centre the interval of the sample statistic's difference on the headline figures' difference
            sample_diff = _stat_for(key)(sb[key]) - _stat_for(key)(sa[key])
            noise = (noise[0] - sample_diff, noise[1] - sample_diff)
        delta, pct, noise_text, label = verdict(key, va, vb, band, noise)
        if machines_differ and label in ("better", "worse"):
            label += " (or the machine: calibrations differ)"
        lines.append(f"| {key} | {_fmt(va)} | {_fmt(vb)} | {delta} | {pct} | {noise_text} | {label} |")
    return "\n".join(lines) + "\n"


def _fmt(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.4g}" if isinstance(value, float) else str(value)
