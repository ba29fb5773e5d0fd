"""The studies' sections, on a page of their own beside report.md (STUDIES_PAGE): per study its question, cells,
how it ran and what its primary metrics found (the full tables on a study.md of its own); report.md keeps one line
per study, its question and headline, linked to its section (study_line: issue 73, a page a DBA reads); the index
cost per memory regime from study working-set.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from ..analysis.answers import RoundTrips, compression_effects, pool_index_costs, round_trips
from ..analysis.byhand import SemiSyncByHand, semi_sync_by_hand
from ..analysis.findings import (
    Compared,
    brief,
    headline,
    judged,
    nothing_held,
    untested_effects,
    untested_text,
    words_of,
)
from ..analysis.studymetrics import (
    BY_KEY,
    COMMIT_FIGURES,
    CUT,
    FAILED,
    NOT_REACHED,
    PAGES_VARY,
    REPLICA_MEANS,
    IndexCost,
    baseline_words,
    cell_factors,
    cell_text,
    cells_not_run,
    core_ceiling_text,
    figure_text,
    file_cells,
    fmt,
    index_costs,
    load_table,
    measured,
    ran_cells,
    semi_sync_cost,
)
from ..core.config import FINDING_MIN_REPEATS, ROOT, SEMI_SYNC_BY_HAND, STUDY_DIR, Word
from ..core.records import COMPLETE
from ..core.results import (
    Comparison,
    ComparisonRow,
    StudyCell,
    StudyPlot,
    StudyRecord,
    read_meta,
    read_study,
    write_record,
)
from .assets import Writer
from .costsheet import DEFINITIONS, compressed_text
from .plots import plot_study
from .provenance import cpu_kind, net_of_idle, study_rows, verified

APP_TIER_STUDIES = ("inflight-", "app-")  # how the suite's own app should be run: a page of their own


APP_TIER_PAGE = "report-app-tier.md"
STUDIES_PAGE = "report-studies.md"  # beside report.md: every study's section, which report.md lists a line each


def primary_of(data: StudyRecord) -> list[str]:
    """A study's primary metrics: as its study.json recorded them, else as its study file declares them now (a
    study run before files declared them)."""
    if data.primary:
        return list(data.primary)
    try:
        declared = tomllib.loads((STUDY_DIR / f"{data.name}.toml").read_text()).get("primary") or []
    except (OSError, ValueError):
        return []
    return [str(k) for k in declared if k in BY_KEY]


def plot_of(data: StudyRecord) -> StudyPlot | None:
    """A study's chart axes: as its study.json recorded them, else as its study file's [plot] declares them now (a
    study run before files declared one); None: a bar per cell."""
    if data.plot is not None:
        return data.plot
    try:
        declared = tomllib.loads((STUDY_DIR / f"{data.name}.toml").read_text()).get("plot")
    except (OSError, ValueError):
        return None
    if not isinstance(declared, dict) or not isinstance(declared.get("x"), str):
        return None
    lines = declared.get("lines")
    return StudyPlot(x=declared["x"], lines=lines if isinstance(lines, str) else None)


def declared_of(data: StudyRecord) -> list[str] | None:
    """The cells a study's file declares, by name, for a study.json that predates cells_cut (2026-12-02) and whose
    command cut cells with --only: as the file declares them now (it may have changed since; the text says so). None
    where study.json records them, where nothing was cut, or where no such file is shipped."""
    if data.cells_cut is not None or "--only" not in (data.command or ""):
        return None
    try:
        return file_cells(tomllib.loads((STUDY_DIR / f"{data.name}.toml").read_text())) or None
    except (OSError, ValueError):
        return None


def description(data: StudyRecord) -> str:
    """A study's description in report.md and its study.md, generated from the cells that ran (analysis/studymetrics
    ran_cells): how many of the study file's, what they vary and share; then, by name, the file's cells that did not
    run and why (cut by --only, failed, never reached). The study file's own description describes every cell of the
    file, so it promised cells --only cut: it is for `./run.sh list` and --dry-run, never printed here
    (docs/studies.md, "Report and compare")."""
    ran = set(ran_cells(data))
    cells = [c for c in cells_of(data) if name_of(c) in ran]
    declared = declared_of(data)
    missing = cells_not_run(data, declared)
    cut_unnamed = "--only" in (data.command or "") and data.cells_cut is None and declared is None
    varying, shared = cell_factors(cells)
    each = [f"{k} ({' | '.join(v)})" for k, v in varying.items()]
    what = ["varying " + (", ".join(each[:-1]) + " and " + each[-1] if len(each) > 1 else each[0])] if each else []
    if shared:
        what.append(("each with " if len(cells) > 1 else "with ") + ", ".join(f"{k}={v}" for k, v in shared.items()))
    total = len(cells_of(data)) + len(missing[CUT])  # the study file's cells, unless cut ones go unnamed
    if not cells:
        said = "Ran no cell"
    elif cut_unnamed or total == 1:
        said = f"Ran {len(cells)} cell{'s' if len(cells) > 1 else ''}"
    elif len(cells) == total:
        said = f"Ran {'both' if total == 2 else f'all {total}'} cells"
    else:
        said = f"Ran {len(cells)} of {total} cells"

    def names(found: list[str]) -> str:
        return ", ".join(f"`{n}`" for n in found)

    why = []
    if missing[CUT]:
        now = "; as the study file names them now" if declared is not None else ""
        why.append(f"{names(missing[CUT])} (cut by `--only`{now})")
    elif cut_unnamed:
        why.append("the study file's other cells (cut by `--only`)")
    if missing[FAILED]:
        why.append(f"{names(missing[FAILED])} (every unit failed)")
    if missing[NOT_REACHED]:
        why.append(f"{names(missing[NOT_REACHED])} (not reached: study {data.status})")
    return said + (", " + ", ".join(what) if what else "") + "." + (" Not run: " + "; ".join(why) + "." if why else "")


def study_section(folder: Path, writer: Writer) -> tuple[list[str], StudyRecord]:
    """A study's section (its study.md beside its assets), and its record as the one page reads it."""
    study = read_study(folder)
    assets = writer.folder(folder)
    data = study.model_copy(update={"cpu_net_of_idle": net_of_idle(study, folder)})  # written back to the assets
    write_record(assets / "study.json", data)
    assert data.cells is not None and data.units is not None  # experiments/study.py writes both
    full, lines = _head(data, folder)
    primary = primary_of(data)
    every = judged(data, primary)
    found = sorted((c for c in every if c.holds), key=lambda f: -f.effect)
    tables = comparison_tables(data, every, primary)
    costs = semi_sync_cost(data.cells, comparison_of(data))
    if costs:
        tables += ["Semi-sync's commit cost: each semi-sync cell's write latency against the cell with semi-sync off "
                   "on the same link (medians over repeats; what a commit pays, unlike MariaDB's own wait counter; "
                   "judged by the one rule, docs/metrics.md \"Comparing two figures\"):",
                   "", "| cell | against | p50 with → without (cost) | mean with → without (cost) |",
                   "|---|---|---|---|"]
        for row in costs:
            tables.append(f"| `{row.cell}` | `{row.baseline}` | " + " | ".join(
                "–" if (got := row.costs[k]) is None else
                f"{got.with_ms:.2f} → {got.without_ms:.2f} ms (**{got.cost_ms:+.2f} ms**; "
                f"{words_of(every, data, row.group, k, row.cell, row.baseline)[1]})"
                for k in COMMIT_FIGURES) + " |")
        tables.append("")
    if any("load" in changed_of(c) for c in data.cells):
        tables += ["Near and above the max: each cell's runs within the scenario's pass criteria, and its goodput as a "
                   "share of the study's rate (the max; median [min–max] over repeats):", "",
                   "| scenario | cell | runs passing | goodput, % of the max |", "|---|---|---|---|"]
        assert data.rates is not None  # experiments/study.py writes it
        for loaded in load_table(data.units, data.cells, data.rates):
            share = loaded.goodput_pct_of_max
            tables.append(f"| {loaded.scenario} | `{loaded.cell}` | {loaded.passed} of {loaded.runs} | "
                          + ("–" if share["median"] is None else f"{share['median']:.0f} % [{share['min']:.0f}–"
                             f"{share['max']:.0f}]") + " |")
        tables.append("")
    first = next((u.folder for u in data.units if u.folder and (folder / u.folder / "meta.json").exists()), None)
    if first:  # kept beside study.json, so a rebuild from the assets still has it
        writer.keep_meta(folder / first / "meta.json", assets / "meta.json")
    if (assets / "meta.json").exists():  # for the one page's machine and versions
        data = data.model_copy(update={"meta": read_meta(assets)})
    chart = plot_study(data, assets, primary, plot_of(data))
    # the whole study (every table) in its own file beside its assets; report.md keeps what it found
    (assets / "study.md").write_text("\n".join(
        [f"# Study `{data.name}` — `{folder.name}`", *full[1:], *compression_note(data), *tables]
        + ([f"![{data.name} study]({chart})", ""] if chart else [])).rstrip("\n") + "\n")
    said = (f"- **Findings** (primary metrics only, between cells that differ in one setting): "
            f"{held_text(found, data, primary)}." if primary else
            "- **Findings**: none by design (the study declares no primary metric; its figures are read elsewhere).")
    ceiling = core_ceiling_text(data)
    lines += [*semi_sync_note(data, every), said, *costliest_index(data, every),
              *([f"- **Core ceiling**: {ceiling}."] if ceiling else []),
              f"- [Every figure, the data state and the command]({writer.rel(assets / 'study.md')})", ""]
    if chart:
        lines += [f"![{data.name} study]({writer.rel(assets / chart)})", ""]
    return lines, data


