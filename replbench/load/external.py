"""An external tool writing to the master while a live window is open (a workload file, core/workload): its
database made ready once, then the tool run at the unit's rate for the window in its own session (a Ctrl-C reaches
only us; the tool is stopped with SIGINT, then SIGKILL), its output kept in the unit's folder. A tool that is
missing, fails, or outlives its window is one line naming its output file (docs/studies.md, "Live units")."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

from ..core import sql
from ..core.config import ReplbenchError, Settings
from ..core.workload import Workload
from ..topology import install

STOP_GRACE_S = 5.0  # after SIGINT, before SIGKILL
LATE_S = 30.0  # a tool still running this long after its window closed is stopped and the unit fails
MARGIN_S = 2.0  # the tool writes for the window less this, so that it has stopped when the window closes
HIDDEN = "********"  # the password, as a recorded command shows it


class DriverError(ReplbenchError):
    """The workload's tool is missing, failed or outlived its window."""


def connection(settings: Settings) -> dict[str, str]:
    """How the tool reaches the master: as the harness does (native: the admin user over 127.0.0.1; a topology file's
    server: REPLBENCH_DB_USER at its host)."""
    master = settings.master
    if master.external:
        return {"host": master.host, "port": str(master.port), "user": settings.db_user,
                "password": settings.db_password}
    return {"host": "127.0.0.1", "port": str(master.port), "user": sql.ADMIN_USER,
            "password": settings.admin_password}


def shown(words: list[str], password: str) -> str:
    """A command as a log records it: the password hidden."""
    return " ".join(w.replace(password, HIDDEN) if password else w for w in words)


def _tool(workload: Workload) -> None:
    """The tool on PATH, installed with apt-get (as root on Debian) when the file names its package."""
    tool = workload.run[0]
    if shutil.which(tool) is not None:
        return
    if workload.package and install.can_apt():
        install.apt_install((workload.package,))
        if shutil.which(tool) is not None:
            return
    hint = f" (apt-get install {workload.package})" if workload.package else ""
    raise DriverError(f"workload {workload.name}: {tool} is not installed{hint}")


def ensure_prepared(settings: Settings, workload: Workload, log: Path) -> bool:
    """The workload's database on the master, created when missing and filled by the file's `prepare` when it holds
    no table (True: prepared now). The replicas get it through replication, as any write."""
    _tool(workload)
    with sql.admin(settings.master, settings) as cur:
        cur.execute(f"CREATE DATABASE IF NOT EXISTS `{workload.database}`")
        cur.execute("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = %s", (workload.database,))
        tables = int(sql.one_row(cur)[0])
    if tables > 0:
        return False
    if workload.prepare is None:
        raise DriverError(f"workload {workload.name}: database {workload.database} holds no table and the file has "
                          "no prepare command")
    values = connection(settings)
    words = workload.command("prepare", values)
    with log.open("a") as out:
        out.write(f"$ {shown(words, values['password'])}\n")
        out.flush()
        done = subprocess.run(words, stdout=out, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        raise DriverError(f"workload {workload.name}: prepare exited {done.returncode} (see {log.name})")
    return True


class Driver:
    """The tool writing at `rate` per second for `seconds`, its output in `out`."""

    def __init__(self, settings: Settings, workload: Workload, rate: int, seconds: float, out: Path) -> None:
        self.workload, self.out = workload, out
        self.values = {**connection(settings), "rate": str(rate), "seconds": str(max(1, round(seconds - MARGIN_S)))}
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        _tool(self.workload)
        words = self.workload.command("run", self.values)
        with self.out.open("a") as out:
            out.write(f"$ {shown(words, self.values['password'])}\n")
            out.flush()
            self.proc = subprocess.Popen(words, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def wait(self) -> None:
        """The tool's end, at most LATE_S after its window; one line when it failed or had to be stopped."""
        if self.proc is None:
            return
        try:
            code = self.proc.wait(timeout=LATE_S)
        except subprocess.TimeoutExpired:
            self.stop()
            raise DriverError(f"workload {self.workload.name}: still writing {LATE_S:g} s after its window closed; "
                              f"stopped (see {self.out.name})") from None
        if code != 0:
            raise DriverError(f"workload {self.workload.name}: {self.workload.run[0]} exited {code} (see "
                              f"{self.out.name})")

    def stop(self) -> None:
        """The tool stopped if it still runs (an interrupted or failed window): SIGINT, then SIGKILL."""
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        for sig, grace in ((signal.SIGINT, STOP_GRACE_S), (signal.SIGKILL, STOP_GRACE_S)):
            try:
                os.killpg(proc.pid, sig)
                proc.wait(timeout=grace)
                return
            except subprocess.TimeoutExpired:
                continue
            except ProcessLookupError:
                return
