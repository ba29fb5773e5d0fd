"""Every results file, read and written here: a run's summary.json and meta.json, a sweep's sweep.json, a study's
study.json, a campaign's campaign.json, an apply-capacity unit's apply.json, a big-transaction unit's bigtx.json,
the cost model's model.json, validate.json and recording.json, bench-app's bench-app.json and find-users.json (a
binlog's profile.json is analysis/profile.Profile, written by write_record too).

Readers get typed, frozen records (pydantic models) instead of dictionaries; a file written by an older version of
replbench is migrated here, in one place, before it is validated, so every reader sees the current shape and the
committed report assets still render. A field absent from a file reads as None (as `dict.get` gave). A key no
record declares is refused (``extra="forbid"``), in a file read and in a record written: a misspelt key fails where
it is written instead of reading back as None. `write_record` is the one writer of a record's file, and writes
the current version of the record's kind (a run's summary and meta go through `write_run`). docs/metrics.md lists
the keys and what they mean. A run's summary is a union by outcome and kind: a finished run's (FinishedRun, and
FinishedWriteRun where it wrote) requires what every finished run records, so a reader of one (`finished`) needs no
None check there and a run that leaves one out fails where it writes it; a run that did not finish (failed,
interrupted, incomplete) is a RunSummary that holds whatever it got to.

Every results file carries `schema_version`, its kind's version; version 0 is a file without the key. KINDS holds
each kind's current version and, per step, the keys it renamed; `migrate` turns a document of any older version
into the current shape before it is validated (every `read_*` and `*_of` below, and analysis/profile.read, call it).
A migration renames keys and stamps the version, never changes a value (tools/migrate_results.py migrated the
committed files so, checking it). Format history, one line per version (a renamed or removed key or a changed
meaning gets the next number, a line here and its step in KINDS; an added key is listed under its kind and keeps the
version):
- summary.json, meta.json (a run's; SCHEMA_VERSION):
  0: the first files; a summary may hold its lost nodes under `faults`.
  1: `schema_version` written; lost nodes under `nodes_lost` (the migration renames `faults`, value unchanged).
  Keys added later, absent from the files written before (a reader gets None; no value or name changed, so the
  version stays): summary `writeback` (2026-12-02: the run's own dirty pages flushed after it, counted),
  `limit` (2026-12-02: what limited the run), `clients` (2026-12-02: a closed loop, `--clients N`), `soak.windows`
  and `soak.equilibrium` (2026-12-02: a soak's cost per write per window and InnoDB's equilibrium), `targets`
  (2026-12-03: the targets written, which a closed loop sends again once past them), `soak.cycles` (2026-12-03:
  each node's flushing bursts and the per-write figures over whole cycles).
- sweep.json, study.json, campaign.json, apply.json, bigtx.json, model.json, validate.json, recording.json,
  bench-app.json (each kind its own number; the same history so far):
  0: the files written before any of these had a version.
  1: `schema_version` written; keys as in 0. Added since: apply.json's replicas' `writeback` and its `cores`
  (2026-12-02); apply.json's `live` and its replicas' `busiest_minute_ratio` (2026-12-02: `apply-capacity --live`),
  its `replay` (2026-12-02: `apply-capacity --binlog`), its live window's `cpu` and `idle_trx` (2026-12-03: each
  node's CPU per transaction over the window, the workload's own fit for `model predict --own-runs`), its nodes'
  `below_idle` (2026-12-03: a node's window CPU did not exceed its idle, so no figure where 0.0 was written),
  its `replay.events_bytes` and `replay.relog` (2026-12-03: a replay's bytes from its first transaction; files
  re-logged under another row image);
  model.json's `app_cpu_s` and `load_cpu_s`, and their fits' `basis` (2026-12-02: `model predict --cores`);
  study.json's `cells_cut` (2026-12-02: the study file's cells `--only` left out), `cores` (2026-12-02: the
  host's, for the core ceiling) and its units' metric `link_rtt_ms` (2026-12-02: the replication link's measured
  round trip); sweep.json's `boundary` (2026-12-02: `sweep --confirm N`, the maximum confirmed by
  interleaved rounds at the boundary).
- find-users.json:
  0: its shapes, each under its name.
  1: `schema_version` written beside the shapes.
- profile.json (a binlog's, analysis/profile.Profile; its SCHEMA_VERSION is KINDS' entry):
  1: the first; `schema_version` written from the start (no version 0: a document without one is not a profile).
  Added since: a line's `rows_by_transaction_size` (2026-12-02: its share of each transaction, so one on several
  lines is priced once; absent: None).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .config import ReplbenchError, Word
from .scenario import WRITE_ENDPOINTS

# the shape of a run's summary.json and meta.json: a reader meets files of every version since the first (none
# written: 0), and a renamed key or a changed meaning gets the next number and a step in KINDS
SCHEMA_VERSION = 1

# summary keys an older version named otherwise: (the name now, the name then), the older key renamed. Not
# rate_achieved and throughput (rate_sent's and goodput's older names): the block reads a summary with rate_sent as
# one with server_success too, which those files lack, so their readers (report/sweeps, analysis/rules.goodput,
# verdicts.MEDIAN_FIGURES, compare.run_figures) read either name
RENAMED_BEFORE_V1 = (("nodes_lost", "faults"),)

Renames = tuple[tuple[str, str], ...]  # top-level keys: (the name now, the name then)


@dataclass(frozen=True)
class Kind:
    """A results file's kind: its current version, the oldest version a file of it can hold, and per version n the
    top-level keys the step from n to n + 1 renames. A step renames those keys and nothing else; `migrate` stamps the
    current version after the last (tools/migrate_results.py checks that only these changed)."""

    version: int
    oldest: int = 0  # 0: the kind's first files had no schema_version
    renames: dict[int, Renames] = field(default_factory=dict)

    def renamed_since(self, version: int) -> Renames:
        """Every rename a document of `version` goes through to the current one, in the order they apply."""
        return tuple(pair for step in range(version, self.version) for pair in self.renames.get(step, ()))


# every results file's kind by its file name (a sweep's steps keep their summaries as <run>-summary.json), the
# migrations of all of them in one table: the format history above says what each version changed
KINDS: dict[str, Kind] = {
    "summary.json": Kind(SCHEMA_VERSION, renames={0: RENAMED_BEFORE_V1}),
    "meta.json": Kind(SCHEMA_VERSION),
    "sweep.json": Kind(1),
    "study.json": Kind(1),
    "campaign.json": Kind(1),
    "apply.json": Kind(1),
    "bigtx.json": Kind(1),
    "model.json": Kind(1),
    "validate.json": Kind(1),
    "recording.json": Kind(1),
    "bench-app.json": Kind(1),
    "find-users.json": Kind(1),
    "profile.json": Kind(1, oldest=1),
}


def kind_of(name: str) -> str | None:
    """The kind of a results file by its name (KINDS' key), None for any other file (vegeta's report.json…)."""
    return next((kind for kind in KINDS if name == kind or name.endswith("-" + kind)), None)

Num = int | float  # an int stays an int (pydantic's smart union), so figures print as they were recorded
NodeFigures = dict[str, Num | None]  # one figure per node or process: master, replica1…, app, vegeta, host_busy…


class RecordRefused(ReplbenchError, ValueError):
    """A document its record refuses (a key it does not declare, a value of the wrong type), in one line naming the
    record and the keys: a ReplbenchError, so a command says it in one line, and a ValueError, as an unreadable
    file's JSON error is, so a reader that skips unreadable files skips it too."""


def _one_line(record: str, exc: ValidationError) -> str:
    wrong = [f"{'.'.join(str(part) for part in e['loc'])}: {e['msg']}" for e in exc.errors()]
    more = f" (and {len(wrong) - 3} more)" if len(wrong) > 3 else ""
    return f"{record} refused " + "; ".join(wrong[:3]) + more


class Record(BaseModel):
    """A results record: frozen, unknown keys refused, every declared field None when the file lacks it."""

    @classmethod
    def model_validate(cls, obj: Any, **options: Any) -> Self:
        """pydantic's, with a refusal raised as RecordRefused in one line."""
        try:
            return super().model_validate(obj, **options)
        except ValidationError as exc:
            raise RecordRefused(_one_line(cls.__name__, exc)) from exc

    # a NaN or an infinity held in an untyped value (dict[str, Any]) is written as json.dumps writes it, as a typed
    # float field's is (pydantic would write null), so a dictionary written as its record keeps every byte
    model_config = ConfigDict(extra="forbid", frozen=True, protected_namespaces=(), populate_by_name=True,
                              ser_json_inf_nan="constants")
    # the kind (KINDS' key) of the file this record is the whole of; None: a part of one
    FILE: ClassVar[str | None] = None


R = TypeVar("R", bound=Record)


# --- a run's summary.json -------------------------------------------------------------------------------------

class Latency(Record):
    min: Num | None = None
    mean: Num | None = None
    p50: Num | None = None
    p90: Num | None = None
    p95: Num | None = None
    p99: Num | None = None
    max: Num | None = None


class LagOf(Record):
    """One replica's lag over the attack (measure/lag.py)."""

    method: str | None = None
    samples: int | None = None
    mean_ms: Num | None = None
    p50_ms: Num | None = None
    p99_ms: Num | None = None
    max_ms: Num | None = None
    growth_s_per_s: Num | None = None
    max_seconds_behind_master: Num | None = None
    heartbeat_p50_ms: Num | None = None
    heartbeat_p99_ms: Num | None = None
    heartbeat_max_ms: Num | None = None
    # the lag split by replication thread (measure/lag.split_figures): io + sql means = mean_ms
    split_samples: int | None = None
    io_mean_ms: Num | None = None
    sql_mean_ms: Num | None = None
    io_p99_ms: Num | None = None
    sql_p99_ms: Num | None = None


class Binlog(Record):
    """The master's binlog volume and what reached each replica (measure/binlog.py)."""

    master_binlog_bytes: int | None = None
    replica_received_bytes: NodeFigures | None = None
    bytes_per_write: Num | None = None
    bytes_per_row: Num | None = None
    sent_bytes_per_write: Num | None = None
    rows_changed: int | None = None
    successful_writes: int | None = None
    master_com_insert: int | None = None
    master_com_update: int | None = None
    heartbeat_writes: int | None = None
    heartbeat_bytes_estimated: int | None = None
    heartbeat_bytes_per_write: Num | None = None
    dump_threads: int | None = None
    files_opened: list[str] | None = None


class SemiSync(Record):
    """The master's semi-synchronous replication over the attack (measure/counters.py): transactions a replica
    acknowledged and those that fell back to asynchronous, the mean waits (None: none waited) and whether it was
    still on at the end."""

    acked: int | None = None
    fell_back: int | None = None
    avg_tx_wait_us: int | None = None
    avg_net_wait_us: int | None = None
    on_at_end: bool | None = None


