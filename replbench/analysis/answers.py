"""The figures behind the report's answers, derived from recorded runs and studies (report/answers.py words them):
which process saturates first against its own capacity, what indexes cost a replica per memory regime, semi-sync's
commit cost in round trips of the link, binlog volume per day at a rate. Pure functions over records.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.config import Word
from ..core.results import ComparisonRow, KnobSetting, RunSummary, StudyCell, StudyRecord
from ..topology import links
from ..topology.knobs import Knobs, parse_size, recorded
from . import limits
from .studymetrics import SemiSyncCost

SECONDS_PER_DAY = 86_400


@dataclass(frozen=True)
class Saturation:
    """One process's mean CPU against its capacity (saturation's)."""

    name: str  # as the report's answers word it: host, master, replica, app, vegeta
    percent: float  # of one core
    capacity: float  # % of one core
    share: float  # of what saturates it: 1 or more is saturated


def saturation(summary: RunSummary, cores: int) -> list[Saturation]:
    """Each process's mean CPU (% of one core) against its capacity, the fullest first, `share` against the share
    at which it saturates (analysis/limits.utilisation, the one place these are measured: 1 or more is saturated).
    The replica is the busier one; names as the report's answers word them."""
    out: dict[str, Saturation] = {}
    for used in limits.utilisation(summary, cores=cores).values():
        group = used.group
        name = "host" if group == "host_busy" else "replica" if group.startswith("replica") else group
        row = Saturation(name=name, percent=float(used.percent), capacity=float(used.capacity_percent),
                         share=used.percent / (used.capacity_percent * used.saturates_at))
        if name not in out or row.percent > out[name].percent:
            out[name] = row
    return sorted(out.values(), key=lambda row: -row.share)


@dataclass(frozen=True)
class PoolIndexCost:
    """One buffer pool's replica CPU per applied write with the indexes against without (pool_index_costs')."""

    group: str  # the comparison's group
    pool: str | None  # the cell's buffer_pool knob (None: the reference pool)
    indexed: str  # the `write` cell's name
    bare: str  # the `write-noindex` cell's name
    ratio: float  # indexed's median over bare's
    rows: tuple[ComparisonRow, ComparisonRow]  # indexed's and bare's rows of the comparison


def pool_index_costs(data: StudyRecord) -> list[PoolIndexCost]:
    """Per buffer pool of study working-set (largest first): each replica's CPU per applied write with the indexes
    (`write`) and without (`write-noindex`), its rows of the comparison and the ratio (what the one rule says of the
    two is analysis/findings.words_of's, for the comparison's `group`). A pool without both cells is left out."""
    if not data.comparison:
        return []
    group, per_metric = next(iter(data.comparison.items()))
    cells = {(c.scenario, _pool(c)): c.name for c in data.cells or []}
    pools = sorted({pool for _, pool in cells}, key=lambda p: -parse_size(p) if p else 0)
    out = []
    for pool in pools:
        indexed, bare = cells.get(("write", pool)), cells.get(("write-noindex", pool))
        rows = per_metric.get("replica_ms_per_write") or {}
        a, b = rows.get(indexed) if indexed else None, rows.get(bare) if bare else None
        if not a or not b or not a.median or not b.median:
            continue
        assert indexed is not None and bare is not None  # a and b are theirs
        out.append(PoolIndexCost(group=group, pool=pool, indexed=indexed, bare=bare, ratio=a.median / b.median,
                                 rows=(a, b)))
    return out


def _pool(cell: StudyCell) -> str | None:
    """A cell's buffer pool as recorded (a size in words, '4G': topology/knobs holds it as text), None where the
    cell runs with the reference pool (it names none, or records no buffer_pool)."""
    return recorded(cell.knobs).buffer_pool or None


def link_rtt_ms(spec: str | None) -> float | None:
    """The round trip a cell's link adds ('replica1=20ms,replica2=20ms': 20; the slowest of its links); None for
    no link."""
    if not spec or spec == "none":
        return None
    parsed = links.parse_all([s for s in spec.split(",") if s])
    return max((link.latency_ms for link in parsed), default=None)


@dataclass(frozen=True)
class RoundTrips:
    """A semi-sync cell's commit cost in round trips of its link (round_trips')."""

    cell: str
    baseline: str
    group: str
    semi_sync: str
    cost_ms: float  # against semi-sync off on the same link
    local_ms: float  # the same wait point's cost with no link, taken off
    rtt_ms: float  # the round trip divided by
    rtt_from: str  # "measured", "measured by hand" or "nominal"
    nominal_ms: float  # the link's setting
    round_trips: float


