"""The printed block of one run: the reference write-up's CPU lines ("Gunicorn cpu / Mysql cpu: master + 2 *
replica"), vegeta's text report verbatim, then our measurements, one line each — rendered from the run's summary
alone (and its report.txt), so the same results folder always renders the same block."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..analysis import limits
from ..analysis.judge import rows_read_per_read
from ..core.config import STALL_LAG_MS, STALL_P99_FACTOR
from ..core.nodenames import is_node, nodes_in, replicas_in
from ..core.records import shown_path
from ..core.results import (
    AboveKnee,
    AttackCpu,
    BufferPool,
    HarnessTime,
    LagOf,
    NodeCounters,
    NodeFigures,
    Num,
    PlannedFault,
    RunSummary,
    Settle,
    Soak,
    SoakCycles,
    SoakWindow,
    Stall,
)
from ..measure import health, rowcheck
from ..topology import appserver, links

ERROR_LINES_SHOWN = 8


def render_block(summary: RunSummary, folder: Path) -> str:
    """The reference write-up's block: CPU lines, vegeta's text report verbatim, then our measurements, one
    section after another (the summary's record: a run's as written, or its summary.json's)."""
    lines = [*_cpu_lines(summary), *_attacker_lines(summary), *_setup_lines(summary),
             vegeta_text(folder / "report.txt"),
             *_client_lines(summary), *_lag_lines(summary), *_soak_lines(summary), *_server_lines(summary),
             *_writeback_lines(summary), *_binlog_lines(summary),
             *_app_lines(summary), *_check_lines(summary)]
    lines += _harness_time_lines(summary)
    guards = summary.guards or []
    lines.append("Guards: " + ("none tripped" if not guards else "; ".join(f"WARNING {g}" for g in guards)))
    lines.append(f"Status: {summary.status}    Results: {shown_path(folder)}")
    return "\n".join(lines) + "\n"

# every part of HarnessTime, in its order (experiments/run._harness_time writes those it timed, none null)
HARNESS_PARTS: tuple[tuple[Callable[[HarnessTime], float | None], str], ...] = (
    (lambda p: p.start_up, "start-up"), (lambda p: p.before_attack, "preparing"),
    (lambda p: p.idle_window, "idle window"), (lambda p: p.attack, "attack"),
    (lambda p: p.after_attack, "after the attack (catch-up, reports, checks)"))


def _harness_time_lines(summary: RunSummary) -> list[str]:
    """The run's wall time by part: what the harness itself costs before and after the attack."""
    parts = summary.harness_time_s or HarnessTime()
    timed = [(seconds, label) for part, label in HARNESS_PARTS if (seconds := part(parts)) is not None]
    if not timed:  # a run recorded before the line existed
        return []
    shown = [f"{seconds:.1f} s {label}" for seconds, label in timed]
    return [f"Harness time: {', '.join(shown)}; {sum(seconds for seconds, _ in timed):.1f} s in all"]


NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}


def _cpu_lines(summary: RunSummary) -> list[str]:
    """The write-up's CPU lines: app, databases (master + 2 * replica), vegeta, harness, host."""
    lines: list[str] = []
    means = summary.cpu_mean_percent or {}
    if means:
        def pct(key: str) -> str:
            return f"{means[key]:.0f}" if key in means else "n/a"

        names = replicas_in(means) or ("replica1", "replica2")
        attackers = (summary.pipeline_cpu_s or AttackCpu()).per_attacker
        measured = [v for r in names if (v := means.get(r)) is not None]  # cpu.steady_means writes no null
        replicas = f"{sum(measured) / len(measured):.0f}" if len(measured) == len(names) else "n/a"
        sources = summary.cpu_sources or {}
        remote = any(v != "process" for k, v in sources.items() if is_node(k))
        lines += [f"Gunicorn cpu: {pct('app')}",
                  f"Mysql cpu: {pct('master')} + {len(names)} * {replicas}"
                  f"          (master {pct('master')}, " + ", ".join(f"{r} {pct(r)}" for r in names)
                  + (f"; database CPU: {', '.join(f'{k} {v}' for k, v in sources.items() if is_node(k))}"
                     if remote else "") + ")",
                  f"vegeta cpu: n/a here          ({len(summary.remote_attackers)} attacker hosts over SSH: each "
                  "one's CPU on its line below)" if summary.remote_attackers else
                  f"vegeta cpu: {means.get('vegeta', 0):.0f}          ("
                  + (f"{len(attackers)} attack processes, CPU s each: " + ", ".join(f"{s:.1f}" for s in attackers)
                     if attackers else "the attack process only")
                  + ")",
                  f"Harness cpu: {means.get('harness', 0):.0f}          (this harness process)",
                  f"Host cpu: {means.get('host_busy', 0):.0f} of {100 * (summary.cores or 1)}"
                  f" (steal {means.get('host_steal', 0):.0f})   [% of one core, mean over the steady part]"]
    return lines


