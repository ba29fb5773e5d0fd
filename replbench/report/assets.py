"""The report's assets: one folder per shown run, study or sweep under results/report-assets/ (a campaign's under
results/report-assets/campaign-<name>-<time>/, beside its campaign.json), every path given out relative to the
report, every copied text stripped of the machine's paths, and of a run's meta.json only what
the report reads.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..core.config import ROOT
from ..core.results import RECORDS, RunMeta, current_text, kind_of, load, meta_of, migrate, write_record
from .sources import Origin

SETTINGS_THAT_MATTER = ("binlog_format", "binlog_row_image", "sync_binlog", "innodb_flush_log_at_trx_commit",
                        "innodb_buffer_pool_size", "innodb_log_file_size", "binlog_annotate_row_events",
                        "gtid_strict_mode", "max_connections", "max_binlog_size", "userstat", "log_bin",
                        "slave_parallel_threads", "performance_schema", "max_statement_time")


# what the report reads of a run's meta.json (the one page's machine, versions, dataset, disk, settings)
META_KEPT = ("host", "versions", "dataset", "disk", "server_variables_not_default", "knobs_changed", "app")


class Writer:
    """Writes the assets of one report: every path it gives out is relative to the report's folder."""

    def __init__(self, results: Path, output: Path, origin: Origin | None = None) -> None:
        self.results = results  # the results folder (paths under it are written as results/…)
        self.origin = origin or Origin.loose(results)
        self.raw = self.origin.raw
        self.root = self.origin.assets
        self.base = output.parent
        self.written: set[str] = set()

    def folder(self, source: Path) -> Path:
        """The asset folder of a run, study or sweep folder; emptied first, unless the section is rebuilt from that
        very folder (its raw data is not in results/)."""
        name = source.name
        path = self.root / name
        if name not in self.written:
            if not self.is_asset(source):
                shutil.rmtree(path, ignore_errors=True)  # only what this report regenerates
            path.mkdir(parents=True, exist_ok=True)
            self.written.add(name)
        return path

    def is_asset(self, source: Path) -> bool:
        return source.parent.resolve() == self.root.resolve()

    def rel(self, path: Path) -> str:
        return os.path.relpath(path, self.base)

    def copy(self, src: Path, dst: Path) -> None:
        """Copy a run's file into the assets; text loses every machine path (results/… stays), and a results file
        (summary.json, campaign.json, model.json…) is copied at its kind's current version, through its record."""
        if dst.exists() and src.resolve() == dst.resolve():
            return  # a section rebuilt from its own assets
        if src.suffix not in (".txt", ".json", ".md"):
            shutil.copyfile(src, dst)
            return
        text = current_text(src) if kind_of(src.name) in RECORDS else src.read_text()
        dst.write_text(self.without_paths(text))

    def without_paths(self, text: str) -> str:
        for prefix in (str(self.results.resolve()), str(self.results), str(ROOT)):
            text = text.replace(prefix + "/", "results/" if prefix != str(ROOT) else "")
        return text

    def keep_meta(self, src: Path, dst: Path) -> None:
        """What the report reads of a run's meta.json (META_KEPT), kept beside a section's assets."""
        doc = migrate(load(src), "meta.json")  # the current version's keys, whichever version src holds
        meta = {k: v for k, v in doc.items() if k in META_KEPT}
        # a per-node map: the master's variables, where the run recorded them
        master = (meta_of(doc).server_variables_not_default or {}).get("master") or {}
        if "server_variables_not_default" in meta:  # only what the one page shows (no datadir paths)
            meta["server_variables_not_default"] = {
                "master": {k: v for k, v in master.items() if k in SETTINGS_THAT_MATTER}}
        # as its record, which write_record stamps with meta.json's current version (the kept copy is a meta.json of
        # that version holding fewer keys), its machine's paths then cut from the text
        write_record(dst, RunMeta.model_validate(meta))
        dst.write_text(self.without_paths(dst.read_text()))

    def keep_campaign(self) -> None:
        """The campaign's record beside its assets (commit, units, calibration), read back on a fresh clone."""
        self.root.mkdir(parents=True, exist_ok=True)
        source = self.raw / "campaign.json"
        if source.exists():
            self.copy(source, self.root / "campaign.json")

    def rebuilt(self) -> list[str]:
        """The sections this report rebuilt from committed assets (their raw data is not in results/)."""
        return sorted(name for name in self.written if not (self.raw / name).is_dir())

    def kept(self) -> list[str]:
        """Committed asset folders this report did not regenerate (left on disk, never deleted)."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and p.name not in self.written)