class NodeCounters(Record):
    """One node's server counters over the attack, per write (measure/counters.py)."""

    transactions: int | None = None
    transactions_per_s: Num | None = None
    statements: int | None = None
    rows_changed: int | None = None
    rows_changed_counted: int | None = None
    rows_per_s: Num | None = None
    rows_read: int | None = None
    rows_read_per_row_changed: Num | None = None
    binlog_commits: int | None = None
    binlog_group_commits: int | None = None
    commits_per_group: Num | None = None
    binlog_syncs: int | None = None
    binlog_syncs_per_write: Num | None = None
    sync_binlog: int | None = None
    innodb_fsyncs: int | None = None
    fsyncs_per_write: Num | None = None
    # net of idle (the idle window's rate × the span, analysis/summary.counters_net_of_idle); absent in runs recorded
    # before the idle window's rate of that count was
    idle_fsyncs_per_s: Num | None = None
    innodb_fsyncs_net: int | None = None
    fsyncs_per_write_net: Num | None = None
    idle_binlog_syncs_per_s: Num | None = None
    binlog_syncs_net: int | None = None
    binlog_syncs_per_write_net: Num | None = None
    redo_log_writes: int | None = None
    pages_flushed_per_write: Num | None = None
    pages_read_per_write: Num | None = None
    pages_written_per_write: Num | None = None
    pool_disk_reads: int | None = None
    pool_disk_reads_per_write: Num | None = None
    pool_miss_ratio: Num | None = None
    write_bytes: int | None = None
    kb_written_per_write: Num | None = None
    kb_read_per_write: Num | None = None
    pool_disk_reads_per_write_net: Num | None = None
    pages_read_per_write_net: Num | None = None
    pages_written_per_write_net: Num | None = None
    pages_flushed_per_write_net: Num | None = None
    kb_read_per_write_net: Num | None = None
    kb_written_per_write_net: Num | None = None
    semi_sync: SemiSync | None = None


class Replication(Record):
    seconds: Num | None = None
    nodes: dict[str, NodeCounters | None] | None = None


class Consistency(Record):
    """The checksums after the run (experiments/run.py)."""

    checked: bool | None = None
    equal: bool | None = None
    scope: str | None = None
    table: str | None = None
    rows: int | None = None
    checksums: dict[str, int | None] | None = None  # per node (None: its checksum failed)
    caught_up_s: NodeFigures | None = None
    missing: list[str] | None = None
    held: dict[str, str] | None = None  # replicas left out: a planned fault held them when the last request was sent
    reason: str | None = None


class Admission(Record):
    """The app's admission counters, all workers (app/admission.py)."""

    mode: str | None = None
    workers: int | None = None
    admitted: int | None = None
    answered: int | None = None
    failed: int | None = None
    shed: int | None = None
    peak_in_flight: int | None = None
    limit_per_worker: int | None = None
    limit_low: int | None = None
    limit_high: int | None = None
    queue_ms: int | None = None
    target_ms: int | None = None
    interval_ms: int | None = None
    learn_s: int | None = None
    episodes: int | None = None
    standing_s: Num | None = None
    latency_counts: list[int] | None = None


class InnodbNodeRest(Record):
    """One node's InnoDB as topology/innodbrest.rest found it and the seconds it took to rest (absent: it did
    not within the wait)."""

    dirty_pages: int | None = None
    history_length: int | None = None
    rest_s: Num | None = None


class InnodbRest(Record):
    """Every node's InnoDB brought back to rest (topology/innodbrest.rest): per node what it started with, the
    seconds waited, and what was not at rest when the wait ran out."""

    nodes: dict[str, InnodbNodeRest] | None = None
    waited_s: Num | None = None
    why: list[str] | None = None


class Settle(Record):
    """What the run waited for before its attack (experiments/prepare.py)."""

    settled: bool | None = None
    waited_s: Num | None = None
    host_wait_s: Num | None = None
    timeout_s: Num | None = None
    waited_for: list[str] | None = None
    why: list[str] | None = None
    innodb: InnodbRest | None = None  # per node: dirty pages and history it started with, seconds to rest


class AboveKnee(Record):
    """Where an overloaded run's requests went (analysis/summary.py)."""

    asked: Num | None = None
    served: Num | None = None
    share: Num | None = None
    shed_per_s: Num | None = None
    failed_otherwise_per_s: Num | None = None
    saturated: bool | None = None
    host_busy_percent: Num | None = None
    shares_of_busy: NodeFigures | None = None
    cores: int | None = None
    client_connections: int | None = None
    client_pool_full: bool | None = None
    # cores each role would need at the rate asked, at this run's CPU-ms per successful request net of idle (absent
    # before 2026-12-02)
    cores_needed: NodeFigures | None = None


class RowsChecked(Record):
    """The written values verified (measure/rowcheck.py)."""

    method: str | None = None
    checked: int | None = None
    changed: int | None = None
    share: Num | None = None
    indexed: bool | None = None
    first_rows_only: bool | None = None
    planned_rows_left_out: int | None = None
    columns: list[str] | None = None


class Cpus(Record):
    """Each group's cores (load/cpus.pin_groups): --cpus as asked (None: not asked), the cores each group was
    pinned to, and what the kernel read back per group (None: no process of it to read)."""

    requested: str | None = None
    pinned: dict[str, list[int]] | None = None
    read_back: dict[str, list[int] | None] | None = None


class AttackCpu(Record):
    """The attack's own processes, their CPU seconds as wait4 counted them (load/attack.py)."""

    vegeta: Num | None = None  # every attack process together
    per_attacker: list[Num] | None = None  # each attack process, where the run had more than one
    helpers: Num | None = None  # the pipeline's other processes (summaries from before the attack ran alone)
    ssh_clients: Num | None = None  # the ssh clients driving a topology file's attacker hosts (load/remote.py)


class AttackerCheck(Record):
    """One attacker host of a topology file as load/remote.check found it before the attack (meta.json's
    attacker_hosts): where it is, its vegeta, its clock against the harness's and the time ssh took to answer."""

    index: int | None = None
    host: str | None = None
    user: str | None = None
    port: int | None = None
    vegeta: str | None = None
    skew_ms: Num | None = None  # its clock minus the harness's
    skew_uncertainty_ms: Num | None = None
    connect_s: Num | None = None
    metrics: str | None = None


class RemoteAttacker(AttackerCheck):
    """One attacker host of a topology file, driven over SSH (load/remote.py): its check, its share and what it
    did."""

    rate: int | None = None  # its share of the run's rate
    requests: int | None = None  # in its results file
    expected_requests: int | None = None  # its rate × the duration: what it sends unless it stops early
    first_request_s: Num | None = None  # after the agreed start, on this host's clock (its skew removed)
    last_request_s: Num | None = None  # likewise
    late: bool | None = None
    exit_code: int | None = None
    error: str | None = None
    cpu_percent: Num | None = None  # its host's busy CPU over the attack, % of one core (node_exporter)
    cpu_source: str | None = None
    results_file: str | None = None


class Toxic(Record):
    """One direction's latency toxic on a link, as toxiproxy reports it."""

    stream: str | None = None
    latency_ms: Num | None = None
    jitter_ms: Num | None = None


class LinkState(Record):
    """One link through toxiproxy (topology/links.describe): its round trip as asked, its proxy, the toxics
    toxiproxy reports and the round trip measured through it (None: the node did not answer there)."""

    configured_rtt_ms: Num | None = None
    jitter_ms: Num | None = None
    proxy_port: int | None = None
    toxics: list[Toxic] | None = None
    measured_rtt_ms: Num | None = None


class HarnessTime(Record):
    start_up: Num | None = None
    before_attack: Num | None = None
    idle_window: Num | None = None
    attack: Num | None = None
    after_attack: Num | None = None


class BufferPool(Record):
    pool_bytes: int | None = None
    data_bytes: int | None = None
    table_bytes: int | None = None
    fits: bool | None = None
    flush_method: str | None = None


class Memory(Record):
    first: Num | None = None
    last: Num | None = None
    max: Num | None = None


class BigTxFault(Record):
    """A bigtx fault's UPDATE (load/faults.big_update): its table and rows, the value it wrote, the master's
    seconds and each replica's seconds from the commit to its having applied it (None: it did not)."""

    table: str | None = None
    rows_changed: int | None = None
    value: str | None = None
    master_s: Num | None = None
    replicas_applied_after_commit_s: NodeFigures | None = None


class PlannedFault(Record):
    """A planned fault as load/faults.FaultRunner carried it out."""

    fault: str | None = None
    node: str | None = None
    action: str | None = None
    rows: int | None = None  # a bigtx fault's: the rows its UPDATE changes
    at_s: Num | None = None
    planned_at_s: Num | None = None
    began_at_s: Num | None = None
    error: str | None = None
    bigtx: BigTxFault | None = None


class FaultWindow(Record):
    start_s: Num | None = None
    end_s: Num | None = None
    requests: int | None = None
    rate: Num | None = None
    error_pct: Num | None = None
    p50_ms: Num | None = None
    p99_ms: Num | None = None
    served_by: dict[str, int] | None = None


class Routing(Record):
    node: str | None = None
    down_at_s: Num | None = None
    back_at_s: Num | None = None
    last_served_s: Num | None = None
    first_served_back_s: Num | None = None


class Fault(Record):
    """A node lost during the run, seen by the health sampler (measure/health.py): a summary's nodes_lost."""

    node: str | None = None
    kind: str | None = None
    lost_at_s: Num | None = None
    back_at_s: Num | None = None
    planned: bool | None = None


class SoakGrowth(Record):
    """One replica's lag growth over a soak's windows (analysis/soak.growth_windows)."""

    window_s: Num | None = None
    windows: int | None = None
    growth_s_per_s: list[Num] | None = None
    mean_s_per_s: Num | None = None
    ci95_s_per_s: list[Num] | None = None
    mean_ms_per_min: Num | None = None  # the same growth in ms of lag per minute (absent from older soaks)
    ci95_ms_per_min: list[Num] | None = None


class StallCounter(Record):
    """One InnoDB counter around a soak's stall: its peak within the stall's context and its median over the run."""

    peak: Num | None = None
    usual: Num | None = None


class StallNode(Record):
    """One node around a soak's stall (analysis/soak.around): each counter it read there (a counter never read is
    absent), and the binlog files begun within it."""

    checkpoint_age_mb: StallCounter | None = None
    dirty_pages: StallCounter | None = None
    history_length: StallCounter | None = None
    pages_flushed_per_s: StallCounter | None = None
    rotations: Num | None = None  # as the innodb rows counted them (an int from measure/innodb)


