"""report.md: regenerated from everything in results/ — deterministic (the same results give the same file).

It opens with one page: what was measured (the SQL each endpoint runs, the statement limit), on what (machine,
versions, dataset, reference settings), the findings in a few generated sentences (only differences the repeats
separate), and how to read the columns. Then every study (one table per scenario: per cell the median and
min–max over repeats, the ratio to the baseline and whether it is a difference or within noise; a bar chart),
then the newest sweep of each scenario (table, plots; the per-step blocks in a linked file of their own), then
the index-cost comparison. Assets go to results/report-assets/<folder>/ (committed); a committed asset folder
whose raw data is not in results/ is left alone and listed, never deleted. No absolute path is written.
"""

from __future__ import annotations

import json
import os
import shutil
import tomllib
from pathlib import Path
from typing import Any

from ..analysis.findings import ALPHA, MAX_FINDINGS, sentence, study_findings
from ..analysis.studymetrics import BY_KEY, cell_text, fmt, semi_sync_cost
from ..analysis.verdicts import FINDING_MIN_FACTOR, describe_max
from ..core import scenario as scenario_file
from ..core.config import ROOT, STUDY_DIR, Settings
from ..core.stats import lookup, median, separated, spread_text
from ..topology import appserver
from ..topology.knobs import Knobs, parse_size
from . import reference

PAIRS = (("read", "read-noindex"), ("write", "write-noindex"), ("write-nopk", "write-nopk-keyed"))
NODES = ("app", "master", "replica1", "replica2", "vegeta")
# the statements behind each endpoint (tests check every fragment still stands in app/handlers.py)
ENDPOINT_SQL = {
    "find_users": ("SELECT first_name FROM accounts WHERE first_name LIKE 'abc%' GROUP BY first_name LIMIT 301; "
                   "then SELECT id, first_name, last_name, city, birth_date FROM accounts WHERE first_name IN (…) "
                   "AND last_name LIKE 'xy%' ORDER BY first_name, last_name, id LIMIT 10",
                   "a replica (least in flight)", "idx_first_last (bench_idx); full scans without it"),
    "get_user": ("SELECT … FROM accounts WHERE id = ?", "a replica", "PRIMARY"),
    "update_user": ("UPDATE accounts SET first_name = ?, last_name = ?, city = ?, updated_at = NOW() WHERE id = ?",
                    "the master", "PRIMARY; changes 3 indexed columns on bench_idx"),
    "update_users": ("UPDATE accounts SET interests = ?, updated_at = NOW() WHERE id BETWEEN ? AND ?",
                     "the master", "PRIMARY (bench_idx, bench_noidx); a scan on bench_nopk"),
}
SQL_FRAGMENTS = ("GROUP BY first_name", "first_name IN (", "ORDER BY first_name, last_name, id LIMIT",
                 "WHERE id BETWEEN %s AND %s", "updated_at = NOW() WHERE id = %s")
SETTINGS_THAT_MATTER = ("binlog_format", "binlog_row_image", "sync_binlog", "innodb_flush_log_at_trx_commit",
                        "innodb_buffer_pool_size", "innodb_log_file_size", "binlog_annotate_row_events",
                        "gtid_strict_mode", "max_connections", "max_binlog_size", "userstat", "log_bin",
                        "slave_parallel_threads", "performance_schema", "max_statement_time")
COLUMN_GUIDE = (
    "**sent/s**: the rate vegeta sent requests at; **goodput/s**: successful responses per second (vegeta's "
    "throughput). A step can send 1750/s and get 830/s back.",
    "**CPU-ms/ok**: a process group's CPU milliseconds per *successful* request (failed ones cost CPU but are "
    "not the work asked for); per request, failures included, is in each run's summary.json.",
    "**CPU %**: % of one core, mean over the middle 80 % of the attack, every sampler on one clock.",
    "**lag**: heartbeat lag (pt-heartbeat's method, written every 100 ms): an idle replica reads 0–100 ms, so "
    "nothing below ~100 ms is a difference.",
    "**catch-up**: seconds from the moment the last request was *sent* until each replica applied the master's "
    "position at that moment (timed in parallel).",
    "**PASS\\***: the step met every criterion but the host or the load generator was saturated (the reason is "
    "given): the figure describes this box, not only the databases.",
    "**ratio**: a cell's median ÷ the baseline cell's; *noise* when the repeats' ranges overlap.",
    "**shed / peak in flight (bound)**: requests the app answered 503 at once because a worker already had its "
    "bound of requests in flight, and the workers' peaks in flight summed (bound: REPLBENCH_MAX_INFLIGHT per "
    "worker; *none* = unbounded, nothing is shed).",
)


def asset_sources(results: Path) -> list[Path]:
    """Committed asset folders whose raw data is not in results/ (a fresh clone, another machine): the report
    rebuilds their sections from the files kept in them (a study's study.json; a sweep's sweep.json with each
    step's summary and block; a fault run's summary), so regenerating never drops what was published."""
    root = results / "report-assets"
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not (results / p.name).is_dir())


def find_sweeps(results: Path) -> list[Path]:
    raw = [p.parent for p in results.glob("*/sweep.json")]
    return sorted(raw + [p for p in asset_sources(results) if (p / "sweep.json").exists()], key=lambda p: p.name)


def find_studies(results: Path) -> list[Path]:
    raw = [p.parent for p in results.glob("study-*/study.json")]
    return sorted(raw + [p for p in asset_sources(results) if (p / "study.json").exists()], key=lambda p: p.name)


def sweep_key(sweep: dict[str, Any]) -> str:
    """A sweep's scenario, with the settings that differ from the reference: 'write', 'write [buffer_pool=128M]'."""
    reference = Knobs()
    changed = {k: v for k, v in (sweep.get("knobs") or {}).items() if getattr(reference, k, v) != v}
    return sweep["scenario"] + (f" [{', '.join(f'{k}={v}' for k, v in changed.items())}]" if changed else "")


