"""gunicorn worker classes: aiohttp's own (plain asyncio and uvloop), with gunicorn's --backlog honoured.

aiohttp's gunicorn worker starts a web.SockSite on every socket gunicorn bound, and SockSite listens again with
its own backlog, 128, whatever --backlog said (aiohttp issue #5283, open). Far above the knee a client opening
connections faster than the workers accept them then overflows a 128-deep queue: the SYNs are dropped and retried
after 1 and 3 s, and the run measures TCP's backoff instead of the app or the databases. These workers give every
SockSite gunicorn's backlog (the kernel still caps it at net.core.somaxconn).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from aiohttp.worker import GunicornUVLoopWebWorker, GunicornWebWorker


def _honour_backlog(backlog: int) -> None:
    """Make every SockSite this worker process starts listen with `backlog` unless told otherwise."""
    base = web.SockSite
    if getattr(base, "replbench_backlog", None) == backlog:
        return

    class SockSite(base):  # type: ignore[misc, valid-type]
        replbench_backlog = backlog

        def __init__(self, runner: Any, sock: Any, **kwargs: Any) -> None:
            super().__init__(runner, sock, **{"backlog": backlog, **kwargs})

    web.SockSite = SockSite  # type: ignore[misc]


class _Backlog:
    cfg: Any

    def init_process(self) -> None:
        _honour_backlog(self.cfg.backlog)
        super().init_process()  # type: ignore[misc]


class WebWorker(_Backlog, GunicornWebWorker):
    """aiohttp.GunicornWebWorker with gunicorn's --backlog."""


class UVLoopWebWorker(_Backlog, GunicornUVLoopWebWorker):
    """aiohttp.GunicornUVLoopWebWorker with gunicorn's --backlog."""
