"""Study files: the declarative TOML files in studies/ that compare replication settings side by side, read by
their model (StudyTables, below) into a Spec before anything runs: an unknown knob or key, a bad value, an empty
grid, an invalid combination or an unknown scenario is refused, naming the file, the line and the key. A cell sets
the knobs (topology/knobs.KNOB_LIST), the settings the settings table gives a cell key (core/config.SETTING_LIST:
replicas, admission, max_inflight …, each checked by the setting's own parser) and its own keys (scenario, link,
load, rows, writes).

    description = "ROW vs STATEMENT"
    question = "What does STATEMENT save against ROW?"   # one sentence: what the study asks
    primary = ["bytes_per_write", "replica_ms_per_write"]  # the only metrics findings come from
    scenarios = ["write", "write-bulk"]     # every cell runs each of them
    rate = 400                              # or [rates] write = 800, write-bulk = 20
    duration = "20s"
    measure = ["run"]                       # run and/or apply-capacity
    # measure = ["live"]: each unit a live window of `duration` (apply-capacity --live, one replica held, the
    # others following) while a workload file's tool (workloads/) writes to the master at the rate; the study
    # names its workloads in place of scenarios (workloads = ["sysbench-write-only"], rates keyed by them)
    # measure = ["replay"]: each unit a replay of captured binlog files (binlogs = ["captured/binlog.000041", …],
    # relative to the repository's folder) on one replica (replica = "replica1", the default) held at their first
    # GTID; it is snapshotted before the first unit and put back before each other (topology/snapshot), so that
    # the cells (parallel_threads, parallel_mode, binlog_row_image: the only settings a replay takes) replay the
    # same files; a cell's MINIMAL or NOBLOB has the replica re-log them under it first and replays what it wrote
    repeat = 3
    reset = "never"                         # or "each-cell": every cell starts from the pristine data
    data_state = "why the data state is comparable without a reset"
    [vary]                                  # the product of the lists; the first cell is the baseline
    binlog_format = ["ROW", "STATEMENT"]
    # or explicit cells: [[cells]] name = "ROW FULL"  binlog_format = "ROW" ...
    # a cell (or [vary] scenario = [...]) may name its own scenario: the cells are then compared across them;
    # link = "replica1=5ms,replica2=5ms" (or "none") puts the cell's replication through toxiproxy links
    # load = 1.5 runs the cell at 1.5× the study's rate for each scenario (e.g. the rates there are the max)
    # writes = 30000 queues that many writes in the cell's apply-capacity drain (the study's 'writes' otherwise)
    # measure = ["big-transaction"]: each unit one UPDATE of `rows` rows (a cell key, default 100,000) on the
    # scenario's table (write-noindex: bench_noidx, else bench_idx)
    # admission = "none", max_inflight = 64, max_queue_ms = 250, app_workers = 1, app_transport = "unix" (or in
    # [vary]) set the app
    # for the cell: its in-flight bound per worker (fixed, or following throughput × a queue time), its gunicorn
    # workers and how it reaches the nodes (REPLBENCH_MAX_INFLIGHT, REPLBENCH_MAX_QUEUE_MS, REPLBENCH_APP_WORKERS,
    # REPLBENCH_APP_TRANSPORT); the app restarts for every run anyway. replicas = 3 (or in [vary]) gives the cell
    # that many replicas (--replicas: added by cloning replica1, removed by deleting them);
    # client_connections = 512 or "unlimited" bounds vegeta's connections to the app (REPLBENCH_CLIENT_CONNECTIONS)
    # drop_indexes = "idx_last" (or ["uq_email", "idx_last"], "all", "none") runs the cell without those secondary
    # indexes of bench_idx.accounts (REPLBENCH_DROP_INDEXES): dropped on the master before its units, re-created
    # when a cell keeps them and at the study's end; the units are ordered so that few are re-created
    baseline_per = ["buffer_pool"]          # each cell against the first cell with its buffer_pool (default: the
                                            # first cell of all): a study of two factors asks one of them per level
    [plot]                                  # its chart: each primary metric against a knob or cell key, a line
    x = "buffer_pool"                       # per value of another (default: a bar per cell)
    lines = "scenario"
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar, Generic, TypeVar

from annotated_types import MinLen
from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    create_model,
    model_validator,
)

from ..analysis.studymetrics import BY_KEY, SOURCE_OF_MEASURE, baselines, cell_label, grid_cells
from ..core import named, workload
from ..core import scenario as scenarios
from ..core.config import (
    MAX_BULK_ROWS,
    MAX_CLIENTS,
    SETTING_LIST,
    STUDY_DIR,
    FileValue,
    Setting,
    Word,
    parse_duration,
)
from ..core.results import KnobSetting, StudyCell, StudyPlot
from ..core.schema import FieldError, FileModel, Loc, between, checked_by, duration, one_of, shown, validate
from ..topology import links
from ..topology.knobs import KNOB_LIST, KNOBS, Knob, Knobs

MEASURES = ("run", "apply-capacity", "big-transaction", "live", "replay")
REPLAY_NAME = "binlog"  # a replay study's one "scenario": the files it replays
# all of the settings a replay applies (experiments/replay); a row image other than the files' FULL re-logs them
REPLAY_KNOBS = ("parallel_threads", "parallel_mode", "binlog_row_image")
RESETS = ("never", "each-cell")
DEFAULT_REPEAT = 3
MAX_RATE = 100_000
# the settings a cell may set, by their cell key: the settings table's (core/config.SETTING_LIST, Setting.cell)
CELL_SETTINGS: dict[str, Setting] = {s.cell: s for s in SETTING_LIST if s.cell}
OWN_KEYS = ("scenario", "link", "load", "rows", "writes", "clients")  # what a cell sets beside knobs and settings
CELL_KEYS = (*OWN_KEYS, *CELL_SETTINGS)  # what a cell may set beside the knobs
T = TypeVar("T")
V = TypeVar("V")


class StudyError(Exception):
    """A study file is missing or invalid; the message names the file, the line and the problem."""


@dataclass(frozen=True)
class Cell:
    name: str
    knobs: Knobs
    scenario: str | None = None  # a cell may run its own scenario (e.g. with and without indexes)
    links: tuple[str, ...] = ()  # link specs (--link), e.g. ("replica1=5ms", "replica2=5ms")
    load: float | None = None  # the cell's rate as a multiple of the study's (e.g. 1.5: 1.5× the max)
    rows: int | None = None  # big-transaction: rows in its one transaction (default 100,000); run and
    # apply-capacity: rows each update_users request changes (the scenario's bulk_rows)
    writes: int | None = None  # apply-capacity: the writes this cell queues (None: the study's 'writes')
    clients: int | None = None  # run: a closed loop of that many clients (--clients; docs/runs.md, "Closed loop")
    # the settings the cell sets (cell key, value as the file gives it), in the settings table's order; the others
    # are the environment's
    settings: tuple[tuple[str, Word], ...] = ()

    def __getattr__(self, key: str) -> Word | None:
        """A setting a cell may set, by its cell key (cell.max_inflight): its value as the file gives it (a word or
        a whole number; drop_indexes' names as one comma string), None when the cell leaves it."""
        if key not in CELL_SETTINGS:
            raise AttributeError(f"'Cell' object has no attribute {key!r}")
        return dict(self.settings).get(key)

    @property
    def replicas(self) -> int | None:
        """The replica count the cell sets (its setting checked it a whole number, 3 or "3"), None where it leaves
        the topology's."""
        value = dict(self.settings).get("replicas")
        return None if value is None else int(value)

    @property
    def drop_indexes(self) -> str | None:
        """The indexes the cell runs without, as one comma string ("none": none), None where it leaves them."""
        value = dict(self.settings).get("drop_indexes")
        return None if value is None else str(value)

    def app(self) -> dict[str, Word]:
        """The settings the cell sets, by their Settings field names (for Settings.with_overrides)."""
        return {CELL_SETTINGS[key].name: value for key, value in self.settings}

    def changed(self) -> dict[str, Word]:
        """What the cell sets beside the reference: its knobs (as they are typed: sync_binlog 0, not '0'), its links
        and its settings."""
        return {**self.knobs.changed(), **({"link": ",".join(self.links)} if self.links else {}),
                **({"load": f"{self.load:g}×"} if self.load is not None else {}),
                **({"rows": f"{self.rows:,}"} if self.rows is not None else {}),
                **({"writes": f"{self.writes:,}"} if self.writes is not None else {}),
                **({"clients": str(self.clients)} if self.clients is not None else {}),
                **{key: str(value) for key, value in self.settings}}


@dataclass(frozen=True)
class Spec:
    name: str
    description: str
    scenarios: tuple[str, ...]
    rates: dict[str, int]
    duration: float
    measures: tuple[str, ...]
    repeat: int
    reset: str
    data_state: str
    cells: tuple[Cell, ...]
    writes: int | None = None  # apply-capacity backlog (default: 60 s at the rate)
    question: str = ""  # what the study asks, in one sentence
    primary: tuple[str, ...] = ()  # the metrics its findings may come from (analysis/findings.py)
    baseline_per: tuple[str, ...] = ()  # each cell against the first cell with its values of these (default: the
    #                                     first cell of all), e.g. ("buffer_pool",): indexes against none per pool
    plot: StudyPlot | None = None  # its chart's axes ([plot]); None: a bar per cell
    binlogs: tuple[Path, ...] = ()  # measure "replay": the files each unit replays, in order
    replica: str = "replica1"  # measure "replay": the replica that replays them
    source: str = field(repr=False, default="")
    cut: tuple[str, ...] = ()  # the file's cells `only` left out, by name (study.json's cells_cut)


def available() -> list[str]:
    return named.available(STUDY_DIR)


def resolve(name: str) -> Path:
    path = named.find(name, STUDY_DIR)
    if path is None:
        raise StudyError(f"no study file {name!r}; studies: {', '.join(available())}")
    return path


def load(name: str) -> Spec:
    path = resolve(name)
    source = path.read_text()
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{path}: {exc}") from None
    return validate(StudyTables, data, str(path), source, StudyError).spec(path.stem, source)


def cell_records(cells: tuple[Cell, ...]) -> list[StudyCell]:
    """The cells as study.json records them, and as its reader gets them: name, every knob, own scenario (None for
    none: every field is set, so each is written), what they change."""
    return [StudyCell(name=c.name, knobs=KnobSetting.model_validate(c.knobs.as_dict()), scenario=c.scenario,
                      changed=c.changed()) for c in cells]


def cell_value(cell: Cell, key: str) -> str:
    """A cell's value of a knob or a cell key (or its name), as text ('' where the cell leaves a cell key unset)."""
    if key == "name":
        return cell.name
    if key in KNOBS:
        return str(getattr(cell.knobs, key))
    if key == "link":
        return ",".join(cell.links) or "none"
    if key in OWN_KEYS:
        found = getattr(cell, key)
        return "" if found is None else f"{found:g}" if isinstance(found, float) else str(found)
    if key in CELL_SETTINGS:
        return str(dict(cell.settings).get(key, ""))
    raise StudyError(f"--only {key}: not a knob or a cell key (knobs: {', '.join(KNOBS)}; cell keys: "
                     f"{', '.join(CELL_KEYS)}; or name)")


def only(spec: Spec, conditions: list[str]) -> Spec:
    """The study with only the cells that match every condition ('buffer_pool=128M', 'drop_indexes=none,idx_last',
    'name=serial,4 optimistic': the cell's value of that key, or its name, is one of the comma-separated values,
    compared without case; a value that is itself one cell's whole value, commas and all, is taken whole, as a link
    'replica1=5ms,replica2=5ms'). A value no cell has is refused (a slip would otherwise run a smaller study than
    meant), as is a set of conditions no cell meets. The baseline is then the first cell left (per baseline_per, the
    first of each level left); the cells left out are its `cut`, which study.json records (cells_cut) so a report
    names them as not run."""
    cells = list(spec.cells)
    for condition in conditions:
        key, sep, values = condition.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key or not values.strip():
            raise StudyError(f"--only {condition!r}: give KEY=VALUE[,VALUE...], e.g. buffer_pool=128M")
        have = list(dict.fromkeys(cell_value(c, key) for c in spec.cells))
        lower = {h.lower() for h in have}
        wanted = [values.strip()] if values.strip().lower() in lower else \
            [v.strip() for v in values.split(",") if v.strip()]
        unknown = [v for v in wanted if v.lower() not in lower]
        if unknown:
            raise StudyError(f"--only {condition}: no cell of study {spec.name} has {key}={', '.join(unknown)} "
                             f"(its cells have {'; '.join(have)})")
        cells = [c for c in cells if cell_value(c, key).lower() in {v.lower() for v in wanted}]
    if not cells:
        raise StudyError(f"--only {' '.join(conditions)}: no cell of study {spec.name} meets every condition")
    kept = {c.name for c in cells}
    return replace(spec, cells=tuple(cells), cut=spec.cut + tuple(c.name for c in spec.cells if c.name not in kept))


# The file's model. A cell's keys and the checks of their values come from the tables: every knob
# (topology/knobs.KNOB_LIST, checked as its flag is), every setting a cell may set (CELL_SETTINGS, checked by the
# setting's own parser), and the cell's own keys.

def _word_or_number(value: object) -> Word:
    """A knob's or a setting's value as a file gives it: a word or a whole number (true or 2.5 is a slip)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError(f"must be a whole number or a word, got {shown(value)}")
    return value


def _knob(knob: Knob) -> object:
    return Annotated[Word, BeforeValidator(_word_or_number), checked_by(knob.value)]


def _setting(setting: Setting) -> object:
    return Annotated[Word, BeforeValidator(_word_or_number), checked_by(lambda v: setting.parse(str(v)))]


def _at_least_one(what: str) -> AfterValidator:
    def check(value: int) -> int:
        if value < 1:
            raise ValueError(f"must be a whole number of {what}, 1 or more, got {value}")
        return value

    return AfterValidator(check)


def _load(value: float) -> float:
    if not 0 < value <= 10:
        raise ValueError(f"must be a multiple of the study's rate, over 0 and up to 10, got {value:g}")
    return value


def _clients(value: int) -> int:
    if value > MAX_CLIENTS:
        raise ValueError(f"must be at most {MAX_CLIENTS} clients, got {value}")
    return value


def _names(value: object) -> str:
    """A list of names as one comma string (drop_indexes = ["uq_email", "idx_last"]); a string as it is."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ",".join(value)
    if isinstance(value, str):
        return value
    raise ValueError(f"must be names, as a list or a comma-separated string, got {shown(value)}")


NAME_LISTS = ("drop_indexes",)  # the cell keys whose value may be a list of names (one comma string to the setting)
VALUE_TYPES: dict[str, object] = {  # each cell key's type (a type form, as a field's annotation is)
    **{knob.name: _knob(knob) for knob in KNOB_LIST},
    "scenario": str, "link": links.LinkSpecs, "load": Annotated[float, AfterValidator(_load)],
    "rows": Annotated[int, _at_least_one("rows")], "writes": Annotated[int, _at_least_one("writes")],
    "clients": Annotated[int, _at_least_one("clients"), AfterValidator(_clients)],
    **{key: _setting(setting) for key, setting in CELL_SETTINGS.items()},
    **{key: Annotated[str, BeforeValidator(_names), checked_by(CELL_SETTINGS[key].parse)] for key in NAME_LISTS},
}
DURATION = duration(parse_duration)


class _CellKeys(FileModel, Generic[V]):
    """A table of cell keys ([vary], or one of [[cells]]), keeping the file's order of its keys: a cell's name and
    the order of a [vary] grid's cells (its first is the baseline) follow it."""

    unknown_key: ClassVar[str] = (f"unknown knob or cell key; knobs: {', '.join(KNOBS)}; cell keys: "
                                  f"{', '.join(CELL_KEYS)}")
    # the file's table as it gives it, valid by then: a cell's values (_OneCell) or a grid's lists of them (_Grid),
    # which of the two the subclass's fields checked
    _given: dict[str, V] = PrivateAttr(default_factory=dict)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_file_order(cls, data: object, handler: ModelWrapValidatorHandler[_CellKeys[V]]) -> _CellKeys[V]:
        table = handler(data)
        assert isinstance(data, dict)  # valid by now, so a table, and its values the fields' (V)
        table._given = dict(data)
        return table

    def given(self) -> dict[str, V]:
        """The keys the file sets, in its order, with their values as the file gives them."""
        return dict(self._given)


class _OneCell(_CellKeys[FileValue]):
    """One of [[cells]]: a value per key."""


class _Grid(_CellKeys[list[FileValue]]):
    """[vary]: a list of values per key."""


# [[cells]]: one cell, its name and any cell key; [vary]: each cell key a non-empty list, the grid their product
if TYPE_CHECKING:  # classes made at run time from VALUE_TYPES: to the type checker, their bases
    CellTable = _OneCell
    VaryTable = _Grid
else:
    CellTable = create_model("CellTable", __base__=_OneCell, name=(str, ""),
                             **{key: (kind | None, None) for key, kind in VALUE_TYPES.items()})
    VaryTable = create_model("VaryTable", __base__=_Grid,
                             **{key: (Annotated[list[kind], MinLen(1)] | None, None)
                                for key, kind in VALUE_TYPES.items()})


class StudyTables(FileModel):
    """A study file: each key checked alone by its type, then across keys (_across_keys) the cells, the scenarios,
    the rates and the metrics."""

    description: str = ""
    question: str = ""
    primary: list[str] = []
    scenarios: list[str] = []
    scenario: str | None = None
    workloads: list[str] = []  # measure = ["live"]: the workload files its units drive, in place of scenarios
    binlogs: list[str] = []  # measure = ["replay"]: the captured binlog files its units replay, in order
    replica: str | None = None  # measure = ["replay"]: the replica that replays them (default replica1)
    rate: Annotated[int, between(1, MAX_RATE)] | None = None
    rates: dict[str, Annotated[int, between(1, MAX_RATE)]] | None = None
    duration: Annotated[float, DURATION] = Field("20s", validate_default=True)
    measure: list[Annotated[str, one_of(MEASURES)]] = ["run"]
    repeat: Annotated[int, _at_least_one("repeats")] = DEFAULT_REPEAT
    reset: Annotated[str, one_of(RESETS)] = "never"
    data_state: str = ""
    vary: VaryTable | None = None
    cells: list[CellTable] | None = None
    writes: Annotated[int, _at_least_one("writes")] | None = None
    baseline_per: list[str] = []
    plot: PlotTable | None = None
    _derived: tuple[tuple[Cell, ...], list[str], dict[str, int]] = PrivateAttr()

    @model_validator(mode="after")
    def _across_keys(self) -> StudyTables:
        cells, locs = self._cells()
        names = self._scenarios(cells, locs)
        _check_rows(cells, locs, names, tuple(self.measure))
        clients = next((loc for cell, loc in zip(cells, locs) if cell.clients is not None), None)
        if clients is not None and tuple(self.measure) != ("run",):
            raise FieldError((*clients, "clients"), "a closed loop's clients drive a run: the study's measure must "
                                                    "be only \"run\"")
        self._derived = (cells, names, self._rates(names))
        self._check_metrics(cells)
        self._check_plot(cells)
        return self

    def spec(self, name: str, source: str) -> Spec:
        cells, names, rates = self._derived
        return Spec(name=name, description=self.description, scenarios=tuple(names), rates=rates,
                    duration=self.duration, measures=tuple(self.measure), repeat=self.repeat, reset=self.reset,
                    data_state=self.data_state, cells=cells, writes=self.writes, source=source,
                    question=self.question, primary=tuple(self.primary), baseline_per=tuple(self.baseline_per),
                    plot=None if self.plot is None else StudyPlot(x=self.plot.x, lines=self.plot.lines),
                    binlogs=tuple(Path(f) for f in self.binlogs), replica=self.replica or "replica1")

    def _cells(self) -> tuple[tuple[Cell, ...], list[Loc]]:
        """The cells, and where each is set in the file."""
        if self.vary is not None and self.cells is not None:
            raise FieldError((), "give either [vary] or [[cells]], not both")
        if self.vary is not None:
            grid = self.vary.given()
            if not grid:
                raise FieldError(("vary",), "an empty table: nothing to compare")
            combos: list[dict[str, FileValue]] = grid_cells(grid)
            locs: list[Loc] = [("vary",)] * len(combos)
        elif self.cells is not None:
            if not self.cells:
                raise FieldError(("cells",), "an empty list: nothing to compare")
            combos = [c.given() for c in self.cells]
            locs = [("cells", i) for i in range(len(combos))]
        else:
            raise FieldError((), "a study needs [vary] or [[cells]]")
        cells = tuple(_cell(combo, loc) for combo, loc in zip(combos, locs))
        seen: set[str] = set()
        for cell, loc in zip(cells, locs):
            if cell.name in seen:
                raise FieldError((*loc, "name"), f"two cells have the same name, {cell.name!r}")
            seen.add(cell.name)
        return cells, locs

    def _scenarios(self, cells: tuple[Cell, ...], locs: list[Loc]) -> list[str]:
        """Every scenario the study runs: its own, then the cells' (each known, each able to do the measures); a
        live study's workloads."""
        if "live" in self.measure or self.workloads:
            return self._workloads(cells, locs)
        if "replay" in self.measure or self.binlogs or self.replica is not None:
            return self._replay(cells, locs)
        names = list(self.scenarios or ([self.scenario] if self.scenario is not None else []))
        where: dict[str, Loc] = {s: ("scenarios", i) for i, s in enumerate(self.scenarios)}
        where.update({self.scenario: ("scenario",)} if self.scenario is not None else {})
        for cell, loc in zip(cells, locs):
            if cell.scenario and cell.scenario not in names:
                names.append(cell.scenario)
                where[cell.scenario] = (*loc, "scenario")
        if not names:
            raise FieldError(("scenarios",), "'scenarios' must name at least one scenario")
        if any(c.scenario for c in cells) and not all(c.scenario for c in cells):
            raise FieldError((), "either every cell names its scenario or none does")
        known = scenarios.available()
        for s in names:
            if s not in known:
                raise FieldError(where[s], f"unknown scenario '{s}'; scenarios: {', '.join(known)}")
        if "apply-capacity" in self.measure:
            for s in names:
                if not _scenario(s, where[s]).writes:
                    raise FieldError(("measure",), f"apply-capacity needs write scenarios; '{s}' only reads")
        return names

    def _workloads(self, cells: tuple[Cell, ...], locs: list[Loc]) -> list[str]:
        """A live study's workloads (each a workload file): its windows are theirs alone, so no other measure, no
        scenario, and no cell key that sets the suite's own load."""
        if self.measure != ["live"]:
            raise FieldError(("measure",), "workloads are written by live units, whose window is the workload's "
                                           "alone: measure = [\"live\"], and no other measure")
        if self.scenarios or self.scenario is not None:
            raise FieldError(("scenarios",), "a live study names its workloads (workloads = [...]), not scenarios")
        if not self.workloads:
            raise FieldError(("workloads",), f"a live study must name at least one workload file; workloads: "
                                             f"{', '.join(workload.available())}")
        for cell, loc in zip(cells, locs):
            own = next((k for k in OWN_KEYS if k not in ("load", "link") and getattr(cell, k)), None)
            if own is not None:
                raise FieldError((*loc, own), "sets the suite's own load, and a live unit's load is its workload's")
        for i, name in enumerate(self.workloads):
            try:
                workload.load(name)
            except workload.WorkloadError as exc:
                raise FieldError(("workloads", i), str(exc)) from None
        return list(self.workloads)

    def _replay(self, cells: tuple[Cell, ...], locs: list[Loc]) -> list[str]:
        """A replay study's files (each existing; whether the replica stands at their first GTID is checked when
        the study starts, experiments/replay.check): no other measure, no scenario, and cells that set only what a
        replay applies."""
        if self.measure != ["replay"]:
            raise FieldError(("measure",), "binlogs are replayed by replay units, each on the same replica put back "
                                           "between them: measure = [\"replay\"], and no other measure")
        if self.scenarios or self.scenario is not None or self.workloads:
            raise FieldError(("scenarios",), "a replay study names its binlog files (binlogs = [...]), not "
                                             "scenarios or workloads")
        if not self.binlogs:
            raise FieldError(("binlogs",), "a replay study must name the binlog files it replays, in order")
        for i, name in enumerate(self.binlogs):
            if not Path(name).is_file():
                raise FieldError(("binlogs", i), f"no such file: {name} (a path from the repository's folder, or "
                                                 "absolute)")
        for cell, loc in zip(cells, locs):
            own = next((k for k in CELL_KEYS if getattr(cell, "links" if k == "link" else k)), None)
            knob = next((k for k in cell.knobs.changed() if k not in REPLAY_KNOBS), None)
            if own is not None or knob is not None:
                sets = f"{', '.join(REPLAY_KNOBS[:-1])} and {REPLAY_KNOBS[-1]}"
                raise FieldError((*loc, own or knob or ""), "a replay applies what the files hold: a cell sets only "
                                                            f"the replica's {sets}")
        return [REPLAY_NAME]

    def _rates(self, names: list[str]) -> dict[str, int]:
        if names == [REPLAY_NAME] and self.binlogs:
            if self.rate is not None or self.rates is not None:
                raise FieldError(("rate",), "a replay applies the files as fast as the replica can: no rate")
            return {REPLAY_NAME: 0}
        if self.rates is not None and self.rate is not None:
            raise FieldError(("rates",), "give 'rate' (one for every scenario) or a [rates] table, not both")
        if self.rates is not None:
            missing = [s for s in names if s not in self.rates]
            if missing:
                raise FieldError(("rates",), f"no rate for {', '.join(missing)}")
            extra = next((s for s in self.rates if s not in names), None)
            if extra is not None:
                raise FieldError(("rates", extra), f"not a scenario of this study; its scenarios: {', '.join(names)}")
            return {s: self.rates[s] for s in names}
        if self.rate is None:
            raise FieldError((), "give 'rate' (one for every scenario or workload) or a [rates] table")
        return {s: self.rate for s in names}

    def _check_metrics(self, cells: tuple[Cell, ...]) -> None:
        """The primary metrics exist and the study measures them; baseline_per names a factor that groups cells."""
        for i, key in enumerate(self.primary):
            if key not in BY_KEY:
                raise FieldError(("primary", i), f"unknown primary metric {key!r}; metrics: {', '.join(BY_KEY)}")
        measured = {BY_KEY[k].source for k in self.primary}
        if self.primary and not measured <= {SOURCE_OF_MEASURE[m] for m in self.measure}:
            raise FieldError(("primary",), f"primary metrics {', '.join(self.primary)} need a measure the study "
                                           "does not make")
        for i, key in enumerate(self.baseline_per):
            if key not in KNOBS and key not in CELL_KEYS:
                raise FieldError(("baseline_per", i), f"names '{key}', not a knob or a cell key; knobs: "
                                                      f"{', '.join(KNOBS)}")
        if self.baseline_per and len(set(baselines(cell_records(cells), self.baseline_per).values())) == len(cells):
            raise FieldError(("baseline_per",), f"{', '.join(self.baseline_per)} leaves every cell its own "
                                                "baseline: nothing to compare")


    def _check_plot(self, cells: tuple[Cell, ...]) -> None:
        """[plot] names knobs or cell keys, and they place each cell at a point of its own."""
        if self.plot is None:
            return
        for axis in ("x", "lines"):
            key = getattr(self.plot, axis)
            if key is not None and key not in KNOBS and key not in CELL_KEYS:
                raise FieldError(("plot", axis), f"names '{key}', not a knob or a cell key; knobs: {', '.join(KNOBS)}")
        seen: dict[tuple[str, str], str] = {}
        lines = self.plot.lines
        for cell in cells:
            point = (cell_value(cell, self.plot.x), "" if lines is None else cell_value(cell, lines))
            if point in seen:
                raise FieldError(("plot",), f"cells '{seen[point]}' and '{cell.name}' have the same {self.plot.x}"
                                            f"{'' if lines is None else ' and ' + lines}: one point for two cells")
            seen[point] = cell.name


class PlotTable(FileModel):
    x: str
    lines: str | None = None


def _cell(given: dict[str, FileValue], loc: Loc) -> Cell:
    """One cell from its keys as the file gives them (checked one by one already): its knobs must go together."""
    combo = {k: _names(v) if k in NAME_LISTS else v for k, v in given.items()}  # checked already
    label = cell_label(combo)
    combo.pop("name", None)
    own, link, load = _taken(combo, "scenario", str), _taken(combo, "link", str), combo.pop("load", None)
    specs = tuple(x.spec for x in links.parse_all(["none" if link is None else link]))
    rows, writes, clients = (_taken(combo, key, int) for key in ("rows", "writes", "clients"))
    settings = tuple((key, _word_or_number(combo.pop(key))) for key in CELL_SETTINGS if key in combo)
    try:
        knobs = Knobs.from_values(combo)
    except ValueError as exc:
        raise FieldError(loc, f"cell '{label}' is not a valid combination: {exc}") from None
    # a load the file writes whole (load = 2) is a number all the same: its type took an int as a float
    return Cell(label, knobs, own, specs, load=float(load) if isinstance(load, (int, float)) else None, rows=rows,
                writes=writes, clients=clients, settings=settings)


def _taken(combo: dict[str, FileValue], key: str, kind: type[T]) -> T | None:
    """A cell key's value taken out of the cell's keys (None where the cell leaves it), of the type that checked it
    (strictly: a whole number is no text, nor text a number), which the type checker cannot know of a table's key."""
    value = combo.pop(key, None)
    if value is None or isinstance(value, kind):
        return value
    raise TypeError(f"{key} = {value!r}: not the {kind.__name__} its type checked")  # no file's value gets here


def _scenario(name: str, loc: Loc) -> scenarios.Scenario:
    try:
        return scenarios.load(name)
    except scenarios.ScenarioError as exc:
        raise FieldError(loc, str(exc)) from None


def _check_rows(cells: tuple[Cell, ...], locs: list[Loc], names: list[str], measures: tuple[str, ...]) -> None:
    """In a run or apply-capacity, a cell's 'rows' is each update_users request's rows: its scenario needs them,
    and a request changes at most MAX_BULK_ROWS."""
    if not set(measures) - {"big-transaction"}:
        return
    for cell, loc in zip(cells, locs):
        if cell.rows is None:
            continue
        if cell.rows > MAX_BULK_ROWS:
            raise FieldError((*loc, "rows"), f"the rows of an update_users request are at most {MAX_BULK_ROWS:,}, "
                                             f"got {cell.rows:,}")
        for s in [cell.scenario] if cell.scenario else names:
            if not any(r.endpoint == "update_users" for r in _scenario(s, (*loc, "rows")).requests):
                raise FieldError((*loc, "rows"), f"sets the rows of each update_users request, and scenario '{s}' "
                                                 "has none (write-bulk and write-mix have)")
