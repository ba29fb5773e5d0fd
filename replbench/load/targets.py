"""Targets: vegeta JSON targets generated from the actual dataset.

The seed fixes what a run asks for (the plan of endpoints and the ids); a per-run nonce, recorded in meta.json,
fixes the values an update writes, so seed + nonce replays a run and every new run writes new values. Ids are
drawn uniformly over the table's real id range; name prefixes are cut from the rows behind those ids (so searches
follow the data's own name distribution and always match something). An update never writes the value its row
holds: the target rows' current first_name, last_name and city are read when the targets are built, and a donor
row (whose values an update copies) that matches any of them, or any value an earlier target of the run gives
that row, is passed over, and so is a donor whose names the app would refuse (a row written by hand outside the
app's rules): its update would fail with a 400. interests values carry a fresh tag drawn from the nonce, so no
run rewrites another's.
"""

from __future__ import annotations

import base64
import math
import random
import secrets
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..core import sql
from ..core.config import MAX_CITY, MAX_NAME, MAX_PREFIX, NAME_RE, Settings
from ..core.results import Targets
from ..core.scenario import WRITE_ENDPOINTS, Scenario

FETCH_BATCH = 5000
DONOR_TRIES = 50  # donors tried per update before one that matches the row is taken anyway (and counted)
TARGET_HEADROOM = 1.05  # a write run's targets cover rate × duration with this margin: vegeta loops the file,
#                         and a second pass would write the values of the first one again
NAME_FIELDS = ("first_name", "last_name", "city")  # the columns a donor row gives (all three indexed in bench_idx)
NAME_LIMITS = (MAX_NAME, MAX_NAME, MAX_CITY)
Row = tuple[str, str, str]


def accepted(value: str, max_len: int) -> bool:
    """Whether the app takes this value for a name or a city (app/validation checks the same, after strip)."""
    value = value.strip()
    return 0 < len(value) <= max_len and NAME_RE.match(value) is not None


def new_nonce() -> str:
    return secrets.token_hex(8)


def sample_rows(settings: Settings, schema: str, ids: list[int]) -> dict[int, Row]:
    """(first_name, last_name, city) of the given ids, read from a replica in batches."""
    wanted = sorted(set(ids))
    rows: dict[int, Row] = {}
    with sql.admin(settings.replicas[0], settings) as cur:
        for start in range(0, len(wanted), FETCH_BATCH):
            batch = wanted[start:start + FETCH_BATCH]
            marks = ",".join(["%s"] * len(batch))
            cur.execute(f"SELECT id, first_name, last_name, city FROM {schema}.accounts WHERE id IN ({marks})",
                        batch)
            for account_id, first, last, city in sql.fetch_all(cur):
                rows[int(account_id)] = (first, last, city)
    return rows


def id_range(settings: Settings, schema: str) -> int:
    max_id = sql.query_one(settings.replicas[0], settings, f"SELECT MAX(id) FROM {schema}.accounts")
    if not max_id:
        raise ValueError(f"{schema}.accounts is empty: build the dataset first")
    return int(max_id)


def target_count(scenario: Scenario, rate: int | None = None, duration: float | None = None) -> int:
    """What the run sends, with a margin: for a write run always (every request sent is a fresh value, and the
    rows read to build the targets are only those: 100,000 targets at 8M read 200,000 rows, ~7 s); for a read run
    at most the scenario's count, which vegeta loops over (a short run need not wait for all of them)."""
    if not rate or not duration:
        return scenario.target_count
    sent = math.ceil(rate * duration * TARGET_HEADROOM)
    return sent if scenario.writes else min(sent, scenario.target_count)


