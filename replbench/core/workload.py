"""Workload files: an external tool that writes to the master, declared in a small TOML file in workloads/ (sysbench's
OLTP scripts, or any client a DBA names), which a study's live units run during each window (`measure = ["live"]`,
docs/studies.md, "Live units"). The file gives the tool's command lines as lists of words; the suite fills the
placeholders and runs them, nothing else:

    description = "sysbench oltp_write_only, 4 tables of 200,000 rows"
    package = "sysbench"                 # the Debian package, installed when the tool is missing
    database = "sbtest"                  # created when missing; `prepare` runs when it holds no table
    prepare = ["sysbench", "oltp_write_only", "--db-driver=mysql", "--mysql-host={host}", ..., "prepare"]
    run = ["sysbench", "oltp_write_only", ..., "--rate={rate}", "--time={seconds}", "run"]

Placeholders: {host} {port} {user} {password} (the master, as the harness reaches it), {database}, and in `run`
{rate} (the unit's rate, per second) and {seconds} (how long to write: the window less a margin, so that the tool
has stopped when the window closes)."""

from __future__ import annotations

import string
import tomllib
from dataclasses import dataclass
from typing import Annotated

from annotated_types import MinLen
from pydantic import AfterValidator, model_validator

from . import named
from .config import WORKLOAD_DIR
from .schema import FieldError, FileModel, validate

CONNECTION = ("host", "port", "user", "password", "database")  # what every command may name
RUN_ONLY = ("rate", "seconds")  # what only `run` may name


class WorkloadError(Exception):
    """A workload file is missing or invalid; the message names the file, the line and the problem."""


def _placeholders(words: list[str]) -> set[str]:
    """The {names} the words use ({{ and }} are literal braces, as str.format reads them)."""
    try:
        return {name for word in words for _, name, _, _ in string.Formatter().parse(word) if name is not None}
    except ValueError as exc:
        raise ValueError(f"not a command's words with {{placeholders}}: {exc}") from None


def _words(allowed: tuple[str, ...]) -> AfterValidator:
    def check(words: list[str]) -> list[str]:
        unknown = sorted(_placeholders(words) - set(allowed))
        if unknown:
            raise ValueError(f"unknown placeholder(s) {', '.join('{' + u + '}' for u in unknown)}; a command may "
                             f"name {', '.join('{' + a + '}' for a in allowed)}")
        return words

    return AfterValidator(check)


Command = Annotated[list[str], MinLen(1)]


class WorkloadFile(FileModel):
    description: str = ""
    package: str = ""  # the Debian package that provides the tool (installed when the tool is missing)
    database: Annotated[str, MinLen(1)]
    prepare: Annotated[Command, _words(CONNECTION)] | None = None
    run: Annotated[Command, _words((*CONNECTION, *RUN_ONLY))]

    @model_validator(mode="after")
    def _run_paced(self) -> WorkloadFile:
        named = _placeholders(self.run)
        if "rate" not in named:
            raise FieldError(("run",), "the command must name {rate}: a live unit writes at the study's rate")
        if "seconds" not in named:
            raise FieldError(("run",), "the command must name {seconds}: the tool must stop within the window")
        return self


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    package: str
    database: str
    prepare: tuple[str, ...] | None
    run: tuple[str, ...]

    def command(self, kind: str, values: dict[str, str]) -> list[str]:
        """`prepare` or `run`'s words with the placeholders filled (the database's name is the file's)."""
        words = self.prepare if kind == "prepare" else self.run
        assert words is not None
        return [w.format(**values, database=self.database) for w in words]


def available() -> list[str]:
    return named.available(WORKLOAD_DIR)


def load(name: str) -> Workload:
    path = named.find(name, WORKLOAD_DIR)
    if path is None:
        raise WorkloadError(f"no workload file {name!r}; workloads: {', '.join(available()) or 'none'}")
    source = path.read_text()
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        raise WorkloadError(f"{path}: {exc}") from None
    f = validate(WorkloadFile, data, str(path), source, WorkloadError)
    return Workload(path.stem, f.description, f.package, f.database,
                    None if f.prepare is None else tuple(f.prepare), tuple(f.run))
