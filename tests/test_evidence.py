"""The evidence scripts under results/readme-assets cannot rot. Every one type-checks (mypy in-process, in as few
invocations as the scripts' file names allow: two of one name are checked in two), compiles, and imports only
replbench modules that exist. Every one that reads only committed files is re-run here against them, in-process, and
prints its committed text exactly (EVIDENCE). Every other one says in its first line (after any shebang) what the
unit tier does not have (NOT_RERUN): a running topology, or raw data only live runs leave ("# needs servers: ..."),
or replbench as it was at a past commit ("# needs past code: ..."). A new script must be one or the other. The audit
of tools/required_fields.py is re-run so too, against its committed output beside it."""

from __future__ import annotations

import ast
import contextlib
import difflib
import functools
import importlib
import importlib.util
import io
import os
import runpy
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mypy import api

from replbench.core.config import ROOT

ASSETS = ROOT / "results" / "readme-assets"
SCRIPTS = sorted(path.relative_to(ASSETS).as_posix() for path in ASSETS.rglob("*.py"))
NOT_RERUN = ("# needs servers:", "# needs past code:")
# the project's configuration and command line, plus: each function typed (its body is checked then); the replbench
# modules followed silently (their own errors are tests/test_types.py's); a cache of its own (other options than
# test_types' run: sharing one would make each run re-analyse replbench)
MYPY_ARGS = ["--config-file", str(ROOT / "pyproject.toml"), "--no-error-summary", "--ignore-missing-imports",
             "--follow-imports=silent", "--disallow-untyped-defs", "--disallow-incomplete-defs",
             "--cache-dir", str(ROOT / ".state" / "mypy-cache-evidence")]


@dataclass(frozen=True)
class Run:
    """One run of a script: its path and arguments, the folder it runs from (both under results/readme-assets, the
    folder "" for the repository's root), and a line printed before its output (the shell loop that made the
    committed text printed one)."""

    script: str
    args: tuple[str, ...] = ()
    cwd: str = ""
    header: str | None = None


@dataclass(frozen=True)
class Evidence:
    """A committed text (under results/readme-assets) and the runs that print it. drift: (the committed line, the
    line printed today) for each line the code at hand prints otherwise, each pair explained where it is listed;
    the committed text stays as it was made."""

    text: str
    runs: tuple[Run, ...]
    drift: tuple[tuple[str, str], ...] = ()


STUDIES_0312 = ("study-20261128-031228-binlog-format", "study-20261128-031956-cost-model",
                "study-20261128-033439-cost-model-rates")
# refitted by shapes.py with the code at hand: a763fa7 (the read term's interval from the runs that only read) made
# the mixed case's replica interval narrower, so one of its five runs falls outside; the text was made at 641df78
# (it is printed again exactly with replbench at 641df78 or at a763fa7's parent)
SHAPES_DRIFT = tuple((f"('mixed', 20.0, 'ROW-FULL') replica {case} in 5/5",
                      f"('mixed', 20.0, 'ROW-FULL') replica {case} in 4/5")
                     for case in ("2.23/2.49 -10.2%", "1.86/1.88 -1.2%", "2.24/2.49 -9.9%", "1.88/1.88 -0.3%",
                                  "2.25/2.49 -9.7%", "1.87/1.88 -0.5%"))
# the validations' folders were renamed after the text was made (their commit added to the name)
WRITE_MIX_DRIFT = (("validate-20261128-060250", "validate-20261128-060250-at-dc90b3e"),
                   ("validate-20261128-062806", "validate-20261128-062806-at-8f5dd05"))