def comparison_of(data: StudyRecord) -> Comparison:
    """A study's comparison, per group, metric and cell (experiments/study.py writes it)."""
    assert data.comparison is not None
    return data.comparison


def cells_of(data: StudyRecord) -> list[StudyCell]:
    """A study's cells (experiments/study.py writes them)."""
    assert data.cells is not None
    return data.cells


def changed_of(cell: StudyCell) -> dict[str, Word]:
    """What a cell changes from the reference settings (studyfile.cell_records writes it, {} for none)."""
    assert cell.changed is not None
    return cell.changed


def name_of(cell: StudyCell) -> str:
    """A cell's name (studyfile.cell_records writes it)."""
    assert cell.name is not None
    return cell.name


def costliest_index(data: StudyRecord, every: list[Compared] | None = None) -> list[str]:
    """For a study whose cells run without one index each: per group and other settings, which index costs the
    replicas most CPU per applied write (its cell against the one with every index and the same settings), and what
    each of the others costs, each judged by the one rule (`every`: analysis/findings.judged); where the largest
    does not hold as a finding, that is what it says, with the rule's words. A cost is printed as the increase the
    index causes over the figure without it (analysis/studymetrics.index_costs)."""
    costs = index_costs(cells_of(data), comparison_of(data))
    if not costs:
        return []
    every = judged(data, primary_of(data)) if every is None else every
    parts = []

    def words(c: IndexCost) -> tuple[bool, str]:
        return words_of(every, data, c.group, "replica_ms_per_write", c.cell, c.baseline)

    def increase(c: IndexCost) -> str:
        return "–" if c.increase is None else f"{100 * c.increase:+.0f} %"

    for group in dict.fromkeys(c.group for c in costs):
        for settings in dict.fromkeys(tuple(sorted(c.settings.items())) for c in costs if c.group == group):
            mine = [c for c in costs if c.group == group and tuple(sorted(c.settings.items())) == settings]
            where = f"`{group}`" + (f", {', '.join(f'{k}={v}' for k, v in settings)}" if settings else "")
            top, rest = mine[0], mine[1:]
            each = ", ".join(f"`{c.index}` {increase(c)} ({words(c)[1]})" for c in rest)
            holds, said = words(top)
            if top.cost > 0 and holds:
                parts.append(f"{where}: **`{top.index}`** costs most, {fmt(top.with_)} ms a write with every "
                             f"index against {fmt(top.without)} without it ({increase(top)}; {said}); "
                             f"the others {each}")
            else:
                parts.append(f"{where}: no index's cost holds as a finding (the largest, `{top.index}`, "
                             f"{increase(top)}: {said}; the others {each})")
    return ["- **Which index costs the replicas most** (replica CPU-ms per applied write, each index missing "
            "against every index present, the other settings the same; medians over repeats; a cost is the "
            "increase the index causes, (with − without) ÷ without): " + "; ".join(parts) + "."]


