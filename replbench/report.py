"""report.md: regenerated from everything in results/ — deterministic (the same results give the same file).

For the newest sweep of each scenario (older ones are listed as superseded): its setup, a table per step, the max
sustainable rate and the criteria that decided it, plots of latency / CPU / lag against rate, and per step the
printed block and its latency-over-time plot. A comparison section pairs scenarios with and without indexes. Plots
and the small per-step files the report links are copied into results/report-assets/ (committed); raw data stays in
the step folders (ignored).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
from pathlib import Path
from typing import Any

from .config import ROOT, Settings
from .sweep import describe_max

PAIRS = (("read", "read-noindex"), ("write", "write-noindex"))
NODES = ("app", "master", "replica1", "replica2", "vegeta")


def find_sweeps(results: Path) -> list[Path]:
    return sorted(p.parent for p in results.glob("*/sweep.json"))


def newest_per_scenario(sweeps: list[Path]) -> dict[str, Path]:
    """The newest sweep of each scenario (folders are time-stamped, so the last by name), which the report shows."""
    newest: dict[str, Path] = {}
    for sweep_dir in sorted(sweeps):
        newest[json.loads((sweep_dir / "sweep.json").read_text())["scenario"]] = sweep_dir
    return newest


def load_steps(sweep_dir: Path, sweep: dict[str, Any]) -> list[dict[str, Any]]:
    """Each step with its repeats' summaries and meta (from the step folders)."""
    steps = []
    for step in sweep["steps"]:
        repeats = []
        for name in step["folders"]:
            folder = sweep_dir / name
            if (folder / "summary.json").exists():
                repeats.append({"folder": folder, "summary": json.loads((folder / "summary.json").read_text()),
                                "meta": json.loads((folder / "meta.json").read_text())})
        if repeats:
            steps.append({**step, "repeats": repeats})
    return steps


def fig(values: list[float | None], fmt: str = "{:.0f}") -> str:
    """Median, with [min–max] when there are repeats."""
    present = [v for v in values if v is not None]
    if not present:
        return "–"
    med = statistics.median(present)
    if len(present) == 1 or min(present) == max(present):
        return fmt.format(med)
    return f"{fmt.format(med)} [{fmt.format(min(present))}–{fmt.format(max(present))}]"


def step_row(step: dict[str, Any]) -> str:
    sums = [r["summary"] for r in step["repeats"]]

    def get(*path: str) -> list[float | None]:
        return [lookup(s, path) for s in sums]

    lag_p99 = [max([v.get("p99_ms") or 0 for v in (s.get("lag") or {}).values()] or [0]) for s in sums]
    catch = [max([v if v is not None else float("inf") for v in (s.get("catch_up_s") or {}).values()] or [0])
             for s in sums]
    verdict = "PASS" if step["passed"] else "FAIL: " + "; ".join(step["reasons"])
    cells = [
        f"{step['rate']}{' (refine)' if step.get('refined') else ''}",
        fig(get("rate_achieved"), "{:.1f}"),
        fig(get("latency_ms", "p50"), "{:.1f}"), fig(get("latency_ms", "p95"), "{:.1f}"),
        fig(get("latency_ms", "p99"), "{:.1f}"), fig(get("latency_ms", "max"), "{:.0f}"),
        fig([None if v is None else 100 * v for v in get("success")], "{:.2f}%"),
        *(fig(get("cpu_mean_percent", n)) for n in ("app", "master", "replica1", "replica2")),
        *(fig(get("cpu_ms_per_request", n), "{:.3f}") for n in ("app", "master", "replica1", "replica2")),
        fig(lag_p99), fig([None if c == float("inf") else c for c in catch], "{:.1f}"),
        fig(get("binlog", "bytes_per_write"), "{:.0f}"),
        verdict,
        ", ".join(f"`{r['folder'].name}`" for r in step["repeats"]),
    ]
    return "| " + " | ".join(cells) + " |"


TABLE_HEADER = ("| rate asked | achieved | p50 ms | p95 ms | p99 ms | max ms | success | app % | master % | "
                "replica1 % | replica2 % | app ms/req | master ms/req | replica1 ms/req | replica2 ms/req | "
                "lag p99 ms | catch-up s | binlog B/write | verdict | folder |\n"
                "|" + "---|" * 20)


