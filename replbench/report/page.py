"""The report's opening (its title, the machine, the answers, where its figures come from), the definitions (how
to read the columns, the terms the answers use), the findings, what was measured, on what, and its last section
(what was left alone); report/markdown orders them with the other sections.
"""

from __future__ import annotations

from ..analysis.findings import MAX_FINDINGS, Compared, sentence, study_findings, untested_effects
from ..analysis.studymetrics import REPLICA_MEANS
from ..core.config import FINDING_ALPHA, FINDING_MIN_FACTOR, FINDING_MIN_REPEATS, LAG_FLOOR_MS
from ..core.results import Host, RunMeta, StudyRecord
from .answers import DEFINITIONS, the_answers
from .assets import SETTINGS_THAT_MATTER, Writer
from .provenance import server_text, verified
from .studies import STUDIES_PAGE, primary_of
from .sweeps import ShownSweep, kept_text

# the statements behind each endpoint (tests check every fragment still stands in app/handlers.py)
ENDPOINT_SQL = {
    "find_users": ("SELECT first_name FROM accounts FORCE INDEX (idx_first_last) WHERE first_name LIKE 'abc%' "
                   "GROUP BY first_name LIMIT 301; then SELECT id, first_name, last_name, city, birth_date FROM "
                   "accounts FORCE INDEX (idx_first_last) WHERE first_name IN (…) "
                   "AND last_name LIKE 'xy%' ORDER BY first_name, last_name, id LIMIT 10",
                   "a replica (least in flight)", "idx_first_last (bench_idx); full scans without it"),
    "get_user": ("SELECT … FROM accounts WHERE id = ?", "a replica", "PRIMARY"),
    "update_user": ("UPDATE accounts SET first_name = ?, last_name = ?, city = ?, updated_at = NOW() WHERE id = ?",
                    "the master", "PRIMARY; changes 3 indexed columns on bench_idx"),
    "update_users": ("UPDATE accounts SET interests = ?, updated_at = NOW() WHERE id BETWEEN ? AND ?",
                     "the master", "PRIMARY (bench_idx, bench_noidx); a scan on bench_nopk"),
}


SQL_FRAGMENTS = ("GROUP BY first_name", "first_name IN (", "FORCE INDEX (", "ORDER BY first_name, last_name, id LIMIT",
                 "WHERE id BETWEEN %s AND %s", "updated_at = NOW() WHERE id = %s")