class Stall(Record):
    """Seconds of a soak whose p99 or lag jumped, with each node's counters around them (analysis/soak)."""

    from_s: int | None = None
    to_s: int | None = None
    p99_ms: Num | None = None
    lag_ms: NodeFigures | None = None
    around: dict[str, StallNode] | None = None


class SoakWindow(Record):
    """One window of a soak: its successful writes and, per node, its cost per write and InnoDB's mean state
    (analysis/soak.cost_windows)."""

    from_s: Num | None = None
    writes: int | None = None
    nodes: dict[str, dict[str, Num | None]] | None = None


class Equilibrium(Record):
    """When a soak's InnoDB reached equilibrium and the steady state's cost per write from then on
    (analysis/soak.equilibrium); `moving`: what was not flat, when it never did."""

    reached: bool | None = None
    from_s: Num | None = None
    windows: int | None = None
    per_write: dict[str, dict[str, Num | None]] | None = None
    moving: list[str] | None = None


class SoakCycles(Record):
    """One node's flushing cycles over a soak (analysis/soak.cycles): InnoDB that writes back in bursts (nothing
    until the checkpoint age nears its maximum, then most dirty pages at once) reaches no flat equilibrium; its steady
    state is the cycle, priced over whole cycles."""

    bursts_from_s: list[Num] | None = None  # each burst's first window
    period_s: Num | None = None  # the mean time from one burst's start to the next's (None: fewer than two)
    cycles: int | None = None  # whole cycles: from the window after a burst to the last window of the next
    windows: int | None = None  # the windows those cycles span
    per_write: dict[str, Num | None] | None = None  # over the whole cycles, weighted by writes (None: no whole cycle)
    before_windows: int | None = None  # the windows before the first burst
    before: dict[str, Num | None] | None = None  # the per-write figures over them


class Soak(Record):
    growth: dict[str, SoakGrowth] | None = None
    usual_p99_ms: Num | None = None
    stalls: list[Stall] | None = None
    windows: list[SoakWindow] | None = None  # absent in soaks recorded before 2026-12-02
    equilibrium: Equilibrium | None = None
    cycles: dict[str, SoakCycles] | None = None  # per node; absent in soaks recorded before 2026-12-03


class WritebackNode(Record):
    """One node's forced flush after the run (analysis/writeback): its counts, per successful write, and the run's
    per-write figure with it."""

    dirty_pages: int | None = None  # found when the flush began
    pages_flushed: int | None = None
    pages_written: int | None = None
    doublewrite_pages: int | None = None
    data_written_kb: Num | None = None  # Innodb_data_written (the doublewrite buffer included)
    redo_written_kb: Num | None = None  # Innodb_os_log_written
    write_bytes: int | None = None  # the process's /proc I/O
    cpu_s: Num | None = None
    cpu_s_net: Num | None = None
    cpu_s_net_resolution: Num | None = None
    pages_flushed_per_write: Num | None = None
    kb_written_per_write: Num | None = None
    cpu_ms_per_write_net: Num | None = None
    cpu_ms_per_write_net_resolution: Num | None = None
    # the run's own figure (net of idle, per successful write) and the same with the flush's added
    run_cpu_ms_per_write_net: Num | None = None
    run_kb_written_per_write: Num | None = None
    run_pages_flushed_per_write: Num | None = None
    cpu_ms_per_write_net_with_writeback: Num | None = None
    kb_written_per_write_with_writeback: Num | None = None
    pages_flushed_per_write_with_writeback: Num | None = None


class Writeback(Record):
    """The run's own dirty pages forced out after the drain and counted (measure/writeback, analysis/writeback)."""

    method: str | None = None
    seconds: Num | None = None
    writes: int | None = None
    at_rest: bool | None = None
    why: list[str] | None = None
    net_resolution_z: Num | None = None
    nodes: dict[str, WritebackNode | None] | None = None


class Utilisation(Record):
    """One CPU resource's steady mean against its capacity (% of one core; analysis/limits). Every field required:
    analysis/limits.utilisation writes each, as every summary with a `limit` has."""

    group: str  # the CPU group it is measured by (host_busy, master, replica1, app, vegeta)
    percent: Num
    capacity_percent: Num
    share: Num  # percent over capacity_percent
    saturates_at: Num  # the share at which it saturates


class Limit(Record):
    """What limited a run (analysis/limits): the most utilised CPU resource, whether it saturated, every resource's
    utilisation, and what else held the run back. Every field required: a summary's `limit` is null or whole."""

    resource: str
    share: Num
    saturated: bool
    limit_share: Num
    utilisation: dict[str, Utilisation]
    also: list[str]


class VegetaReport(Record):
    """vegeta's report.json (`vegeta report -type=json`), the figures of it a run's summary is derived from
    (analysis/summary.client). Not a file replbench writes: vegeta's other keys (bytes, timestamps, wait) are
    ignored rather than refused, and a number stays as vegeta wrote it (an int an int: `"success": 1` is written
    back so)."""

    model_config = ConfigDict(extra="ignore")
    requests: int
    success: Num
    rate: Num
    throughput: Num
    duration: Num  # ns: from the first request sent to the last
    latencies: dict[str, Num]  # ns, by vegeta's names: min, mean, 50th, 90th, 95th, 99th, max (and total)
    status_codes: dict[str, int]
    errors: list[str]


class RunSummary(Record):
    """A run's summary.json: what analysis/summary.py derived from the run's records, and its verdicts."""

    FILE = "summary.json"
    schema_version: int | None = None
    status: str | None = None
    scenario: str | None = None
    rate: int | None = None
    folder: str | None = None
    # the database (BaseModel owns .schema); default= by name, as mypy reads a dataclass-like field's default only
    # so: a positional one read as required, and every RunSummary(...) that builds a part of a summary named it
    schema_name: str | None = Field(default=None, alias="schema")
    cores: int | None = None
    clients: int | None = None  # a closed loop's clients (--clients; its rate only sized the targets)
    targets: int | None = None  # the targets written for vegeta (absent before 2026-12-03): more requests looped them
    duration_s: Num | None = None
    attack_start_s: Num | None = None
    errors: list[str] | None = None
    errors_seen: list[str] | None = None
    guards: list[str] | None = None
    saturation: list[str] | None = None
    # requests
    requests: int | None = None
    successes: int | None = None
    success: Num | None = None
    server_success: Num | None = None
    client_errors: int | None = None
    rate_sent: Num | None = None
    goodput: Num | None = None
    rate_achieved: Num | None = None  # rate_sent, in summaries from before the rename
    throughput: Num | None = None  # goodput, in summaries from before the rename
    latency_ms: Latency | None = None
    status_codes: dict[str, int] | None = None
    outcomes: dict[str, dict[str, int]] | None = None
    served_by: dict[str, int] | None = None
    client_connections: int | None = None
    remote_attackers: list[RemoteAttacker] | None = None  # a topology file's attacker hosts (none: vegeta here)
    attack_start_agreed: str | None = None
    client_connections_setting: str | None = None
    app_admission: Admission | None = None
    above_knee: AboveKnee | None = None
    limit: Limit | None = None  # what limited the run (absent before 2026-12-02)
    # CPU
    cpu_seconds: NodeFigures | None = None
    cpu_seconds_net: NodeFigures | None = None
    cpu_seconds_net_resolution: NodeFigures | None = None
    cpu_mean_percent: NodeFigures | None = None
    cpu_ms_per_request: NodeFigures | None = None
    cpu_ms_per_request_net: NodeFigures | None = None
    cpu_ms_per_success: NodeFigures | None = None
    cpu_ms_per_success_net: NodeFigures | None = None
    cpu_ms_per_success_net_resolution: NodeFigures | None = None
    cpu_idle_per_s: NodeFigures | None = None
    cpu_sources: dict[str, str] | None = None
    cpu_span_s: Num | None = None
    idle_window_s: Num | None = None
    idle_samples: int | None = None
    net_resolution_z: Num | None = None
    pipeline_cpu_s: AttackCpu | None = None
    db_share_of_host: Num | None = None
    cpus: Cpus | None = None
    memory_mb: dict[str, Memory | None] | None = None
    harness_time_s: HarnessTime | None = None
    settle: Settle | None = None
    # replication
    lag: dict[str, LagOf | None] | None = None
    lag_floor_ms: Num | None = None
    lag_settled_s: NodeFigures | None = None
    heartbeat_ms: Num | None = None
    catch_up_s: NodeFigures | None = None
    catch_up_timeout_s: Num | None = None
    catch_up_held: dict[str, str] | None = None  # replicas a planned fault held when the last request was sent
    catch_up_unreachable: list[str] | None = None  # replicas whose catch-up was not waited for: they did not answer
    replicas_not_replicating: list[str] | None = None
    nodes_lost: list[Fault] | None = None
    binlog: Binlog | None = None
    replication: Replication | None = None
    links: dict[str, LinkState] | None = None
    buffer_pools: dict[str, BufferPool] | None = None
    consistency: Consistency | None = None
    rows_checked: RowsChecked | None = None
    # faults
    planned_faults: list[PlannedFault] | None = None
    fault_windows: dict[str, FaultWindow] | None = None
    routing: list[Routing] | None = None
    soak: Soak | None = None  # a soak run's growth per window and stalls (analysis/soak.py)
    writeback: Writeback | None = None  # the run's own dirty pages flushed after it, counted (absent before 2026-12-02)
    restarted_after_run: list[str] | None = None


# a run's status, in its meta.json and summary.json: the one spelling every reader compares against (re-exported
# by core/records, where the other outcomes are)
STATUS_OK = "ok"
STATUS_WARNING = "ok-with-warnings"
STATUS_SUCCEEDED = (STATUS_OK, STATUS_WARNING)  # a run that measured what it set out to


class FinishedLatency(Latency):
    """A finished run's latency: vegeta reports every percentile (analysis/summary.client takes each)."""

    min: Num
    mean: Num
    p50: Num
    p90: Num
    p95: Num
    p99: Num
    max: Num


class FinishedBinlog(Binlog):
    """A finished run's binlog figures: what measure/binlog.describe counts whatever the run wrote (a figure per
    write or per row is None where there was none, and some were added after the first files)."""

    master_binlog_bytes: int
    replica_received_bytes: NodeFigures
    successful_writes: int
    master_com_insert: int
    master_com_update: int
    heartbeat_writes: int
    heartbeat_bytes_estimated: int
    heartbeat_bytes_per_write: Num


class FinishedConsistency(Consistency):
    """A finished write run's consistency check: the table it checks is named whether or not it was checked (a
    replica behind: not checked, no checksums, equal None)."""

    table: str


