"""A workload as its binlog shows it (docs/profile.md): per table and statement kind, transactions per second (mean,
p99 of one-second rates, busiest minute), rows per transaction, row-event bytes per row, which columns updates
change, whether the table has a primary key where the binlog can tell, the largest transactions, and what each
replication setting would have written — exact for the images as written, estimated from the decoded row values'
sizes for the other row images, and from the annotated statements for STATEMENT and MIXED.

The harness's heartbeat (GTID domain HEARTBEAT_DOMAIN_ID, or a table of META_SCHEMA) is profiled on lines of its
own and never counted in the workload's figures.

Counts, rows, bytes and times come from every event; the row images (the `###` lines, the costly part to read:
docs/profile.md, "Speed") from a sample of the rows events (Sampling), each sampled row weighted by the rows it
stands for.
"""

from __future__ import annotations

import heapq
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ..core import results
from ..core.config import (
    FOREIGN_CPU_RATIOS,
    HEARTBEAT_DOMAIN_ID,
    META_SCHEMA,
    MODEL_REPLICA_CORES,
    ROOT,
    ReplbenchError,
)
from ..core.results import CostModel
from ..measure.binlogfile import (
    BinlogFile,
    Event,
    TableMeta,
    ValueType,
    clock,
    decoder,
    events,
    local_second,
    local_zone,
    row_images,
    split_value,
    stream,
    value_size,
)
from . import costmodel, shapes
from .costmodel import Band, Plan
from .ownfit import OwnFit, own_cpu

SCHEMA_VERSION = results.KINDS["profile.json"].version  # its format history: core/results, with every kind's
SETTINGS = ("ROW-FULL", "ROW-MINIMAL", "ROW-NOBLOB", "STATEMENT", "MIXED")  # costmodel.SETTINGS' names
LARGEST = 5
# a Query event is an Annotate_rows event's bytes (header, statement, checksum) plus its post-header (13 bytes), the
# status variables MariaDB writes for a DML (flags2, sql_mode, catalog, charset: about 26 bytes) and the schema's
# name: an estimate, as statements that need a user variable or RAND() also log events of their own
QUERY_EVENT_EXTRA = 13 + 26
# what MIXED logs as rows, not as the statement (docs/profile.md, "STATEMENT and MIXED"): a heuristic on the text
UNSAFE = re.compile(r"\b(UUID|UUID_SHORT|SYSDATE|USER|CURRENT_USER|SESSION_USER|SYSTEM_USER|FOUND_ROWS|ROW_COUNT|"
                    r"LOAD_FILE|SLEEP|VERSION|CONNECTION_ID|GET_LOCK|RELEASE_LOCK|IS_FREE_LOCK|IS_USED_LOCK|"
                    r"MASTER_POS_WAIT)\s*\(|\bLIMIT\b|@@", re.IGNORECASE)
UNSAFE_WORDS = ("UUID", "SYSDATE", "USER", "FOUND_ROWS", "ROW_COUNT", "LOAD_FILE", "SLEEP", "VERSION",
                "CONNECTION_ID", "LOCK", "MASTER_POS_WAIT", "LIMIT", "@@")  # a cheap test before UNSAFE's search
HEARTBEAT_TABLE = "heartbeat"  # in META_SCHEMA (topology/dataset creates it)
KINDS = {"write": "insert", "update": "update", "delete": "delete"}


@dataclass(frozen=True)
class Sampling:
    """Which rows events' images are read: the first `first` of each line, then one in `every`; of each, its first
    `rows` rows (a row stands for the event's rows / the rows read)."""

    first: int = 100
    every: int = 20
    rows: int = 10

    def describe(self) -> str:
        if self.every <= 1 and self.rows >= 1 << 30:
            return "every row image read"
        return (f"row images of the first {self.first:,} rows events of each line, then of one in {self.every}, "
                f"up to {self.rows} rows of each (weighted by the event's rows); counts, rows, bytes and times from "
                "every event")


EVERY_ROW = Sampling(first=1 << 62, every=1, rows=1 << 30)


@dataclass(frozen=True)
class Window:
    """--since / --until: the transactions whose GTID event's second is in [since, until), in seconds of the
    decoder's clock (Event.time: the local time of the machine that decodes, read as UTC); None: open."""

    since: int | None = None
    until: int | None = None

    def holds(self, second: int) -> bool:
        return (self.since is None or second >= self.since) and (self.until is None or second < self.until)

    def describe(self) -> str:
        return (f"from {_clock(self.since) if self.since is not None else 'the first event'} to "
                f"{_clock(self.until) if self.until is not None else 'the last event'}")


@dataclass
class _Windowed:
    """A window's filter over the events as they stream by, and the first and last second of every event, kept or
    not (seen): what the files cover."""

    window: Window
    seen: tuple[int, int] | None = None

    def kept(self, events: Iterable[Event]) -> Iterator[Event]:
        """The events of the transactions whose GTID event is in the window, and the events outside transactions
        that are."""
        window = self.window
        keep = in_tx = False
        first = e = None
        for e in events:
            if first is None:
                first = e.time
            kind = e.kind
            if kind == "gtid":
                keep, in_tx = window.holds(e.time), True
            elif not in_tx:
                keep = window.holds(e.time)
            if keep:
                yield e
            if kind == "xid" or (kind == "query" and e.text[:8].upper().startswith(("COMMIT", "ROLLBACK"))):
                in_tx = False
        if first is not None and e is not None:
            seen = self.seen or (first, e.time)
            self.seen = (min(seen[0], first), max(seen[1], e.time))


class ProfileError(ValueError):
    """A profile file that cannot be read: the message names the file and what is wrong."""


