"""The models of the files a user writes (scenarios, topology files, studies, campaigns, and the links a study
names): the base they share, the value checks several of them use, and one way to say what is wrong. A file is
checked whole before anything runs; an unknown key or a bad value is one line that names the file, the line the key
is on (when it can be found) and the key's path:

    studies/x.toml:12: cells[2].buffer_pool: --buffer-pool must be from 32M to 1T; got 16M

A path counts list entries from 1, as a reader counts the [[cells]] of a file. Each loader raises the line as its
own exception (ScenarioError, TopologyFileError, StudyError, CampaignError), as before the models.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar, get_args

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationError

M = TypeVar("M", bound=BaseModel)
Loc = tuple[str | int, ...]
# pydantic's words for a value of the wrong TOML type, said as a file's reader would
TYPE_WORDS = {"model_type": "a table", "dict_type": "a table", "list_type": "a list", "tuple_type": "a list",
              "string_type": "a string", "int_type": "a whole number", "float_type": "a number",
              "bool_type": "true or false"}
SHOWN_CHARS = 60  # of a bad value quoted in a message
HEADER = re.compile(r"^\s*\[\[?[^\]=]*\]\]?\s*$")  # a [table] or [[table]] line, where the table above ends


class FileModel(BaseModel):
    """A table of a file: every key known (an unknown one is refused, not ignored), every value checked as TOML
    types it (strict: "5" is no number and true no whole number, as a typo is more likely than a wish), immutable
    once read."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    # what an unknown key in this table is told; "" lists the keys the table takes (a table of many says its own)
    unknown_key: ClassVar[str] = ""


class FieldError(ValueError):
    """A problem a check across keys finds, placed at the key it concerns (relative to the table the check is on):
    pydantic places a model validator's own errors on the whole table."""

    def __init__(self, loc: Loc, message: str) -> None:
        super().__init__(message)
        self.loc = loc


def validate(model: type[M], data: Any, where: str, source: str, error: type[Exception]) -> M:
    """The file's data as the model, or `error` with one line naming `where` (the file), the line and the key."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error(problem(exc, model, where, source)) from None


def problem(exc: ValidationError, model: type[BaseModel], where: str, source: str) -> str:
    """The first problem of a validation as one line (several unknown keys of one table count as one problem)."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc = _loc(first)
    if first["type"] == "extra_forbidden":
        same = [e for e in errors if e["type"] == "extra_forbidden" and _loc(e)[:-1] == loc[:-1]]
        keys: str | None = ", ".join(path(_loc(e)) for e in same)
        message = unknown_key(model, loc[:-1], len(same))
    else:
        same = [first]
        keys, message = None, _message(first)
    left = len(errors) - len(same)
    return located(where, source, loc, message + (f" (and {left} more problem(s))" if left else ""), keys)


def located(where: str, source: str, loc: Loc, message: str, keys: str | None = None) -> str:
    """'file:line: key.path: message' (no line when it cannot be found, no file when where is "")."""
    line = line_of(source, loc)
    keys = path(loc) if keys is None else keys
    return f"{f'{where}:{line}: ' if where and line else f'{where}: ' if where else ''}{f'{keys}: ' if keys else ''}" \
           f"{message}"


def _loc(error: Any) -> Loc:
    """Where an error is: pydantic's location, and below it a FieldError's own."""
    raised = (error.get("ctx") or {}).get("error")
    return tuple(error["loc"]) + (raised.loc if isinstance(raised, FieldError) else ())


def path(loc: Loc) -> str:
    """('cells', 1, 'rows') -> 'cells[2].rows' (entries counted from 1)."""
    out = ""
    for part in loc:
        out += f"[{part + 1}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out


def _message(error: Any) -> str:
    kind = error["type"]
    if kind == "missing":
        return "missing: this key is required"
    if kind in ("value_error", "assertion_error"):
        return str(error["ctx"]["error"])
    if kind == "too_short":
        return "must not be empty"
    wanted = f"must be {TYPE_WORDS[kind]}" if kind in TYPE_WORDS else \
        re.sub(r"^(Input|Value|List|String) should", "must", error["msg"])
    return f"{wanted}, got {shown(error['input'])}"


def shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 1] + "…"


