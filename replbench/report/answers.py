""""The answers": what opens report.md, one sentence per question a DBA asks, each with its figure, the repeats'
range and a link to the table behind it, from the same sources as the rest of the report (the campaign's studies
and sweeps). A question whose source is missing says so; nothing is filled in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..analysis.answers import gb_per_day, pool_index_costs, round_trips, saturation
from ..analysis.byhand import SemiSyncByHand, semi_sync_by_hand
from ..analysis.findings import judged, words_of
from ..analysis.studymetrics import BY_KEY, closed_loop, figure_text, fmt, row_of, semi_sync_cost
from ..core.config import ROOT, SEMI_SYNC_BY_HAND
from ..core.results import RunMeta, StudyRecord
from ..core.stats import count_differs, judgement, spread
from ..topology.knobs import recorded
from . import reference
from .assets import Writer
from .costsheet import BIG_TRANSACTIONS, DEFINITIONS, apply_rates, setting, sheet_rows
from .sources import ShownStep
from .studies import SEMI_SYNC_DECISION, commits_words, primary_of, rtt_words
from .sweeps import ShownSweep, lag_text

ALTERNATIVES = ("ROW MINIMAL", "ROW NOBLOB", "STATEMENT", "MIXED")  # set against ROW FULL
COST_SHEET = "#what-each-replication-setting-costs"
FALLING_BEHIND = "#when-do-the-replicas-fall-behind"
INDEXES = "#what-indexes-cost-the-replicas-under-row-based-replication"
BIG = "#large-transactions-one-update-of-many-rows"

Studies = list[StudyRecord]


@dataclass(frozen=True)
class Facts:
    """What the answers read: the sweeps' sections by key (report/sweeps), the studies, each study's section link."""

    latest: dict[str, ShownSweep]
    studies: list[StudyRecord]
    links: dict[str, str]


Answer = Callable[[Facts], str]


def _text(values: list[float | None], unit: str = "") -> str:
    return figure_text(row_of(values)) + unit


def _missing(what: str) -> str:
    return f"not measured in the data this report shows ({what})"


def kept_up_rate(latest: dict[str, ShownSweep]) -> int | None:
    """The highest rate of the write sweep up to which every step met the replica criteria (a rate measured on this
    box, not the replicas' limit where the box saturated first: report/sweeps.kept_text)."""
    sweep = latest.get("write")
    return sweep.kept_up.rate if sweep is not None and sweep.kept_up is not None else None


def bytes_answer(facts: Facts) -> str:
    latest, studies = facts.latest, facts.studies
    rows = sheet_rows(studies)
    head = f"**Binlog bytes per write**, ROW FULL against {' / '.join(a.split()[-1] for a in ALTERNATIVES)} " \
           f"([cost sheet]({COST_SHEET})): "
    said = []
    for workload, words in (("write", "a single-row update"), ("write-bulk", "a 100-row update")):
        mine = {label: [m.bytes_per_write for m in runs] for label, _, runs in rows.get(workload, [])}
        full = spread(mine.get("ROW FULL", []))["median"]
        if not full:
            continue
        others = [f"{fmt(spread(mine[a])['median'])} ({fmt(spread(mine[a])['median'] / full)}×)"
                  for a in ALTERNATIVES if a in mine and spread(mine[a])["median"]]
        said.append(f"{words} {_text(mine['ROW FULL'])} B against " + " / ".join(others))
    if not said:
        return head + _missing("no binlog-format study") + "."
    rate = kept_up_rate(latest)
    differ = any(count_differs([m.bytes_per_write for m in runs]) for w in ("write", "write-bulk")
                 for _, _, runs in rows.get(w, []))
    text = head + "; ".join(said) + " (counts, compared exactly with their range, never tested" + (
        f"; the repeats differ: {BY_KEY['bytes_per_write'].count})" if differ else ")")
    single = {label: spread([m.bytes_per_write for m in runs])["median"] for label, _, runs in rows.get("write", [])}
    if rate and single.get("ROW FULL"):
        per_day = [f"{label.replace('ROW ', '')} {gb_per_day(single[label], rate):.0f}" for label in
                   ("ROW FULL", *ALTERNATIVES[:1], "STATEMENT") if single.get(label)]
        text += (f". At {rate} single-row updates/s, the write sweep's highest rate whose steps all met the replica "
                 f"criteria, that is {', '.join(per_day)} GB of binlog a day, and as much relay log on each replica")
    else:
        text += ". GB per day: " + _missing("no write sweep whose replicas kept up")
    return text + "."


def _sheet_words(studies: Studies, study: str, workload: str, label: str, base: str, key: str,
                 values: tuple[list[float | None], list[float | None]]) -> str:
    """The one rule's words for two cost-sheet rows of one study (analysis/findings.words_of: its own judgement
    where the metric is primary and the two cells a pair it compares, else described without a test)."""
    data = next((d for d in studies if d.name == study), None)
    names: dict[str, str] = {}
    for cell in (data.cells or []) if data else []:
        if cell.name is not None and cell.scenario in (None, workload):
            names.setdefault(setting(recorded(cell.knobs)), cell.name)
    if data is None or label not in names or base not in names:
        return judgement(*values, count=BY_KEY[key].count).text
    return words_of(judged(data, primary_of(data)), data, workload, key, names[label], names[base])[1]


def replica_cpu_answer(facts: Facts) -> str:
    studies = facts.studies
    head = f"**Replica CPU per applied write** by setting, single-row update ([cost sheet]({COST_SHEET})): "
    rows = {label: (study, runs) for label, study, runs in sheet_rows(studies).get("write", [])}
    if "ROW FULL" not in rows:
        return head + _missing("no binlog-format study") + "."
    base = [m.replica_ms_per_write for m in rows["ROW FULL"][1]]
    said = []
    for label in ALTERNATIVES:
        if label not in rows or rows[label][0] != rows["ROW FULL"][0]:
            continue  # rows of two studies were not measured side by side: not compared
        mine = [m.replica_ms_per_write for m in rows[label][1]]
        ratio = (spread(mine)["median"] or 0) / (spread(base)["median"] or 1)
        said.append(f"{label} {_text(mine, ' ms')} ({ratio:.2f}×; "
                    + _sheet_words(studies, rows[label][0], "write", label, "ROW FULL", "replica_ms_per_write",
                                   (mine, base)) + ")")
    return head + f"ROW FULL {_text(base, ' ms')}" + (f"; {', '.join(said)}" if said else "") + "."


def index_answer(facts: Facts) -> str:
    studies = facts.studies
    head = f"**What the four secondary indexes cost the replica** per applied write ([working-set]({INDEXES})): "
    data = next((d for d in studies if d.name == "working-set"), None)
    costs = pool_index_costs(data) if data else []
    if not costs:
        return head + _missing("no working-set study") + "."
    assert data is not None  # costs come from it
    every = judged(data, primary_of(data))
    return head + "; ".join(
        f"{c.ratio:.1f}× with a {c.pool or 'reference'} pool ({figure_text(c.rows[0])} against "
        f"{figure_text(c.rows[1])} ms; "
        f"{words_of(every, data, c.group, 'replica_ms_per_write', c.indexed, c.bare)[1]})"
        for c in costs) + \
        " — the smaller the pool against the 8M rows' indexes, the more each index change costs in pages read."


def falling_behind_answer(facts: Facts) -> str:
    latest, studies = facts.latest, facts.studies
    head = f"**When the replicas stop keeping up** with single-row updates ([write sweep]({FALLING_BEHIND})): "
    sweep = latest.get("write")
    if sweep is None or not sweep.steps or sweep.kept_up is None:
        return head + _missing("no write sweep") + "."
    kept = sweep.kept_up
    by_rate = {s.rate: s for s in sweep.steps}
    cores = next((m.host.cores for info in latest.values() if (m := info.meta or RunMeta()).host
                  and m.host.cores), None)
    behind = by_rate.get(kept.first_behind) if kept.first_behind else None
    first = kept.host_first
    if first is not None and not first.replica_saturated:  # this box's limit, not the replicas' (sweeps.kept_text)
        at = by_rate[first.rate]
        text = head + "not on this box, whose own limit came first" + (
            _saturated(at, None, cores) if cores else f": {first.resource} saturated at {first.rate}/s")
        if kept.first_behind:
            text += f"; at {kept.first_behind}/s, on the saturated box, {'; '.join(kept.why)}"
        if kept.rate is not None and kept.rate < first.rate:  # a step below the saturated one
            text += f"; at {kept.rate}/s their lag p99 was {lag_text(by_rate[kept.rate], fmt)} ms, not growing"
    else:
        if kept.rate is None:
            text = head + "they fell behind at every step of the sweep"
            step = by_rate[min(r for r in by_rate if r is not None)]
        else:
            step = by_rate[kept.rate]
            text = head + f"they kept up to {kept.rate}/s (lag p99 {lag_text(step, fmt)} ms, not growing)"
            if kept.first_behind:
                text += f"; at {kept.first_behind}/s {'; '.join(kept.why)}"
            elif kept.every_step:
                text += ", the highest step the sweep ran: the limit is above it"
        if cores:
            text += _saturated(step, behind, cores)
    applied = apply_rates(studies).get(("write", "ROW FULL", "serial"))
    if applied and spread(applied[1])["median"]:
        text += f"; one replica alone applies {_text(applied[1], ' trx/s')} serially"
    return text + "."


CAPACITY_WORDS = {"replica": "of the one core its SQL thread uses"}  # how a capacity reads beside its figure


def _saturated(step: ShownStep, behind: ShownStep | None, cores: int) -> str:
    """What saturated first, named from each process's measured CPU against its capacity: at the highest step the
    replicas kept up, or at the first step they did not when nothing was saturated yet."""
    for at in (step, behind):
        if at is None:
            continue
        full = saturation(at.repeats[len(at.repeats) // 2].summary, cores)
        if full and full[0].share >= 1:
            first, rest = full[0], full[1:]
            return (f". What saturates first is the {first.name}'s CPU: {first.percent:.0f} % of its "
                    f"{first.capacity:.0f} % at {at.rate}/s, against " + ", ".join(
                        f"{r.name} {r.percent:.0f} % "
                        + CAPACITY_WORDS.get(r.name, f"of {r.capacity:.0f} %") for r in rest))
    full = saturation(step.repeats[len(step.repeats) // 2].summary, cores)
    if not full:
        return ""
    return (f". No process was saturated at {step.rate}/s; the fullest was the {full[0].name} at "
            f"{full[0].percent:.0f} % of {full[0].capacity:.0f} %")


def semi_sync_answer(facts: Facts) -> str:
    studies = facts.studies
    head = "**Semi-sync's commit cost**"
    data = next((d for d in studies if d.name == "semi-sync-distance"), None)
    if not data or not data.comparison:
        return head + ": " + _missing("no semi-sync-distance study") + "."
    hand = semi_sync_by_hand(ROOT / SEMI_SYNC_BY_HAND)
    costs = round_trips(semi_sync_cost(data.cells or [], data.comparison), by_hand=hand.rtt_ms if hand else None)
    if not costs:
        return head + ": at no link are its write p50's repeats apart from semi-sync off's (ranges overlap)."
    widest = max(costs, key=lambda c: c.nominal_ms)
    paid = [c.round_trips for c in costs]
    every = judged(data, primary_of(data))
    return (head + f" ([semi-sync-distance]({facts.links.get(data.name or '', '')})): "
            f"{min(paid):.1f}–{max(paid):.1f} round trips of the link per commit"
            + (", net of its no-link cost" if any(c.local_ms for c in costs) else "") + " ("
            + _said_once([(f"{c.semi_sync} +{c.cost_ms:.1f} ms",
                           words_of(every, data, c.group, "commit_p50_ms", c.cell, c.baseline)[1])
                          for c in costs if c.nominal_ms == widest.nominal_ms])
            + f"; over {rtt_words(widest)}; the ms: write p50 over semi-sync off's, gross)" + _throughput(facts, hand)
            + ".")


def _throughput(facts: Facts, hand: SemiSyncByHand | None) -> str:
    """Semi-sync's commits per second with 1, 4 and 8 concurrent clients: from the campaign's closed loop (study
    semi-sync-clients) with the by-hand check cited, else the by-hand check's alone, else nothing."""
    data = next((d for d in facts.studies if d.name == "semi-sync-clients"), None)
    loop = closed_loop(data.cells or [], data.comparison) if data and data.comparison else None
    if loop is None:
        return f"; [by hand]({SEMI_SYNC_DECISION}), {commits_words(hand.commits_per_s)}" if hand else ""
    over = f" over a {loop.rtt_ms:.1f} ms measured round trip" if loop.rtt_ms is not None else ""
    return (f"; in a closed loop ([semi-sync-clients]({facts.links.get('semi-sync-clients', '')})){over}, "
            f"{commits_words(loop.commits_per_s)} (no wait on the link)"
            + (f"; [by hand]({SEMI_SYNC_DECISION}), {commits_words(hand.commits_per_s)}" if hand else ""))


def _said_once(items: list[tuple[str, str]]) -> str:
    """'a, b: words' where every item's words are the same, else 'a: words, b: other words'."""
    if len({words for _, words in items}) == 1:
        return ", ".join(what for what, _ in items) + f": {items[0][1]}"
    return ", ".join(f"{what}: {words}" for what, words in items)


def big_answer(facts: Facts) -> str:
    studies = facts.studies
    head = f"**The lag a large transaction causes** ([large transactions]({BIG})): "
    data = next((d for d in studies if d.name == BIG_TRANSACTIONS), None)
    per = next(iter((data.comparison or {}).values()), {}) if data else {}
    applied, size = per.get("bigtx_applied_s") or {}, per.get("bigtx_binlog_mb") or {}
    said = [f"{cell.split(',')[0]} {figure_text(applied[cell])} s"
            + (f" ({figure_text(size[cell])} MB of binlog)" if cell in size else "")
            for cell in applied if cell.endswith(" 100,000 rows") and "threads" not in cell]
    if not said:
        return head + _missing("no big-transaction study with 100,000 rows") + "."
    return head + "per 10^5 rows in one UPDATE, the slowest replica applied it after the master's commit in " + \
        ", ".join(said) + "; a replica starts only at the commit, and parallel threads do not split one transaction."


def reference_answer(facts: Facts) -> str:
    return reference.answer(facts.latest, facts.studies)


ANSWERS: tuple[Answer, ...] = (bytes_answer, replica_cpu_answer, index_answer, falling_behind_answer,
                               semi_sync_answer, big_answer, reference_answer)


def the_answers(latest: dict[str, ShownSweep], studies: Studies, links: dict[str, str]) -> list[str]:
    """The block that opens report.md: a heading, what "replica" means, one line per question (links: each study's
    section, by name)."""
    facts = Facts(latest, list(studies), links)
    return ["## The answers", "",
            "Medians [min–max] over repeats; *replica*, here and in every table, is the worse replica's figure (the "
            f"larger CPU or lag); every other term under [How to read the columns]({DEFINITIONS}).", "",
            *(f"- {answer(facts)}" for answer in ANSWERS), ""]


def falling_behind(studies: Studies, latest: dict[str, ShownSweep], writer: Writer) -> list[str]:
    """The section behind the fall-behind answer: the master's max by the client's criteria, then the answer (up to
    which rate the replicas kept up, what saturated first, one replica's apply capacity), and the lag plot."""
    sweep = latest.get("write")
    if sweep is None or not sweep.steps:
        return []
    answer = falling_behind_answer(Facts(latest, list(studies), {})).split("): ", 1)[1]
    lines = ["## When do the replicas fall behind?", "",
             f"`write` (single-row updates, ROW FULL): max sustainable rate by the sweep's recorded criteria "
             f"{sweep.max_text}; {answer}", ""]
    plot = writer.root / sweep.folder / "lag.png"
    if plot.exists():
        lines += [f"![lag against write rate]({writer.rel(plot)})", ""]
    return lines
