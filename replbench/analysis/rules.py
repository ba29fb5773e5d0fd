"""Pass and fail as data: the one table of rules a run, a sweep step and a study unit are judged by, and `judge`,
the one function that judges them and says which rule tripped (docs/runs.md, "Pass criteria").

A rule of kind "criterion" is one of a scenario's pass criteria (core/scenario.PassCriteria holds its limit under
the rule's name): breaking it fails a sweep step, a study unit's `passed`, and puts a run above the knee (its
min_success and min_rate_ratio) and a guard in its block. A rule of kind "note" qualifies a pass without failing
it (PASS*): the host or the load generator saturated, or the load generator failed requests itself; its limit is
core/config's. The rate is judged on goodput, what the user got (successful requests per second, vegeta's
throughput), not on the rate sent. The cost model's data filters select runs, they judge none, and stay with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

from ..core.config import HOST_SATURATED, VEGETA_SATURATED
from ..core.records import STATUS_FAILED
from ..core.results import RunSummary
from ..core.scenario import PassCriteria

Kind = Literal["criterion", "note"]
CRITERIA_GUARD = "beyond the scenario's pass criteria"  # how a run's guards name a criterion it broke (analysis/judge)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2%}"


def _success(s: RunSummary) -> float | None:
    """Success judged server-side (client-side errors are the load generator's limit, a note)."""
    return s.server_success if s.server_success is not None else s.success


def goodput(s: RunSummary) -> float | None:
    """Successful requests per second (summaries from before the rename call it throughput); None: not measured."""
    return s.goodput if s.goodput is not None else s.throughput


Worst = tuple[str, float]  # the replica whose lag figure is the largest, and that figure (_worst_lag's)


def _worst_lag(s: RunSummary, figure: str) -> Worst | None:
    """(replica, figure) of the replica whose lag figure is the largest; None when no replica has it."""
    got = [(name, float(v)) for name, lag in sorted((s.lag or {}).items())
           if lag is not None and (v := getattr(lag, figure)) is not None]
    return max(got, key=lambda item: item[1]) if got else None


def _busy(s: RunSummary, group: str) -> float:
    return (s.cpu_mean_percent or {}).get(group) or 0.0


@dataclass(frozen=True)
class Facts:
    """What a rule reads beside the summary: the rate asked and the host's cores (a step's and a unit's from their
    runs' summaries)."""

    rate: int
    cores: int


T = TypeVar("T")  # the figure a rule reads: a share, a rate, the worst replica's lag figure…


@dataclass(frozen=True)
class Rule(Generic[T]):
    """One rule: the figure it reads, its limit (a criterion's from the scenario's PassCriteria, a note's its own),
    whether the figure breaks the limit, and the sentence that says so."""

    name: str
    kind: Kind
    figure: Callable[[RunSummary, Facts], T]
    broken: Callable[[T, float, Facts], bool]
    text: Callable[[T, float, Facts], str]
    limit: float | None = None  # a note's limit; a criterion's is the scenario's

    def tripped(self, s: RunSummary, limit: float, facts: Facts) -> str | None:
        """The sentence that says the summary broke the rule at `limit`; None where it did not."""
        value = self.figure(s, facts)
        return self.text(value, limit, facts) if self.broken(value, limit, facts) else None


class Judged(Protocol):
    """A rule as judge reads it, whatever the figure it reads (RULES holds rules of several)."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> Kind: ...

    @property
    def limit(self) -> float | None: ...

    def tripped(self, s: RunSummary, limit: float, facts: Facts) -> str | None: ...


def _the(worst: Worst | None) -> Worst:
    """The worst replica's lag figure, as a lag rule's sentence says it: said only where the rule is broken, which
    needs a replica with the figure."""
    assert worst is not None
    return worst


def _lag_p99_text(v: Worst | None, lim: float, f: Facts) -> str:
    name, ms = _the(v)
    return f"{name}'s lag p99 {ms:g} ms > {lim * 1000:g} ms"


def _lag_growth_text(v: Worst | None, lim: float, f: Facts) -> str:
    name, growth = _the(v)
    return f"{name}'s lag grew {growth:g} s per s (limit {lim:g}: falling behind)"


# every rule, in the order a step's reasons and a run's guards list them
RULES: tuple[Judged, ...] = (
    Rule("min_success", "criterion", lambda s, f: _success(s),
         lambda v, lim, f: v is None or v < lim,
         lambda v, lim, f: f"success {_pct(v)} < {lim:.1%}"),
    Rule("min_rate_ratio", "criterion", lambda s, f: goodput(s) or 0.0,
         lambda v, lim, f: v < lim * f.rate,
         lambda v, lim, f: f"goodput {v:.1f}/s < {lim:.0%} of {f.rate}/s"),
    Rule("max_p99", "criterion", lambda s, f: s.latency_ms.p99 if s.latency_ms else None,
         lambda v, lim, f: v is None or v > lim * 1000,
         lambda v, lim, f: f"p99 {v} ms > {lim * 1000:g} ms"),
    Rule("max_lag_p99", "criterion", lambda s, f: _worst_lag(s, "p99_ms"),
         lambda v, lim, f: v is not None and v[1] > lim * 1000,
         _lag_p99_text),
    Rule("max_lag_growth", "criterion", lambda s, f: _worst_lag(s, "growth_s_per_s"),
         lambda v, lim, f: v is not None and v[1] >= lim,
         _lag_growth_text),
    Rule("max_catch_up", "criterion", lambda s, f: s.catch_up_s or {},
         lambda v, lim, f: not v or any(t is None or t > lim for t in v.values()),
         lambda v, lim, f: f"replicas caught up {v or 'never measured'} (limit {lim:g} s)"),
    Rule("host_saturated", "note", lambda s, f: _busy(s, "host_busy"),
         lambda v, lim, f: v > lim * 100 * f.cores,
         lambda v, lim, f: f"host CPU saturated ({v:.0f} % of {100 * f.cores} %)", limit=HOST_SATURATED),
    Rule("vegeta_saturated", "note", lambda s, f: _busy(s, "vegeta"),
         lambda v, lim, f: v > lim,
         lambda v, lim, f: f"vegeta at {v:.0f} % of a core", limit=VEGETA_SATURATED),
    Rule("client_errors", "note", lambda s, f: s.client_errors or 0,
         lambda v, lim, f: v > lim,
         lambda v, lim, f: f"{v:,} client-side errors (load generator limit)", limit=0),
    # vegeta loops over its targets once past them (a closed loop that outran the rate it was sized by): a write
    # sent again changed nothing (docs/runs.md, "Closed loop")
    Rule("targets_looped", "note", lambda s, f: (s.requests or 0, s.targets),
         lambda v, lim, f: v[1] is not None and v[0] > v[1] * lim,
         lambda v, lim, f: f"{v[0]:,} requests over {v[1]:,} targets: vegeta sent them again (a write sent again "
                           "changed nothing: give a higher rate to size the targets)", limit=1),
)
BY_NAME = {rule.name: rule for rule in RULES}
CRITERIA = tuple(rule.name for rule in RULES if rule.kind == "criterion")
KEPT_UP = ("max_lag_p99", "max_lag_growth", "max_catch_up")  # the replicas kept up: their lag, whatever the client saw
KNEE = ("min_success", "min_rate_ratio")  # above the knee: fewer requests served than asked


@dataclass(frozen=True)
class Tripped:
    """A rule the summary broke, and the sentence that says so."""

    rule: str
    text: str


@dataclass(frozen=True)
class Verdict:
    """A run's, a step's or a unit's verdict: the criteria it broke, the notes that qualify a pass, and whether a
    run it was judged from failed outright (its guards say why)."""

    tripped: tuple[Tripped, ...]
    notes: tuple[Tripped, ...] = ()
    run_failed: bool = False

    @property
    def passed(self) -> bool:
        return not self.run_failed and not self.tripped

    @property
    def reasons(self) -> list[str]:
        return (["run failed (see its guards)"] if self.run_failed else []) + [t.text for t in self.tripped]

    def broke(self, rule: str) -> bool:
        return any(t.rule == rule for t in self.tripped)


SATURATION = ("host_saturated", "vegeta_saturated")  # what a run records as its `saturation`


def judge(s: RunSummary, criteria: PassCriteria, rate: int, cores: int | None = None,
          only: tuple[str, ...] = CRITERIA, leave_out: tuple[str, ...] = ()) -> Verdict:
    """The one evaluator: a run's summary (or a step's median of repeats) against the scenario's criteria at the
    rate asked, the notes beside. only/leave_out: the criteria judged here (kept-up alone, above the knee alone;
    a run says its catch-up per replica in its own guard). cores: the host's, where the summary lacks them. A
    summary that records its saturation (a run's, judged by these rules when it ran; a step's, its repeats') is
    taken at its word: a step's median run need not be the one that saturated."""
    facts = Facts(rate, cores or s.cores or 1)
    tripped: list[Tripped] = []
    notes = [Tripped(_saturation_rule(text), text) for text in s.saturation or []]
    for rule in RULES:
        if rule.kind == "criterion" and (rule.name not in only or rule.name in leave_out):
            continue
        if rule.name in SATURATION and s.saturation is not None:
            continue
        if rule.name == "min_rate_ratio" and s.clients is not None:
            continue  # a closed loop asks no rate: its goodput is what it measures (docs/runs.md, "Closed loop")
        limit = rule.limit if rule.kind == "note" else getattr(criteria, rule.name, None)
        if limit is None:  # a criterion recorded criteria predate
            continue
        said = rule.tripped(s, limit, facts)
        if said is not None:
            (tripped if rule.kind == "criterion" else notes).append(Tripped(rule.name, said))
    return Verdict(tuple(tripped), tuple(notes), s.status == STATUS_FAILED)


def _saturation_rule(text: str) -> str:
    return "vegeta_saturated" if text.startswith("vegeta") else "host_saturated"
