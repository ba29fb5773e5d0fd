"""Installing what is missing: MariaDB server/client/backup (and, for the tests and topology files' hosts,
prometheus-node-exporter) through apt-get, and the Go tools of tools/ (pinned
vegeta and toxiproxy, the dataset generator) built into .tools/bin, shared by every state folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..core.config import TOOLS_DIR, ReplbenchError, Settings

MARIADB_PACKAGES = ("mariadb-server", "mariadb-client", "mariadb-backup")
VEGETA_MODULE = "github.com/tsenart/vegeta/v12"
VEGETA_VERSION = "v12.13.0"
TOXIPROXY_MODULE = "github.com/Shopify/toxiproxy/v2"
TOXIPROXY_VERSION = "v2.12.0"  # pinned in tools/go.mod (a tool requirement), like vegeta


class InstallError(ReplbenchError):
    """Something needed is missing and cannot be installed here; the message says what to install."""


def mariadb_binaries() -> dict[str, str]:
    found = {name: shutil.which(name) or _sbin(name) for name in ("mariadbd", "mariadb-install-db", "mariadb")}
    return {k: v for k, v in found.items() if v}


def find_tool(name: str) -> str | None:
    """A MariaDB or MySQL program on the PATH or in the sbin folders (mariadb-binlog, mysqlbinlog), or None."""
    return shutil.which(name) or _sbin(name)


def _sbin(name: str) -> str | None:
    for folder in ("/usr/sbin", "/usr/bin", "/usr/local/sbin"):
        candidate = Path(folder) / name
        if candidate.exists():
            return str(candidate)
    return None


def ensure_mariadb() -> dict[str, str]:
    """Make sure mariadbd and its tools exist; install them with apt-get as root on Debian/Ubuntu."""
    found = mariadb_binaries()
    if len(found) == 3:
        return found
    if not can_apt():
        raise InstallError("mariadbd is missing: install MariaDB 10.11+ server, client and backup "
                           f"(Debian/Ubuntu: apt-get install {' '.join(MARIADB_PACKAGES)})")
    apt_install(MARIADB_PACKAGES)
    _stop_distribution_service()
    found = mariadb_binaries()
    if len(found) != 3:
        raise InstallError(f"apt-get finished but MariaDB binaries are still missing: {sorted(found)}")
    return found


def can_apt() -> bool:
    return os.geteuid() == 0 and shutil.which("apt-get") is not None


def apt_install(packages: tuple[str, ...]) -> None:
    print(f"replbench: installing {' '.join(packages)} with apt-get...", file=sys.stderr, flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    _run(["apt-get", "update", "-q"], env)
    _run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages], env)


NODE_EXPORTER_PACKAGE = "prometheus-node-exporter"


def node_exporter_binary() -> str | None:
    return shutil.which("prometheus-node-exporter") or shutil.which("node_exporter") or \
        _sbin("prometheus-node-exporter")


def ensure_node_exporter() -> str:
    """Prometheus node_exporter (Debian's prometheus-node-exporter): on each database host of a topology file it
    gives the node's CPU; here the tests start one. The distribution's own service is stopped after install."""
    found = node_exporter_binary()
    if found:
        return found
    if not can_apt():
        raise InstallError("prometheus node_exporter is missing: apt-get install prometheus-node-exporter "
                           "(or https://prometheus.io/download/#node_exporter)")
    apt_install((NODE_EXPORTER_PACKAGE,))
    if shutil.which("service"):
        subprocess.run(["service", NODE_EXPORTER_PACKAGE, "stop"], capture_output=True, check=False)
    found = node_exporter_binary()
    if not found:
        raise InstallError("apt-get finished but prometheus-node-exporter is still missing")
    return found


def ensure_compose_tool() -> bool:
    """docker-compose (Debian's package) for the static compose.yaml tests; best effort, False if unavailable."""
    if shutil.which("docker-compose"):
        return True
    if not can_apt():
        print("replbench: docker-compose is missing (apt-get install docker-compose); its tests will be skipped",
              file=sys.stderr)
        return False
    apt_install(("docker-compose",))
    return shutil.which("docker-compose") is not None


def _stop_distribution_service() -> None:
    """The Debian package may start its own mariadb service on 3306; ours must own the ports."""
    pid_file = Path("/run/mysqld/mysqld.pid")
    if pid_file.exists() and shutil.which("service"):
        subprocess.run(["service", "mariadb", "stop"], capture_output=True, check=False)


def _run(cmd: list[str], env: dict[str, str]) -> None:
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-5:] + proc.stderr.splitlines()[-5:])
        raise InstallError(f"{' '.join(cmd)} failed (exit {proc.returncode}):\n{tail}")