def _attacker_lines(summary: RunSummary) -> list[str]:
    """The attacker hosts (a topology file's, over SSH): one line each, its share, requests, start, skew, CPU."""
    hosts = summary.remote_attackers or []
    if not hosts:
        return []
    total = sum(a.requests or 0 for a in hosts)
    lines = [f"Attackers: {len(hosts)} hosts over SSH, agreed start {summary.attack_start_agreed or 'n/a'}; "
             f"the report below merges their {sum(1 for a in hosts if a.results_file)} results files "
             f"({total:,} requests)"]
    for a in hosts:
        cpu = f"CPU {a.cpu_percent:.0f} % of a core ({a.cpu_source})" if a.cpu_percent is not None else \
            f"CPU {a.cpu_source or 'n/a'}"
        start = "no request" if a.first_request_s is None else f"first request {a.first_request_s:+.3f} s"
        skew = "clock skew n/a" if a.skew_ms is None else \
            f"clock skew {a.skew_ms:+.1f} ms (±{a.skew_uncertainty_ms or 0:.1f})"
        flag = f"FAILED: {a.error}; " if a.error else f"LATE by {a.first_request_s:.2f} s; " if a.late else ""
        lines.append(f"  attacker {a.index} {a.host}: {flag}{a.rate}/s share, {a.requests or 0:,} requests, "
                     f"{start}, {skew}, {cpu}")
    return lines


def _setup_lines(summary: RunSummary) -> list[str]:
    """How the run was set up: links, pinned cores, the settle wait before it."""
    lines: list[str] = []
    if summary.links:
        lines.append("Links: " + links.describe_text(summary.links))
    means = summary.cpu_mean_percent or {}
    pinned = (summary.cpus.pinned if summary.cpus else None) or {}
    if pinned and means:
        lines.append("Pinned cores: " + "; ".join(
            f"{g} {','.join(map(str, c))} ({(means.get(g) or 0) / len(c):.0f} % of its {len(c)} core"
            f"{'s' if len(c) > 1 else ''})" for g, c in pinned.items()))
    settle = summary.settle or Settle()  # a run that never settled keeps {}; prepare.settle writes settled, never null
    if settle.settled:
        lines.append(f"Settled before the run: {settle.waited_s:g} s (app idle, master idle, replicas at its "
                     "position, InnoDB at rest, host near idle" + (f"; it waited for: {'; '.join(settle.waited_for)}"
                                                   if settle.waited_for else "") + ")")
    elif settle.settled is not None:
        assert settle.why is not None  # experiments/prepare.settle writes why with settled
        lines.append(f"NOT settled before the run: started after {settle.waited_s:g} s with " + "; ".join(settle.why))
    return lines


def _client_lines(summary: RunSummary) -> list[str]:
    """What the client got, the reading above the knee, CPU per request (gross and net of idle)."""
    lines: list[str] = []
    if summary.clients is not None:
        lines.append(f"Closed loop: {summary.clients} client(s), each sending its next request when its last was "
                     f"answered (vegeta -rate=0 -max-workers={summary.clients}): the rate asked only sized the "
                     "targets; the goodput is what they got")
    if summary.rate_sent is not None:  # never null: absent when vegeta reported nothing
        lines.append(f"Sent {summary.rate_sent:.2f}/s, goodput {summary.goodput:.2f}/s "
                     f"({summary.success:.2%} succeeded; server-side success {summary.server_success:.2%}, "
                     f"{summary.client_errors or 0:,} client-side errors)")
    if summary.above_knee is not None:  # analysis/summary.above_knee: null, or every key
        lines.append(above_knee_text(summary.above_knee))
    if summary.limit is not None:  # analysis/limits: null, or every key
        lines.append("Limited by: " + limits.text(summary.limit))
    resolution = summary.cpu_ms_per_success_net_resolution or {}
    for figures, label, known in (
            (summary.cpu_ms_per_success, "CPU-ms per successful request", {}),
            (summary.cpu_ms_per_request, "CPU-ms per request (failed ones included)", {}),
            (summary.cpu_ms_per_success_net, "CPU-ms per successful request net of idle", resolution)):
        if figures:
            lines.append(f"{label}: {_per_group(figures, known)}")
    if resolution:
        lines.append(f"Resolution of the net figures ({summary.net_resolution_z:g} standard errors of the idle "
                     f"cost subtracted, from {summary.idle_samples} one-second idle samples; below it a net "
                     "figure cannot be told from zero): " + ", ".join(f"{k} {v:.3f}" for k, v in resolution.items()))
    incident = _bigtx_text(summary)
    if incident and summary.cpu_ms_per_success:
        lines.append(f"These per-request figures include {incident}: they describe the incident, not the workload")
    idle = summary.cpu_idle_per_s
    if idle:
        window = f", {summary.idle_window_s:g} s" if summary.idle_window_s else ""
        lines.append("Idle CPU, subtracted from the net figures (no load, only the measurement running: the "
                     "heartbeat, GTID positions read every 10 ms, the app's probes; before the "
                     f"attack{window}; % of one core): " + ", ".join(f"{k} {_percent(v)}" for k, v in idle.items()
                                                           if k not in ("host_busy", "host_steal", "vegeta")))
    if summary.db_share_of_host is not None:
        lines.append(f"Databases' share of the busy host CPU: {summary.db_share_of_host:.0%}")
    return lines