def newest_per_scenario(sweeps: list[Path]) -> dict[str, Path]:
    """The newest sweep of each scenario and setting (folders are time-stamped, so the last by name), which the
    report shows."""
    newest: dict[str, Path] = {}
    for sweep_dir in sorted(sweeps, key=lambda p: p.name):
        newest[sweep_key(json.loads((sweep_dir / "sweep.json").read_text()))] = sweep_dir
    return newest


def newest_per_name(studies: list[Path]) -> dict[str, Path]:
    newest: dict[str, Path] = {}
    for folder in sorted(studies, key=lambda p: p.name):
        newest[json.loads((folder / "study.json").read_text())["name"]] = folder
    return newest


STEP_FILES = ("latency.png", "summary.json", "block.txt")  # what a sweep's assets keep of each step
# what the report reads of a run's meta.json (the one page's machine, versions, dataset, disk, settings)
META_KEPT = ("host", "versions", "dataset", "disk", "server_variables_not_default", "knobs_changed", "app")


def load_steps(sweep_dir: Path, sweep: dict[str, Any]) -> list[dict[str, Any]]:
    """Each step with its repeats' summaries, meta and files: from the step folders, or, for a sweep rebuilt from
    its committed assets, from the `<step>-<file>` copies beside its sweep.json (meta then only where kept)."""
    steps = []
    for step in sweep["steps"]:
        repeats = []
        for name in step["folders"]:
            folder = sweep_dir / name
            if folder.is_dir():
                files = {f: folder / f for f in STEP_FILES}
                meta_file = folder / "meta.json"
            else:
                files = {f: sweep_dir / f"{name}-{f}" for f in STEP_FILES}
                meta_file = sweep_dir / "meta.json"
            if files["summary.json"].exists():
                repeats.append({"name": name, "files": files,
                                "summary": json.loads(files["summary.json"].read_text()),
                                "meta": json.loads(meta_file.read_text()) if meta_file.exists() else {}})
        if repeats:
            steps.append({**step, "repeats": repeats})
    return steps


def fig(values: list[float | None], fmt: str = "{:.0f}") -> str:
    """Median, with [min–max] when there are repeats."""
    return spread_text(values, fmt)


def _median(step: dict[str, Any], path: tuple[str, ...]) -> float | None:
    return median([lookup(r["summary"], path) for r in step["repeats"]])


def verdict_of(step: dict[str, Any]) -> str:
    if not step["passed"]:
        return "FAIL: " + "; ".join(step["reasons"])
    notes = step.get("notes") or []
    return "PASS* (" + "; ".join(notes) + ")" if notes else "PASS"


TABLE_HEADER = ("| rate asked | sent/s | goodput/s | p50 ms | p99 ms | max ms | success | app % | master % | "
                "replica1 % | replica2 % | app CPU-ms/ok | master CPU-ms/ok | replicas CPU-ms/ok | db share | "
                "lag p99 ms | catch-up s | binlog B/write | shed / peak in flight (bound) | verdict |\n"
                + "|" + "---|" * 20)


def step_row(step: dict[str, Any]) -> str:
    sums = [r["summary"] for r in step["repeats"]]

    def get(*path: str) -> list[float | None]:
        return [lookup(s, path) for s in sums]

    def either(new: str, old: str) -> list[float | None]:
        return [s.get(new, s.get(old)) for s in sums]

    per_ok = [s.get("cpu_ms_per_success") or s.get("cpu_ms_per_request") or {} for s in sums]
    lag_p99 = [max([v.get("p99_ms") or 0 for v in (s.get("lag") or {}).values()] or [0]) for s in sums]
    catch = [max([v if v is not None else float("inf") for v in (s.get("catch_up_s") or {}).values()] or [0])
             for s in sums]
    cells = [
        f"{step['rate']}{' (refine)' if step.get('refined') else ''}",
        fig(either("rate_sent", "rate_achieved"), "{:.1f}"), fig(either("goodput", "throughput"), "{:.1f}"),
        fig(get("latency_ms", "p50"), "{:.1f}"), fig(get("latency_ms", "p99"), "{:.1f}"),
        fig(get("latency_ms", "max"), "{:.0f}"),
        fig([None if v is None else 100 * v for v in get("success")], "{:.2f}%"),
        *(fig(get("cpu_mean_percent", n)) for n in ("app", "master", "replica1", "replica2")),
        fig([p.get("app") for p in per_ok], "{:.3f}"), fig([p.get("master") for p in per_ok], "{:.3f}"),
        fig([(p.get("replica1") or 0) + (p.get("replica2") or 0) or None for p in per_ok], "{:.3f}"),
        fig([None if s.get("db_share_of_host") is None else 100 * s["db_share_of_host"] for s in sums], "{:.0f}%"),
        fig(lag_p99), fig([None if c == float("inf") else c for c in catch], "{:.1f}"),
        fig(get("binlog", "bytes_per_write"), "{:.0f}"),
        _shed(sums),
        verdict_of(step),
    ]
    return "| " + " | ".join(cells) + " |"


def _shed(sums: list[dict[str, Any]]) -> str:
    """Requests the app shed over its in-flight bound and its workers' peaks in flight summed (medians of the
    repeats), and the bound per worker."""
    admissions = [s.get("app_admission") for s in sums if lookup(s, ("app_admission", "limit_per_worker")) is not None]
    if not admissions:
        return "–"
    bound = "/".join(sorted({appserver.bound_text(a, taken=False) for a in admissions}))
    shed = fig([lookup(s, ("app_admission", "shed")) for s in sums])
    peak = fig([lookup(s, ("app_admission", "peak_in_flight")) for s in sums])
    return f"{shed} / {peak} ({bound})"


