"""A binlog file as events: the server's own decoder (mariadb-binlog, or MySQL's mysqlbinlog for a MySQL file) runs
with `--base64-output=decode-rows -vv --print-table-metadata`, and its text is read in large chunks as it comes
(a 1 GB binlog decodes to about 6 GB of text: never held whole).

Reading is cheap on purpose (docs/profile.md, "Speed"): one compiled pattern finds only the event header lines
(`#YYMMDD hh:mm:ss server id … end_log_pos N … Update_rows: …`) and the `# Number of rows: N` lines; the `###`
lines of the row images are skipped unless the reader asks for an event's images (`row_images`). An event's size is
its end_log_pos less the previous event's (events lie end to end in the file), so the `# at` lines are not needed.
"""

from __future__ import annotations

import calendar
import contextlib
import fcntl
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..core import sql
from ..core.config import ReplbenchError, Settings
from ..core.progress import Progress
from ..topology.install import find_tool

MAGIC = b"\xfebin"
FORMAT_DESCRIPTION = 15  # the event every binlog file starts with (binlog format v4)
# bytes of the decoder's text read at a time: a quarter of the pipe, so the decoder keeps writing into the pipe
# while a piece is read (with pieces larger than the pipe the two take turns: docs/profile.md, "Speed")
CHUNK = 256 << 10
PIPE_SIZE = 1 << 20  # the pipe from the decoder (Linux's default limit for an unprivileged process)
F_SETPIPE_SZ = 1031  # fcntl.F_SETPIPE_SZ, named in Python 3.10+ on Linux only
DECODE_FLAGS = ("--base64-output=decode-rows", "-vv", "--print-table-metadata")
STATEMENT_MARK = {"update": b"\n### UPDATE ", "write": b"\n### INSERT INTO ", "delete": b"\n### DELETE FROM "}
ROWS_KINDS = {b"Writ": "write", b"Upda": "update", b"Dele": "delete"}
ROWS_KINDS_SET = frozenset(ROWS_KINDS.values())
AT = b"\n# at "  # the line before each event's header

# an event's header line (1 time, 2 end_log_pos, 3 what it is): the pattern starts with a literal, so the regex
# engine skips between the "\n#" it finds without stepping through every byte
LINE = re.compile(rb"\n#(\d{6} [ \d]\d:\d\d:\d\d) server id \d+ +end_log_pos (\d+)[^\t\n]*\t([^\n]*)")
TABLE_MAP = re.compile(rb"Table_map: `((?:[^`]|``)*)`\.`((?:[^`]|``)*)` mapped to number (\d+)")
ROW_VALUE = re.compile(rb"###   @(\d+)=([^\n]*)")


class BinlogFileError(ReplbenchError):
    """The file could not be decoded (the decoder is missing or failed); one line saying why."""


class NotABinlog(BinlogFileError):
    """The file given is missing, unreadable or not a binlog: bad input (exit 2)."""


@dataclass(frozen=True)
class BinlogFile:
    path: Path
    size: int
    server_version: str
    created: int = 0  # its first event's time (seconds since the epoch): when the server opened the file

    @property
    def mysql(self) -> bool:
        return "mariadb" not in self.server_version.lower()


@dataclass(slots=True)
class TableMeta:
    """What a Table_map event says of its table: the column types, and with binlog_row_metadata=FULL the column
    names and the primary key (None: the event does not say)."""

    types: tuple[str, ...]
    names: tuple[str, ...] | None = None
    primary_key: tuple[str, ...] | None = None


@dataclass(slots=True)
class Event:
    """One binlog event as the decoder printed it. kind: gtid, annotate, table_map, write/update/delete (rows),
    xid, query, other. image is the row images' text of a rows event (read only when asked: row_images)."""

    kind: str
    time: int  # the header's second (the server's clock, read as UTC)
    size: int
    what: bytes  # the header after the tab
    file: str = ""
    rows: int = 0
    table_id: int = 0
    table: tuple[str, str] | None = None
    text: str = ""  # an annotated statement, a query's SQL, a GTID
    meta: TableMeta | None = None
    image: tuple[bytes, int, int] | None = field(default=None, repr=False)  # the text it lies in, from, to