def _percent(share: float | None) -> str:
    """CPU seconds per second as % of one core (net_of_idle writes every group's: never null)."""
    assert share is not None
    return f"{100 * share:.1f}"


def _per_group(figures: NodeFigures, resolution: NodeFigures) -> str:
    """Each group's figure as the summary lists them (net_text, with its resolution where it has one)."""
    shown = []
    for group, figure in figures.items():
        assert figure is not None  # analysis/summary writes a figure per group, none null
        shown.append(net_text(group, figure, resolution.get(group)))
    return ", ".join(shown)


def net_text(group: str, value: float, resolution: float | None) -> str:
    """A group's net CPU figure, or "< resolution" where the idle cost's noise is larger than what is left."""
    if resolution is not None and value < resolution:
        return f"{group} < {resolution:.3f}"
    return f"{group} {value:.3f}"


def _lag_lines(summary: RunSummary) -> list[str]:
    """Each replica's lag and catch-up, and the lag's floor."""
    lines: list[str] = []
    floor = summary.lag_floor_ms
    lags = {name: _lag_of(name, lag_of) for name, lag_of in (summary.lag or {}).items()}
    for name, lag_of in lags.items():
        catch: float | str | None = "-" if summary.catch_up_s is None else summary.catch_up_s.get(name)
        if catch == "-":
            catch_text = "catch-up not measured"
        elif name in (summary.catch_up_held or {}):
            catch_text = (f"catch-up not measured: {(summary.catch_up_held or {})[name]} held it when the last "
                          "request was sent (restored after the run)")
        elif name in (summary.catch_up_unreachable or []):
            catch_text = "catch-up not measured: it did not answer when the last request was sent"
        elif catch is None:
            growth = lag_of.growth_s_per_s
            timeout = 0 if summary.catch_up_timeout_s is None else summary.catch_up_timeout_s  # never null
            catch_text = (f"did NOT catch up within {timeout:g} s"
                          + (f"; lag grew {growth:.2f} s per s" if growth is not None else ""))
        else:
            catch_text = f"caught up {catch:.2f} s after the last request was sent"
        settled = (summary.lag_settled_s or {}).get(name)
        if lag_of.method == "gtid positions":
            settled_text = ""
            if settled is not None:
                assert floor is not None  # experiments/run.py writes lag_floor_ms with lag_settled_s
                settled_text = f", lag back under {2 * floor:g} ms after {settled:.2f} s"
            lines.append(f"Lag {name} (GTID positions): p50 {_ms(lag_of.p50_ms)}, p99 {_ms(lag_of.p99_ms)}, "
                         f"max {_ms(lag_of.max_ms)}; heartbeat p99 {_ms(lag_of.heartbeat_p99_ms)}; "
                         f"Seconds_Behind_Master max {lag_of.max_seconds_behind_master}; {catch_text}"
                         f"{settled_text}")
            if lag_of.split_samples:
                lines.append(_split_line(name, lag_of))
            continue
        settled_text = "" if settled is None else \
            f", heartbeat lag back under {2 * (floor or 100)} ms after {settled:.2f} s"
        lines.append(f"Lag {name}: heartbeat p50 {_ms(lag_of.p50_ms)}, p99 {_ms(lag_of.p99_ms)}, "
                     f"max {_ms(lag_of.max_ms)}; Seconds_Behind_Master max "
                     f"{lag_of.max_seconds_behind_master}; {catch_text}{settled_text}")
    methods = {lag_of.method for lag_of in lags.values()}
    if floor and "gtid positions" in methods:
        lines.append(f"Lag floor: positions read every {floor:g} ms (achieved median), so lag below about {floor:g} ms "
                     f"is not resolved; nothing is written to measure it (the heartbeat, every "
                     f"{100 if summary.heartbeat_ms is None else summary.heartbeat_ms} ms, is the cross-check)")
    elif floor:
        lines.append(f"Lag floor: the heartbeat is written every {floor} ms, so an idle replica reads 0–{floor} ms")
    return lines


def _lag_of(name: str, lag_of: LagOf | None) -> LagOf:
    """A replica's lag as the block prints it: a null one fails, as reading a figure of it always did."""
    if lag_of is None:
        raise AttributeError(f"the lag of {name} is null: no figure of it to print")
    return lag_of