class Writer:
    """Writes the assets of one report: every path it gives out is relative to the report's folder."""

    def __init__(self, results: Path, output: Path) -> None:
        self.results = results
        self.root = results / "report-assets"
        self.base = output.parent
        self.written: set[str] = set()

    def folder(self, source: Path) -> Path:
        """The asset folder of a run, study or sweep folder; emptied first, unless the section is rebuilt from that
        very folder (its raw data is not in results/)."""
        name = source.name
        path = self.root / name
        if name not in self.written:
            if not self.is_asset(source):
                shutil.rmtree(path, ignore_errors=True)  # only what this report regenerates
            path.mkdir(parents=True, exist_ok=True)
            self.written.add(name)
        return path

    def is_asset(self, source: Path) -> bool:
        return source.parent.resolve() == self.root.resolve()

    def rel(self, path: Path) -> str:
        return os.path.relpath(path, self.base)

    def copy(self, src: Path, dst: Path) -> None:
        """Copy a run's file into the assets; text loses every machine path (results/… stays)."""
        if dst.exists() and src.resolve() == dst.resolve():
            return  # a section rebuilt from its own assets
        if src.suffix not in (".txt", ".json", ".md"):
            shutil.copyfile(src, dst)
            return
        dst.write_text(self.without_paths(src.read_text()))

    def without_paths(self, text: str) -> str:
        for prefix in (str(self.results.resolve()), str(self.results), str(ROOT)):
            text = text.replace(prefix + "/", "results/" if prefix != str(ROOT) else "")
        return text

    def keep_meta(self, src: Path, dst: Path) -> None:
        """What the report reads of a run's meta.json (META_KEPT), kept beside a section's assets."""
        meta = {k: v for k, v in json.loads(src.read_text()).items() if k in META_KEPT}
        master = (meta.get("server_variables_not_default") or {}).get("master") or {}
        if "server_variables_not_default" in meta:  # only what the one page shows (no datadir paths)
            meta["server_variables_not_default"] = {
                "master": {k: v for k, v in master.items() if k in SETTINGS_THAT_MATTER}}
        kept = json.dumps(meta, indent=2, sort_keys=True) + "\n"
        dst.write_text(self.without_paths(kept))

    def rebuilt(self) -> list[str]:
        """The sections this report rebuilt from committed assets (their raw data is not in results/)."""
        return sorted(name for name in self.written if not (self.results / name).is_dir())

    def kept(self) -> list[str]:
        """Committed asset folders this report did not regenerate (left on disk, never deleted)."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and p.name not in self.written)



def split_kept(results: Path, kept: list[str]) -> tuple[list[str], list[str]]:
    """The kept asset folders as (raw data not in results/, superseded: raw data here but a newer run shown)."""
    newer = [name for name in kept if (results / name).is_dir()]
    return [name for name in kept if name not in newer], newer


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_sweep(steps: list[dict[str, Any]], assets: Path, title: str) -> list[str]:
    plt = _plt()
    rates = [s["rate"] for s in steps]
    files = []
    specs = [
        ("latency.png", "latency percentiles vs rate", "latency (ms, log scale)", True,
         [(k, ("latency_ms", k)) for k in ("p50", "p95", "p99", "max")]),
        ("throughput.png", "sent rate and goodput vs asked rate", "requests/s", False,
         [("sent", ("rate_sent",)), ("goodput", ("goodput",))]),
        ("cpu.png", "CPU per process group vs rate", "CPU (% of one core, steady mean)", False,
         [(n, ("cpu_mean_percent", n)) for n in (*NODES, "harness", "host_busy")]),
        ("lag.png", "replication lag vs rate", "heartbeat lag p99 (ms, log scale)", True,
         [(r, ("lag", r, "p99_ms")) for r in ("replica1", "replica2")]),
    ]
    for name, what, ylabel, log, series in specs:
        fig_, ax = plt.subplots(figsize=(8, 4), dpi=100)
        for label, path in series:
            points = [(x, y) for x, y in zip(rates, (_median(s, path) for s in steps))
                      if y is not None and (not log or y > 0)]
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
        files.append(name)
    return files


def sweep_section(sweep_dir: Path, writer: Writer) -> tuple[list[str], dict[str, Any]]:
    sweep = json.loads((sweep_dir / "sweep.json").read_text())
    steps = load_steps(sweep_dir, sweep)
    name = sweep["scenario"]
    lines = [f"### Sweep `{sweep_key(sweep)}` — `{sweep_dir.name}`", ""]
    if not steps:
        return lines + ["No completed step.", ""], {"scenario": name, "max": None, "max_text": "–", "steps": []}
    assets = writer.folder(sweep_dir)
    (assets / "sweep.json").write_text(json.dumps(sweep, indent=2, sort_keys=True) + "\n")
    first = steps[0]["repeats"][0]
    meta = first["meta"]
    if (sweep_dir / first["name"] / "meta.json").exists():  # kept, so a rebuild from the assets still has it
        writer.keep_meta(sweep_dir / first["name"] / "meta.json", assets / "meta.json")
    reference = Knobs()  # a sweep rebuilt from assets without its meta: the knobs that differ from the reference
    knobs = meta.get("knobs_changed", {k: v for k, v in sweep["knobs"].items() if getattr(reference, k, None) != v})
    lines += [
        f"- **Settings**: {', '.join(f'{k}={v}' for k, v in knobs.items()) or 'reference'}; "
        f"{sweep['duration_s']:g} s per step" + (f", {sweep['repeat']} repeats per step (median [range])"
                                                 if sweep["repeat"] > 1 else ""),
        f"- **Pass criteria**: {sweep['criteria_text']}",
        f"- **Status**: {sweep['status']}; **max sustainable rate: {describe_max(sweep)}**",
        rows_verified([None if lookup(r["summary"], ("rows_checked", "share")) is None
                       else round(100 * r["summary"]["rows_checked"]["share"], 2)
                       for s in steps for r in s["repeats"]], scenarios_write(name)),
        "",
        TABLE_HEADER, *(step_row(s) for s in steps), "",
    ]
    for file in plot_sweep(steps, assets, name):
        lines.append(f"![{name} {file[:-4]}]({writer.rel(assets / file)})")
    blocks = [f"# Per-step blocks of `{sweep_dir.name}`", ""]
    for step in steps:
        for r in step["repeats"]:
            tag = r["name"]
            for src, path in r["files"].items():
                if path.exists():
                    writer.copy(path, assets / f"{tag}-{src}")
            block = (assets / f"{tag}-block.txt").read_text().rstrip("\n") if r["files"]["block.txt"].exists() \
                else "(none)"
            blocks += [f"## {step['rate']} rps — `{tag}`", "", "```", block, "```", "",
                       f"![latency over time]({tag}-latency.png)", ""]
    (assets / "blocks.md").write_text("\n".join(blocks))
    lines += ["", f"Per-step blocks and latency over time: [{sweep_dir.name}/blocks.md]"
                  f"({writer.rel(assets / 'blocks.md')})", ""]
    return lines, {"scenario": name, "key": sweep_key(sweep), "max": sweep["max_sustainable_rate"],
                   "max_text": describe_max(sweep), "steps": steps, "folder": sweep_dir.name, "meta": meta}


def study_section(folder: Path, writer: Writer) -> tuple[list[str], dict[str, Any]]:
    data = json.loads((folder / "study.json").read_text())
    cells = [c["name"] for c in data["cells"]]
    assets = writer.folder(folder)
    data["cpu_net_of_idle"] = net_of_idle(data, folder)
    (assets / "study.json").write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    units_ok = sum(1 for u in data["units"] if u.get("metrics"))
    lines = [f"### Study `{data['name']}` — `{folder.name}`", "", data.get("description", ""), "",
             "- **Cells** (the first is the baseline): " + "; ".join(
                 f"{c['name']} ({', '.join(f'{k}={v}' for k, v in c['changed'].items()) or 'reference'})"
                 for c in data["cells"]),
             f"- **How**: {', '.join(f'{s} at {r}/s' for s, r in data['rates'].items())}; "
             f"{', '.join(data['measures'])}; {data['duration_s']:g} s per run; {data['repeat']} repeats, cells "
             f"interleaved; {units_ok} of {len(data['units'])} units measured; status {data['status']}",
             "- **Data state**: " + ("reset to the pristine dataset before every cell" if data["reset"] == "each-cell"
                                      else data.get("data_state") or "not reset between cells"),
             f"- **Command**: `{data.get('command', '')}`", cpu_kind(data), rows_verified(
                 [u.get("metrics", {}).get("rows_changed_pct") for u in data["units"] if u.get("metrics")],
                 any(scenarios_write(s) for s in data.get("scenarios", []))),
             ""]
    primary = primary_of(data)
    found = study_findings(data, primary)
    held = {(f["group"], f["metric"], f["cell"]) for f in found}
    if data.get("question"):
        lines[4:4] = [f"**Question**: {data['question']} **Primary metrics**: "
                      + (", ".join(BY_KEY[k].label for k in primary) or "none declared") + ".", ""]
    tables: list[str] = []
    for scenario_name, per_metric in data["comparison"].items():
        tables += [f"`{scenario_name}` — median [min–max] over repeats (ratio to `{cells[0]}`); a verdict only on the "
                   "primary metrics (**holds**: Holm-corrected across the study and ≥ 10 %; *not shown*: it does "
                   "not):", "", "| metric | " + " | ".join(f"`{c}`" for c in cells) + " |",
                   "|---|" + "---|" * len(cells)]
        for key, rows in per_metric.items():
            label = BY_KEY[key].label + (" (primary)" if key in primary else "")
            tables.append(f"| {label} | " + " | ".join(
                cell_text(rows[c], ("**holds**" if (scenario_name, key, c) in held else "not shown")
                          if key in primary else None) for c in cells) + " |")
        tables.append("")
    costs = semi_sync_cost(data["cells"], data["comparison"])
    if costs:
        tables += ["Semi-sync's commit cost: each semi-sync cell's write latency against the cell with semi-sync off "
                   "on the same link (medians over repeats; what a commit pays, unlike MariaDB's own wait counter):",
                   "", "| cell | against | p50 with → without (cost) | mean with → without (cost) |",
                   "|---|---|---|---|"]
        for row in costs:
            tables.append(f"| `{row['cell']}` | `{row['baseline']}` | " + " | ".join(
                "–" if row[k] is None else
                f"{row[k]['with']:.2f} → {row[k]['without']:.2f} ms (**{row[k]['cost_ms']:+.2f} ms**"
                f"{'' if row[k]['verdict'] == 'different' else ', noise'})"
                for k in ("commit_p50_ms", "commit_mean_ms")) + " |")
        tables.append("")
    first = next((u for u in data["units"] if u.get("folder") and (folder / u["folder"] / "meta.json").exists()),
                 None)
    if first:  # kept beside study.json, so a rebuild from the assets still has it
        writer.keep_meta(folder / first["folder"] / "meta.json", assets / "meta.json")
    if (assets / "meta.json").exists():
        data["meta"] = json.loads((assets / "meta.json").read_text())
    chart = plot_study(data, assets)
    # the whole study (every table) in its own file beside its assets; report.md keeps what it found
    (assets / "study.md").write_text("\n".join(
        [f"# Study `{data['name']}` — `{folder.name}`", *lines[1:], *tables]
        + ([f"![{data['name']} study]({chart})", ""] if chart else [])).rstrip("\n") + "\n")
    lines += ["- **Findings** (primary metrics only): " + ("; ".join(sentence(data["name"], f) for f in found)
                                                           if found else "none holds") + ".",
              f"- **Every figure**: [{folder.name}/study.md]({writer.rel(assets / 'study.md')})", ""]
    if chart:
        lines += [f"![{data['name']} study]({writer.rel(assets / chart)})", ""]
    return lines, data


APP_TIER_STUDIES = ("inflight-", "app-")  # how the suite's own app should be run: a page of their own
APP_TIER_PAGE = "report-app-tier.md"


def scenarios_write(name: str) -> bool:
    """The scenario (as its file says today) sends updates."""
    try:
        return scenario_file.load(name).writes
    except scenario_file.ScenarioError:
        return False


def net_of_idle(data: dict[str, Any], folder: Path) -> bool:
    """Whether every run of the study has CPU net of idle: from each unit's summary where the raw data is here,
    else as recorded (kept in the assets' study.json, so a rebuild from the assets says the same)."""
    if "cpu_net_of_idle" in data:
        return bool(data["cpu_net_of_idle"])

    def net(unit: dict[str, Any]) -> bool:
        summary = folder / unit["folder"] / "summary.json" if unit.get("folder") else None
        if summary is not None and summary.exists():
            return "cpu_seconds_net" in json.loads(summary.read_text())
        return bool(unit["metrics"].get("cpu_net_of_idle"))

    flags = [net(u) for u in data["units"] if u.get("metrics") and u.get("measure", "run") == "run"]
    return bool(flags) and all(flags)


def cpu_kind(data: dict[str, Any]) -> str:
    if data.get("cpu_net_of_idle"):
        return "- **CPU figures**: net of idle (each run's CPU with nothing but the heartbeat running, subtracted)"
    return ("- **CPU figures**: gross (measured before runs had an idle window: heartbeat, purge and flushing "
            "included, which inflates the per-write cost most at low rates)")


def verified(data: dict[str, Any]) -> bool:
    """A study whose write units were all checked to change their rows (or that writes nothing)."""
    if not any(scenarios_write(s) for s in data.get("scenarios", [])):
        return True
    units = [u for u in data["units"] if u.get("metrics")]
    return bool(units) and all(u["metrics"].get("rows_changed_pct") is not None for u in units
                               if u.get("measure", "run") == "run")


def rows_verified(shares: list[float | None], writes: bool) -> str:
    """Whether the section's writes were checked to change their rows (before that check existed, every run of a
    scenario after the dataset's first rewrote the values its rows held: only updated_at changed)."""
    if not writes:
        return "- **Rows changed**: no update to check"
    got = [s for s in shares if s is not None]
    if not got:
        return ("- **Rows changed**: **not verified** — measured before each write run was checked; from a dataset's "
                "second write run on, updates then rewrote the values the rows held (only updated_at changed), so "
                "its write figures may measure that, not the update it names")
    share = f"{min(got):g} %" if min(got) == max(got) else f"{min(got):g}–{max(got):g} %"
    return (f"- **Rows changed**: verified in {len(got)} of {len(shares)} units (the updated columns changed in "
            f"{share} of row updates)")


def primary_of(data: dict[str, Any]) -> list[str]:
    """A study's primary metrics: as its study.json recorded them, else as its study file declares them now (a
    study run before files declared them)."""
    if data.get("primary"):
        return list(data["primary"])
    try:
        declared = tomllib.loads((STUDY_DIR / f"{data['name']}.toml").read_text()).get("primary") or []
    except (OSError, ValueError):
        return []
    return [str(k) for k in declared if k in BY_KEY]


STUDY_CHART = ("bytes_per_write", "master_ms_per_write", "replica_ms_per_write", "lag_p99_ms", "p99_ms",
               "apply_trx_per_s", "semi_sync_wait_us", "shed", "app_ms_per_ok", "db_share")


def plot_study(data: dict[str, Any], assets: Path) -> str | None:
    """One bar chart per study: key metrics per cell (median, error bars min–max), one panel per metric."""
    panels = [(scenario, key, rows) for scenario, per_metric in data["comparison"].items()
              for key, rows in per_metric.items() if key in STUDY_CHART]
    if not panels:
        return None
    plt = _plt()
    cells = [c["name"] for c in data["cells"]]
    cols = min(3, len(panels))
    nrows = -(-len(panels) // cols)
    fig_, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.2 * nrows), dpi=90, squeeze=False)
    for ax, (scenario, key, rows) in zip(axes.flat, panels):
        meds = [rows[c]["median"] or 0 for c in cells]
        low = [m - (rows[c]["min"] if rows[c]["min"] is not None else m) for m, c in zip(meds, cells)]
        high = [(rows[c]["max"] if rows[c]["max"] is not None else m) - m for m, c in zip(meds, cells)]
        ax.bar(range(len(cells)), meds, yerr=[low, high], capsize=3, color="tab:blue", alpha=0.8)
        ax.set_xticks(range(len(cells)))
        ax.set_xticklabels(cells, rotation=30, ha="right", fontsize=7)
        ax.set_title(f"{scenario}: {BY_KEY[key].label}", fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig_.tight_layout()
    fig_.savefig(assets / "study.png", metadata={"Software": None})
    plt.close(fig_)
    return "study.png"


def fault_runs(results: Path) -> dict[str, Path]:
    """The newest top-level run of each scenario that carried out planned faults (raw, or its committed assets)."""
    newest: dict[str, Path] = {}
    paths = [*results.glob("*/summary.json"), *(p / "summary.json" for p in asset_sources(results))]
    for path in sorted((p for p in paths if p.exists()), key=lambda p: p.parent.name):
        try:
            summary = json.loads(path.read_text())
        except ValueError:
            continue
        if summary.get("planned_faults"):
            newest[summary.get("scenario", path.parent.name)] = path.parent
    return newest


def fault_section(folder: Path, writer: Writer) -> list[str]:
    summary = json.loads((folder / "summary.json").read_text())
    assets = writer.folder(folder)
    lines = [f"### `{summary['scenario']}` at {summary['rate']} rps — `{folder.name}`", "",
             "Faults: " + "; ".join(f"`{p['fault']}` (done at {p['at_s']:.1f} s)" for p in summary["planned_faults"])
             + f"; status {summary.get('status')}", "",
             "| window | seconds | requests | rate/s | errors % | p50 ms | p99 ms |", "|---|---|---|---|---|---|---|"]
    for name, w in (summary.get("fault_windows") or {}).items():
        lines.append(f"| {name} | {w['start_s']:.1f}–{w['end_s']:.1f} | {w['requests']:,} | {_num(w['rate'])} | "
                     f"{_num(w['error_pct'])} | {_num(w['p50_ms'])} | {_num(w['p99_ms'])} |")
    lines.append("")
    for r in summary.get("routing") or []:
        if r["last_served_s"] is None and r["node"] not in (summary.get("served_by") or {}):
            continue
        stopped = "served nothing after it went down" if r["last_served_s"] is None else \
            f"served its last request {r['last_served_s'] - r['down_at_s']:.2f} s after it went down"
        back = "" if r["back_at_s"] is None else (
            ", was not used again" if r["first_served_back_s"] is None else
            f", was used again {r['first_served_back_s'] - r['back_at_s']:.2f} s after it was back")
        lines.append(f"- `{r['node']}` {stopped}{back}.")
    for src in ("latency.png", "block.txt", "summary.json"):
        if (folder / src).exists():
            writer.copy(folder / src, assets / src)
    if (assets / "latency.png").exists():
        lines += ["", f"![{summary['scenario']} latency over time]({writer.rel(assets / 'latency.png')})"]
    return lines + [""]


def comparison(latest: dict[str, dict[str, Any]]) -> list[str]:
    lines: list[str] = []
    for indexed, plain in PAIRS:
        if indexed not in latest or plain not in latest:
            continue
        a, b = latest[indexed], latest[plain]
        if not lines:
            lines += ["## Paired sweeps: what the indexes (and the primary key) cost", ""]
        lines += [f"### `{indexed}` vs `{plain}`", "", "| | " + f"`{indexed}` | `{plain}` |", "|---|---|---|",
                  f"| max sustainable rate | {a['max_text']} | {b['max_text']} |"]
        common = sorted({s["rate"] for s in a["steps"]} & {s["rate"] for s in b["steps"]})
        if common:
            lines += ["", "Per successful request at the rates both sweeps ran (median of repeats):", "",
                      "| rate | metric | " + f"`{indexed}` | `{plain}` | ratio |", "|---|---|---|---|---|"]
            by_a = {s["rate"]: s for s in a["steps"]}
            by_b = {s["rate"]: s for s in b["steps"]}
            for rate in common:
                for label, path in (("master CPU-ms/ok", ("cpu_ms_per_success", "master")),
                                    ("replica1 CPU-ms/ok", ("cpu_ms_per_success", "replica1")),
                                    ("binlog bytes/write", ("binlog", "bytes_per_write")),
                                    ("p99 latency ms", ("latency_ms", "p99"))):
                    va, vb = _median(by_a[rate], path), _median(by_b[rate], path)
                    ratio = f"{va / vb:.2f}×" if va and vb else "–"
                    lines.append(f"| {rate} | {label} | {_num(va)} | {_num(vb)} | {ratio} |")
        lines.append("")
    return lines


def figure(row: dict[str, Any]) -> str:
    """'0.484 [0.41–0.575]', '2,922 [376–3,463]': a cell's median and range as the study tables print them."""
    return fmt(row["median"]) + ("" if row["min"] == row["max"] else f" [{fmt(row['min'])}–{fmt(row['max'])}]")


def index_cost(studies: list[dict[str, Any]]) -> list[str]:
    """One sentence per memory regime, from study working-set: what the four secondary indexes cost each replica
    under ROW replication (write against write-noindex, the same update of the same three columns)."""
    data = next((d for d in studies if d["name"] == "working-set"), None)
    if not data or not data["comparison"]:
        return []
    per_metric = next(iter(data["comparison"].values()))
    cells = {(c.get("scenario"), c["knobs"].get("buffer_pool")): c["name"] for c in data["cells"]}
    pools = sorted({pool for _, pool in cells}, key=lambda p: -parse_size(p) if p else 0)
    lines = ["## What indexes cost the replicas under row-based replication", "",
             f"Study `working-set`: `write` (four secondary indexes) against `write-noindex`, the same update of "
             f"the same three columns at {', '.join(f'{r}/s' for r in sorted(set(data['rates'].values())))}, "
             f"{data['repeat']} repeats interleaved; the busier replica's figures, median [min–max]; *noise* where "
             f"the repeats overlap; CPU {'net of idle' if 'net of idle' in cpu_kind(data) else 'gross'}.", ""]

    def row(key: str, cell: str | None) -> dict[str, Any] | None:
        return (per_metric.get(key) or {}).get(cell) if cell else None

    def both(key: str, indexed: str, bare: str, unit: str = "") -> str:
        a, b = row(key, indexed), row(key, bare)
        if not a or not b or a["median"] is None or b["median"] is None:
            return "–"
        text = f"{figure(a)}{unit} against {figure(b)}{unit}"
        return text + ("" if separated(a["values"], b["values"]) else " (noise)")

    for pool in pools:
        indexed, bare = cells.get(("write", pool)), cells.get(("write-noindex", pool))
        if not indexed or not bare:
            continue
        a, b = row("replica_ms_per_write", indexed), row("replica_ms_per_write", bare)
        if not a or not b or not a["median"] or not b["median"]:
            continue
        lines.append(
            f"- **{pool or 'reference'} pool**: the indexes cost each replica {a['median'] / b['median']:.1f}× the "
            f"CPU per applied write ({both('replica_ms_per_write', indexed, bare, ' ms')}), "
            f"{both('replica_disk_reads_per_write', indexed, bare)} pages read from disk and "
            f"{both('replica_kb_written_per_write', indexed, bare, ' KB')} written per write; replica lag p99 "
            f"{both('lag_p99_ms', indexed, bare, ' ms')}; client p99 {both('p99_ms', indexed, bare, ' ms')}.")
    return lines + [""]


REFERENCE_POOLS = ("", "128M")  # our sweeps set beside the reference's: the reference pool, and the write-up's


def reference_comparison(latest: dict[str, dict[str, Any]]) -> list[str]:
    """The reference write-up's write steps beside ours at the same rates, per request: its "Gunicorn cpu / Mysql
    cpu: master + 2 * replica" line as CPU-ms per write, and its p50/p95/p99, against our sweeps with the
    reference pool (the whole set in memory) and with a 128M pool (the write-up ran a Docker default pool)."""
    found = {(scenario, pool): latest.get(scenario + (f" [buffer_pool={pool}]" if pool else ""))
             for scenario in reference.WRITES for pool in REFERENCE_POOLS}
    if not any(found.values()):
        return []
    lines = ["## The reference experiment's write steps beside ours", "",
             f"The write-up ({reference.SOURCE}: 16 vCPU, 12 gunicorn workers, a Docker default pool) against our "
             "sweeps of the same rates on this 2-core box, per successful write so that the hosts compare "
             "(its CPU % × 10 ÷ rate). Ours: median of repeats; replica = the mean of the two replicas; *not run*: "
             "the sweep stopped one step after its first failing step.", ""]
    for scenario, steps in reference.WRITES.items():
        lines += [f"### `{scenario}`", "",
                  "| rate | source | app CPU-ms/write | master CPU-ms/write | replica CPU-ms/write (each) | p50 ms | "
                  "p95 ms | p99 ms | replica lag p99 ms |", "|---|---|---|---|---|---|---|---|---|"]
        for ref in steps:
            lines.append(f"| {ref.rate} | the write-up | {_num(ref.cpu_ms(ref.gunicorn))} | "
                         f"{_num(ref.cpu_ms(ref.master))} | {ref.replica_text()} | {_num(ref.p50_ms)} | "
                         f"{_num(ref.p95_ms)} | {_num(ref.p99_ms)} | – |")
            for pool in REFERENCE_POOLS:
                info = found[(scenario, pool)]
                step = next((s for s in (info or {}).get("steps", []) if s["rate"] == ref.rate), None)
                label = f"ours, {pool or 'reference'} pool"
                if step is None:
                    lines.append(f"| {ref.rate} | {label} | *not run* | | | | | | |")
                    continue
                per_ok = [_median(step, ("cpu_ms_per_success", n)) for n in ("app", "master", "replica1",
                                                                            "replica2")]
                replicas = [v for v in per_ok[2:] if v is not None]
                lag = max([_median(step, ("lag", r, "p99_ms")) or 0 for r in ("replica1", "replica2")])
                lines.append(f"| {ref.rate} | {label} | {_num(per_ok[0])} | {_num(per_ok[1])} | "
                             f"{_num(sum(replicas) / len(replicas) if replicas else None)} | "
                             + " | ".join(_num(_median(step, ("latency_ms", q))) for q in ("p50", "p95", "p99"))
                             + f" | {_num(lag)} |")
        lines.append("")
    return lines


def _num(value: float | None) -> str:
    return "–" if value is None else (f"{value:.3f}" if value < 10 else f"{value:.1f}")


def one_page(latest: dict[str, dict[str, Any]], studies: list[dict[str, Any]], kept: list[str],
             writer: Writer) -> list[str]:
    metas = [info["meta"] for info in latest.values() if info.get("meta")]
    metas += [data["meta"] for data in studies if data.get("meta")]
    lines = ["# replbench report", "",
             "What MySQL-style row-based replication costs, measured on a master and two replicas (MariaDB, GTID "
             "replication) behind an aiohttp service driven by vegeta at constant rates. Generated by "
             "`./run.sh report` from `results/`; every figure comes from a file kept beside it.", "",
             "## What was measured", "",
             "| endpoint | SQL (per request) | served by | index used |", "|---|---|---|---|"]
    for name, (statement, where, index) in ENDPOINT_SQL.items():
        lines.append(f"| `{name}` | `{statement}` | {where} | {index} |")
    lines += ["", "Every app statement carries a 2 s server-side limit (`max_statement_time`): a query that needs "
              "longer is cut and answered 504. Without the name index a search is two full scans of 8M rows "
              "(about 4 s), so `read-noindex` fails at any rate — that is the finding, not a bug.", ""]
    host = next((m.get("host") for m in metas if m.get("host")), None)
    version = next(((m.get("versions") or {}).get("mariadb") for m in metas if m.get("versions")), None)
    dataset = next((m.get("dataset") for m in metas if m.get("dataset")), None)
    lines += ["## On what", ""]
    if host:
        lines.append(f"- **Machine**: {host.get('cores')} cores ({host.get('cpu_model', 'CPU model not recorded')}), "
                     f"{host.get('memory_gib')} GiB; calibration score {host.get('calibration_score', '–')} "
                     "(M iterations/s of a fixed integer loop on one core); "
                     f"every process (3 nodes, app, vegeta) on the same cores")
    disk = next((m.get("disk") for m in metas if m.get("disk")), None)
    if disk:
        lines.append(f"- **Disk** under the datadirs: {disk.get('device')} ({disk.get('filesystem')}), fsync of a "
                     f"small write {disk.get('fsync_ms_median')} ms median ({disk.get('fsync_ms_max')} ms max of "
                     f"{disk.get('fsync_samples')}): with sync_binlog=1 and innodb_flush_log_at_trx_commit=1 every "
                     "commit waits for it")
    if version:
        lines.append(f"- **MariaDB** {version}; reference settings: ROW, FULL row image, annotate on, "
                     "sync_binlog=1, innodb_flush_log_at_trx_commit=1, one SQL thread, semi-sync off")
    variables = next((m.get("server_variables_not_default") for m in metas
                      if m.get("server_variables_not_default")), None)
    if variables and variables.get("master"):
        shown = {k: v for k, v in variables["master"].items() if k in SETTINGS_THAT_MATTER}
        lines.append("- **Not at the server's compiled default** (master; every node's full list is in each run's "
                     "meta.json): " + ", ".join(f"`{k}={v['value']}` (default {v['default']})"
                                              for k, v in sorted(shown.items())))
    if dataset:
        lines.append(f"- **Dataset**: {dataset.get('accounts') or 0:,} accounts (seed {dataset.get('seed')}); "
                     f"bench_nopk {dataset.get('nopk_rows') or 0:,} rows (no primary key)")
    if not host:
        lines.append("- (no sweep with run metadata in results/)")
    lines += ["", "## Findings", "",
              "Only from each study's declared primary metrics (its file's `primary`), each cell against the "
              "baseline: Welch's t-test on log values, Holm-corrected over the study's comparisons (family-wise "
              f"error {ALPHA:g}), and an effect of at least {FINDING_MIN_FACTOR - 1:.0%}; the largest effects first, "
              f"at most {MAX_FINDINGS}. Every other figure is in the tables, without a verdict.", ""]
    found = sorted(((data["name"], f) for data in studies if verified(data)
                    for f in study_findings(data, primary_of(data))), key=lambda item: -item[1]["effect"])
    findings = [f"- {sentence(name, f)}." for name, f in found[:MAX_FINDINGS]]
    unverified = [data["name"] for data in studies if not verified(data)]
    if unverified:
        findings.append("- No finding is stated from " + ", ".join(f"`{n}`" for n in unverified) + ": measured before "
                        "each write run was checked to change its rows (see each section), they wait for a rerun.")
    for info in latest.values():
        others = info.get("earlier_max") or []
        findings.append(f"- `{info.get('key', info['scenario'])}`: max sustainable rate {info['max_text']} here"
                        + (f" (the newest sweep; earlier sweeps of it in results/ found {', '.join(others)}: one "
                           "sweep is not a measurement of the limit on a noisy machine)" if others else "") + ".")
    lines += findings or ["- No study or sweep in results/ yet."]
    lines += ["", *index_cost(studies), "## How to read the columns", "", *(f"- {g}" for g in COLUMN_GUIDE), ""]
    return lines


def bookkeeping(kept: list[str], writer: Writer) -> list[str]:
    """Which sections were rebuilt from committed assets and which asset folders were left alone: the end of the
    report, not its first page."""
    lines: list[str] = ["## Bookkeeping", ""]
    rebuilt = writer.rebuilt()
    if rebuilt:
        lines += [f"{len(rebuilt)} section(s) were rebuilt from their committed assets (study.json, sweep.json and "
                  "each step's summary and block), their raw data not being in results/: "
                  + ", ".join(f"`{name}`" for name in rebuilt) + ".", ""]
    if kept:
        earlier = writer.root / "earlier-sweeps.md"
        if earlier.exists():
            lines += ["Earlier sweeps, published by the previous version and kept unchanged (their raw data is not "
                      f"in this checkout): [{earlier.name}]({writer.rel(earlier)}).", ""]
        absent, newer = split_kept(writer.results, kept)
        if absent:
            lines += ["Committed asset folders whose raw data is not in results/ are kept, not regenerated: "
                      + ", ".join(f"`results/report-assets/{k}`" for k in absent) + ".", ""]
        if newer:
            lines += ["Committed asset folders of runs superseded by a newer run of their kind are kept, not "
                      "regenerated: " + ", ".join(f"`results/report-assets/{k}`" for k in newer) + ".", ""]
    return lines


def generate(settings: Settings, output: Path | None = None) -> tuple[Path, list[str]]:
    """Write report.md; returns its path and the committed asset folders it left alone."""
    results = settings.results
    output = output or ROOT / "report.md"
    writer = Writer(results, output)
    studies_text: list[str] = []
    studies: list[dict[str, Any]] = []
    app_text: list[str] = []
    for folder in sorted(newest_per_name(find_studies(results)).values()):
        lines, data = study_section(folder, writer)
        if data["name"].startswith(APP_TIER_STUDIES):
            app_text += lines
        else:
            studies_text += lines
            studies.append(data)
    app_page = output.parent / APP_TIER_PAGE
    if app_text:
        app_page.write_text("\n".join(["# replbench: the app tier", "",
                                       "How the suite's own app should be run (its in-flight bound, workers and "
                                       "transport), measured by studies: not what a DBA reads first. Back to "
                                       f"[{output.name}]({output.name}).", "", *app_text]).rstrip("\n") + "\n")
    faults_text: list[str] = []
    for folder in sorted(fault_runs(results).values()):
        faults_text += fault_section(folder, writer)
    sweeps = find_sweeps(results)
    shown = newest_per_scenario(sweeps)
    sweeps_text: list[str] = []
    latest: dict[str, dict[str, Any]] = {}
    for sweep_dir in sorted(shown.values()):
        lines, info = sweep_section(sweep_dir, writer)
        sweeps_text += lines
        if info["steps"]:
            latest[info["key"]] = info
    superseded = [p for p in sweeps if p not in shown.values()]
    for path in superseded:  # the one page states what the other sweeps of a scenario found
        data = json.loads((path / "sweep.json").read_text())
        if sweep_key(data) in latest:
            latest[sweep_key(data)].setdefault("earlier_max", []).append(describe_max(data))
    kept = writer.kept()
    text = one_page(latest, studies, kept, writer)
    text += ["## Studies: what each replication setting costs", ""] + (studies_text or ["No study in results/ yet: "
                                                                                       "`./run.sh study <name>`.", ""])
    if app_text:
        text += [f"The app tier's studies (in-flight bound, workers, transport) are on their own page: "
                 f"[{APP_TIER_PAGE}]({APP_TIER_PAGE}).", ""]
    if faults_text:
        text += ["## Faults: before, during and after", ""] + faults_text
    text += ["## Sweeps: where each setup breaks", ""] + (sweeps_text or ["No sweep found in results/: run "
                                                                         "`./run.sh sweep <scenario>` first.", ""])
    if superseded:
        text += ["Older sweeps (superseded by the newest of their scenario): "
                 + ", ".join(f"`{p.name}`" for p in superseded), ""]
    text += comparison(latest)
    text += reference_comparison(latest)
    text += bookkeeping(kept, writer)
    output.write_text("\n".join(text).rstrip("\n") + "\n")
    return output, kept
