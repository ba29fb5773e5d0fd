"""./run.sh compare A B: headline figures of two runs or two sweeps (possibly from different machines or
configurations) side by side, with delta and delta %, and changes inside the noise band labelled as noise.
The table is printed and saved under results/."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

DEFAULT_BAND = 5.0  # percent
HIGHER_IS_BETTER = ("max sustainable rate", "achieved rate", "success")


class CompareError(Exception):
    """An input is not a run or sweep folder; the message says which."""


def resolve(name: str, results: Path) -> Path:
    for candidate in (Path(name), results / name):
        if (candidate / "summary.json").exists() or (candidate / "sweep.json").exists():
            return candidate.resolve()
    raise CompareError(f"{name!r} is neither a run folder (summary.json) nor a sweep folder (sweep.json), "
                       f"as a path or under {results}")


def _get(data: Any, *path: str) -> float | None:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, (int, float)) else None


def run_figures(summary: dict[str, Any], prefix: str = "") -> dict[str, float | None]:
    figures: dict[str, float | None] = {
        f"{prefix}achieved rate": _get(summary, "rate_achieved"),
        f"{prefix}success": _get(summary, "success"),
        f"{prefix}p50 latency ms": _get(summary, "latency_ms", "p50"),
        f"{prefix}p99 latency ms": _get(summary, "latency_ms", "p99"),
    }
    for node in ("app", "master", "replica1", "replica2"):
        figures[f"{prefix}{node} CPU %"] = _get(summary, "cpu_mean_percent", node)
        figures[f"{prefix}{node} CPU-ms/req"] = _get(summary, "cpu_ms_per_request", node)
    for replica in ("replica1", "replica2"):
        figures[f"{prefix}{replica} lag p99 ms"] = _get(summary, "lag", replica, "p99_ms")
    figures[f"{prefix}binlog bytes/write"] = _get(summary, "binlog", "bytes_per_write")
    return figures


def sweep_figures(folder: Path) -> dict[str, float | None]:
    sweep = json.loads((folder / "sweep.json").read_text())
    figures: dict[str, float | None] = {"max sustainable rate": sweep.get("max_sustainable_rate")}
    for step in sorted(sweep["steps"], key=lambda s: s["rate"]):
        summaries = [json.loads((folder / f / "summary.json").read_text()) for f in step["folders"]
                     if (folder / f / "summary.json").exists()]
        if not summaries:
            continue
        per_repeat = [run_figures(s, f"@{step['rate']} ") for s in summaries]
        for key in per_repeat[0]:
            values = [r[key] for r in per_repeat if r[key] is not None]
            figures[key] = statistics.median(values) if values else None
    return figures


def figures_of(folder: Path) -> dict[str, float | None]:
    if (folder / "sweep.json").exists():
        return sweep_figures(folder)
    return run_figures(json.loads((folder / "summary.json").read_text()))


def verdict(metric: str, base: float | None, new: float | None, band: float) -> tuple[str, str, str]:
    """(delta, delta %, label) for one metric."""
    if base is None or new is None:
        return "–", "–", "missing on one side"
    delta = new - base
    if base == 0:
        return f"{delta:+.3g}", "–", "noise" if delta == 0 else "changed"
    pct = 100.0 * delta / abs(base)
    if abs(pct) <= band:
        label = "noise"
    else:
        better = (delta > 0) == any(metric.endswith(h) or metric == h for h in HIGHER_IS_BETTER)
        label = "better" if better else "worse"
    return f"{delta:+.4g}", f"{pct:+.1f}%", label


def compare(base: Path, new: Path, band: float = DEFAULT_BAND) -> str:
    a, b = figures_of(base), figures_of(new)
    keys = [k for k in a if k in b] + [k for k in b if k not in a]
    lines = [f"# compare: `{base.name}` (base) vs `{new.name}` (new)", "",
             f"Noise band: ±{band:g} % — changes inside it are labelled noise.", "",
             "| metric | base | new | delta | delta % | verdict |", "|---|---|---|---|---|---|"]
    for key in keys:
        va, vb = a.get(key), b.get(key)
        delta, pct, label = verdict(key, va, vb, band)
        lines.append(f"| {key} | {_fmt(va)} | {_fmt(vb)} | {delta} | {pct} | {label} |")
    return "\n".join(lines) + "\n"


def _fmt(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.4g}" if isinstance(value, float) else str(value)
