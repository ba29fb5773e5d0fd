"""The files a user writes (scenarios, topology files, studies, campaigns, and the links a study names) are read by
models (core/schema): an unknown key or a bad value is refused with one line naming the file, the line and the key;
a study cell's keys come from the tables (the knobs, the settings table); the app never loads pydantic."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from replbench.core import scenario, schema, topofile
from replbench.core.config import ROOT, SETTING_LIST
from replbench.experiments import campaign, studyfile
from replbench.topology import links
from replbench.topology.knobs import KNOBS

SCENARIO = 'schema = "bench_idx"\n[[requests]]\nendpoint = "get_user"\n'
TOPOLOGY = '[master]\nhost = "db1"\n[replica1]\nhost = "db2"\n'
STUDY = ('description = "d"\nscenarios = ["write"]\nrate = 10\nduration = "2s"\n'
         '[[cells]]\nname = "a"\nbinlog_format = "ROW"\n[[cells]]\nname = "b"\nbinlog_format = "STATEMENT"\n')
CAMPAIGN = '[[units]]\ncommand = "get 20"\n[[units]]\ncommand = "write 20"\n'


def refused(load: object, path: Path, text: str, error: type[Exception]) -> str:
    path.write_text(text)
    with pytest.raises(error) as caught:
        load(path)  # type: ignore[operator]
    message = str(caught.value)
    assert "\n" not in message and message.split(":")[0].endswith(path.name), message  # one line, the file first
    return message


def scenario_message(tmp_path: Path, text: str) -> str:
    return refused(lambda p: scenario.load(p.stem, p.parent), tmp_path / "sc.toml", text, scenario.ScenarioError)


def topology_message(tmp_path: Path, text: str) -> str:
    return refused(topofile.load, tmp_path / "servers.toml", text, topofile.TopologyFileError)


def study_message(tmp_path: Path, text: str) -> str:
    return refused(lambda p: studyfile.load(str(p)), tmp_path / "s.toml", text, studyfile.StudyError)


def campaign_message(tmp_path: Path, text: str) -> str:
    return refused(lambda p: campaign.load(str(p)), tmp_path / "c.toml", text, campaign.CampaignError)


@pytest.mark.parametrize("text, expected", [
    (SCENARIO + "[targets]\ncolour = 1\n", "sc.toml:5: targets.colour: unknown key; keys: bulk_rows, count,"),
    (SCENARIO.replace("[[requests]]", "color = 1\n[[requests]]"), "sc.toml:2: color: unknown key"),
    (SCENARIO + 'wieght = 2\n', "sc.toml:4: requests[1].wieght: unknown key; keys: endpoint, weight"),
    (SCENARIO + "[targets]\nbulk_rows = 0\n", "sc.toml:5: targets.bulk_rows: must be from 1 to 10000, got 0"),
    (SCENARIO + "weight = -1\n", "sc.toml:4: requests[1].weight: must be greater than 0, got -1"),
    (SCENARIO + '[pass]\nmax_p99 = 1\n', "sc.toml:5: pass.max_p99: must be a duration such as 60s or 500ms, got 1"),
    (SCENARIO.replace("bench_idx", "bench"), "sc.toml:1: schema: must be one of bench_idx, bench_noidx, bench_nopk"),
    ('schema = "bench_idx"\n', "sc.toml: requests: missing: this key is required"),
])
def test_a_scenario_file_names_the_key_it_refuses(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in scenario_message(tmp_path, text)


@pytest.mark.parametrize("text, expected", [
    (TOPOLOGY + "colour = 1\n", "servers.toml:5: replica1.colour: unknown key; keys: host, metrics, port"),
    ("rack = 1\n" + TOPOLOGY, "servers.toml:1: rack: unknown key; keys: app, attacker, description, master, replica1,"),
    (TOPOLOGY + "port = 70000\n", "servers.toml:5: replica1.port: must be from 1 to 65535, got 70000"),
    (TOPOLOGY + "port = true\n", "servers.toml:5: replica1.port: must be a whole number, got True"),
    (TOPOLOGY.replace('"db1"', '" "'), "servers.toml:2: master.host: must name a host"),
    (TOPOLOGY + '[app]\nurl = "app1:8080"\n', "servers.toml:6: app.url: must be http(s)://host:port"),
])
def test_a_topology_file_names_the_key_it_refuses(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in topology_message(tmp_path, text)


@pytest.mark.parametrize("text, expected", [
    (STUDY + "buffer_pol = \"1G\"\n", "s.toml:11: cells[2].buffer_pol: unknown knob or cell key; knobs:"),
    (STUDY + "pool_size = 4\n", "cells[2].pool_size: unknown knob or cell key"),  # a setting with no cell key
    (STUDY.replace("rate = 10", "rat = 10"), "s.toml:3: rat: unknown key; keys: baseline_per, binlogs, cells,"),
    (STUDY + "buffer_pool = \"16M\"\n", "s.toml:11: cells[2].buffer_pool: --buffer-pool must be from 32M to 1T"),
    (STUDY + "sync_binlog = 1.5\n", "s.toml:11: cells[2].sync_binlog: must be a whole number or a word, got 1.5"),
    (STUDY + "max_inflight = -3\n", "s.toml:11: cells[2].max_inflight: max in-flight must be positive, got -3"),
    (STUDY + "replicas = 9\n", "s.toml:11: cells[2].replicas: replicas must be from 1 to 4, got 9"),
    (STUDY.replace('duration = "2s"', "duration = 2"), "s.toml:4: duration: must be a duration such as 60s"),
    (STUDY.replace('"b"', '"a"'), "s.toml:9: cells[2].name: two cells have the same name, 'a'"),
    (STUDY.replace("rate = 10\n", "").replace("[[cells]]", "[rates]\nwrite = 10\nwrit = 5\n[[cells]]", 1),
     "s.toml:6: rates.writ: not a scenario of this study; its scenarios: write"),
])
def test_a_study_file_names_the_key_it_refuses(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in study_message(tmp_path, text)


@pytest.mark.parametrize("text, expected", [
    (CAMPAIGN + 'when = "now"\n', "c.toml:5: units[2].when: unknown key; keys: command, env, minutes"),
    ('title = "x"\n' + CAMPAIGN, "c.toml:1: title: unknown key; keys: description, units"),
    (CAMPAIGN + "minutes = -1\n", "c.toml:5: units[2].minutes: must be greater than 0, got -1"),
    (CAMPAIGN + 'env = { REPLBENCH_MAX_INFLIGHT = "x" }\n', "c.toml:5: units[2].env: REPLBENCH_MAX_INFLIGHT=x: max"),
    (CAMPAIGN.replace("write 20", "write"), "c.toml:4: units[2].command: a run needs a rate: 'write'"),
    (CAMPAIGN.replace("write 20", "study durability --repeat x"), "c.toml:4: units[2].command: invalid literal"),
])
def test_a_campaign_file_names_the_key_it_refuses(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in campaign_message(tmp_path, text)


@pytest.mark.parametrize("text, expected", [
    # a link's name is its key (an unknown one is refused by name), its round trip and jitter its values
    (STUDY + 'link = "replica9=5ms"\n', "s.toml:11: cells[2].link: bad link 'replica9=5ms': name: must be one of"),
    (STUDY + 'link = "replica1=5ms±9ms"\n', "cells[2].link: bad link 'replica1=5ms±9ms': jitter_ms: must be at "
                                           "most the latency (5 ms)"),
    (STUDY + 'link = "replica1=1.5ms"\n', "cells[2].link: bad link 'replica1=1.5ms': latency_ms: toxiproxy delays "
                                         "in whole milliseconds"),
    (STUDY + 'link = 5\n', "s.toml:11: cells[2].link: must be a string, got 5"),
    (STUDY.replace("[[cells]]", "[vary]\nlink = [\"none\", \"replica1=20000ms\"]\n[[cells]]", 1)
     .replace('[[cells]]\nname = "a"\nbinlog_format = "ROW"\n[[cells]]\nname = "b"\nbinlog_format = "STATEMENT"\n',
              ""), "s.toml:6: vary.link[2]: bad link 'replica1=20000ms': latency_ms: must be from 0 to 10000"),
])
def test_a_link_a_study_names_is_checked_by_its_model(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in study_message(tmp_path, text)


def test_the_link_model_refuses_an_unknown_key_and_a_bad_value() -> None:
    with pytest.raises(ValidationError, match="colour"):
        links.Link(name="replica1", latency_ms=5, colour="red")  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="latency_ms"):
        links.Link(name="replica1", latency_ms=-5)
    with pytest.raises(ValueError, match=re.escape("bad link 'app-replica9=1ms': name: must be one of")):
        links.parse("app-replica9=1ms")
    assert links.parse("app-replica1=3ms±1ms").spec == "app-replica1=3ms±1ms"


def test_several_unknown_keys_of_one_table_are_one_problem(tmp_path: Path) -> None:
    message = campaign_message(tmp_path, CAMPAIGN + 'when = "now"\nwhy = "because"\n')
    assert message.endswith("c.toml:5: units[2].when, units[2].why: unknown keys; keys: command, env, minutes")
    two = topology_message(tmp_path, TOPOLOGY + "colour = 1\nport = \"x\"\n")
    assert two.endswith("(and 1 more problem(s))") and "\n" not in two


def test_the_line_is_found_in_tables_arrays_of_tables_and_inline_cells() -> None:
    text = ('rate = 1\n# rows = 5 in a comment\ncells = [\n  { name = "a", rows = 1 },\n  { name = "b", rows = 2 },\n'
            ']\n[vary]\nrows = [1]\n[[units]]\ncommand = "x"\n[[units]]\ncommand = "y"\n')
    assert schema.line_of(text, ("rate",)) == 1
    assert schema.line_of(text, ("cells", 1, "rows")) == 5
    assert schema.line_of(text, ("cells", 0, "name")) == 4
    assert schema.line_of(text, ("vary", "rows", 0)) == 8
    assert schema.line_of(text, ("units", 1, "command")) == 12
    assert schema.line_of(text, ("units", 1, "minutes")) == 11  # missing: the line of its table
    assert schema.line_of(text, ("nosuch",)) is None
    assert schema.path(("cells", 1, "rows")) == "cells[2].rows" and schema.path(()) == ""


def test_a_cells_settings_are_the_settings_tables_cell_keys(tmp_path: Path) -> None:
    values = {"replicas": 3, "app_workers": 1, "admission": "none", "codel_target_ms": 100, "max_inflight": 64,
              "max_queue_ms": 250, "client_connections": "unlimited", "app_transport": "unix",
              "drop_indexes": "idx_last"}
    with_cell_key = {s.cell: s.name for s in SETTING_LIST if s.cell}
    assert set(values) == set(with_cell_key) == set(studyfile.CELL_SETTINGS)
    assert not set(with_cell_key) & set(KNOBS)
    text = STUDY + "".join(f"{key} = {value!r}\n".replace("'", '"') for key, value in values.items())
    path = tmp_path / "s.toml"
    path.write_text(text)
    cell = studyfile.load(str(path)).cells[1]
    assert cell.app() == {with_cell_key[key]: value for key, value in values.items()}
    assert all(getattr(cell, key) == value for key, value in values.items())
    assert studyfile.load(str(path)).cells[0].max_inflight is None
    assert cell.changed()["replicas"] == "3" and cell.changed()["max_inflight"] == "64"
    with pytest.raises(AttributeError):
        cell.pool_size  # noqa: B018 (a setting without a cell key is no cell attribute)


def test_every_shipped_file_is_read_by_its_model() -> None:
    for name in scenario.available():
        assert scenario.load(name).requests
    for path in sorted((ROOT / "topologies").glob("*.toml")):
        assert topofile.load(path).nodes
    for name in studyfile.available():
        assert studyfile.load(name).cells
    for name in campaign.available():
        assert campaign.load(name).units


def module_imports(path: Path) -> set[str]:
    """The modules a file imports when it is imported (its top level, not inside functions), absolute names."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found |= {module, *(f"{module}.{a.name}" for a in node.names)}
    return found


def test_the_app_never_imports_pydantic() -> None:
    # the app's workers import core.config; pydantic there would add its memory to every worker's (a recorded
    # figure): config imports the topology file's model only when a topology file is read
    def as_path(module: str) -> Path | None:
        for candidate in (ROOT / Path(*module.split(".")).with_suffix(".py"),
                          ROOT / Path(*module.split(".")) / "__init__.py"):
            if candidate.exists():
                return candidate
        return None

    todo = list((ROOT / "app").glob("*.py"))
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        imported = module_imports(path)
        assert not any(m == "pydantic" or m.startswith("pydantic.") for m in imported), path
        todo += [p for m in imported if m.startswith(("replbench", "app")) and (p := as_path(m)) is not None]
    assert ROOT / "replbench" / "core" / "config.py" in seen
