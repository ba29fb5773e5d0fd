"""A run judged from what it recorded: its guards (the warnings the block prints: the scenario's pass criteria
broken, saturation, a replica not replicating or not caught up, rows that did not change, an unsettled start, a
setting not in effect, a fault, diverged replicas, errors) and its final status. A pure function over the summary
and meta.json, so a run, a test or a later re-reading judge alike; the pass criteria and saturation are judged by
analysis/rules, the one evaluator a sweep step and a study unit are judged by too."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..core.config import ATTACKER_SKEW_WARN_MS, INDEXED_TABLE, SEARCH_INDEX, SEARCH_ROWS_GUARD
from ..core.nodenames import MASTER
from ..core.records import STATUS_FAILED, STATUS_INTERRUPTED, STATUS_OK, STATUS_WARNING
from ..core.results import RunMeta, RunSummary
from ..core.scenario import PassCriteria
from ..measure import health, rowcheck
from . import rules
from .rules import CRITERIA_GUARD


@dataclass(frozen=True)
class RunFacts:
    """What the judge needs beyond the recorded files: the scenario's criteria, the run's settings and errors."""

    criteria: PassCriteria
    rate: int
    catch_up_timeout: float
    cores: int
    planned_nodes: frozenset[str] = frozenset()  # nodes a planned fault acts on
    attack_start_s: float = 0.0  # on the run's clock: when faults are described from
    errors: tuple[str, ...] = ()
    searched: str | None = None  # the schema find_users searched with prefixes the read-rows guard holds to


Guard = Callable[[RunSummary, RunMeta, RunFacts], list[str]]


def judge(s: RunSummary, m: RunMeta, facts: RunFacts, status: str) -> tuple[list[str], list[str], str]:
    """(guards, saturation, status): the guards already in the summary and the run's own (GUARDS, in order), what
    saturated, and the status they leave (a warning turns ok into ok-with-warnings; an unplanned node loss or an
    error, FAILED)."""
    guards = list(s.guards or [])
    saturation = _saturation(s, facts)
    for check in GUARDS:
        guards += check(s, m, facts)
    if any(not f.planned for f in s.nodes_lost or []) and status != STATUS_INTERRUPTED:
        status = STATUS_FAILED
    if facts.errors and status in (STATUS_OK, STATUS_WARNING):
        status = STATUS_FAILED
    if guards and status == STATUS_OK:
        status = STATUS_WARNING
    return guards, [text for text, _ in saturation], status


def _criteria_guards(s: RunSummary, m: RunMeta, facts: RunFacts) -> list[str]:
    """The scenario's pass criteria, judged as a sweep step would be (a replica's catch-up: said per replica)."""
    if rules.goodput(s) is None:  # no client figures (the attack never ran): nothing to judge
        return []
    verdict = rules.judge(s, facts.criteria, facts.rate, cores=facts.cores, leave_out=("max_catch_up",))
    return [f"{CRITERIA_GUARD}: {t.text}" for t in verdict.tripped]


def _client_guards(s: RunSummary, m: RunMeta, facts: RunFacts) -> list[str]:
    return [f"{s.client_errors:,} requests failed inside the load generator (ports/files): a client-side limit, "
            "not the server's"] if s.client_errors else []


# what each saturation means for the run's figures, said after the rule's own sentence
SATURATION_MEANS = {"host_saturated": "latencies include queueing for CPU; the numbers describe this box, not only "
                                      "the database",
                    "vegeta_saturated": "the load generator competes for CPU"}


def _saturation(s: RunSummary, facts: RunFacts) -> list[tuple[str, str]]:
    """(what saturated, the guard that says so): analysis/rules' saturation notes (the host beyond HOST_SATURATED
    of its cores, vegeta beyond VEGETA_SATURATED of one core)."""
    notes = rules.judge(s, facts.criteria, facts.rate, cores=facts.cores, only=()).notes
    return [(n.text, f"{n.text}: {SATURATION_MEANS[n.rule]}") for n in notes if n.rule in rules.SATURATION]


def _saturation_guards(s: RunSummary, m: RunMeta, facts: RunFacts) -> list[str]:
    return [guard for _, guard in _saturation(s, facts)]


def _targets_guards(s: RunSummary, m: RunMeta, facts: RunFacts) -> list[str]:
    """vegeta sent its targets more than once (analysis/rules' targets_looped): the workload did not do what it says
    past them."""
    notes = rules.judge(s, facts.criteria, facts.rate, cores=facts.cores, only=()).notes
    return [n.text for n in notes if n.rule == "targets_looped"]


def _replication_guards(s: RunSummary, m: RunMeta, facts: RunFacts) -> list[str]:
    return [f"{name} was not replicating during the run" + (" (a planned fault)" if name in facts.planned_nodes
                                                             else "") for name in s.replicas_not_replicating or []]


def _row_guards(s: RunSummary, m: RunMeta, facts: RunFacts) -> list[str]:
    unchanged = rowcheck.guard(s.rows_checked, s.success) if s.rows_checked is not None else None
    return [unchanged] if unchanged else []


def _setup_guards(s: RunSummary, m: RunMeta, facts: RunFacts) -> list[str]:
    """An unsettled start, a setting not in effect, semi-sync falling back to async."""
    guards = []
    settle = m.settle
    if settle is not None and settle.settled is False:  # prepare.settle writes a bool, never null ({}: none)
        guards.append(f"started unsettled after {settle.waited_s:g} s: {'; '.join(settle.why or [])} (the "
                      "previous work may still cost CPU in this run)")
    for mismatch in m.knob_mismatches or []:
        guards.append(f"setting not in effect: {mismatch}")
    master = (s.replication.nodes or {}).get(MASTER) if s.replication else None
    semi = master.semi_sync if master else None
    if semi and semi.fell_back:
        guards.append(f"semi-sync fell back to async for {semi.fell_back:,} transactions")
    return guards


def _catch_up_guards(s: RunSummary, m: RunMeta, facts: RunFacts) -> list[str]:
    """A replica that never caught up (within the run's timeout), or later than the scenario's limit."""
    guards = []
    limit = facts.criteria.max_catch_up
    for replica, took in (s.catch_up_s or {}).items():
        if replica in (s.catch_up_held or {}):
            guards.append(f"{replica}'s catch-up not measured: {(s.catch_up_held or {})[replica]} held it when the "
                          "last request was sent")
        elif replica in (s.catch_up_unreachable or []):
            guards.append(f"{replica}'s catch-up not measured: it did not answer when the last request was sent")
        elif took is None:
            lag = (s.lag or {}).get(replica)
            growth = lag.growth_s_per_s if lag else None
            guards.append(f"{replica} did not catch up within {facts.catch_up_timeout:g} s"
                          + (f"; lag grew {growth:.2f} s per s during the attack" if growth is not None else ""))
        elif took > limit:
            guards.append(f"{CRITERIA_GUARD}: {replica} caught up {took:.1f} s after the "
                          f"last request was sent (limit {limit:g} s)")
    return guards


def _fault_guards(s: RunSummary, m: RunMeta, facts: RunFacts) -> list[str]:
    seen = [f.model_dump() for f in s.nodes_lost or []]
    return [f"fault: {text}" for text in health.describe_faults(seen, facts.attack_start_s)]


def _consistency_guards(s: RunSummary, m: RunMeta, facts: RunFacts) -> list[str]:
    guards = []
    c = s.consistency
    if c and c.equal is False:
        what = "CHECKSUM TABLE" if (c.scope or "table") == "table" else "the written rows' checksum"
        guards.append(f"{what} differs between nodes after catch-up: replicas diverged — RUN FAILED")
    if c and c.missing:
        guards.append(f"consistency checked without {', '.join(c.missing)} (not answering)")
    return guards


def _attacker_guards(s: RunSummary, m: RunMeta, facts: RunFacts) -> list[str]:
    """An attacker host that failed or started late (its share missing for a while), and clocks too far apart
    for the merged report's start and end (docs/own-servers.md, "Clock skew")."""
    guards = []
    hosts = s.remote_attackers or []
    for a in hosts:
        who = f"attacker {a.index} ({a.host})"
        if a.error:
            guards.append(f"{who} failed: {a.error}; its share of {a.rate}/s is missing from "
                          f"{facts.rate}/s ({a.requests or 0:,} of its requests came back)")
        elif a.late:
            guards.append(f"{who} started {a.first_request_s:.2f} s after the agreed start: until then the rate "
                          f"was {facts.rate - (a.rate or 0)}/s of {facts.rate}/s")
    skews = [a.skew_ms for a in hosts if a.skew_ms is not None]
    if len(skews) > 1 and max(skews) - min(skews) > ATTACKER_SKEW_WARN_MS:
        guards.append(f"the attacker hosts' clocks differ by {max(skews) - min(skews):.0f} ms: the merged report's "
                      "duration and rate, and the latency timeline beside the lag, are off by up to that much")
    return guards


def rows_read_per_read(s: RunSummary) -> dict[str, float]:
    """Per replica that served reads: the rows its handlers read (Handler_read_*, its SQL thread's included) per
    read it served."""
    nodes = (s.replication.nodes if s.replication else None) or {}
    out = {}
    for name, served in sorted((s.served_by or {}).items()):
        node = nodes.get(name)
        if name != MASTER and served and node is not None and node.rows_read is not None:
            out[name] = node.rows_read / served
    return out


def _read_guards(s: RunSummary, m: RunMeta, facts: RunFacts) -> list[str]:
    """find_users on the indexed table reads tens of index entries a search; a replica reading more than
    SEARCH_ROWS_GUARD rows per read did not run that plan, and its read figures are another read's."""
    if facts.searched != INDEXED_TABLE.split(".")[0]:
        return []
    having = (m.indexes.nodes if m.indexes else None) or {}
    return [f"{name} read {rows:,.0f} rows per read it served, above {SEARCH_ROWS_GUARD:,} (find_users' plan on "
            f"{SEARCH_INDEX} reads tens): its reads were not the designed ones"
            for name, rows in rows_read_per_read(s).items()
            if rows > SEARCH_ROWS_GUARD and SEARCH_INDEX in (having.get(name) or {})]


def _error_guards(s: RunSummary, m: RunMeta, facts: RunFacts) -> list[str]:
    return [f"error: {error}" for error in facts.errors]


# a run's guards, in the order the block lists them: the one table of what is checked after a run (the pass
# criteria themselves are analysis/rules.RULES, shared with a sweep step's and a study unit's verdict)
GUARDS: tuple[Guard, ...] = (_criteria_guards, _client_guards, _saturation_guards, _targets_guards,
                             _replication_guards, _row_guards,
                             _setup_guards, _catch_up_guards, _fault_guards, _consistency_guards, _attacker_guards,
                             _read_guards, _error_guards)
