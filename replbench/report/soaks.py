"""report.md's "Write-back at steady state" (under the cost sheet): what a write costs once InnoDB's flushing has
settled, from soaks (long runs whose per-write cost is read window by window: analysis/soak), beside the cost
sheet's short runs, whose write-back is forced out after them (an upper bound on pages and bytes written, not on
CPU). Every figure is read from the committed soak runs core/config.SOAK_RUNS names; none there, no section."""

from __future__ import annotations

from pathlib import Path

from ..analysis.soak import SteadyState, steady_state
from ..core.config import ROOT, SOAK_RUNS
from ..core.results import Num, StudyRecord, read_meta, read_summary
from ..core.stats import median
from ..topology.knobs import parse_size

HEADING = "Write-back at steady state"
DOC = "docs/runs.md#soaks"


def _one(value: Num | None, digits: int) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _per_write(figures: dict[str, Num | None] | None) -> str:
    if not figures:
        return "–"
    return (f"{_one(figures.get('cpu_ms_per_write_net'), 3)} CPU-ms, "
            f"{_one(figures.get('pages_flushed_per_write'), 2)} pages flushed, "
            f"{_one(figures.get('kb_written_per_write'), 1)} KB written")


def _how(s: SteadyState) -> str:
    if s.how == "equilibrium":
        return f"reached from {s.from_s:g} s"  # the section's text says what 'reached' means
    if s.how == "cycles":
        return "write-back in bursts, never flat: over whole cycles"
    if not s.moving:
        return "not reached"
    return "not reached: " + s.moving[0] + (f" (and {len(s.moving) - 1} more)" if len(s.moving) > 1 else "")


def _bound(study: StudyRecord | None, scenario: str, rate: int, pool: int | None) -> str:
    """The same scenario, rate and pool's short runs with their write-back forced out (study working-set's cell, in
    report.md's campaign): the replica's per-write figures, median of the repeats; '–' where it has none."""
    cell = next((c.name for c in (study.cells if study else None) or [] if c.scenario == scenario and c.knobs
                 and c.knobs.buffer_pool and parse_size(c.knobs.buffer_pool) == pool), None)
    if study is None or cell is None or (study.rates or {}).get(scenario) != rate:
        return "–"
    runs = [u.metrics for u in study.units or [] if u.cell == cell and u.metrics is not None]
    return _per_write({"cpu_ms_per_write_net": median([m.replica_ms_per_write_with_writeback for m in runs]),
                       "pages_flushed_per_write": median([m.replica_pages_flushed_per_write_with_writeback
                                                          for m in runs]),
                       "kb_written_per_write": median([m.replica_kb_written_per_write_with_writeback for m in runs])})


def _each(study: StudyRecord | None) -> str:
    return f" ({study.duration_s:g} s each)" if study is not None and study.duration_s else ""


def section(root: Path = ROOT, studies: list[StudyRecord] | None = None) -> list[str]:
    """The section (root: where the committed soak runs are read from, the repository's by default), each soak beside
    the short runs' bound at its scenario, rate and pool where study working-set of `studies` ran them."""
    bounds = next((d for d in studies or [] if d.name == "working-set"), None)
    rows = []
    for folder, page in SOAK_RUNS:
        try:
            summary, meta = read_summary(root / folder), read_meta(root / folder)
        except (OSError, ValueError):
            continue
        if summary.soak is None or summary.scenario is None or summary.rate is None:
            continue
        steady = steady_state(summary.soak, summary.scenario, int(summary.rate), float(summary.duration_s or 0))
        if steady is None:
            continue
        pools = {b.pool_bytes for b in (meta.buffer_pools or {}).values() if b.pool_bytes}
        pool = f"{min(pools) / 2**20:,.0f} MB" if pools else "–"
        bound = _bound(bounds, steady.scenario, steady.rate, min(pools) if pools else None)
        commit = ((meta.versions.git_commit if meta.versions else None) or "–")[:7]
        replica = _per_write(steady.replica) if steady.how != "not reached" else "–"
        master = _per_write(steady.master) if steady.how != "not reached" else "–"
        rows.append(f"| `{steady.scenario}` {steady.rate}/s, {steady.seconds / 60:g} min | {pool} | {_how(steady)} | "
                    f"{replica} | {bound} | {master} | `{commit}` | [evidence]({page}) |")
    if not rows:
        return []
    return [f"### {HEADING}", "",
            "A short run's write-back is forced out after it, which writes each dirty page once: an upper bound on the "
            "pages and bytes a write costs, not on its CPU (the cost sheet's *with write-back*, where its runs "
            "recorded it). A soak runs long "
            "enough for InnoDB's page cleaner to write back as it goes; once its checkpoint age and dirty pages are "
            f"flat, each window's cost per write is the steady state's, write-back included ([runs.md]({DOC})). "
            "Per successful write, CPU net of idle; *short runs' bound*: study "
            f"working-set's runs of that scenario, rate and pool{_each(bounds)}, with write-back.", "",
            "| soak | buffer pool | steady state | worse replica per write | its short runs' bound | master per "
            "write | commit | |", "|---|---|---|---|---|---|---|---|", *rows, ""]
