"""Scenarios: the declarative TOML files in scenarios/, loaded and validated into a Scenario.

A scenario names its requests (endpoint + weight), the schema, how targets are generated, the default duration and
sweep ladder, and the pass criteria of a sweep step. Adding a scenario is adding a file; no code changes. The file's
model (ScenarioFile, below) refuses an unknown key or a bad value, naming the file and the key (core/schema).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from .config import (
    MAX_BULK_ROWS,
    MAX_CATCH_UP,
    MAX_LAG_GROWTH,
    MAX_LAG_P99,
    MAX_P99,
    MIN_RATE_RATIO,
    MIN_SUCCESS,
    SCENARIO_DIR,
    SCHEMAS,
    parse_duration,
)
from .schema import FileModel, between, duration, one_of, validate

ENDPOINTS = ("find_users", "get_user", "update_user", "update_users", "constant")
WRITE_ENDPOINTS = ("update_user", "update_users", "users")  # users: POST /users (create)
UPDATABLE = ("first_name", "last_name", "city", "interests")
RATES = (200, 500, 1000, 2000, 3000, 4000, 5000)  # the sweep ladder of a file that gives none
# what a scenario file need not say, as a file would spell it: (table, key) -> default ("" is the top level)
DEFAULTS: dict[tuple[str, str], Any] = {
    ("", "duration"): "60s", ("requests", "weight"): 1, ("targets", "count"): 100_000,
    ("targets", "first_prefix"): 4, ("targets", "last_prefix"): 3,
    ("targets", "update_fields"): ["first_name", "last_name", "city"],
    ("pass", "min_success"): MIN_SUCCESS, ("pass", "min_rate_ratio"): MIN_RATE_RATIO,
    ("pass", "max_p99"): f"{MAX_P99:g}s", ("pass", "max_catch_up"): f"{MAX_CATCH_UP:g}s",
    ("pass", "max_lag_p99"): f"{MAX_LAG_P99:g}s", ("pass", "max_lag_growth"): MAX_LAG_GROWTH,
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
    max_lag_p99: float = MAX_LAG_P99  # seconds: each replica's lag p99 during the step
    max_lag_growth: float = MAX_LAG_GROWTH  # seconds of lag per second: each replica's lag slope during the step

    def describe(self) -> str:
        return (f"success ≥ {self.min_success:.1%}, goodput ≥ {self.min_rate_ratio:.0%} of the rate asked, "
                f"p99 ≤ {self.max_p99 * 1000:g} ms, replicas kept up during the step (lag p99 ≤ "
                f"{self.max_lag_p99 * 1000:g} ms, lag growing < {self.max_lag_growth:g} s per s) and caught up "
                f"≤ {self.max_catch_up:g} s after it")


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
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{path}: {exc}") from None
    return validate(ScenarioFile, data, str(path), source, ScenarioError).scenario(name, source)


# The file's model: what each table takes, its defaults (DEFAULTS, as a file spells them) and its checks.

DURATION = duration(parse_duration)


class RequestTable(FileModel):
    endpoint: Annotated[str, one_of(ENDPOINTS)]
    weight: float = Field(default=DEFAULTS[("requests", "weight")], gt=0, validate_default=True)


class TargetsTable(FileModel):
    count: int = Field(default=DEFAULTS[("targets", "count")], ge=1)
    first_prefix: int = Field(default=DEFAULTS[("targets", "first_prefix")], ge=1)
    last_prefix: int = Field(default=DEFAULTS[("targets", "last_prefix")], ge=1)
    update_fields: list[Annotated[str, one_of(UPDATABLE)]] = Field(
        default=DEFAULTS[("targets", "update_fields")], min_length=1)
    bulk_rows: Annotated[int, between(1, MAX_BULK_ROWS)] = 100
    wide_bytes: Annotated[int, between(0, 4000)] = 0


class PassTable(FileModel):
    min_success: Annotated[float, between(0, 1)] = DEFAULTS[("pass", "min_success")]
    min_rate_ratio: Annotated[float, between(0, 1)] = DEFAULTS[("pass", "min_rate_ratio")]
    max_p99: Annotated[float, DURATION] = Field(default=DEFAULTS[("pass", "max_p99")], validate_default=True)
    max_catch_up: Annotated[float, DURATION] = Field(default=DEFAULTS[("pass", "max_catch_up")], validate_default=True)
    max_lag_p99: Annotated[float, DURATION] = Field(default=DEFAULTS[("pass", "max_lag_p99")], validate_default=True)
    max_lag_growth: Annotated[float, between(0, 1)] = DEFAULTS[("pass", "max_lag_growth")]


class AppTable(FileModel):
    max_lag: Annotated[float, DURATION] | None = None


class ScenarioFile(FileModel):
    description: str = ""
    schema_: Annotated[str, one_of(SCHEMAS)] = Field(alias="schema")  # `schema` is a BaseModel attribute
    requests: list[RequestTable] = Field(min_length=1)
    duration: Annotated[float, DURATION] = Field(default=DEFAULTS[("", "duration")], validate_default=True)
    rates: list[Annotated[int, Field(gt=0)]] = Field(default=list(RATES), min_length=1)
    targets: TargetsTable = TargetsTable()
    pass_: PassTable = Field(default=PassTable(), alias="pass")  # `pass` is a keyword
    catch_up_timeout: Annotated[float, DURATION] | None = None
    faults: list[str] = []
    app: AppTable = AppTable()

    def scenario(self, name: str, source: str) -> Scenario:
        targets, crit = self.targets, self.pass_
        return Scenario(
            name=name, description=self.description, schema=self.schema_,
            requests=tuple(Request(r.endpoint, r.weight) for r in self.requests), duration=self.duration,
            rates=tuple(sorted(set(self.rates))), target_count=targets.count, first_prefix=targets.first_prefix,
            last_prefix=targets.last_prefix, update_fields=tuple(targets.update_fields),
            criteria=PassCriteria(crit.min_success, crit.min_rate_ratio, crit.max_p99, crit.max_catch_up,
                                  crit.max_lag_p99, crit.max_lag_growth),
            source=source, bulk_rows=targets.bulk_rows, wide_bytes=targets.wide_bytes,
            catch_up_timeout=self.catch_up_timeout, faults=tuple(self.faults), max_lag=self.app.max_lag)
