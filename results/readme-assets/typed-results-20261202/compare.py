"""A run's summary.json and meta.json before and after the typed-results change (issue 70), key by key: the same
command run at 8009b0e (before: dict writers, no type checker) and at the commit that ends the change (after: every
file written through its record), on the same nodes one after the other. Prints the keys only one side has, the
keys whose JSON type changed, and for the keys both have, which values are equal and how the others differ (a
figure measured twice differs run to run; a text or a count that differs is named).

The runs: `./run.sh write 400 --duration 30s` at 8M accounts, ROW FULL, one after the other on the same nodes
(REPLBENCH_STATE shared): before at 8009b0e, after at 2097198. Their summary.json, meta.json and block.txt are kept
in before/ and after/, the machine's paths replaced by <repo>, <state> and <results> (in both alike). The after
run's commit reads "-dirty": this folder, untracked then, was the only change in the tree. What compare.txt shows
beyond the figures: the same 449 summary keys with the same types, the block's 40 lines in the same order; in
meta.json, the before run was the first use (the dataset built after its meta.json was begun, so its dataset keys
read null, and the pools warmed: warm_up_s per node), the after run found both done.

Usage, from the repo root: python results/readme-assets/typed-results-20261202/compare.py [BEFORE AFTER]
(default: the before/ and after/ folders beside this script).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def flat(doc: Any, prefix: str = "") -> dict[str, Any]:
    """Every leaf of a JSON document by its path (a.b.c; a list's items by index: a[0])."""
    if isinstance(doc, dict):
        out: dict[str, Any] = {}
        for key, value in doc.items():
            out.update(flat(value, f"{prefix}.{key}" if prefix else key))
        return out or {prefix: {}}
    if isinstance(doc, list):
        out = {}
        for i, value in enumerate(doc):
            out.update(flat(value, f"{prefix}[{i}]"))
        return out or {prefix: []}
    return {prefix: doc}


def kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def differs(a: Any, b: Any) -> str:
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, int | float) or not isinstance(b, int | float):
        return f"{json.dumps(a)} → {json.dumps(b)}"
    change = "" if a == 0 else f" ({(b - a) / abs(a):+.1%})"
    return f"{a:g} → {b:g}{change}"


def compare(name: str, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    old, new = flat(before), flat(after)
    both = sorted(set(old) & set(new))
    retyped = [k for k in both if kind(old[k]) != kind(new[k]) and {kind(old[k]), kind(new[k])} != {"int", "float"}]
    equal = [k for k in both if old[k] == new[k]]
    changed = [k for k in both if old[k] != new[k] and k not in retyped]
    lines = [f"== {name}: {len(old)} leaves before, {len(new)} after; {len(both)} in both, {len(equal)} equal"]
    lines += [f"only before: {k} = {json.dumps(old[k])}" for k in sorted(set(old) - set(new))]
    lines += [f"only after: {k} = {json.dumps(new[k])}" for k in sorted(set(new) - set(old))]
    lines += [f"type changed: {k}: {kind(old[k])} → {kind(new[k])}" for k in retyped]
    texts = [k for k in changed if not isinstance(old[k], int | float) or isinstance(old[k], bool)]
    lines += [f"text differs: {k}: {differs(old[k], new[k])}" for k in texts]
    numbers = [k for k in changed if k not in texts]
    lines.append(f"figures that differ (measured twice): {len(numbers)}")
    lines += [f"  {k}: {differs(old[k], new[k])}" for k in numbers]
    return lines


def labels(block: str) -> list[str]:
    """Each line of a printed block by its label (the words before its first figure or colon)."""
    return [line.split(":")[0].split("  ")[0].strip() for line in block.splitlines() if line.strip()]


def main(args: list[str]) -> None:
    before, after = (Path(a) for a in args) if len(args) == 2 else (HERE / "before", HERE / "after")
    for name in ("summary.json", "meta.json"):
        print("\n".join(compare(name, json.loads((before / name).read_text()), json.loads((after / name).read_text()))))
    old, new = labels((before / "block.txt").read_text()), labels((after / "block.txt").read_text())
    print(f"== block.txt: {len(old)} lines before, {len(new)} after; the same lines in the same order: {old == new}")
    print("\n".join(f"only before: {label}" for label in old if label not in new))
    print("\n".join(f"only after: {label}" for label in new if label not in old))


if __name__ == "__main__":
    main(sys.argv[1:])