STALLS_SHOWN = 10  # a soak's stalls listed in the block; soak.json-like detail stays in summary.json's "soak"
COUNTER_WORDS = (("checkpoint_age_mb", "checkpoint age", " MB"), ("dirty_pages", "dirty pages", ""),
                 ("history_length", "history length", ""), ("pages_flushed_per_s", "pages flushed", "/s"))


def _soak_lines(summary: RunSummary) -> list[str]:
    """A soak's lag growth per window with its interval, and its stalls with the counters around them."""
    soak = summary.soak
    if soak is None:
        return []
    growth, window = [], None
    for name, g in sorted((soak.growth or {}).items()):
        window = g.window_s
        if g.mean_ms_per_min is not None:
            ci, mean, unit, fmt = g.ci95_ms_per_min, g.mean_ms_per_min, "ms/min", "+,.2f"
        else:  # a soak recorded before ms/min
            ci, mean, unit, fmt = g.ci95_s_per_s, g.mean_s_per_s or 0, "s/s", "+.4f"
        interval = f" [{ci[0]:{fmt}}, {ci[1]:{fmt}}]" if ci else ""
        verdict = ("" if not ci else ", falling behind" if ci[0] > 0 else ", catching up" if ci[1] < 0
                   else ", no trend beyond the noise")
        growth.append(f"{name} {mean:{fmt}} {unit}{interval} over {g.windows or 0} windows{verdict}")
    lines = [f"Soak: lag growth per {window:g} s window (mean, 95 % interval across the windows): "
             + "; ".join(growth)] if growth and window else []
    stalls = soak.stalls or []
    lines.append(f"Stalls: {len(stalls)} (seconds whose p99 is over {STALL_P99_FACTOR:g}× the usual second's "
                 f"{soak.usual_p99_ms} ms, or a replica's lag {STALL_LAG_MS:g} ms above its usual)"
                 + ("" if stalls else ": none"))
    lines += ["  " + _stall_text(stall) for stall in stalls[:STALLS_SHOWN]]
    if len(stalls) > STALLS_SHOWN:
        lines.append(f"  … and {len(stalls) - STALLS_SHOWN} more (summary.json, soak.stalls)")
    return lines + _steady_lines(soak)


def _steady_lines(soak: Soak) -> list[str]:
    """Each window's cost per write (the worse replica's), and the steady state's from InnoDB's equilibrium on."""
    windows, eq = soak.windows or [], soak.equilibrium
    if not windows or eq is None:
        return []
    lines = ["Soak windows, per successful write (the worse replica; CPU net of idle): " + "; ".join(
        f"{w.from_s:g} s {_worse(w, 'cpu_ms_per_write_net', 3)} CPU-ms, {_worse(w, 'pages_flushed_per_write', 2)} "
        f"pages flushed, {_worse(w, 'kb_written_per_write', 1)} KB" for w in windows)]
    if not eq.reached:
        cycling = {node: c for node, c in (soak.cycles or {}).items() if c.per_write}
        if cycling and set(cycling) == set(windows[0].nodes or {}):
            return lines + [_cycles_line(cycling)]
        return lines + ["Soak steady state: NOT reached (InnoDB's checkpoint age and dirty pages still moving over "
                        f"the last windows: {'; '.join(eq.moving or [])}); the per-write figures above include "
                        "write-back only as far as flushing had begun"] + ([_cycles_line(cycling)] if cycling else [])
    per = eq.per_write or {}
    return lines + [f"Soak steady state, from {eq.from_s:g} s ({eq.windows} windows with InnoDB's checkpoint age and "
                    "dirty pages flat): per successful write, write-back included, " + "; ".join(
                        f"{node} {_per_write(f)}" for node, f in per.items())]


def _per_write(f: dict[str, Num | None]) -> str:
    """A node's steady-state figures per write (a soak's equilibrium or cycles)."""
    return (f"{_fig(f.get('cpu_ms_per_write_net'), 3)} CPU-ms net of idle, "
            f"{_fig(f.get('pages_flushed_per_write'), 2)} pages flushed, {_fig(f.get('kb_written_per_write'), 1)} "
            "KB written")


def _cycles_line(cycling: dict[str, SoakCycles]) -> str:
    """The nodes whose InnoDB wrote back in bursts: their bursts and the per-write figures over whole cycles against
    those before the first burst (analysis/soak.cycles)."""
    parts = []
    for node, c in cycling.items():
        period = f"every {c.period_s / 60:.0f} min" if c.period_s is not None else ""
        before = f" (before the first burst: {_per_write(c.before)})" if c.before else ""
        parts.append(f"{node} bursts {period} from {', '.join(f'{s:g}' for s in c.bursts_from_s or [])} s; over "
                     f"{c.cycles} whole cycle{'s' if c.cycles != 1 else ''} ({c.windows} windows) "
                     f"{_per_write(c.per_write or {})}{before}")
    return ("Soak steady state: cycles (InnoDB writes back in bursts, never flat); per successful write over whole "
            "cycles, write-back included: " + "; ".join(parts))