EVIDENCE = (
    Evidence("sweep-confirm-20261202/by_hand.txt", (
        Run("sweep-confirm-20261202/by_hand.py", ("sweep-20261202-152753-write",), cwd="sweep-confirm-20261202"),)),
    Evidence("model-20261128/by-hand/rows-read.txt", (
        Run("model-20261128/by-hand/rows-read.py", ("validate-20261128-034840", "campaign-model-check-20261128-031227",
                                                   "cross-machine"), cwd="model-20261128"),)),
    Evidence("model-20261128b/by-hand/rows-read.txt", (
        Run("model-20261128/by-hand/rows-read.py", ("campaign-model-check-20261128-052124",
                                                   "validate-20261128-060250-at-dc90b3e",
                                                   "validate-20261128-062806-at-8f5dd05"), cwd="model-20261128b"),)),
    Evidence("model-20261128/by-hand/per-trx.txt", tuple(
        Run("write-rate-ladder-20261128/by-hand-per-trx.py", (f"campaign-model-check-20261128-031227/{study}",),
            cwd="model-20261128", header=f"== campaign-model-check-20261128-031227/{study}")
        for study in STUDIES_0312)),
    Evidence("model-20261128b/by-hand/write-mix-per-trx.txt", (
        Run("model-20261128b/by-hand/write-mix-per-trx.py", ("validate-20261128-060250-at-dc90b3e",
                                                            "validate-20261128-062806-at-8f5dd05"),
            cwd="model-20261128b"),), drift=WRITE_MIX_DRIFT),
    Evidence("model-20261128c/by-hand/write-mix-per-trx.txt", (
        Run("model-20261128b/by-hand/write-mix-per-trx.py", ("validate-20261128-084343",), cwd="model-20261128c"),)),
    Evidence("model-20261128c/by-hand/apply-drains.txt", (
        Run("model-20261128c/by-hand/apply-drains.py", (
            "campaign-model-check-20261128-080752", "validate-20261128-084343",
            "../model-20261128b/campaign-model-check-20261128-052124",
            "../model-20261128b/validate-20261128-062806-at-8f5dd05",
            "../model-20261128b/validate-20261128-060250-at-dc90b3e"), cwd="model-20261128c"),)),
    Evidence("model-20261128c/by-hand/apply-variants.txt", (
        Run("model-20261128c/by-hand/apply-variants.py", (
            "model-20261127/campaign-model-20261127-154644", "model-20261127b/campaign-model-20261127-190755",
            "model-20261127c/campaign-model-20261127-222459", "model-20261128/campaign-model-check-20261128-031227",
            "model-20261128b/campaign-model-check-20261128-052124",
            "model-20261128c/campaign-model-check-20261128-080752"), cwd="."),)),
    Evidence("model-20261128e/onset-shapes.txt", (Run("model-20261128e/onset-shapes.py"),)),
    Evidence("model-20261128f/byhand_onset.txt", (
        Run("model-20261128f/byhand_onset.py", ("results/report-assets/campaign-report-20261128-153855",)),)),
    Evidence("model-20261128g/byhand-onset.txt", (
        Run("model-20261128f/byhand_onset.py", ("results/readme-assets/model-20261128g",)),)),
    Evidence("model-20261128f/noise.txt", (Run("model-20261128f/noise.py", (".",)),)),
    Evidence("model-20261128f/shapes.txt", (Run("model-20261128f/shapes.py", (".",)),), drift=SHAPES_DRIFT),
    Evidence("model-20261129/by-hand/control-per-round.txt", (
        Run("model-20261129/by-hand/control-per-round.py", cwd="model-20261129/by-hand"),)),
    Evidence("model-20261129/by-hand/control-per-write.txt", (
        Run("model-20261129/by-hand/control-per-write.py", cwd="model-20261129/by-hand"),)),
    Evidence("model-20261129b/by-hand/per-round.txt", (
        Run("model-20261129b/by-hand/per-round.py", cwd="model-20261129b/by-hand"),)),
    Evidence("model-20261129c/by-hand/per-round.txt", (
        Run("model-20261129c/by-hand/per-round.py", cwd="model-20261129c/by-hand"),)),
    Evidence("write-rate-ladder-20261128/by-hand-per-trx.txt", (
        Run("write-rate-ladder-20261128/by-hand-per-trx.py", ("study-20261128-002755-write-rate-ladder",),
            cwd="write-rate-ladder-20261128"),)),
    Evidence("one-evaluator-20261201/verdicts.txt", (Run("one-evaluator-20261201/verdicts.py"),)),
    Evidence("typed-results-20261202/compare.txt", (Run("typed-results-20261202/compare.py"),)),
    Evidence("write-back-20261202/steady-write.txt", (
        Run("write-back-20261202/steady.py", ("results/readme-assets/write-back-20261202/soak-write-400",)),)),
    Evidence("write-back-20261202/steady-write-noindex.txt", (
        Run("write-back-20261202/steady.py", ("results/readme-assets/write-back-20261202/soak-write-noindex-400",)),)),
    Evidence("live-apply-20261202/agree.txt", (Run("live-apply-20261202/agree.py"),)),
    Evidence("replay-20261202/agree.txt", (Run("replay-20261202/agree.py"),)),
    Evidence("model-pooling-20261202/pooling.txt", (Run("model-pooling-20261202/pooling.py"),)),
    Evidence("semi-sync-clients-20261202/compare.txt", (
        Run("semi-sync-clients-20261202/compare.py", cwd="semi-sync-clients-20261202"),)),
    Evidence("pinned-apply-20261203/compare.txt", (
        Run("pinned-apply-20261203/compare.py", cwd="pinned-apply-20261203"),)),
    Evidence("own-fit-20261203/compare.txt", (
        Run("own-fit-20261203/compare.py", cwd="own-fit-20261203"),)),
    Evidence("own-workload-20261203/summary.txt", (
        Run("own-workload-20261203/summary.py", cwd="own-workload-20261203"),)),
    Evidence("replay-study-20261203/check.txt", (
        Run("replay-study-20261203/check.py", cwd="replay-study-20261203"),)),
    Evidence("soak-noindex-20261203/cycles.txt", (
        Run("write-back-20261202/steady.py",
            ("results/readme-assets/soak-noindex-20261203/soak-write-noindex-800", "--cycles")),)),
    Evidence("soak-128m-20261203/steady-write-noindex.txt", (
        Run("write-back-20261202/steady.py", ("results/readme-assets/soak-128m-20261203/soak-write-noindex-400",)),)),
    Evidence("soak-128m-20261203/by_hand.txt", (
        Run("soak-128m-20261203/by_hand.py", cwd="soak-128m-20261203"),)),
    Evidence("soak-128m-20261203/steady-write.txt", (
        Run("write-back-20261202/steady.py", ("results/readme-assets/soak-128m-20261203/soak-write-100",)),)),
    Evidence("shapes-interval-20261203/compare.txt", (
        Run("shapes-interval-20261203/compare.py", cwd="shapes-interval-20261203"),)),
    *(Evidence(f"soak-20261203/steady-{name}.txt", (
        Run("write-back-20261202/steady.py", (f"results/readme-assets/soak-20261203/{name}",)),))
      for name in ("soak-write-400", "soak-write-noindex-400-128m", "soak-write-100-128m")),
)
RERUN = {run.script for evidence in EVIDENCE for run in evidence.runs}


