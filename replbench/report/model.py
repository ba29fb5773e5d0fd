"""The cost model as text: the coefficients per setting with their intervals and the fit's quality, and a capacity
plan for a mix with every figure's 95 % interval."""

from __future__ import annotations

from typing import Any

PARTS = (("master_cpu_s", "master CPU", "ms", 1e3), ("replica_cpu_s", "replica CPU", "ms", 1e3),
         ("binlog_bytes", "binlog", "B", 1.0), ("apply_s", "one replica's apply alone", "ms", 1e3))


def _coef(part: dict[str, Any], term: str, scale: float) -> str:
    low, high = part["ci95"][term]
    return f"{part['coef'][term] * scale:.4g} [{low * scale:.4g}–{high * scale:.4g}]"


def render_fit(model: dict[str, Any]) -> str:
    lines = [f"Cost model from {len(model['observations'])} write runs and {len(model['drains'])} apply drains "
             "(95 % intervals in brackets):"]
    for name, fitted in model["settings"].items():
        lines.append(f"{name} ({fitted['runs']} runs, {fitted['drains']} drains):")
        for key, label, unit, scale in PARTS:
            part = fitted.get(key)
            if not part:
                lines.append(f"  {label}: no data")
                continue
            text = f"{_coef(part, 'per_trx', scale)} {unit} per transaction"
            if part["rows_separated"]:
                text += f" + {_coef(part, 'per_row', scale)} {unit} per row"
            else:
                text += " (every run changed one row per transaction: rows not separated)"
            lines.append(f"  {label}: {text}; R² {part['r2']:.3f}, n {part['n']}, residuals within "
                         f"±{100 * max(map(abs, part['relative_residuals'])):.0f} %")
        if fitted.get("fsyncs_per_commit") is not None:
            lines.append(f"  fsyncs per commit (master, InnoDB + binlog): {fitted['fsyncs_per_commit']:.2f}")
    return "\n".join(lines)


def _figure(value: dict[str, Any] | None, fmt: str = "{:,.3g}") -> str:
    if value is None:
        return "no data (or no fit that separates rows from transactions: add write-bulk runs)"
    if value.get("low") is None:
        return fmt.format(value["value"])
    return f"{fmt.format(value['value'])} [{fmt.format(value['low'])}–{fmt.format(value['high'])}]"


def render_plan(plan: dict[str, Any]) -> str:
    return "\n".join([
        f"Capacity plan under {plan['setting']} on {plan['table']}: {plan['transactions_per_s']:,.0f} transactions/s, "
        f"{plan['rows_per_s']:,.0f} rows/s (95 % intervals in brackets)",
        f"Binlog: {_figure(plan['binlog_mb_per_s'])} MB/s, {_figure(plan['binlog_gb_per_day'])} GB/day; to each "
        f"replica {_figure(plan['bytes_per_s_to_each_replica'])} B/s",
        f"Master CPU: {_figure(plan['master_cpu_cores'])} cores",
        f"Replica CPU: {_figure(plan['replica_cpu_cores'])} cores, {_figure(plan['replica_cpu_utilisation'])} of "
        f"its {plan['replica_cores']:g} core(s)",
        f"Replica apply utilisation ρ (one SQL thread): {_figure(plan['replica_apply_rho'])}; lag "
        f"{plan['lag'] or 'unknown (no apply data)'}",
        f"Fsyncs on the master: {_figure(plan['fsyncs_per_s'])} per second",
    ])
