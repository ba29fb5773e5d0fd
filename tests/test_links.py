"""Distance between the nodes, through the real pinned toxiproxy: links with latency, semi-sync at a round trip,
a cut link, and bad link specs."""

from __future__ import annotations

import json

import pytest

from replbench.core import sql
from replbench.core.config import Settings
from replbench.topology import links

from .conftest import SemiSyncRuns, env_for, master_port_of, replicating, run_cli, run_folder, run_main


def test_a_replica_on_a_20ms_link_replicates_and_comes_back_direct(topo: Settings) -> None:
    try:
        info = links.apply(topo, links.parse_all(["replica1=20ms"]))
        assert master_port_of(topo, "replica1") == links.proxy_port(topo, "replica1")
        assert master_port_of(topo, "replica2") == topo.master.port
        assert (info["replica1"].measured_rtt_ms or 0) >= 20
        assert {t.stream for t in info["replica1"].toxics or []} == {"upstream", "downstream"}
        assert replicating(topo)
        with sql.admin(topo.master, topo) as cur:
            cur.execute("UPDATE bench_idx.accounts SET city = 'Faraway' WHERE id = 5")
        from replbench.topology import nodes

        assert all(v is not None for v in nodes.wait_caught_up(topo, 30).values())
    finally:
        links.apply(topo, ())
    assert master_port_of(topo, "replica1") == topo.master.port
    assert replicating(topo)


@pytest.mark.parametrize("spec, downstream, upstream", [("replica1=1ms", (1, 0), (0, 0)),
                                                          ("replica1=5ms±3ms", (3, 2), (2, 1)),
                                                          ("replica1=20ms", (10, 0), (10, 0))])
def test_the_two_directions_add_up_to_the_round_trip(spec: str, downstream: tuple, upstream: tuple) -> None:
    # toxiproxy takes whole ms per direction: halving and rounding made 1 ms a 0 ms link and 5 ms a 4 ms one
    assert links.parse(spec).toxics() == {"downstream": downstream, "upstream": upstream}


def test_a_1ms_link_adds_a_millisecond(topo: Settings) -> None:
    try:
        info = links.apply(topo, links.parse_all(["replica1=1ms"]))["replica1"]
        assert sum(t.latency_ms or 0 for t in info.toxics or []) == 1, info.toxics  # read back from toxiproxy
        assert (info.measured_rtt_ms or 0) >= 1, info
    finally:
        links.apply(topo, ())
    assert replicating(topo)


def test_semi_sync_waits_for_the_round_trip(topo: Settings, semi_sync_runs: SemiSyncRuns) -> None:
    # write at 20/s for 2 s under semi-sync after_sync, both replicas 20 ms away, then at once without links (the
    # session's pair: test_replication_settings and test_truth read the near run too)
    far, near = semi_sync_runs.far, semi_sync_runs.near
    assert far.returncode == 0, far.stdout + far.stderr
    assert near.returncode == 0, near.stdout + near.stderr
    wait_far = json.loads((run_folder(far.stdout) / "summary.json").read_text())
    wait_near = json.loads((run_folder(near.stdout) / "summary.json").read_text())
    far_us = wait_far["replication"]["nodes"]["master"]["semi_sync"]["avg_tx_wait_us"]
    near_us = wait_near["replication"]["nodes"]["master"]["semi_sync"]["avg_tx_wait_us"]
    # the wait starts when the commit is flushed, a little after the event left for the replica: most, not all,
    # of the 20 ms round trip the link adds shows in it (19.2 ms measured here), whatever the box's own speed
    assert far_us - near_us >= 10_000, (far_us, near_us)
    assert "Links: replica1 20 ms (measured round trip" in far.stdout
    # the run without links is direct again (read right after it, before any other test's run)
    assert semi_sync_runs.replica1_source_port_after_near == topo.master.port


def test_a_cut_link_stops_the_io_thread_and_a_restore_brings_it_back(topo: Settings) -> None:
    proc = run_cli(["write", "20", "--duration", "4s", "--link", "replica1=0ms", "--fault", "cut:replica1@1s",
                    "--fault", "restore:replica1@2.5s"], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((run_folder(proc.stdout) / "summary.json").read_text())
    assert "replica1" in summary["replicas_not_replicating"]
    assert summary["consistency"]["equal"] is True
    assert set(summary["fault_windows"]) == {"cut replica1: before", "cut replica1: during", "cut replica1: after"}
    links.apply(topo, ())
    assert replicating(topo)


@pytest.mark.parametrize("spec", ["replica1=5", "replica5=5ms", "master=5ms", "replica1=20000ms", "replica1=5ms±9ms",
                                  "replica1=fast", "replica1=1.5ms", "replica1=4ms±0.5ms"])
def test_bad_link_specs_exit_2(spec: str) -> None:
    code, out, err = run_main(["write", "10", "--link", spec])
    assert code == 2, out + err
    assert "bad link" in err.splitlines()[-1]
    with pytest.raises(ValueError):
        links.parse(spec)


def test_a_link_to_a_replica_the_topology_lacks_exits_2() -> None:
    code, out, err = run_main(["write", "10", "--link", "replica3=5ms", "--replicas", "2"])
    assert code == 2, out + err
    assert "replica3: not in this topology" in err.splitlines()[-1]


def test_a_cut_without_a_link_exits_2() -> None:
    code, _, err = run_main(["write", "10", "--fault", "cut:replica1@1s"])
    assert code == 2 and "needs a link" in err


@pytest.mark.disruptive  # stops toxiproxy under replica2: its replication broken until `up`
def test_up_puts_a_replica_left_on_a_dead_proxy_back_on_its_direct_connection(topo: Settings) -> None:
    links.apply(topo, links.parse_all(["replica2=1ms"]))
    links.stop(topo)  # toxiproxy gone, replica2 still pointed at its port
    assert master_port_of(topo, "replica2") == links.proxy_port(topo, "replica2")
    proc = run_cli(["up"], env_for(topo.state))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "replica2 replicated through a proxy that is gone" in proc.stderr
    assert master_port_of(topo, "replica2") == topo.master.port and replicating(topo)