MAX_CELLS_NAMED = 8  # a study with more cells names what they vary in report.md, each cell in its study.md


def _head(data: StudyRecord, folder: Path) -> tuple[list[str], list[str]]:
    """A study's opening lines: in its study.md every one (cells with what each sets, how it ran, the data state,
    the command, its CPU and rows), in report.md the cells by name (what a name does not say beside it) and how it
    ran, its CPU and rows only where they fall short (gross CPU, a write run not verified): the Studies section
    says the rule once."""
    primary = primary_of(data)
    study_cells, units, rates, measures = data.cells, data.units, data.rates, data.measures
    # experiments/study.py writes them all
    assert study_cells is not None and units is not None and rates is not None and measures is not None
    units_ok = sum(1 for u in units if measured(u))
    title = [f"## Study `{data.name}` — `{folder.name}`", "", description(data), ""]
    if data.question:
        title += [f"**Question**: {data.question} **Primary metrics**: "
                  + (", ".join(BY_KEY[k].label for k in primary) or "none declared") + ".", ""]
    against = f"each against {baseline_words(data)}" if data.baseline_per else "the first is the baseline"

    ran = set(ran_cells(data))  # the description says which did not run, and why

    def cells(short: bool) -> str:
        said, unsaid = [], 0  # unsaid: what the names leave out (in report.md a cell's name and what it does not say)
        for c in (c for c in study_cells if name_of(c) in ran):
            name = name_of(c)
            sets = [f"{k}={v}" for k, v in changed_of(c).items() if not short or f"{k}={v}" not in name]
            unsaid += len(sets)
            said.append(name + (f" ({', '.join(sets)})" if sets else "" if short else " (reference)"))
        if short and (len(said) > MAX_CELLS_NAMED or not unsaid):  # the description says what they vary
            base = f"each against {baseline_words(data)}" if data.baseline_per else \
                f"the baseline: `{next(iter(ran_cells(data)), '')}`"
            return f"- **Cells** ({base}): each one in its study.md"
        return f"- **Cells** ({against}): " + "; ".join(said)

    how = (f"- **How**: {', '.join(f'{s} at {r}/s' for s, r in rates.items())}; {', '.join(measures)}; "
           f"{data.duration_s:g} s per run; {data.repeat} repeats, cells interleaved; {units_ok} of "
           f"{len(units)} units measured" + (f"; status {data.status}" if data.status != COMPLETE else ""))
    state = "- **Data state**: " + ("reset to the pristine dataset before every cell" if data.reset == "each-cell"
                                    else data.data_state or "not reset between cells")
    short_of = [cpu_kind(data)] if data.cpu_net_of_idle is False else []
    short_of += [] if verified(data) else [study_rows(data)]
    full = [*title, cells(False), how, state, f"- **Command**: `{data.command or ''}`", cpu_kind(data),
            study_rows(data), ""]  # never null
    return full, [*title, cells(True), how, *short_of, ""]


