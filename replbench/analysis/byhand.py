"""Figures of the committed by-hand checks the report cites beside a study's own (docs/decisions/), read from their
evidence files alone: the semi-sync check's round trip measured through each link and the commits per second 1, 4
and 8 concurrent clients made (docs/decisions/semi-sync-by-hand.md). None where a file is missing or unreadable: the
report then cites nothing from it."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SemiSyncByHand:
    """The semi-sync check by hand: per nominal link (ms), the round trip measured through it (the mean over its
    replicas and rounds); per wait point (and `off`), per concurrent clients, the commits per second (min, max over
    the rounds) on the link the concurrent runs used."""

    rtt_ms: dict[float, float]
    link_ms: float  # the concurrent runs' link
    commits_per_s: dict[str, dict[int, tuple[float, float]]]
    # per wait point, one client's added commit p50 (the rounds' median against semi-sync off's on the same link) in
    # round trips of the link as measured: the fewest and the most over the links
    one_client: dict[str, tuple[float, float]]


def semi_sync_by_hand(folder: Path) -> SemiSyncByHand | None:
    """The check's figures from its cells.json (one client) and concurrent.json (1, 4 and 8 clients)."""
    try:
        cells = json.loads((folder / "cells.json").read_text())
        concurrent = json.loads((folder / "concurrent.json").read_text())
    except (OSError, ValueError):
        return None
    measured: dict[float, list[float]] = {}
    p50: dict[tuple[float, str], list[float]] = {}
    for cell in cells:
        measured.setdefault(float(cell["link_ms"]), []).extend(
            float(v) for v in (cell.get("rtt_measured_ms") or {}).values() if v is not None)
        p50.setdefault((float(cell["link_ms"]), str(cell["mode"])), []).append(float(cell["median_ms"]))
    rtt = {k: statistics.fmean(v) for k, v in measured.items() if v}
    trips: dict[str, list[float]] = {}
    for (link, mode), values in p50.items():
        off = p50.get((link, "off"))
        if mode != "off" and off and link in rtt:
            trips.setdefault(mode, []).append((statistics.median(values) - statistics.median(off)) / rtt[link])
    rates: dict[str, dict[int, list[float]]] = {}
    for run in concurrent:
        rates.setdefault(str(run["mode"]), {}).setdefault(int(run["clients"]), []).append(float(run["commits_per_s"]))
    # concurrent.py runs on the widest link cells.json measured (20 ms: docs/decisions/semi-sync-by-hand.md)
    return SemiSyncByHand(rtt_ms=rtt, link_ms=max(measured, default=0.0),
                          commits_per_s={m: {c: (min(v), max(v)) for c, v in sorted(by.items())}
                                         for m, by in rates.items()},
                          one_client={m: (min(v), max(v)) for m, v in trips.items()})
