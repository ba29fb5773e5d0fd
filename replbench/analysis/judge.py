"""A run judged from what it recorded: its guards (the warnings the block prints: the scenario's pass criteria
broken, saturation, a replica not replicating or not caught up, rows that did not change, an unsettled start, a
setting not in effect, a fault, diverged replicas, errors) and its final status. A pure function over the summary
and meta.json, so a run, a test or a later re-reading judge alike; a sweep step's verdict uses the same criteria
(verdicts.breaches)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.config import HOST_SATURATED, VEGETA_SATURATED
from ..core.records import STATUS_FAILED, STATUS_INTERRUPTED, STATUS_OK, STATUS_WARNING
from ..measure import health, rowcheck
from . import verdicts
from .studymetrics import CRITERIA_GUARD
from .summary import nodes_lost


@dataclass(frozen=True)
class RunFacts:
    """What the judge needs beyond the recorded files: the scenario's criteria, the run's settings and errors."""

    criteria: Any  # core.scenario.PassCriteria
    rate: int
    catch_up_timeout: float
    cores: int
    planned_nodes: frozenset[str] = frozenset()  # nodes a planned fault acts on
    attack_start_s: float = 0.0  # on the run's clock: when faults are described from
    errors: tuple[str, ...] = ()


def judge(summary: dict[str, Any], meta: dict[str, Any], facts: RunFacts,
          status: str) -> tuple[list[str], list[str], str]:
    """(guards, saturation, status): the guards already in the summary and the run's own, what saturated, and the
    status they leave (a warning turns ok into ok-with-warnings; an unplanned node loss or an error, FAILED)."""
    guards = list(summary.get("guards") or [])
    saturation = list(summary.get("saturation") or [])
    if "rate_sent" in summary:  # the scenario's pass criteria, judged as a sweep step would be
        guards += [f"{CRITERIA_GUARD}: {text}" for text in verdicts.breaches(summary, facts.criteria, facts.rate)
                   if not text.startswith("replicas caught up")]  # a replica's catch-up: said per replica below
    if summary.get("client_errors"):
        guards.append(f"{summary['client_errors']:,} requests failed inside the load generator "
                      "(ports/files): a client-side limit, not the server's")
    _saturation(summary, facts.cores, guards, saturation)
    for name in summary.get("replicas_not_replicating", []):
        guards.append(f"{name} was not replicating during the run"
                      + (" (a planned fault)" if name in facts.planned_nodes else ""))
    if summary.get("rows_checked"):
        unchanged = rowcheck.guard(summary["rows_checked"], summary.get("success"))
        if unchanged:
            guards.append(unchanged)
    guards += _setup_guards(summary, meta)
    guards += _catch_up_guards(summary, facts)
    seen = nodes_lost(summary)
    for text, fault in zip(health.describe_faults(seen, facts.attack_start_s), seen):
        guards.append(f"fault: {text}")
        if not fault.get("planned"):
            status = STATUS_FAILED if status != STATUS_INTERRUPTED else status
    guards += _consistency_guards(summary)
    guards += [f"error: {error}" for error in facts.errors]
    if facts.errors and status in (STATUS_OK, STATUS_WARNING):
        status = STATUS_FAILED
    if guards and status == STATUS_OK:
        status = STATUS_WARNING
    return guards, saturation, status


def _saturation(summary: dict[str, Any], cores: int, guards: list[str], saturation: list[str]) -> None:
    means = summary.get("cpu_mean_percent", {})
    if means.get("host_busy", 0) > HOST_SATURATED * 100 * cores:
        text = f"host CPU saturated ({means['host_busy']:.0f} % of {100 * cores} %)"
        saturation.append(text)
        guards.append(text + ": latencies include queueing for CPU; the numbers describe this box, not only "
                             "the database")
    if means.get("vegeta", 0) > VEGETA_SATURATED:
        text = f"vegeta at {means['vegeta']:.0f} % of a core"
        saturation.append(text)
        guards.append(text + ": the load generator competes for CPU")


def _setup_guards(summary: dict[str, Any], meta: dict[str, Any]) -> list[str]:
    """An unsettled start, a setting not in effect, semi-sync falling back to async."""
    guards = []
    settle = meta.get("settle") or {}
    if settle and not settle.get("settled"):
        guards.append(f"started unsettled after {settle['waited_s']:g} s: {'; '.join(settle['why'])} (the "
                      "previous work may still cost CPU in this run)")
    for mismatch in meta.get("knob_mismatches") or []:
        guards.append(f"setting not in effect: {mismatch}")
    semi = ((summary.get("replication") or {}).get("nodes", {}).get("master") or {}).get("semi_sync")
    if semi and semi["fell_back"]:
        guards.append(f"semi-sync fell back to async for {semi['fell_back']:,} transactions")
    return guards


def _catch_up_guards(summary: dict[str, Any], facts: RunFacts) -> list[str]:
    """A replica that never caught up (within the run's timeout), or later than the scenario's limit."""
    guards = []
    limit = facts.criteria.max_catch_up
    for replica, took in (summary.get("catch_up_s") or {}).items():
        if took is None:
            growth = ((summary.get("lag") or {}).get(replica) or {}).get("growth_s_per_s")
            guards.append(f"{replica} did not catch up within {facts.catch_up_timeout:g} s"
                          + (f"; lag grew {growth:.2f} s per s during the attack" if growth is not None else ""))
        elif took > limit:
            guards.append(f"{CRITERIA_GUARD}: {replica} caught up {took:.1f} s after the "
                          f"last request was sent (limit {limit:g} s)")
    return guards


def _consistency_guards(summary: dict[str, Any]) -> list[str]:
    guards = []
    consistency = summary.get("consistency") or {}
    if consistency.get("equal") is False:
        what = "CHECKSUM TABLE" if consistency.get("scope", "table") == "table" else "the written rows' checksum"
        guards.append(f"{what} differs between nodes after catch-up: replicas diverged — RUN FAILED")
    if consistency.get("missing"):
        guards.append(f"consistency checked without {', '.join(consistency['missing'])} (not answering)")
    return guards