def go_binary() -> str:
    go = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)
    if not go:
        raise InstallError("the Go toolchain is missing: install Go 1.24+ (https://go.dev/doc/install or "
                           "apt-get install golang) to build the pinned vegeta")
    return go


def _go_build(settings: Settings, output: Path, package: str, what: str) -> Path:
    output.parent.mkdir(parents=True, exist_ok=True)
    print(f"replbench: building {what} (first use)...", file=sys.stderr, flush=True)
    env = dict(os.environ, CGO_ENABLED="0", GOFLAGS="-mod=mod")
    proc = subprocess.run([go_binary(), "build", "-o", str(output), package], cwd=TOOLS_DIR, env=env,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise InstallError(f"building {what} failed:\n{proc.stderr.strip()[-2000:]}")
    return output


def vegeta_version(binary: str) -> str | None:
    """The module version a vegeta binary was built from (from its Go build info)."""
    return module_version(binary, VEGETA_MODULE)


def module_version(binary: str, module: str) -> str | None:
    """The version of module a Go binary was built from (its build info)."""
    try:
        proc = subprocess.run([go_binary(), "version", "-m", binary], capture_output=True, text=True, timeout=30)
    except (InstallError, subprocess.TimeoutExpired):
        return None
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0] in ("mod", "dep") and parts[1] == module:
            return parts[2]
    return None


def ensure_vegeta(settings: Settings) -> Path:
    """The pinned vegeta: a matching one on PATH, else built from tools/go.mod into the state folder."""
    built = settings.bin_dir / "vegeta"
    if built.exists() and vegeta_version(str(built)) == VEGETA_VERSION:
        return built
    on_path = shutil.which("vegeta")
    if on_path and vegeta_version(on_path) == VEGETA_VERSION:
        return Path(on_path)
    return _go_build(settings, built, VEGETA_MODULE, f"vegeta {VEGETA_VERSION}")


def ensure_toxiproxy(settings: Settings) -> Path:
    """The pinned toxiproxy server, built from tools/go.mod into the tools folder on first use."""
    built = settings.bin_dir / "toxiproxy-server"
    if built.exists() and module_version(str(built), TOXIPROXY_MODULE) == TOXIPROXY_VERSION:
        return built
    return _go_build(settings, built, f"{TOXIPROXY_MODULE}/cmd/server", f"toxiproxy {TOXIPROXY_VERSION}")


def ensure_datagen(settings: Settings) -> Path:
    """The dataset generator (tools/datagen, Go), rebuilt when its source is newer than the binary."""
    binary = settings.bin_dir / "datagen"
    source = TOOLS_DIR / "datagen" / "main.go"
    if binary.exists() and binary.stat().st_mtime >= source.stat().st_mtime:
        return binary
    return _go_build(settings, binary, "./datagen", "the dataset generator")


OPENSSH_PACKAGES = ("openssh-client", "openssh-server")


def ensure_openssh() -> dict[str, str]:
    """OpenSSH (Debian's openssh-client and openssh-server): the harness drives a topology file's attacker hosts
    with ssh; the namespace labs (topology/netns) run sshd in their namespaces."""
    found = {name: shutil.which(name) or _sbin(name) for name in ("ssh", "ssh-keygen", "sshd")}
    if all(found.values()):
        return {k: v for k, v in found.items() if v}
    if not can_apt():
        raise InstallError("OpenSSH is missing: apt-get install openssh-client openssh-server")
    apt_install(OPENSSH_PACKAGES)
    found = {name: shutil.which(name) or _sbin(name) for name in ("ssh", "ssh-keygen", "sshd")}
    missing = [k for k, v in found.items() if not v]
    if missing:
        raise InstallError(f"apt-get finished but {', '.join(missing)} is still missing")
    return {k: v for k, v in found.items() if v}
