"""Input validation of the app: every client mistake becomes a ClientError (4xx with a JSON message).

Values are checked before any SQL runs, and only these fields ever reach SQL, always as parameters."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from replbench.core.config import MAX_BULK_ROWS, MAX_CITY, MAX_NAME, MAX_PREFIX, NAME_RE, SCHEMAS

EMAIL_RE = re.compile(r"^[^@\s]{1,64}@[A-Za-z0-9.-]{1,63}\.[A-Za-z]{2,}$")
MAX_INTERESTS = 4096  # a TEXT column: write-wide stores about 1 KB
MAX_EMAIL = 120
MAX_ID = 2**63 - 1
DEFAULT_LIMIT = 10
MAX_LIMIT = 100
GENDERS = ("f", "m", "x")
UPDATABLE = ("first_name", "last_name", "city", "interests", "birth_date", "gender", "email")
CREATE_REQUIRED = ("email", "first_name", "last_name", "birth_date", "gender", "city")


class ClientError(Exception):
    """A bad request: status (4xx) and a message safe to show the client."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def single_values(query: Any) -> dict[str, str]:
    """Query parameters as a plain dict; a parameter given twice is a client error."""
    values: dict[str, str] = {}
    for key, value in query.items():
        if key in values:
            raise ClientError(f"parameter {key} is given more than once")
        values[key] = value
    return values


def schema_of(query: Mapping[str, str]) -> str:
    schema = query.get("schema", "bench_idx")
    if schema not in SCHEMAS:
        raise ClientError(f"unknown schema {schema!r}; use one of {', '.join(SCHEMAS)}")
    return schema


def only_known(keys: Any, allowed: tuple[str, ...], what: str) -> None:
    unknown = sorted(set(keys) - set(allowed))
    if unknown:
        raise ClientError(f"unknown {what}: {', '.join(unknown)}")


def text(value: Any, field: str, max_len: int, pattern: re.Pattern[str] | None = None) -> str:
    if not isinstance(value, str):
        raise ClientError(f"{field} must be a string")
    value = value.strip()
    if not value:
        raise ClientError(f"{field} must not be empty")
    if len(value) > max_len:
        raise ClientError(f"{field} is too long (max {max_len} characters)")
    if pattern is not None and not pattern.match(value):
        raise ClientError(f"{field} has characters that are not allowed")
    return value


def positive_id(value: Any, field: str = "id") -> int:
    if isinstance(value, bool):
        raise ClientError(f"{field} must be a positive integer")
    if isinstance(value, str):
        if not value.isdigit():
            raise ClientError(f"{field} must be a positive integer")
        value = int(value)
    if not isinstance(value, int) or value <= 0 or value > MAX_ID:
        raise ClientError(f"{field} must be a positive integer")
    return value


def limit_of(query: Mapping[str, str]) -> int:
    raw = query.get("limit")
    if raw is None:
        return DEFAULT_LIMIT
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_LIMIT:
        raise ClientError(f"limit must be an integer from 1 to {MAX_LIMIT}")
    return int(raw)


def find_users_params(query: Mapping[str, str]) -> tuple[str, str, str, int]:
    only_known(query.keys(), ("first_name", "last_name", "limit", "schema"), "parameter")
    for name in ("first_name", "last_name"):
        if name not in query:
            raise ClientError(f"{name} is required")
    first = text(query["first_name"], "first_name", MAX_PREFIX, NAME_RE)
    last = text(query["last_name"], "last_name", MAX_PREFIX, NAME_RE)
    return schema_of(query), first, last, limit_of(query)


def date_value(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise ClientError(f"{field} must be a date YYYY-MM-DD")
    try:
        day = dt.date.fromisoformat(value)
    except ValueError:
        raise ClientError(f"{field} must be a date YYYY-MM-DD") from None
    if not dt.date(1900, 1, 1) <= day <= dt.date.today():
        raise ClientError(f"{field} is out of range")
    return day.isoformat()


def field_value(name: str, value: Any) -> Any:
    if name in ("first_name", "last_name"):
        return text(value, name, MAX_NAME, NAME_RE)
    if name == "city":
        return text(value, name, MAX_CITY, NAME_RE)
    if name == "interests":
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = ",".join(v.strip() for v in value)
        return text(value, name, MAX_INTERESTS)
    if name == "birth_date":
        return date_value(value, name)
    if name == "gender":
        if value not in GENDERS:
            raise ClientError(f"gender must be one of {', '.join(GENDERS)}")
        return value
    if name == "email":
        return text(value, name, MAX_EMAIL, EMAIL_RE).lower()
    raise ClientError(f"unknown field: {name}")


def json_object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ClientError("the body must be a JSON object")
    return body


def update_fields(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    only_known(body.keys(), ("id", *UPDATABLE), "field")
    if "id" not in body:
        raise ClientError("id is required")
    account_id = positive_id(body["id"])
    fields = {name: field_value(name, body[name]) for name in UPDATABLE if name in body}
    if not fields:
        raise ClientError(f"nothing to update: give at least one of {', '.join(UPDATABLE)}")
    return account_id, fields


BULK_FIELDS = ("city", "interests")


def bulk_update(body: dict[str, Any]) -> tuple[int, int, dict[str, Any]]:
    """POST /update_users: {"from_id": N, "count": K, "interests"/"city": value} -> (first id, count, fields)."""
    only_known(body.keys(), ("from_id", "count", *BULK_FIELDS), "field")
    if "from_id" not in body or "count" not in body:
        raise ClientError("from_id and count are required")
    first = positive_id(body["from_id"])
    count = body["count"]
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_BULK_ROWS:
        raise ClientError(f"count must be a whole number from 1 to {MAX_BULK_ROWS}")
    fields = {name: field_value(name, body[name]) for name in BULK_FIELDS if name in body}
    if not fields:
        raise ClientError(f"nothing to update: give at least one of {', '.join(BULK_FIELDS)}")
    return first, count, fields


def create_fields(body: dict[str, Any]) -> dict[str, Any]:
    only_known(body.keys(), UPDATABLE, "field")
    missing = [name for name in CREATE_REQUIRED if name not in body]
    if missing:
        raise ClientError(f"missing fields: {', '.join(missing)}")
    fields = {name: field_value(name, body[name]) for name in UPDATABLE if name in body}
    fields.setdefault("interests", "")
    return fields