class FinishedRun(RunSummary):
    """A run that measured what it set out to (STATUS_SUCCEEDED): what every such run records is required, so a
    reader needs no None check for it and a run that leaves one out fails where it writes its summary (write_run),
    not where a reader meets "n/a". The fields are those every committed finished run holds, back to the first
    files, and the current code fills for every such run (tools/required_fields.py counts them; tests/test_codec.py
    reads each committed one so); a field added since stays optional."""

    schema_version: int
    status: str
    scenario: str
    rate: int
    folder: str
    schema_name: str = Field(alias="schema")
    cores: int
    duration_s: Num
    errors: list[str]
    guards: list[str]
    requests: int
    success: Num
    latency_ms: FinishedLatency
    status_codes: dict[str, int]
    outcomes: dict[str, dict[str, int]]
    cpu_seconds: NodeFigures
    cpu_mean_percent: NodeFigures
    cpu_ms_per_request: NodeFigures
    lag: dict[str, LagOf | None]
    catch_up_s: NodeFigures
    binlog: FinishedBinlog
    replicas_not_replicating: list[str]


class FinishedWriteRun(FinishedRun):
    """A finished run that wrote (a write endpoint among its outcomes): its replicas' consistency was checked,
    or the summary says why not."""

    consistency: FinishedConsistency


def finished(summary: RunSummary) -> FinishedRun | None:
    """A run's summary as the record of a finished run (a FinishedWriteRun where it wrote), None where the run did
    not finish (failed, interrupted, incomplete, still running). RecordRefused, naming the fields, where a summary
    says it finished but lacks what every finished run records."""
    if isinstance(summary, FinishedRun):
        return summary
    if summary.status not in STATUS_SUCCEEDED:
        return None
    wrote = any(endpoint in WRITE_ENDPOINTS for endpoint in summary.outcomes or {})
    record = FinishedWriteRun if wrote else FinishedRun
    return record.model_validate(summary.model_dump(by_alias=True, exclude_unset=True))


# --- a run's meta.json ----------------------------------------------------------------------------------------

class Host(Record):
    cores: int | None = None
    cpu_model: str | None = None
    cpu_mhz: Num | None = None
    memory_gib: Num | None = None
    platform: str | None = None
    calibration: str | None = None
    calibration_score: Num | None = None


class Targets(Record):
    """The targets written for vegeta (load/targets.generate), as meta.json and apply.json record them."""

    file: str | None = None  # in the run's folder
    count: int | None = None
    per_endpoint: dict[str, int] | None = None
    max_id: int | None = None  # the highest id of the schema's table, the ids drawn from 1 to it
    seed: int | None = None  # the plan's and the ids' (the settings')
    nonce: str | None = None  # the values written's: a fresh one, so every update changes its row
    writes: bool | None = None
    update_fields: list[str] | None = None  # the columns an update sets (none without an update)
    values_matching_the_row: int | None = None
    donors_passed_over: int | None = None
    donors_the_app_would_refuse: int | None = None
    searches_the_app_would_refuse: int | None = None


class IndexChange(Record):
    """What topology/indexes.reconcile changed: the indexes dropped and created, the master's seconds and each
    replica's to apply it."""

    dropped: list[str] | None = None
    created: list[str] | None = None
    master_s: Num | None = None
    replicas_s: NodeFigures | None = None


class Indexes(Record):
    """bench_idx.accounts' indexes per node as information_schema lists them (topology/indexes.describe): index
    name -> its columns (a node None: it did not answer), the indexes the settings drop, what the run's preparation
    changed (absent: nothing)."""

    table: str | None = None
    nodes: dict[str, dict[str, list[str]] | None] | None = None
    drop_indexes: str | None = None
    changed: IndexChange | None = None


class SetUp(Record):
    """What a measurement was set up with (experiments/prepare.settings_and_data), under these keys in meta.json,
    apply.json and bigtx.json; each typed as those records type it (the server's and toxiproxy's own values)."""

    settle: Settle | None = None
    knobs_readback: dict[str, Readback] | None = None  # per node
    knob_mismatches: list[str] | None = None
    links: dict[str, LinkState] | None = None
    indexes: Indexes | None = None
    warm_up_s: NodeFigures | None = None
    buffer_pools: dict[str, BufferPool] | None = None


class Versions(Record):
    """What a run ran with (experiments/run.versions): vegeta's, Python's and the server's versions (the server's
    None where the master did not answer), the Python packages' (None: not installed) and the harness's commit
    (-dirty: with uncommitted changes)."""

    vegeta: str | None = None
    python: str | None = None
    mariadb: str | None = None
    packages: dict[str, str | None] | None = None
    git_commit: str | None = None


class Dataset(Record):
    """The dataset a run read, as its state folder records it (every field None before it is built)."""

    accounts: int | None = None
    seed: int | None = None
    built_at: str | None = None
    nopk_rows: int | None = None


class KnobSetting(Record):
    """A setting of the knobs as meta.json records it (topology/knobs.Knobs, whose defaults are the reference; a
    knob the record was not given is absent): the whole setting under `knobs`, what differs from the reference under
    `knobs_changed`. In the files' order (sorted), so a reader listing them lists them as the file does."""

    binlog_annotate: str | None = None
    binlog_compress: str | None = None
    binlog_compress_min_len: int | None = None
    binlog_format: str | None = None
    binlog_row_image: str | None = None
    buffer_pool: str | None = None
    flush_log_at_trx_commit: int | None = None
    parallel_mode: str | None = None
    parallel_threads: int | None = None
    semi_sync: str | None = None
    semi_sync_timeout_ms: int | None = None
    sync_binlog: int | None = None

    def given(self) -> dict[str, Word]:
        """The knobs recorded, by name, in the file's order (a label's "name=value" pairs)."""
        return self.model_dump(exclude_unset=True)


class Readback(Record):
    """One node's knob variables as it reported them after the knobs were applied (topology/knobs.READ_BACK, by
    their MariaDB names; the server's text, a variable the node lacks absent)."""

    binlog_annotate_row_events: str | None = None
    binlog_format: str | None = None
    binlog_row_image: str | None = None
    innodb_buffer_pool_size: str | None = None
    innodb_flush_log_at_trx_commit: str | None = None
    log_bin_compress: str | None = None
    log_bin_compress_min_len: str | None = None
    rpl_semi_sync_master_enabled: str | None = None
    rpl_semi_sync_master_timeout: str | None = None
    rpl_semi_sync_master_wait_point: str | None = None
    rpl_semi_sync_slave_enabled: str | None = None
    slave_parallel_mode: str | None = None
    # an int in a binlog replay's apply.json: it records the value it set, not the server's (experiments/replay)
    slave_parallel_threads: str | int | None = None
    sync_binlog: str | None = None


class AttackSettings(Record):
    """vegeta's attack options as the run set them (load/attack.AttackOptions.record) and vegeta's own defaults it
    ran with, in words."""

    rate: int | None = None
    duration: Num | None = None
    timeout: Num | None = None
    workers: int | None = None
    keepalive: bool | None = None
    max_connections: int | None = None
    attackers: int | None = None
    clients: int | None = None  # a closed loop's (absent before --clients)
    max_workers: int | str | None = None  # a closed loop's clients, else vegeta's default in words
    connections: str | None = None
    open_files_limit: int | None = None
    client_connections: str | None = None


class AppSettings(Record):
    """The app the run measured, as the settings start it (topology/appserver.app_settings); its admission as
    the app resolves it, the fields the summary's app_admission starts from."""

    workers: int | None = None
    driver: str | None = None
    worker_class: str | None = None
    pool_size: int | None = None
    statement_timeout_s: Num | None = None
    max_inflight: int | None = None
    max_queue_ms: int | None = None
    admission: Admission | None = None
    transport: str | None = None


class Disk(Record):
    """The filesystem under the state folder and an fsync's latency there (topology/servervars.describe_disk)."""

    device: str | None = None
    filesystem: str | None = None
    fsync_ms_median: Num | None = None
    fsync_ms_max: Num | None = None
    fsync_samples: int | None = None


class TopologyNode(Record):
    """One node of the run's topology: where it listens, its server id, whether a topology file named it, and
    where its CPU was read."""

    port: int | None = None
    server_id: int | None = None
    host: str | None = None
    external: bool | None = None
    cpu_source: str | None = None


class IdleWindow(Record):
    """The idle window before the attack: the setting ("auto", or its seconds as given) and the seconds it came to."""

    setting: str | Num | None = None
    seconds: Num | None = None


class NotDefault(Record):
    """A server variable away from its compiled default, both as the server spells them
    (topology/servervars.non_default)."""

    value: str | None = None
    default: str | None = None


class RunMeta(Record):
    """A run's meta.json: what was asked and what the run was run on (experiments/run.py)."""

    FILE = "meta.json"
    schema_version: int | None = None
    status: str | None = None
    exit_code: int | None = None
    marked_incomplete_at: str | None = None  # the harness died mid-run (core/records.mark_incomplete)
    pid: int | None = None
    scenario: str | None = None
    scenario_file: str | None = None
    bulk_rows: int | None = None  # rows per request of a bulk scenario
    rate: int | None = None
    duration_s: Num | None = None
    timeout_s: Num | None = None
    catch_up_timeout_s: Num | None = None
    created_at: str | None = None
    started_at: str | None = None
    attack_ended_at: str | None = None
    finished_at: str | None = None
    command: list[str] | None = None
    attack_command: list[str] | None = None
    attack_options: AttackSettings | None = None
    flavour: str | None = None
    host: Host | None = None
    disk: Disk | None = None
    dataset: Dataset | None = None
    versions: Versions | None = None
    app: AppSettings | None = None
    knobs: KnobSetting | None = None
    knobs_changed: KnobSetting | None = None
    knobs_readback: dict[str, Readback] | None = None  # per node
    knob_mismatches: list[str] | None = None
    # per node, each variable away from its compiled default
    server_variables_not_default: dict[str, dict[str, NotDefault]] | None = None
    buffer_pool: str | None = None
    buffer_pools: dict[str, BufferPool] | None = None
    indexes: Indexes | None = None
    topology: dict[str, TopologyNode] | None = None
    topology_file: str | None = None
    links: dict[str, LinkState] | None = None
    links_requested: list[str] | None = None  # --link as given
    cpus: Cpus | None = None
    targets: Targets | None = None
    settle: Settle | None = None
    idle_window: IdleWindow | None = None
    warm_up_s: NodeFigures | None = None
    attacker_hosts: list[AttackerCheck] | None = None  # a topology file's attacker hosts as checked (load/remote.py)
    attack_start_agreed: str | None = None


# --- collections ----------------------------------------------------------------------------------------------

class SweepStep(Record):
    rate: int | None = None
    passed: bool | None = None
    refined: bool | None = None
    folders: list[str] | None = None
    reasons: list[str] | None = None
    notes: list[str] | None = None


