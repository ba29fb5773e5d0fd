"""report.md's "Your own workload": the commands that measure or price a DBA's own workload (`profile`, `model
predict --profile [--cores]`, `apply-capacity --live`, `apply-capacity --binlog`), what each needs, and how far each
held on a workload the suite did not write, every figure read from the committed evidence (analysis/ownworkload);
where that evidence is missing, the command and its page alone, no figure (issue 73).
"""

from __future__ import annotations

from pathlib import Path

from ..analysis.ownworkload import (
    Client,
    LiveRound,
    OwnFitHeld,
    RelogImage,
    ReplayRound,
    live_means,
    live_rounds,
    own_fit_held,
    profile_held,
    relog_held,
    replay_rounds,
)
from ..core.config import (
    LIVE_MIN_WINDOW_S,
    OWN_WORKLOAD_FIT,
    OWN_WORKLOAD_LIVE,
    OWN_WORKLOAD_RELOG,
    OWN_WORKLOAD_REPLAY,
    OWN_WORKLOAD_SYSBENCH,
    ROOT,
)

HEADING = "Your own workload"
PROFILE_DOC = "docs/profile.md"
OWN_RUNS_DOC = "docs/profile.md#your-own-runs---own-runs"
LIVE_DOC = "docs/apply-capacity.md#your-own-workload-live---live-window"
BINLOG_DOC = "docs/apply-capacity.md#your-own-workload-from-a-captured-binlog---binlog-file"
RELOG_DOC = "docs/apply-capacity.md#other-row-images-a-re-logging-replica"
NOT_CHECKED = "not yet checked on a workload the suite did not write"


def _client(c: Client) -> str:
    return f"sysbench {c.version} `oltp_write_only` ({c.threads} threads, {c.target_per_s}/s asked)"


def _same(c: Client, first: Client | None) -> str:
    """'the same workload' where its client ran as the first line's did, else the client."""
    alike = first is not None and (c.version, c.threads, c.target_per_s) == (first.version, first.threads,
                                                                          first.target_per_s)
    return "the same workload" if alike else _client(c)


def _evidence(folder: str) -> str:
    return f"[evidence]({folder}/README.md)"


def _pct(value: float) -> str:
    return f"{100 * value:+.1f} %".replace("-", "−")


def _range(errors: list[float]) -> str:
    return f"{_pct(min(errors))} to {_pct(max(errors))}"


def _own_fit_text(held: OwnFitHeld | None, unchecked: str) -> str:
    if held is None:
        return unchecked + "."
    rates = " and ".join(str(r) for r in held.rates)
    return (f"On {held.shapes} sysbench shapes, each priced at {rates} transactions/s from its live window at the "
            f"other rate: master and replica CPU {_range(held.own)} of the measured ({held.own_inside} of "
            f"{len(held.own)} inside the windows' interval); the model alone {_range(held.model)} "
            f"({_evidence(OWN_WORKLOAD_FIT)}).")


def section(root: Path = ROOT) -> list[str]:
    """The section (root: where the committed evidence is read from, the repository's by default)."""
    profiled = profile_held(root / OWN_WORKLOAD_SYSBENCH)
    first = profiled.client if profiled else None
    rounds = live_rounds(root / OWN_WORKLOAD_LIVE)
    unchecked = NOT_CHECKED[0].upper() + NOT_CHECKED[1:]
    lines = ["- **`./run.sh profile FILE…`** (or `--topology FILE --since … --until …`, the master's binlogs "
             "copied): the workload in a binlog, per table: transactions/s, rows per transaction, the busiest minute "
             "(the 60 s with the most), what each setting would write. Needs the files and `mariadb-binlog` "
             "(`mysqlbinlog` for MySQL's); from a server, a user with REPLICATION SLAVE and BINLOG MONITOR "
             f"([profile.md]({PROFILE_DOC})). "
             + (f"On {_client(profiled.client)}: {profiled.profiled:,} transactions counted in a {profiled.seconds} s "
                f"window, sysbench's count {profiled.client.transactions:,}, the master's GTID position "
                f"+{profiled.gtid_moved:,} ({_evidence(OWN_WORKLOAD_SYSBENCH)})." if profiled else unchecked + "."),
             "- **`./run.sh model predict --profile FILE [--cores master=N,replica=N,app=N,load=N]`**: that workload "
             "priced on every setting (binlog, cores, when a replica falls behind; with `--cores`, what those "
             "hosts sustain). Needs a profile and a cost model (this report's, or `./run.sh "
             "model fit` on your runs); your tables are priced as bench_idx's rows (a binlog shows no secondary "
             f"index), or with `--own-runs` from your live windows' CPU ([profile.md]({OWN_RUNS_DOC})). "
             + _own_fit_text(own_fit_held(root / OWN_WORKLOAD_FIT), unchecked),
             "- **`./run.sh apply-capacity --live 10m [--replica NAME]`**: how fast each replica (or the one named) "
             "applies alone what any client wrote to the master in the window. Needs the master and replicas (the "
             "native topology, or `--topology FILE`) and a window of "
             f"{LIVE_MIN_WINDOW_S / 60:g} min or more; the replicas' SQL threads are held for it "
             f"([apply-capacity.md]({LIVE_DOC})). " + _live_text(rounds, first, unchecked),
             "- **`./run.sh apply-capacity --binlog FILE… --replica NAME`**: captured binlog files replayed by one "
             "replica's SQL thread, timed. Needs the files in order and a replica of the native topology at their "
             "first GTID (stopped before the capture) "
             f"([apply-capacity.md]({BINLOG_DOC})). " + _replay_text(replay_rounds(root / OWN_WORKLOAD_REPLAY),
                                                                      first, unchecked)
             + _relog_text(relog_held(root / OWN_WORKLOAD_RELOG / "study"))]
    return [f"## {HEADING}", "",
            "Four commands measure or price yours; beside each, how far it held on a workload the suite did not "
            "write.", "", *lines, ""]


