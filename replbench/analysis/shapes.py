"""How far the model's CPU price of a table it does not know lands from the measured, and the interval a DBA's
table of another shape gets from it (docs/profile.md, "A table the model does not know").

The model is fitted on this suite's accounts table; a table it does not know is priced as bench_idx's rows. On each
shape of a workload the suite did not write (sysbench's, measured live: core/config.FOREIGN_CPU_RATIOS) the model's
price divided by the measured CPU is one ratio per role. Their logarithms are the sample: a new shape's ratio lies,
at 95 %, within their mean ± a Student t prediction interval (core/stats.prediction_half_width), so its measured CPU
within the model's price × exp(−mean ∓ half-width). Checked by leaving each shape out in turn (`left_out`): the
other shapes' interval must hold it. The interval is as wide as the shapes differ and as few as they are: its width
(high ÷ low) is printed with it."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.stats import prediction_half_width
from .costmodel import Band


@dataclass(frozen=True)
class ShapeSpread:
    """One role's spread over the shapes: the geometric mean of the model's price ÷ the measured, and the factors
    that take the model's price to the low and high ends of a new shape's measured CPU."""

    shapes: int
    mean_ratio: float
    low: float
    high: float

    @property
    def width(self) -> float:
        """The interval's high end ÷ its low end."""
        return self.high / self.low


def spread(ratios: Sequence[float]) -> ShapeSpread | None:
    """The spread of the ratios (model's price ÷ measured, one per shape); None with fewer than two shapes."""
    logs = [math.log(r) for r in ratios]
    half = prediction_half_width(logs)
    if half is None:
        return None
    mean = statistics.fmean(logs)
    return ShapeSpread(shapes=len(ratios), mean_ratio=math.exp(mean), low=math.exp(-mean - half),
                       high=math.exp(-mean + half))


def left_out(ratios: Sequence[float]) -> list[bool | None]:
    """Per shape: whether the interval from every other shape holds its measured CPU (the model's price × the
    others' low and high factors around the measured, i.e. 1 ÷ its ratio within [low, high]); None where the others
    are fewer than two."""
    out: list[bool | None] = []
    for i, ratio in enumerate(ratios):
        others = spread([r for j, r in enumerate(ratios) if j != i])
        out.append(None if others is None else others.low <= 1 / ratio <= others.high)
    return out


def corrected(price: Band | None, role: ShapeSpread | None) -> Band | None:
    """The measured CPU a table of another shape would get: the model's price ÷ the shapes' mean ratio, with the
    interval a new shape's ratio has (the model's own interval is within it: the ratios were taken from its price)."""
    if price is None or role is None:
        return None
    value = price["value"]
    return {"value": value / role.mean_ratio, "low": value * role.low, "high": value * role.high}