COLUMN_GUIDE = (
    f"**replica** (a figure not named for one replica), in every table: {REPLICA_MEANS}; a column that lists "
    "every replica says so.",
    "**net of idle**: a node's CPU during the run less its idle CPU (heartbeat, purge, flushing, our polls), "
    "measured just before the run ([metrics.md](docs/metrics.md#net-of-idle)).",
    "**below resolution (< r)**: a net-of-idle CPU figure that cannot be told from zero (r: z standard errors of "
    "the idle's noise over the run); *not resolved (≤ m)*: one recorded before resolutions were. Neither is a cost "
    "or a ratio's divisor (a lower bound, *≥ n×*, at most).",
    "**per applied write**: over the writes a replica applied, not those the master took (a replica behind "
    "applied fewer).",
    "**apply alone** (a **drain**): one replica, the others' SQL threads held, timed applying a backlog written "
    "while every SQL thread was held: the most it applies ([apply-capacity.md](docs/apply-capacity.md)).",
    "**write-back**: the dirty pages a run leaves in the buffer pool, forced out after it and counted per write "
    "([decisions/write-back.md](docs/decisions/write-back.md)).",
    "**unit**: one run, drain or big transaction of a study or campaign; **repeats**: a cell's units, interleaved "
    "with the other cells'.",
    "**kept up**: the replicas' lag stayed under the sweep's limit, not growing, and they caught up soon after "
    "([Sweeps](#sweeps-where-each-setup-breaks) states the limits), said only where no other resource saturated "
    "first (else the box's limit is named: [metrics.md](docs/metrics.md#limited-by)); **max sustainable rate**: a "
    "sweep's highest step that met every pass criterion.",
    "**goodput/s**: successful responses per second (vegeta's throughput), beside *sent/s* on a sweep's page.",
    "**CPU-ms/ok**: a process group's CPU milliseconds per *successful* request (failed ones cost CPU but are "
    "not the work asked for).",
    "**CPU %**: % of one core, mean over the middle 80 % of the attack, every sampler on one clock.",
    "**lag**: how long ago the master first showed the oldest transaction a replica has not applied, from GTID "
    f"positions read every {LAG_FLOOR_MS:g} ms (its floor: a lag under it prints *< {LAG_FLOOR_MS:g}*, never as a "
    "value); older runs read a heartbeat written every 100 ms (their floor 100 ms); each run's block says which.",
    "**catch-up**: seconds from the moment the last request was *sent* until each replica applied the master's "
    "position at that moment (timed in parallel).",
    "**after_sync** / **after_commit**: semi-sync's wait points: the master waits for a replica's acknowledgement "
    "before committing in InnoDB / after, before answering the client.",
    "**ratio**, and **the one rule** by which two sets of repeats are compared "
    "([metrics.md](docs/metrics.md#comparing-two-figures)): a cell's median ÷ the baseline cell's; a count (bytes, "
    "rows, pages, syncs) compared exactly with its range, never tested (*compared exactly, no test*), holding when "
    "the ranges are disjoint; over a figure below its resolution or floor, a lower bound (*≥ n×*); a measured figure "
    f"(CPU, latency, lag, apply rate) with {FINDING_MIN_REPEATS} repeats a side or more tested by Welch's t-test on "
    f"log values, Holm-corrected over the study's tested comparisons (family-wise error {FINDING_ALPHA:g}): *p*, or "
    "*not shown*; with fewer, *disjoint ranges, n = 2, not tested* or *not tested (n = 2)*, and no finding.",
)


def _host(metas: list[RunMeta]) -> Host | None:
    """The first machine recorded (measure/cpu.describe_host writes every key: a host is never empty)."""
    return next((m.host for m in metas if m.host is not None), None)


def _cpu_model(host: Host) -> str | None:
    """The host's CPU model: null where it could not be read, a placeholder where a meta.json predates the key."""
    # the key's presence, not its value: measure/cpu.describe_host writes null where the model could not be read,
    # which prints as it always has (None), apart from a meta.json older than the key
    return host.cpu_model if "cpu_model" in host.model_fields_set else "CPU model not recorded"


def measured_on(metas: list[RunMeta]) -> str:
    """The header's line: which server was measured and on what machine, from what the runs recorded (never the
    machine the report is written on)."""
    host = _host(metas)
    machine = (f"{host.cores} cores ({_cpu_model(host)}), {host.memory_gib} GiB of memory" if host
               else "a machine not recorded")
    return (f"**Measured**: {server_text(metas)}, on {machine}; the three nodes, the app and vegeta on the same "
            "cores.")


def provenance(writer: Writer, metas: list[RunMeta]) -> list[str]:
    """Where every figure of this report comes from: one campaign (its name, commit, dates and the calibration's
    range over its units), or everything in results/ (the machine is the header's, measured_on)."""
    data = writer.origin.campaign
    if data is None:
        return ["Generated by `./run.sh report` from everything in `results/` (no finished campaign: sections may "
                "come from different commits and days; `./run.sh campaign report` makes one). Every figure comes "
                "from a file kept beside it.", ""]
    units = data.units or []
    calib = [v for u in units for v in (u.calibration_before, u.calibration_after) if v is not None]
    minutes = sum(u.seconds or 0 for u in units) / 60
    return [f"Generated by `./run.sh report` from one campaign: `{data.name}` "
            f"(`{writer.root.name}`), {len(units)} units at commit `{data.commit}`"
            + (" (dirty tree)" if data.dirty else "") + f", {data.started_at} to "
            f"{data.finished_at} ({minutes:.0f} min of units); calibration "
            + (f"{min(calib):g}–{max(calib):g}" if calib else "not recorded")
            + " (M iterations/s of a fixed loop on one core, before and after each unit). Every figure comes from a "
            "file kept beside it.", ""]