def inspect(path: Path) -> BinlogFile:
    """The file's size and the server version its first event names; NotABinlog when it is no binlog."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4 + 19 + 2 + 50)
        size = path.stat().st_size
    except FileNotFoundError:
        raise NotABinlog(f"{path}: no such file") from None
    except IsADirectoryError:
        raise NotABinlog(f"{path}: a folder, not a binlog file") from None
    except OSError as exc:
        raise NotABinlog(f"{path}: cannot read it ({exc.strerror})") from None
    if head[:4] != MAGIC or len(head) < 4 + 19 + 2 or head[8] != FORMAT_DESCRIPTION:
        raise NotABinlog(f"{path}: not a MySQL/MariaDB binlog file (no binlog header)")
    version = head[4 + 19 + 2:].split(b"\0", 1)[0].decode("ascii", "replace")
    return BinlogFile(path, size, version, int.from_bytes(head[4:8], "little"))


def decoder(file: BinlogFile, window: tuple[int | None, int | None] = (None, None)) -> list[str]:
    """The command that decodes the file: MariaDB's mariadb-binlog for a MariaDB file, MySQL's mysqlbinlog for a
    MySQL one (MariaDB's tool does not read MySQL 8's events). window: (since, until) in the decoder's clock (as
    Event.time); the decoder is told to start WINDOW_MARGIN_S before and stop WINDOW_MARGIN_S after it, and the
    profile keeps the transactions inside it (docs/profile.md, "A window")."""
    tool = _tool(file.mysql, file.path.name, file.server_version)
    return [tool, *DECODE_FLAGS, *window_flags(*window), str(file.path)]


# the decoder starts and stops this far outside a window: a transaction's events carry the second its statement
# began, and transactions committed together need not be written in the order of those seconds; the profile keeps
# a transaction by its GTID event's second (docs/profile.md, "A window")
WINDOW_MARGIN_S = 60


def window_flags(since: int | None, until: int | None) -> list[str]:
    """--start-datetime / --stop-datetime a margin outside the window: the decoder then prints only what is near
    it (the costly part of a profile is the decoder's text), in the local time of this machine, as it reads and
    prints times."""
    flags = []
    if since is not None:
        flags.append(f"--start-datetime={clock(since - WINDOW_MARGIN_S)}")
    if until is not None:
        flags.append(f"--stop-datetime={clock(until + WINDOW_MARGIN_S)}")
    return flags


def clock(second: int) -> str:
    """A second of the decoder's clock (as Event.time) as the decoder prints and reads it."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(second))


def local_second(epoch: float) -> int:
    """A moment (seconds since the epoch) on the decoder's clock: the local time of this machine read as UTC, as
    the decoder prints event times and Event.time reads them."""
    return calendar.timegm(time.localtime(epoch))


def local_zone() -> str:
    """This machine's time zone as the profile names it: its abbreviation and its offset now, "CET (UTC+01:00)"."""
    offset = time.strftime("%z")
    return f"{time.strftime('%Z')} (UTC{offset[:3]}:{offset[3:]})"


def _tool(mysql: bool, name: str, version: str) -> str:
    if not mysql:
        tool = find_tool("mariadb-binlog") or find_tool("mysqlbinlog")
        if tool is None:
            raise BinlogFileError("mariadb-binlog is missing: install the MariaDB client (Debian/Ubuntu: "
                                  "apt-get install mariadb-client)")
    else:
        tool = find_tool("mysqlbinlog")
        if tool is None or _is_mariadb_tool(tool):
            raise BinlogFileError(f"{name} was written by MySQL {version}: decoding it needs MySQL's own "
                                  "mysqlbinlog, which is not installed here")
    return tool


def _is_mariadb_tool(tool: str) -> bool:
    """Debian's mysqlbinlog is a link to mariadb-binlog; MySQL's says `Ver 8.…` where MariaDB's says `Ver 3.…`."""
    if "mariadb" in os.path.basename(os.path.realpath(tool)):
        return True
    out = subprocess.run([tool, "--version"], capture_output=True, text=True, check=False).stdout
    return re.search(r"\bVer 3\.", out) is not None


# --- a server's binlogs, copied as files (./run.sh profile --topology FILE, or the native topology's master) -----

COPY_POLL_S = 1.0  # how often a copy's progress is looked at
LIST_TIMEOUT_S = 10.0  # connecting to the master and listing its binlogs


@dataclass(frozen=True)
class ServerLogs:
    """What the master says of its binary logs (SHOW BINARY LOGS), when asked."""

    where: str  # the master as the profile names it: host:port and the topology file, or the native topology
    logs: tuple[tuple[str, int], ...]  # (name, size), oldest first
    version: str
    now: int  # its clock then, seconds since the epoch: the copies cover its binlog up to here


def _master_where(settings: Settings) -> str:
    node = settings.master
    if node.external:
        return f"{node.host}:{node.port} (the master of {settings.topology_name})"
    return "the native topology's master"


def list_server_logs(settings: Settings) -> ServerLogs:
    """SHOW BINARY LOGS on the master; one line (BinlogFileError) when it does not answer or writes none."""
    node = settings.master
    where = _master_where(settings)
    user = settings.db_user if node.external else sql.ADMIN_USER
    conn = None
    try:  # the light reader (PyMySQL): two statements, and it starts no process to describe the platform
        conn = sql.reader(node, settings, timeout=LIST_TIMEOUT_S)
        with conn.cursor() as cur:
            cur.execute("SELECT VERSION(), UNIX_TIMESTAMP()")
            version, now = cur.fetchone()
            cur.execute("SHOW BINARY LOGS")
            rows = cur.fetchall()
    except sql.ReaderError as exc:
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
        message = str(exc.args[1] if len(exc.args) > 1 else exc).splitlines()[0]
        if code == 1381:  # ER_NO_BINARY_LOGGING
            raise BinlogFileError(f"{where} writes no binary log (log_bin is OFF): nothing to profile") from None
        raise BinlogFileError(f"{where} does not answer as {user!r}: {message}") from None
    finally:
        sql.close_quietly(conn)
    if not rows:
        raise BinlogFileError(f"{where} lists no binary log (SHOW BINARY LOGS is empty)")
    return ServerLogs(where, tuple((Path(str(r[0])).name, int(r[1])) for r in rows), str(version), int(float(now)))


def copy_from_server(settings: Settings, folder: Path, since: int | None,
                     progress: Progress) -> tuple[list[BinlogFile], ServerLogs]:
    """The master's binlogs copied into folder as they are (`--read-from-remote-server --raw`), newest first, down
    to the newest one opened before `since` less WINDOW_MARGIN_S (its older ones cannot hold the window), or all
    of them without `since`; returned oldest first. The password goes by MYSQL_PWD, never on the command line."""
    listed = list_server_logs(settings)
    node = settings.master
    tool = _tool("mariadb" not in listed.version.lower(), "the master's binlog", listed.version)
    where = ([f"--host={node.host}", f"--port={node.port}", f"--user={settings.db_user}"] if node.external else
             [f"--socket={node.socket}", f"--user={sql.ADMIN_USER}"])
    argv = [tool, "--read-from-remote-server", "--raw", *where, f"--result-file={folder}{os.sep}"]
    env = {**os.environ, "MYSQL_PWD": settings.db_password if node.external else settings.admin_password}
    copied: list[BinlogFile] = []
    done = 0
    for name, size in reversed(listed.logs):
        progress.say(f"copying {name} ({size / 1e6:,.1f} MB) from {listed.where}; {len(copied)} file(s), "
                     f"{done / 1e6:,.1f} MB copied so far")
        file = _copy_one([*argv, name], folder / name, size, env, listed.where, progress)
        copied.append(file)
        done += file.size
        if since is not None and local_second(file.created) <= since - WINDOW_MARGIN_S:
            break
    progress.say(f"copied {len(copied)} of the master's {len(listed.logs)} binlog(s), {done / 1e6:,.1f} MB",
                 final=True)
    return copied[::-1], listed


def _copy_one(argv: list[str], path: Path, size: int, env: dict[str, str], where: str,
              progress: Progress) -> BinlogFile:
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)
        except OSError as exc:
            raise BinlogFileError(f"cannot start {argv[0]}: {exc.strerror}") from None
        try:
            while True:
                try:
                    code = proc.wait(timeout=COPY_POLL_S)
                    break
                except subprocess.TimeoutExpired:
                    have = path.stat().st_size if path.exists() else 0
                    progress.say(f"copying {path.name}: {have / 1e6:,.1f} of {size / 1e6:,.1f} MB", tick=True)
        finally:
            if proc.poll() is None:  # interrupted: the copy is not wanted any more
                proc.kill()
                proc.wait()
        if code != 0:
            err.seek(0)
            lines = [ln.strip().removeprefix("ERROR: ") for ln in err.read().decode("utf-8", "replace").splitlines()
                     if ln.strip()]
            raise BinlogFileError(f"{os.path.basename(argv[0])} could not copy {path.name} from {where} (exit "
                                  f"{code}){': ' + lines[0] if lines else ''}")
    try:
        return inspect(path)
    except NotABinlog as exc:
        raise BinlogFileError(f"the copy of {path.name} from {where} is no binlog: {exc}") from None