def _worse(window: SoakWindow, figure: str, digits: int) -> str:
    got = [v for node, f in (window.nodes or {}).items() if node in replicas_in([node])
           and (v := f.get(figure)) is not None]
    return _fig(max(got) if got else None, digits)


def _stall_text(stall: Stall) -> str:
    lags = ", ".join(f"{n} {v:,.0f} ms" for n, v in sorted((stall.lag_ms or {}).items()) if v is not None)
    around = []
    for node, figures in sorted((stall.around or {}).items()):
        parts = [f"{word} {counter.peak:,.0f}{unit} (usual {counter.usual:,.0f})"
                 for key, word, unit in COUNTER_WORDS if (counter := getattr(figures, key)) is not None]
        if figures.rotations:
            parts.append("binlog rotated")
        around.append(f"{node}: {', '.join(parts)}")
    p99 = "-" if stall.p99_ms is None else f"{stall.p99_ms:,.0f} ms"
    return f"{stall.from_s}–{stall.to_s} s: p99 {p99}; lag {lags}; around it {'; '.join(around) or 'no counters'}"


def _split_line(name: str, lag_of: LagOf) -> str:
    """Where a replica's lag sat: not yet received (the IO side) or received, not applied (the SQL thread's)."""
    return (f"Lag {name} split: of its mean {_ms(lag_of.mean_ms)}, {_ms(lag_of.io_mean_ms)} not yet received (IO), "
            f"{_ms(lag_of.sql_mean_ms)} received, not applied (SQL); p99 {_ms(lag_of.io_p99_ms)} and "
            f"{_ms(lag_of.sql_p99_ms)} (each share's own; {lag_of.split_samples:,} reads of both positions)")


def _server_lines(summary: RunSummary) -> list[str]:
    """The servers: replication per node, disk per write, semi-sync, rows checked, buffer pools."""
    lines: list[str] = []
    nodes = (summary.replication.nodes if summary.replication else None) or {}
    master = nodes.get("master")  # a per-node map: a run without the master's counters has none
    if master and master.transactions:
        cpu = summary.cpu_seconds or {}
        parts = []
        for name in nodes_in([*nodes, *cpu, "master", "replica1"]):
            node = nodes.get(name)
            if node is None:
                parts.append(f"{name} n/a")
                continue
            text = f"{name} {node.transactions_per_s:,.1f} trx/s, {node.rows_per_s:,.1f} rows/s"
            seconds = cpu.get(name)
            if seconds is not None and node.rows_changed:
                text += f", {1000 * seconds / node.rows_changed:.3f} CPU-ms per row"
            if node.rows_read_per_row_changed is not None:
                text += f", {node.rows_read_per_row_changed:,.1f} rows read per row changed"
            parts.append(text)
        lines.append("Replication (app transactions, rows changed and CPU per row, during the attack): "
                     + "; ".join(parts))
        disk = []
        for name, node in nodes.items():
            if node is None:
                continue
            kb = node.kb_written_per_write
            fsyncs = "-" if node.fsyncs_per_write is None else node.fsyncs_per_write
            syncs = "" if node.binlog_syncs_per_write is None else \
                f" + {node.binlog_syncs_per_write} binlog syncs (sync_binlog={node.sync_binlog})"
            if node.fsyncs_per_write_net is not None:  # summaries from before the idle counter rates lack it
                net_syncs = "" if node.binlog_syncs_per_write_net is None else \
                    f" + {node.binlog_syncs_per_write_net} binlog syncs"
                net_kb = "" if node.kb_written_per_write_net is None else f", {node.kb_written_per_write_net:.1f} KB"
                syncs += f" (net of idle: {node.fsyncs_per_write_net} fsyncs{net_syncs}{net_kb})"
            disk.append(f"{name} {fsyncs} InnoDB fsyncs{syncs}, {'-' if kb is None else f'{kb:.1f}'} KB written")
        lines.append("Disk per successful write: " + "; ".join(disk)
                     + (f"; master group commit {master.commits_per_group} commits per group"
                        if master.commits_per_group else ""))
        semi = master.semi_sync
        if semi:
            lines.append(f"Semi-sync: {semi.acked:,} acked, {semi.fell_back:,} fell back to async; MariaDB's "
                         f"own counters: avg wait {_us(semi.avg_tx_wait_us)} (network "
                         f"{_us(semi.avg_net_wait_us)}), which is not what a commit pays: compare the write p50 "
                         "with a run with --semi-sync off on the same link (study semi-sync does)")
    if summary.rows_checked is not None:  # measure/rowcheck writes every key, or the run has none
        lines.append("Rows: " + rowcheck.describe(summary.rows_checked))
    pools = summary.buffer_pools or {}
    if pools:
        lines.append(pool_text(pools, summary.schema_name or ""))  # schema: the scenario's, never null
    if master and master.transactions and master.pool_disk_reads_per_write is not None:
        shown = {name: node for name, node in nodes.items() if node is not None and node.kb_read_per_write is not None}
        net = all(n.kb_read_per_write_net is not None for n in shown.values())  # idle rates of these recorded

        def count(node: NodeCounters, figure: str) -> str:
            return f"{getattr(node, figure + '_net') if net else getattr(node, figure):g}"

        lines.append(f"Buffer pool per successful write{' (net of idle)' if net else ''}: " + "; ".join(
            f"{name} {count(node, 'pool_disk_reads_per_write')} pages read from disk, "
            f"{count(node, 'pages_flushed_per_write')} pages flushed, {count(node, 'kb_read_per_write')} KB read"
            for name, node in shown.items()))
    return lines


