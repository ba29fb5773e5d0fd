"""Which fields of a finished run's summary every committed one fills: the audit behind what core/results.FinishedRun
and FinishedWriteRun require.

A run that measured what it set out to is read as a FinishedRun (a FinishedWriteRun where a write endpoint is among
its outcomes, results.finished); a field it requires is one every committed finished run holds and the current code
fills for every such run. For each field of those records, and of the parts they require (latency_ms, binlog, a
write run's consistency), it prints how many committed finished runs, and how many of those that wrote, hold it
non-null, and what the record makes of it: required (by both records, or by the write run's alone) or optional. A
field every committed run of its kind holds and the record leaves optional is one the current code may leave None,
or not set at all, in a finished run: ALWAYS_BUT names why, and the script exits 1 for such a field it does not name
(it is then to be required, or its reason given).

It reads every summary.json (and a sweep's <run>-summary.json) under the committed results folders through the codec
(results.load, summary_of, finished). Run as `.venv/bin/python tools/required_fields.py` from anywhere; its output is
tools/required_fields.txt, which tests/test_evidence.py prints again from the committed files and compares.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]  # tools/required_fields.py -> the repository
sys.path.insert(0, str(ROOT))
from replbench.core import results  # noqa: E402

COMMITTED = ("results/readme-assets", "results/report-assets")  # results/* is ignored but for these (.gitignore)
PARTS = ("latency_ms", "binlog", "consistency")  # the parts a finished (write) run requires, their fields listed too
# fields every committed finished run (or write run) holds that stay optional: the current code may leave them out
ALWAYS_BUT = {
    "binlog.bytes_per_write": "None when no write succeeded (measure/binlog.per_write)",
    "consistency.equal": "None when a replica did not catch up: not checked (experiments/run._check_consistency)",
    "consistency.checksums": "absent when a replica did not catch up: not checked",
    "consistency.caught_up_s": "absent when a replica did not catch up: not checked",
}


def committed_summaries() -> list[Path]:
    """Every run's summary under the committed folders, in path order."""
    return [path for folder in COMMITTED for path in sorted((ROOT / folder).rglob("*.json"))
            if results.kind_of(path.name) == "summary.json"]


def held(runs: Sequence[BaseModel], field: str) -> int:
    """How many of the runs hold the field (a part's as part.field) non-null."""
    part, _, name = field.rpartition(".")
    return sum(1 for run in runs
               if getattr(getattr(run, part) if part else run, name, None) is not None)


def rows(finished: Sequence[BaseModel], wrote: Sequence[BaseModel]) -> list[tuple[str, int | None, int, str]]:
    """(field, finished runs holding it (None: a part only a write run has), write runs holding it, what the records
    make of it) per field."""
    out = []
    fields: list[tuple[str, type[BaseModel], type[BaseModel] | None]] = [
        (name, results.FinishedWriteRun, results.FinishedRun) for name in results.FinishedWriteRun.model_fields]
    for part in PARTS:
        write_part = results.FinishedWriteRun.model_fields[part].annotation
        run_part = results.FinishedRun.model_fields[part].annotation
        assert isinstance(write_part, type) and issubclass(write_part, BaseModel)
        both = run_part if isinstance(run_part, type) and issubclass(run_part, BaseModel) else None
        fields += [(f"{part}.{name}", write_part, both) for name in write_part.model_fields]
    for field, write_record, run_record in fields:
        name = field.rpartition(".")[2]
        if run_record is not None and run_record.model_fields[name].is_required():
            said = "required"
        elif write_record.model_fields[name].is_required():
            said = "required (write)"
        else:
            said = "optional"
        count = held(finished, field) if run_record is not None else None
        out.append((field, count, held(wrote, field), said))
    return out


def main() -> int:
    paths = committed_summaries()
    finished = [run for path in paths if (run := results.finished(results.summary_of(results.load(path))))]
    wrote = [run for run in finished if isinstance(run, results.FinishedWriteRun)]
    print(f"{len(paths)} committed summaries, {len(finished)} finished runs, {len(wrote)} of them wrote\n")
    print(f"{'field':<40} {'finished':>9} {'wrote':>9}  record")
    unexplained = []
    for field, count, of_writes, said in rows(finished, wrote):
        full = count == len(finished) or of_writes == len(wrote)
        why = ALWAYS_BUT.get(field, "") if full and said == "optional" else ""
        if full and said == "optional" and not why:
            unexplained.append(field)
        shown = "-" if count is None else str(count)
        print(f"{field:<40} {shown:>9} {of_writes:>9}  {said}" + (f": {why}" if why else ""))
    if unexplained:
        print(f"held by every such run but optional, with no reason given: {', '.join(unexplained)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
