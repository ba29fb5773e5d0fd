"""Files a user names on the command line: a path, or a name in one of the project's folders (studies/,
campaigns/), with or without its .toml."""

from __future__ import annotations

from pathlib import Path


def available(folder: Path) -> list[str]:
    """The names the folder offers."""
    return sorted(p.stem for p in folder.glob("*.toml"))


def find(name: str, folder: Path) -> Path | None:
    """The file `name` means: a path as given, else the folder's `name` or `name.toml`; None when none exists."""
    return next((c for c in (Path(name), folder / name, folder / f"{name}.toml") if c.is_file()), None)