def stream(argv: list[str], chunk: int = CHUNK) -> Iterator[bytes]:
    """The decoder's output in pieces of about `chunk` bytes as it writes it; BinlogFileError (the decoder's first
    line) when it fails."""
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, bufsize=0)
        except OSError as exc:
            raise BinlogFileError(f"cannot start {argv[0]}: {exc.strerror}") from None
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        with contextlib.suppress(OSError):  # a larger pipe: fewer switches between the decoder and this reader
            fcntl.fcntl(fd, F_SETPIPE_SZ, PIPE_SIZE)
        try:
            parts: list[bytes] = []
            held = 0
            while block := os.read(fd, chunk):
                parts.append(block)
                held += len(block)
                if held >= chunk:
                    yield b"".join(parts)
                    parts, held = [], 0
            if parts:
                yield b"".join(parts)
        finally:
            if proc.poll() is None:
                proc.kill()  # the reader stopped early (an error, an interrupt): the decoder has no one to write to
            proc.stdout.close()
            code = proc.wait()
        if code != 0:
            err.seek(0)
            lines = [ln.strip().removeprefix("ERROR: ") for ln in err.read().decode("utf-8", "replace").splitlines()
                     if ln.strip()]
            raise BinlogFileError(f"{os.path.basename(argv[0])} failed on {argv[-1]} (exit {code})"
                                  + (f": {lines[0]}" if lines else ""))


