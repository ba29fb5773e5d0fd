"""Targets: vegeta JSON targets generated from the actual dataset, deterministic from the seed.

Ids are drawn uniformly over the table's real id range; name prefixes are cut from the rows behind those ids (so
searches follow the data's own name distribution and always match something); update bodies carry fresh values
taken from other random rows (so indexed columns really change).
"""

from __future__ import annotations

import base64
import random
import urllib.parse
from pathlib import Path
from typing import Any

import orjson

from . import sql
from .config import Settings
from .scenario import Scenario

FETCH_BATCH = 5000


def sample_rows(settings: Settings, schema: str, ids: list[int]) -> dict[int, tuple[str, str, str]]:
    """(first_name, last_name, city) of the given ids, read from a replica in batches."""
    wanted = sorted(set(ids))
    rows: dict[int, tuple[str, str, str]] = {}
    with sql.admin(settings.replicas[0], settings) as cur:
        for start in range(0, len(wanted), FETCH_BATCH):
            batch = wanted[start:start + FETCH_BATCH]
            marks = ",".join(["%s"] * len(batch))
            cur.execute(f"SELECT id, first_name, last_name, city FROM {schema}.accounts WHERE id IN ({marks})",
                        batch)
            for account_id, first, last, city in cur.fetchall():
                rows[int(account_id)] = (first, last, city)
    return rows


def id_range(settings: Settings, schema: str) -> int:
    max_id = sql.query_one(settings.replicas[0], settings, f"SELECT MAX(id) FROM {schema}.accounts")
    if not max_id:
        raise ValueError(f"{schema}.accounts is empty: build the dataset first")
    return int(max_id)


def generate(settings: Settings, scenario: Scenario, base_url: str, path: Path) -> dict[str, Any]:
    """Write scenario.target_count JSON targets to path; returns a description for meta.json."""
    rng = random.Random(f"{settings.seed}:{scenario.name}")
    max_id = id_range(settings, scenario.schema)
    endpoints = [r.endpoint for r in scenario.requests]
    weights = [r.weight for r in scenario.requests]
    plan = rng.choices(endpoints, weights=weights, k=scenario.target_count)
    ids = [rng.randint(1, max_id) for _ in plan]
    donors = [rng.randint(1, max_id) for _ in plan]  # rows whose values an update copies
    needs_rows = any(e in ("find_users", "update_user") for e in endpoints)
    rows = sample_rows(settings, scenario.schema, ids + donors) if needs_rows else {}
    schema_q = urllib.parse.quote(scenario.schema)
    counts: dict[str, int] = {}
    with open(path, "wb") as out:
        for endpoint, account_id, donor in zip(plan, ids, donors):
            target = _target(endpoint, account_id, donor, rows, scenario, base_url, schema_q, rng, max_id)
            if target is None:
                continue
            counts[endpoint] = counts.get(endpoint, 0) + 1
            out.write(orjson.dumps(target) + b"\n")
    return {"file": path.name, "count": sum(counts.values()), "per_endpoint": counts, "max_id": max_id,
            "seed": settings.seed}


def _target(endpoint: str, account_id: int, donor: int, rows: dict[int, tuple[str, str, str]],
            scenario: Scenario, base_url: str, schema_q: str, rng: random.Random,
            max_id: int) -> dict[str, Any] | None:
    if endpoint == "constant":
        return {"method": "GET", "url": f"{base_url}/constant"}
    if endpoint == "get_user":
        return {"method": "GET", "url": f"{base_url}/users/{account_id}?schema={schema_q}"}
    if endpoint == "find_users":
        row = rows.get(account_id)
        if row is None:
            return None
        query = urllib.parse.urlencode({"first_name": row[0][:scenario.first_prefix],
                                        "last_name": row[1][:scenario.last_prefix], "schema": scenario.schema})
        return {"method": "GET", "url": f"{base_url}/find_users?{query}"}
    if endpoint == "update_user":
        source = rows.get(donor)
        if source is None:
            return None
        fresh = {"first_name": source[0], "last_name": source[1], "city": source[2],
                 "interests": interests_value(rng, scenario.wide_bytes)}
        body = {"id": account_id, **{name: fresh[name] for name in scenario.update_fields}}
        return {"method": "POST", "url": f"{base_url}/update_user?schema={schema_q}",
                "body": base64.b64encode(orjson.dumps(body)).decode(),
                "header": {"Content-Type": ["application/json"]}}
    if endpoint == "update_users":
        first = max(1, min(account_id, max_id - scenario.bulk_rows + 1))
        body = {"from_id": first, "count": scenario.bulk_rows,
                "interests": interests_value(rng, scenario.wide_bytes)}
        return {"method": "POST", "url": f"{base_url}/update_users?schema={schema_q}",
                "body": base64.b64encode(orjson.dumps(body)).decode(),
                "header": {"Content-Type": ["application/json"]}}
    raise ValueError(f"unknown endpoint {endpoint}")


def interests_value(rng: random.Random, wide_bytes: int) -> str:
    """A fresh interests value: two of the list, or about wide_bytes of them for a wide-row write (always new,
    so the row really changes and ROW logs it)."""
    if not wide_bytes:
        return ",".join(sorted(rng.sample(INTERESTS, 2)))
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < wide_bytes:
        words.append(f"{rng.choice(INTERESTS)}{rng.randrange(10_000)}")
    return ",".join(words)[:wide_bytes]


INTERESTS = ("music", "movies", "books", "travel", "cooking", "hiking", "running", "chess", "yoga", "tennis")