class BoundaryRun(Record):
    """One run of a sweep's boundary confirmation: its rate, folder and verdict."""

    round: int | None = None
    rate: int | None = None
    folder: str | None = None
    passed: bool | None = None
    reasons: list[str] | None = None


class SweepBoundary(Record):
    """`sweep --confirm N`: the highest passing rate and the first failing one above it (none where no step failed),
    run in N interleaved rounds after the ladder; how often each passed, and whether that confirms the maximum."""

    pass_rate: int | None = None
    fail_rate: int | None = None
    rounds: int | None = None
    needed: int | None = None  # passes of N that confirm a rate (core/config.SWEEP_CONFIRM_SHARE)
    runs: list[BoundaryRun] | None = None
    confirmed: bool | None = None

    def ran(self, rate: int | None, passed: bool | None = None) -> int:
        """The runs of a rate in the rounds (those that passed, or failed, when `passed` is given)."""
        return sum(1 for r in self.runs or [] if r.rate == rate and (passed is None or r.passed is passed))


class SweepRecord(Record):
    """A sweep's sweep.json (experiments/sweep.py)."""

    FILE = "sweep.json"
    schema_version: int | None = None
    scenario: str | None = None
    status: str | None = None
    duration_s: Num | None = None
    repeat: int | None = None
    refine: bool | None = None
    ladder: list[int] | None = None
    steps: list[SweepStep] | None = None
    criteria: dict[str, Num] | None = None
    criteria_text: str | None = None
    knobs: KnobSetting | None = None  # every knob of the sweep's runs, as meta.json's `knobs`
    max_sustainable_rate: int | None = None
    boundary: SweepBoundary | None = None  # `--confirm N`'s rounds at the boundary (absent before 2026-12-02)


class UnitMetrics(Record):
    """A study unit's metrics (analysis/studymetrics.unit_metrics): each figure of the METRICS registry by its key,
    then what qualifies them. A unit measures one source, so only that source's keys are in its map (the others read
    None); an interrupted unit's map is empty ({}: studymetrics.metrics_of says so). docs/metrics.md says what each
    figure means."""

    # a run's, from its summary.json
    bytes_per_write: Num | None = None
    bytes_per_row: Num | None = None
    master_ms_per_write: Num | None = None
    sent_per_write: Num | None = None
    dump_threads: Num | None = None
    replica_ms_per_write: Num | None = None
    rows_changed_pct: Num | None = None
    replica_disk_reads_per_write: Num | None = None
    replica_pages_read_per_write: Num | None = None
    replica_pages_written_per_write: Num | None = None
    replica_pages_flushed_per_write: Num | None = None
    master_kb_written_per_write: Num | None = None
    replica_kb_written_per_write: Num | None = None
    master_ms_per_write_with_writeback: Num | None = None  # absent in units run before write-back was measured
    replica_ms_per_write_with_writeback: Num | None = None
    replica_kb_written_per_write_with_writeback: Num | None = None
    replica_pages_flushed_per_write_with_writeback: Num | None = None
    binlog_syncs_per_write: Num | None = None
    fsyncs_per_write: Num | None = None
    lag_p99_ms: Num | None = None
    catch_up_s: Num | None = None
    p99_ms: Num | None = None
    commit_p50_ms: Num | None = None
    commit_mean_ms: Num | None = None
    goodput: Num | None = None
    shed: Num | None = None
    app_ms_per_ok: Num | None = None
    db_ms_per_ok: Num | None = None
    db_share: Num | None = None
    semi_sync_wait_us: Num | None = None
    link_rtt_ms: Num | None = None  # the replication link's round trip measured through its proxy (2026-12-02)
    # an apply-capacity unit's, from its apply.json
    apply_trx_per_s: Num | None = None
    apply_rows_per_s: Num | None = None
    apply_ms_per_trx: Num | None = None
    # a live unit's window, from its apply.json (2026-12-03)
    live_trx_per_s: Num | None = None
    live_binlog_bytes_per_trx: Num | None = None
    replay_binlog_bytes_per_trx: Num | None = None  # a replay unit's files (re-logged: the row image asked)
    live_master_ms_per_trx: Num | None = None
    live_following_ms_per_trx: Num | None = None
    live_master_ms_per_trx_with_writeback: Num | None = None  # a workload file's windows: their write-back forced out
    live_following_ms_per_trx_with_writeback: Num | None = None
    live_master_kb_written_per_trx_with_writeback: Num | None = None
    live_following_kb_written_per_trx_with_writeback: Num | None = None
    # a big-transaction unit's, from its bigtx.json
    bigtx_binlog_mb: Num | None = None
    bigtx_master_s: Num | None = None
    bigtx_applied_s: Num | None = None
    bigtx_lag_peak_s: Num | None = None
    bigtx_lag_above_s: Num | None = None
    bigtx_cache_spills: Num | None = None
    # what qualifies the figures
    never: list[str] | None = None  # the metrics whose figure never came (a replica that did not catch up)
    resolution: dict[str, Num] | None = None  # per metric, the figure below which it cannot be told from 0
    passed: bool | None = None  # a run's: within its scenario's pass criteria (None: not judged)
    cpu_net_of_idle: bool | None = None  # the unit's CPU figures are net of idle


# --- one cell's row of a study's comparison, per group and metric (analysis/studymetrics.compare_cells) -----------

class ComparisonRow(Record):
    """One cell's figure over its repeats, against its baseline cell's."""

    median: Num | None = None
    min: Num | None = None
    max: Num | None = None
    n: int | None = None
    values: list[Num | None] | None = None
    never: int | None = None  # repeats that never caught up (absent in studies from before it was counted)
    ratio: Num | None = None
    verdict: str | None = None
    baseline: str | None = None  # the cell it is compared with (absent in studies from before baseline_per)
    resolution: Num | None = None  # only where the figure has one


# a study's comparison: per group (a scenario, or the cells' scenarios), per metric, per cell, its row
Comparison = dict[str, dict[str, dict[str, ComparisonRow]]]


class StudyUnit(Record):
    cell: str | None = None
    group: str | None = None
    scenario: str | None = None
    measure: str | None = None
    rate: int | None = None
    repeat: int | None = None
    status: str | None = None
    folder: str | None = None
    metrics: UnitMetrics | None = None
    knobs_readback: dict[str, Readback] | None = None  # per node, as the unit's file records it (null: none)
    error: str | None = None  # a unit that failed with an exception: its type and message (experiments/study.py)


class StudyCell(Record):
    name: str | None = None
    scenario: str | None = None
    knobs: KnobSetting | None = None  # every knob, as it is typed (sync_binlog 0, not '0')
    changed: dict[str, Word] | None = None  # what the cell sets beside the reference (experiments/studyfile Cell)


class StudyPlot(Record):
    """A study's chart as its file declares it ([plot]): each primary metric against the cells' value of `x`, a line
    per value of `lines` (report/plots; docs/studies.md)."""

    x: str | None = None
    lines: str | None = None


class IndexesRestored(Record):
    """What a study's end re-created of bench_idx.accounts' secondary indexes (topology/indexes.restore), or why it
    could not."""

    dropped: list[str] | None = None
    created: list[str] | None = None
    master_s: Num | None = None  # only where it changed something
    replicas_s: NodeFigures | None = None  # each replica's wait for the change (None: it never applied it)
    error: str | None = None  # the exception, where the restore failed (the next run re-creates them)


class StudyRecord(Record):
    """A study's study.json (experiments/study.py)."""

    FILE = "study.json"
    schema_version: int | None = None
    name: str | None = None
    status: str | None = None
    description: str | None = None
    question: str | None = None
    command: str | None = None
    data_state: str | None = None
    reset: str | None = None
    duration_s: Num | None = None
    repeat: int | None = None
    cpu_net_of_idle: bool | None = None
    scenarios: list[str] | None = None
    measures: list[str] | None = None
    primary: list[str] | None = None
    baseline_per: list[str] | None = None
    plot: StudyPlot | None = None  # absent before 2026-12-03 and where the file declares none (report: the file's now)
    rates: dict[str, int] | None = None
    cells: list[StudyCell] | None = None
    # the study file's cells its command's --only left out, by name ([] for none; absent before 2026-12-02: the
    # report then names them from the study file: docs/studies.md, "Report and compare")
    cells_cut: list[str] | None = None
    units: list[StudyUnit] | None = None
    order: list[str] | None = None  # the units in the order they ran: 'cell / scenario / measure / repeat n'
    comparison: Comparison | None = None
    indexes_restored: IndexesRestored | None = None  # what the study's end re-created (cells without some indexes)
    baselines: dict[str, str] | None = None
    meta: RunMeta | None = None
    # the cores of the host the study ran on (absent before 2026-12-02, and for a topology file's databases, whose
    # host is not this one): a cell whose threads or processes reach them is core-bound (studymetrics.core_bound)
    cores: int | None = None


class CampaignUnit(Record):
    command: str | None = None
    status: str | None = None
    exit_code: int | None = None
    started_at: str | None = None
    seconds: Num | None = None
    estimate_s: Num | None = None
    log: str | None = None
    env: dict[str, str] | None = None
    calibration_before: Num | None = None
    calibration_after: Num | None = None


class Rejudged(Record):
    """Units a later commit marked done: they ran to their end but an older completion check missed it."""

    commit: str | None = None
    units: list[int] | None = None
    at: str | None = None
    why: str | None = None


class CampaignRecord(Record):
    """A campaign's campaign.json (experiments/campaign.py)."""

    FILE = "campaign.json"
    schema_version: int | None = None
    name: str | None = None
    description: str | None = None
    status: str | None = None
    folder: str | None = None
    commit: str | None = None
    dirty: bool | None = None
    started_at: str | None = None
    finished_at: str | None = None
    units: list[CampaignUnit] | None = None
    rejudged: list[Rejudged] | None = None


# --- reading and writing --------------------------------------------------------------------------------------

def migrate(doc: dict[str, Any], kind: str) -> dict[str, Any]:
    """A document of a kind (KINDS' key) of any version it had, in the current version's shape: each step's keys
    renamed, then the current version stamped (a copy: doc is left as it was). ValueError for a version the kind
    never had (a newer replbench's file, or a profile without one)."""
    spec = KINDS[kind]
    version = doc.get("schema_version")
    version = 0 if version is None else version
    if not isinstance(version, int) or isinstance(version, bool) or not spec.oldest <= version <= spec.version:
        raise ValueError(f"{kind}: schema_version {version!r} is not one this replbench reads "
                         f"({spec.oldest} to {spec.version})")
    out = dict(doc)
    for new, old in spec.renamed_since(version):
        if old in out:
            out.setdefault(new, out.pop(old))
    out["schema_version"] = spec.version
    return out