def comparison_tables(data: StudyRecord, every: list[Compared], primary: list[str]) -> list[str]:
    """One table per group of a study: every metric per cell, the rule's judgement on the primary ones (`every`:
    analysis/findings.judged)."""
    mine: dict[tuple[str, str, str], list[Compared]] = {}
    for c in every:
        mine.setdefault((c.group, c.metric, c.cell), []).append(c)
    tables: list[str] = []
    for scenario_name, per_metric in (data.comparison or {}).items():
        cells = ran_cells(data, scenario_name)  # a cell that did not run has no column (its description says why)
        if not cells:
            continue
        tables += [f"`{scenario_name}` — median [min–max] over repeats (ratio to {baseline_words(data)}); *replica*: "
                   f"{REPLICA_MEANS}; a judgement only on the primary metrics, by the one rule (docs/metrics.md, "
                   "\"Comparing two figures\": **holds** against a cell that differs in one setting, ≥ 10 %; counts "
                   f"compared exactly, never tested; a measured figure tested with {FINDING_MIN_REPEATS} repeats a "
                   "side, Holm-corrected across the study, and with fewer described, not tested):", "",
                   "| metric | " + " | ".join(f"`{c}`" for c in cells) + " |", "|---|" + "---|" * len(cells)]
        for key, rows in per_metric.items():
            label = BY_KEY[key].label + (" (primary)" if key in primary else "")
            first = next((c for c, r in rows.items() if r.verdict == "baseline"), None)
            tables.append(f"| {label} | " + " | ".join(
                cell_text(rows[c], _judged(mine.get((scenario_name, key, c)), rows[c].baseline or first)
                          if key in primary else None, key) for c in cells) + " |")
        tables.append("")
    return tables


