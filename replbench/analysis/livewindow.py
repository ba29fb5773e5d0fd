"""A live window's commit rate (`apply-capacity --live`, experiments/applycap): the master's application
transactions counted once a second while the replicas' SQL threads were held, its mean over the window and its
busiest minute, the rates a replica's measured apply capacity is set against (docs/apply-capacity.md)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.config import LIVE_BUSIEST_SPAN_S, LIVE_MIN_WINDOW_S
from ..core.results import LiveCpu, LiveWindow
from ..core.stats import mean_error


def rates(samples: Sequence[tuple[float, int]], asked_s: float, span: float = LIVE_BUSIEST_SPAN_S) -> LiveWindow:
    """`samples`: (seconds since the window opened, the master's transaction count) in time order. The mean rate
    over the window; the busiest `span` seconds (the highest count over any span between two samples at least
    `span` apart, from its first sample): None in a window shorter than the span. Every figure given, even None
    (apply.json writes each, null where it is unknown)."""
    short = asked_s < LIVE_MIN_WINDOW_S
    if len(samples) < 2:
        return LiveWindow(asked_s=asked_s, samples=len(samples), window_s=None, transactions=None, mean_trx_per_s=None,
                          busiest_minute_trx_per_s=None, busiest_minute_from_s=None, short=short)
    t = np.array([s[0] for s in samples], dtype=float)
    n = np.array([s[1] for s in samples], dtype=float)
    seconds = float(t[-1] - t[0])
    busiest, busiest_from = None, None
    ends = np.searchsorted(t, t + span)  # each sample's first sample at least `span` later
    starts = np.nonzero(ends < len(t))[0]
    if len(starts):
        per_s = (n[ends[starts]] - n[starts]) / (t[ends[starts]] - t[starts])
        best = int(np.argmax(per_s))
        busiest, busiest_from = round(float(per_s[best]), 1), round(float(t[starts[best]] - t[0]), 1)
    return LiveWindow(asked_s=asked_s, samples=len(samples), window_s=round(seconds, 3), transactions=int(n[-1] - n[0]),
                      mean_trx_per_s=round(float(n[-1] - n[0]) / seconds, 1) if seconds > 0 else None,
                      busiest_minute_trx_per_s=busiest, busiest_minute_from_s=busiest_from, short=short)



def cpu_of(samples: Sequence[tuple[float, int]], cpu: Sequence[dict[str, float | None]],
           idle: dict[str, float | None], roles: dict[str, str], span: float = LIVE_BUSIEST_SPAN_S
           ) -> dict[str, LiveCpu]:
    """Each node's CPU over the window from its cumulative CPU seconds read with each sample (`cpu`, aligned with
    `samples`): in all and per transaction of the master's, net of the node's idle CPU per second where `idle`
    has it (None: gross); and per whole `span` of the window, each span's CPU-ms per transaction, with the 95 %
    interval of their mean (Student's t over the spans: the window's own repeats, for a fit on one rate). A node
    not read at the window's first and last sample has no figure rather than a part of one."""
    t = [s[0] for s in samples]
    n = [s[1] for s in samples]
    out: dict[str, LiveCpu] = {}
    for node, role in roles.items():
        got = [(i, v) for i, row in enumerate(cpu[:len(samples)]) if (v := row.get(node)) is not None]
        if len(samples) < 2 or len(got) < 2 or got[0][0] != 0 or got[-1][0] != len(samples) - 1:
            continue
        rest = idle.get(node)

        def used(a: tuple[int, float], b: tuple[int, float], rest: float | None = rest) -> float:
            return b[1] - a[1] - (rest or 0.0) * (t[b[0]] - t[a[0]])

        def per_trx(a: tuple[int, float], b: tuple[int, float]) -> float | None:
            trx = n[b[0]] - n[a[0]]
            return round(1000 * max(0.0, used(a, b)) / trx, 4) if trx > 0 else None

        minutes: list[float] = []
        start = got[0]
        for read in got[1:]:
            if t[read[0]] - t[start[0]] >= span:
                if (value := per_trx(start, read)) is not None:
                    minutes.append(value)
                start = read
        error = mean_error(minutes)
        # a node that spent no more over the window than its idle would have: its work is below what the idle
        # subtraction can resolve, so it gets no per-transaction figure (never a cost of 0); docs/apply-capacity.md
        below = rest is not None and used(got[0], got[-1]) <= 0
        mean = sum(minutes) / len(minutes) if minutes else 0.0
        out[node] = LiveCpu(role=role, cpu_s=round(got[-1][1] - got[0][1], 3), seconds=round(t[-1] - t[0], 3),
                            transactions=n[-1] - n[0], idle_cpu_per_s=rest,
                            cpu_ms_per_trx=None if below else per_trx(got[0], got[-1]), below_idle=below or None,
                            net=rest is not None, minutes_ms_per_trx=minutes,
                            ci95_ms_per_trx=None if error is None else
                            [round(mean - error[1], 4), round(mean + error[1], 4)])
    return out
