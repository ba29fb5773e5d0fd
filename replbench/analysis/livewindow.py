"""A live window's commit rate (`apply-capacity --live`, experiments/applycap): the master's application
transactions counted once a second while the replicas' SQL threads were held, its mean over the window and its
busiest minute, the rates a replica's measured apply capacity is set against (docs/apply-capacity.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.config import LIVE_BUSIEST_SPAN_S, LIVE_MIN_WINDOW_S


def rates(samples: Sequence[tuple[float, int]], asked_s: float,
          span: float = LIVE_BUSIEST_SPAN_S) -> dict[str, Any]:
    """`samples`: (seconds since the window opened, the master's transaction count) in time order. The mean rate
    over the window; the busiest `span` seconds (the highest count over any span between two samples at least
    `span` apart, from its first sample): None in a window shorter than the span."""
    out: dict[str, Any] = {"asked_s": asked_s, "samples": len(samples), "window_s": None, "transactions": None,
                           "mean_trx_per_s": None, "busiest_minute_trx_per_s": None, "busiest_minute_from_s": None,
                           "short": asked_s < LIVE_MIN_WINDOW_S}
    if len(samples) < 2:
        return out
    t = np.array([s[0] for s in samples], dtype=float)
    n = np.array([s[1] for s in samples], dtype=float)
    seconds = float(t[-1] - t[0])
    out.update(window_s=round(seconds, 3), transactions=int(n[-1] - n[0]),
               mean_trx_per_s=round(float(n[-1] - n[0]) / seconds, 1) if seconds > 0 else None)
    ends = np.searchsorted(t, t + span)  # each sample's first sample at least `span` later
    starts = np.nonzero(ends < len(t))[0]
    if len(starts):
        per_s = (n[ends[starts]] - n[starts]) / (t[ends[starts]] - t[starts])
        best = int(np.argmax(per_s))
        out.update(busiest_minute_trx_per_s=round(float(per_s[best]), 1),
                   busiest_minute_from_s=round(float(t[starts[best]] - t[0]), 1))
    return out