class EmptyWindow(ReplbenchError):
    """No event of the files falls in the window: one line saying so, and when the files were opened."""


class NoWorkload(ProfileError):
    """A profile with no workload transactions to price (only the heartbeat, or nothing)."""


# --- the profile file --------------------------------------------------------------------------------------------

class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Distribution(_Model):
    p50: int
    p90: int
    p99: int
    max: int
    histogram: dict[int, int]  # rows per transaction -> transactions


class Rates(_Model):
    mean_per_s: float  # over the files' span
    active_mean_per_s: float  # over this line's own first to last second
    p99_per_s: float  # of the one-second rates over the files' span (seconds without any included)
    max_per_s: int
    busiest_minute_per_s: float
    busiest_minute_start: str


class Column(_Model):
    column: str  # its name where the binlog logs names (binlog_row_metadata=FULL), else @N
    type: str
    share: float  # of the sampled update rows (weighted), those whose after image differs here from the before image
    rows: int  # the line's rows that change it: share × rows


class Estimate(_Model):
    bytes: int | None
    basis: str  # exact (as written), estimated, unknown
    note: str = ""


class Line(_Model):
    schema_name: str
    table: str
    kind: str  # insert, update, delete
    heartbeat: bool
    transactions: int
    rows: int
    rows_per_transaction: Distribution
    rates: Rates
    row_event_bytes: int  # the rows events alone
    bytes: int  # with the transactions' other events (GTID, annotation, table map, commit)
    row_event_bytes_per_row: float
    primary_key: str  # "yes (id)", "no", or "unknown" where the binlog does not say
    row_image: str  # as written: FULL, MINIMAL, NOBLOB, "FULL and MINIMAL" / "FULL and NOBLOB", or "not read"
    rows_events: int
    sampled_events: int
    sampled_rows: int  # rows whose images were read
    statements: int
    annotated: int
    columns: list[Column]
    settings: dict[str, Estimate]
    # the whole transaction's rows (every line's) -> this line's rows in transactions of that size: its share of
    # each, so a transaction on several lines is priced once (workload_mixes); None: a profile from before it
    rows_by_transaction_size: dict[int, int] | None = None


class Group(_Model):
    transactions: int
    rows: int
    bytes: int
    mean_per_s: float
    settings: dict[str, Estimate]


class Transaction(_Model):
    gtid: str
    time: str
    rows: int
    bytes: int
    tables: list[str]
    file: str


class FileEntry(_Model):
    path: str  # inside the repository: relative to it; else the file's name (no path of the machine that read it)
    bytes: int
    server_version: str


class Source(_Model):
    """Where the events came from and which of them count."""

    read_from: str  # "files", or "server": copied from a master (`profile --topology FILE`, or the native one)
    server: str = ""  # the master: host:port and its topology file's name, or the native topology's
    since: str | None = None  # the window (None: open), in time_zone; a transaction counts by its GTID's second
    until: str | None = None  # (exclusive)
    time_zone: str = ""  # the decoder's: the local time of the machine that read the files


class Profile(_Model):
    FILE: ClassVar[str] = "profile.json"  # its kind in core/results.KINDS: write_record writes its version
    schema_version: int
    files: list[FileEntry]
    source: Source | None = None  # (profiles written before it record none)
    decoder: str
    first_event: str  # the server's clock, as the decoder prints it (the local time of its machine)
    last_event: str  # with a window: the window, as far as the files cover it
    span_s: int
    table_metadata: str
    sampling: str
    workload: Group
    heartbeat: Group | None
    lines: list[Line]
    largest: list[Transaction]
    other: dict[str, int]  # transactions without rows events, bytes outside transactions, statements logged as such
    notes: list[str]


