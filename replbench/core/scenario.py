"""Scenarios: the declarative TOML files in scenarios/, loaded and validated into a Scenario.

A scenario names its requests (endpoint + weight), the schema, how targets are generated, the default duration and
sweep ladder, and the pass criteria of a sweep step. Adding a scenario is adding a file; no code changes.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import (
    MAX_BULK_ROWS,
    MAX_CATCH_UP,
    MAX_P99,
    MIN_RATE_RATIO,
    MIN_SUCCESS,
    SCENARIO_DIR,
    SCHEMAS,
    parse_duration,
)

ENDPOINTS = ("find_users", "get_user", "update_user", "update_users", "constant")
WRITE_ENDPOINTS = ("update_user", "update_users", "users")  # users: POST /users (create)
UPDATABLE = ("first_name", "last_name", "city", "interests")
# what a scenario file need not say, as a file would spell it: (table, key) -> default ("" is the top level)
DEFAULTS: dict[tuple[str, str], Any] = {
    ("", "duration"): "60s", ("requests", "weight"): 1, ("targets", "count"): 100_000,
    ("targets", "first_prefix"): 4, ("targets", "last_prefix"): 3,
    ("targets", "update_fields"): ["first_name", "last_name", "city"],
    ("pass", "min_success"): MIN_SUCCESS, ("pass", "min_rate_ratio"): MIN_RATE_RATIO,
    ("pass", "max_p99"): f"{MAX_P99:g}s", ("pass", "max_catch_up"): f"{MAX_CATCH_UP:g}s",
}


class ScenarioError(Exception):
    """A scenario file is missing or invalid; the message names the file and the problem."""


@dataclass(frozen=True)
class Request:
    endpoint: str
    weight: float


@dataclass(frozen=True)
class PassCriteria:
    """What a sweep step must meet to pass."""

    min_success: float = MIN_SUCCESS
    min_rate_ratio: float = MIN_RATE_RATIO
    max_p99: float = MAX_P99  # seconds
    max_catch_up: float = MAX_CATCH_UP  # seconds after the last request was sent

    def describe(self) -> str:
        return (f"success ≥ {self.min_success:.1%}, achieved rate ≥ {self.min_rate_ratio:.0%} of asked, "
                f"p99 ≤ {self.max_p99 * 1000:g} ms, replicas caught up ≤ {self.max_catch_up:g} s after the step")


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    schema: str
    requests: tuple[Request, ...]
    duration: float
    rates: tuple[int, ...]
    target_count: int
    first_prefix: int
    last_prefix: int
    update_fields: tuple[str, ...]
    criteria: PassCriteria
    bulk_rows: int = 100  # rows one update_users request changes
    wide_bytes: int = 0  # length of the interests value an update writes (0: a short list)
    catch_up_timeout: float | None = None  # cap on the catch-up wait (None: the default)
    faults: tuple[str, ...] = ()  # ACTION:NODE@TIME, carried out during every run of the scenario
    max_lag: float | None = None  # [app] max_lag: lag-aware reads for this scenario (REPLBENCH_MAX_LAG)
    source: str = field(repr=False, default="")

    @property
    def writes(self) -> bool:
        return any(r.endpoint in WRITE_ENDPOINTS for r in self.requests)


def available() -> list[str]:
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.toml"))


def load(name: str, folder: Path = SCENARIO_DIR) -> Scenario:
    path = folder / f"{name}.toml"
    if not path.exists():
        raise ScenarioError(f"unknown scenario {name!r}; scenarios: {', '.join(available())}")
    source = path.read_text()
    try:
        data = tomllib.loads(source)
        return _build(name, data, source)
    except (tomllib.TOMLDecodeError, ValueError, KeyError, TypeError) as exc:
        raise ScenarioError(f"{path}: {exc}") from exc


def _build(name: str, data: dict[str, Any], source: str) -> Scenario:
    schema = data["schema"]
    if schema not in SCHEMAS:
        raise ValueError(f"schema must be one of {SCHEMAS}")
    weight = DEFAULTS[("requests", "weight")]
    requests = tuple(Request(r["endpoint"], float(r.get("weight", weight))) for r in data["requests"])
    if not requests:
        raise ValueError("at least one [[requests]] entry is needed")
    for r in requests:
        if r.endpoint not in ENDPOINTS or r.weight <= 0:
            raise ValueError(f"request {r.endpoint!r}: endpoint must be one of {ENDPOINTS}, weight > 0")
    targets = data.get("targets", {})
    fields = tuple(targets.get("update_fields", DEFAULTS[("targets", "update_fields")]))
    if not set(fields) <= set(UPDATABLE) or not fields:
        raise ValueError(f"targets.update_fields must be a non-empty subset of {UPDATABLE}")
    rates = tuple(int(r) for r in data.get("rates", (200, 500, 1000, 2000, 3000, 4000, 5000)))
    if not rates or any(r <= 0 for r in rates):
        raise ValueError("rates must be positive integers")
    crit = data.get("pass", {})
    criteria = PassCriteria(
        min_success=float(crit.get("min_success", DEFAULTS[("pass", "min_success")])),
        min_rate_ratio=float(crit.get("min_rate_ratio", DEFAULTS[("pass", "min_rate_ratio")])),
        max_p99=parse_duration(crit.get("max_p99", DEFAULTS[("pass", "max_p99")])),
        max_catch_up=parse_duration(crit.get("max_catch_up", DEFAULTS[("pass", "max_catch_up")])))
    return Scenario(
        name=name, description=str(data.get("description", "")), schema=schema, requests=requests,
        duration=parse_duration(data.get("duration", DEFAULTS[("", "duration")])), rates=tuple(sorted(set(rates))),
        target_count=int(targets.get("count", DEFAULTS[("targets", "count")])),
        first_prefix=int(targets.get("first_prefix", DEFAULTS[("targets", "first_prefix")])),
        last_prefix=int(targets.get("last_prefix", DEFAULTS[("targets", "last_prefix")])), update_fields=fields,
        criteria=criteria, source=source,
        bulk_rows=_bounded(targets.get("bulk_rows", 100), 1, MAX_BULK_ROWS, "targets.bulk_rows"),
        wide_bytes=_bounded(targets.get("wide_bytes", 0), 0, 4000, "targets.wide_bytes"),
        catch_up_timeout=parse_duration(data["catch_up_timeout"]) if "catch_up_timeout" in data else None,
        faults=tuple(str(f) for f in data.get("faults", ())),
        max_lag=parse_duration(data["app"]["max_lag"]) if "max_lag" in data.get("app", {}) else None)


def _bounded(value: Any, low: int, high: int, what: str) -> int:
    number = int(value)
    if not low <= number <= high:
        raise ValueError(f"{what} must be from {low} to {high}")
    return number