def first_line(script: str) -> str:
    lines = (ASSETS / script).read_text().splitlines()
    if lines and lines[0].startswith("#!"):
        lines = lines[1:]
    return lines[0] if lines else ""


@contextlib.contextmanager
def as_a_script(cwd: Path, argv: list[str]) -> Iterator[None]:
    """The process as `python SCRIPT ARGS` from cwd gives it, put back after: the folder, sys.argv and sys.path, the
    values of replbench's modules (shapes.py replaces costmodel._shape), and no module of the assets left imported
    (noise.py imports shapes.py) nor bytecode written beside them."""
    saved_cwd, saved_argv, saved_path, saved_bytecode = os.getcwd(), sys.argv, sys.path[:], sys.dont_write_bytecode
    saved_modules = set(sys.modules)
    saved_values = {name: dict(vars(module)) for name, module in list(sys.modules.items())
                    if name == "replbench" or name.startswith("replbench.")}
    try:
        os.chdir(cwd)
        sys.argv = argv
        sys.dont_write_bytecode = True
        yield
    finally:
        os.chdir(saved_cwd)
        sys.argv, sys.path[:], sys.dont_write_bytecode = saved_argv, saved_path, saved_bytecode
        for name, values in saved_values.items():
            current = vars(sys.modules[name])
            for key, value in values.items():
                if current.get(key) is not value:
                    current[key] = value
        for name in set(sys.modules) - saved_modules:
            file = getattr(sys.modules[name], "__file__", None)
            if file and Path(file).resolve().is_relative_to(ASSETS):
                del sys.modules[name]


def output_of(script: Path, args: tuple[str, ...], cwd: Path) -> str:
    """What the script prints run as `python SCRIPT ARGS` from cwd, in-process; the test fails where it exits with
    an error."""
    out, err = io.StringIO(), io.StringIO()
    with as_a_script(cwd, [str(script), *args]):
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                runpy.run_path(str(script), run_name="__main__")
            except SystemExit as exc:
                if exc.code not in (0, None):
                    pytest.fail(f"{script.relative_to(ROOT)} exited ({exc.code}): {err.getvalue()}")
    return out.getvalue()


def printed(run: Run) -> str:
    return ("" if run.header is None else run.header + "\n") + output_of(
        ASSETS / run.script, run.args, ASSETS / run.cwd if run.cwd else ROOT)


def same_text(committed_name: str, expected: str, got: str, by: str) -> None:
    """Fails, with the difference, where `by` printed otherwise than the committed text (drift applied) expects."""
    if got != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(keepends=True), got.splitlines(keepends=True),
                                            f"{committed_name} (committed)", "printed now"))
        pytest.fail(f"{by} no longer prints {committed_name}:\n{diff}")


# the three that refit the cost model many times (about 14 s of the unit tier's 60): re-run in the whole suite, not in
# `./run.sh test --fast` (docs/development.md)
SLOW = ("model-20261128f/noise.txt", "model-20261128f/shapes.txt", "model-pooling-20261202/pooling.txt")


