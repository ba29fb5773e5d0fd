"""The code's shape, as issue 48 set it: no function over 80 lines, no class that assigns more than 12 instance
attributes (a class that needs more holds records of its phases instead, as experiments/run.Run does)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "replbench").rglob("*.py")) + sorted((ROOT / "app").rglob("*.py"))
MAX_FUNCTION_LINES = 80
MAX_INSTANCE_ATTRIBUTES = 12


def _instance_attributes(cls: ast.ClassDef) -> set[str]:
    names = set()
    for node in ast.walk(cls):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        for target in targets:
            for t in ast.walk(target):
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    names.add(t.attr)
    return names


def test_no_function_is_over_80_lines() -> None:
    long = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, long


def test_no_class_assigns_more_than_12_instance_attributes() -> None:
    wide = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and len(attrs := _instance_attributes(node)) > MAX_INSTANCE_ATTRIBUTES:
                wide.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({len(attrs)}: {sorted(attrs)})")
    assert not wide, wide