def _validated(record: type[R], doc: dict[str, Any] | R) -> R:
    """A document (a file's, or one in memory) as its kind's record, migrated first; a record as it is."""
    if not isinstance(doc, dict):
        return doc
    assert record.FILE is not None  # only a whole file's record is read from a document
    return record.model_validate(migrate(doc, record.FILE))


def load(path: Path) -> dict[str, Any]:
    """A results file's raw document (OSError and ValueError as json raises them; ValueError too for a file that
    holds no JSON object)."""
    doc = json.loads(path.read_text())
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a JSON object")
    return doc


def summary_of(doc: dict[str, Any] | RunSummary) -> RunSummary:
    """A summary document (a run's in memory, or a file's) as its typed record."""
    return _validated(RunSummary, doc)


def meta_of(doc: dict[str, Any] | RunMeta) -> RunMeta:
    return _validated(RunMeta, doc)


def read_summary(folder: Path) -> RunSummary:
    return summary_of(load(folder / "summary.json"))


def read_meta(folder: Path) -> RunMeta:
    return meta_of(load(folder / "meta.json"))


def read_sweep(folder: Path) -> SweepRecord:
    return sweep_of(load(folder / "sweep.json"))


def read_study(folder: Path) -> StudyRecord:
    return study_of(load(folder / "study.json"))


def read_campaign(folder: Path) -> CampaignRecord:
    return campaign_of(load(folder / "campaign.json"))


def _dump(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, default=str) + "\n"


def write_refused(path: Path, data: Any) -> None:
    """Not a results file's writer (every results file is a record's, written by write_record): a document no
    record accepted, kept beside in the one format so nothing measured is lost (experiments/run.py's
    <name>.refused.json)."""
    path.write_text(_dump(data))


def write_record(path: Path, record: BaseModel) -> None:
    """A record's file in the one format, holding exactly the keys the record was given (a figure never measured
    stays absent, not null), so a file read and written back is byte for byte the same."""
    path.write_text(_dump(document_of(record)))


def document_of(record: BaseModel) -> dict[str, Any]:
    """What write_record writes of a record: the keys it was given, as JSON values, and the current version of its
    kind where it is a whole file's record (a record holds the current shape, whatever version it was read from)."""
    doc = record.model_dump(mode="json", by_alias=True, exclude_unset=True)
    kind: str | None = getattr(type(record), "FILE", None)  # a record of this module's, or profile's
    if kind is not None:
        doc["schema_version"] = KINDS[kind].version
    return doc


def write_run(folder: Path, meta: dict[str, Any] | RunMeta, summary: dict[str, Any] | RunSummary | None = None,
              ) -> tuple[RunMeta, RunSummary | None]:
    """A run's meta.json and (once it has one) summary.json, each validated as its record and stamped with the
    schema version; returns the records written. Both are validated before either is written: a key no record
    declares (RecordRefused, naming it) leaves the files as they were, never one updated beside one refused."""
    meta_record = _stamped(meta_of(meta))
    summary_record = None if summary is None else _stamped(summary_of(summary))
    if summary_record is not None:  # a finished run's summary holds what every finished run records
        summary_record = finished(summary_record) or summary_record
    write_record(folder / "meta.json", meta_record)
    if summary_record is not None:
        write_record(folder / "summary.json", summary_record)
    return meta_record, summary_record


def merged(record: R, part: R) -> R:
    """`record` with the fields `part` was given, and only those: write_record writes the fields a record was given
    (a None given as null, a field never given not at all), so a file written as a unit goes on holds what each
    phase got to."""
    return record.model_copy(update={name: getattr(part, name) for name in part.model_fields_set})


def _stamped(record: R) -> R:
    """The record holding its kind's current version, as write_record writes it."""
    assert record.FILE is not None
    return record.model_copy(update={"schema_version": KINDS[record.FILE].version})


# --- the other records' `*_of`: a document (a file's, or one in memory) as its record ---

def sweep_of(doc: dict[str, Any] | SweepRecord) -> SweepRecord:
    """A sweep document (a sweep's in memory, or a file's) as its typed record."""
    return _validated(SweepRecord, doc)


def study_of(doc: dict[str, Any] | StudyRecord) -> StudyRecord:
    return _validated(StudyRecord, doc)


def campaign_of(doc: dict[str, Any] | CampaignRecord) -> CampaignRecord:
    return _validated(CampaignRecord, doc)


# --- an apply-capacity unit's apply.json (experiments/applycap.py) -------------------------------------------------

class ApplyMaster(Record):
    """The backlog as the master committed it."""

    transactions: int | None = None
    rows_changed: int | None = None
    commit_rate_trx_per_s: Num | None = None
    rows_per_s: Num | None = None


class ApplyReplica(Record):
    """One replica's drain of the backlog (seconds None: not within the drain timeout)."""

    seconds: Num | None = None
    drain_span_s: list[Num] | None = None
    others_applying_at_start: list[str] | None = None
    transactions: int | None = None
    rows: int | None = None
    apply_rate_trx_per_s: Num | None = None
    apply_rate_rows_per_s: Num | None = None
    cpu_ms_per_trx: Num | None = None
    cpu_ms_per_trx_gross: Num | None = None
    idle_cpu_per_s: Num | None = None
    capacity_ratio: Num | None = None
    # its own dirty pages forced out after the drain (analysis/writeback; per applied transaction; absent before
    # 2026-12-02)
    writeback: WritebackNode | None = None
    # --live: its apply rate ÷ the window's busiest minute (absent before 2026-12-02 and from a backlog's drain)
    busiest_minute_ratio: Num | None = None


class LiveCpu(Record):
    """One node's CPU over a live window (analysis/livewindow.cpu_of): in all, per second of its idle before the
    window (None: the client was already writing, so the figures are gross), per transaction (net where the idle
    is known) and per whole minute of the window, with the minutes' 95 % interval of the mean."""

    role: str | None = None  # "master" or "following" (a replica that applied the window as it was written)
    cpu_s: Num | None = None
    seconds: Num | None = None
    transactions: int | None = None
    idle_cpu_per_s: Num | None = None
    cpu_ms_per_trx: Num | None = None
    net: bool | None = None  # cpu_ms_per_trx is net of idle_cpu_per_s
    # the window's CPU did not exceed its idle (a tiny window on a busy host): no per-transaction figure, not a cost
    # of 0 (absent before 2026-12-03: such a node read 0.0)
    below_idle: bool | None = None
    minutes_ms_per_trx: list[Num] | None = None
    ci95_ms_per_trx: list[Num] | None = None
    # after a window a workload file's tool wrote: the node's dirty pages forced out, per window transaction, with the
    # window's own figures beside (absent before 2026-12-03, and after a client of the DBA's: it may still write)
    writeback: WritebackNode | None = None


class LiveWindow(Record):
    """`apply-capacity --live`: the window the replicas' SQL threads were held while any client wrote to the master
    (analysis/livewindow), and what the master committed while the replicas then drained it."""

    asked_s: Num | None = None
    window_s: Num | None = None
    samples: int | None = None
    transactions: int | None = None
    mean_trx_per_s: Num | None = None
    busiest_minute_trx_per_s: Num | None = None
    busiest_minute_from_s: Num | None = None
    short: bool | None = None
    gtid_start: str | None = None
    pre_flush_s: Num | None = None  # the replicas' dirty pages forced out as the window opened (not attributed)
    master_trx_during_drains: int | None = None
    # each node's CPU over the window (the master and the replicas that followed it; absent before 2026-12-03), net
    # of its idle where the idle sample before the window saw no transaction (`idle_trx`: what it saw)
    cpu: dict[str, LiveCpu] | None = None
    idle_trx: int | None = None
    # what the master wrote to its binlog over the window (MariaDB's Binlog_bytes_written; the heartbeat's few bytes
    # a second included), in all and per transaction (absent before 2026-12-03 and on MySQL 8)
    binlog_bytes: int | None = None
    binlog_bytes_per_trx: Num | None = None


class ReplayFile(Record):
    name: str | None = None
    bytes: int | None = None


class Relog(Record):
    """A replay study's cell that asks another row image: the captured files re-logged by the replica under it
    (log_slave_updates and that binlog_row_image), the files it wrote kept in the unit's folder and replayed in
    turn (experiments/replay.relog). `image` says how far the re-logged files are the row image asked: "partial"
    where the replica writes images of its own only in part (docs/apply-capacity.md, "Other row images")."""

    row_image: str | None = None
    image: str | None = None  # "partial": before images as the row image writes them, after images as the files'
    source_files: list[ReplayFile] | None = None
    source_transactions: int | None = None
    source_events_bytes: int | None = None  # the source files' bytes from the first transaction applied to the end
    relog_s: Num | None = None  # the re-logging replica's own apply of the source files (it wrote a binlog too)


class Replay(Record):
    """`apply-capacity --binlog`: the files replayed as one replica's relay logs (experiments/replay), the
    replica's GTID position before (a transaction boundary of the files) and after, the application transactions
    it had to apply and the seconds the files' own transactions spanned (their events' clock)."""

    files: list[ReplayFile] | None = None
    replica: str | None = None
    start: str | None = None
    end: str | None = None
    transactions: int | None = None
    span_s: int | None = None
    # the files' bytes from the first transaction applied to their end (absent before 2026-12-03)
    events_bytes: int | None = None
    relog: Relog | None = None  # the files replayed were re-logged from others under another row image


class ApplyRecord(Record):
    FILE = "apply.json"
    schema_version: int | None = None
    scenario: str | None = None
    schema_name: str | None = Field(default=None, alias="schema")  # the database (BaseModel owns .schema)
    status: str | None = None
    error: str | None = None
    folder: str | None = None
    method: str | None = None  # alone, together, live or binlog; absent: alone (before `together` had a name)
    writes_asked: int | None = None
    rate: int | None = None
    topology: str | None = None
    knobs: KnobSetting | None = None
    knobs_changed: KnobSetting | None = None
    knobs_readback: dict[str, Readback] | None = None  # per node (method binlog: what the replay set, see Readback)
    cpu_sources: dict[str, str] | None = None
    requests: int | None = None
    success: Num | None = None
    gtid: str | None = None
    write_seconds: Num | None = None
    master: ApplyMaster | None = None
    replicas: dict[str, ApplyReplica | None] | None = None
    # what the drain was set up with, as a run's meta.json records it (experiments/prepare.settings_and_data)
    buffer_pools: dict[str, BufferPool] | None = None
    indexes: Indexes | None = None
    knob_mismatches: list[str] | None = None
    links: dict[str, LinkState] | None = None
    settle: Settle | None = None
    targets: Targets | None = None
    warm_up_s: NodeFigures | None = None
    cores: int | None = None  # the host's, where the replicas run on it (absent before 2026-12-02; own servers)
    live: LiveWindow | None = None  # method "live": the window drained (absent before 2026-12-02 and otherwise)
    replay: Replay | None = None  # method "binlog": the files replayed (absent before 2026-12-02 and otherwise)
    cpus: Cpus | None = None  # the groups' cores during the drains (--cpus; absent before 2026-12-03)