def time_alone(argv: list[str]) -> float:
    """Seconds the decoder takes to write the file's text to /dev/null: the yardstick of the profile's speed."""
    start = time.perf_counter()
    code = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False).returncode
    if code != 0:
        raise BinlogFileError(f"{os.path.basename(argv[0])} failed on {argv[-1]} (exit {code})")
    return time.perf_counter() - start


@lru_cache(maxsize=65536)
def _second(text: bytes) -> int:
    """'261127 10:14:30' (the hour may be space-padded) as seconds since the epoch, the server's clock read as UTC."""
    return calendar.timegm((2000 + int(text[0:2]), int(text[2:4]), int(text[4:6]), int(text[7:9]), int(text[10:12]),
                            int(text[13:15]), 0, 0, 0))


def events(chunks: Iterable[bytes], file: str = "") -> Iterator[Event]:
    """The decoder's text as events, in file order. The text is cut into pieces at `# at` lines (an event never
    spans two pieces), each piece scanned once by LINE; the blocks of an event longer than a block (a statement of
    many rows) are joined once, when its end has come."""
    parser = _Parser(file)
    parts: list[bytes] = []
    for block in chunks:
        found = block.rfind(AT)  # (one that straddles two blocks is left for the next cut)
        parts.append(block)
        if found < 0:
            continue
        data = b"".join(parts) if len(parts) > 1 else block
        cut = len(data) - len(block) + found
        if cut <= 0:
            continue
        yield from parser.feed(data, cut + 1)
        parts = [data[cut:]]
    if parts:
        data = b"".join(parts) + b"\n"
        yield from parser.feed(data, len(data))