def _live_text(rounds: list[LiveRound], first: Client | None, unchecked: str) -> str:
    if not rounds:
        return unchecked + "."
    means = live_means(rounds)
    return (f"On {_same(rounds[0].client, first)}, {len(rounds)} windows of {rounds[0].seconds:g} s: counted "
            + "; ".join(f"{r.window:,} + {r.during_drains:,} during the drains = sysbench's "
                        f"{r.client.transactions:,}" for r in rounds)
            + f"; replica1 {means['live_per_s']:,.0f} transactions/s against {means['hand_per_s']:,.0f} timed by "
            f"hand (means, {_pct(means['live_per_s'] / means['hand_per_s'] - 1)}), CPU per transaction "
            f"{_pct(means['live_cpu_ms'] / means['hand_cpu_ms'] - 1)} ({_evidence(OWN_WORKLOAD_LIVE)}).")


def _replay_text(rounds: list[ReplayRound], first: Client | None, unchecked: str) -> str:
    if not rounds:
        return unchecked + "."
    live = sum(r.live_per_s for r in rounds) / len(rounds)
    replayed = sum(r.replay_per_s for r in rounds) / len(rounds)
    return (f"On {_same(first, first) if first else 'sysbench'}, {len(rounds)} windows of {rounds[0].seconds:g} s "
            "each measured live on one replica and replayed from its binlog on the other (roles swapped): "
            f"{replayed:,.0f} transactions/s replayed against {live:,.0f} live (means, {_pct(replayed / live - 1)}; "
            "rounds " + ", ".join(_pct(r.replay_per_s / r.live_per_s - 1) for r in rounds)
            + f") ({_evidence(OWN_WORKLOAD_REPLAY)}).")


def _relog_text(images: list[RelogImage]) -> str:
    """The other row images, as a replay study's re-logging replica measured them (nothing where not yet)."""
    full = next((i for i in images if i.image == "FULL"), None)
    others = [i for i in images if i.image != "FULL"]
    if full is None or not others:
        return ""
    each = "; ".join(f"{i.image} {i.bytes_per_trx:,.0f} ({_pct(i.bytes_per_trx / full.bytes_per_trx - 1)}, "
                     f"{i.label}), applied at {i.apply_per_s:,.0f} [{i.apply_low:,.0f}–{i.apply_high:,.0f}], "
                     f"{i.apply_words}"
                     for i in others)
    return (f" Other row images, from a FULL capture ([how]({RELOG_DOC})): a study's cells set `binlog_row_image`, "
            "the replica re-logs the files under each and replays what it wrote. On sysbench `oltp_write_only`, "
            f"bytes per transaction and apply rate (trx/s, median [range] of {full.repeats}): FULL "
            f"{full.bytes_per_trx:,.0f}, applied at {full.apply_per_s:,.0f} [{full.apply_low:,.0f}–"
            f"{full.apply_high:,.0f}]; {each}. Partial: the before images are the row image's, the after images "
            "every column the capture's were (a master under MINIMAL writes only the changed ones; `profile` "
            f"estimates those) ({_evidence(OWN_WORKLOAD_RELOG)}).")