def _judged(comparisons: list[Compared] | None, stored: str | None) -> str | None:
    """A primary metric's judgement in a study table: **holds** (against the ratio's own baseline, or the cells
    named) with how, else the rule's words against the ratio's baseline; None where nothing was compared."""
    if not comparisons:
        return None
    held = [c for c in comparisons if c.holds]
    if held:
        against = [c.baseline for c in held]
        return ("**holds**" if against == [stored] else "**holds** against " + ", ".join(f"`{b}`" for b in against)) \
            + f", {held[0].words}"
    own = next((c for c in comparisons if c.baseline == stored), comparisons[0])
    return own.words


SECTION_FINDINGS = 1  # a study's section lists its largest findings; its tables mark every one


def held_text(found: list[Compared], data: StudyRecord, primary: list[str]) -> str:
    """A study's findings in its own section, the test said once for the tested ones; or why none holds."""
    untested = untested_text(data, primary)
    untested = f". Not findings: {untested}" if untested else ""
    if not found:
        return nothing_held(data, primary) + untested
    tested = next((f.comparisons for f in found if f.comparisons is not None), None)
    more = len(found) - SECTION_FINDINGS
    return "; ".join(brief(f) for f in found[:SECTION_FINDINGS]) + (
        f"; {more} more, each marked **holds** in its study.md" if more > 0 else "") + (
        f". p: Welch's t-test on log values, Holm-corrected over the study's {tested} tested comparisons"
        if tested else "") + untested


def study_line(data: StudyRecord, link: str) -> str:
    """A study's line in report.md: its name linked to its section (`link`), its question and its headline: its
    largest finding and how many more; else why none holds and its largest untested effect; else none by design (as
    the findings, none from a study whose write runs were not verified to change their rows)."""
    primary = primary_of(data)
    found = sorted((c for c in judged(data, primary) if c.holds), key=lambda f: -f.effect) if primary else []
    if not primary:
        said = "no primary metric: its figures feed other sections"
    elif not verified(data):
        said = "no finding stated: measured before each write run was checked to change its rows"
    elif found:
        more = len(found) - SECTION_FINDINGS
        said = "; ".join(headline(f) for f in found[:SECTION_FINDINGS]) + (f"; {more} more" if more > 0 else "")
    elif untested := untested_effects(data, primary):
        fewest = min(min(c.n) for c in untested)
        said = (f"no finding ({fewest} repeat{'' if fewest == 1 else 's'} a side); largest effect: "
                + headline(untested[0]))
    else:
        said = "no finding: " + nothing_held(data, primary)
    bound = core_ceiling_text(data, brief=True)
    return f"- [`{data.name}`]({link}): " + (f"{data.question} " if data.question else "") + said + (
        f" ({bound})" if bound else "") + "."