def _writeback_lines(summary: RunSummary) -> list[str]:
    """The run's write-back (its own dirty pages forced out after the drain) per successful write, and the run's
    net CPU, KB written and pages flushed per write with it beside the figure in the run (analysis/writeback)."""
    w = summary.writeback
    if w is None or not w.writes or not w.nodes:
        return []
    shown = {name: node for name, node in w.nodes.items() if node is not None}
    flush = []
    for name, node in shown.items():
        cpu = "n/a" if node.cpu_ms_per_write_net is None else \
            net_text("", node.cpu_ms_per_write_net, node.cpu_ms_per_write_net_resolution).strip()
        flush.append(f"{name} {cpu} CPU-ms net of idle, {node.pages_flushed_per_write:g} pages flushed, "
                     f"{_fig(node.kb_written_per_write, 1)} KB written")
    rest = "" if w.at_rest else f"; NOT at rest after it: {'; '.join(w.why or [])}"
    lines = [f"Write-back per successful write (the run's own dirty pages forced out after the drain, "
             f"{w.seconds:g} s{rest}; {w.method}): " + "; ".join(flush)]
    both = [f"{name} {_fig(node.run_cpu_ms_per_write_net, 3)} → {_fig(node.cpu_ms_per_write_net_with_writeback, 3)} "
            f"CPU-ms net of idle, {_fig(node.run_kb_written_per_write, 1)} → "
            f"{_fig(node.kb_written_per_write_with_writeback, 1)} KB written" for name, node in shown.items()]
    lines.append("Per successful write, in the run → with its write-back: " + "; ".join(both))
    return lines


def _fig(value: float | None, digits: int) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _binlog_lines(summary: RunSummary) -> list[str]:
    """Binlog and relay log bytes."""
    lines: list[str] = []
    b = summary.binlog
    if b is not None:  # measure/binlog.describe writes every key, or the run has none
        per_write = "n/a (no writes)" if b.bytes_per_write is None else f"{b.bytes_per_write:.1f} bytes per write"
        per_row = "" if b.bytes_per_row is None else f", {b.bytes_per_row:.1f} bytes per row changed"
        lines.append(f"Binlog: {b.master_binlog_bytes:,} bytes on the master during the attack; "
                     f"{per_write}{per_row} "
                     f"({b.successful_writes:,} successful writes; {b.heartbeat_writes} heartbeats × "
                     f"{b.heartbeat_bytes_per_write:.0f} B excluded)")
        if _bigtx_text(summary):
            lines[-1] += f"; includes {_bigtx_text(summary)}"
        if b.files_opened:
            lines.append(f"Binlog rotated during the attack (max_binlog_size): opened {', '.join(b.files_opened)}")
        assert b.replica_received_bytes is not None  # measure/binlog.describe writes it with the rest
        relay = ", ".join(f"{k} {v:,}" for k, v in b.replica_received_bytes.items())
        lines.append(f"Relay log bytes received: {relay}")
    return lines


def _bigtx_text(summary: RunSummary) -> str | None:
    """'the planned big transaction (1,000,000 rows of bench_idx.accounts)', or None without a bigtx fault."""
    done = [f.bigtx for f in summary.planned_faults or [] if f.bigtx]
    if not done:
        return None
    rows = ", ".join(f"{d.rows_changed:,}" for d in done)
    return (f"the planned big transaction{'s' if len(done) > 1 else ''} ({rows} rows of "
            f"{done[0].table})")


