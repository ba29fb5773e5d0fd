"""Study files: the declarative TOML files in studies/ that compare replication settings side by side, loaded
and validated into a Spec before anything runs (an unknown knob, an empty grid, an invalid combination or an
unknown scenario is refused, naming the file and the line).

    description = "ROW vs STATEMENT"
    question = "What does STATEMENT save against ROW?"   # one sentence: what the study asks
    primary = ["bytes_per_write", "replica_ms_per_write"]  # the only metrics findings come from
    scenarios = ["write", "write-bulk"]     # every cell runs each of them
    rate = 400                              # or [rates] write = 800, write-bulk = 20
    duration = "20s"
    measure = ["run"]                       # run and/or apply-capacity
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
    baseline_per = ["buffer_pool"]          # each cell against the first cell with its buffer_pool (default: the
                                            # first cell of all): a study of two factors asks one of them per level
"""

from __future__ import annotations

import itertools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..analysis.studymetrics import BY_KEY, SOURCE_OF_MEASURE, baselines
from ..core import named
from ..core import scenario as scenarios
from ..core.config import MAX_BULK_ROWS, SETTINGS, STUDY_DIR, parse_duration
from ..topology import links
from ..topology.knobs import KNOBS, Knobs

MEASURES = ("run", "apply-capacity", "big-transaction")
RESETS = ("never", "each-cell")
DEFAULT_REPEAT = 3
# settings a cell may set (the app's, and the topology's replica count), each checked by its parser in config.SETTINGS
APP_KEYS = ("admission", "codel_target_ms", "max_inflight", "max_queue_ms", "app_workers", "app_transport",
            "client_connections", "replicas")
SETTING_OF = {"replicas": "replicas_asked"}  # a cell key whose Settings field has another name
CELL_KEYS = ("scenario", "link", "load", "rows", "writes", *APP_KEYS)  # what a cell may set beside the knobs
TOP_KEYS = {"description", "question", "primary", "scenarios", "scenario", "rate", "rates", "duration", "measure",
            "repeat", "reset", "data_state", "vary", "cells", "writes", "baseline_per"}


class StudyError(Exception):
    """A study file is missing or invalid; the message names the file, the line and the problem."""


@dataclass(frozen=True)
class Cell:
    name: str
    knobs: Knobs
    scenario: str | None = None  # a cell may run its own scenario (e.g. with and without indexes)
    links: tuple[str, ...] = ()  # link specs (--link), e.g. ("replica1=5ms", "replica2=5ms")
    admission: str | None = None  # the app's admission: codel, always or none (None: the environment's)
    codel_target_ms: int | None = None  # codel's target queueing delay (None: the environment's)
    load: float | None = None  # the cell's rate as a multiple of the study's (e.g. 1.5: 1.5× the max)
    rows: int | None = None  # big-transaction: rows in its one transaction (default 100,000); run and
    # apply-capacity: rows each update_users request changes (the scenario's bulk_rows)
    writes: int | None = None  # apply-capacity: the writes this cell queues (None: the study's 'writes')
    max_inflight: int | None = None  # the app's in-flight bound per worker (None: the environment's)
    max_queue_ms: int | None = None  # the bound follows throughput × this queue time (None: the environment's)
    app_workers: int | None = None  # the app's gunicorn workers (None: the environment's)
    app_transport: str | None = None  # how the app reaches the nodes: tcp or unix (None: the environment's)
    replicas: int | None = None  # the native topology's replicas for the cell, 1 to 4 (None: as they are)
    client_connections: str | int | None = None  # vegeta's connections to the app (None: the environment's)

    def app(self) -> dict[str, int | str]:
        """The app settings the cell sets (Settings field names)."""
        return {k: v for k, v in (("admission", self.admission), ("codel_target_ms", self.codel_target_ms),
                                  ("max_inflight", self.max_inflight),
                                  ("max_queue_ms", self.max_queue_ms),
                                  ("app_workers", self.app_workers), ("app_transport", self.app_transport),
                                  ("client_connections", self.client_connections),
                                  ("replicas_asked", self.replicas))
                if v is not None}

    def changed(self) -> dict[str, str]:
        """What the cell sets beside the reference: its knobs, its links and its app settings."""
        return {**self.knobs.changed(), **({"link": ",".join(self.links)} if self.links else {}),
                **({"load": f"{self.load:g}×"} if self.load is not None else {}),
                **({"rows": f"{self.rows:,}"} if self.rows is not None else {}),
                **({"writes": f"{self.writes:,}"} if self.writes is not None else {}),
                **{k: str(v) for k, v in self.app().items() if k != "replicas_asked"},
                **({"replicas": str(self.replicas)} if self.replicas is not None else {})}


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
    source: str = field(repr=False, default="")


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
    try:
        return build(path.stem, data, source)
    except (ValueError, TypeError, KeyError) as exc:
        message = exc.args[0] if exc.args else str(exc)
        raise StudyError(f"{path}{_line_of(source, message)}: {message}") from None