def plot_sweep(steps: list[dict[str, Any]], assets: Path, title: str) -> dict[str, str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rates = [s["rate"] for s in steps]

    files = {}
    specs = [
        ("latency.png", "latency percentiles vs rate", "latency (ms, log scale)", True,
         [(k, ("latency_ms", k)) for k in ("p50", "p95", "p99", "max")]),
        ("cpu.png", "CPU per node vs rate", "CPU (% of one core, steady mean)", False,
         [(n, ("cpu_mean_percent", n)) for n in (*NODES, "host_busy")]),
        ("lag.png", "replication lag vs rate", "heartbeat lag p99 (ms, log scale)", True,
         [(r, ("lag", r, "p99_ms")) for r in ("replica1", "replica2")]),
    ]
    for name, what, ylabel, log, series in specs:
        fig_, ax = plt.subplots(figsize=(8, 4), dpi=100)
        for label, path in series:
            ys = [_median(s, path) for s in steps]
            points = [(x, y) for x, y in zip(rates, ys) if y is not None and (not log or y > 0)]
            if points:
                ax.plot(*zip(*points), marker="o", label=label)
        if log:
            ax.set_yscale("log")
        ax.set_xlabel("rate asked (requests/s)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title}: {what}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig_.tight_layout()
        fig_.savefig(assets / name, metadata={"Software": None})
        plt.close(fig_)
        files[name] = name
    return files


def sweep_section(sweep_dir: Path, assets_root: Path, base: Path) -> tuple[list[str], dict[str, Any]]:
    def rel(path: Path) -> str:
        return os.path.relpath(path, base)

    sweep = json.loads((sweep_dir / "sweep.json").read_text())
    steps = load_steps(sweep_dir, sweep)
    assets = assets_root / sweep_dir.name
    assets.mkdir(parents=True, exist_ok=True)
    name = sweep["scenario"]
    lines = [f"## Sweep `{name}` — `{sweep_dir.name}`", ""]
    if not steps:
        return lines + ["No completed step.", ""], {"scenario": name, "max": None, "max_text": "–", "steps": []}
    meta = steps[0]["repeats"][0]["meta"]
    host, versions, ds = meta["host"], meta["versions"], meta["dataset"]
    machine = f"{host['cores']} cores, {host['memory_gib']} GiB, {host['platform']}"
    lines += [
        f"- **Machine**: {machine}",
        f"- **Versions**: MariaDB {versions.get('mariadb')}, vegeta {versions.get('vegeta')}, Python "
        f"{versions.get('python')}, app driver {meta['app']['driver']} / worker {meta['app']['worker_class']} × "
        f"{meta['app']['workers']}, commit `{versions.get('git_commit')}`",
        f"- **Dataset**: {ds.get('accounts'):,} accounts (seed {ds.get('seed')}), "
        f"schema `{steps[0]['repeats'][0]['summary'].get('schema')}`",
        "- **Knobs**: " + ", ".join(f"{k}={v}" for k, v in sweep["knobs"].items())
        + f"; buffer pool {meta['buffer_pool']} per node; {sweep['duration_s']:g} s per step"
        + (f", {sweep['repeat']} repeats per step (median [range])" if sweep["repeat"] > 1 else ""),
        f"- **Pass criteria**: {sweep['criteria_text']}",
        f"- **Status**: {sweep['status']}",
        "",
    ]
    best = sweep["max_sustainable_rate"]
    lines += [f"**Max sustainable rate: {describe_max(sweep)}** — the highest step meeting every criterion above.",
              ""]
    lines += [TABLE_HEADER] + [step_row(s) for s in steps] + [""]
    lines += ["CPU in % of one core (mean over the steady part of the step); ms/req = the node's CPU milliseconds "
              "per request; lag = heartbeat lag p99 of the worse replica; catch-up = seconds after the step until "
              "both replicas applied everything; binlog B/write = master binlog bytes per successful write, "
              "heartbeats excluded.", ""]
    plots = plot_sweep(steps, assets, name)
    for file in plots.values():
        lines.append(f"![{name} {file[:-4]}]({rel(assets / file)})")
    lines += ["", "<details><summary>Per-step blocks and latency over time</summary>", ""]
    for step in steps:
        for r in step["repeats"]:
            folder = r["folder"]
            tag = folder.name
            for src, dst in (("latency.png", f"{tag}-latency.png"), ("summary.json", f"{tag}-summary.json"),
                             ("block.txt", f"{tag}-block.txt")):
                if (folder / src).exists():
                    shutil.copyfile(folder / src, assets / dst)
            lines += [f"### {step['rate']} rps — `{tag}`", "", "```",
                      (folder / "block.txt").read_text().rstrip("\n") if (folder / "block.txt").exists() else
                      "(no block)", "```", "", f"![latency over time]({rel(assets / f'{tag}-latency.png')})", ""]
    lines += ["</details>", ""]
    return lines, {"scenario": name, "max": best, "max_text": describe_max(sweep), "steps": steps,
                   "folder": sweep_dir.name, "machine": f"{machine}, MariaDB {versions.get('mariadb')}"}


def comparison(latest: dict[str, dict[str, Any]]) -> list[str]:
    lines: list[str] = []
    for indexed, plain in PAIRS:
        if indexed not in latest or plain not in latest:
            continue
        a, b = latest[indexed], latest[plain]
        if not lines:
            lines += ["## What the indexes cost: paired sweeps", ""]

        lines += [f"### `{indexed}` (4 secondary indexes) vs `{plain}` (primary key only)", "",
                  "| | " + f"`{indexed}` | `{plain}` |", "|---|---|---|",
                  f"| max sustainable rate | {a['max_text']} | {b['max_text']} |",
                  f"| sweep | `{a['folder']}` | `{b['folder']}` |"]
        common = sorted({s["rate"] for s in a["steps"]} & {s["rate"] for s in b["steps"]})
        if common:
            lines += ["", "Per request at the rates both sweeps ran (median of repeats):", "",
                      "| rate | metric | " + f"`{indexed}` | `{plain}` | ratio |", "|---|---|---|---|---|"]
            by_rate_a = {s["rate"]: s for s in a["steps"]}
            by_rate_b = {s["rate"]: s for s in b["steps"]}
            for rate in common:
                for label, path in (("master CPU-ms/req", ("cpu_ms_per_request", "master")),
                                    ("replica1 CPU-ms/req", ("cpu_ms_per_request", "replica1")),
                                    ("replica2 CPU-ms/req", ("cpu_ms_per_request", "replica2")),
                                    ("binlog bytes/write", ("binlog", "bytes_per_write")),
                                    ("p99 latency ms", ("latency_ms", "p99"))):
                    va, vb = _median(by_rate_a[rate], path), _median(by_rate_b[rate], path)
                    ratio = f"{va / vb:.2f}×" if va and vb else "–"
                    lines.append(f"| {rate} | {label} | {_num(va)} | {_num(vb)} | {ratio} |")
        lines.append("")
    return lines


def lookup(data: Any, path: tuple[str, ...]) -> Any:
    """data[path[0]][path[1]]..., or None where a level is missing."""
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _median(step: dict[str, Any], path: tuple[str, ...]) -> float | None:
    """Median over a step's repeats of one summary figure."""
    values = [v for v in (lookup(r["summary"], path) for r in step["repeats"]) if v is not None]
    return statistics.median(values) if values else None


def _num(value: float | None) -> str:
    return "–" if value is None else (f"{value:.3f}" if value < 10 else f"{value:.1f}")


def generate(settings: Settings, output: Path | None = None) -> Path:
    results = settings.results
    output = output or ROOT / "report.md"
    assets_root = results / "report-assets"
    if assets_root.exists():
        shutil.rmtree(assets_root)
    assets_root.mkdir(parents=True)
    sweeps = find_sweeps(results)
    shown = newest_per_scenario(sweeps)
    sections: list[str] = []
    latest: dict[str, dict[str, Any]] = {}
    for sweep_dir in sweeps:
        if sweep_dir in shown.values():
            lines, info = sweep_section(sweep_dir, assets_root, output.parent)
            sections += lines
            if info["steps"]:
                latest[info["scenario"]] = info
    header = [
        "# replbench report", "",
        "Generated by `./run.sh report` from the sweeps under `results/` (each step's raw data — vegeta "
        "`results.bin`, `cpu.csv`, `lag.csv` — stays in its step folder; the plots, blocks and summaries linked "
        "here are copied to `results/report-assets/`). Every figure below comes from a file in those folders. "
        "The newest sweep of each scenario is shown in full; older ones are listed as superseded.", "",
    ]
    machines = sorted({info["machine"] for info in latest.values()})
    if machines:
        header += ["Measured on: " + "; ".join(f"**{m}**" for m in machines)
                   + " (the host recorded in the meta.json of the sweeps shown).", ""]
    if not sweeps:
        header += ["No sweep found in results/: run `./run.sh sweep <scenario>` first.", ""]
    else:
        header += ["| sweep | scenario | steps | max sustainable rate | shown |", "|---|---|---|---|---|"]
        for sweep_dir in sweeps:
            data = json.loads((sweep_dir / "sweep.json").read_text())
            steps = data["steps"]
            newest = shown[data["scenario"]]
            where = "in full below" if newest == sweep_dir else f"superseded by `{newest.name}`"
            header.append(f"| `{sweep_dir.name}` | {data['scenario']} | {len(steps)} | {describe_max(data)} | "
                          f"{where} |")
        header.append("")
    text = "\n".join(header + comparison(latest) + sections).rstrip("\n") + "\n"
    output.write_text(text)
    return output
