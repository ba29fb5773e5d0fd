"""The studies' sections: per study its question, cells, how it ran and what its primary metrics found (the full
tables on a study.md of its own); the index cost per memory regime from study working-set.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from ..analysis.findings import brief, nothing_held, study_findings
from ..analysis.studymetrics import (
    BY_KEY,
    baseline_words,
    cell_text,
    fmt,
    index_costs,
    load_table,
    measured,
    semi_sync_cost,
)
from ..core.config import STUDY_DIR
from ..core.results import StudyRecord, document, load, read_meta, study_of, write_json
from ..core.stats import separated
from ..topology.knobs import parse_size
from .assets import Writer
from .figures import figure
from .plots import plot_study
from .provenance import cpu_kind, net_of_idle, study_rows

APP_TIER_STUDIES = ("inflight-", "app-")  # how the suite's own app should be run: a page of their own


APP_TIER_PAGE = "report-app-tier.md"


def primary_of(doc: dict[str, Any] | StudyRecord) -> list[str]:
    """A study's primary metrics: as its study.json recorded them, else as its study file declares them now (a
    study run before files declared them)."""
    data = study_of(doc)
    if data.primary:
        return list(data.primary)
    try:
        declared = tomllib.loads((STUDY_DIR / f"{data.name}.toml").read_text()).get("primary") or []
    except (OSError, ValueError):
        return []
    return [str(k) for k in declared if k in BY_KEY]


def study_section(folder: Path, writer: Writer) -> tuple[list[str], StudyRecord]:
    """A study's section (its study.md beside its assets), and its record as the one page reads it."""
    doc = load(folder / "study.json")  # the file's dictionary: written back to the assets, and what analysis takes
    assets = writer.folder(folder)
    doc["cpu_net_of_idle"] = net_of_idle(doc, folder)
    write_json(assets / "study.json", doc)
    data = study_of(doc)
    cells = [c.name for c in data.cells]
    units_ok = sum(1 for u in data.units if measured(document(u)))
    lines = [f"### Study `{data.name}` — `{folder.name}`", "", data.description or "", "",  # never null
             "- **Cells** (" + (f"each against {baseline_words(doc)}" if data.baseline_per else
                                "the first is the baseline") + "): " + "; ".join(
                 f"{c.name} ({', '.join(f'{k}={v}' for k, v in c.changed.items()) or 'reference'})"
                 for c in data.cells),
             f"- **How**: {', '.join(f'{s} at {r}/s' for s, r in data.rates.items())}; "
             f"{', '.join(data.measures)}; {data.duration_s:g} s per run; {data.repeat} repeats, cells "
             f"interleaved; {units_ok} of {len(data.units)} units measured; status {data.status}",
             "- **Data state**: " + ("reset to the pristine dataset before every cell" if data.reset == "each-cell"
                                      else data.data_state or "not reset between cells"),
             f"- **Command**: `{data.command or ''}`", cpu_kind(data), study_rows(data),  # never null
             ""]
    primary = primary_of(data)
    found = study_findings(doc, primary)
    held = {(f["group"], f["metric"], f["cell"]) for f in found}
    if data.question:
        lines[4:4] = [f"**Question**: {data.question} **Primary metrics**: "
                      + (", ".join(BY_KEY[k].label for k in primary) or "none declared") + ".", ""]
    tables: list[str] = []
    for scenario_name, per_metric in data.comparison.items():
        tables += [f"`{scenario_name}` — median [min–max] over repeats (ratio to {baseline_words(doc)}); a verdict "
                   "only on the "
                   "primary metrics (**holds**: Holm-corrected across the study and ≥ 10 %; *not shown*: it does "
                   "not):", "", "| metric | " + " | ".join(f"`{c}`" for c in cells) + " |",
                   "|---|" + "---|" * len(cells)]
        for key, rows in per_metric.items():
            label = BY_KEY[key].label + (" (primary)" if key in primary else "")
            tables.append(f"| {label} | " + " | ".join(
                cell_text(rows[c], ("**holds**" if (scenario_name, key, c) in held else "not shown")
                          if key in primary else None) for c in cells) + " |")
        tables.append("")
    costs = semi_sync_cost(doc["cells"], doc["comparison"])
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
    if any("load" in c.changed for c in data.cells):
        tables += ["Near and above the max: each cell's runs within the scenario's pass criteria, and its goodput as a "
                   "share of the study's rate (the max; median [min–max] over repeats):", "",
                   "| scenario | cell | runs passing | goodput, % of the max |", "|---|---|---|---|"]
        for row in load_table(doc["units"], doc["cells"], doc["rates"]):
            share = row["goodput_pct_of_max"]
            tables.append(f"| {row['scenario']} | `{row['cell']}` | {row['passed']} of {row['runs']} | "
                          + ("–" if share["median"] is None else f"{share['median']:.0f} % [{share['min']:.0f}–"
                             f"{share['max']:.0f}]") + " |")
        tables.append("")
    first = next((u for u in data.units if u.folder and (folder / u.folder / "meta.json").exists()), None)
    if first:  # kept beside study.json, so a rebuild from the assets still has it
        writer.keep_meta(folder / first.folder / "meta.json", assets / "meta.json")
    if (assets / "meta.json").exists():  # for the one page's machine and versions
        data = data.model_copy(update={"meta": read_meta(assets)})
    chart = plot_study(data, assets)
    # the whole study (every table) in its own file beside its assets; report.md keeps what it found
    (assets / "study.md").write_text("\n".join(
        [f"# Study `{data.name}` — `{folder.name}`", *lines[1:], *tables]
        + ([f"![{data.name} study]({chart})", ""] if chart else [])).rstrip("\n") + "\n")
    held = ("; ".join(brief(f) for f in found) + f". p: Welch's t-test on log values, Holm-corrected over the "
            f"study's {found[0]['comparisons']} comparisons") if found else nothing_held(doc, primary)
    lines += [f"- **Findings** (primary metrics only): {held}.", *costliest_index(doc),
              f"- **Every figure**: [{folder.name}/study.md]({writer.rel(assets / 'study.md')})", ""]
    if chart:
        lines += [f"![{data.name} study]({writer.rel(assets / chart)})", ""]
    return lines, data


