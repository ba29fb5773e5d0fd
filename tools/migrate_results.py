"""Migrates every committed results file to its kind's current version, in place, through the codec
(replbench/core/results: KINDS, migrate, write_record), and checks each file before writing it: only the envelope
(`schema_version`) and the key names KINDS lists as renamed may change, never a value.

It walks the two committed results folders (results/readme-assets and results/report-assets, the folders .gitignore
lets into git; raw run folders beside them are skipped: a reader migrates those as it reads them) and takes every file
whose name is a results kind (summary.json, <run>-summary.json, meta.json, sweep.json, …, profile.json; vegeta's
report.json and other JSON are not results files). For each one: the document is migrated and validated as its
record, the document write_record would write is made of that record, and compared with the file's: the renames undone
(from the key names the file holds and KINDS' table alone, not through migrate) and `schema_version` left out, the two
must be the same JSON text (sorted keys, so 5.0 and 5 differ). A file that differs otherwise, or that the codec
refuses, is named with the first difference and not written; the script then exits 1. A file already at its kind's
current version is left untouched, so a second run migrates nothing. It prints, per kind, the files read, those already
current, those migrated and, of those, the ones with a key renamed; paths relative to the repository's root.

Why a standalone script in tools/, run as `.venv/bin/python tools/migrate_results.py [--dry-run]` from the
repository's root: it rewrites committed files of this repository, which is a maintainer's step when a kind's version
changes (re-run it then), not something a user of the harness does to their own results (their files are migrated as
they are read), so it is no ./run.sh command under replbench/cli; and it is not an evidence script under
results/readme-assets either, whose scripts the unit tier re-runs against the committed files (a re-run of a writer
would write them). Its output of 1 December 2026 is kept in results/readme-assets/migrate-20261201/migrate.txt.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]  # tools/migrate_results.py -> the repository
sys.path.insert(0, str(ROOT))
from replbench.analysis.profile import Profile  # noqa: E402
from replbench.core import results  # noqa: E402

COMMITTED = ("results/readme-assets", "results/report-assets")  # results/* is ignored but for these (.gitignore)
RECORDS: dict[str, type[BaseModel]] = {**results.RECORDS, "profile.json": Profile}
COLUMNS = ("read", "current", "migrated", "renamed")


def committed_files(root: Path) -> list[tuple[Path, str]]:
    """Every results file under the committed folders, with its kind, in path order."""
    found = []
    for folder in COMMITTED:
        for path in sorted((root / folder).rglob("*.json")):
            kind = results.kind_of(path.name)
            if kind is not None:
                found.append((path, kind))
    return found


def version_of(doc: dict[str, Any]) -> int:
    version = doc.get("schema_version")
    return 0 if version is None else int(version)


def undone(new: dict[str, Any], old: dict[str, Any], kind: str) -> tuple[dict[str, Any], int]:
    """The migrated document with the renames KINDS lists for the file's version undone (each key back to the name
    the file held it under, worked out from the file's key names and the table only) and schema_version left out;
    and how many keys were renamed."""
    names = {key: key for key in old}  # the name each of the file's keys has now -> its name in the file
    for now, then in results.KINDS[kind].renamed_since(version_of(old)):
        if then in names and now not in names:
            names[now] = names.pop(then)
    doc = {names.get(key, key): value for key, value in new.items() if key != "schema_version"}
    return doc, sum(1 for now, then in names.items() if now != then)


def text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, sort_keys=True)


def migrated(path: Path, kind: str) -> tuple[BaseModel, int]:
    """The file's record at its kind's current version and how many keys it renamed; ValueError where the codec
    refuses it or where anything but the envelope and the listed key names would change."""
    old = results.load(path)
    record = RECORDS[kind].model_validate(results.migrate(old, kind))
    new = results.document_of(record)  # what write_record writes
    if new.get("schema_version") != results.KINDS[kind].version:
        raise ValueError(f"written at version {new.get('schema_version')!r}, not {results.KINDS[kind].version}")
    back, renamed = undone(new, old, kind)
    before = {key: value for key, value in old.items() if key != "schema_version"}
    if text(back) != text(before):
        changed = sorted(key for key in {*back, *before} if text({"v": back.get(key)}) != text({"v": before.get(key)}))
        raise ValueError(f"a value would change (keys {', '.join(changed[:5])}): not written")
    return record, renamed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dry-run", action="store_true", help="check and count, write nothing")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this script's)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    counts: dict[str, Counter[str]] = {kind: Counter() for kind in results.KINDS}
    refused = []
    for path, kind in committed_files(root):
        counts[kind]["read"] += 1
        try:
            if version_of(results.load(path)) == results.KINDS[kind].version:
                counts[kind]["current"] += 1
                continue
            record, renamed = migrated(path, kind)
        except (ValueError, TypeError) as exc:
            refused.append(f"{path.relative_to(root)}: {str(exc).splitlines()[0]}")
            continue
        if not args.dry_run:
            results.write_record(path, record)
        counts[kind]["migrated"] += 1
        counts[kind]["renamed"] += 1 if renamed else 0
    verb = "would be migrated (--dry-run: nothing written)" if args.dry_run else "migrated"
    print(f"results files under {' and '.join(COMMITTED)}, by kind (current version); {verb}:")
    print(f"{'kind':<22}" + "".join(f"{c:>10}" for c in COLUMNS))
    for kind, count in counts.items():
        print(f"{f'{kind} (v{results.KINDS[kind].version})':<22}" + "".join(f"{count[c]:>10}" for c in COLUMNS))
    total: Counter[str] = sum(counts.values(), Counter())
    print(f"{'total':<22}" + "".join(f"{total[c]:>10}" for c in COLUMNS))
    print("renamed: files with a key under an older name (" + "; ".join(
        f"{kind} {then} -> {now}" for kind, spec in results.KINDS.items() for step in sorted(spec.renames)
        for now, then in spec.renames[step]) + ")")
    for line in refused:
        print(f"refused: {line}")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