def write_bodies(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON body of each write in a targets file, in the order vegeta sends them."""
    with open(path, "rb") as handle:
        for line in handle:
            target = orjson.loads(line)
            if target.get("method") == "POST":
                yield orjson.loads(base64.b64decode(target["body"]))


def written_ids(path: Path) -> list[int]:
    """Every row id a targets file's writes name (update_user's id, update_users' from_id .. from_id+count-1)."""
    ids: list[int] = []
    for body in write_bodies(path):
        if "id" in body:
            ids.append(int(body["id"]))
        else:
            ids.extend(range(int(body["from_id"]), int(body["from_id"]) + int(body["count"])))
    return ids


@dataclass
class _Values:
    """The values an update run writes: donors drawn with the nonce's generator, never a row's own values."""

    rng: random.Random
    fields: tuple[str, ...]
    rows: dict[int, Row]
    donors: list[int]
    written: dict[int, list[Row]] = field(default_factory=dict)  # id -> values the row holds or is given
    matched: int = 0  # updates whose every donor tried matched the row (the check will count them)
    retried: int = 0
    refused: int = 0  # donors passed over because the app would refuse their names
    searches_refused: int = 0  # find_users targets left out: their row's name prefix is not one the app accepts

    def fresh(self, account_id: int) -> Row | None:
        held = self.written.setdefault(account_id, [self.rows[account_id]] if account_id in self.rows else [])
        if not held:
            return None  # the row was not found (a hole in the ids)
        checked = [NAME_FIELDS.index(f) for f in self.fields if f in NAME_FIELDS]
        choice: Row | None = None
        for attempt in range(DONOR_TRIES):
            donor = self.rows.get(self.rng.choice(self.donors))
            if donor is None:
                continue
            if not all(accepted(donor[i], NAME_LIMITS[i]) for i in checked):
                self.refused += 1
                continue
            choice = donor
            if all(donor[i] != row[i] for row in held for i in checked):
                self.retried += attempt
                break
        else:
            if choice is not None:
                self.matched += 1
        if choice is not None:
            held.append(choice)
        return choice


def generate(settings: Settings, scenario: Scenario, base_url: str, path: Path, *, rate: int | None = None,
             duration: float | None = None, nonce: str | None = None) -> Targets:
    """Write the run's JSON targets to path; returns their description for meta.json (nonce included)."""
    nonce = nonce or new_nonce()
    plan_rng = random.Random(f"{settings.seed}:{scenario.name}")  # the seed fixes the plan and the ids
    values_rng = random.Random(f"{settings.seed}:{scenario.name}:{nonce}")  # the nonce, the values written
    count = target_count(scenario, rate, duration)
    max_id = id_range(settings, scenario.schema)
    endpoints = [r.endpoint for r in scenario.requests]
    weights = [r.weight for r in scenario.requests]
    plan = plan_rng.choices(endpoints, weights=weights, k=count)
    ids = [plan_rng.randint(1, max_id) for _ in plan]
    updates = [i for e, i in zip(plan, ids) if e == "update_user"]
    donors = [values_rng.randint(1, max_id) for _ in range(len(updates) + DONOR_TRIES)] if updates else []
    searched = [i for e, i in zip(plan, ids) if e == "find_users"]
    rows = sample_rows(settings, scenario.schema, searched + updates + donors) if searched or updates else {}
    values = _Values(values_rng, scenario.update_fields, rows, donors)
    schema_q = urllib.parse.quote(scenario.schema)
    counts: dict[str, int] = {}
    with open(path, "wb") as out:
        for endpoint, account_id in zip(plan, ids):
            target = _target(endpoint, account_id, values, scenario, base_url, schema_q, max_id)
            if target is None:
                continue
            counts[endpoint] = counts.get(endpoint, 0) + 1
            out.write(orjson.dumps(target) + b"\n")
    return Targets(file=path.name, count=sum(counts.values()), per_endpoint=counts, max_id=max_id,
                   seed=settings.seed, nonce=nonce, writes=any(e in WRITE_ENDPOINTS for e in counts),
                   update_fields=list(scenario.update_fields) if updates else [],
                   values_matching_the_row=values.matched, donors_passed_over=values.retried,
                   donors_the_app_would_refuse=values.refused, searches_the_app_would_refuse=values.searches_refused)


def _target(endpoint: str, account_id: int, values: _Values, scenario: Scenario, base_url: str, schema_q: str,
            max_id: int) -> dict[str, Any] | None:
    if endpoint == "constant":
        return {"method": "GET", "url": f"{base_url}/constant"}
    if endpoint == "get_user":
        return {"method": "GET", "url": f"{base_url}/users/{account_id}?schema={schema_q}"}
    if endpoint == "find_users":
        row = values.rows.get(account_id)
        if row is None:
            return None
        first, last = row[0][:scenario.first_prefix], row[1][:scenario.last_prefix]
        if not (accepted(first, MAX_PREFIX) and accepted(last, MAX_PREFIX)):
            values.searches_refused += 1
            return None
        query = urllib.parse.urlencode({"first_name": first, "last_name": last, "schema": scenario.schema})
        return {"method": "GET", "url": f"{base_url}/find_users?{query}"}
    if endpoint == "update_user":
        source = values.fresh(account_id) if set(scenario.update_fields) & set(NAME_FIELDS) else \
            values.rows.get(account_id)
        if source is None:
            return None
        fresh = {"first_name": source[0], "last_name": source[1], "city": source[2],
                 "interests": interests_value(values.rng, scenario.wide_bytes)}
        body = {"id": account_id, **{name: fresh[name] for name in scenario.update_fields}}
        return _post(f"{base_url}/update_user?schema={schema_q}", body)
    if endpoint == "update_users":
        from_id = max(1, min(account_id, max_id - scenario.bulk_rows + 1))
        body = {"from_id": from_id, "count": scenario.bulk_rows,
                "interests": interests_value(values.rng, scenario.wide_bytes)}
        return _post(f"{base_url}/update_users?schema={schema_q}", body)
    raise ValueError(f"unknown endpoint {endpoint}")


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"method": "POST", "url": url, "body": base64.b64encode(orjson.dumps(body)).decode(),
            "header": {"Content-Type": ["application/json"]}}


def interests_value(rng: random.Random, wide_bytes: int) -> str:
    """A fresh interests value: two of the list, or about wide_bytes of them for a wide-row write, ending with a
    tag drawn from the run's generator, so no row is given the value it holds and ROW logs every change."""
    tag = f"tag{rng.getrandbits(40):010x}"
    if not wide_bytes:
        return ",".join([*sorted(rng.sample(INTERESTS, 2)), tag])
    words: list[str] = [tag]
    while sum(len(w) + 1 for w in words) < wide_bytes:
        words.append(f"{rng.choice(INTERESTS)}{rng.randrange(10_000)}")
    return ",".join(words)[:wide_bytes]


INTERESTS = ("music", "movies", "books", "travel", "cooking", "hiking", "running", "chess", "yoga", "tennis")