def metas_of(latest: dict[str, ShownSweep], studies: list[StudyRecord]) -> list[RunMeta]:
    """The run metadata the sections read (latest: the sweeps' sections as report/sweeps.py gives them)."""
    metas = [info.meta for info in latest.values() if info.meta]
    # a step whose meta.json was not kept reads as an empty RunMeta (report/sources.load_steps): each reader of the
    # metas (the machine, the server's version, the disk, the dataset) passes over a meta without its key
    return metas + [s.meta for s in studies if s.meta is not None]


def opening(latest: dict[str, ShownSweep], studies: list[StudyRecord], writer: Writer,
            links: dict[str, str] | None = None) -> list[str]:
    """What opens report.md: its title, what was measured on what, the answers (links: each study's section, by
    name) and where every figure comes from."""
    metas = metas_of(latest, studies)
    return ["# replbench report", "",
            "What MySQL-style row-based replication costs, measured on a master and two replicas (MariaDB, GTID "
            "replication) behind an aiohttp service driven by vegeta at constant rates.", "", measured_on(metas), "",
            *the_answers(latest, studies, links or {}), *provenance(writer, metas)]


def definitions() -> list[str]:
    """How to read the columns, and the terms the answers use: right after the answers and the own workload."""
    return ["## How to read the columns", "", *(f"- {g}" for g in COLUMN_GUIDE), ""]


def measured() -> list[str]:
    lines = ["## What was measured", "",
             "| endpoint | SQL (per request) | served by | index used |", "|---|---|---|---|"]
    for name, (statement, where, index) in ENDPOINT_SQL.items():
        lines.append(f"| `{name}` | `{statement}` | {where} | {index} |")
    return lines + ["", "Every app statement carries a 2 s server-side limit (`max_statement_time`): a query that "
                    "needs longer is cut and answered 504. Without the name index a search is two full scans of 8M "
                    "rows (about 4 s), so `read-noindex` fails at any rate — that is the finding, not a bug.", ""]


def on_what(metas: list[RunMeta]) -> list[str]:
    host = _host(metas)
    # disk and the server variables: maps with no record of their own
    version = next((m.versions.mariadb for m in metas if m.versions), None)
    dataset = next((m.dataset for m in metas if m.dataset), None)
    lines = ["## On what", ""]
    if host:  # cores, CPU model and memory are the header's (measured_on)
        # the key's presence, not its value: experiments/run.py writes null where the run took no calibration (it
        # prints as None), "–" is for a meta.json older than the key
        score = host.calibration_score if "calibration_score" in host.model_fields_set else "–"
        lines.append(f"- **Machine**: calibration score {score} (M iterations/s of a fixed integer loop on one core)")
    disk = next((m.disk for m in metas if m.disk), None)
    if disk:
        lines.append(f"- **Disk** under the datadirs: {disk.device} ({disk.filesystem}), fsync of a "
                     f"small write {disk.fsync_ms_median} ms median ({disk.fsync_ms_max} ms max of "
                     f"{disk.fsync_samples}): with sync_binlog=1 and innodb_flush_log_at_trx_commit=1 every "
                     "commit waits for it")
    if version:  # its version is the header's (measured_on)
        lines.append("- **Reference settings**: ROW, FULL row image, annotate on, sync_binlog=1, "
                     "innodb_flush_log_at_trx_commit=1, one SQL thread, semi-sync off")
    variables = next((m.server_variables_not_default for m in metas if m.server_variables_not_default), None)
    if variables and variables.get("master"):
        shown = {k: v for k, v in variables["master"].items() if k in SETTINGS_THAT_MATTER}
        lines.append("- **Not at the server's compiled default** (master; every node's full list is in each run's "
                     "meta.json): " + ", ".join(f"`{k}={v.value}` (default {v.default})"
                                              for k, v in sorted(shown.items())))
    if dataset:
        lines.append(f"- **Dataset**: {dataset.accounts or 0:,} accounts (seed {dataset.seed}); "
                     f"bench_nopk {dataset.nopk_rows or 0:,} rows (no primary key)")
    if not host:
        lines.append("- (no sweep with run metadata in results/)")
    return lines + [""]


