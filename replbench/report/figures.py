"""How the report prints one figure: a median with its range over repeats, a plain number.
"""

from __future__ import annotations

from ..analysis.studymetrics import fmt
from ..core.results import ComparisonRow
from ..core.stats import spread_text


def fig(values: list[float | None], fmt: str = "{:.0f}") -> str:
    """Median, with [min–max] when there are repeats."""
    return spread_text(values, fmt)


def num(value: float | None) -> str:
    return "–" if value is None else (f"{value:.3f}" if value < 10 else f"{value:.1f}")


def figure(row: ComparisonRow) -> str:
    """'0.484 [0.41–0.575]', '2,922 [376–3,463]': a cell's median and range as the study tables print them."""
    return fmt(row.median) + ("" if row.min == row.max else f" [{fmt(row.min)}–{fmt(row.max)}]")