class _Parser:
    """State across pieces: the previous event's end (an event's size is its end less that), the table ids seen."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.end = 4  # the first event starts after the magic number
        self.tables: dict[int, tuple[tuple[str, str], TableMeta | None, int]] = {}  # id -> table, meta, its lines
        self.skip = 0  # the last table map's metadata lines (bytes)
        self.restart = False  # after the file's start event: the next event's `# at` line says where it begins

    def feed(self, data: bytes, stop: int) -> Iterator[Event]:
        """The events of data[:stop]. A rows event's images are stepped over with one find (the `###` lines are
        most of the text), not scanned line by line."""
        search = LINE.search
        at = 0
        while (m := search(data, at, stop)) is not None:
            if self.restart:  # with --start-datetime the decoder prints the start event, then skips to the window
                self.restart = False
                found = data.find(b"# at ", at, m.start())
                if found >= 0:
                    self.end = int(data[found + 5:data.index(b"\n", found)])
            at = m.end()
            end = int(m.group(2))
            size, self.end = (end - self.end if end >= self.end else 0), max(end, self.end)
            event = self._event(data, m, _second(m.group(1)), size)
            if event.kind in ROWS_KINDS_SET:
                if not (data.startswith(b"\n#", at) and data[at + 2:at + 3].isdigit()):
                    at = self._rows(data, event, at, stop)
                # else: one of a statement's rows events but its last: MariaDB prints their headers, then every row
            elif event.kind == "table_map":  # step over its metadata lines
                at += self.skip
            elif event.kind == "query":  # and over a statement's SQL
                text_end = data.find(b"\n# at ", at, stop)
                at = stop if text_end < 0 else text_end
            yield event

    @staticmethod
    def _rows(data: bytes, event: Event, at: int, stop: int) -> int:
        """Reads a rows event's row count and marks its images (to read only if asked); returns where its text
        ends."""
        text_end = data.find(b"\n# at ", at, stop)
        text_end = stop if text_end < 0 else text_end + 1
        count = data.rfind(b"\n# Number of rows: ", at, text_end)
        if count >= 0:  # MariaDB counts the rows after the images
            event.rows = int(data[count + 19:data.find(b"\n", count + 19)])
            event.image = (data, at, count + 1)
        else:  # MySQL does not: count the rows' statement lines
            event.rows = data.count(STATEMENT_MARK[event.kind], at, text_end)
            event.image = (data, at, text_end)
        return text_end - 1

    def _event(self, data: bytes, m: re.Match[bytes], second: int, size: int) -> Event:
        what = m.group(3)
        head = what[:4]
        event = Event("other", second, size, what, self.file)
        if head in ROWS_KINDS:
            event.kind = ROWS_KINDS[head]
            at = what.find(b"table id ") + 9
            stop = what.find(b" ", at)
            event.table_id = int(what[at:stop if stop > 0 else len(what)]) if at > 8 else 0
            event.table, event.meta, _ = self.tables.get(event.table_id, (None, None, 0))
        elif head == b"GTID" or head == b"Anon":
            event.kind, event.text = "gtid", _gtid(data, m.end(), what)
        elif head == b"Anno":
            event.kind, event.text = "annotate", _comment_lines(data, m.end() + 1, b"#Q> ")
        elif what.startswith(b"Rows_query"):
            event.kind, event.text = "annotate", _comment_lines(data, m.end() + 1, b"# ")
        elif head == b"Tabl":
            found = TABLE_MAP.match(what)
            if found:
                table = (_unquote(found.group(1)), _unquote(found.group(2)))
                event.kind, event.table_id, event.table = "table_map", int(found.group(3)), table
                known = self.tables.get(event.table_id)
                if known is None or known[0] != table:  # a table id is one definition of its table: read it once
                    block = _metadata_block(data, m.end() + 1)
                    known = self.tables[event.table_id] = (table, _table_meta(block), len(block))
                event.meta, self.skip = known[1], known[2]
        elif head == b"Xid ":
            event.kind = "xid"
        elif head == b"Quer":
            event.kind, event.text = "query", _query_text(data, m.end() + 1)
        elif head == b"Star":  # the format description, always printed (docs/profile.md, "A window")
            self.restart = True
        return event


def _unquote(name: bytes) -> str:
    return name.replace(b"``", b"`").decode("utf-8", "replace")


def _gtid(data: bytes, at: int, what: bytes) -> str:
    """MariaDB prints `GTID 0-1-2927 trans`; MySQL `GTID\tlast_committed=…` and the GTID on a SET line after."""
    if what.startswith(b"GTID "):
        return what[5:].split(b" ", 1)[0].decode()
    found = data.find(b"GTID_NEXT= '", at, at + 2000)
    if found < 0:
        return "anonymous"
    return data[found + 12:data.find(b"'", found + 12)].decode("ascii", "replace")


def _comment_lines(data: bytes, at: int, prefix: bytes) -> str:
    """An annotated statement: MariaDB's `#Q> ` lines (one per line of the statement), MySQL's `# ` lines."""
    lines = []
    while data.startswith(prefix, at) and not data.startswith(b"# at ", at):
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        lines.append(data[at + len(prefix):end])
        at = end + 1
    return b"\n".join(lines).decode("utf-8", "replace")


def _metadata_block(data: bytes, at: int) -> bytes:
    """The `# Columns(…)` and `# Primary Key(…)` lines after a Table_map header (--print-table-metadata)."""
    end = at
    while data.startswith(b"# Columns(", end) or data.startswith(b"#         ", end) \
            or data.startswith(b"# Primary Key", end):
        nl = data.find(b"\n", end)
        end = len(data) if nl < 0 else nl + 1
    return data[at:end]


@lru_cache(maxsize=1024)
def _table_meta(block: bytes) -> TableMeta | None:
    if not block.startswith(b"# Columns("):
        return None
    text = block.decode("utf-8", "replace")
    cols_text, _, pk_text = text.partition("# Primary Key")
    columns = [ln.lstrip("#").strip().rstrip(",") for ln in cols_text.splitlines()]
    columns[0] = columns[0][len("Columns("):]
    columns[-1] = columns[-1][:-1] if columns[-1].endswith(")") else columns[-1]
    named = all(c.startswith("`") for c in columns)
    names = tuple(c[1:c.index("`", 1)] for c in columns) if named else None
    types = tuple(c[c.index("`", 1) + 1:].strip() if named else c for c in columns)
    pk = None
    if named:  # with names logged (binlog_row_metadata=FULL) the key is logged too: no line means no primary key
        inside = pk_text.strip()[1:-1] if pk_text.strip().startswith("(") else ""
        pk = tuple(p.strip().split("(")[0] for p in inside.split(",") if p.strip())
    return TableMeta(types, names, pk)


def _query_text(data: bytes, at: int) -> str:
    """A Query event's statement: the last `…/*!*/;` part after the session's SET lines."""
    end = data.find(b"\n# at ", at)
    parts = [p.strip() for p in data[at:end if end >= 0 else len(data)].split(b"/*!*/;")]
    for part in reversed(parts):
        if part and not part.startswith((b"SET ", b"use ", b"/*!")):
            return part.decode("utf-8", "replace")
    return ""


# --- row images, read only for the events the profile samples -----------------------------------------------

Image = dict[bytes, bytes]  # column number (b"3") -> its value as printed, with the -vv comment after it


def row_images(event: Event, most: int = 1 << 30) -> list[tuple[Image | None, Image | None]]:
    """The first `most` rows of a rows event, each as (before image, after image): an update has both, an insert
    only the after image, a delete only the before image. Each image is read by one findall (the regex engine, not
    a Python loop over its lines)."""
    if event.image is None:
        return []
    rows: list[tuple[Image | None, Image | None]] = []
    data, start, end = event.image
    mark = STATEMENT_MARK[event.kind]
    if most < event.rows:  # copy only the rows read out of what may be megabytes of images
        cut = start - 1
        for _ in range(most + 1):
            cut = data.find(mark, cut + 1, end)
            if cut < 0:
                break
        end = cut if cut > 0 else end
    text = data[start:end]
    for row in text.split(mark)[1:]:
        if event.kind == "update":
            where, _, after = row.partition(b"\n### SET\n")
            rows.append((dict(ROW_VALUE.findall(where)), dict(ROW_VALUE.findall(after))))
        elif event.kind == "write":
            rows.append((None, dict(ROW_VALUE.findall(row))))
        else:
            rows.append((dict(ROW_VALUE.findall(row)), None))
    return rows


FIXED = {"INT": 4, "TINYINT": 1, "SHORTINT": 2, "MEDIUMINT": 3, "LONGINT": 8, "FLOAT": 4, "DOUBLE": 8, "YEAR": 1,
         "DATE": 3, "TIME": 3, "TIMESTAMP": 4, "DATETIME": 8, "ENUM(1 byte)": 1, "ENUM(2 bytes)": 2}
TEMPORAL2 = {"DATETIME": 5, "TIMESTAMP": 4, "TIME": 3}  # the MySQL 5.6 formats, plus (fsp + 1) // 2 bytes
BLOBS = {"TINYBLOB/TINYTEXT": 1, "BLOB/TEXT": 2, "MEDIUMBLOB/MEDIUMTEXT": 3, "LONGBLOB/LONGTEXT": 4}
DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


@dataclass(frozen=True)
class ValueType:
    """How a column's value is stored in a row image: a fixed size, or a length prefix and the bytes."""

    name: str
    fixed: int | None
    prefix: int = 0
    blob: bool = False