def _app_lines(summary: RunSummary) -> list[str]:
    """The app's admission and every group's memory."""
    lines: list[str] = []
    adm = summary.app_admission
    if adm is not None and adm.workers:
        stood = (f"; a queue stood {adm.standing_s:g} s in {adm.episodes} episode(s)"
                 if adm.mode == "codel" and adm.standing_s is not None else "")
        pool = summary.client_connections
        if adm.mode == "none":
            if summary.client_connections_setting == "unlimited" or not pool:
                bound = ("none: the unbounded app (REPLBENCH_ADMISSION=none, REPLBENCH_CLIENT_CONNECTIONS=unlimited"
                         + (f": up to {pool:,} connections, vegeta's descriptors)" if pool else ")"))
            else:
                bound = (f"none: the app sheds nothing; vegeta's {pool:,} connections (REPLBENCH_CLIENT_CONNECTIONS) "
                         "bound what it holds, the excess waits in the client")
        else:
            bound = f"bound {appserver.bound_text(adm, per_worker=True)}"
        lines.append(f"App admission: {adm.admitted:,} admitted, {adm.shed:,} shed at once with 503 "
                     f"({bound}; peaks in flight summed over {adm.workers} workers: "
                     f"{adm.peak_in_flight:,}{stood})")
    memory = summary.memory_mb
    if memory:
        shown = []
        for k, v in memory.items():
            assert v is not None  # measure/cpu.memory_summary writes each group's figures
            shown.append(f"{k} {v.first:.0f} → {v.last:.0f} ({v.max:.0f})")
        lines.append("Memory RSS MiB (first → last sample, max): " + ", ".join(shown))
    return lines


def _check_lines(summary: RunSummary) -> list[str]:
    """Consistency, planned faults with their windows, routing, who served, faults seen."""
    lines: list[str] = []
    c = summary.consistency
    if c is not None:  # experiments/run._check_consistency writes its keys, or the run has none
        if c.checked is not None and not c.checked:  # absent: checked (files before the key); never null
            lines.append(f"Consistency: not checked — {c.reason}")
        else:
            verdict = "equal on the nodes checked" if c.equal else "DIFFERENT — replicas diverged, RUN FAILED"
            if c.equal and not c.missing and not c.held:
                count = len(c.checksums or {})
                verdict = f"equal on all {NUMBER_WORDS.get(count, str(count))} nodes"
            what = f"CHECKSUM TABLE {c.table}" if c.scope in (None, "table") else \
                f"the {c.rows:,} rows this run wrote in {c.table} (every column, checksummed)"
            lines.append(f"Consistency: {what} {verdict} {c.checksums}"
                         + (f"; not checked on {', '.join(c.missing)}" if c.missing else "")
                         + "".join(f"; {name} left out: {fault} held it when the last request was sent"
                                   for name, fault in (c.held or {}).items()))
    planned = summary.planned_faults or []
    if planned:
        lines.append("Planned faults: " + "; ".join(_planned_text(p) for p in planned))
        for name, w in (summary.fault_windows or {}).items():
            served = ", ".join(f"{k} {v:,}" for k, v in (w.served_by or {}).items())
            lines.append(f"  {name:<34} {w.start_s:6.1f}–{w.end_s:<6.1f} s  {w.requests:>7,} requests, "
                         f"{_num(w.rate)}/s, errors {_num(w.error_pct)} %, p50 {_num(w.p50_ms)} ms, "
                         f"p99 {_num(w.p99_ms)} ms" + (f"; served by {served}" if served else ""))
        for p in planned:
            if p.bigtx:
                b = p.bigtx
                applied = ", ".join(f"{k} {'not within the timeout' if v is None else f'{v:.2f} s'}"
                                    for k, v in (b.replicas_applied_after_commit_s or {}).items())
                lines.append(f"  {p.fault}: {b.rows_changed:,} rows of {b.table} changed in "
                             f"{b.master_s:.2f} s on the master; applied after its commit: {applied}")
    for r in summary.routing or []:
        if r.node not in (summary.served_by or {}) and r.last_served_s is None:
            continue  # a node that serves no request of this scenario (the master of a read run)
        if r.last_served_s is None:
            stopped = "no request after it went down"
        else:
            assert r.down_at_s is not None  # measure/timeline.build writes every outage's
            stopped = f"its last request {r.last_served_s - r.down_at_s:.2f} s after it went down"
        back = "" if r.back_at_s is None else ("; not used again before the end" if r.first_served_back_s is None
                                               else f"; used again {r.first_served_back_s - r.back_at_s:.2f}"
                                                    " s after it was back")
        lines.append(f"Routing around {r.node}: {stopped}{back}")
    if summary.served_by:
        lines.append("Served by: " + ", ".join(f"{k} {v:,}" for k, v in sorted(summary.served_by.items())))
        per_read = rows_read_per_read(summary)
        if per_read:
            lines.append("Rows read per read served: " + ", ".join(f"{k} {v:,.1f}" for k, v in per_read.items()))
    lost = summary.nodes_lost or []  # an older summary's "faults", migrated
    if lost:
        start = 0.0 if summary.attack_start_s is None else summary.attack_start_s
        lines.append("Faults seen: " + "; ".join(health.describe_faults([f.model_dump() for f in lost], start)))
    return lines