def read(path: Path) -> Profile:
    """A profile file, migrated from an older version (core/results.migrate); ProfileError (one line) when it is
    missing or not a profile of a version this replbench reads."""
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise ProfileError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProfileError(f"{path}: not a profile file ({exc})") from None
    try:
        doc = results.migrate(doc, "profile.json") if isinstance(doc, dict) else None
    except ValueError as exc:
        raise ProfileError(f"{path}: not a profile this replbench reads ({exc}; made by ./run.sh profile)") from None
    if doc is None:
        raise ProfileError(f"{path}: not a profile file (not a JSON object)")
    try:
        return Profile.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ProfileError(f"{path}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


# --- what is accumulated while the events stream by -----------------------------------------------------------

LineKey = tuple[str, str, str, bool]  # schema, table, kind, heartbeat


@dataclass
class _Images:
    """What the sampled row images show, each row weighted by the rows it stands for: the bytes as written and,
    where the images are FULL, what MINIMAL and NOBLOB would have written of the same rows; the columns updates
    changed."""

    events: int = 0
    read: int = 0  # rows read
    weight: float = 0.0  # rows they stand for
    full_rows: int = 0
    partial_rows: int = 0
    blob_missing: int = 0  # partial rows that lack only BLOB/TEXT columns (NOBLOB as written)
    written: float = 0.0
    minimal: float = 0.0
    noblob: float = 0.0
    # column number (b"3") -> weighted update rows it changed in
    changed: defaultdict[bytes, float] = field(default_factory=lambda: defaultdict(float))
    updates: float = 0.0  # weighted update rows
    types: dict[bytes, ValueType] = field(default_factory=dict)


@dataclass
class _Line:
    trx: int = 0
    rows: int = 0
    hist: Counter = field(default_factory=Counter)
    whole: Counter = field(default_factory=Counter)  # the whole transaction's rows -> this line's rows in them
    seconds: Counter = field(default_factory=Counter)
    rows_events: int = 0
    row_event_bytes: int = 0
    bytes: int = 0
    statements: Counter = field(default_factory=Counter)  # statements, annotated, replaced/estimated bytes
    images: _Images = field(default_factory=_Images)
    meta: TableMeta | None = None


@dataclass
class _Statement:
    """An annotated statement and the events that carry its rows (annotation, table maps, rows events)."""

    text: str | None = None
    annotation: int = 0  # the Annotate_rows event's bytes
    bytes: int = 0
    line: LineKey | None = None
    schema: str = ""


@dataclass
class _Tx:
    gtid: str
    time: int
    file: str
    domain: int | None
    bytes: int = 0
    rows: Counter = field(default_factory=Counter)  # line key -> rows
    grouped: int = 0  # bytes of its statements (the rest is GTID, commit …)
    first: LineKey | None = None


def _bitmap(columns: int) -> int:
    return (columns + 7) // 8


def _key_columns(meta: TableMeta | None) -> tuple[bytes, ...] | None:
    """The primary key's column numbers where the binlog names them; () for a table without one; None: not said."""
    if meta is None or meta.names is None or meta.primary_key is None:
        return None
    return tuple(str(meta.names.index(c) + 1).encode() for c in meta.primary_key if c in meta.names)


class Profiler:
    """Turns the events of one or more files into a Profile. Feed every file's events in order, then build()."""

    def __init__(self, sampling: Sampling | None = None, window: Window | None = None) -> None:
        self.sampling = sampling or Sampling()
        self.window = _Windowed(window) if window is not None and (window.since, window.until) != (None, None) \
            else None
        self.lines: dict[LineKey, _Line] = {}
        self.tx: _Tx | None = None
        self.stmt: _Statement | None = None
        self.largest: list[tuple[int, int, _Tx]] = []
        self.other: Counter = Counter()
        self.first: int | None = None  # the first and the last event's second
        self.last: int | None = None
        self.files: list[BinlogFile] = []
        self.metadata: Counter = Counter()  # Table_map events with column names logged, and without
        self.transactions: Counter = Counter()  # heartbeat or not -> transactions with rows

    def covers(self, second: int) -> None:
        """The files cover the server's binlog up to this second (a copy taken then), written to or not."""
        if self.window is not None and self.window.seen is not None:
            self.window.seen = (self.window.seen[0], max(self.window.seen[1], second))

    def feed(self, file: BinlogFile, events: Iterable[Event]) -> None:
        self.files.append(file)
        if self.window is not None:
            events = self.window.kept(events)
        e = None
        for e in events:
            if self.first is None:
                self.first = e.time
            kind = e.kind
            if kind == "gtid":
                self._begin(e)
            elif kind in KINDS:
                self._rows(e)
            elif kind == "annotate" or kind == "table_map":
                self._statement_part(e)
            elif kind == "xid":
                self._add(e.size)
                self._commit()
            elif kind == "query":
                self._query(e)
            else:
                self._add(e.size)
        self._commit()
        if e is not None:
            self.last = max(self.last or e.time, e.time)

    def _begin(self, e: Event) -> None:
        self._commit()
        domain = e.text.split("-", 1)[0]
        self.tx = _Tx(e.text, e.time, e.file, int(domain) if domain.isdigit() and "-" in e.text else None, e.size)

    def _add(self, size: int) -> None:
        if self.tx is None:
            self.other["bytes_outside_transactions"] += size
        else:
            self.tx.bytes += size

    def _statement_part(self, e: Event) -> None:
        if e.kind == "annotate" or self.stmt is None or self.stmt.line is not None:
            self._close_statement()
            self.stmt = _Statement(e.text, e.size) if e.kind == "annotate" else _Statement()
        if e.kind == "table_map":
            self.metadata["named" if e.meta is not None and e.meta.names else "unnamed"] += 1
            if not self.stmt.schema and e.table:
                self.stmt.schema = e.table[0]
        self.stmt.bytes += e.size
        self._add(e.size)

    def _line(self, e: Event) -> tuple[LineKey, _Line]:
        schema, table = e.table or ("?", f"table id {e.table_id}")
        tx = self.tx
        heartbeat = (schema, table) == (META_SCHEMA, HEARTBEAT_TABLE) or (tx is not None
                                                                         and tx.domain == HEARTBEAT_DOMAIN_ID)
        key = (schema, table, KINDS[e.kind], heartbeat)
        line = self.lines.get(key)
        if line is None:
            line = self.lines[key] = _Line(meta=e.meta)
        return key, line

    def _rows(self, e: Event) -> None:
        if self.tx is None:  # rows outside a transaction (no GTID): one of their own
            self.tx = _Tx("-", e.time, e.file, None)
        key, line = self._line(e)
        if self.stmt is None:
            self.stmt = _Statement()
        if self.stmt.line is None:
            self.stmt.line = key
        self.stmt.bytes += e.size
        self._add(e.size)
        self.tx.rows[key] += e.rows
        self.tx.first = self.tx.first or key
        line.rows_events += 1
        line.row_event_bytes += e.size
        sampling = self.sampling
        if line.rows_events <= sampling.first or line.rows_events % sampling.every == 0:
            _sample(line, e, sampling.rows)
        if e.what.endswith(b"STMT_END_F"):
            self._close_statement()

    def _query(self, e: Event) -> None:
        word = e.text.split(None, 1)[0].upper() if e.text.strip() else ""
        if word in ("BEGIN", "START") and self.tx is None:
            self.tx = _Tx("-", e.time, e.file, None)
        if word in ("INSERT", "UPDATE", "DELETE", "REPLACE"):
            self.other["statements_logged_as_statements"] += 1
        self._add(e.size)
        if word in ("COMMIT", "ROLLBACK"):
            self._commit()

    def _close_statement(self) -> None:
        s, self.stmt = self.stmt, None
        if s is None or s.line is None or self.tx is None:
            return
        line = self.lines[s.line]
        self.tx.grouped += s.bytes
        line.bytes += s.bytes
        counts = line.statements
        counts["statements"] += 1
        counts["replaced"] += s.bytes
        if s.text is not None:
            counts["annotated"] += 1
            estimate = _statement_bytes(s)
            counts["statement"] += estimate
            upper = s.text.upper()
            if any(w in upper for w in UNSAFE_WORDS) and UNSAFE.search(s.text):
                counts["mixed"] += s.bytes  # MIXED logs this one as rows
            else:
                counts["mixed"] += estimate

    def _commit(self) -> None:
        self._close_statement()
        tx, self.tx = self.tx, None
        if tx is None:
            return
        if not tx.rows:
            self.other["transactions_without_rows"] += 1
            self.other["bytes_of_transactions_without_rows"] += tx.bytes
            return
        size = sum(tx.rows.values())
        for key, rows in tx.rows.items():
            line = self.lines[key]
            line.trx += 1
            line.rows += rows
            line.hist[rows] += 1
            line.whole[size] += rows
            line.seconds[tx.time] += 1
        assert tx.first is not None
        self.lines[tx.first].bytes += tx.bytes - tx.grouped  # GTID and commit: the transaction's first line's
        self.transactions[tx.first[3]] += 1
        seq = sum(self.transactions.values())  # the largest ones' tie-break (the earlier stays)
        if not tx.first[3] and (len(self.largest) < LARGEST or tx.bytes > self.largest[0][0]):
            (heapq.heappush if len(self.largest) < LARGEST else heapq.heappushpop)(self.largest,
                                                                                   (tx.bytes, -seq, tx))

    def build(self, decoder: str, source: Source | None = None) -> Profile:
        return _build(self, decoder, source)


def _statement_bytes(s: _Statement) -> int:
    """What STATEMENT would write for an annotated statement: its annotation as a Query event (QUERY_EVENT_EXTRA
    and the schema's name more)."""
    return s.annotation + QUERY_EVENT_EXTRA + len(s.schema) + 1


def _sample(line: _Line, e: Event, most: int) -> None:
    """Reads up to `most` rows of a rows event into the line's sample: the bytes as written, and as MINIMAL and
    NOBLOB would write them where the images are FULL; the columns an update changed."""
    images = line.images
    images.events += 1
    types = images.types
    width = len(line.meta.types) if line.meta else None
    key = _key_columns(line.meta)
    rows = row_images(e, most)
    weight = e.rows / len(rows) if rows else 0.0
    for before, after in rows:
        images.read += 1
        images.weight += weight
        sizes: dict[bytes, int] = {}
        for c, printed in (before or {}).items():
            sizes[c] = value_size(printed, types.get(c) or types.setdefault(c, split_value(printed)[1]))
        changed, after_sizes = [], {}
        for c, printed in (after or {}).items():
            if before is None or before.get(c) != printed:
                changed.append(c)
                after_sizes[c] = value_size(printed, types.get(c) or types.setdefault(c, split_value(printed)[1]))
            else:
                after_sizes[c] = sizes[c]
        if before is not None and after is not None:
            images.updates += weight
            for c in changed:
                images.changed[c] += weight
        seen = [i for i in (before, after) if i is not None]
        images.written += weight * (sum(_bitmap(len(i)) for i in seen) + sum(sizes.values())
                                    + sum(after_sizes.values()))
        full = width or max(len(i) for i in seen)
        if all(len(i) == full for i in seen):
            images.full_rows += 1
            minimal, noblob = _minimal_and_noblob(types, sizes if before is not None else None,
                                                  after_sizes if after is not None else None, changed,
                                                  key or (b"1",))
            images.minimal += weight * minimal
            images.noblob += weight * noblob
        else:
            images.partial_rows += 1
            if all(_missing_are_blobs(i, full, types, line.meta) for i in seen):
                images.blob_missing += 1


def _missing_are_blobs(image: dict[bytes, bytes], width: int, types: dict[bytes, ValueType],
                       meta: TableMeta | None) -> bool:
    """Whether every column a partial image leaves out is a BLOB or TEXT one (NOBLOB as written, not MINIMAL): by
    the Table_map's column type where it is there, else by the column's values seen in other images; a column
    never seen and not typed is not known to be one (a MINIMAL delete's image holds the key alone, its other
    columns in no image of the line: they read as BLOBs before this said so)."""
    for number in range(1, width + 1):
        c = str(number).encode()
        if c in image:
            continue
        if meta is not None and number <= len(meta.types):
            blob = any(word in meta.types[number - 1].upper() for word in ("BLOB", "TEXT"))
        else:
            blob = c in types and types[c].blob
        if not blob:
            return False
    return True


def _minimal_and_noblob(types: dict[bytes, ValueType], before: dict[bytes, int] | None,
                        after: dict[bytes, int] | None, changed: list[bytes],
                        key: tuple[bytes, ...]) -> tuple[int, int]:
    """A FULL row's bytes under MINIMAL (the key in the before image, the changed columns in the after image) and
    NOBLOB (the BLOB/TEXT columns left out, but for the key's and the changed ones), from its values' sizes."""
    minimal = noblob = 0
    if before is not None:  # update, delete
        kept = [c for c in key if c in before]
        minimal += _bitmap(len(kept)) + sum(before[c] for c in kept)
        kept = [c for c in before if not types[c].blob or c in key]
        noblob += _bitmap(len(kept)) + sum(before[c] for c in kept)
    if after is not None and before is not None:  # update
        minimal += _bitmap(len(changed)) + sum(after[c] for c in changed)
        kept = [c for c in after if not types[c].blob or c in changed]
        noblob += _bitmap(len(kept)) + sum(after[c] for c in kept)
    elif after is not None:  # insert: every column set (MINIMAL leaves out defaults the image cannot show)
        minimal += _bitmap(len(after)) + sum(after.values())
        noblob += _bitmap(len(after)) + sum(after.values())
    return minimal, noblob


# --- the profile from what was accumulated ----------------------------------------------------------------------

def _clock(second: int) -> str:
    return datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _nearest_rank(hist: Counter, q: float) -> int:
    total = sum(hist.values())
    rank = max(1, int(-(-q * total // 1)))
    seen = 0
    for value in sorted(hist):
        seen += hist[value]
        if seen >= rank:
            return int(value)
    return 0


def distribution(hist: Counter) -> Distribution:
    return Distribution(p50=_nearest_rank(hist, 0.5), p90=_nearest_rank(hist, 0.9), p99=_nearest_rank(hist, 0.99),
                        max=max(hist) if hist else 0, histogram={int(k): int(v) for k, v in sorted(hist.items())})


def rates(seconds: Counter, first: int, last: int) -> Rates:
    """Transactions per second over the span [first, last] (seconds without any count as 0)."""
    span = last - first + 1
    total = sum(seconds.values())
    per_second = Counter(seconds.values())
    per_second[0] += span - len(seconds)
    own = (max(seconds) - min(seconds) + 1) if seconds else 1
    window = min(60, span)
    best, best_start, in_window = 0, first, 0
    times = sorted(seconds)
    lo = 0
    for t in times:  # the 60-second window ending at each busy second: the busiest minute
        in_window += seconds[t]
        while times[lo] <= t - window:
            in_window -= seconds[times[lo]]
            lo += 1
        if in_window > best:
            best, best_start = in_window, max(first, t - window + 1)
    return Rates(mean_per_s=total / span, active_mean_per_s=total / own, p99_per_s=_nearest_rank(per_second, 0.99),
                 max_per_s=max(seconds.values()) if seconds else 0, busiest_minute_per_s=best / window,
                 busiest_minute_start=_clock(best_start))


def _primary_key(meta: TableMeta | None) -> str:
    if meta is None or meta.names is None or meta.primary_key is None:
        return "unknown"
    return f"yes ({', '.join(meta.primary_key)})" if meta.primary_key else "no"


def _row_image(images: _Images) -> str:
    """The row image as written: FULL, NOBLOB or MINIMAL; "FULL and MINIMAL" (or NOBLOB) where the sampled rows of
    one table and kind were written both ways (binlog_row_image changed within the files): no ROW setting's bytes
    are then known from them (line_settings)."""
    if not images.read:
        return "not read"
    if not images.partial_rows:
        return "FULL"
    partial = "NOBLOB" if images.blob_missing == images.partial_rows else "MINIMAL"
    return f"FULL and {partial}" if images.full_rows else partial


def line_settings(line: _Line, image: str) -> dict[str, Estimate]:
    """What each setting would have written for this line's transactions (their bytes attributed to it)."""
    img, counts = line.images, line.statements
    out: dict[str, Estimate] = {}
    for setting in ("ROW-FULL", "ROW-MINIMAL", "ROW-NOBLOB"):
        if setting == f"ROW-{image}":
            out[setting] = Estimate(bytes=line.bytes, basis="exact", note="as written")
        elif image == "FULL" and img.full_rows:
            saved = (img.written - (img.minimal if setting == "ROW-MINIMAL" else img.noblob)) / img.weight
            out[setting] = Estimate(bytes=round(line.bytes - saved * line.rows), basis="estimated",
                                    note=f"from {img.read:,} sampled rows' values")
        else:
            out[setting] = Estimate(bytes=None, basis="unknown", note=f"the images were written {image}"
                                    + (" (binlog_row_image changed within the files)" if " and " in image else ""))
    missing = counts["statements"] - counts["annotated"]
    for setting, part in (("STATEMENT", "statement"), ("MIXED", "mixed")):
        if counts["statements"] and not missing:
            out[setting] = Estimate(bytes=round(line.bytes - counts["replaced"] + counts[part]), basis="estimated",
                                    note="from the annotated statements")
        else:
            out[setting] = Estimate(bytes=None, basis="unknown",
                                    note=f"{missing:,} of {counts['statements']:,} statements not annotated "
                                         "(binlog_annotate_row_events=ON shows them)")
    return out


def _group(lines: list[Line], span: int, transactions: int) -> Group:
    """The lines' totals; transactions counted once each (one that writes two tables is on both lines)."""
    settings = {}
    for s in SETTINGS:
        parts = [ln.settings[s] for ln in lines]
        known = all(p.bytes is not None for p in parts) and parts
        basis = "exact" if known and all(p.basis == "exact" for p in parts) else "estimated" if known else "unknown"
        settings[s] = Estimate(bytes=sum(p.bytes or 0 for p in parts) if known else None, basis=basis,
                               note="" if known or not parts else "a line's figure is unknown")
    return Group(transactions=transactions, rows=sum(ln.rows for ln in lines), bytes=sum(ln.bytes for ln in lines),
                 mean_per_s=transactions / span, settings=settings)


def _columns(line: _Line) -> list[Column]:
    names = line.meta.names if line.meta else None
    img = line.images
    out = []
    for c, n in sorted(img.changed.items(), key=lambda kv: int(kv[0])):
        number, share = int(c), n / img.updates
        out.append(Column(column=names[number - 1] if names and number <= len(names) else f"@{number}",
                          type=img.types[c].name if c in img.types else "?", share=round(share, 6),
                          rows=round(share * line.rows)))
    return out


def _line(key: LineKey, acc: _Line, first: int, last: int) -> Line:
    image = _row_image(acc.images)
    return Line(schema_name=key[0], table=key[1], kind=key[2], heartbeat=key[3], transactions=acc.trx, rows=acc.rows,
                rows_per_transaction=distribution(acc.hist), rates=rates(acc.seconds, first, last),
                row_event_bytes=acc.row_event_bytes, bytes=acc.bytes,
                row_event_bytes_per_row=acc.row_event_bytes / acc.rows if acc.rows else 0.0,
                primary_key=_primary_key(acc.meta), row_image=image, rows_events=acc.rows_events,
                sampled_events=acc.images.events, sampled_rows=acc.images.read,
                statements=acc.statements["statements"], annotated=acc.statements["annotated"],
                columns=_columns(acc), settings=line_settings(acc, image),
                rows_by_transaction_size={int(k): int(v) for k, v in sorted(acc.whole.items())})


def _span(p: Profiler) -> tuple[int, int, list[str]]:
    """The first and last second the figures are over: the files' first and last event; with a window, the
    window as far as the files cover it (a rate over a window counts its quiet seconds too)."""
    if p.window is None:
        return p.first or 0, p.last or 0, []
    window = p.window.window
    created = [local_second(f.created) for f in p.files] or [0]
    seen = p.window.seen or (min(created), max(created))  # (none printed: the start events)
    if p.first is None:
        opened = (f"opened at {_clock(created[0])}" if len(created) == 1 else
                  f"opened from {_clock(min(created))} to {_clock(max(created))}")
        raise EmptyWindow(f"no event {window.describe()} (the local time of this machine) in the "
                          f"{'file' if len(created) == 1 else f'{len(created)} files'} ({opened})")
    since, until = window.since, window.until
    first = seen[0] if since is None else max(since, seen[0])
    last = seen[1] if until is None else min(until - 1, seen[1])
    notes = []
    if since is not None and seen[0] > since:
        notes.append(f"the files begin at {_clock(seen[0])}, after --since: the figures are over what they cover")
    if until is not None and seen[1] < until - 1:
        notes.append(f"the files end at {_clock(seen[1])}, before --until: the figures are over what they cover")
    return min(first, p.first), max(last, p.last or last), notes


def _shown(path: Path) -> str:
    """A file as the profile names it: relative to the repository when inside it, else its name alone (no path of
    the machine that read it)."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return path.name


def _build(p: Profiler, decoder: str, source: Source | None) -> Profile:
    first, last, window_notes = _span(p)
    span = last - first + 1
    lines = _inserts_as_written([_line(k, acc, first, last)
                                 for k, acc in sorted(p.lines.items(), key=lambda kv: (kv[0][3], kv[0])) if acc.trx])
    beat = [ln for ln in lines if ln.heartbeat]
    named, unnamed = p.metadata["named"], p.metadata["unnamed"]
    notes = window_notes
    if unnamed:
        notes.append("the table maps log no column names and no primary keys (binlog_row_metadata is not FULL): "
                     "columns are shown as @N and primary keys as unknown; MINIMAL's estimate takes the first "
                     "column as the key")
    return Profile(
        schema_version=SCHEMA_VERSION,
        files=[FileEntry(path=_shown(f.path), bytes=f.size, server_version=f.server_version) for f in p.files],
        source=source, decoder=decoder, first_event=_clock(first), last_event=_clock(last), span_s=span,
        table_metadata="FULL" if named and not unnamed else "partly FULL" if named else "NO_LOG or MINIMAL",
        sampling=p.sampling.describe(),
        workload=_group([ln for ln in lines if not ln.heartbeat], span, p.transactions[False]),
        heartbeat=_group(beat, span, p.transactions[True]) if beat else None, lines=lines,
        largest=[_transaction(tx) for _, _, tx in sorted(p.largest, key=lambda item: item[:2], reverse=True)],
        other=dict(p.other), notes=notes)


def _inserts_as_written(lines: list[Line]) -> list[Line]:
    """An insert sets every column, so its image is whole under every ROW image and reads FULL whatever the binlog
    was written with. Where the workload's other lines all read one partial image (MINIMAL or NOBLOB: the server's
    binlog_row_image), the inserts were written under it too, and their bytes under it are as written, exact (not
    an estimate of what a FULL image would save: results/readme-assets/own-fit-20261203)."""
    shown = {ln.row_image for ln in lines if ln.kind != "insert" and not ln.heartbeat}
    if len(shown) != 1 or (image := next(iter(shown))) not in ("MINIMAL", "NOBLOB"):
        return lines
    setting = f"ROW-{image}"
    return [ln.model_copy(update={"settings": {**ln.settings, setting: Estimate(
        bytes=ln.bytes, basis="exact", note=f"as written: the other lines were written {image}, and an insert's "
                                            "image is whole under it")}})
            if ln.kind == "insert" and ln.row_image == "FULL" and not ln.heartbeat else ln for ln in lines]


def _transaction(tx: _Tx) -> Transaction:
    return Transaction(gtid=tx.gtid, time=_clock(tx.time), rows=sum(tx.rows.values()), bytes=tx.bytes, file=tx.file,
                       tables=sorted({f"{k[0]}.{k[1]} {k[2]}" for k in tx.rows}))


INDEXED = "bench_idx"  # the model's table with four secondary indexes
NO_KEY = "bench_nopk"
MODEL_TABLES = ("bench_idx", "bench_noidx", "bench_nopk")  # the suite's tables (schema.accounts) the model prices


def model_table(line: Line, model_tables: list[str]) -> tuple[str, str]:
    """The cost model's table a profiled table is priced on, and what that assumes ("" for the suite's own tables
    the model has a fit on). A table of one's own is matched by what the binlog shows of it: no primary key →
    bench_nopk; else the indexed table, as no binlog shows secondary indexes."""
    fallback = INDEXED if INDEXED in model_tables or not model_tables else model_tables[0]
    if line.schema_name in MODEL_TABLES and line.table == "accounts":
        if line.schema_name in model_tables:
            return line.schema_name, ""
        return fallback, f" (the model has no fit on {line.schema_name})"
    if line.primary_key == "no":
        if NO_KEY in model_tables:
            return NO_KEY, " (it has no primary key; its secondary indexes cannot be known from the binlog)"
        return fallback, " (it has no primary key, and the model has no table without one)"
    what = "its primary key and secondary indexes" if line.primary_key == "unknown" else "its secondary indexes"
    return fallback, f" (the indexed table: {what} cannot be known from the binlog)"


# --- decoding files into a profile, and pricing a profile's workload (`profile`, `model predict --profile` and
# `model validate` share these) ---------------------------------------------------------------------------------

def source_of(read_from: str, server: str, window: Window) -> Source:
    """Where a profile's events came from: "files" or "server" (the master as binlogfile names it), and the window
    in the decoder's clock."""
    return Source(read_from=read_from, server=server,
                  since=None if window.since is None else clock(window.since),
                  until=None if window.until is None else clock(window.until), time_zone=local_zone())


def profile_files(files: list[BinlogFile], window: Window, source: Source, sampling: Sampling | None = None,
                  covered: int | None = None) -> Profile:
    """The files' profile: each decoded by the server's own tool near the window (binlogfile.decoder), in the order
    given; covered: the second up to which the files hold the server's binlog (a copy taken then)."""
    decoders = [decoder(f, (window.since, window.until)) for f in files]
    profiler = Profiler(sampling, window)
    for file, argv in zip(files, decoders):
        profiler.feed(file, events(stream(argv), file.path.name))
    if covered is not None:
        profiler.covers(covered)
    return profiler.build(" ".join([Path(decoders[0][0]).name, *decoders[0][1:-1]]), source)


Mix = list[tuple[str, int, float]]  # costmodel.parse_mix's: (kind, rows per transaction, transactions/s)


def model_tables(model: CostModel) -> list[str]:
    """The tables a fitted model has a setting on ('ROW-FULL bench_idx' → bench_idx)."""
    return sorted({name.split(" ", 1)[1] for name in model.settings or {} if " " in name})


def workload_mixes(profile: Profile, tables: list[str]) -> tuple[dict[str, Mix], dict[str, list[Line]], list[str]]:
    """The profile's workload lines as the cost model's mixes, per model table: (kind, rows per transaction,
    transactions/s over the span) for every size the line's transactions had; the lines on each model table; and
    what the mapping assumed. NoWorkload when only the heartbeat (always left out) or nothing is there.

    A transaction of N rows with n of them on a line is n/N of an N-row transaction there: over its lines it
    counts once (its commit, fsync and wake-up priced once), its rows and N² (the apply fit's) as they are."""
    mixes: dict[str, Mix] = {}
    mapped: dict[str, list[Line]] = {}
    notes = []
    workload = [ln for ln in profile.lines if not ln.heartbeat]
    for line in workload:
        table, note = model_table(line, tables)
        notes.append(f"{line.schema_name}.{line.table} {line.kind}s → the model's {table}{note}")
        mapped.setdefault(table, []).append(line)
        if line.rows_by_transaction_size is None:  # a profile from before it: each line's transactions whole
            mixes.setdefault(table, []).extend((line.kind, rows, count / profile.span_s)
                                               for rows, count in line.rows_per_transaction.histogram.items())
        else:
            mixes.setdefault(table, []).extend((line.kind, size, rows / size / profile.span_s)
                                               for size, rows in line.rows_by_transaction_size.items())
    if not mixes:
        raise NoWorkload("the profile has no workload transactions (only the heartbeat, or nothing)")
    if len(workload) > 1 and any(ln.rows_by_transaction_size is None for ln in workload):
        notes.append("the profile predates rows_by_transaction_size: a transaction on several lines is priced on "
                     "each (profile the binlog again to price it once)")
    return mixes, mapped, notes


@dataclass(frozen=True)
class Largest:
    """The profile's largest transaction on a sheet's table, one SQL thread's time to apply it (largest_on's)."""

    gtid: str
    rows: int
    apply_s: Band | None


@dataclass(frozen=True)
class Sheet:
    """One cost sheet of `model predict --profile` (price's): a setting on a model table, its plan and largest
    transaction, or why there is none."""

    setting: str
    table: str
    plan: Plan | None = None
    largest: Largest | None = None
    error: str | None = None


def foreign(plan: Plan) -> Plan:
    """A plan on a table the model does not know: its CPU the model's price on bench_idx, said so, and beside it the
    CPU a table of another shape gets from the spread of the model's price over the shapes measured
    (analysis/shapes): the master's and the replica's, with that spread's width."""
    spreads = {role: shapes.spread(ratios) for role, ratios in FOREIGN_CPU_RATIOS.items()}
    bands = {"master": shapes.corrected(plan.master_cpu_cores, spreads["master"]),
             "replica": shapes.corrected(plan.replica_cpu_cores, spreads["replica"])}
    got = {role: s for role, s in spreads.items() if s is not None}
    n = max((s.shapes for s in got.values()), default=0)
    note = (f"priced by the model on the suite's table, not yours: on {n} sysbench shapes the model's price was "
            + " and ".join(f"{s.mean_ratio:.2f}× the measured on the {role}" for role, s in got.items())
            + " (geometric means); for a new shape, "
            + " and ".join(f"{1 / s.high:.2f}–{1 / s.low:.2f}×" for s in got.values())
            + " (95 % prediction intervals, " + " and ".join(f"{s.width:.1f}×" for s in got.values())
            + " wide; docs/profile.md); measure yours with apply-capacity --live and price it with --own-runs")
    return replace(plan, cpu_basis="model", cpu_note=note,
                   shape_cpu_cores={role: band for role, band in bands.items() if band is not None})


def price(model: CostModel, profile: Profile, mixes: dict[str, Mix], mapped: dict[str, list[Line]],
          setting: str, replica_cores: float = MODEL_REPLICA_CORES, alone: bool = False, threads: int = 1,
          rtt_s: float | None = None, model_binlog: bool = False,
          cores: dict[str, float] | None = None, own: OwnFit | None = None) -> list[Sheet]:
    """The cost sheets of the profile's workload under one setting, one per model table its mixes are on:
    costmodel.predict's plan (every figure per second; with threads and rtt_s as predict takes them) with its
    binlog figures the profile's own where it has them (own_binlog; with model_binlog, the model's price kept) and
    its largest transaction's apply time (largest_on), or the setting, the table and why there is none. A table the
    model has no fit of under the setting is left out, or with `alone` (the one setting asked) sheeted as such.
    With `cores` (costmodel.parse_cores'), each plan's capacity per role: its own where the setting has one table's
    plan, else the workload's over every table's (costmodel.workload_capacity: the roles' cores serve them all)."""
    sheets: list[Sheet] = []
    master_rate = sum(rate for mix in mixes.values() for _, _, rate in mix)  # the master's, every table's
    for table, mix in mixes.items():
        if costmodel.key(setting, table) not in (model.settings or {}):
            if alone:
                sheets.append(Sheet(setting, table, error="the model has no data for it"))
            continue
        try:
            plan = costmodel.predict(model, mix, setting, replica_cores, table, threads, rtt_s, master_rate,
                                     cores)
        except costmodel.MixError as exc:
            sheets.append(Sheet(setting, table, error=str(exc)))
            continue
        if own is not None:  # the workload's own runs price its CPU and apply (analysis/ownfit)
            plan = own_cpu(plan, own, costmodel.no_data_of(model))
        elif any(ln.schema_name not in MODEL_TABLES or ln.table != "accounts" for ln in mapped[table]):
            plan = foreign(plan)
        sheets.append(Sheet(setting, table, plan=plan if model_binlog else own_binlog(plan, profile, mapped[table]),
                            largest=largest_on(model, profile, mapped[table], setting, table)))
    plans = [sheet.plan for sheet in sheets if sheet.plan is not None]
    if cores and len(plans) > 1:
        whole = costmodel.workload_capacity(plans, cores, threads, costmodel.no_data_of(model))
        sheets = [replace(sheet, plan=replace(sheet.plan, capacity=whole)) if sheet.plan is not None else sheet
                  for sheet in sheets]
    return sheets


def own_binlog(plan: Plan, profile: Profile, lines: list[Line]) -> Plan:
    """The plan with its binlog figures (MB/s, GB/day, the bytes to each replica) the lines' own over the span: the
    model's table has rows of its own size, not the workload's. Measured under the setting the binlog was written
    with, else the profile's estimate from its row images (or statements: line_settings); the model's price only
    where a line's cannot be estimated. `binlog_basis` (measured, estimated, model) and `binlog_note` say which."""
    setting = plan.setting
    parts = [ln.settings[setting] for ln in lines]
    unknown = next((p for p in parts if p.bytes is None), None)
    if unknown is not None:
        return replace(plan, binlog_basis="model",
                       binlog_note=f"priced by the model from {plan.table}'s rows: the profile cannot estimate "
                                   f"{setting}: {unknown.note}")
    per_s = sum(p.bytes or 0 for p in parts) / profile.span_s
    if all(p.basis == "exact" for p in parts):
        basis, note = "measured", f"from the binlog's own bytes (written under {setting}; the heartbeat left out)"
    else:
        basis, note = "estimated", ("estimated from its row images" if setting.startswith("ROW-") else
                                    "estimated from its row images and annotated statements") + \
            f" (the binlog was not written under {setting}: not measured)"
    # measured or estimated from the binlog itself: no fit's interval applies (a figure without low/high prints so)
    return replace(plan, binlog_mb_per_s={"value": per_s / 1e6},
                   binlog_gb_per_day={"value": per_s * costmodel.SECONDS_PER_DAY / 1e9},
                   bytes_per_s_to_each_replica={"value": per_s}, binlog_basis=basis, binlog_note=note)


def largest_on(model: CostModel, profile: Profile, lines: list[Line], setting: str,
               table: str) -> Largest | None:
    """The profile's largest transaction (by rows, of those it kept: the biggest by bytes) on these lines, with one
    SQL thread's time to apply all its rows on the model's table (costmodel.apply_seconds); None when none of them
    is on the lines. A transaction on lines priced on several tables is priced whole on each."""
    names = {f"{ln.schema_name}.{ln.table} {ln.kind}" for ln in lines}
    on = [t for t in profile.largest if names.intersection(t.tables)]
    if not on:
        return None
    t = max(on, key=lambda t: t.rows)
    return Largest(gtid=t.gtid, rows=t.rows, apply_s=costmodel.apply_seconds(model, setting, table, t.rows))