def _line_of(source: str, message: str) -> str:
    """':N' for the first line of the file that holds a quoted word of the message (a key or a value)."""
    words = [w.strip("'\"") for w in message.split() if w.startswith(("'", '"'))]
    for word in words:
        for number, line in enumerate(source.splitlines(), 1):
            if word and word in line and not line.lstrip().startswith("#"):
                return f":{number}"
    return ""


def build(name: str, data: dict[str, Any], source: str = "") -> Spec:
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise ValueError(f"unknown key {', '.join(repr(u) for u in unknown)}; keys: {', '.join(sorted(TOP_KEYS))}")
    cells = _cells(data)
    names = list(data.get("scenarios") or ([data["scenario"]] if "scenario" in data else []))
    for cell in cells:
        if cell.scenario and cell.scenario not in names:
            names.append(cell.scenario)
    if not names:
        raise ValueError("'scenarios' must name at least one scenario")
    if any(c.scenario for c in cells) and not all(c.scenario for c in cells):
        raise ValueError("either every cell names its scenario or none does")
    known = scenarios.available()
    for s in names:
        if s not in known:
            raise ValueError(f"unknown scenario '{s}'; scenarios: {', '.join(known)}")
    measures = tuple(data.get("measure", ["run"]))
    for m in measures:
        if m not in MEASURES:
            raise ValueError(f"unknown measure '{m}'; use {', '.join(MEASURES)}")
    if "apply-capacity" in measures:
        for s in names:
            if not scenarios.load(s).writes:
                raise ValueError(f"apply-capacity needs write scenarios; '{s}' only reads")
    _check_rows(cells, names, measures)
    rates = _rates(data, names)
    repeat = int(data.get("repeat", DEFAULT_REPEAT))
    if repeat < 1:
        raise ValueError("'repeat' must be 1 or more")
    reset = data.get("reset", "never")
    if reset not in RESETS:
        raise ValueError(f"'reset' must be one of {', '.join(RESETS)}")
    primary = tuple(str(k) for k in data.get("primary", ()))
    unknown_metrics = [k for k in primary if k not in BY_KEY]
    if unknown_metrics:
        raise ValueError(f"unknown primary metric {', '.join(map(repr, unknown_metrics))}; metrics: "
                         f"{', '.join(BY_KEY)}")
    measured = {BY_KEY[k].source for k in primary}
    if primary and not measured <= {SOURCE_OF_MEASURE[m] for m in measures}:
        raise ValueError(f"primary metrics {', '.join(primary)} need a measure the study does not make")
    baseline_per = tuple(str(k) for k in data.get("baseline_per", ()))
    for key in baseline_per:
        if key not in KNOBS and key not in CELL_KEYS:
            raise ValueError(f"'baseline_per' names '{key}', not a knob or a cell key; knobs: {', '.join(KNOBS)}")
    if baseline_per and len(set(baselines(cell_records(cells), list(baseline_per)).values())) == len(cells):
        raise ValueError(f"'baseline_per' {', '.join(baseline_per)} leaves every cell its own baseline: "
                         "nothing to compare")
    return Spec(name=name, description=str(data.get("description", "")), scenarios=tuple(names), rates=rates,
                duration=parse_duration(data.get("duration", "20s")), measures=measures, repeat=repeat,
                reset=reset, data_state=str(data.get("data_state", "")), cells=cells,
                writes=int(data["writes"]) if "writes" in data else None, source=source,
                question=str(data.get("question", "")), primary=primary, baseline_per=baseline_per)


def cell_records(cells: tuple[Cell, ...]) -> list[dict[str, Any]]:
    """The cells as study.json records them: name, every knob, own scenario, what they change."""
    return [{"name": c.name, "knobs": c.knobs.as_dict(), "scenario": c.scenario, "changed": c.changed()}
            for c in cells]