def _planned_text(p: PlannedFault) -> str:
    """'kill:replica1 done at 10.0 s (began 9.2 s)', and its error if it failed."""
    assert p.at_s is not None  # load/faults.py writes it when the fault is done
    return (f"{p.fault} done at {p.at_s:.1f} s"
            + (f" (began {p.began_at_s:.1f} s)" if p.began_at_s is not None
               and p.at_s - p.began_at_s >= 0.5 else "")
            + (f" (FAILED: {p.error})" if p.error else ""))


def pool_text(pools: dict[str, BufferPool], schema: str) -> str:
    """'Buffer pool: 128 MiB on every node, smaller than bench_idx (2.0 GiB) ...' (flush method included), from
    the summary's per-node pools."""
    pool_bytes, table_bytes = {}, []
    for n, p in pools.items():
        assert p.pool_bytes is not None and p.table_bytes is not None  # topology/dataset.py writes both
        pool_bytes[n] = p.pool_bytes
        table_bytes.append(p.table_bytes)
    sizes = sorted(set(pool_bytes.values()))
    table = max(table_bytes)
    where = "on every node" if len(sizes) == 1 else "(" + ", ".join(
        f"{n} {b / 2**20:,.0f} MiB" for n, b in pool_bytes.items()) + ")"
    size = f"{sizes[0] / 2**20:,.0f} MiB " if len(sizes) == 1 else ""
    flush = ", ".join(sorted({str(p.flush_method) for p in pools.values()}))
    if all(p.fits for p in pools.values()):
        return (f"Buffer pool: {size}{where}, holding {schema} ({table / 2**30:.1f} GiB with its indexes); "
                f"warmed before the run; innodb_flush_method {flush}")
    return (f"Buffer pool: {size}{where}, smaller than {schema} ({table / 2**30:.1f} GiB with its indexes): not "
            f"warmed, since uniformly random ids never warm a pool smaller than the data (the misses are what this "
            f"run measures); innodb_flush_method {flush}, so a miss goes to the disk, not the OS page cache")


def vegeta_text(path: Path, max_errors: int = ERROR_LINES_SHOWN) -> str:
    """vegeta's text report verbatim, except that a long Error Set is cut (the whole one stays in report.txt)."""
    lines = path.read_text().rstrip("\n").splitlines()
    if "Error Set:" not in lines:
        return "\n".join(lines)
    head = lines.index("Error Set:") + 1
    errors = lines[head:]
    if len(errors) <= max_errors:
        return "\n".join(lines)
    return "\n".join(lines[:head + max_errors] + [f"... {len(errors) - max_errors} more distinct errors in "
                                                  f"{path.name}"])


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} µs"


def above_knee_text(knee: AboveKnee) -> str:
    """The one line that reads a run above the knee as a finding: what this machine served of what was asked, where
    the rest went, and who had the host (a summary's record of analysis/summary.above_knee's figures)."""
    shares = knee.shares_of_busy or {}
    if knee.saturated or knee.host_busy_percent is not None:
        assert knee.cores is not None  # analysis/summary.above_knee writes it (0: not known)
        host = (f"the host was saturated (busy {knee.host_busy_percent:.0f} % of {100 * knee.cores})"
                if knee.saturated else
                f"the host was not saturated (busy {knee.host_busy_percent:.0f} % of {100 * knee.cores})")
    else:
        host = "host CPU not measured"
    who = ", ".join(f"{g} {v:.0%}" for g, v in shares.items())
    rest = []
    if knee.shed_per_s:
        rest.append(f"{knee.shed_per_s:,.0f}/s were shed by the app's admission (503 at once)")
    if knee.failed_otherwise_per_s:
        rest.append(f"{knee.failed_otherwise_per_s:,.0f}/s failed otherwise")
    pool = ""
    if knee.client_pool_full:
        pool = (f"; all {knee.client_connections:,} of vegeta's connections were in use, so requests also waited "
                "in the client (REPLBENCH_CLIENT_CONNECTIONS)" if knee.shed_per_s else
                f"; all {knee.client_connections:,} of vegeta's connections were in use: the excess waited in the "
                "client, its wait counted in the latency (REPLBENCH_CLIENT_CONNECTIONS)")
    return (f"Above the knee: this machine served {knee.served:,.0f} of the {knee.asked:,} requests/s asked "
            f"({knee.share:.0%})" + (f"; {' and '.join(rest)}" if rest else "") + f"; {host}"
            + (f": {who} of the busy CPU" if who else "") + pool + _cores_needed(knee))


def _cores_needed(knee: AboveKnee) -> str:
    """What the rate asked would need, role by role, at this run's CPU per successful request."""
    needed = {g: v for g, v in (knee.cores_needed or {}).items() if v is not None}
    if not needed:
        return ""
    return (f". {knee.asked:,}/s would need, at this run's CPU-ms per successful request net of idle (above the "
            "knee a request costs more, so an upper bound; no contention between roles assumed): "
            + ", ".join(f"{g} {v:.1f}" for g, v in needed.items())
            + f" cores, {sum(needed.values()):.1f} in all against this host's {knee.cores or 'unknown'}")
