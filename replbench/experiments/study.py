"""Studies: one command compares replication settings side by side with the rules of a careful experimenter
built in — every cell × scenario × measure is a unit; units run interleaved (cell A B C, then B C A, ...), never
all repeats of one cell in a row, so the machine's drift lands on every cell alike; each unit is a full run (or
apply-capacity measurement) with its own warm-up; the data state is reset per cell when the study asks for it.

One folder results/study-<time>-<name>/ holds every unit's folder, the command line and study.json (cells, the
order actually run, the settings read back, per-metric median/min/max per cell, verdicts against the baseline),
rewritten after every unit: Ctrl-C keeps what finished and marks the study interrupted; a failed unit is recorded
and the study goes on."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from app.tuning import QUEUE_FLOOR

from ..analysis.findings import judged, words_of
from ..analysis.studymetrics import (
    BY_KEY,
    baseline_words,
    baselines,
    cell_text,
    compare_cells,
    core_ceiling_text,
    metrics_of,
    unit_metrics,
)
from ..core import harnesslog, scenario, workload
from ..core.config import INDEXED_TABLE, ReplbenchError, Settings, idle_window, index_names
from ..core.nodenames import DEFAULT_REPLICAS  # what a study starts from when its cells change the count
from ..core.progress import Progress
from ..core.records import (
    COMPLETE,
    STATUS_FAILED,
    STATUS_INTERRUPTED,
    STATUS_SUCCEEDED,
    UNIT_FAILED,
    named_folder,
    new_folder,
)
from ..core.results import (
    ApplyRecord,
    BigTxRecord,
    ComparisonRow,
    IndexesRestored,
    RunSummary,
    StudyRecord,
    StudyUnit,
    UnitMetrics,
    merged,
    read_meta,
    write_record,
)
from ..topology import dataset, fanout, indexes, knobs, links, nodes, snapshot
from . import applycap, bigtx, replay
from .run import Run, RunOptions
from .studyfile import Spec, cell_records

# seconds around each attack beside its idle window (settle, settings, app restart, targets, catch-up, the checksum
# of the rows written, reports). Each estimate constant is measured: docs/decisions/study-estimates.md
RUN_OVERHEAD = 10.0
TABLE_CHECKSUM_SECONDS = 15.0  # CHECKSUM TABLE of 8M rows on 3 nodes (2 cores): a study's last run, a single run
# an apply-capacity unit: its backlog written through the app (writes / rate, a little longer: the catch-up around
# it) and each replica's drain alone with the settings around them
APPLY_WRITE_FACTOR = 1.15
APPLY_OVERHEAD = 18.0
BIGTX_ROWS = 100_000  # a big-transaction cell's rows when it names none
# a big transaction's master time plus its apply, and the settings around it
BIGTX_SECONDS_PER_1000_ROWS = 0.01
BIGTX_OVERHEAD = 2.0
RESET_SECONDS = 40.0  # a reset of the 8M set on 2 cores
# a replay unit: an 8M replica put back (its datadir copied, its pool read in) and a drain; 27-30 s a unit measured
# (results/readme-assets/replay-study-20261203), the copy read from the page cache: a colder one takes longer
REPLAY_SECONDS = 60.0
# a secondary index of the 8M table re-created (a cell's drop_indexes given back): on the master, then on the
# replicas, which start once the master has committed it (both at once on the 2 cores). Measured in campaign report at
# f9994d0 (study per-index, 128M pool, three builds): the master 21.9-25.6 s, the replicas 25.4-28.2 s after it, so
# about 55 s with the wait around it. Each change's seconds are in the meta.json of the run that made it
# (indexes.changed: master_s, replicas_s)
INDEX_BUILD_SECONDS = 55.0
INDEX_DROP_SECONDS = 5.0  # indexes dropped: metadata only, on the master then on the replicas
MAX_INDEX_STATES = 7  # up to this many distinct drop_indexes in a study, each round's order is the cheapest of all
# a unit whose cell resizes the buffer pool, or adds replicas, after the unit before it
POOL_RESIZE_SECONDS = 12.0
REPLICA_ADD_SECONDS = 45.0  # each replica added: a copy of replica1's datadir (about 4.6 GB at 8M) and its start
# a replica the study stopped brought back: started from its kept datadir and caught up on the writes it missed
# (topology/fanout; docs/decisions/replica-resume.md), not copied again
REPLICA_RESUME_SECONDS = 15.0


def round_orders(cells: int, rounds: int) -> list[list[int]]:
    """The order of the cells in each round: the rows of a Williams design (each row a shift of 0, 1, n-1, 2, n-2,
    ...; for an odd count also the mirrored rows), so that over a full set of rows every cell follows every other
    equally often and a carry-over from one cell into the next lands on all cells alike. A round never starts with
    the cell the previous round ended with. One or two cells: 0 1 every round (each already follows the other)."""
    if cells <= 2:
        return [list(range(cells)) for _ in range(rounds)]
    base = [0] + [(k + 1) // 2 if k % 2 else cells - k // 2 for k in range(1, cells)]
    rows = [[(b + shift) % cells for b in base] for shift in range(cells)]
    rows += [row[::-1] for row in rows] if cells % 2 else []
    orders: list[list[int]] = []
    pool: list[list[int]] = []
    for _ in range(rounds):
        pool = pool or list(rows)
        pick = next((row for row in pool if not orders or row[0] != orders[-1][-1]), pool[0])
        pool.remove(pick)
        orders.append(pick)
    return orders


def index_rounds(states: list[frozenset[str]], rounds: int, pools: list[str] | None = None) -> list[list[int]]:
    """The order of the cells in each round when they run without different secondary indexes (`states`: the
    indexes each cell drops): every round runs every cell once, as round_orders' do, but the cells that drop the same
    indexes run one after another, and the rounds' orders of those groups are, together, the ones that re-create
    the fewest indexes (each re-created index is minutes at 8M; a drop is free), the table whole at the start and
    again at the end. Within a group the cells take turns to lead, never repeating the unit before, and keep the
    buffer pool of the unit before where they can (`pools`: each cell's). More than MAX_INDEX_STATES groups: in the
    file's order."""
    groups: dict[frozenset[str], list[int]] = {}
    for cell, state in enumerate(states):
        groups.setdefault(state, []).append(cell)
    keys = list(groups)
    whole: frozenset[str] = frozenset()
    orders_of = list(itertools.permutations(range(len(keys)))) if len(keys) <= MAX_INDEX_STATES else \
        [tuple(range(len(keys)))]

    def cost(start: frozenset[str], order: tuple[int, ...], last: bool) -> int:
        total, now = 0, start
        for g in order:
            total, now = total + len(now - keys[g]), keys[g]
        return total + (len(now) if last else 0)

    # the cheapest orders over all rounds at once: per round, per state it ends in, the cheapest way there
    best: dict[frozenset[str], tuple[int, list[tuple[int, ...]]]] = {whole: (0, [])}
    for r in range(rounds):
        step: dict[frozenset[str], tuple[int, list[tuple[int, ...]]]] = {}
        for start, (spent, path) in best.items():
            for order in orders_of:
                total, end = spent + cost(start, order, r == rounds - 1), keys[order[-1]]
                if end not in step or total < step[end][0]:
                    step[end] = (total, [*path, order])
        best = step
    chosen = min(best.values(), key=lambda v: v[0])[1] if rounds else []
    out: list[list[int]] = []
    previous: int | None = None
    for r, order in enumerate(chosen):
        cells: list[int] = []
        for g in order:
            members = groups[keys[g]]
            turns = [members[(r + i) % len(members):] + members[:(r + i) % len(members)] for i in range(len(members))]
            pool = pools[previous] if pools and previous is not None else None
            pick = min(turns, key=lambda t: (t[0] == previous, pools is not None and bool(pools)
                                              and pools[t[0]] != pool, turns.index(t)))
            cells += pick
            previous = cells[-1]
        out.append(cells)
    return out


def index_changes(states: list[frozenset[str]]) -> tuple[int, int]:
    """(indexes re-created, changes that drop some) along units run without these indexes, from a whole table and
    back to it at the end."""
    built = drops = 0
    now: frozenset[str] = frozenset()
    for state in [*states, frozenset()]:
        built, drops, now = built + len(now - state), drops + bool(state - now), state
    return built, drops


@dataclass(frozen=True)
class Unit:
    repeat: int
    cell: int
    scenario: str
    measure: str


@dataclass(frozen=True)
class Plan:
    spec: Spec
    repeat: int
    rates: dict[str, int]
    duration: float
    idle: float = 0.0  # a fixed idle window before each run (REPLBENCH_IDLE_WINDOW), 0: by the run's rate

    @classmethod
    def of(cls, spec: Spec, repeat: int | None = None, rate: int | None = None,
           duration: float | None = None, idle: float = 0.0) -> Plan:
        rates = {s: rate for s in spec.scenarios} if rate else dict(spec.rates)
        return cls(spec, repeat or spec.repeat, rates, duration or spec.duration, idle)

    def scenarios_of(self, cell: int) -> tuple[str, ...]:
        own = self.spec.cells[cell].scenario
        return (own,) if own else self.spec.scenarios

    def group_of(self, cell: int, scenario_name: str) -> str:
        """The table a unit belongs to: its scenario, or all cells' scenarios when cells name their own."""
        if self.spec.cells[cell].scenario:
            return " vs ".join(dict.fromkeys(c.scenario for c in self.spec.cells if c.scenario))
        return scenario_name

    def units(self) -> list[Unit]:
        """Interleaved: every cell once per round, rounds repeated; never one cell's repeats in a row; the order
        within a round changes from round to round (round_orders) so no cell always follows the same one."""
        states = self.index_states()
        orders = index_rounds(states, self.repeat, [c.knobs.buffer_pool for c in self.spec.cells]) \
            if len(set(states)) > 1 else round_orders(len(self.spec.cells), self.repeat)
        return [Unit(r, c, s, m) for r, order in enumerate(orders)
                for c in order for s in self.scenarios_of(c) for m in self.spec.measures]

    def index_states(self) -> list[frozenset[str]]:
        """The secondary indexes each cell runs without (a cell that names none: the table whole)."""
        return [frozenset(index_names(c.drop_indexes or "")) for c in self.spec.cells]

    def unit_seconds(self, unit: Unit) -> float:
        if unit.measure == "big-transaction":
            rows = self.spec.cells[unit.cell].rows or BIGTX_ROWS
            return rows / 1000 * BIGTX_SECONDS_PER_1000_ROWS + BIGTX_OVERHEAD
        if unit.measure == "apply-capacity":
            return apply_seconds(self.writes_of(unit), self.rate_of(unit))
        if unit.measure == "replay":
            return REPLAY_SECONDS
        if unit.measure == "live":  # the window, then the held replica's drain of it, as a backlog's
            return apply_seconds(round(self.duration * self.rate_of(unit)), self.rate_of(unit))
        return run_seconds(self.duration, self.rate_of(unit), self.idle)

    def rate_of(self, unit: Unit) -> int:
        """The unit's rate: its scenario's in the study, times its cell's load."""
        return round(self.rates[unit.scenario] * (self.spec.cells[unit.cell].load or 1.0))

    def writes_of(self, unit: Unit) -> int:
        """The writes an apply-capacity unit queues: its cell's, else the study's, else 60 s worth."""
        return self.spec.cells[unit.cell].writes or self.spec.writes or 60 * self.rate_of(unit)

    def estimate(self) -> float:
        resets = len(self.spec.cells) * self.repeat if self.spec.reset == "each-cell" else 0
        tables = (resets or 1) if any(u.measure == "run" for u in self.units()) else 0
        return sum(self.unit_seconds(u) for u in self.units()) + resets * RESET_SECONDS + \
            tables * TABLE_CHECKSUM_SECONDS + self.changes_seconds()

    def changes_seconds(self) -> float:
        """What the topology's changes between units cost: a buffer pool resized, replicas added (and the count
        the study started with brought back at its end), secondary indexes dropped and re-created (and every one
        re-created at the end)."""
        pool, replicas, total = "", DEFAULT_REPLICAS, 0.0
        made = DEFAULT_REPLICAS  # replicas with a datadir: one beyond them is a copy, one within a resume
        states = self.index_states()
        built, drops = index_changes([states[u.cell] for u in self.units()])
        total += built * INDEX_BUILD_SECONDS + drops * INDEX_DROP_SECONDS
        for unit in self.units():
            cell = self.spec.cells[unit.cell]
            if cell.knobs.buffer_pool != pool:
                pool, total = cell.knobs.buffer_pool, total + POOL_RESIZE_SECONDS
            wanted = cell.replicas or replicas
            total += max(0, wanted - max(made, replicas)) * REPLICA_ADD_SECONDS + \
                max(0, min(wanted, made) - replicas) * REPLICA_RESUME_SECONDS
            replicas, made = wanted, max(made, wanted)
        return total + max(0, DEFAULT_REPLICAS - replicas) * REPLICA_RESUME_SECONDS

    def _data_state(self) -> str:
        if self.spec.measures == ("replay",):
            return f"{self.spec.replica} put back where the files start before every unit but the first"
        return "reset before every cell" if self.spec.reset == "each-cell" else self.spec.data_state

    def describe(self) -> str:
        spec = self.spec
        what = f"replays of {', '.join(f.name for f in spec.binlogs)} on {spec.replica}" \
            if spec.measures == ("replay",) else \
            f"{', '.join(f'{s} @ {self.rates[s]}/s' for s in spec.scenarios)} × {', '.join(spec.measures)}"
        each = "" if spec.measures == ("replay",) else f", {self.duration:g} s per run"
        lines = [f"study {spec.name}: {spec.description}",
                 f"  {len(spec.cells)} cells × {what}, {self.repeat} repeats{each}",
                 f"  data state: {self._data_state()}"]
        for i, cell in enumerate(spec.cells):
            where = f"; links {', '.join(cell.links)}" if cell.links else ""
            if cell.max_queue_ms:
                where += f"; app in-flight bound per worker follows throughput × {cell.max_queue_ms} ms of queue"
                if cell.max_inflight is not None:
                    where += f" (never under {cell.max_inflight or QUEUE_FLOOR})"
            elif cell.max_inflight is not None:
                where += f"; app in-flight bound {cell.max_inflight or 'none'} per worker"
            if cell.load is not None:
                where += f"; {cell.load:g}× the study's rate"
            if cell.clients is not None:
                where += f"; a closed loop of {cell.clients} client(s), the rate sizing the targets only"
            if cell.admission is not None:
                where += f"; app admission {cell.admission}"
            if cell.codel_target_ms is not None:
                where += f"; codel target {cell.codel_target_ms} ms"
            if cell.app_workers is not None:
                where += f"; {cell.app_workers} app worker(s)"
            if cell.client_connections is not None:
                where += f"; vegeta's connections to the app: {cell.client_connections}"
            if cell.app_transport is not None:
                where += f"; the app reaches the nodes by {cell.app_transport}"
            if cell.replicas is not None:
                where += f"; {cell.replicas} replica(s)"
            dropped = index_names(cell.drop_indexes or "")
            if dropped:
                where += f"; without {', '.join(dropped)} on {INDEXED_TABLE}"
            base = " (baseline)" if i == 0 else ""
            lines.append(f"  cell {i + 1}{base}: {cell.name} — {cell.knobs.describe()}{where}")
        if spec.cut:
            lines.append(f"  not run: {len(spec.cut)} cells of the file, cut by --only: {'; '.join(spec.cut)}")
        order = " ".join(f"{u.cell + 1}" for u in self.units()
                         if u.scenario == self.scenarios_of(u.cell)[0] and u.measure == spec.measures[0])
        lines.append(f"  order of cells: {order}")
        built, drops = index_changes([self.index_states()[u.cell] for u in self.units()])
        if built or drops:
            lines.append(f"  indexes of {INDEXED_TABLE}: dropped {drops} times, {built} index builds (about "
                         f"{INDEX_BUILD_SECONDS / 60:g} min each at 8M, the study's end included)")
        lines.append(f"  {len(self.units())} units, estimated {self.estimate() / 60:.0f} min")
        return "\n".join(lines)


def apply_seconds(writes: int, rate: float) -> float:
    """Seconds one apply-capacity unit should take: its backlog written at the rate, then each replica's drain."""
    return writes / rate * APPLY_WRITE_FACTOR + APPLY_OVERHEAD


def run_seconds(duration: float, rate: int, idle: float = 0.0) -> float:
    """Seconds one run should take: its attack, its idle window before (fixed, or by the rate), and what the harness
    does around them."""
    return duration + idle_window(rate, idle) + RUN_OVERHEAD


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:40] or "cell"