MDEV_SEMI_SYNC = "[MDEV-35109](https://jira.mariadb.org/browse/MDEV-35109)"


SEMI_SYNC_DECISION = "docs/decisions/semi-sync-by-hand.md"  # the check by hand the semi-sync figures cite


def rtt_words(cost: RoundTrips) -> str:
    """The round trip a semi-sync cost was divided by, and where it comes from (analysis/answers.round_trips)."""
    if cost.rtt_from == "nominal":
        return f"a {cost.nominal_ms:g} ms round trip (the link's setting, not measured)"
    return f"the {cost.nominal_ms:g} ms link's {cost.rtt_ms:.1f} ms round trip {cost.rtt_from}"


def commits_words(commits: dict[str, dict[int, tuple[float, float]]]) -> str:
    """Commits per second with 1, 4 and 8 concurrent clients under each wait point and with semi-sync off, each
    (min, max) over its rounds ('1/4/8 clients commit 43–44/106–109/188–195/s after_sync, … after_commit,
    831/1,040/1,627 off'): as checked by hand (SemiSyncByHand) or measured in a closed loop
    (studymetrics.ClosedLoop)."""
    def each(mode: str) -> str:
        got = commits.get(mode) or {}
        return "/".join(f"{lo:,.0f}" if round(lo) == round(hi) else f"{lo:,.0f}–{hi:,.0f}" for lo, hi in got.values())

    clients = "/".join(str(c) for c in (commits.get("after_sync") or {}))
    return (f"{clients} clients commit {each('after_sync')}/s after_sync, {each('after_commit')} after_commit"
            + (f", {each('off')} off" if commits.get("off") else ""))


def by_hand_words(hand: SemiSyncByHand) -> str:
    """The semi-sync check by hand in one sentence: one client's round trips per wait point, and the commits per
    second concurrent clients made (docs/decisions/semi-sync-by-hand.md)."""
    trips = "; ".join(f"{mode} {lo:.2f}–{hi:.2f}" for mode, (lo, hi) in hand.one_client.items())
    return (f" Checked by hand ([semi-sync-by-hand]({SEMI_SYNC_DECISION})): one client's commit costs {trips} round "
            f"trips of the link as measured through it; on the {hand.link_ms:g} ms link, "
            f"{commits_words(hand.commits_per_s)}.")


def semi_sync_note(data: StudyRecord, every: list[Compared] | None = None) -> list[str]:
    """Why semi-sync costs what it does, from the study's own figures: the cost in round trips of each link (each
    judged by the one rule: `every`, analysis/findings.judged, the study's own when not given), what the published
    behaviour is (one round trip per commit) and why a commit here may pay more."""
    hand = semi_sync_by_hand(ROOT / SEMI_SYNC_BY_HAND)
    costs = round_trips(semi_sync_cost(cells_of(data), comparison_of(data)), by_hand=hand.rtt_ms if hand else None)
    if not costs:
        return []
    every = judged(data, primary_of(data)) if every is None else every
    paid = [c.round_trips for c in costs]
    widest = max(costs, key=lambda c: c.nominal_ms)
    mine = [c for c in costs if c.nominal_ms == widest.nominal_ms]
    local = {c.semi_sync: c.local_ms for c in costs if c.local_ms}
    rate = max((data.rates or {}).values(), default=None)
    counter = (comparison_of(data).get("write") or {}).get("semi_sync_wait_us") or {}
    waits = {c.semi_sync: row.median if (row := counter.get(c.cell)) is not None else None for c in mine}
    return ["- **Why semi-sync costs what it does**: a commit waited "
            f"{min(paid):.2f}–{max(paid):.2f} round trips of its link ("
            + "; ".join(f"{c.semi_sync} +{c.cost_ms:.1f} ms, "
                        + words_of(every, data, c.group, "commit_p50_ms", c.cell, c.baseline)[1] for c in mine)
            + f", over {rtt_words(widest)}; write p50 against the same link with semi-sync off"
            + ("; net of what the same wait point costs with no link, "
               + ", ".join(f"{k} +{v:.2f} ms" for k, v in local.items()) if local else "")
            + "). Published behaviour is one round trip per "
            "commit (the master waits for one replica's acknowledgement of the transaction it publishes)"
            + (f"; at {rate} writes/s over a {widest.nominal_ms:g} ms link about "
               f"{rate * widest.nominal_ms / 1000:.0f} "
               "commits are in flight at once, and a commit whose acknowledgement queues behind another's pays part "
               "of that one's wait too (our reading, not measured here)" if rate else "")
            + f"; under after_sync a commit can wait on another transaction's binlog position, a known MariaDB "
            f"bug class ({MDEV_SEMI_SYNC}). MariaDB's own wait counter reads "
            + ", ".join(f"{k} {v / 1000:.1f} ms" for k, v in waits.items() if v is not None)
            + " at that link: the client's latency, not the counter, is what a commit pays."
            + (by_hand_words(hand) if hand else " Not checked by hand.")]


