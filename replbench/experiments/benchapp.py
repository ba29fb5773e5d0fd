"""bench-app's experiments: what the app tier costs per request against its own floor (a constant JSON body
served by the same stack), in interleaved rounds whose order alternates so drift lands on each; find_users' SQL
shapes against each other the same way; and the load generator against a bare `vegeta attack -output=FILE`. Each
returns its figures (written beside the runs as JSON); the command prints them."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from ..core.config import FIND_USERS_SHAPES, Settings
from ..core.nodenames import nodes_in
from ..core.records import STATUS_INTERRUPTED, new_folder
from ..core.results import AttackCpu, BenchAppRecord, FindUsersRecord, Latency, read_summary, write_record
from ..core.scenario import load
from ..core.stats import ratio, spread
from ..load import attack
from ..topology.install import ensure_vegeta
from .run import Run, RunOptions

SCENARIOS = ("floor", "get", "read", "write")  # the floor first: every endpoint is read against it
Figures = dict[str, list[float | None]]


@dataclass
class StackCost:
    """Per (driver, worker, scenario): app and db CPU-ms per ok, each round's ratio to its own floor, success, p99."""

    parent: Path
    figures: dict[tuple[str, str, str], Figures] = field(default_factory=dict)
    floor_folder: Path | None = None
    interrupted: bool = False


def stack_cost(settings: Settings, combos: list[tuple[str, str]], rate: int, duration: float,
               repeat: int) -> StackCost:
    out = StackCost(settings.results / f"bench-app-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}")
    for index in range(repeat):  # rounds of all four, alternating their order, so drift lands on each
        order = SCENARIOS if index % 2 == 0 else tuple(reversed(SCENARIOS))
        for driver, worker in combos:
            combo_settings = settings.with_overrides(driver=driver, worker_class=worker)
            apps: dict[str, float | None] = {}
            for name in order:
                scenario = load(name)
                folder = new_folder(combo_settings, scenario, rate, parent=out.parent / f"{driver}-{worker}")
                summary = Run(combo_settings, scenario, rate, RunOptions(duration=duration), folder).execute().summary
                if summary.status == STATUS_INTERRUPTED:
                    out.interrupted = True
                    return out
                per_ok = summary.cpu_ms_per_success or {}  # none at all in a run without a success
                apps[name] = per_ok.get("app")
                if name == "floor":
                    out.floor_folder = folder
                f = out.figures.setdefault((driver, worker, name),
                                           {k: [] for k in ("app", "ratio", "db", "success", "p99")})
                f["app"].append(apps[name])
                # every node's figure is a number (analysis/summary.servers); a None would be no CPU to add
                f["db"].append(sum(v for n in nodes_in(per_ok) if (v := per_ok.get(n, 0)) is not None))
                f["success"].append(summary.success)
                f["p99"].append((summary.latency_ms or Latency()).p99)
            floor_app = apps.get("floor")
            for name in SCENARIOS[1:]:
                app = apps.get(name)
                out.figures[(driver, worker, name)]["ratio"].append(app / floor_app if app and floor_app else None)
    write_record(out.parent / "bench-app.json", BenchAppRecord.model_validate(
        {"rate": rate, "duration_s": duration, "repeat": repeat,
         "figures": {"/".join(k): v for k, v in out.figures.items()}}))
    return out


def load_generator(settings: Settings, floor_folder: Path, rate: int, duration: float,
                   parent: Path) -> dict[str, float]:
    """CPU-ms per request of a bare `vegeta attack -output=FILE` on the floor's targets, beside the floor run's
    own attack process and the harness process."""
    summary = read_summary(floor_folder)
    pipeline = summary.pipeline_cpu_s or AttackCpu()  # the attack's processes, each as wait4 counted it
    requests = max(1, summary.requests or 1)
    bare = attack.bare_attack(ensure_vegeta(settings), floor_folder / "targets.json",
                              attack.AttackOptions(rate, duration), parent / "bare-results.bin")
    harness_ms = (summary.cpu_ms_per_request or {}).get("harness", 0)
    assert harness_ms is not None  # analysis/summary.servers gives every group a number, the harness among them
    return {"bare_ms": 1000 * bare / max(1, rate * duration),
            "attack_ms": 1000 * (pipeline.vegeta or 0) / requests,  # always written, a number
            "harness_ms": harness_ms}


@dataclass
class ShapeCost:
    parent: Path
    figures: dict[str, Figures]
    interrupted: bool = False


def find_users_shapes(settings: Settings, rate: int, duration: float, repeat: int,
                      shapes: tuple[str, ...] = FIND_USERS_SHAPES) -> ShapeCost:
    """find_users in each SQL shape, `read` runs interleaved shape by shape, each repeat in the other order: app
    and replica CPU-ms per successful query and p99."""
    out = ShapeCost(settings.results / f"bench-find-users-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}",
                    {s: {"app": [], "replicas": [], "p99": []} for s in shapes})
    scenario = load("read")
    for index in range(repeat):
        order = shapes if index % 2 == 0 else tuple(reversed(shapes))
        for shape in order:
            shaped = settings.with_overrides(find_users=shape)
            folder = new_folder(shaped, scenario, rate, parent=out.parent / shape)
            summary = Run(shaped, scenario, rate, RunOptions(duration=duration), folder).execute().summary
            if summary.status == STATUS_INTERRUPTED:
                out.interrupted = True
                return out
            per_ok = summary.cpu_ms_per_success or {}  # none at all in a run without a success
            replicas = [per_ok.get(n) for n in shaped.node_names[1:]]
            out.figures[shape]["app"].append(per_ok.get("app"))
            out.figures[shape]["replicas"].append(None if None in replicas else sum(replicas))  # type: ignore[arg-type]
            out.figures[shape]["p99"].append((summary.latency_ms or Latency()).p99)
    write_record(out.parent / "find-users.json", FindUsersRecord.model_validate(out.figures))
    return out


def times(values: list[float | None], base: list[float | None]) -> float | None:
    """The median of values over the median of base."""
    return ratio(spread(values)["median"], spread(base)["median"])