class Study:
    def __init__(self, settings: Settings, plan: Plan, folder: Path | None = None) -> None:
        self.settings = settings
        self.plan = plan
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        self.folder = folder or settings.results / f"study-{stamp}-{plan.spec.name}"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.progress = Progress(f"study {plan.spec.name}")
        self.units: list[StudyUnit] = []
        self.status = "running"
        self.indexes_restored: IndexesRestored | None = None  # what the study's end re-created (cells drop some)
        self.snapshot: snapshot.Snapshot | None = None  # a replay study's replica at the files' first GTID
        self.replayed = False  # whether the replica has moved on from the snapshot since it was taken or put back

    def execute(self) -> StudyRecord:
        try:
            self._snapshot_replica()
        except ReplbenchError:
            shutil.rmtree(self.folder, ignore_errors=True)  # refused before anything ran: nothing to keep
            raise
        (self.folder / "command.txt").write_text(" ".join(["./run.sh", *sys.argv[1:]]) + "\n")
        (self.folder / "study.toml").write_text(self.plan.spec.source)
        harnesslog.use(self.folder / "harness.log")
        begin = time.monotonic()
        todo = self.plan.units()
        last_cell: int | None = None
        started_with = self.settings.replica_count
        try:
            for index, unit in enumerate(todo):
                done = time.monotonic() - begin
                left = sum(self.plan.unit_seconds(u) for u in todo[index:])
                cell = self.plan.spec.cells[unit.cell]
                self.progress.say(f"cell {unit.cell + 1} of {len(self.plan.spec.cells)} ({cell.name}), "
                                  f"{unit.scenario} {unit.measure}, repeat {unit.repeat + 1} of {self.plan.repeat}; "
                                  f"elapsed {done / 60:.1f} min, about {left / 60:.0f} min left", final=True)
                if self.plan.spec.reset == "each-cell" and unit.cell != last_cell:
                    dataset.reset(self.settings, Progress("reset"))
                last_cell = unit.cell
                record = self._unit(unit, checksum="table" if self._checks_table(todo, index) else "rows")
                self.units.append(record)
                self._write()
                if record.status == STATUS_INTERRUPTED:
                    raise KeyboardInterrupt
            self.status = COMPLETE
        except KeyboardInterrupt:
            self.status = STATUS_INTERRUPTED
        finally:
            self._drop_snapshot()
            self._restore_replicas(started_with)
            self._restore_indexes()
            harnesslog.done(self.folder / "harness.log")
        return self._write()

    def _snapshot_replica(self) -> None:
        """A replay study's replica, checked to stand at one of the files' transaction boundaries (refused in one
        line otherwise, before anything runs), kept as it stands so that every unit replays from there."""
        spec = self.plan.spec
        if spec.measures != ("replay",):
            return
        replica = self.settings.node(spec.replica)
        replay.check_replica(self.settings, list(spec.binlogs), spec.replica)
        self.progress.say(f"keeping {spec.replica} as it stands (its datadir and its buffer pool's pages), to put "
                          "it back before each replay", final=True)
        self.snapshot = snapshot.take(self.settings, replica)

    def _drop_snapshot(self) -> None:
        """The snapshot deleted; the replica replicating from the master again (a replay leaves it so; a unit that
        failed after putting it back may not have)."""
        if self.snapshot is None:
            return
        snapshot.drop(self.snapshot)
        try:
            nodes.ensure_replicating(self.settings.node(self.snapshot.node), self.settings)
        except Exception as exc:  # noqa: BLE001 — the study's results are written whatever happens here
            self.progress.say(f"{self.snapshot.node} is not replicating: {exc} (./run.sh up starts it)", final=True)

    def _restore_indexes(self) -> None:
        """A study whose cells drop indexes leaves the table with every one (Ctrl-C is held off meanwhile)."""
        if all(c.drop_indexes is None for c in self.plan.spec.cells):
            return
        try:
            self.indexes_restored = IndexesRestored.model_validate(indexes.restore(self.settings, self.progress))
        except Exception as exc:  # noqa: BLE001 — the study's results are written whatever happens here
            self.indexes_restored = IndexesRestored(error=f"{type(exc).__name__}: {exc}")
            self.progress.say(f"could not re-create the indexes of {INDEXED_TABLE}: {exc} (the next run does)",
                              final=True)

    def _restore_replicas(self, count: int) -> None:
        """A study whose cells set the replica count leaves the topology with the count it started with."""
        if self.settings.external or all(c.replicas is None for c in self.plan.spec.cells):
            return
        try:
            for change in fanout.reconcile(self.settings.with_overrides(replicas_asked=count)):
                self.progress.say(f"back to {count} replica(s): {change}", final=True)
        except Exception as exc:  # noqa: BLE001 — the study's results are written whatever happens here
            self.progress.say(f"could not go back to {count} replica(s): {exc}", final=True)

    def _checks_table(self, todo: list[Unit], index: int) -> bool:
        """Whether the run at todo[index] checks the whole table (CHECKSUM TABLE) rather than the rows it wrote:
        the last run of the study, and the last before each reset, so a divergence anywhere is seen before the
        data is restored or the study ends; the runs between compare the rows they wrote (~14 s less each at 8M)."""
        later = [(i, u) for i, u in enumerate(todo) if i > index and u.measure == "run"]
        if not later:
            return True
        reset_between = self.plan.spec.reset == "each-cell" and any(
            u.cell != todo[i - 1].cell for i, u in enumerate(todo) if index < i <= later[0][0])
        return reset_between

    def _unit(self, unit: Unit, checksum: str = "table") -> StudyUnit:
        cell = self.plan.spec.cells[unit.cell]
        if unit.measure == "live":
            return self._live_unit(unit)
        if unit.measure == "replay":
            return self._replay_unit(unit)
        sc = scenario.load(unit.scenario)
        if cell.rows is not None and unit.measure != "big-transaction":  # each update_users request's rows
            sc = replace(sc, bulk_rows=cell.rows)
        rate = self.plan.rate_of(unit)
        parent = self._parent(unit)
        record = self._head(unit)
        settings = self.settings.with_overrides(**cell.app())
        data: RunSummary | ApplyRecord | BigTxRecord
        try:
            if unit.measure == "big-transaction":
                folder = new_folder(settings, sc, cell.rows or BIGTX_ROWS, parent=parent / "bigtx")
                table = "noidx" if sc.schema == bigtx.TABLES["noidx"] else "idx"
                data = bigtx.measure(settings, table, (cell.rows or BIGTX_ROWS,), cell.knobs, sc, folder)
                status = _status(data, UNIT_FAILED)
                readback = data.knobs_readback
            elif unit.measure == "apply-capacity":
                folder = new_folder(settings, sc, rate, parent=parent / "apply")
                data = applycap.measure(settings, sc, cell.knobs, self.plan.writes_of(unit), rate, folder,
                                        links.parse_all(cell.links))
                status = _status(data, UNIT_FAILED)
                readback = data.knobs_readback
            else:
                folder = new_folder(settings, sc, rate, parent=parent)
                options = RunOptions(duration=self.plan.duration, knobs=cell.knobs,
                                     catch_up_timeout=sc.catch_up_timeout or RunOptions.catch_up_timeout,
                                     links=links.parse_all(cell.links), checksum=checksum, clients=cell.clients)
                data = Run(settings, sc, rate, options, folder, self.progress).execute().summary
                status = _status(data, STATUS_FAILED)
                readback = read_meta(folder).knobs_readback
        except KeyboardInterrupt:
            return merged(record, StudyUnit(status=STATUS_INTERRUPTED))
        except Exception as exc:  # noqa: BLE001 — a failed unit is recorded and the study goes on
            return _failed(record, exc)
        return merged(record, StudyUnit(folder=str(folder.relative_to(self.folder)), status=status,
                                        knobs_readback=readback, metrics=unit_metrics(unit.measure, data, sc.criteria)
                                        if status != STATUS_INTERRUPTED else UnitMetrics()))

    def _head(self, unit: Unit) -> StudyUnit:
        """What study.json records of every unit before it runs."""
        return StudyUnit(repeat=unit.repeat + 1, cell=self.plan.spec.cells[unit.cell].name, scenario=unit.scenario,
                         group=self.plan.group_of(unit.cell, unit.scenario), measure=unit.measure,
                         rate=self.plan.rate_of(unit))

    def _parent(self, unit: Unit) -> Path:
        """The folder of the unit's cell, which holds its units' folders."""
        return self.folder / f"cell{unit.cell + 1}-{_slug(self.plan.spec.cells[unit.cell].name)}"

    def _live_unit(self, unit: Unit) -> StudyUnit:
        """A live unit: its workload's tool writing at the unit's rate for the study's duration, one replica held
        and drained (experiments/applycap.measure_workload)."""
        cell = self.plan.spec.cells[unit.cell]
        rate = self.plan.rate_of(unit)
        settings = self.settings.with_overrides(**cell.app())

        def window() -> tuple[Path, ApplyRecord]:
            folder = named_folder(settings, unit.scenario, rate, parent=self._parent(unit) / "live")
            return folder, applycap.measure_workload(settings, cell.knobs, workload.load(unit.scenario), rate,
                                                     self.plan.duration, folder)
        return self._apply_unit(unit, window, keep_readback=True)

    def _replay_unit(self, unit: Unit) -> StudyUnit:
        """A replay unit: the replica put back at the files' first GTID unless it stands there already, then the
        files replayed by its SQL thread with the cell's apply settings (experiments/replay.measure). Its apply.json
        records the settings asked, not read back: the unit records none."""
        spec, cell = self.plan.spec, self.plan.spec.cells[unit.cell]

        def put_back() -> None:
            if self.replayed and self.snapshot is not None:
                self.progress.say(f"putting {spec.replica} back at {self.snapshot.gtid}", final=True)
                snapshot.restore(self.settings, self.snapshot)
            self.replayed = True

        def replayed() -> tuple[Path, ApplyRecord]:
            put_back()
            folder = named_folder(self.settings, unit.scenario, spec.replica, parent=self._parent(unit) / "replay")
            files, relogged = list(spec.binlogs), None
            image = cell.knobs.binlog_row_image
            # where a cell asks for a row image, every cell's files are re-logged under its own (FULL included), so
            # that the cells differ only in what they set: at 8M a re-logged file replayed faster than the capture
            # it was re-logged from (docs/apply-capacity.md, "Other row images")
            if any(c.knobs.binlog_row_image != knobs.Knobs().binlog_row_image for c in spec.cells):
                self.progress.say(f"{spec.replica} re-logs the files under binlog_row_image={image}", final=True)
                files, relogged = replay.relog(self.settings, files, spec.replica, image, folder / "relogged")
                self.replayed = True
                put_back()
            return folder, replay.measure(self.settings, cell.knobs, files, spec.replica, folder, relogged=relogged)
        return self._apply_unit(unit, replayed, keep_readback=False)

    def _apply_unit(self, unit: Unit, measure: Callable[[], tuple[Path, ApplyRecord]],
                    keep_readback: bool) -> StudyUnit:
        """A unit whose measure writes an apply.json (live, replay): its head, then its folder, status, metrics (and
        the nodes' readback); an interrupted or failed one recorded as such, the study going on."""
        record = self._head(unit)
        try:
            folder, data = measure()
        except KeyboardInterrupt:
            return merged(record, StudyUnit(status=STATUS_INTERRUPTED))
        except Exception as exc:  # noqa: BLE001 — a failed unit is recorded and the study goes on
            return _failed(record, exc)
        status = _status(data, UNIT_FAILED)
        record = merged(record, StudyUnit(folder=str(folder.relative_to(self.folder)), status=status,
                                          metrics=unit_metrics(unit.measure, data)
                                          if status != STATUS_INTERRUPTED else UnitMetrics()))
        return merged(record, StudyUnit(knobs_readback=data.knobs_readback)) if keep_readback else record

    def _write(self) -> StudyRecord:
        spec = self.plan.spec
        cells = [c.name for c in spec.cells]
        finished = [u for u in self.units if metrics_of(u) is not None]  # an interrupted unit's is {}
        study_cells = cell_records(spec.cells)
        base_of = baselines(study_cells, list(spec.baseline_per))
        record = StudyRecord(
            name=spec.name, description=spec.description, status=self.status,
            scenarios=list(spec.scenarios), rates=self.plan.rates, duration_s=self.plan.duration,
            measures=list(spec.measures), repeat=self.plan.repeat, reset=spec.reset,
            data_state=spec.data_state, question=spec.question, primary=list(spec.primary),
            cells=study_cells, cells_cut=list(spec.cut), baseline_per=list(spec.baseline_per),
            baselines=base_of, order=[_order_text(u) for u in self.units],
            units=list(self.units), comparison=compare_cells(finished, cells, base_of),
            command=" ".join(["./run.sh", *sys.argv[1:]]),
            cores=None if self.settings.external else os.cpu_count())
        # the keys given are the keys written: these two only where the study has them
        if spec.plot is not None:
            record = merged(record, StudyRecord(plot=spec.plot))
        if self.indexes_restored is not None:
            record = merged(record, StudyRecord(indexes_restored=self.indexes_restored))
        write_record(self.folder / "study.json", record)
        return record


