"""What a run ran on, beyond the knobs: every server variable that differs from the server's compiled default
(SHOW GLOBAL VARIABLES against `mariadbd --no-defaults --verbose --help`), and the disk under the datadirs with a
measured fsync latency (sync_binlog=1 and innodb_flush_log_at_trx_commit=1 make every commit wait for it)."""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from ..core import sql
from ..core.config import Settings
from ..core.results import Disk, NotDefault

FSYNC_SAMPLES = 20
# variables that differ on every node by construction (paths, ports, ids, sizes chosen per machine)
IGNORED = {"server_id", "port", "socket", "datadir", "pid_file", "log_error", "tmpdir", "hostname",
           "secure_file_priv", "gtid_binlog_pos", "gtid_binlog_state", "gtid_current_pos", "gtid_slave_pos",
           "log_bin_basename", "log_bin_index", "relay_log_basename", "relay_log_index", "timestamp",
           "system_time_zone", "version", "version_comment", "version_compile_machine", "version_compile_os",
           "version_malloc_library", "version_source_revision", "general_log_file", "slow_query_log_file",
           "innodb_data_home_dir", "innodb_log_group_home_dir", "plugin_dir", "basedir", "character_sets_dir",
           "lc_messages_dir", "aria_log_dir_path", "server_uid", "log_basename", "wsrep_node_name",
           "open_files_limit", "thread_pool_size", "innodb_buffer_pool_chunk_size"}
_defaults_cache: dict[str, str] | None = None


def compiled_defaults(mariadbd: str) -> dict[str, str]:
    """variable -> default value as the server binary prints it with no option files read."""
    global _defaults_cache
    if _defaults_cache is not None:
        return _defaults_cache
    out = subprocess.run([mariadbd, "--no-defaults", "--verbose", "--help"], capture_output=True, text=True,
                         check=False, timeout=60).stdout
    lines = out.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("----------")) + 1
    except StopIteration:
        return {}
    defaults: dict[str, str] = {}
    for line in lines[start:]:
        if not line.strip():
            break
        name, _, value = line.partition(" ")
        defaults[name.replace("-", "_")] = value.strip()
    _defaults_cache = defaults
    return defaults


def _same(server: str, default: str) -> bool:
    s, d = server.strip().upper(), default.strip().upper()
    aliases = {"TRUE": "ON", "FALSE": "OFF", "1": "ON", "0": "OFF"}
    if s == d or aliases.get(d, d) == aliases.get(s, s) or (d == "(NO DEFAULT VALUE)" and s == ""):
        return True
    try:
        return float(s) == float(d)
    except ValueError:
        return False


def non_default(settings: Settings, mariadbd: str | None) -> dict[str, dict[str, NotDefault]]:
    """Per node: each variable not at its compiled default, its value and that default (the local mariadbd's
    defaults: not asked of a topology file's servers, whose version may differ)."""
    if not mariadbd or settings.external:
        return {}
    defaults = compiled_defaults(mariadbd)
    out: dict[str, dict[str, NotDefault]] = {}
    for node in settings.nodes:
        try:
            with sql.admin(node, settings) as cur:
                cur.execute("SHOW GLOBAL VARIABLES")
                values: dict[str, str | None] = dict(sql.fetch_all(cur))
        except sql.MySQLError:
            out[node.name] = {}
            continue
        out[node.name] = {name: NotDefault(value=value, default=defaults[name])
                          for name, value in sorted(values.items())
                          if name in defaults and name not in IGNORED and not _same(str(value), defaults[name])}
    return out


def describe_disk(path: Path) -> Disk:
    """The filesystem and device under path, and the median latency of an fsync of a small write there."""
    path.mkdir(parents=True, exist_ok=True)
    device, fstype = None, None
    try:
        best = ""
        for line in Path("/proc/mounts").read_text().splitlines():
            dev, mount, kind = line.split()[:3]
            if str(path.resolve()).startswith(mount) and len(mount) >= len(best):
                best, device, fstype = mount, dev, kind
    except OSError:
        pass
    samples = []
    with tempfile.NamedTemporaryFile(dir=path, prefix=".fsync-probe-") as probe:
        for _ in range(FSYNC_SAMPLES):
            probe.write(b"x" * 512)
            probe.flush()
            begin = time.perf_counter()
            os.fsync(probe.fileno())
            samples.append(time.perf_counter() - begin)
    return Disk(device=device, filesystem=fstype, fsync_ms_median=round(1000 * statistics.median(samples), 3),
                fsync_ms_max=round(1000 * max(samples), 3), fsync_samples=FSYNC_SAMPLES)
