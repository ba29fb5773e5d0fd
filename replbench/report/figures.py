"""How the report prints one figure: a median with its range over repeats, a plain number.
"""

from __future__ import annotations

from ..core.stats import below_floor, floor_text, spread, spread_text


def fig(values: list[float | None], fmt: str = "{:.0f}") -> str:
    """Median, with [min–max] when there are repeats."""
    return spread_text(values, fmt)


def num(value: float | None) -> str:
    return "–" if value is None else (f"{value:.3f}" if value < 10 else f"{value:.1f}")


def floored(values: list[float | None], floor: float, fmt: str = "{:.0f}") -> str:
    """fig() for a figure with a floor (the lag's: docs/metrics.md, "Lag"): a median under it prints '< 10', a
    repeat under it '< 10' in the range ('31 [< 10–40]'), never as a value."""
    got = spread(values)
    if got["median"] is None:
        return "–"
    if below_floor(got["median"], floor):
        return floor_text(floor)
    low, high = (floor_text(floor) if below_floor(v, floor) else fmt.format(v) for v in (got["min"], got["max"]))
    return fmt.format(got["median"]) + ("" if got["min"] == got["max"] else f" [{low}–{high}]")