@lru_cache(maxsize=4096)
def value_type(comment: bytes) -> ValueType:
    """The storage of a value from the -vv comment after it ("VARSTRING(480) meta=480 nullable=0 is_null=0"), as
    mariadb-binlog's log_event_print_value reads it."""
    text = comment.decode("ascii", "replace")
    name = text.split(" meta=")[0].strip()
    base, _, arg = name.partition("(")
    arg = arg.rstrip(")")
    if name in FIXED:
        return ValueType(name, FIXED[name])
    if base in TEMPORAL2 and arg.isdigit():
        return ValueType(name, TEMPORAL2[base] + (int(arg) + 1) // 2)
    if name in BLOBS:
        return ValueType(name, None, BLOBS[name], blob=True)
    if base in ("VARSTRING", "STRING") and arg.isdigit():
        return ValueType(name, None, 1 if int(arg) < 256 else 2)
    if base == "DECIMAL" and "," in arg:
        precision, scale = (int(v) for v in arg.split(","))
        whole = precision - scale
        return ValueType(name, (whole // 9) * 4 + DIG2BYTES[whole % 9] + (scale // 9) * 4 + DIG2BYTES[scale % 9])
    if base == "BIT" and arg.isdigit():
        return ValueType(name, (int(arg) + 7) // 8)
    if base == "SET" and arg.split()[0].isdigit():
        return ValueType(name, int(arg.split()[0]))
    return ValueType(name, None, 0, blob=name in ("JSON", "GEOMETRY"))  # the printed text's length: an estimate


def split_value(printed: bytes) -> tuple[bytes, ValueType]:
    """A printed value and its type: "'Alus' /* VARSTRING(240) meta=240 … */" -> (b"'Alus'", VARSTRING(240))."""
    cut = printed.rfind(b" /* ")
    if cut < 0:
        return printed, ValueType("?", None)
    return printed[:cut], value_type(printed[cut + 4:].rstrip(b" */"))


def value_size(printed: bytes, kind: ValueType | None = None) -> int:
    """Bytes a value takes in a row image (0 for NULL, which is a bit of the image's null bitmap); kind, when the
    caller knows the column's, saves reading the comment."""
    if printed.startswith(b"NULL"):
        return 0
    if kind is None:
        kind = split_value(printed)[1]
    if kind.fixed is not None:
        return kind.fixed
    end = printed.rfind(b" /* ")
    end = len(printed) if end < 0 else end
    quoted = printed[:1] == b"'"
    return kind.prefix + end - (2 if quoted else 0) - 3 * printed.count(b"\\x", 0, end)  # a control byte: \xNN


# --- a file's GTIDs from its event headers (apply-capacity --binlog: experiments/replay) ---------------------------
# MariaDB's event types: a transaction starts with a GTID event; a file's second event lists the GTID state before it
GTID_EVENT = 162
GTID_LIST_EVENT = 163
HEADER = 19  # timestamp, type, server_id, event size, end position, flags


@dataclass(frozen=True)
class GtidGroup:
    """One transaction of a file: its GTID, the server that wrote it, where its GTID event starts, its second."""

    domain: int
    server: int
    seq: int
    at: int
    time: int


@dataclass(frozen=True)
class GtidMap:
    """A MariaDB binlog file's GTID state before its first transaction (its Gtid list: domain → seq) and every
    transaction's GTID in order, read from the events' headers alone (no decoder: a 256 MB file in a second or
    two)."""

    path: Path
    size: int
    start: dict[int, int]
    groups: tuple[GtidGroup, ...]

    def end(self) -> dict[int, int]:
        """The state after the file's last transaction."""
        state = dict(self.start)
        for g in self.groups:
            state[g.domain] = g.seq
        return state


def gtid_map(path: Path) -> GtidMap:
    """The file's Gtid list and transactions; NotABinlog for a file that is no MariaDB binlog (MySQL's GTIDs are
    another format) or ends inside an event header."""
    info = inspect(path)
    if info.mysql:
        raise NotABinlog(f"{path}: a MySQL binlog ({info.server_version}); replaying one is MariaDB's here")
    start: dict[int, int] = {}
    groups: list[GtidGroup] = []
    with open(path, "rb") as fh:
        at = len(MAGIC)
        while at + HEADER <= info.size:
            fh.seek(at)
            head = fh.read(HEADER + 16)
            kind, server = head[4], int.from_bytes(head[5:9], "little")
            size = int.from_bytes(head[9:13], "little")
            if size < HEADER:
                raise NotABinlog(f"{path}: an event of {size} bytes at {at}: not a whole binlog")
            body = head[HEADER:]
            if kind == GTID_EVENT:
                groups.append(GtidGroup(int.from_bytes(body[8:12], "little"), server,
                                        int.from_bytes(body[0:8], "little"), at, int.from_bytes(head[0:4], "little")))
            elif kind == GTID_LIST_EVENT:
                fh.seek(at + HEADER)
                count = int.from_bytes(fh.read(4), "little") & 0x0FFFFFFF
                entries = fh.read(16 * count)
                for i in range(count):
                    entry = entries[16 * i:16 * i + 16]
                    start[int.from_bytes(entry[0:4], "little")] = int.from_bytes(entry[8:16], "little")
            at += size
    return GtidMap(path, info.size, start, tuple(groups))