def compression_note(data: StudyRecord) -> list[str]:
    """Which events compression shrank: per table, each compressed cell's bytes per write against compression off,
    with its threshold (analysis/answers.compression_effects)."""
    said = compressed_text(compression_effects(data))
    return [f"- **Which events were compressed**: {said}"] if said else []


def index_cost(studies: list[StudyRecord]) -> list[str]:
    """One sentence per memory regime, from study working-set: what the four secondary indexes cost each replica
    under ROW replication (write against write-noindex, the same update of the same three columns)."""
    data = next((d for d in studies if d.name == "working-set"), None)
    if not data or not data.comparison:
        return []
    group, per_metric = next(iter(data.comparison.items()))
    every = judged(data, primary_of(data))
    assert data.rates is not None  # experiments/study.py writes it
    lines = ["## What indexes cost the replicas under row-based replication", "",
             f"Study `working-set`: `write` (four secondary indexes) against `write-noindex`, the same update of "
             f"the same three columns at {', '.join(f'{r}/s' for r in sorted(set(data.rates.values())))}, "
             f"{data.repeat} repeats interleaved; the worse replica's figures, median [min–max], each pair judged by "
             f"[the one rule]({DEFINITIONS}); CPU "
             f"{'net of idle' if 'net of idle' in cpu_kind(data) else 'gross'}; pages read and KB written are counts, "
             f"compared exactly with their ranges and never tested (their repeats differ: {PAGES_VARY}).", ""]

    def row(key: str, cell: str | None) -> ComparisonRow | None:
        return (per_metric.get(key) or {}).get(cell) if cell else None

    def both(key: str, indexed: str, bare: str, unit: str = "", count: bool = False) -> str:
        a, b = row(key, indexed), row(key, bare)
        if a is None or b is None or a.median is None or b.median is None:
            return "–"
        said = f"{figure_text(a, key)}{unit} against {figure_text(b, key)}{unit}"
        # a count's rule is said once, above
        return said if count else f"{said} ({words_of(every, data, group, key, indexed, bare)[1]})"

    for cost in pool_index_costs(data):
        indexed, bare = cost.indexed, cost.bare
        lines.append(
            f"- **{cost.pool or 'reference'} pool**: the indexes cost the replica {cost.ratio:.1f}× the "
            f"CPU per applied write ({both('replica_ms_per_write', indexed, bare, ' ms')}), "
            f"{both('replica_disk_reads_per_write', indexed, bare, count=True)} pages read from disk and "
            f"{both('replica_kb_written_per_write', indexed, bare, ' KB', count=True)} written per write; "
            f"replica lag p99 "
            f"{both('lag_p99_ms', indexed, bare, ' ms')}; client p99 {both('p99_ms', indexed, bare, ' ms')}.")
    return lines + [""]