def apply_of(doc: dict[str, Any] | ApplyRecord) -> ApplyRecord:
    return _validated(ApplyRecord, doc)


# --- a big-transaction unit's bigtx.json (experiments/bigtx.py) ----------------------------------------------------

class BigTxReplica(Record):
    applied_after_commit_s: Num | None = None
    peak_ms: Num | None = None
    above_floor_s: Num | None = None
    samples: int | None = None


class BigTxTransaction(Record):
    rows: int | None = None
    repeat: int | None = None
    first_id: int | None = None
    rows_changed: int | None = None
    rows_holding_the_new_value: int | None = None
    binlog_bytes: int | None = None
    bytes_per_row: Num | None = None
    binlog_cache_spilled: bool | None = None
    binlog_cache_disk_use: int | None = None
    master_seconds: Num | None = None
    gtid: str | None = None
    lag_floor_ms: Num | None = None
    mariadb_semi_sync_wait_us: int | None = None  # only with semi-sync waits
    replicas: dict[str, BigTxReplica] | None = None


class BigTxRecord(Record):
    FILE = "bigtx.json"
    schema_version: int | None = None
    table: str | None = None
    status: str | None = None
    error: str | None = None
    folder: str | None = None
    rows_asked: list[int] | None = None
    repeat: int | None = None
    nonce: str | None = None
    knobs: KnobSetting | None = None
    knobs_changed: KnobSetting | None = None
    knobs_readback: dict[str, Readback] | None = None  # per node
    transactions: list[BigTxTransaction] | None = None
    # what the unit was set up with, as apply.json records it (experiments/prepare.settings_and_data)
    buffer_pools: dict[str, BufferPool] | None = None
    indexes: Indexes | None = None
    knob_mismatches: list[str] | None = None
    links: dict[str, LinkState] | None = None
    settle: Settle | None = None
    warm_up_s: NodeFigures | None = None


def bigtx_of(doc: dict[str, Any] | BigTxRecord) -> BigTxRecord:
    return _validated(BigTxRecord, doc)


# --- the cost model's model.json and model validate's validate.json (analysis/costmodel.py, experiments/modelcheck.py)

Point = tuple[Num, Num]  # a shape's [rate, factor], a domain's [rows per transaction, transactions/s]


class Shape(Record):
    """A CPU fit's rate or read shape (analysis/costmodel.rate_shape, read_shape): the cost at each rate the runs
    covered as a factor of the cost at the fastest, slowest first, and the runs it was measured on."""

    # "from" is a Python keyword: the field's own name is `source`, the file's key "from"
    source: str = Field(validation_alias="from", serialization_alias="from")  # "ROW-FULL bench_idx", "read-only runs"
    points: list[Point]


class Pooled(Record):
    """A row image's CPU fit's pool (analysis/costmodel.split_part): the settings of the one fit whose
    per-transaction terms it shares, and that fit's runs, cells and R²."""

    settings: list[str]
    n: Num | None
    cells: Num | None
    r2: Num | None


class Domain(Record):
    """The sizes and rates a setting's fit saw (analysis/costmodel.domain_of): its runs' distinct points, sorted."""

    points: list[Point]


class Fit(Record):
    """One quantity fitted through the origin per transaction, and per row where the runs separate the two."""

    terms: list[str] | None = None
    coef: dict[str, Num] | None = None
    ci95: dict[str, list[Num]] | None = None
    cov: list[list[Num]] | None = None
    n: Num | None = None
    r2: Num | None = None
    relative_residuals: list[Num] | None = None
    rows_separated: bool | None = None
    # the non-negative fit's (analysis/costmodel.fit_part); absent from a model fitted before it
    cells: Num | None = None
    interval_method: str | None = None
    read_interval: str | None = None  # where the read term's interval comes from, when not from interval_method
    run_variance: Num | None = None  # one run's relative variance about the fit: in every prediction's interval
    run_variance_dof: Num | None = None
    run_variance_from: str | None = None  # "repeats" (pooled within cells), "residuals" or "none"
    reads: str | None = None  # a replica, app or load fit without a read term: why
    # the CPU fits' rate shapes (analysis/costmodel.rate_shape, read_shape); absent from a model fitted before them,
    # or where the runs gave none
    rate_shape: Shape | None = None
    read_shape: Shape | None = None
    # a row image's CPU fit, pooled over the row images (analysis/costmodel.ROW_IMAGES, split_part); absent from
    # other fits
    pooled: Pooled | None = None
    # the apply fit's drained sizes (analysis/costmodel._apply_fit): [[rows per transaction, mean apply seconds per
    # transaction, drains, backlogs], …], which price a size between them; absent from other fits and older models
    # (backlogs: since 28 Nov, stop 65)
    sizes: list[list[Num]] | None = None
    # the app's and the load generator's fits (analysis/costmodel.request_fit): the runs they pooled ("every setting
    # and table; the app as asyncmy/uvloop"); absent from other fits
    basis: str | None = None
    # a fit pooled over settings while it is made (analysis/costmodel.fit_part's `kinds`): each run's setting and
    # cell, which split_part reads to give each setting its fit; never in model.json (split_part leaves them out)
    kinds: list[str] | None = None
    run_cells: list[str] | None = None


class FittedSetting(Record):
    """The fits of one setting on one table."""

    setting: str | None = None
    table: str | None = None
    runs: Num | None = None
    drains: Num | None = None
    master_cpu_s: Fit | None = None
    replica_cpu_s: Fit | None = None
    binlog_bytes: Fit | None = None
    apply_s: Fit | None = None
    master_fsyncs: Fit | None = None
    fsyncs_per_commit: Num | None = None
    domain: Domain | None = None


class Observation(Record):
    """One run as the cost model's fits see it (analysis/costmodel.observation): a write run's transactions, rows,
    seconds and figures net of idle, or a run that only read (no transaction, no row, no master CPU, no binlog).
    The fields without a default every observation has had since the first model.json."""

    FIGURES: ClassVar[tuple[str, ...]] = ("master_cpu_s", "replica_cpu_s", "binlog_bytes", "app_cpu_s",
                                          "load_cpu_s")
    setting: str  # one of analysis/costmodel.SETTINGS
    table: str | None  # None where the summary named none
    folder: str | None  # the run's folder under the results it was collected from
    scenario: str | None
    transactions: Num  # 0 for a run that only read
    rows: Num
    seconds: Num
    master_cpu_s: Num | None
    replica_cpu_s: Num | None  # the replicas' mean
    replica_reads: Num  # every replica's together
    binlog_bytes: Num | None
    fsyncs_per_commit: Num | None  # the master's, net of idle; None from a summary of gross counts only
    # added since, absent from models fitted before them: the run's cell, its replicas, the seconds its app wrote
    # in and its figures' resolution (27 Nov), its requests and the app's and vegeta's CPU (2 Dec: `model predict
    # --cores`)
    cell: str | None = None
    write_seconds: Num | None = None
    replicas: int | None = None
    resolution: dict[str, Num] | None = None
    writes: int | None = None
    reads: int | None = None
    app_cpu_s: Num | None = None
    load_cpu_s: Num | None = None
    app_settings: str | None = None  # "driver/worker class"

    def figure(self, part: str) -> float | None:
        """A fitted figure by its part's name (FIGURES: the fits' names); KeyError for any other name."""
        if part not in self.FIGURES:
            raise KeyError(part)
        value: float | None = getattr(self, part)
        return value


class Drain(Record):
    """One replica's drain of an apply-capacity backlog alone, as the apply fit sees it
    (analysis/costmodel.apply_observation)."""

    setting: str
    table: str | None
    replica: str
    transactions: Num
    rows: Num
    apply_s: Num  # the seconds its SQL thread took
    backlog: str | None = None  # the apply unit's folder (every replica of one drained the same); absent before 28 Nov


class CostModel(Record):
    """model.json: the fits per setting and table, with the runs and apply drains they were fitted on."""

    FILE = "model.json"
    schema_version: int | None = None
    settings: dict[str, FittedSetting] | None = None
    observations: list[Observation] | None = None
    drains: list[Drain] | None = None
    # the app's and the load generator's (vegeta's) CPU per request, one fit each over every setting and table
    # (analysis/costmodel.request_fit); absent from a model fitted before them (2026-12-02), null where no run
    # recorded them
    app_cpu_s: Fit | None = None
    load_cpu_s: Fit | None = None


class Interval(Record):
    value: Num | None = None
    low: Num | None = None
    high: Num | None = None


class Checked(Record):
    """One figure of a held-out case: predicted, with its 95 % interval, against measured."""

    predicted: Interval | None = None
    measured: Num | None = None
    error_pct: Num | None = None
    inside: bool | None = None  # one run's: its measured figure in its own interval
    # a case's figure over its repeats (predicted and measured the repeats' sums, the error that of the mean): how
    # many repeats it sums, and how many of those had their own measured figure inside their own interval
    runs: Num | None = None
    inside_runs: Num | None = None
    # a net figure below its resolution: {net, resolution}, compared with nothing (a case's: its first such run's,
    # and how many of its runs were left out so)
    below_resolution: dict[str, Num] | None = None
    runs_below_resolution: Num | None = None


class ProfileCheck(Record):
    """A held-out case's figures from its binlog: the master's binlog over the run's attack window profiled (the
    heartbeat left out) and priced as `model predict --profile` prices it, each total over the window against
    the measured one."""

    file: str | None = None  # the profile file, beside the run (<run>/profile.json)
    since: str | None = None  # the window, in the decoder's clock (the profile's source)
    until: str | None = None
    span_s: Num | None = None
    transactions: Num | None = None  # the workload's, as the binlog shows them
    rows: Num | None = None
    heartbeat_transactions: Num | None = None  # left out
    bytes_as_written: Num | None = None  # the workload's binlog bytes as the profile read them
    binlog_bytes: Checked | None = None
    master_cpu_s: Checked | None = None
    replica_cpu_s: Checked | None = None
    not_predicted: dict[str, str] | None = None
    notes: list[str] | None = None  # how the profile's tables map to the model's
    outside_domain: str | None = None
    error: str | None = None  # why there is no profile (the copy, the decoder, an empty window)


class ValidationRun(Record):
    """One run of a held-out case: its figures predicted from its counts and from its binlog's profile."""

    run: str | None = None
    usable: bool | None = None
    transactions: Num | None = None
    rows: Num | None = None
    replica_reads: Num | None = None
    binlog_bytes: Checked | None = None
    master_cpu_s: Checked | None = None
    replica_cpu_s: Checked | None = None
    not_predicted: dict[str, str] | None = None  # per figure without a prediction, why (costmodel.not_predicted)
    outside_domain: str | None = None  # the run's rate outside the rates the fit saw (costmodel.outside_domain)
    profile: ProfileCheck | None = None  # the same run priced from its binlog's profile (None: not profiled)


