"""Scenarios: the declarative TOML files in scenarios/, loaded and validated into a Scenario.

A scenario names its requests (endpoint + weight), the schema, how targets are generated, the default duration and
sweep ladder, and the pass criteria of a sweep step. Adding a scenario is adding a file; no code changes.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import SCENARIO_DIR, SCHEMAS

ENDPOINTS = ("find_users", "get_user", "update_user")
WRITE_ENDPOINTS = ("update_user",)
UPDATABLE = ("first_name", "last_name", "city", "interests")
DURATION_RE = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h)$")
UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


class ScenarioError(Exception):
    """A scenario file is missing or invalid; the message names the file and the problem."""


def parse_duration(text: str) -> float:
    """'60s', '90m', '1h', '500ms' -> seconds (a positive number)."""
    match = DURATION_RE.match(str(text).strip())
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"bad duration {text!r}: use a positive number with ms, s, m or h (e.g. 60s, 90m)")
    return float(match.group(1)) * UNIT_SECONDS[match.group(2)]


@dataclass(frozen=True)
class Request:
    endpoint: str
    weight: float


@dataclass(frozen=True)
class PassCriteria:
    """What a sweep step must meet to pass."""

    min_success: float = 0.999
    min_rate_ratio: float = 0.99
    max_p99: float = 1.0  # seconds
    max_catch_up: float = 30.0  # seconds after the step for the replicas to catch up

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
    requests = tuple(Request(r["endpoint"], float(r.get("weight", 1))) for r in data["requests"])
    if not requests:
        raise ValueError("at least one [[requests]] entry is needed")
    for r in requests:
        if r.endpoint not in ENDPOINTS or r.weight <= 0:
            raise ValueError(f"request {r.endpoint!r}: endpoint must be one of {ENDPOINTS}, weight > 0")
    targets = data.get("targets", {})
    fields = tuple(targets.get("update_fields", ("first_name", "last_name", "city")))
    if not set(fields) <= set(UPDATABLE) or not fields:
        raise ValueError(f"targets.update_fields must be a non-empty subset of {UPDATABLE}")
    rates = tuple(int(r) for r in data.get("rates", (200, 500, 1000, 2000, 3000, 4000, 5000)))
    if not rates or any(r <= 0 for r in rates):
        raise ValueError("rates must be positive integers")
    crit = data.get("pass", {})
    criteria = PassCriteria(
        min_success=float(crit.get("min_success", PassCriteria.min_success)),
        min_rate_ratio=float(crit.get("min_rate_ratio", PassCriteria.min_rate_ratio)),
        max_p99=parse_duration(crit.get("max_p99", "1s")),
        max_catch_up=parse_duration(crit.get("max_catch_up", "30s")))
    return Scenario(
        name=name, description=str(data.get("description", "")), schema=schema, requests=requests,
        duration=parse_duration(data.get("duration", "60s")), rates=tuple(sorted(set(rates))),
        target_count=int(targets.get("count", 100_000)), first_prefix=int(targets.get("first_prefix", 4)),
        last_prefix=int(targets.get("last_prefix", 3)), update_fields=fields, criteria=criteria, source=source)