def _check_rows(cells: tuple[Cell, ...], names: list[str], measures: tuple[str, ...]) -> None:
    """In a run or apply-capacity, a cell's 'rows' is each update_users request's rows: its scenario needs them,
    and a request changes at most MAX_BULK_ROWS."""
    if not set(measures) - {"big-transaction"}:
        return
    for cell in cells:
        if cell.rows is None:
            continue
        if cell.rows > MAX_BULK_ROWS:
            raise ValueError(f"cell '{cell.name}': 'rows' of an update_users request is at most "
                             f"{MAX_BULK_ROWS:,}, got {cell.rows:,}")
        for s in [cell.scenario] if cell.scenario else names:
            if not any(r.endpoint == "update_users" for r in scenarios.load(s).requests):
                raise ValueError(f"cell '{cell.name}': 'rows' sets the rows of each update_users request, and "
                                 f"scenario '{s}' has none (write-bulk and write-mix have)")


def _rates(data: dict[str, Any], names: list[str]) -> dict[str, int]:
    if "rates" in data:
        table = data["rates"]
        missing = [s for s in names if s not in table]
        if missing:
            raise ValueError(f"'rates' has no rate for {', '.join(missing)}")
        rates = {s: int(table[s]) for s in names}
    elif "rate" in data:
        rates = {s: int(data["rate"]) for s in names}
    else:
        raise ValueError("give 'rate' (one for every scenario) or a [rates] table")
    for s, r in rates.items():
        if not 1 <= r <= 100_000:
            raise ValueError(f"rate of '{s}' must be from 1 to 100000")
    return rates


def _cells(data: dict[str, Any]) -> tuple[Cell, ...]:
    if "vary" in data and "cells" in data:
        raise ValueError("give either [vary] or [[cells]], not both")
    if "vary" in data:
        grid = data["vary"]
        for key, values in grid.items():
            if key not in KNOBS and key not in CELL_KEYS:
                raise ValueError(f"unknown knob '{key}' in [vary]; knobs: {', '.join(KNOBS)}")
            if not isinstance(values, list) or not values:
                raise ValueError(f"'{key}' in [vary] must be a non-empty list")
        if not grid:
            raise ValueError("[vary] is empty: nothing to compare")
        combos = [dict(zip(grid, values)) for values in itertools.product(*grid.values())]
    elif "cells" in data:
        combos = [dict(c) for c in data["cells"]]
        if not combos:
            raise ValueError("[[cells]] is empty: nothing to compare")
    else:
        raise ValueError("a study needs [vary] or [[cells]]")
    cells = []
    for combo in combos:
        label = str(combo.pop("name", "")) or " ".join(f"{k}={v}" for k, v in combo.items())
        own = combo.pop("scenario", None)
        link = str(combo.pop("link", "none"))
        load = combo.pop("load", None)
        rows = combo.pop("rows", None)
        if rows is not None and (isinstance(rows, bool) or not isinstance(rows, int) or rows < 1):
            raise ValueError(f"cell '{label}': 'rows' must be a whole number of rows, 1 or more, got {rows!r}")
        writes = combo.pop("writes", None)
        if writes is not None and (isinstance(writes, bool) or not isinstance(writes, int) or writes < 1):
            raise ValueError(f"cell '{label}': 'writes' must be a whole number of writes, 1 or more, got {writes!r}")
        if load is not None and (isinstance(load, bool) or not isinstance(load, (int, float)) or not 0 < load <= 10):
            raise ValueError(f"cell '{label}': 'load' must be a multiple of the study's rate, over 0 and up to 10, "
                             f"got {load!r}")
        app = {key: combo.pop(key) for key in APP_KEYS if key in combo}
        for key, value in app.items():
            if isinstance(value, (bool, float)):
                raise ValueError(f"cell '{label}': '{key}' must be a whole number or a word, got {value!r}")
            try:
                SETTINGS[SETTING_OF.get(key, key)].parse(str(value))
            except ValueError as exc:
                raise ValueError(f"cell '{label}': '{key}': {exc}") from None
        try:
            parsed = links.parse_all([link])
        except ValueError as exc:
            raise ValueError(f"cell '{label}': {exc}") from None
        for key in combo:
            if key not in KNOBS:
                raise ValueError(f"unknown knob '{key}' in cell '{label}'; knobs: {', '.join(KNOBS)}")
        try:
            cells.append(Cell(label, Knobs.from_values(combo), None if own is None else str(own),
                              tuple(x.spec for x in parsed), load=None if load is None else float(load), rows=rows,
                              writes=writes, **app))
        except ValueError as exc:
            raise ValueError(f"cell '{label}' is not a valid combination: {exc}") from None
    if len({c.name for c in cells}) != len(cells):
        raise ValueError("two cells have the same name")
    return tuple(cells)