class ValidationCase(ValidationRun):
    """A held-out case: its runs (repeats), and its figures over them (the repeats' sums; the run's own in a
    validate.json of before repeats, where the case is its one run: analysis/validation.repeats_of)."""

    scenario: str | None = None
    rate: Num | None = None
    setting: str | None = None  # one of costmodel.SETTINGS (absent from a validate.json of before: ROW-FULL)
    repeats: list[ValidationRun] | None = None


class OnsetDrain(Record):
    """A backlog drained by one replica alone, each replica in turn."""

    folder: str | None = None
    status: str | None = None
    writes: Num | None = None
    fill_rate: Num | None = None
    apply_rate_trx_per_s: list[Num] | None = None
    measured: Num | None = None
    error_pct: Num | None = None


class OnsetRun(Record):
    """A live run at a share of the predicted onset, the other replicas stopped."""

    run: str | None = None
    status: str | None = None
    load: Num | None = None
    rate: Num | None = None
    success: Num | None = None
    master_transactions_per_s: Num | None = None
    lag_growth_s_per_s: Num | None = None
    applied_per_s: Num | None = None
    fell_behind: bool | None = None
    replica_room_cores: Num | None = None  # this host's cores less every other group's mean CPU (native only)


class Onset(Record):
    """Where one replica starts falling behind: predicted, drained alone and seen live."""

    rows: Num | None = None
    replica: str | None = None
    predicted: Interval | None = None
    measured: Num | None = None
    error_pct: Num | None = None
    live_note: str | None = None
    drain: OnsetDrain | None = None  # a validate.json of before the drain's repeats: its one drain
    drains: list[OnsetDrain] | None = None  # each drain's folder and rates (measured: the median of all of them)
    drain_measured: Num | None = None
    drain_error_pct: Num | None = None
    runs: list[OnsetRun] | None = None


class Worst(Record):
    """The largest error of a case's mean of one kind of figure, against its bound (analysis/validation._worst)."""

    error_pct: Num | None = None
    case: str | None = None  # analysis/validation.case_label's
    figure: str | None = None  # "binlog bytes", "master CPU", "replica CPU"
    bound_pct: Num | None = None
    within: bool | None = None


class CpuSigns(Record):
    """The signs of the CPU errors of the cases' means, and the sign test's p (analysis/validation._signs)."""

    below: int | None = None  # predicted below the measured
    above: int | None = None
    p: Num | None = None
    biased: bool | None = None  # p below FINDING_ALPHA


class PathCoverage(Record):
    """One path's coverage (from the run's counts, or from its binlog profile): its run figures and how many lie
    inside their own interval, and per kind ("binlog", "CPU") the worst error of a case's mean."""

    figures: int | None = None  # predicted and measured, every repeat's
    inside: int | None = None
    not_predicted: int | None = None
    below_resolution: int | None = None  # absent from a validate.json of before resolutions
    worst: dict[str, Worst] | None = None
    cases_without: int | None = None  # usable cases with no figure on this path
    cpu_signs: CpuSigns | None = None  # absent from a validate.json of before the sign test; null without an error


class ControlCoverage(Record):
    """The control's measured/predicted per path and figure, and the held-out CPU errors scaled by it
    (analysis/validation._control)."""

    case: str | None = None
    runs: int | None = None
    ratio: dict[str, dict[str, Num]] | None = None  # path -> figure ("master CPU") -> measured/predicted
    scaled_worst: dict[str, Worst] | None = None  # path -> the worst scaled CPU error of a case's mean
    interleaved: bool | None = None  # recorded in the fit's hours (`--recorded`); absent from older files


class OnsetCheck(Record):
    """A lag onset's error against its bound, and whether the measured onset lies in the predicted interval."""

    error_pct: Num | None = None
    within: bool | None = None
    inside: bool | None = None


class OnsetCoverage(Record):
    """The lag onset's checks (analysis/validation._onset): each one measured, the other absent."""

    drained: OnsetCheck | None = None
    live: OnsetCheck | None = None


class Coverage(Record):
    """validate.json's summary (analysis/validation.coverage): per path the figures inside their intervals and the
    worst errors, the control's, the onset's, and the bounds and goal they were judged against."""

    paths: dict[str, PathCoverage] | None = None  # "counts", "profile"
    repeats: int | None = None  # the most a case had; absent from a validate.json of before repeats
    onset: OnsetCoverage | None = None
    control: ControlCoverage | None = None  # absent from a validate.json of before the control
    goal: Num | None = None
    bounds_pct: dict[str, Num] | None = None  # "binlog", "CPU", "onset"


class Validation(Record):
    """validate.json: the model's predictions against runs it was not fitted on, and the lag onset."""

    FILE = "validate.json"
    schema_version: int | None = None
    folder: str | None = None
    repeats: Num | None = None  # runs per case (--repeat; absent from a validate.json of before repeats: one)
    cases: list[ValidationCase] | None = None
    control: ValidationCase | None = None  # a cell the model was fitted on, run in every round (modelcheck.CONTROL)
    onset: Onset | None = None
    summary: Coverage | None = None  # analysis/validation.coverage's, as validate wrote it
    recordings: list[str] | None = None  # the `--record` folders whose runs it priced (`--recorded`), in order
    rounds: Num | None = None  # the rounds those recordings ran
    left_out: list[str] | None = None  # interrupted recordings, not priced
    complete: bool | None = None  # `--recorded` ran to its end (its recordings then count as priced)


def model_of(doc: dict[str, Any] | CostModel) -> CostModel:
    """A cost model (a fit's in memory, or a model.json) as its typed record."""
    return _validated(CostModel, doc)


def validation_of(doc: dict[str, Any] | Validation) -> Validation:
    return _validated(Validation, doc)


def read_model(folder: Path) -> CostModel:
    return model_of(load(folder / "model.json"))


def read_validation(folder: Path) -> Validation:
    return validation_of(load(folder / "validate.json"))


# --- records of the files written by experiments without one before --------------------------------------------

class RecordedProfile(Record):
    """A recorded run's binlog profiled over its attack window (experiments/modelcheck._profiled): the profile's
    file and window, or why there is none."""

    file: str | None = None  # <run>/profile.json, from the recording's folder
    since: str | None = None  # the window, in the decoder's clock (None: open)
    until: str | None = None
    error: str | None = None  # one line: the copy, the decoder, an empty window


class RecordedRun(Record):
    """One run of a recorded case (experiments/modelcheck._recorded_run)."""

    run: str | None = None  # its folder, in the recording's
    profile: RecordedProfile | None = None  # absent: the run was not usable by the model, so not profiled


class RecordedCase(Record):
    """A case of a recording (or its control) and its runs, one a round."""

    scenario: str | None = None
    rate: int | None = None
    setting: str | None = None  # one of costmodel.SETTINGS
    repeats: list[RecordedRun] | None = None


class RecordingRecord(Record):
    """A `model validate --record` folder's recording.json (experiments/modelcheck.record): the runs recorded so
    far, priced later by `--recorded`."""

    FILE = "recording.json"
    schema_version: int | None = None
    folder: str | None = None
    first_round: int | None = None  # the rotation's round it went on from (where the recording before left off)
    repeats: int | None = None  # the rounds it was asked for
    rounds_done: int | None = None  # absent from a recording of before the key: it ran its `repeats`
    complete: bool | None = None  # every round ran (absent from a recording of before the key: it did)
    cases: list[RecordedCase] | None = None
    control: RecordedCase | None = None


def recording_of(doc: dict[str, Any] | RecordingRecord) -> RecordingRecord:
    return _validated(RecordingRecord, doc)


BenchFigures = list[Num | None]  # one figure a round, None where that round had none


class StackFigures(Record):
    """One driver, worker and scenario of bench-app (experiments/benchapp.stack_cost), a figure per round."""

    app: BenchFigures | None = None  # the app's CPU-ms per successful request
    ratio: BenchFigures | None = None  # app over that round's floor's (empty for the floor itself)
    db: BenchFigures | None = None  # every database node's CPU-ms per successful request, summed
    success: BenchFigures | None = None
    p99: BenchFigures | None = None  # ms


class BenchAppRecord(Record):
    """bench-app's bench-app.json: the app tier's cost against its floor, by driver/worker/scenario."""

    FILE = "bench-app.json"
    schema_version: int | None = None
    rate: int | None = None
    duration_s: Num | None = None
    repeat: int | None = None
    figures: dict[str, StackFigures] | None = None  # "driver/worker/scenario" -> its figures


def bench_app_of(doc: dict[str, Any] | BenchAppRecord) -> BenchAppRecord:
    return _validated(BenchAppRecord, doc)


class ShapeFigures(Record):
    """One SQL shape of find_users (experiments/benchapp.find_users_shapes), a figure per round."""

    app: BenchFigures | None = None  # the app's CPU-ms per successful query
    replicas: BenchFigures | None = None  # the replicas' CPU-ms per successful query, summed
    p99: BenchFigures | None = None  # ms


class FindUsersRecord(Record):
    """`bench-app --find-users`'s find-users.json: its version, and per SQL shape (its name the key, one of
    FIND_USERS_SHAPES) its figures; a shape's keys are checked as a record's are (ShapeFigures refuses one it does
    not declare)."""

    model_config = ConfigDict(extra="allow")  # every other key a shape's name, its value the shape's figures
    FILE = "find-users.json"
    schema_version: int | None = None
    __pydantic_extra__: dict[str, ShapeFigures] = Field(init=False)


def find_users_of(doc: dict[str, Any] | FindUsersRecord) -> FindUsersRecord:
    return _validated(FindUsersRecord, doc)


# every kind's record but profile.json's (analysis/profile.Profile, which imports this module)
RECORDS: dict[str, type[Record]] = {
    "summary.json": RunSummary, "meta.json": RunMeta, "sweep.json": SweepRecord, "study.json": StudyRecord,
    "campaign.json": CampaignRecord, "apply.json": ApplyRecord, "bigtx.json": BigTxRecord, "model.json": CostModel,
    "validate.json": Validation, "recording.json": RecordingRecord, "bench-app.json": BenchAppRecord,
    "find-users.json": FindUsersRecord,
}


def current_text(path: Path) -> str:
    """A results file (a kind of RECORDS, by its name) as write_record writes it: read through its record, at its
    kind's current version (a current file's own bytes), for a copy of it (report/assets.Writer.copy)."""
    kind = kind_of(path.name)
    assert kind is not None and kind in RECORDS, path
    return _dump(document_of(RECORDS[kind].model_validate(migrate(load(path), kind))))