def round_trips(costs: list[SemiSyncCost], key: str = "commit_p50_ms",
                by_hand: dict[float, float] | None = None) -> list[RoundTrips]:
    """Semi-sync's commit cost (studymetrics.semi_sync_cost's rows) in round trips of the cell's link: the cells
    with a link and a cost whose repeats' ranges are disjoint from semi-sync off's (what the one rule says of each,
    tested or not, is analysis/findings.words_of's, for its group and baseline). The cost is net of what the same
    wait point costs with no link (`local_ms`: the acknowledgement's own work, not the link's); the round trip is the
    one the cell's runs measured through the link (`rtt_from` "measured"), else the one measured by hand through a
    link of the same setting (`by_hand`: nominal ms → measured ms; "measured by hand"), else the link's nominal
    one ("nominal")."""
    local = {row.semi_sync: got.cost_ms for row in costs
             if link_rtt_ms(row.link) is None and (got := row.costs.get(key)) is not None}
    out = []
    for row in costs:
        nominal, cost = link_rtt_ms(row.link), row.costs.get(key)
        if not nominal or cost is None or cost.verdict != "different":
            continue
        own, hand = row.rtt_measured_ms, (by_hand or {}).get(nominal)
        rtt, source = (own, "measured") if own else (hand, "measured by hand") if hand else (nominal, "nominal")
        here = local.get(row.semi_sync, 0.0)
        out.append(RoundTrips(cell=row.cell, baseline=row.baseline, group=row.group, semi_sync=row.semi_sync,
                              cost_ms=cost.cost_ms, local_ms=here, rtt_ms=rtt, rtt_from=source, nominal_ms=nominal,
                              round_trips=(cost.cost_ms - here) / rtt))
    return out


def gb_per_day(bytes_per_write: float, rate: float) -> float:
    """Binlog (and each replica's relay log) volume per day at a steady write rate, in GB (10^9 bytes)."""
    return bytes_per_write * rate * SECONDS_PER_DAY / 1e9


COMPRESS_KNOBS = ("binlog_compress", "binlog_compress_min_len")
COMPRESSED_BELOW = 0.995  # bytes per write under this share of the uncompressed cell's: some events were compressed


@dataclass(frozen=True)
class CompressionEffect:
    """A cell with binlog compression on against its cell with it off (compression_effects')."""

    group: str
    cell: str
    knobs: KnobSetting | None  # the cell's recorded knobs
    baseline: str
    min_len: int  # its threshold
    off: float  # binlog bytes per write, median
    on: float
    compressed: bool  # fewer bytes: some event reached the threshold


def compression_effects(data: StudyRecord) -> list[CompressionEffect]:
    """Per table of a study, each cell with binlog compression on against the cell with it off and every other knob
    the same: its threshold (log_bin_compress_min_len, the cell's recorded knob, else the server's default), the
    binlog bytes per write (median) off and on, and whether any event was compressed (fewer bytes: MariaDB
    compresses a row event only when its row data, and a query event only when its statement, reaches the
    threshold)."""
    cells = data.cells or []

    def rest(knobs: Knobs) -> dict[str, Word]:  # every knob is an int or a text (topology/knobs.Knobs)
        return {k: v for k, v in knobs.as_dict().items() if k not in COMPRESS_KNOBS}

    out = []
    for group, per_metric in (data.comparison or {}).items():
        rows = per_metric.get("bytes_per_write") or {}
        for cell in cells:
            knobs = recorded(cell.knobs)
            if knobs.binlog_compress != "on":
                continue
            base = next((c for c in cells if recorded(c.knobs).binlog_compress == "off"
                         and rest(recorded(c.knobs)) == rest(knobs) and c.scenario == cell.scenario), None)
            on, off = rows.get(cell.name or ""), rows.get(base.name or "") if base else None
            if not on or not off or not on.median or not off.median:
                continue
            assert base is not None  # off is its row
            out.append(CompressionEffect(group=group, cell=cell.name or "", knobs=cell.knobs,
                                         baseline=base.name or "", min_len=knobs.binlog_compress_min_len,
                                         off=off.median, on=on.median,
                                         compressed=on.median < COMPRESSED_BELOW * off.median))
    return out