def _order_text(unit: StudyUnit) -> str:
    """A unit as study.json's `order` names it."""
    return f"{unit.cell} / {unit.scenario} / {unit.measure} / repeat {unit.repeat}"


def _failed(record: StudyUnit, exc: Exception) -> StudyUnit:
    """A unit that failed with an exception, recorded with it (the harness log has its traceback)."""
    harnesslog.write(f"unit {_order_text(record)} failed: {exc}", exc)
    return merged(record, StudyUnit(status=UNIT_FAILED, error=f"{type(exc).__name__}: {exc}"))


def _status(data: RunSummary | ApplyRecord | BigTxRecord, missing: str) -> str:
    """A unit's status as its data file records it; `missing` when it records none."""
    return data.status if data.status is not None else missing  # every writer writes a str: none writes null


def render_table(study: StudyRecord) -> str:
    """The comparison as text: per scenario, a row per metric, a column per cell, each against its baseline in the
    one rule's words (docs/metrics.md, "Comparing two figures"): the primary metrics as the study's findings judge
    them (analysis/findings), the others described without a test."""
    cells = [c.name for c in study.cells or []]
    primary = list(study.primary or [])
    every = judged(study, primary) if primary else []
    lines = [f"study {study.name} ({study.status}): median [min–max] over repeats (ratio to "
             f"{baseline_words(study)}; docs/metrics.md, \"Comparing two figures\")"]

    def text(group: str, key: str, rows: dict[str, ComparisonRow], cell: str) -> str:
        row = rows[cell]
        base = rows.get(row.baseline or next(iter(rows)))
        if key in primary and row.baseline and cell != row.baseline:
            holds, words = words_of(every, study, group, key, cell, row.baseline)
            return cell_text(row, ("holds, " if holds else "") + words, key)
        return cell_text(row, None, key, base)

    for scenario_name, per_metric in (study.comparison or {}).items():
        lines.append(f"\n{scenario_name}:")
        width = max(len(BY_KEY[k].label) for k in per_metric) if per_metric else 10
        lines.append(f"  {'metric':<{width}}  " + "  |  ".join(cells))  # type: ignore[arg-type]
        for key, rows in per_metric.items():
            lines.append(f"  {BY_KEY[key].label:<{width}}  "
                         + "  |  ".join(text(scenario_name, key, rows, c) for c in cells))  # type: ignore[arg-type]
    ceiling = core_ceiling_text(study)
    if ceiling:
        lines.append(f"\ncore ceiling: {ceiling}")
    failed = [u for u in study.units or [] if u.status not in STATUS_SUCCEEDED]
    if failed:
        lines.append("\nunits not ok: " + "; ".join(f"{u.cell} {u.scenario} r{u.repeat}: {u.status}" for u in failed))
    return "\n".join(lines)
