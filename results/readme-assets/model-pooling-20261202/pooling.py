"""Where the cost model's STATEMENT-above-ROW-FULL replica term comes from (issue 73's "model contradicts the
answers"): the report campaign's model.json refitted from its own observations with the code at hand (1) as it was,
(2) without its write-wide runs (the pooling the issue suspects), (3) from the binlog-format study's runs alone (the
one study that ran both settings interleaved), and (4) from every study's runs but binlog-format's. Each line: the
replicas' CPU per transaction and per row (ms, net of idle) with the 95 % interval and the runs.

Usage, from the repository's root: PYTHONPATH=. .venv/bin/python results/readme-assets/model-pooling-20261202/pooling.py
"""

from __future__ import annotations

from pathlib import Path

from replbench.analysis import costmodel
from replbench.core.results import Fit, Observation, read_model

MODEL = Path("results/report-assets/campaign-report-20261128-211315/model")
KEYS = ("ROW-FULL bench_idx", "STATEMENT bench_idx")


def terms(part: Fit | None) -> str:
    """A fit's per-transaction and per-row terms in ms, each with its interval."""
    if part is None:
        return "no fit"
    coef, ci = part.coef or {}, part.ci95 or {}
    return ", ".join(f"{t} {1000 * coef[t]:.3f} [{1000 * ci[t][0]:.3f}–{1000 * ci[t][1]:.3f}]"
                     for t in ("per_trx", "per_row") if t in coef)


def study_of(o: Observation) -> str:
    """The study (or sweep) an observation's run belongs to: its folder's first part, without the time."""
    return (o.folder or "").split("/")[0].split("-", 3)[-1]


def show(label: str, runs: list[Observation]) -> None:
    model = costmodel.fit(runs, [])
    for key in KEYS:
        fitted = (model.settings or {}).get(key)
        if fitted is not None:
            print(f"{label:<34} {key:<20} replica {terms(fitted.replica_cpu_s)}  ({fitted.runs} runs)")


recorded = read_model(MODEL)
observations = recorded.observations or []
show("(1) as fitted", observations)
show("(2) without write-wide", [o for o in observations if o.scenario != "write-wide"])
show("(3) binlog-format's runs alone", [o for o in observations if study_of(o) == "binlog-format"])
show("(4) every run but binlog-format's", [o for o in observations if study_of(o) != "binlog-format"])
