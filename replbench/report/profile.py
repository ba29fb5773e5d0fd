"""A binlog profile as text (`./run.sh profile`): the files, the workload per table and statement kind, the columns
updates change, what each replication setting would write, the heartbeat on its own line, the largest
transactions; and `model predict --profile`'s cost sheets. docs/profile.md shows an example."""

from __future__ import annotations

from ..analysis.profile import SETTINGS, Group, Line, Profile, Sheet
from .model import render_largest, render_plan

SECONDS_PER_DAY = 86_400


def _bytes(n: float | None) -> str:
    if n is None:
        return "unknown"
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:,.2f} {unit}"
    return f"{n:,.0f} B"


def _rate(v: float) -> str:
    return f"{v:,.1f}" if v < 100 else f"{v:,.0f}"


def _share(share: float) -> str:
    return "under 1 %" if 0 < share < 0.005 else f"{100 * share:.0f} %"


def _name(line: Line) -> str:
    return f"{line.schema_name}.{line.table}"


def render(profile: Profile) -> str:
    files = profile.files
    size = sum(f.bytes for f in files)
    head = files[0].path if len(files) == 1 else f"{len(files)} files ({files[0].path} …)"
    source = profile.source
    if source is not None and source.read_from == "server":
        head = f"the binlogs of {source.server}, {head} copied"
    zone = f" in {source.time_zone}" if source is not None and source.time_zone else ""
    lines = [f"Binlog profile: {head}, {_bytes(size)}, server {files[0].server_version}"]
    if source is not None and (source.since or source.until):
        lines.append(f"Window: {source.since or 'the first event'} to {source.until or 'the last event'}{zone}, "
                     "the end left out: the transactions whose GTID event falls in it")
    lines += [f"Span: {profile.first_event} to {profile.last_event} ({profile.span_s:,} s, the server's clock{zone}, "
              f"as the decoder prints it); table metadata: {profile.table_metadata}",
              f"Sampling: {profile.sampling}", ""]
    lines += _workload_table(profile)
    lines += _columns(profile)
    lines += _settings_table(profile)
    lines += _heartbeat(profile)
    lines += _largest(profile)
    other = profile.other
    if other:
        lines.append("Other: " + ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in sorted(other.items())))
    lines += [f"Note: {n}" for n in profile.notes]
    return "\n".join(lines)


def _workload_table(profile: Profile) -> list[str]:
    w = profile.workload
    out = [f"Workload: {w.transactions:,} transactions, {w.rows:,} rows, {_bytes(w.bytes)}; "
           f"{_rate(w.mean_per_s)} transactions/s over the span", "",
           "| table | kind | transactions | trx/s mean (while active) | p99 1-s | busiest minute | rows/trx "
           "p50 / p90 / p99 / max | row-event B/row | primary key | images |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for ln in profile.lines:
        if ln.heartbeat:
            continue
        r, d = ln.rates, ln.rows_per_transaction
        out.append(f"| {_name(ln)} | {ln.kind} | {ln.transactions:,} | {_rate(r.mean_per_s)} "
                   f"({_rate(r.active_mean_per_s)}) | {_rate(r.p99_per_s)} | {_rate(r.busiest_minute_per_s)}/s from "
                   f"{r.busiest_minute_start[11:]} | {d.p50:,} / {d.p90:,} / {d.p99:,} / {d.max:,} | "
                   f"{ln.row_event_bytes_per_row:,.0f} | {ln.primary_key} | {ln.row_image} |")
    return [*out, ""]


def _columns(profile: Profile) -> list[str]:
    out = []
    for ln in profile.lines:
        if ln.heartbeat or not ln.columns:
            continue
        cols = ", ".join(f"{c.column} ({c.type}) {_share(c.share)}" for c in ln.columns)
        out.append(f"Columns {_name(ln)}'s updates change (share of rows, from {ln.sampled_rows:,} rows read): "
                   f"{cols}")
    return [*out, ""] if out else []


def _settings_table(profile: Profile) -> list[str]:
    span = profile.span_s
    out = ["What each setting would write for the workload (its transactions' events):", "",
           "| setting | bytes | per second over the span | GB/day at that rate | basis |", "|---|---|---|---|---|"]
    for name in SETTINGS:
        e = profile.workload.settings[name]
        per_s = None if e.bytes is None else e.bytes / span
        out.append(f"| {name} | {_bytes(e.bytes)} | {_bytes(per_s)}{'/s' if per_s is not None else ''} | "
                   f"{'-' if per_s is None else f'{per_s * SECONDS_PER_DAY / 1e9:,.2f}'} | "
                   f"{e.basis}{': ' + e.note if e.note else ''} |")
    notes = {f"{_name(ln)} {ln.kind}: {s} {ln.settings[s].note}" for ln in profile.lines if not ln.heartbeat
             for s in SETTINGS if ln.settings[s].basis == "unknown"}
    return [*out, *sorted(notes), ""]


def _heartbeat(profile: Profile) -> list[str]:
    beat: Group | None = profile.heartbeat
    if beat is None:
        return ["Heartbeat: none (no transaction in the harness's GTID domain or its replbench_meta schema)", ""]
    rows = [ln for ln in profile.lines if ln.heartbeat]
    names = ", ".join(sorted({_name(ln) for ln in rows}))
    return [f"Heartbeat ({names}), kept out of every figure above: {beat.transactions:,} transactions, "
            f"{_rate(beat.mean_per_s)}/s, {_bytes(beat.bytes)}", ""]


def _largest(profile: Profile) -> list[str]:
    if not profile.largest:
        return []
    out = ["Largest transactions (workload):"]
    for t in profile.largest:
        out.append(f"  {t.gtid}  {t.time}  {t.rows:,} rows  {_bytes(t.bytes)}  {', '.join(t.tables)}  ({t.file})")
    return [*out, ""]


def render_predictions(profile_path: str, profile: Profile, sheets: list[Sheet], replicas: int | None,
                       notes: list[str]) -> str:
    """model predict --profile: what the workload is, how its tables map to the model's, then a cost sheet per
    setting and model table (costmodel.predict's plan, its binlog the profile's own: profile.own_binlog; or why
    there is none)."""
    w = profile.workload
    out = [f"Cost sheets for the workload of {profile_path}: {w.transactions:,} transactions and {w.rows:,} rows "
           f"over {profile.span_s:,} s ({_rate(w.mean_per_s)} transactions/s, the mean over the span); the "
           f"heartbeat's {profile.heartbeat.transactions if profile.heartbeat else 0:,} transactions left out", *notes]
    for sheet in sheets:
        out.append("")
        plan = sheet.plan
        if plan is None:
            out.append(f"{sheet.setting} on {sheet.table}: {sheet.error}")
            continue
        out.append(render_plan(plan, replicas))  # its binlog line the profile's own bytes, or says why not
        out += render_largest(sheet.largest)
    return "\n".join(out)

