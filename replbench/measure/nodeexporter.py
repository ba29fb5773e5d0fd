"""CPU of a database host read from its Prometheus node_exporter (`node_cpu_seconds_total`, one counter per CPU
and mode), for nodes whose processes the harness cannot see (a topology file's own servers). Busy = every mode but
idle, iowait and steal, summed over the CPUs: the definition the local host sampler uses, so cpu.csv keeps its
columns and CPU-ms per request its meaning ("the CPU of that node's host"). A scrape that fails gives None, which
the sampler shows as n/a: never a guess."""

from __future__ import annotations

import re
import urllib.error
import urllib.request

SCRAPE_TIMEOUT = 0.8  # seconds: a sample a second must not queue behind a slow exporter
IDLE_MODES = ("idle", "iowait", "steal")
_LINE = re.compile(r'^node_cpu_seconds_total\{(?P<labels>[^}]*)\}\s+(?P<value>\S+)')
_LABEL = re.compile(r'(\w+)="([^"]*)"')


def parse(text: str) -> dict[str, float]:
    """Seconds per mode summed over CPUs, and the number of CPUs under the key "cpus"."""
    modes: dict[str, float] = {}
    cpus: set[str] = set()
    for line in text.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        labels = dict(_LABEL.findall(match.group("labels")))
        mode = labels.get("mode")
        if mode is None:
            continue
        cpus.add(labels.get("cpu", ""))
        modes[mode] = modes.get(mode, 0.0) + float(match.group("value"))
    if modes:
        modes["cpus"] = float(len(cpus))
    return modes


def scrape(url: str, timeout: float = SCRAPE_TIMEOUT) -> dict[str, float] | None:
    """One scrape of the exporter's metrics page; None when it does not answer or has no CPU counters."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            modes = parse(resp.read().decode(errors="replace"))
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return modes or None


def busy_seconds(modes: dict[str, float] | None) -> float | None:
    if not modes:
        return None
    return sum(v for k, v in modes.items() if k not in IDLE_MODES and k != "cpus")


def host_busy(url: str) -> float | None:
    """Cumulative busy CPU seconds of the exporter's host (all CPUs), or None."""
    return busy_seconds(scrape(url))