def findings(latest: dict[str, ShownSweep], studies: list[StudyRecord]) -> list[str]:
    lines = ["## Findings", "",
             "From a study's primary metrics only, between two cells that differ in one setting, an effect of at "
             f"least {FINDING_MIN_FACTOR - 1:.0%} holding by [the one rule]({DEFINITIONS}): the largest of each "
             f"study, table and metric, then the sweeps' limits, at most {MAX_FINDINGS} lines; the rest on "
             f"[{STUDIES_PAGE}]({STUDIES_PAGE}).", ""]
    found = sorted(((_name(data), f) for data in studies if verified(data)
                    for f in study_findings(data, primary_of(data))), key=lambda item: -item[1].effect)
    found = _largest_each(found)
    limits = ["- Each sweep's max sustainable rate (what limited it: [Sweeps](#sweeps-where-each-setup-breaks)): "
              + "; ".join(_limit_words(info) for info in latest.values()) + "."] if latest else []
    # each sweep's limit is a finding too: together at most MAX_FINDINGS lines
    said = [f"- {sentence(name, f)}." for name, f in found[:max(MAX_FINDINGS - len(limits), 0)]]
    untested = sum(len(untested_effects(data, primary_of(data))) for data in studies if verified(data))
    if untested:
        said.append(f"- Not findings: {untested} effects of at least {FINDING_MIN_FACTOR - 1:.0%} whose ranges are "
                    f"disjoint, from fewer than {FINDING_MIN_REPEATS} repeats a side (not tested), named in their "
                    f"studies' sections on [{STUDIES_PAGE}]({STUDIES_PAGE}).")
    unverified = [data.name for data in studies if not verified(data)]
    if unverified:
        said.append("- No finding is stated from " + ", ".join(f"`{n}`" for n in unverified) + ": measured before "
                    "each write run was checked to change its rows (see each section), they wait for a rerun.")
    said += limits
    return lines + (said or ["- No study or sweep in results/ yet."]) + [""]


def _limit_words(info: ShownSweep) -> str:
    """A sweep's maximum in a few words, and the box's limit where it came before the replicas' (sweeps.kept_text
    says the rest in the sweep's own line)."""
    kept, first = info.kept_up, info.kept_up.host_first if info.kept_up else None
    said = (f"this box saturated first, at {first.rate} rps" if first is not None and not first.replica_saturated
            else kept_text(kept, why=False) if kept is not None else "")
    return (f"`{info.key}` {info.max_brief}" + (f" ({said})" if said else "")
            + (f" (the newest sweep; earlier sweeps of it in results/ found {', '.join(info.earlier_max)}: one "
               "sweep is not a measurement of the limit on a noisy machine)" if info.earlier_max else ""))


def _name(data: StudyRecord) -> str:
    """A study's name: experiments/study.py writes it."""
    assert data.name is not None
    return data.name


def _largest_each(found: list[tuple[str, Compared]]) -> list[tuple[str, Compared]]:
    """The first (largest) finding of each study, table and metric, in the order given."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for name, f in found:
        key = (name, f.group, f.metric)
        if key not in seen:
            seen.add(key)
            out.append((name, f))
    return out


def bookkeeping(kept: list[str], writer: Writer) -> list[str]:
    """Which committed asset folders this report left alone: the end of the report, not its first page. Which
    sections were rebuilt from assets (their raw data absent) is printed by `./run.sh report`, not written here, so
    that a fresh clone's report.md is the same file byte for byte."""
    lines: list[str] = ["## Bookkeeping", ""]
    if kept:
        earlier = writer.root / "earlier-sweeps.md"
        if earlier.exists():
            lines += ["Earlier sweeps, published by the previous version and kept unchanged (their raw data is not "
                      f"in this checkout): [{earlier.name}]({writer.rel(earlier)}).", ""]
        where = f"results/{writer.root.relative_to(writer.results)}"
        lines += ["Committed asset folders this report did not regenerate are kept as they are, never deleted: "
                  + ", ".join(f"`{where}/{k}`" for k in kept) + ".", ""]
    return lines if len(lines) > 2 else []
