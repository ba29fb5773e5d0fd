"""Distance between the nodes: a replica's replication connection (or the app's connection to a node) through a
toxiproxy proxy with a latency toxic, since this kernel has no netem. toxiproxy is pinned like vegeta
(github.com/Shopify/toxiproxy/v2 v2.12.0 in tools/go.mod), built by the install step, started by the harness only
when a run names a link, on ports derived from the port base, its pid managed like the nodes'.

`--link replica1=5ms`, `--link replica2=20ms±2ms`, `--link app-master=1ms`: the latency is the round trip in whole
milliseconds (toxiproxy's unit), split between the two directions (an odd one's extra millisecond downstream).
A replica is moved onto its proxy safely (STOP SLAVE, CHANGE MASTER TO the proxy's port, START SLAVE, replication
verified); a run that names no link puts every replica back on its direct connection and stops toxiproxy. The
links, the toxics read back from toxiproxy's API and the round trip measured through each proxy (timed `SELECT 1`)
go into meta.json and the block."""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, ValidationError, model_validator

from ..core import sql
from ..core.config import ReplbenchError, Settings
from ..core.nodenames import MAX_REPLICAS, node_names, replica_names
from ..core.processes import alive, wait_gone
from ..core.results import LinkState, Toxic
from ..core.schema import FieldError, FileModel, between, one_of, problem
from .install import ensure_toxiproxy
from .nodes import wait_replicating

LINK_NAMES = (*replica_names(MAX_REPLICAS), *(f"app-{n}" for n in node_names(MAX_REPLICAS)))  # port order
# the spelling; what it names is the Link model's to check
LINK_RE = re.compile(r"^([\w-]+)=(\d+(?:\.\d+)?)ms(?:(?:±|\+-)(\d+(?:\.\d+)?)ms)?$")
MAX_LATENCY_MS = 10_000
API_OFFSET = 90  # toxiproxy's API on port_base + 90, its proxies on the ports after it
RTT_SAMPLES = 10
START_TIMEOUT = 10.0


def _whole_ms(value: float) -> float:
    if not value.is_integer():
        raise ValueError(f"toxiproxy delays in whole milliseconds; got {value:g} ms")
    return value


class LinkError(ReplbenchError):
    """toxiproxy could not start or be configured; replication was left on (or put back to) its direct path."""