def unknown_key(model: type[BaseModel], table: Loc, count: int = 1) -> str:
    """What an unknown key of the table at `table` is told: the table's own words, or the keys it takes."""
    found = model_at(model, table)
    if found is not None and found.unknown_key:  # type: ignore[attr-defined]
        return found.unknown_key  # type: ignore[attr-defined]
    known = sorted(f.alias or name for name, f in found.model_fields.items()) if found is not None else []
    return f"unknown key{'s' if count > 1 else ''}" + (f"; keys: {', '.join(known)}" if known else "")


def model_at(model: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    """The model of the table at loc (list indices skipped), None when loc leaves the models."""
    current: type[BaseModel] | None = model
    for part in loc:
        if isinstance(part, int):
            continue
        if current is None:
            return None
        field = next((f for name, f in current.model_fields.items() if (f.alias or name) == part), None)
        current = _inner_model(field.annotation) if field is not None else None
    return current


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for m in map(_inner_model, get_args(annotation)) if m is not None), None)


def line_of(source: str, loc: Loc) -> int | None:
    """The line (from 1) where the key at loc is written, or the nearest table around it; None when neither can
    be found (a key that is missing, a problem of the whole file). TOML keeps no positions: this reads the text,
    following [table] and [[table]] headers, inline tables and `key =` lines."""
    lines = [_code(line) for line in source.splitlines()]
    start, single, found = 0, False, None
    for i, part in enumerate(loc):
        if not isinstance(part, str):
            continue
        after = loc[i + 1] if i + 1 < len(loc) else None
        index = after if isinstance(after, int) else None
        at = _find(lines, start, single, part, index)
        if at is None:
            break
        found, (start, single) = at[0], at
    return None if found is None else found + 1


def _code(line: str) -> str:
    """A line without its comment (a '#' inside a string is rare enough in these files)."""
    return line.split("#", 1)[0]


def _find(lines: list[str], start: int, single: bool, key: str, index: int | None) -> tuple[int, bool] | None:
    """(line, whether the key's table is that one line) of `key` in the table that starts at line `start`: its
    [[key]] header (the index-th), its [key] header, or its `key =` line (in an inline array of tables, one a line,
    the index-th entry's)."""
    name = re.escape(key)
    assigned = re.compile(rf"(^|[{{,\s])\"?{name}\"?\s*=")
    if single:  # an inline table: the key is on its line or nowhere
        return (start, True) if assigned.search(lines[start]) else None
    headers = [n for n in range(start, len(lines)) if re.match(rf"^\s*\[\[\s*{name}\s*\]\]", lines[n])]
    if headers:
        return (headers[min(index or 0, len(headers) - 1)], False)
    table = next((n for n in range(start, len(lines)) if re.match(rf"^\s*\[\s*{name}\s*\]", lines[n])), None)
    if table is not None:
        return (table, False)
    end = next((n for n in range(start + 1, len(lines)) if HEADER.match(lines[n])), len(lines))
    at = next((n for n in range(start, end) if assigned.search(lines[n])), None)
    if at is None or index is None:
        return None if at is None else (at, False)
    entries = [n for n in range(at, end) if "{" in lines[n]]
    return (entries[index], True) if index < len(entries) else (at, False)


# value checks several models share (Annotated[type, check] in a model)

def one_of(choices: Sequence[str]) -> AfterValidator:
    def check(value: str) -> str:
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}; got {value!r}")
        return value

    return AfterValidator(check)


def between(low: float, high: float) -> AfterValidator:
    def check(value: float) -> float:
        if not low <= value <= high:
            raise ValueError(f"must be from {_number(low)} to {_number(high)}, got {_number(value)}")
        return value

    return AfterValidator(check)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def http_url(what: str) -> AfterValidator:
    """A URL of http(s), or "" for none."""
    def check(value: str) -> str:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(f"must be {what}; got {value!r}")
        return value

    return AfterValidator(check)


def duration(parse: Callable[[str], float]) -> BeforeValidator:
    """'60s', '500ms' -> seconds by `parse` (config.parse_duration: passed in, as config imports the topology
    file's module, which imports this one)."""
    def check(value: Any) -> float:
        if not isinstance(value, str):
            raise ValueError(f"must be a duration such as 60s or 500ms, got {shown(value)}")
        return parse(value)

    return BeforeValidator(check)


def checked_by(parse: Callable[[Any], Any]) -> AfterValidator:
    """A value checked by the parser that already checks it elsewhere (a flag's, a setting's), kept as given."""
    def check(value: Any) -> Any:
        parse(value)
        return value

    return AfterValidator(check)
