"""report.md's "Your own workload": the four commands, what each needs, and how far each held on sysbench, every
figure read from the committed evidence (analysis/ownworkload); without that evidence, the commands alone and no
figure (issue 73)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from replbench.analysis import ownworkload
from replbench.core.config import OWN_WORKLOAD_FIT, OWN_WORKLOAD_LIVE, OWN_WORKLOAD_RELOG, OWN_WORKLOAD_SYSBENCH, ROOT
from replbench.report import ownworkload as section

from .test_docs import broken

pytestmark = pytest.mark.unit

COMMANDS = ("`./run.sh profile FILE…`", "`./run.sh model predict --profile FILE [--cores master=N,replica=N,app=N,"
            "load=N]`", "`./run.sh apply-capacity --live 10m [--replica NAME]`",
            "`./run.sh apply-capacity --binlog FILE… --replica NAME`")


def test_the_evidence_reads_as_its_readmes_say() -> None:
    """The committed files say what their READMEs do: the profile counted sysbench's transactions, the plan's CPU
    against the by-hand figures, each live window's count is sysbench's."""
    profiled = ownworkload.profile_held(ROOT / OWN_WORKLOAD_SYSBENCH)
    assert profiled is not None
    assert profiled.profiled == profiled.client.transactions == profiled.gtid_moved == 5_837
    held = ownworkload.own_fit_held(ROOT / OWN_WORKLOAD_FIT)
    assert held is not None and (held.shapes, held.rates, len(held.own), held.own_inside) == (2, (150, 300), 8, 2)
    # compare.txt: −14.5 % to +17.0 % with --own-runs, +4.9 % to +121.8 % the model alone (its figures rounded)
    assert min(held.own) == pytest.approx(-0.145, abs=0.002) and max(held.own) == pytest.approx(0.170, abs=0.002)
    assert min(held.model) == pytest.approx(0.049, abs=0.002) and max(held.model) == pytest.approx(1.218, abs=0.003)
    rounds = ownworkload.live_rounds(ROOT / OWN_WORKLOAD_LIVE)
    assert len(rounds) == 2
    assert all(r.window + r.during_drains == r.client.transactions for r in rounds)
    means = ownworkload.live_means(rounds)
    assert means["live_per_s"] / means["hand_per_s"] - 1 == pytest.approx(0.058, abs=0.001)  # agree.txt
    assert means["live_cpu_ms"] / means["hand_cpu_ms"] - 1 == pytest.approx(-0.024, abs=0.001)
    # the re-log study: each row image's bytes per transaction are what mariadb-binlog alone counted (by_hand.txt)
    images = {i.image: i for i in ownworkload.relog_held(ROOT / OWN_WORKLOAD_RELOG / "study")}
    assert list(images) == ["FULL", "MINIMAL", "NOBLOB"] and images["FULL"].label == "measured"
    assert images["MINIMAL"].label == images["NOBLOB"].label == "partial"
    by_hand = re.findall(r"([\d.]+) bytes per transaction", (ROOT / OWN_WORKLOAD_RELOG / "by_hand.txt").read_text())
    assert [images[i].bytes_per_trx for i in images] == [float(b) for b in by_hand[:3]], by_hand
    assert images["MINIMAL"].bytes_per_trx < images["FULL"].bytes_per_trx


def test_the_section_names_each_command_what_it_needs_and_how_far_it_held() -> None:
    lines = section.section()
    assert lines[0] == f"## {section.HEADING}"
    text = "\n".join(lines)
    bullets = [line for line in lines if line.startswith("- ")]
    assert len(bullets) == len(COMMANDS)
    for bullet, command in zip(bullets, COMMANDS, strict=True):
        assert bullet.startswith(f"- **{command}**"), bullet[:80]
        assert "Needs " in bullet, command
    for figure in ("5,837 transactions counted", "sysbench's count 5,837",
                   "master and replica CPU −14.5 % to +17.0 % of the measured (2 of 8 inside the windows' interval); "
                   "the model alone +4.9 % to +121.8 %", "29,968 + 38 during the drains = sysbench's 30,006",
                   "(means, +5.8 %)", "CPU per transaction −2.4 %"):
        assert figure in text, figure
    # the replay: the same windows live and replayed from their binlog (replay-20261202/agree.txt); the other row
    # images as a re-logging replica wrote them (relog-20261203)
    assert "5,436 transactions/s replayed against 5,399 live (means, +0.7 %; rounds +5.8 %, −4.5 %)" in bullets[3]
    assert "Other row images, from a FULL capture" in bullets[3] and "MINIMAL " in bullets[3] and \
        "partial" in bullets[3], bullets[3]
    # every link resolves from report.md, beside which the section is written
    links = re.findall(r"\]\(([^)]+)\)", text)
    assert {"docs/profile.md", f"{OWN_WORKLOAD_SYSBENCH}/README.md", f"{OWN_WORKLOAD_LIVE}/README.md",
            f"{OWN_WORKLOAD_FIT}/README.md", f"{OWN_WORKLOAD_RELOG}/README.md"} <= set(links)
    assert [link for link in links if broken(ROOT / "report.md", link)] == []


def test_without_its_evidence_the_section_states_no_figure(tmp_path: Path) -> None:
    text = "\n".join(section.section(tmp_path))
    assert all(command in text for command in COMMANDS)
    assert text.count(section.NOT_CHECKED[1:]) == 4 and "evidence" not in text
    assert not re.search(r"\d,\d{3}|\d %", text)  # no count, no error: nothing filled in
    # one command's files missing: its figures go, the others' stay
    for folder in (OWN_WORKLOAD_SYSBENCH, OWN_WORKLOAD_FIT):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    for path in (tmp_path / OWN_WORKLOAD_FIT).glob("predict-*-from-*.txt"):
        path.unlink()
    text = "\n".join(section.section(tmp_path))
    assert "5,837 transactions counted" in text and "the windows' interval" not in text