def costliest_index(doc: dict[str, Any]) -> list[str]:
    """For a study whose cells run without one index each: per group and other settings, which index costs the
    replicas most CPU per applied write (its cell against the one with every index and the same settings), and what
    each of the others costs; where no index's cost is beyond the repeats' noise, that is what it says."""
    costs = index_costs(doc["cells"], doc["comparison"])
    if not costs:
        return []
    parts = []
    for group in dict.fromkeys(c["group"] for c in costs):
        for settings in dict.fromkeys(tuple(sorted(c["settings"].items())) for c in costs if c["group"] == group):
            mine = [c for c in costs if c["group"] == group and tuple(sorted(c["settings"].items())) == settings]
            where = f"`{group}`" + (f", {', '.join(f'{k}={v}' for k, v in settings)}" if settings else "")
            top, rest = mine[0], mine[1:]
            each = ", ".join(f"`{c['index']}` {100 * c['share']:+.0f} %"
                             + ("" if c["verdict"] == "different" else " (noise)") for c in rest)
            if top["cost"] > 0 and top["verdict"] == "different":
                parts.append(f"{where}: **`{top['index']}`** costs most, {fmt(top['with'])} ms a write with every "
                             f"index against {fmt(top['without'])} without it ({100 * top['share']:+.0f} %); the "
                             f"others {each}")
            else:
                parts.append(f"{where}: no index's cost is beyond the repeats' noise (the largest, `{top['index']}`, "
                             f"{100 * top['share']:+.0f} %; the others {each})")
    return ["- **Which index costs the replicas most** (replica CPU-ms per applied write, each index missing "
            "against every index present, the other settings the same; medians over repeats, the cost as a share "
            "of the figure with every index): " + "; ".join(parts) + "."]


def index_cost(studies: list[dict[str, Any]] | list[StudyRecord]) -> list[str]:
    """One sentence per memory regime, from study working-set: what the four secondary indexes cost each replica
    under ROW replication (write against write-noindex, the same update of the same three columns)."""
    data = next((d for d in map(study_of, studies) if d.name == "working-set"), None)
    if not data or not data.comparison:
        return []
    per_metric = next(iter(data.comparison.values()))
    cells = {(c.scenario, c.knobs.get("buffer_pool")): c.name for c in data.cells}  # knobs: a map of settings
    pools = sorted({pool for _, pool in cells}, key=lambda p: -parse_size(p) if p else 0)
    lines = ["## What indexes cost the replicas under row-based replication", "",
             f"Study `working-set`: `write` (four secondary indexes) against `write-noindex`, the same update of "
             f"the same three columns at {', '.join(f'{r}/s' for r in sorted(set(data.rates.values())))}, "
             f"{data.repeat} repeats interleaved; the busier replica's figures, median [min–max]; *noise* where "
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
