"""DBA knobs of a run: binlog format and row image, binlog and redo durability. Applied with SET GLOBAL on every
node before a run (the app is restarted after, so its connections pick them up), read back and recorded.
Defaults are the reference setup: ROW, FULL image, durable (sync_binlog=1, innodb_flush_log_at_trx_commit=1)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from . import sql
from .config import Settings

BINLOG_FORMATS = ("ROW", "STATEMENT", "MIXED")
ROW_IMAGES = ("FULL", "MINIMAL", "NOBLOB")
VARIABLES = {"binlog_format": "binlog_format", "binlog_row_image": "binlog_row_image",
             "sync_binlog": "sync_binlog", "flush_log_at_trx_commit": "innodb_flush_log_at_trx_commit"}


@dataclass(frozen=True)
class Knobs:
    binlog_format: str = "ROW"
    binlog_row_image: str = "FULL"
    sync_binlog: int = 1
    flush_log_at_trx_commit: int = 1

    def __post_init__(self) -> None:
        if self.binlog_format not in BINLOG_FORMATS:
            raise ValueError(f"binlog format must be one of {', '.join(BINLOG_FORMATS)}")
        if self.binlog_row_image not in ROW_IMAGES:
            raise ValueError(f"binlog row image must be one of {', '.join(ROW_IMAGES)}")
        if self.sync_binlog < 0:
            raise ValueError("sync_binlog must be 0 or more")
        if self.flush_log_at_trx_commit not in (0, 1, 2):
            raise ValueError("flush_log_at_trx_commit must be 0, 1 or 2")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def apply(settings: Settings, knobs: Knobs) -> dict[str, dict[str, Any]]:
    """SET GLOBAL the knobs on every node; returns the values each node reports afterwards."""
    readback: dict[str, dict[str, Any]] = {}
    for node in settings.nodes:
        with sql.admin(node, settings) as cur:
            for name, variable in VARIABLES.items():
                cur.execute(f"SET GLOBAL {variable} = %s", (getattr(knobs, name),))
            names = ", ".join(f"@@GLOBAL.{v}" for v in VARIABLES.values())
            cur.execute(f"SELECT {names}")
            readback[node.name] = dict(zip(VARIABLES, cur.fetchone()))
    return readback