@pytest.mark.parametrize("evidence", [pytest.param(e, marks=pytest.mark.integration) if e.text in SLOW else e
                                      for e in EVIDENCE], ids=[evidence.text for evidence in EVIDENCE])
def test_evidence_is_printed_again(evidence: Evidence) -> None:
    committed = (ASSETS / evidence.text).read_text()
    expected = committed
    for then, now in evidence.drift:
        assert committed.count(then + "\n") == 1, f"{evidence.text} no longer holds {then!r}: drop it from the drift"
        expected = expected.replace(then + "\n", now + "\n")
    same_text(evidence.text, expected, "".join(printed(run) for run in evidence.runs),
              " then ".join(run.script for run in evidence.runs))


def test_the_required_fields_audit_is_printed_again() -> None:
    """tools/required_fields.py, which counts the fields of the committed finished runs that core/results.FinishedRun
    requires (and says why the others every one holds are not), prints its committed output from the files at hand."""
    tools = ROOT / "tools"
    same_text("tools/required_fields.txt", (tools / "required_fields.txt").read_text(),
              output_of(tools / "required_fields.py", (), ROOT), "tools/required_fields.py")


def _batches(scripts: list[str]) -> list[list[str]]:
    """The scripts in groups whose file names differ (mypy names a script's module after its file: two of one name in
    one run clash), as few groups as the most common name needs."""
    batches: list[list[str]] = []
    for script in scripts:
        free = [b for b in batches if all(Path(s).name != Path(script).name for s in b)]
        if free:
            free[0].append(script)
        else:
            batches.append([script])
    return batches


@functools.cache
def _type_check_reports() -> dict[str, tuple[str, int]]:
    """Each script's mypy report and status: its own error lines (mypy starts each with the path it was given), or,
    when a run fails with no line of a script's (a crash, a bad flag), the run's whole output for each of its
    scripts."""
    reports: dict[str, tuple[str, int]] = {}
    saved = os.getcwd()
    os.chdir(ROOT)  # where mypy finds replbench
    try:
        for batch in _batches(SCRIPTS):
            paths = {script: (ASSETS / script).relative_to(ROOT).as_posix() for script in batch}
            out, err, status = api.run([*MYPY_ARGS, *paths.values()])
            for script, path in paths.items():
                own = "".join(line for line in out.splitlines(keepends=True) if line.startswith(path + ":"))
                reports[script] = (own, 1) if own else (out + err, status) if status and not any(
                    line.startswith(tuple(p + ":" for p in paths.values())) for line in out.splitlines()) else ("", 0)
    finally:
        os.chdir(saved)
    return reports


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_type_checks(script: str) -> None:
    report, status = _type_check_reports()[script]
    assert status == 0, report


def replbench_imports(script: str) -> list[str]:
    """Each replbench module the script imports, and each name it imports from one (a module or an attribute)."""
    found = []
    for node in ast.walk(ast.parse((ASSETS / script).read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.split(".")[0] == "replbench"]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "replbench":
            found += [f"{node.module}:{alias.name}" for alias in node.names]
    return found


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_compiles_and_its_replbench_imports_exist(script: str) -> None:
    """What mypy lets through: a replbench module that is gone (--ignore-missing-imports, as the project runs it,
    silences it), which would leave a script that is not re-run broken and unnoticed; and syntax this Python does not
    parse (mypy 2.4.1 passes an f-string that only Python 3.12 parses, though python_version is 3.11)."""
    compile((ASSETS / script).read_text(), script, "exec")
    missing = []
    for name in replbench_imports(script):
        module, _, attribute = name.partition(":")
        try:
            imported = importlib.import_module(module)
        except ModuleNotFoundError:
            missing.append(module)
            continue
        if attribute and not hasattr(imported, attribute) and importlib.util.find_spec(f"{module}.{attribute}") is None:
            missing.append(f"{module}.{attribute}")
    assert not missing, f"{script} imports what replbench no longer has: {', '.join(missing)}"


def test_every_script_is_rerun_or_says_why_not() -> None:
    assert RERUN <= set(SCRIPTS), sorted(RERUN - set(SCRIPTS))
    assert all((ASSETS / evidence.text).is_file() for evidence in EVIDENCE)
    unmarked = [script for script in SCRIPTS if script not in RERUN and not first_line(script).startswith(NOT_RERUN)]
    assert not unmarked, (f"re-run each of {unmarked} in EVIDENCE, or say in its first line what it needs: "
                          f"{' or '.join(NOT_RERUN)}")
    marked = [script for script in sorted(RERUN) if first_line(script).startswith(NOT_RERUN)]
    assert not marked, f"{marked} say they cannot be re-run, and are"