class Link(FileModel):
    """One link, checked whatever spells it (a --link flag, a study cell's `link`): a link name known to the
    topology's port plan, a round trip and a jitter in toxiproxy's whole milliseconds."""

    name: Annotated[str, one_of(LINK_NAMES)]  # replicaN (its replication), or app-<node> (the app's connection)
    latency_ms: Annotated[float, between(0, MAX_LATENCY_MS), AfterValidator(_whole_ms)]  # round trip added
    jitter_ms: Annotated[float, AfterValidator(_whole_ms)] = 0.0

    @model_validator(mode="after")
    def _jitter_within_latency(self) -> Link:
        if self.jitter_ms > self.latency_ms:
            raise FieldError(("jitter_ms",), f"must be at most the latency ({self.latency_ms:g} ms)")
        return self

    @property
    def node(self) -> str:
        """The node the proxy leads to: the master for a replica's replication link, else the app's node."""
        return self.name.removeprefix("app-") if self.name.startswith("app-") else "master"

    def toxics(self) -> dict[str, tuple[int, int]]:
        """Each direction's latency and jitter in toxiproxy's whole milliseconds, summing to the round trip: an odd
        round trip puts its extra millisecond downstream (1 ms is 1 + 0, never round(0.5) + round(0.5) = 0)."""
        rtt, jitter = int(self.latency_ms), int(self.jitter_ms)
        return {"downstream": (rtt - rtt // 2, jitter - jitter // 2), "upstream": (rtt // 2, jitter // 2)}

    @property
    def spec(self) -> str:
        return f"{self.name}={self.latency_ms:g}ms" + (f"±{self.jitter_ms:g}ms" if self.jitter_ms else "")


def parse(spec: str) -> Link:
    """A link from its spelling, NAME=LATENCYms[±JITTERms]; the Link model checks what the spelling names."""
    match = LINK_RE.match(spec.strip())
    if not match:
        raise ValueError(f"bad link {spec!r}: use NAME=LATENCYms[±JITTERms] with NAME a replica (replica1 "
                         "… replica4: its replication) or app-master, app-replicaN (e.g. replica1=5ms, "
                         "replica2=20ms±2ms)")
    try:
        return Link(name=match.group(1), latency_ms=float(match.group(2)), jitter_ms=float(match.group(3) or 0))
    except ValidationError as exc:
        raise ValueError(f"bad link {spec!r}: {problem(exc, Link, '', '')}") from None


def parse_all(specs: list[str] | tuple[str, ...]) -> tuple[Link, ...]:
    parsed = [parse(s) for part in specs for s in part.split(",") if s.strip() and s.strip() != "none"]
    names = [link.name for link in parsed]
    if len(set(names)) != len(names):
        raise ValueError(f"a link is named twice: {', '.join(names)}")
    return tuple(sorted(parsed, key=lambda link: link.name))


def _specs(text: str) -> str:
    parse_all([text])
    return text


# a file's spelling of a cell's links (a study's `link`): "replica1=5ms,replica2=5ms" or "none", checked
LinkSpecs = Annotated[str, AfterValidator(_specs)]


def api_port(settings: Settings) -> int:
    return settings.port_base + API_OFFSET


def proxy_port(settings: Settings, link_name: str) -> int:
    return settings.port_base + API_OFFSET + 1 + LINK_NAMES.index(link_name)


def _dir(settings: Settings) -> Path:
    return settings.state / "toxiproxy"


def _pid(settings: Settings) -> int | None:
    try:
        pid = int((_dir(settings) / "toxiproxy.pid").read_text())
    except (OSError, ValueError):
        return None
    return pid if alive(pid) else None


def _api(settings: Settings, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{api_port(settings)}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as resp:
        raw = resp.read()
    return json.loads(raw) if raw else None


def start(settings: Settings) -> int:
    pid = _pid(settings)
    if pid:
        return pid
    binary = ensure_toxiproxy(settings)
    folder = _dir(settings)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "toxiproxy.log", "ab") as log:
        proc = subprocess.Popen([str(binary), "-host", "127.0.0.1", "-port", str(api_port(settings))],
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    (folder / "toxiproxy.pid").write_text(str(proc.pid))
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise LinkError(f"toxiproxy exited at start (code {proc.returncode}); see {folder / 'toxiproxy.log'}")
        try:
            _api(settings, "GET", "/version")
            return proc.pid
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    stop(settings)
    raise LinkError(f"toxiproxy did not answer on port {api_port(settings)} within {START_TIMEOUT:g} s")


def stop(settings: Settings) -> bool:
    pid = _pid(settings)
    if not pid:
        return False
    os.kill(pid, signal.SIGTERM)
    for left in wait_gone([pid], 5):
        os.kill(left, signal.SIGKILL)
    (_dir(settings) / "toxiproxy.pid").unlink(missing_ok=True)
    return True


def _replica_port(settings: Settings, replica: str) -> int | None:
    with sql.admin(settings.node(replica), settings) as cur:
        cur.execute(sql.replica_status_sql(settings.flavour))
        rows = sql.dict_rows(cur)
    return int(rows[0].get("Master_Port") or rows[0].get("Source_Port") or 0) if rows else None


def point_replica(settings: Settings, replica: str, port: int) -> None:
    """Move a replica's replication connection to port (the master's, or a proxy's) and verify it replicates."""

    if _replica_port(settings, replica) == port:
        return
    node = settings.node(replica)
    with sql.admin(node, settings) as cur:
        cur.execute(sql.stop_replica_sql(settings.flavour))
        cur.execute(sql.change_port_sql(settings.flavour), (port,))
        cur.execute(sql.start_replica_sql(settings.flavour))
    wait_replicating(node, settings)


def apply(settings: Settings, links: tuple[Link, ...]) -> dict[str, LinkState]:
    """Put every replica on its link (or back on its direct connection) and set the toxics; returns what
    toxiproxy reports and the round trip measured through each proxy. No links: direct, toxiproxy stopped."""
    named = {link.name: link for link in links}
    if settings.external:  # a topology file's replicas are never re-pointed
        if links:
            raise LinkError(f"links need the native topology; the replicas of {settings.topology_name} are not ours "
                            "to move")
        return {}
    if not links:
        for replica in settings.replicas:
            point_replica(settings, replica.name, settings.master.port)
        stop(settings)
        return {}
    try:
        start(settings)
        existing = {p["name"] for p in (_api(settings, "GET", "/proxies") or {}).values()}
        for link in links:
            upstream = settings.node(link.node).port
            if link.name in existing:
                _api(settings, "DELETE", f"/proxies/{link.name}")
            _api(settings, "POST", "/proxies", {"name": link.name, "listen": f"127.0.0.1:"
                                                f"{proxy_port(settings, link.name)}",
                                                "upstream": f"127.0.0.1:{upstream}", "enabled": True})
            for stream, (latency, jitter) in link.toxics().items():  # the round trip split between directions
                _api(settings, "POST", f"/proxies/{link.name}/toxics",
                     {"name": f"latency_{stream}", "type": "latency", "stream": stream, "toxicity": 1.0,
                      "attributes": {"latency": latency, "jitter": jitter}})
        for replica in settings.replicas:
            proxied = named.get(replica.name)
            point_replica(settings, replica.name,
                          proxy_port(settings, replica.name) if proxied else settings.master.port)
    except (urllib.error.URLError, OSError, json.JSONDecodeError) as exc:
        for replica in settings.replicas:  # nothing half switched
            point_replica(settings, replica.name, settings.master.port)
        stop(settings)
        raise LinkError(f"toxiproxy could not be configured ({exc}); replication is on its direct connections") \
            from exc
    return describe(settings, links)


def describe(settings: Settings, links: tuple[Link, ...]) -> dict[str, LinkState]:
    """Each link as toxiproxy reports it, with the round trip measured through its proxy."""
    out: dict[str, LinkState] = {}
    for link in links:
        toxics = _api(settings, "GET", f"/proxies/{link.name}/toxics") or []
        out[link.name] = LinkState(configured_rtt_ms=link.latency_ms, jitter_ms=link.jitter_ms,
                                   proxy_port=proxy_port(settings, link.name),
                                   toxics=[Toxic(stream=t["stream"], latency_ms=t["attributes"]["latency"],
                                                 jitter_ms=t["attributes"]["jitter"]) for t in toxics],
                                   measured_rtt_ms=measure_rtt(settings, link))
    return out


def measure_rtt(settings: Settings, link: Link) -> float | None:
    """Median time of `SELECT 1` over a connection through the proxy (the round trip the link adds)."""
    node = settings.node(link.node)
    try:
        conn = sql.connect(node, settings, tcp=True, port=proxy_port(settings, link.name))
    except sql.MySQLError:
        return None
    try:
        samples = []
        with conn.cursor() as cur:
            for _ in range(RTT_SAMPLES):
                begin = time.perf_counter()
                cur.execute("SELECT 1")
                cur.fetchone()
                samples.append(1000 * (time.perf_counter() - begin))
        return round(statistics.median(samples), 2)
    finally:
        conn.close()


def repair(settings: Settings) -> list[str]:
    """Every replica replicates directly or through a live proxy, never from a dead one: a replica left on a
    proxy port while toxiproxy is gone is put back on its direct connection; returns the replicas moved."""
    if settings.external or _pid(settings):
        return []
    moved = []
    for replica in settings.replicas:
        try:
            port = _replica_port(settings, replica.name)
        except sql.MySQLError:
            continue
        if port and port != settings.master.port:
            point_replica(settings, replica.name, settings.master.port)
            moved.append(replica.name)
    return moved


def set_enabled(settings: Settings, name: str, enabled: bool) -> None:
    """Cut (or restore) a link: toxiproxy closes its connections and refuses new ones while disabled."""
    try:
        _api(settings, "POST", f"/proxies/{name}", {"enabled": enabled})
    except urllib.error.HTTPError as exc:
        raise LinkError(f"no link {name} to {'restore' if enabled else 'cut'}: name it with --link") from exc


def app_hosts(settings: Settings, links: tuple[Link, ...]) -> str:
    """REPLBENCH_DB_HOSTS for the app: linked nodes through their proxies, the others direct."""
    named = {link.node: link for link in links if link.name.startswith("app-")}
    if not named:
        return settings.db_hosts
    return ",".join(f"127.0.0.1:{proxy_port(settings, named[n.name].name) if n.name in named else n.port}"
                    for n in settings.nodes)


def describe_text(meta_links: Mapping[str, LinkState]) -> str:
    """The links in one line: each one's round trip as asked, its jitter, and as measured."""
    parts = []
    for name, info in meta_links.items():
        jitter = f" ±{info.jitter_ms:g} ms" if info.jitter_ms else ""
        rtt = "-" if info.measured_rtt_ms is None else f"{info.measured_rtt_ms:g} ms"
        parts.append(f"{name} {info.configured_rtt_ms:g} ms{jitter} (measured round trip {rtt})")
    return "; ".join(parts)
