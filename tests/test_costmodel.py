"""The cost model on synthetic data with known coefficients: the fit recovers them, predict composes them, a bad
mix or setting is refused. Pure: no topology."""

from __future__ import annotations

import json
import random
import shutil

import pytest

from replbench.analysis import costmodel
from replbench.analysis.profile import Largest
from replbench.core.results import Fit, Onset, meta_of, model_of, summary_of, write_record
from replbench.report.model import render_capacity, render_fit, render_largest, render_onset, render_plan

from .conftest import finished_run, fitted_model, observed

A_MASTER, B_MASTER = 0.00040, 0.000020  # CPU s per transaction and per row
A_REPLICA, B_REPLICA = 0.00025, 0.000015
F_BINLOG, G_BINLOG = 120.0, 440.0  # bytes per transaction and per row
C_APPLY, D_APPLY = 0.00018, 0.000012  # one replica's apply seconds per transaction and per row


def synthetic(seed: int = 7) -> tuple[list[dict], list[dict]]:
    rnd = random.Random(seed)
    runs, drains = [], []
    for rows_per_trx in (1, 10, 100, 1000):
        for trx in (2_000, 6_000, 12_000) if rows_per_trx < 1000 else (200, 600, 1200):
            rows = trx * rows_per_trx

            def noisy(v: float) -> float:
                return v * (1 + rnd.gauss(0, 0.02))

            runs.append({"setting": "ROW-FULL", "table": "bench_idx", "transactions": trx, "rows": rows, "seconds": 30,
                         "master_cpu_s": noisy(A_MASTER * trx + B_MASTER * rows),
                         "replica_cpu_s": noisy(A_REPLICA * trx + B_REPLICA * rows),
                         "binlog_bytes": noisy(F_BINLOG * trx + G_BINLOG * rows), "fsyncs_per_commit": 2.0})
            drains.append({"setting": "ROW-FULL", "table": "bench_idx", "replica": "replica1", "transactions": trx,
                           "rows": rows, "apply_s": noisy(C_APPLY * trx + D_APPLY * rows)})
    return runs, drains


def test_the_fit_recovers_known_coefficients() -> None:
    model = fitted_model(*synthetic())
    row = model["settings"]["ROW-FULL bench_idx"]
    for part, (a, b) in (("master_cpu_s", (A_MASTER, B_MASTER)), ("replica_cpu_s", (A_REPLICA, B_REPLICA)),
                         ("binlog_bytes", (F_BINLOG, G_BINLOG)), ("apply_s", (C_APPLY, D_APPLY))):
        fitted = row[part]
        assert fitted["rows_separated"] and fitted["r2"] > 0.99
        assert fitted["coef"]["per_trx"] == pytest.approx(a, rel=0.10), part
        assert fitted["coef"]["per_row"] == pytest.approx(b, rel=0.05), part
        low, high = fitted["ci95"]["per_row"]
        assert low <= b <= high, part
    assert row["fsyncs_per_commit"] == 2.0


def repeated(noise: float, per_row: float = B_MASTER, seed: int | None = None) -> list[dict]:
    """Master CPU of 1-, 10-, 100- and 1,000-row cells at two rates, each cell run twice: once `noise` above what
    the coefficients give, once as far below (the cell's mean on the line, its repeats `noise` apart); with a seed,
    each run `noise` (relative, Gaussian) off instead."""
    rnd = random.Random(seed)
    runs = []
    for rows_per_trx in (1, 10, 100, 1000):
        for trx in (3_000, 9_000):
            for sign in (1, -1):
                rows = trx * rows_per_trx
                off = rnd.gauss(0, noise) if seed is not None else sign * noise
                runs.append({"setting": "ROW-FULL", "table": "bench_idx", "cell": f"{rows_per_trx} rows {trx}",
                             "transactions": trx, "rows": rows, "seconds": 30, "fsyncs_per_commit": None,
                             "master_cpu_s": (A_MASTER * trx + per_row * rows) * (1 + off),
                             "replica_cpu_s": None, "binlog_bytes": F_BINLOG * trx + G_BINLOG * rows})
    return runs


def test_the_constrained_fit_recovers_known_nonnegative_coefficients_from_repeated_cells() -> None:
    part = fitted_model(repeated(0.03, seed=11), [])["settings"]["ROW-FULL bench_idx"]["master_cpu_s"]
    assert part["coef"]["per_trx"] == pytest.approx(A_MASTER, rel=0.05)
    assert part["coef"]["per_row"] == pytest.approx(B_MASTER, rel=0.05)
    assert part["interval_method"] == "bootstrap over 8 cells" and part["run_variance_from"] == "repeats"
    assert part["run_variance_dof"] == 8  # 8 cells of 2 repeats
    for term, truth in (("per_trx", A_MASTER), ("per_row", B_MASTER)):
        low, high = part["ci95"][term]
        assert 0 <= low <= truth <= high, term


def test_a_thin_cell_that_makes_least_squares_negative_gives_zero_not_a_negative_cost() -> None:
    """Rows cost nothing here, and the 1,000-row runs measured a little less than the 1-row runs per transaction:
    ordinary (weighted) least squares says a row costs less than nothing; the bounded fit says 0."""
    import numpy as np

    runs = repeated(0.0, per_row=0.0)
    for o in runs:
        o["master_cpu_s"] *= 1 - 0.1 * o["rows"] / o["transactions"] / 1000  # 10 % less at 1,000 rows
    y = np.array([o["master_cpu_s"] for o in runs])
    x = np.array([[o["transactions"], o["rows"]] for o in runs], dtype=float) / y[:, None]
    assert np.linalg.lstsq(x, np.ones(len(y)), rcond=None)[0][1] < 0  # what the fit before issue 50 gave
    part = fitted_model(runs, [])["settings"]["ROW-FULL bench_idx"]["master_cpu_s"]
    assert part["coef"]["per_row"] == 0.0 and part["coef"]["per_trx"] > 0
    assert all(low >= 0 for low, _ in part["ci95"].values())
    plan = costmodel.predict(model_of(fitted_model(runs, [])), costmodel.parse_mix("update_users:1000=10/s"))
    assert plan.master_cpu_cores["low"] >= 0


def test_the_prediction_interval_includes_the_run_to_run_spread_and_grows_with_it() -> None:
    mix = costmodel.parse_mix("update_user=200/s,update_users:100=2/s")
    quiet, noisy = (costmodel.predict(model_of(fitted_model(repeated(noise), [])), mix).master_cpu_cores
                    for noise in (0.01, 0.10))
    assert quiet["value"] == pytest.approx(noisy["value"], rel=0.03)  # weighted 1/y: a noisier cell reads lower
    assert noisy["high"] - noisy["low"] > 5 * (quiet["high"] - quiet["low"])
    # repeats ±10 % about their cell's mean: one run's sd is 10 % × √2 (pooled, 1 degree of freedom per cell);
    # the interval holds at least 1.96 of it either side, whatever the fit's own variance
    assert (noisy["high"] - noisy["value"]) >= 0.99 * 1.96 * 0.10 * 2 ** 0.5 * noisy["value"]


def test_the_domain_flags_a_rate_below_what_the_fit_saw_for_small_transactions() -> None:
    model = fitted_model(*synthetic())  # 1-row runs at 67 to 400/s, 1,000-row runs at 7 to 40/s
    assert costmodel.predict(model_of(model), costmodel.parse_mix("update_user=200/s")).outside_domain is None
    low = costmodel.predict(model_of(model), costmodel.parse_mix("update_user=20/s")).outside_domain
    assert low.startswith("20 transactions/s, below the lowest rate at which the fit saw transactions of 1 rows "
                          "or fewer (66.7/s)"), low
    assert costmodel.predict(model_of(model), costmodel.parse_mix("update_users:1000=20/s")).outside_domain is None


def test_the_replica_fit_prices_a_read_where_runs_served_reads() -> None:
    runs = [dict(o) for o in synthetic()[0]]
    per_read = 0.00010  # CPU s per read a replica served
    for i, o in enumerate(runs):
        reads_each = (i % 4) * 4000  # two replicas, each serving 0 to 12,000 reads
        o.update(replica_reads=2 * reads_each, replicas=2, replica_cpu_s=o["replica_cpu_s"] + per_read * reads_each)
    part = fitted_model(runs, [])["settings"]["ROW-FULL bench_idx"]["replica_cpu_s"]
    assert part["terms"][:2] == ["per_trx", "per_row"] and part["terms"][-1] == "per_read"
    assert part["coef"]["per_read"] == pytest.approx(per_read, rel=0.10)
    assert part["coef"]["per_row"] == pytest.approx(B_REPLICA, rel=0.10)
    obs = {**runs[1], "transactions": 1000, "rows": 1000, "replica_reads": 6000}
    model = fitted_model(runs, [])
    got = costmodel.expected(model_of(model), observed(obs))["replica_cpu_s"]
    assert got["value"] == pytest.approx(A_REPLICA * 1000 + B_REPLICA * 1000 + per_read * 3000, rel=0.10)
    # no run with reads: the mixed run's replicas are not predicted, and the reason says so
    plain = fitted_model(synthetic()[0], [])
    assert costmodel.expected(model_of(plain), observed(obs))["replica_cpu_s"] is None
    assert costmodel.not_predicted(model_of(plain), observed(obs))["replica_cpu_s"] == (
        "the replicas also served 6,000 reads, and no run whose replicas served reads: reads not priced")


def test_the_cost_model_prices_fsyncs_net_of_idle_and_leaves_out_runs_without_them() -> None:
    def run(net: dict) -> dict:
        master = {"transactions": 300, "rows_changed": 300, "fsyncs_per_write": 6.4, "binlog_syncs_per_write": 3.2,
                  **net}
        return finished_run({"status": "ok", "success": 1.0, "scenario": "write", "rate": 5, "schema": "bench_idx",
                             "cpu_seconds_net": {"master": 0.5, "replica1": 0.3}, "cpu_span_s": 60.0,
                             "binlog": {"successful_writes": 300, "bytes_per_write": 700.0},
                             "replication": {"nodes": {"master": master}}})

    meta = meta_of({"knobs_changed": {}})
    net = costmodel.observation(summary_of(run({"fsyncs_per_write_net": 1.1, "binlog_syncs_per_write_net": 1.0})), meta)
    assert net is not None and net.fsyncs_per_commit == pytest.approx(2.1)  # not the gross 9.6
    old = costmodel.observation(summary_of(run({})), meta)
    assert old is not None and old.fsyncs_per_commit is None
    # the resolution of its net CPU rides along (validation compares a figure below it with nothing): the replicas'
    # mean takes the widest replica's; a run from before resolutions were recorded has none
    assert old.resolution == {}
    resolved = costmodel.observation(summary_of({**run({}), "cpu_seconds_net": {"master": 0.5, "replica1": 0.3,
                                                                                "replica2": 0.2},
                                                 "cpu_seconds_net_resolution": {"master": 0.21, "replica1": 0.1,
                                                                                "replica2": 0.15}}), meta)
    assert resolved is not None and resolved.resolution == {"master_cpu_s": 0.21, "replica_cpu_s": 0.15}


def test_one_row_per_transaction_is_fitted_per_transaction_only() -> None:
    runs = [r for r in synthetic()[0] if r["rows"] == r["transactions"]]
    part = fitted_model(runs, [])["settings"]["ROW-FULL bench_idx"]["binlog_bytes"]
    assert part["terms"] == ["per_trx"] and not part["rows_separated"]
    assert part["coef"]["per_trx"] == pytest.approx(F_BINLOG + G_BINLOG, rel=0.05)
    model = fitted_model(runs, [])
    single = costmodel.predict(model_of(model), costmodel.parse_mix("update_user=100/s"))
    assert single.binlog_mb_per_s["value"] == pytest.approx((F_BINLOG + G_BINLOG) * 100 / 1e6, rel=0.05)
    bulk = costmodel.predict(model_of(model), costmodel.parse_mix("update_users:100=10/s"))
    assert bulk.binlog_mb_per_s is None  # a row's price is unknown: no figure rather than a guess


def test_predict_composes_the_coefficients_for_a_mix() -> None:
    model = fitted_model(*synthetic())
    mix = costmodel.parse_mix("update_user=3000/s, update_users:100=20/s")
    assert mix == [("update_user", 1, 3000.0), ("update_users", 100, 20.0)]
    plan = costmodel.predict(model_of(model), mix, "ROW-FULL", replica_cores=2)
    trx, rows = 3020, 5000
    assert plan.transactions_per_s == trx and plan.rows_per_s == rows
    assert plan.binlog_mb_per_s["value"] == pytest.approx((F_BINLOG * trx + G_BINLOG * rows) / 1e6, rel=0.05)
    assert plan.binlog_gb_per_day["value"] == pytest.approx(plan.binlog_mb_per_s["value"] * 86.4, rel=1e-9)
    assert plan.master_cpu_cores["value"] == pytest.approx(A_MASTER * trx + B_MASTER * rows, rel=0.05)
    rho = plan.replica_apply_rho
    assert rho["value"] == pytest.approx(C_APPLY * trx + D_APPLY * rows, rel=0.05)
    assert rho["low"] < rho["value"] < rho["high"] and plan.lag.startswith("bounded")
    assert plan.replica_cpu_utilisation["value"] == pytest.approx(plan.replica_cpu_cores["value"] / 2)
    over = costmodel.predict(model_of(model), costmodel.parse_mix("update_user=9000/s"), "ROW-FULL")
    assert over.lag.startswith("grows by")
    fsyncs = plan.fsyncs_per_s
    assert fsyncs["value"] == pytest.approx(2.0 * trx) and fsyncs["low"] <= fsyncs["value"] <= fsyncs["high"]


def test_a_plan_prints_every_figure_with_its_interval_and_no_e_notation() -> None:
    text = render_plan(costmodel.predict(model_of(fitted_model(*synthetic())), costmodel.parse_mix(
        "update_user=3000/s,update_users:100=20/s")))
    assert "e+" not in text and "no data" not in text
    figures = text.splitlines()[1:7]
    assert all("[" in line and "–" in line for line in figures), text
    # 3,020 transactions/s against synthetic runs of 7 to 400/s: flagged, the figures kept
    assert text.splitlines()[7:] == ["Outside the model's domain: 3,020 transactions/s, above the highest rate the "
                                     "fit saw (400/s): the CPU and fsync figures are extrapolated"], text


def test_the_lag_onset_and_growth_follow_the_apply_fit() -> None:
    model = fitted_model(*synthetic())
    onset = costmodel.onset(model_of(model), 500)
    assert onset["value"] == pytest.approx(1 / (C_APPLY + 500 * D_APPLY), rel=0.05)
    assert onset["low"] < onset["value"] < onset["high"]
    # 9,000 single-row transactions/s against an apply rate of about 1 / (C + D) ≈ 5,200/s: falls behind
    over = costmodel.predict(model_of(model), costmodel.parse_mix("update_user=9000/s"))
    rho = (C_APPLY + D_APPLY) * 9000
    assert over.onset_transactions_per_s["value"] == pytest.approx(1 / (C_APPLY + D_APPLY), rel=0.05)
    # it applies 1/ρ of each second's transactions: the lag gains 1 − 1/ρ s per s (not ρ − 1)
    assert over.lag_growth_s_per_s["value"] == pytest.approx(1 - 1 / rho, rel=0.05)
    assert costmodel.predict(model_of(model), costmodel.parse_mix("update_user=100/s")).lag_growth_s_per_s is None
    assert costmodel.onset(model_of(fitted_model(synthetic()[0], [])), 500) is None  # no drains: no apply fit


def test_an_onset_whose_interval_has_no_upper_end_prints_infinity_and_says_why() -> None:
    """An apply fit whose interval reaches 0 s a transaction puts the onset's upper end at infinity: validate.json
    keeps it, and the report prints ∞ and why, not "inf"."""
    text = render_onset(Onset.model_validate({"rows": 500, "predicted": {"value": 262.6, "low": 27.3,
                                                                         "high": float("inf")}, "runs": []}))
    assert "predicted 262.6 [27.3–∞] transactions/s (the apply fit's interval reaches 0 s" in text
    assert "inf" not in text.replace("interval", "")
    bounded = render_onset(Onset.model_validate({"rows": 500, "predicted": {"value": 262.6, "low": 27.3, "high": 400.0},
                                                 "runs": []}))
    assert "[27.3–400.0] transactions/s" in bounded and "no upper bound" not in bounded


@pytest.mark.parametrize("mix", ["", "update_user=3000", "update_users=20/s", "select=5/s", "update_users:0=1/s",
                                 "update_user=-1/s"])
def test_a_bad_mix_is_refused(mix: str) -> None:
    with pytest.raises(costmodel.MixError):
        costmodel.parse_mix(mix)


def test_an_unknown_or_unfitted_setting_is_refused() -> None:
    model = fitted_model(*synthetic())
    with pytest.raises(costmodel.MixError, match="unknown setting"):
        costmodel.predict(model_of(model), [("update_user", 1, 10.0)], "ROW-HALF")
    with pytest.raises(costmodel.MixError, match="no data for STATEMENT on bench_idx"):
        costmodel.predict(model_of(model), [("update_user", 1, 10.0)], "STATEMENT")


def test_the_model_command_refuses_bad_input_with_exit_2(tmp_path) -> None:
    from .conftest import run_main

    env = {"REPLBENCH_STATE": str(tmp_path / "st"), "REPLBENCH_RESULTS": str(tmp_path / "results")}
    for args, needle in ((["model", "predict"], "--mix"), (["model", "predict", "--mix", "x=1"], "cannot read"),
                         (["model", "predict", "--mix", "update_user=1/s", "--setting", "ROW-HALF"], "ROW-HALF"),
                         (["model", "guess"], "invalid choice"),
                         (["model", "validate", "--onset-backlog", "0"], "--onset-backlog"),
                         (["model", "validate", "--onset-rows", "-1"], "--onset-rows")):
        code, _, err = run_main(args, env)
        assert code == 2 and needle in err and "Traceback" not in err, err
    code, _, err = run_main(["model", "predict", "--mix", "update_user=1/s"], env)
    assert code == 1 and "model fit" in err and "Traceback" not in err
    (tmp_path / "results").mkdir(exist_ok=True)
    code, _, err = run_main(["model", "fit"], env)
    assert code == 1 and "no usable write run" in err


@pytest.mark.parametrize("status", ["done", "running"])
def test_predict_without_a_fit_of_ones_own_uses_the_report_campaigns_model(tmp_path, status: str) -> None:
    """A fresh clone has no results/model/model.json but the committed report campaign's: predict uses it (and
    says whose it is) only when that campaign finished."""

    from .conftest import run_main

    results = tmp_path / "results"
    folder = results / "report-assets" / "campaign-report-20990101-000000"
    (folder / "model").mkdir(parents=True)
    (folder / "campaign.json").write_text(json.dumps({"name": "report", "status": status, "commit": "abc1234",
                                                      "folder": folder.name, "finished_at": "2099-01-01T02:00:00Z"}))
    write_record((folder / "model" / "model.json"), model_of(fitted_model(*synthetic())))
    env = {"REPLBENCH_STATE": str(tmp_path / "st"), "REPLBENCH_RESULTS": str(results)}
    code, out, err = run_main(["model", "predict", "--mix", "update_user=3000/s,update_users:100=20/s"], env)
    if status == "done":
        assert code == 0, err
        assert "Binlog: " in out and f"fitted by campaign {folder.name} at commit abc1234" in out
    else:
        assert code == 1 and "model fit" in err and "Traceback" not in err


def test_fit_and_validate_on_the_small_topology(topo, shared_run) -> None:

    from .conftest import BULK_RUN, DRAIN_RUN, WRITE_RUN, env_for, replicating, run_cli

    env = env_for(topo.state)
    # single-row writes at two rates and 100-row ones, each size drained: three of them the session's shared runs
    # (write at 40/s, write-bulk at 10/s, 300 single-row writes drained), which other tests read too
    for args in (WRITE_RUN, BULK_RUN, DRAIN_RUN):
        proc = shared_run(*args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    for args in (["write", "80", "--duration", "2s"],
                 ["apply-capacity", "write-bulk", "--writes", "40", "--rate", "20"]):
        proc = run_cli(args, env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run_cli(["model", "fit"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ROW-FULL bench_idx" in proc.stdout and "per row" in proc.stdout  # 1-row and 100-row runs: separated
    fitted_from = proc.stdout.splitlines()[0]  # "Cost model from N write runs and M apply drains ..."
    proc = run_cli(["model", "predict", "--mix", "update_user=100/s,update_users:100=2/s"], env)
    assert proc.returncode == 0 and "Binlog: " in proc.stdout and "no data" not in proc.stdout.split("Replica apply")[0]
    proc = run_cli(["model", "validate", "--cases", "write-mix@40", "--duration", "2s", "--onset-rows", "300",
                    "--onset-duration", "2s", "--onset-backlog", "0.5", "--repeat", "1", "--control", "write@80"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # one round (the rounds' order is unit-tested, and recordings of several rounds priced together too): the case
    # ran once, and the onset's backlog drained twice all the same (MODEL_ONSET_DRAIN_REPEATS), once after the round
    held_out = json.loads(max((topo.state / "results" / "model").glob("validate-*/validate.json")).read_text())
    runs = [r["run"] for r in held_out["cases"][0]["repeats"]]
    assert len(runs) == 1, held_out
    # the control, a cell of the fit (write at 80/s), ran in the round too and is reported apart from the cases
    assert len({r["run"] for r in held_out["control"]["repeats"]} - set(runs)) == 1, held_out["control"]
    assert "| write @ 80/s ROW-FULL (control: a fitted cell) | 1 of 1 | from the run's counts |" in proc.stdout
    assert ("- control write @ 80/s ROW-FULL (a cell the model was fitted on, run in every round): measured master "
            "CPU ×") in proc.stdout, proc.stdout
    assert len({d["folder"] for d in held_out["onset"]["drains"]}) == 2, held_out["onset"]
    row = next(line for line in proc.stdout.splitlines() if line.startswith("| write-mix @ 40/s"))
    assert row.count(" / ") == 3 and "%" in row  # binlog, master and replica: predicted beside measured
    # the same run from its binlog: copied from the master, profiled over the attack window, priced
    profiled = next(line for line in proc.stdout.splitlines()
                    if line.startswith("| write-mix @ 40/s") and "from its binlog profile" in line)
    assert profiled.count(" / ") == 3 and "no profile" not in profiled, proc.stdout
    assert "- from its binlog profile: " in proc.stdout and " run figures inside their intervals" in proc.stdout
    # the lag onset: predicted from the drains of 1- and 100-row transactions, then runs below and above it
    assert "Lag onset, 300-row transactions (a size the fit had no drain of), one replica applying alone: " \
        "predicted" in proc.stdout, proc.stdout
    assert "- drained alone (a backlog of" in proc.stdout and "% off the median" in proc.stdout
    assert "| 0.8× |" in proc.stdout and "| 1.25× |" in proc.stdout and "Live onset:" in proc.stdout
    assert replicating(topo)  # the replicas stopped for the onset runs replicate again
    # the same case recorded in a round with no model asked (a campaign interleaves such rounds with the fit's
    # studies), then priced: each run read from its recording, and the control apart (several recordings priced
    # together: test_costmodel_validate's test_committed_recordings_priced_again_give_the_committed_validation)
    proc = run_cli(["model", "validate", "--record", "--cases", "write-mix@40", "--duration", "2s", "--repeat",
                    "1", "--control", "write@80"], env)
    assert proc.returncode == 0 and "runs recorded in" in proc.stdout, proc.stdout + proc.stderr
    proc = run_cli(["model", "validate", "--recorded", "--onset-rows", "0"], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    priced = json.loads(max((topo.state / "results" / "model").glob("validate-*/validate.json")).read_text())
    assert len(priced["recordings"]) == 1 and priced["repeats"] == 1, priced
    assert [r["run"].split("/")[1] for r in priced["cases"][0]["repeats"]] == priced["recordings"], priced
    assert all(r["profile"]["binlog_bytes"]["predicted"] for r in priced["cases"][0]["repeats"]), priced
    assert len(priced["control"]["repeats"]) == 1
    assert "| write @ 80/s ROW-FULL (control: a fitted cell) | 1 of 1 | from the run's counts |" in proc.stdout
    row = next(line for line in proc.stdout.splitlines()
               if line.startswith("| write-mix @ 40/s") and "from its binlog profile" in line)
    assert row.count(" / ") == 3 and "no profile" not in row, proc.stdout
    proc = run_cli(["model", "validate", "--recorded"], env)  # each recording is priced once
    assert proc.returncode == 1 and "no recorded runs to price" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli(["model", "fit"], env)  # validate's runs and drains are held out: the fit reads the same data
    assert proc.returncode == 0 and proc.stdout.splitlines()[0] == fitted_from, proc.stdout


def test_report_md_says_which_settings_have_no_apply_fit_and_the_study_that_gives_one(tmp_path) -> None:

    from replbench.report.assets import Writer
    from replbench.report.model import model_section

    runs, drains = synthetic()
    (tmp_path / "model").mkdir()
    write_record((tmp_path / "model" / "model.json"), model_of(fitted_model(runs, drains)))
    assert "apply-settings" not in "\n".join(model_section(Writer(tmp_path, tmp_path / "report.md")))
    minimal = [dict(r, setting="ROW-MINIMAL") for r in runs]  # live runs under MINIMAL, no drain of it
    write_record((tmp_path / "model" / "model.json"), model_of(fitted_model(runs + minimal, drains)))
    text = "\n".join(model_section(Writer(tmp_path, tmp_path / "report.md")))
    # the coefficients on the model's page beside report.md, which links them; there, which settings have no
    # apply fit, and the study that fills them
    page = (tmp_path / "report-model.md").read_text()
    assert "| ROW-MINIMAL bench_idx |" in page and "no data" in page and "| ROW-MINIMAL bench_idx |" not in text
    assert "(report-model.md#per-transaction-and-per-row-by-setting)" in text
    assert "alone (ROW-MINIMAL bench_idx): these runs drained no backlog" in page
    assert "`./run.sh study apply-settings`" in page and "apply-settings" not in text


def test_report_md_shows_the_coefficients_and_the_newest_validation(tmp_path) -> None:

    from replbench.report.assets import Writer
    from replbench.report.model import model_section

    assert model_section(Writer(tmp_path, tmp_path / "report.md")) == []  # no model fitted: no section
    (tmp_path / "model" / "validate-20261125-000000").mkdir(parents=True)
    write_record((tmp_path / "model" / "model.json"), model_of(fitted_model(*synthetic())))
    onset = {"rows": 500, "replica": "replica1", "predicted": {"value": 80.0, "low": 70.0, "high": 90.0},
             "drain": {"writes": 240, "fill_rate": 6, "apply_rate_trx_per_s": [84.0, 76.0], "measured": 80.0,
                       "error_pct": 0.0},
             "runs": [{"load": 1.25, "rate": 100, "master_transactions_per_s": 99.0, "lag_growth_s_per_s": 0.25,
                       "success": 1.0, "fell_behind": True, "applied_per_s": 74.25}], "measured": 74.25,
             "error_pct": 7.7}
    (tmp_path / "model" / "validate-20261125-000000" / "validate.json").write_text(
        json.dumps({"cases": [], "onset": onset}))
    text = "\n".join(model_section(Writer(tmp_path, tmp_path / "report.md")))
    # the section's files are kept in the report's assets: without the raw model, the same section from them
    shutil.rmtree(tmp_path / "model")
    assert "\n".join(model_section(Writer(tmp_path, tmp_path / "report.md"))) == text
    assert (tmp_path / "report-assets" / "model" / "validate-20261125-000000" / "validate.json").exists()
    page = (tmp_path / "report-model.md").read_text()  # the whole fit, beside report.md, which links it
    assert "## The cost model" in text and "| ROW-FULL bench_idx |" in page and "ms/row" in page
    assert "(report-model.md#" in text and "Cost model from" in page and "Cost model from" not in text
    # the validation case by case and the lag onset on that page; report.md keeps the coverage against the bounds
    assert "(report-model.md#checked-on-runs-it-was-not-fitted-on)" in text and "- lag onset: " in text
    assert "\n## Checked on runs it was not fitted on\n" in page and "Live onset" not in text
    assert "predicted 80.0 [70.0–90.0] transactions/s" in page and "| 1.25× | 100/s | 99.0 | 100.0 % | +0.250 | yes " \
        "| 74.2" in page and "Live onset: 74.2 transactions/s; predicted +7.7 % off" in page
    assert "written at 6/s, each replica in turn): 84.0, 76.0 transactions/s; predicted +0.0 % off the median" in page


def test_a_repeat_that_measured_low_weighs_no_more_than_its_cell() -> None:
    # one 100-row run nets to a tenth of its repeat (a busy idle window): weighted 1/y it would pull the per-row
    # cost towards 0; weighted by its cell's mean the fit keeps the per-row cost near the line's
    runs = repeated(0.0)
    low = next(r for r in runs if r["cell"] == "100 rows 3000")
    low["master_cpu_s"] *= 0.1
    part = costmodel.fit_part([r["master_cpu_s"] for r in runs], [r["transactions"] for r in runs],
                              [r["rows"] for r in runs], [r["cell"] for r in runs])
    assert part is not None
    assert (part.coef or {})["per_row"] == pytest.approx(B_MASTER, rel=0.25)


W_MASTER = 0.004  # CPU s per second of writing: background work that comes with any write rate


def test_the_fit_keeps_a_cost_per_second_of_writing_where_no_setting_has_three_rates() -> None:
    """Single-row runs at 100 and 400/s and 100-row runs at 20/s, each 60 s, twice: a·trx + b·rows + w·seconds with
    known a, b, w. Two single-row rates give no rate shape, so the per-second term stays (three distinct cells tell
    it), and a mix at 20/s costs more per transaction than one at 400/s by it; with two cells it is left out."""
    rnd = random.Random(5)
    runs = []
    for rows_per_trx, rate in ((1, 100), (1, 400), (100, 20)):
        for _ in range(2):
            trx, rows = rate * 60, rate * 60 * rows_per_trx
            runs.append({"setting": "ROW-FULL", "table": "bench_idx", "cell": f"{rows_per_trx} @{rate}",
                         "transactions": trx, "rows": rows, "seconds": 60, "write_seconds": 60,
                         "fsyncs_per_commit": None, "replica_cpu_s": None, "binlog_bytes": F_BINLOG * trx,
                         "master_cpu_s": (A_MASTER * trx + B_MASTER * rows + W_MASTER * 60) * (1 + rnd.gauss(0, .01))})
    model = fitted_model(runs, [])
    part = model["settings"]["ROW-FULL bench_idx"]["master_cpu_s"]
    assert "rate_shape" not in part
    assert part["terms"] == ["per_trx", "per_row", "per_second"]
    assert part["coef"]["per_second"] == pytest.approx(W_MASTER, rel=0.10)
    assert part["coef"]["per_trx"] == pytest.approx(A_MASTER, rel=0.10)
    slow = costmodel.predict(model_of(model), costmodel.parse_mix("update_user=20/s")).master_cpu_cores["value"]
    fast = costmodel.predict(model_of(model), costmodel.parse_mix("update_user=400/s")).master_cpu_cores["value"]
    assert slow / 20 == pytest.approx(A_MASTER + B_MASTER + W_MASTER / 20, rel=0.05)
    assert slow / 20 > 1.3 * fast / 400
    two = [o for o in runs if o["cell"] in ("1 @400", "100 @20")]
    assert "per_second" not in fitted_model(two, [])["settings"]["ROW-FULL bench_idx"]["master_cpu_s"]["terms"]


# a single-row transaction's CPU by rate: flat to 200/s, a step down at 400/s (the shape the ladder study measured,
# docs/decisions/cost-model-rate.md), which a + w / rate cannot follow
SHAPE = {20: 1.5, 50: 1.4, 200: 1.35, 400: 1.0}


def _shaped_runs(setting: str, level: float, rates: tuple[int, ...], rnd: random.Random) -> list[dict]:
    runs = []
    for rows_per_trx, rate in [*((1, r) for r in rates), (100, 20)]:
        for _ in range(2):
            trx, rows = rate * 60, rate * 60 * rows_per_trx
            runs.append({"setting": setting, "table": "bench_idx", "cell": f"{rows_per_trx} @{rate}",
                         "transactions": trx, "rows": rows, "seconds": 60, "write_seconds": 60,
                         "fsyncs_per_commit": None, "binlog_bytes": F_BINLOG * trx,
                         "replica_cpu_s": None, "master_cpu_s": (level * SHAPE[rate] * trx + B_MASTER * rows)
                         * (1 + rnd.gauss(0, .01))})
    return runs


def test_the_rate_shape_of_the_setting_with_most_rates_prices_every_setting_between_its_cells() -> None:
    """ROW FULL's single-row cells at 20, 50, 200 and 400/s give the shape (factors of the 400/s cell's cost);
    STATEMENT, with cells at 20 and 400/s only and its own level, is weighed by it: a mix at 200/s costs what
    its level × the shape there is, where a + w / rate (fitted on 20 and 400/s) would put it 20 % low. No per-second
    term is fitted beside the shape, and no coefficient is negative."""
    rnd = random.Random(11)
    level_full, level_minimal = 0.0005, 0.0004
    runs = [*_shaped_runs("ROW-FULL", level_full, (20, 50, 200, 400), rnd),
            *_shaped_runs("STATEMENT", level_minimal, (20, 400), rnd)]
    model = fitted_model(runs, [])
    full = model["settings"]["ROW-FULL bench_idx"]["master_cpu_s"]
    minimal = model["settings"]["STATEMENT bench_idx"]["master_cpu_s"]
    assert full["rate_shape"]["from"] == "ROW-FULL bench_idx" and minimal["rate_shape"] == full["rate_shape"]
    factors = dict((round(r), f) for r, f in full["rate_shape"]["points"])
    one_row = {r: (level_full * SHAPE[r] + B_MASTER) / (level_full * SHAPE[400] + B_MASTER) for r in SHAPE}
    assert factors == pytest.approx(one_row, rel=0.03)
    for part in (full, minimal):
        assert "per_second" not in part["terms"] and min(part["coef"].values()) >= 0
    plan = costmodel.predict(model_of(model), costmodel.parse_mix("update_user=200/s"), "STATEMENT")
    assert plan.master_cpu_cores["value"] / 200 == pytest.approx(level_minimal * SHAPE[200] + B_MASTER, rel=0.05)
    shape = model_of(model).settings["ROW-FULL bench_idx"].master_cpu_s.rate_shape
    assert costmodel.shape_factor(shape, 100) == pytest.approx(
        factors[50] + (factors[200] - factors[50]) * 0.5, rel=1e-9)  # halfway in log rate from 50 to 200/s
    assert costmodel.shape_factor(shape, 5) == factors[20]  # held at its ends beyond them


def test_a_rate_shape_point_dearer_than_a_slower_one_is_pooled_with_it() -> None:
    """The 200/s cell measured dearer than the 50/s one (the noise of a few runs: a faster stream cannot cost more
    per transaction when the extra cost is a core woken between transactions). The shape pools the two into their
    weighted mean, 50/s with 2 runs and 200/s with 4, and is non-increasing with the rate."""
    def cell(rate: int, cost: float, runs: int) -> list[dict]:
        return [{"setting": "ROW-FULL", "table": "bench_idx", "cell": f"1 @{rate}", "transactions": rate * 60,
                 "rows": rate * 60, "seconds": 60, "master_cpu_s": cost * rate * 60} for _ in range(runs)]

    runs = [*cell(20, 1.5e-3, 2), *cell(50, 1.2e-3, 2), *cell(200, 1.5e-3, 4), *cell(400, 1.0e-3, 2)]
    factors = [f for _, f in costmodel.rate_shape([observed(o) for o in runs], "master_cpu_s").points]
    pooled = (1.2 * 2 + 1.5 * 4) / 6
    assert factors == pytest.approx([1.5, pooled, pooled, 1.0], abs=1e-4)
    assert factors == sorted(factors, reverse=True)


def test_the_row_images_share_a_transactions_cost_and_keep_their_own_cost_per_row() -> None:
    """ROW FULL with many cells, ROW MINIMAL with three (single-row at 20 and 400/s, 100 rows at 20/s) whose 400/s
    repeats measured 25 % high, and a per-row cost of its own, half ROW FULL's. Fitted alone, MINIMAL's transaction
    would cost more than FULL's; pooled over the row images it costs what FULL's does, and each image keeps its own
    cost per row, inside its interval. STATEMENT, not a row image, keeps a fit of its own."""
    rnd = random.Random(5)
    level, per_row_full, per_row_minimal = 0.0005, B_MASTER, B_MASTER / 2
    full = _shaped_runs("ROW-FULL", level, (20, 50, 200, 400), rnd)
    full += [{**o, "cell": f"{n} rows @20", "rows": o["transactions"] * n,
              "master_cpu_s": (level * SHAPE[20] + per_row_full * n) * o["transactions"] * (1 + rnd.gauss(0, .01))}
             for n in (10, 1000) for o in full[:2]]
    minimal = _shaped_runs("ROW-MINIMAL", level, (20, 400), rnd)
    for o in minimal:
        o["master_cpu_s"] += (per_row_minimal - B_MASTER) * o["rows"]
        if o["cell"] == "1 @400":
            o["master_cpu_s"] *= 1.25
    statement = _shaped_runs("STATEMENT", 0.0004, (20, 400), rnd)
    model = fitted_model([*full, *minimal, *statement], [])
    got = {s: model["settings"][f"{s} bench_idx"]["master_cpu_s"] for s in ("ROW-FULL", "ROW-MINIMAL", "STATEMENT")}
    assert got["ROW-MINIMAL"]["coef"]["per_trx"] == got["ROW-FULL"]["coef"]["per_trx"]
    assert got["ROW-FULL"]["coef"]["per_trx"] == pytest.approx(level, rel=0.05)
    for setting, truth in (("ROW-FULL", per_row_full), ("ROW-MINIMAL", per_row_minimal)):
        part = got[setting]
        assert part["pooled"]["settings"] == ["ROW-FULL", "ROW-MINIMAL"] and part["rows_separated"]
        assert part["n"] == len(full if setting == "ROW-FULL" else minimal)
        low, high = part["ci95"]["per_row"]
        # high < 1.5 × truth: a resample that lost the setting's only multi-row cell has no estimate of its cost per
        # row (its single-row runs' level would otherwise pass for one)
        assert 0 < low <= truth <= high < 1.5 * truth, setting
        assert part["coef"]["per_row"] == pytest.approx(truth, rel=0.25), setting
        assert "each setting's among its own" in part["interval_method"]
    assert "pooled" not in got["STATEMENT"] and got["STATEMENT"]["coef"]["per_trx"] == pytest.approx(0.0004, rel=0.05)
    plan = costmodel.predict(model_of(model), costmodel.parse_mix("update_user=400/s"), "ROW-MINIMAL")
    assert plan.master_cpu_cores["value"] == pytest.approx(400 * (level + per_row_minimal), rel=0.05)
    assert "pooled: one fit over ROW-FULL, ROW-MINIMAL" in render_fit(model_of(model))


def _sized_runs(setting: str, cells: tuple[tuple[int, int], ...], per_row: float = B_MASTER) -> list[dict]:
    """Noise-free master CPU of (rows per transaction, rate) cells, two repeats each, at A_MASTER a transaction."""
    return [{"setting": setting, "table": "bench_idx", "cell": f"{n} @{rate}", "transactions": rate * 30,
             "rows": rate * 30 * n, "seconds": 30, "write_seconds": 30, "fsyncs_per_commit": None,
             "binlog_bytes": F_BINLOG * rate * 30, "replica_cpu_s": None,
             "master_cpu_s": (A_MASTER + per_row * n) * rate * 30} for n, rate in cells for _ in range(2)]


def test_a_row_image_whose_runs_are_all_of_one_size_keeps_a_fit_of_its_own() -> None:
    """ROW NOBLOB with single-row runs only: pooled, its rows' cost would go into the shared per-transaction term
    and every image's transaction would read dearer; it fits alone, and ROW FULL and MINIMAL pool exactly."""
    full = _sized_runs("ROW-FULL", ((1, 100), (10, 100), (100, 20), (1, 400)))
    minimal = _sized_runs("ROW-MINIMAL", ((1, 400), (100, 20)), per_row=B_MASTER / 2)
    noblob = _sized_runs("ROW-NOBLOB", ((1, 100), (1, 400)), per_row=B_MASTER * 4)
    model = fitted_model([*full, *minimal, *noblob], [])
    got = {s: model["settings"][f"{s} bench_idx"]["master_cpu_s"] for s in ("ROW-FULL", "ROW-MINIMAL", "ROW-NOBLOB")}
    assert got["ROW-FULL"]["coef"]["per_trx"] == pytest.approx(A_MASTER, rel=1e-6)
    assert got["ROW-FULL"]["pooled"]["settings"] == ["ROW-FULL", "ROW-MINIMAL"]
    assert "pooled" not in got["ROW-NOBLOB"] and not got["ROW-NOBLOB"]["rows_separated"]
    assert got["ROW-NOBLOB"]["coef"]["per_trx"] == pytest.approx(A_MASTER + 4 * B_MASTER, rel=1e-6)


def test_a_resample_that_leaves_an_image_one_size_does_not_move_the_shared_terms() -> None:
    """Noise-free runs: every resample's fit is exact, so the intervals are the coefficients, though a third of the
    resamples leave ROW MINIMAL's three cells without its 100-row one (its single-row runs would otherwise push
    their rows' cost into the shared per-transaction term)."""
    full = _sized_runs("ROW-FULL", ((1, 100), (10, 100), (100, 20), (1, 400)))
    minimal = _sized_runs("ROW-MINIMAL", ((1, 400), (1, 200), (100, 20)), per_row=B_MASTER / 2)
    part = fitted_model([*full, *minimal], [])["settings"]["ROW-MINIMAL bench_idx"]["master_cpu_s"]
    for term, truth in (("per_trx", A_MASTER), ("per_row", B_MASTER / 2)):
        low, high = part["ci95"][term]
        assert truth * (1 - 1e-6) <= low <= high <= truth * (1 + 1e-6), term
    assert "resamples kept every setting's sizes" in part["interval_method"]


def test_writes_amid_reads_are_outside_the_master_cpus_domain() -> None:
    """A run whose replicas also served reads: its master CPU enters no fit (it was 20-30 % cheaper beside the
    reads on one host's cores), and validate predicts none for it and says why."""
    rnd = random.Random(3)
    runs = _shaped_runs("ROW-FULL", 0.0005, (20, 50, 200, 400), rnd)
    amid = {**runs[0], "cell": "mixed", "replica_reads": 3600, "replicas": 2, "master_cpu_s": 0.001}
    with_amid = fitted_model([*runs, amid], [])["settings"]["ROW-FULL bench_idx"]["master_cpu_s"]
    without = fitted_model(runs, [])["settings"]["ROW-FULL bench_idx"]["master_cpu_s"]
    assert with_amid["coef"] == without["coef"] and with_amid["n"] == without["n"]
    model = fitted_model(runs, [])
    assert costmodel.expected(model_of(model), observed(amid))["master_cpu_s"] is None
    assert costmodel.not_predicted(model_of(model), observed(amid))["master_cpu_s"] == costmodel.AMID_READS


def test_a_run_that_only_read_prices_the_replicas_reads_and_nothing_else() -> None:
    summary = finished_run({"status": "ok", "success": 1.0, "scenario": "read", "rate": 600, "schema": "bench_idx",
                            "cpu_seconds_net": {"master": 0.02, "replica1": 3.0, "replica2": 3.2}, "cpu_span_s": 30.0,
                            "served_by": {"replica1": 9000, "replica2": 9000}, "binlog": {"successful_writes": 0},
                            "replication": {"nodes": {"master": {"transactions": 31}}}})
    obs = costmodel.observation(summary_of(summary), meta_of({"knobs_changed": {}}))
    assert obs is not None and obs.transactions == 0 and obs.write_seconds == 0
    assert obs.replica_cpu_s == pytest.approx(3.1) and obs.replica_reads == 18000
    assert obs.master_cpu_s is None and obs.binlog_bytes is None
    per_read = 3.1 / 9000
    reads = [{**obs.model_dump(), "cell": f"read {n}", "replica_reads": 2 * n, "replica_cpu_s": per_read * n * f}
             for n in (6000, 18000) for f in (0.98, 1.02)]
    writes = synthetic()[0]
    model = fitted_model([*writes, *reads], [])
    fitted = model["settings"]["ROW-FULL bench_idx"]
    assert fitted["replica_cpu_s"]["coef"]["per_read"] == pytest.approx(per_read, rel=0.05)
    assert fitted["master_cpu_s"]["n"] == len(writes) and fitted["binlog_bytes"]["n"] == len(writes)
    mixed = {**writes[0], "replica_reads": 2 * 3000, "replicas": 2}
    got = costmodel.expected(model_of(model), observed(mixed))["replica_cpu_s"]
    assert got is not None and got["value"] == pytest.approx(
        A_REPLICA * mixed["transactions"] + B_REPLICA * mixed["rows"] + per_read * 3000, rel=0.10)



def test_a_read_term_priced_by_runs_that_only_read_has_the_interval_of_their_mean() -> None:
    """Two read-only cells at two rates (the read shape's points) price the read term alone: its interval is the t
    interval of their runs' cost per read around the term, not the cell bootstrap's [0–value] (a resample without
    a read cell prices no read; one with a read cell always the same cost, the shape having taken the cells' levels)."""
    summary = finished_run({"status": "ok", "success": 1.0, "scenario": "read", "rate": 600, "schema": "bench_idx",
                            "cpu_seconds_net": {"master": 0.02, "replica1": 3.0, "replica2": 3.2}, "cpu_span_s": 30.0,
                            "served_by": {"replica1": 9000, "replica2": 9000}, "binlog": {"successful_writes": 0},
                            "replication": {"nodes": {"master": {"transactions": 31}}}})
    obs = costmodel.observation(summary_of(summary), meta_of({"knobs_changed": {}}))
    assert obs is not None
    per_read = 3.1 / 9000
    noise = (0.94, 1.06, 0.97, 1.03)
    reads = [{**obs.model_dump(), "cell": f"read {n}", "replica_reads": 2 * n,
              "replica_cpu_s": per_read * n * noise[2 * i + j]}
             for i, n in enumerate((6000, 18000)) for j in range(2)]
    fitted = fitted_model([*synthetic()[0], *reads], [])["settings"]["ROW-FULL bench_idx"]["replica_cpu_s"]
    low, high = fitted["ci95"]["per_read"]
    # the four runs' cost per read (each cell at its own level: the shape takes the cells' means) vary ±6 % and ±3 %
    assert 0 < low < fitted["coef"]["per_read"] < high and (high - low) / fitted["coef"]["per_read"] > 0.05
    assert fitted["read_interval"] == "t over the 4 runs that only read"
    i = fitted["terms"].index("per_read")
    assert fitted["cov"][i][i] > 0 and not any(fitted["cov"][i][j] for j in range(len(fitted["terms"])) if j != i)
    assert "(the read term's: t over the 4 runs that only read)" in render_fit(model_of(fitted_model([*synthetic()[0],
                                                                                              *reads], [])))


E_APPLY = 4e-9  # one replica's apply seconds per row per row of its transaction


def test_the_apply_fit_recovers_a_cost_that_grows_with_the_transactions_size() -> None:
    """Drains of 1, 10, 100 and 1,000 rows whose apply time is c + d·n + e·n² per transaction: the fit finds e, and
    prices a size beyond the drained ones with it; a mix's items are priced by their own sizes."""
    rnd = random.Random(3)
    drains = []
    for n, trx in ((1, 12_000), (10, 4_500), (100, 1_200), (1000, 150)):
        for _ in range(2):
            drains.append({"setting": "ROW-FULL", "table": "bench_idx", "replica": "replica1", "transactions": trx,
                           "rows": trx * n, "apply_s": trx * (C_APPLY + D_APPLY * n + E_APPLY * n * n)
                           * (1 + rnd.gauss(0, 0.01))})
    model = fitted_model([], drains)
    part = model["settings"]["ROW-FULL bench_idx"]["apply_s"]
    assert part["terms"] == ["per_trx", "per_row", "per_row_sq"]
    assert part["coef"]["per_row_sq"] == pytest.approx(E_APPLY, rel=0.10)
    rho = costmodel.predict(model_of(model), costmodel.parse_mix("update_user=100/s,update_users:1000=10/s"))
    truth = 100 * (C_APPLY + D_APPLY) + 10 * (C_APPLY + D_APPLY * 1000 + E_APPLY * 1000 ** 2)
    assert rho.replica_apply_rho["value"] == pytest.approx(truth, rel=0.03)
    # beyond the drained sizes, the curve: its square term prices a 2,000-row transaction
    beyond = costmodel.apply_seconds(model_of(model), "ROW-FULL", "bench_idx", 2000)["value"]
    assert beyond == pytest.approx(C_APPLY + D_APPLY * 2000 + E_APPLY * 2000 ** 2, rel=0.03)
    # linear drains: the term is 0 (or left out), not invented
    linear = fitted_model([], synthetic()[1])["settings"]["ROW-FULL bench_idx"]["apply_s"]
    assert linear["coef"].get("per_row_sq", 0.0) < 0.05 * E_APPLY


SIZED = {1: 0.00024, 10: 0.00019, 100: 0.00073, 1000: 0.00767}  # model-20261128e's drains' means, ms → s


def sized_drains(seed: int) -> tuple[dict[int, float], list[dict]]:
    """Three drains of each size, SIZED seconds a transaction with 2 % noise."""
    rnd = random.Random(seed)
    return SIZED, [{"setting": "ROW-FULL", "table": "bench_idx", "replica": "replica1", "transactions": trx,
                    "rows": trx * n, "apply_s": trx * SIZED[n] * (1 + rnd.gauss(0, 0.02))}
                   for n, trx in ((1, 12_000), (10, 4_500), (100, 1_200), (1000, 150)) for _ in range(3)]


def test_a_size_between_the_drained_sizes_is_priced_on_the_line_between_their_means() -> None:
    """Drains of 1, 10, 100 and 1,000 rows, each size's apply seconds per transaction known: a 500-row transaction
    costs the straight line between the 100- and 1,000-row means (not the curve, which the small sizes bend); a
    drained size its own mean; a mix sums its items' times at their rates; the interval holds the value and widens
    with the run-to-run spread; the sizes are in the model and its text."""
    per, drains = sized_drains(11)
    model = fitted_model([], drains)
    part = model["settings"]["ROW-FULL bench_idx"]["apply_s"]
    assert [s[0] for s in part["sizes"]] == [1, 10, 100, 1000] and all(s[2] == 3 for s in part["sizes"])
    mean = {n: sum(d["apply_s"] / d["transactions"] for d in drains if d["rows"] == d["transactions"] * n) / 3
            for n in per}
    between = mean[100] + (500 - 100) / 900 * (mean[1000] - mean[100])
    got = costmodel.apply_seconds(model_of(model), "ROW-FULL", "bench_idx", 500)
    assert got["value"] == pytest.approx(between, rel=1e-9)
    assert got["low"] < got["value"] < got["high"]
    assert costmodel.onset(model_of(model), 500)["value"] == pytest.approx(1 / between, rel=1e-9)
    assert costmodel.apply_seconds(model_of(model), "ROW-FULL", "bench_idx", 10)["value"] == pytest.approx(mean[10],
                                                                                                       rel=1e-9)
    plan = costmodel.predict(model_of(model), costmodel.parse_mix("update_user=1000/s,update_users:500=20/s"))
    assert plan.replica_apply_rho["value"] == pytest.approx(1000 * mean[1] + 20 * between, rel=1e-9)
    quiet = [{**d, "apply_s": d["transactions"] * per[d["rows"] // d["transactions"]]} for d in drains]
    still = costmodel.apply_seconds(model_of(fitted_model([], quiet)), "ROW-FULL", "bench_idx", 500)
    assert still["high"] - still["low"] < got["high"] - got["low"]
    assert "drained sizes (mean ms per transaction" in render_fit(model_of(model))
    assert "1 row 0.24" in render_fit(model_of(fitted_model([], quiet))) and \
        "1,000 rows 7.67 (3 drains)" in render_fit(model_of(fitted_model([], quiet)))
    # one size drained: no line to price along, no sizes kept
    one = fitted_model([], [d for d in drains if d["rows"] == d["transactions"] * 100])
    assert "sizes" not in (one["settings"]["ROW-FULL bench_idx"]["apply_s"] or {})


def test_a_size_beyond_the_drained_ones_continues_from_the_nearest_without_a_jump() -> None:
    """Beyond the largest drained size: that size's mean plus the curve's change from there, so 1,001 rows costs
    about what 1,000 do, with an interval near its own (not the curve's, which a bootstrap over four cells makes wide);
    a mix with items inside and beyond sums both; a model from before the sizes were kept prices on the curve; a
    drained size whose rows per transaction came out a little off keeps its place; no transactions cost nothing."""
    per, drains = sized_drains(13)
    model = fitted_model([], drains)
    part = model["settings"]["ROW-FULL bench_idx"]["apply_s"]
    at, just = (costmodel.apply_seconds(model_of(model), "ROW-FULL", "bench_idx", n) for n in (1000, 1001))
    step = sum(part["coef"][t] * {"per_trx": 0, "per_row": 1, "per_row_sq": 1001 ** 2 - 1000 ** 2}[t]
               for t in part["terms"])
    assert just["value"] == pytest.approx(at["value"] + step, rel=1e-9) and step < 0.01 * at["value"]
    on_curve = costmodel.apply_time(Fit.model_validate({k: v for k, v in part.items() if k != "sizes"}),
                                    [(1.0, 1001.0)])
    assert just["high"] - just["low"] < 2 * (at["high"] - at["low"])  # the slope's uncertainty over one row
    assert just["high"] - just["low"] < 0.25 * (on_curve["high"] - on_curve["low"])
    mixed = costmodel.apply_time(Fit.model_validate(part), [(100.0, 500.0), (2.0, 3000.0)])["value"]
    fitted = model_of(model)
    assert mixed == pytest.approx(100 * costmodel.apply_seconds(fitted, "ROW-FULL", "bench_idx", 500)["value"]
                                  + 2 * costmodel.apply_seconds(fitted, "ROW-FULL", "bench_idx", 3000)["value"],
                                  rel=1e-9)
    old = {k: v for k, v in part.items() if k != "sizes"}  # model.json from before the sizes
    curve = part["coef"]["per_trx"] + part["coef"]["per_row"] * 500 + part["coef"].get("per_row_sq", 0) * 500 ** 2
    assert costmodel.apply_time(Fit.model_validate(old), [(1.0, 500.0)])["value"] == pytest.approx(curve, rel=1e-9)
    off = [{**d, "rows": d["rows"] - d["transactions"] * 0.0013 * (d["rows"] // d["transactions"])} for d in drains]
    sizes = fitted_model([], off)["settings"]["ROW-FULL bench_idx"]["apply_s"]["sizes"]
    assert len(sizes) == 4 and sizes[-1][0] == pytest.approx(998.7) and sizes[-1][2] == 3
    assert costmodel.apply_time(Fit.model_validate(part), []) == {"value": 0.0, "low": 0.0, "high": 0.0}
    assert costmodel.predict(fitted, costmodel.parse_mix("update_user=0/s")).replica_apply_rho["value"] == 0.0


def test_a_drained_size_is_as_sure_as_its_backlogs_not_its_drains() -> None:
    """Each backlog drained by two replicas (their drains share the host's state): a size's mean counts its
    backlogs, so 500 rows' interval is wider than from as many drains of backlogs of their own, by about √2 in the
    means' part; the fit says how many backlogs; a model.json from before (no backlog) counts its drains."""
    _, drains = sized_drains(17)
    paired = [{**d, "replica": f"replica{1 + i % 2}", "backlog": f"run-{i // 2}"} for i, d in enumerate(drains)]
    alone = [{**d, "backlog": f"run-{i}"} for i, d in enumerate(drains)]
    fits = [fitted_model([], x) for x in (paired, alone, drains)]
    parts = [f["settings"]["ROW-FULL bench_idx"]["apply_s"] for f in fits]
    assert [s[3] for s in parts[0]["sizes"]] == [2, 2, 2, 2] and [s[3] for s in parts[1]["sizes"]] == [3, 3, 3, 3]
    assert parts[2]["sizes"] == parts[1]["sizes"]  # no backlog recorded: each drain its own
    got = [costmodel.apply_seconds(model_of(f), "ROW-FULL", "bench_idx", 500) for f in fits]
    assert got[0]["value"] == pytest.approx(got[1]["value"], rel=1e-12)
    assert got[0]["high"] - got[0]["low"] > got[1]["high"] - got[1]["low"]
    assert "1,000 rows 7.6" in render_fit(model_of(fits[0])) and \
        "(3 drains of 2 backlogs)" in render_fit(model_of(fits[0]))
    assert "backlog" not in render_fit(model_of(fits[1]))


def test_a_binlog_figure_allows_each_transaction_its_group_commit_id() -> None:
    """Byte-exact repeats make the fit's own interval nil; whether a commit grouped (2 bytes more in its GTID event)
    is not the mix's doing, so the interval is 2 B a transaction wider either way."""
    runs = [{**o, "binlog_bytes": F_BINLOG * o["transactions"] + G_BINLOG * o["rows"]} for o in repeated(0.01)]
    model = fitted_model(runs, [])
    plan = costmodel.predict(model_of(model), costmodel.parse_mix("update_user=1000/s")).bytes_per_s_to_each_replica
    assert plan["high"] - plan["value"] >= 2 * 1000 and plan["value"] - plan["low"] >= 2 * 1000
    got = costmodel.expected(model_of(model), observed({**runs[0], "transactions": 500, "rows": 500}))["binlog_bytes"]
    assert got["high"] - got["value"] >= 2 * 500


def test_parallel_threads_bound_rho_between_perfect_parallelism_and_none() -> None:
    """--parallel N: ρ_N is not measured but bounded, from ρ / min(N, the replica's cores) (independent transactions)
    to ρ (conflicting ones); the fall-behind rate likewise; one thread, or one core, is the serial plan."""
    model = fitted_model(*synthetic())
    mix = costmodel.parse_mix("update_user=300/s,update_users:100=10/s")
    serial = costmodel.predict(model_of(model), mix)
    rho, onset = serial.replica_apply_rho, serial.onset_transactions_per_s
    assert serial.parallel.best == rho and serial.parallel.worst == rho
    for threads, cores, at_once in ((4, 2.0, 2.0), (4, 8.0, 4.0), (4, 1.0, 1.0), (4, 0.5, 1.0), (1, 8.0, 1.0)):
        p = costmodel.predict(model_of(model), mix, replica_cores=cores, threads=threads).parallel
        assert p.threads == threads and p.at_once == at_once
        assert p.worst == rho
        for end in ("value", "low", "high"):
            assert p.best[end] == pytest.approx(rho[end] / at_once)
            assert p.best[end] <= p.worst[end]
            assert p.onset_best[end] == pytest.approx(onset[end] * at_once)
        assert p.onset_worst == onset
    text = render_plan(costmodel.predict(model_of(model), mix, replica_cores=2, threads=4))
    assert "ρ with 4 applier threads, a bound, not a measurement" in text and "2 at once" in text
    assert "applier threads" not in render_plan(serial)
    # threads on one core (the replica's default): the serial ρ, and the line says which flag changes that
    one_core = render_plan(costmodel.predict(model_of(model), mix, threads=4))
    assert "= 1 transaction applies at once (give the replica's cores with --cores replica=N)" in one_core
    # a plan over one thread's capacity: bounded only if enough transactions apply in parallel
    over = costmodel.predict(model_of(model), costmodel.parse_mix("update_user=9000/s"), replica_cores=4, threads=4)
    assert over.parallel.lag.startswith("bounded only if")


def test_link_prices_semi_syncs_commit_wait_and_the_commits_in_flight_per_wait_point() -> None:
    """--link RTT: AFTER_COMMIT waits one round trip (measured 1.00–1.09); AFTER_SYNC up to two once commits
    overlap; the commits in flight are the rate × the wait (Little's law)."""
    model = fitted_model(*synthetic())
    busy = costmodel.predict(model_of(model), costmodel.parse_mix("update_user=300/s"), rtt_s=0.020).semi_sync
    commit, sync = busy["AFTER_COMMIT"], busy["AFTER_SYNC"]
    assert commit.latency_s == pytest.approx({"value": 0.020, "low": 0.020, "high": 0.0218})
    assert commit.in_flight == pytest.approx({"value": 6.0, "low": 6.0, "high": 6.54})
    assert sync.overlap  # 300/s × 20 ms: 6 commits in flight at once
    assert sync.latency_s == pytest.approx({"value": 0.040, "low": 0.020, "high": 0.040})
    assert sync.in_flight["value"] == pytest.approx(12.0)
    lone = costmodel.semi_sync(10.0, 0.020)["AFTER_SYNC"]  # 0.2 in flight: a commit rarely waits behind another
    assert not lone.overlap and lone.latency_s["value"] == pytest.approx(0.020)
    assert lone.latency_s["high"] == pytest.approx(0.040)
    text = render_plan(costmodel.predict(model_of(model), costmodel.parse_mix("update_user=300/s"), rtt_s=0.020))
    assert "Semi-sync at a 20 ms round trip" in text and "+20 [20–21.8] ms per commit, 6 [6–6.54] commits" in text
    assert "+40 [20–40] ms per commit, 12 [6–12] commits in flight" in text
    assert costmodel.predict(model_of(model), costmodel.parse_mix("update_user=300/s")).semi_sync is None


def test_the_largest_transactions_apply_time_follows_the_apply_fit_with_its_square_term() -> None:
    """One SQL thread's time for one n-row transaction: per_trx + per_row·n + per_row_sq·n², with its interval."""
    rnd = random.Random(5)
    drains = [{"setting": "ROW-FULL", "table": "bench_idx", "replica": "replica1", "transactions": trx,
               "rows": trx * n, "apply_s": trx * (C_APPLY + D_APPLY * n + E_APPLY * n * n) * (1 + rnd.gauss(0, 0.01))}
              for n, trx in ((1, 12_000), (10, 4_500), (100, 1_200), (1000, 150)) for _ in range(2)]
    model = fitted_model([], drains)
    got = costmodel.apply_seconds(model_of(model), "ROW-FULL", "bench_idx", 5000)
    truth = C_APPLY + D_APPLY * 5000 + E_APPLY * 5000 ** 2  # 0.16 s, of which the square term 0.1
    assert got["value"] == pytest.approx(truth, rel=0.10) and got["low"] <= got["value"] <= got["high"]
    assert costmodel.apply_seconds(model_of(model), "STATEMENT", "bench_idx", 5000) is None  # no fit: no figure
    assert costmodel.apply_seconds(model_of(fitted_model(synthetic()[0], [])), "ROW-FULL", "bench_idx", 10) is None
    lines = render_largest(Largest(gtid="0-1-9", rows=5000, apply_s=got))
    # in ms below a second
    assert lines[0].startswith("The largest transaction (0-1-9, 5,000 rows) takes one SQL thread 16")
    assert "parallel threads do not split it" in lines[0]


@pytest.mark.parametrize("flags, needle", [(["--parallel", "0"], "--parallel"), (["--parallel", "two"], "--parallel"),
                                           (["--parallel", "1.5"], "--parallel"), (["--link", "20"], "--link"),
                                           (["--link", "0ms"], "--link"), (["--link", "-1ms"], "--link")])
def test_a_bad_parallel_or_link_exits_2_with_the_model_commands_usage(tmp_path, flags: list[str],
                                                                       needle: str) -> None:
    from .conftest import run_main

    env = {"REPLBENCH_STATE": str(tmp_path / "st"), "REPLBENCH_RESULTS": str(tmp_path / "results")}
    code, _, err = run_main(["model", "predict", "--mix", "update_user=1/s", *flags], env)
    assert code == 2 and needle in err and "usage: ./run.sh model" in err and "Traceback" not in err, err


def test_predict_mix_prints_the_bytes_out_of_the_master_to_the_replicas_asked(tmp_path) -> None:
    from .conftest import run_main

    results = tmp_path / "results"
    (results / "model").mkdir(parents=True)
    write_record((results / "model" / "model.json"), model_of(fitted_model(*synthetic())))
    env = {"REPLBENCH_STATE": str(tmp_path / "st"), "REPLBENCH_RESULTS": str(results)}
    mix = ["model", "predict", "--mix", "update_user=100/s"]
    code, out, err = run_main([*mix, "--replicas", "3"], env)
    each = costmodel.predict(model_of(fitted_model(*synthetic())), costmodel.parse_mix("update_user=100/s"))
    three = float(f"{each.bytes_per_s_to_each_replica['value'] * 3:.3g}")  # as the plan prints it
    assert code == 0 and f"To 3 replica(s): {three:,.0f} [" in out, err
    code, out, _ = run_main(mix, env)
    assert code == 0 and "replica(s):" not in out and "Semi-sync" not in out


# --- capacity per role: model predict --cores (issue 71) ---------------------------------------------------------

APP_WRITE, APP_READ = 0.00030, 0.00012  # the app's CPU s per write request and per read request
LOAD_WRITE, LOAD_READ = 0.00020, 0.00008  # the load generator's (vegeta's)


def with_requests(runs: list[dict], reads: bool = True, seed: int = 3) -> list[dict]:
    """synthetic()'s write runs with the app's and vegeta's CPU (a request per transaction, whatever its rows), and
    with `reads` runs that only read at three rates, twice each, which price a read (their replicas' CPU left
    out: only the request fits take them)."""
    rnd = random.Random(seed)

    def noisy(v: float) -> float:
        return v * (1 + rnd.gauss(0, 0.02))

    out = [{**o, "writes": o["transactions"], "reads": 0, "app_settings": "asyncmy/uvloop",
            "app_cpu_s": noisy(APP_WRITE * o["transactions"]), "load_cpu_s": noisy(LOAD_WRITE * o["transactions"])}
           for o in runs]
    for n in (3_000, 9_000, 18_000) if reads else ():
        for _ in range(2):
            out.append({"setting": "ROW-FULL", "table": "bench_idx", "cell": f"read @{n // 30}/s reads",
                        "transactions": 0, "rows": 0, "seconds": 30, "write_seconds": 0.0, "master_cpu_s": None,
                        "replica_cpu_s": None, "replica_reads": n, "replicas": 2, "binlog_bytes": None,
                        "fsyncs_per_commit": None, "writes": 0, "reads": n, "app_settings": "asyncmy/uvloop",
                        "app_cpu_s": noisy(APP_READ * n), "load_cpu_s": noisy(LOAD_READ * n)})
    return out


def roles_model(reads: bool = True):
    """synthetic()'s model with the app's and the load generator's fits."""
    runs, drains = synthetic()
    return model_of(fitted_model(with_requests(runs, reads), drains))


@pytest.mark.parametrize("text, cores", [
    ("master=4,replica=2,app=2,load=1", {"master": 4.0, "replica": 2.0, "app": 2.0, "load": 1.0}),
    (" replica = 0.5 , app=3 ", {"replica": 0.5, "app": 3.0}),
    ("load=1,", {"load": 1.0})])
def test_cores_are_read_per_role(text: str, cores: dict) -> None:
    assert costmodel.parse_cores(text) == cores


@pytest.mark.parametrize("text, needle", [
    ("", "no role given"), ("master", "cannot read 'master'"), ("=2", "cannot read '=2'"),
    ("cpu=2", "unknown role 'cpu'"), ("Master=2", "unknown role 'Master'"),
    ("master=2,master=3", "master given twice"),
    ("master=0", "above 0"), ("replica=-1", "above 0"), ("app=two", "above 0"), ("load=", "above 0"),
    ("load=nan", "above 0"), ("master=inf", "above 0")])
def test_bad_cores_are_refused_with_what_is_wrong(text: str, needle: str) -> None:
    with pytest.raises(costmodel.MixError, match=needle):
        costmodel.parse_cores(text)


@pytest.mark.parametrize("flags, needle", [
    (["--cores", "cpu=2"], "unknown role 'cpu'"), (["--cores", "master=0"], "above 0"),
    (["--cores", "app=x"], "above 0"), (["--cores", "load=1,load=2"], "load given twice"),
    (["--cores", ""], "no role given"),
    (["--cores", "replica=2", "--replica-cores", "2"], "--cores replica=N (deprecated)"),
    (["--replica-cores", "0"], "--replica-cores must be a number above 0"),
    (["--replica-cores", "nan"], "--replica-cores must be a number above 0")])
def test_bad_cores_exit_2_with_the_model_commands_usage(tmp_path, flags: list[str], needle: str) -> None:
    from .conftest import run_main

    env = {"REPLBENCH_STATE": str(tmp_path / "st"), "REPLBENCH_RESULTS": str(tmp_path / "results")}
    code, out, err = run_main(["model", "predict", "--mix", "update_user=1/s", *flags], env)
    assert code == 2 and needle in err and "usage: ./run.sh model" in err and "Traceback" not in err, err
    assert out == ""


def test_the_app_and_load_generators_cpu_per_request_are_fitted_per_write_and_per_read() -> None:
    model = fitted_model(*synthetic()[:1], [])  # no run recorded them: no fit, and the fit says so
    assert model["app_cpu_s"] is None and model["load_cpu_s"] is None
    assert "The app's CPU per request: no data" in render_fit(model_of(model))
    model = fitted_model(with_requests(synthetic()[0]), [])
    for part, (write, read) in (("app_cpu_s", (APP_WRITE, APP_READ)), ("load_cpu_s", (LOAD_WRITE, LOAD_READ))):
        fitted = model[part]
        assert fitted["terms"] == ["per_trx", "per_read"] and not fitted["rows_separated"], part  # no per-row term
        for term, truth in (("per_trx", write), ("per_read", read)):
            assert fitted["coef"][term] == pytest.approx(truth, rel=0.05), (part, term)
            low, high = fitted["ci95"][term]
            assert low < fitted["coef"][term] < high, (part, term)
    # a plan's figure: the write term at the plan's rate, its interval one run's (what a repeat would measure)
    plan = costmodel.predict(model_of(model), costmodel.parse_mix("update_user=300/s"))
    for figure, write in (("app_cpu_cores", APP_WRITE), ("load_cpu_cores", LOAD_WRITE)):
        got = getattr(plan, figure)
        assert got["low"] <= write * 300 <= got["high"] and got["value"] == pytest.approx(write * 300, rel=0.05)
    assert model["app_cpu_s"]["basis"] == "every setting and table; the app as asyncmy/uvloop"
    # only runs that read alone price the read term: its interval the t interval of their cost per read (Reads)
    assert model["app_cpu_s"]["read_interval"] == "t over the 6 runs that only read"
    text = render_fit(model_of(model))
    assert "The app's CPU per request (every setting and table; the app as asyncmy/uvloop): 0.29" in text
    assert "ms per write request at 400/s + 0.11" in text and "ms per read request" in text
    # no run read: the write terms alone, and the read term says "no data"
    writes_only = fitted_model(with_requests(synthetic()[0], reads=False), [])["load_cpu_s"]
    assert writes_only["terms"] == ["per_trx"] and writes_only["reads"] == "no data: no run read"
    assert "; reads: no data: no run read" in render_fit(model_of(fitted_model(
        with_requests(synthetic()[0], reads=False), [])))


def test_the_app_fit_takes_the_runs_of_the_app_settings_most_runs_had() -> None:
    runs = with_requests(synthetic()[0], reads=False)
    other = [{**o, "app_settings": "aiomysql/uvloop", "app_cpu_s": 3 * o["app_cpu_s"]} for o in runs[:3]]
    fitted = fitted_model([*runs, *other], [])
    assert fitted["app_cpu_s"]["coef"]["per_trx"] == pytest.approx(APP_WRITE, rel=0.05)
    assert fitted["app_cpu_s"]["basis"] == ("every setting and table; the app as asyncmy/uvloop, 3 run(s) of other "
                                            "app settings left out")
    assert fitted["load_cpu_s"]["n"] == len(runs) + 3  # vegeta does not see the app's settings


def test_a_run_records_its_requests_and_the_app_and_load_generators_cpu() -> None:
    summary = finished_run({
        "status": "ok", "success": 1.0, "successes": 12_600, "scenario": "mixed", "rate": 420, "schema": "bench_idx",
        "cpu_seconds_net": {"master": 9.6, "replica1": 6.8, "replica2": 6.9, "app": 7.0, "vegeta": 4.2},
        "cpu_span_s": 30.0, "served_by": {"master": 12_000, "replica1": 300, "replica2": 300},
        "binlog": {"successful_writes": 12_000, "bytes_per_write": 500.0},
        "replication": {"nodes": {"master": {"transactions": 12_000, "rows_changed": 12_000}}}})
    meta = meta_of({"knobs_changed": {}, "app": {"driver": "asyncmy", "worker_class": "uvloop"}})
    obs = costmodel.observation(summary_of(summary), meta)
    assert obs is not None and (obs.writes, obs.reads) == (12_000, 600)
    assert (obs.app_cpu_s, obs.load_cpu_s, obs.app_settings) == (7.0, 4.2, "asyncmy/uvloop")
    # a topology file's attacker hosts: this machine saw none of vegeta's CPU (the summary's 0 is not a measurement)
    remote = costmodel.observation(summary_of({**summary, "remote_attackers": [{"index": 0}]}), meta)
    assert remote is not None and remote.load_cpu_s is None and remote.app_cpu_s == 7.0


def _sustains(plan: dict, role: str) -> float:
    return plan.capacity.roles[role].max_transactions_per_s["value"]


def test_each_roles_cores_needed_utilisation_and_rate_and_the_role_that_saturates_first() -> None:
    """At 3,000 single-row writes/s: master 1.26 cores, replica 0.80 (its SQL thread ρ 0.58), app 0.90, load 0.60.
    Each role sustains rate × N / cores needed; the replica also no more than its SQL thread keeps up with; the plan
    the lowest, naming its role."""
    model = roles_model()
    mix = costmodel.parse_mix("update_user=3000/s")
    plan = costmodel.predict(model, mix, cores={"master": 2, "replica": 1, "app": 1, "load": 1})
    c = plan.capacity
    assert plan.app_cpu_cores["value"] == pytest.approx(APP_WRITE * 3000, rel=0.05)
    assert plan.load_cpu_cores["value"] == pytest.approx(LOAD_WRITE * 3000, rel=0.05)
    for role, n in (("master", 2), ("replica", 1), ("app", 1), ("load", 1)):
        got, need = c.roles[role], getattr(plan, f"{role}_cpu_cores")
        assert got.cores == n and got.cores_needed == need, role
        for end in ("value", "low", "high"):
            assert got.utilisation[end] == pytest.approx(need[end] / n), role
        for end, other in (("value", "value"), ("low", "high"), ("high", "low")):  # a reciprocal: the ends swap
            assert got.cores_max_transactions_per_s[end] == pytest.approx(3000 * n / need[other]), role
    # the replica: its cores (3,000 / 0.80 ≈ 3,770/s) bind before its SQL thread (3,000 / 0.58 ≈ 5,200/s)
    replica = c.roles["replica"]
    assert replica.apply_max_transactions_per_s == plan.onset_transactions_per_s
    assert replica.bound == "cores" and replica.max_transactions_per_s == replica.cores_max_transactions_per_s
    judged = {role: _sustains(plan, role) for role in costmodel.ROLES}
    assert c.saturates_first == "app" == min(judged, key=judged.__getitem__)  # 3,000 / 0.9 ≈ 3,330/s
    assert c.sustained_transactions_per_s == c.roles["app"].max_transactions_per_s
    assert c.not_judged == [] and c.assumption == costmodel.CAPACITY_ASSUMPTION
    # more cores for the app: the replica's cores saturate first
    plan_ = costmodel.predict(model, mix, cores={"master": 2, "replica": 1, "app": 2, "load": 1})
    assert plan_.capacity is not None and plan_.capacity.saturates_first == "replica"
    # four cores for the replica: its one SQL thread binds (serial apply: one core whatever the cores), at the
    # rate at which it falls behind; the master's 2 cores (≈ 4,760/s) now saturate first
    four = costmodel.predict(model, mix, cores={"master": 2, "replica": 4, "app": 2, "load": 1})
    replica = four.capacity.roles["replica"]
    assert replica.bound == "apply" and replica.max_transactions_per_s == four.onset_transactions_per_s
    assert replica.apply_utilisation == four.replica_apply_rho and replica.apply_at_once == 1
    assert four.capacity.saturates_first == "master"
    # with four applier threads on its four cores, up to four transactions apply at once: its cores bind again
    threads = costmodel.predict(model, mix, cores={"master": 2, "replica": 4, "app": 2, "load": 1}, threads=4)
    replica = threads.capacity.roles["replica"]
    assert replica.apply_at_once == 4 and replica.bound == "cores"
    assert replica.apply_max_transactions_per_s["value"] == pytest.approx(4 * _sustains(four, "replica"))
    assert replica.apply_max_conflicting == four.onset_transactions_per_s


def test_a_role_not_given_is_not_judged_and_one_without_data_says_so() -> None:
    model = roles_model()
    mix = costmodel.parse_mix("update_user=3000/s")
    plan = costmodel.predict(model, mix, cores={"master": 2})
    c = plan.capacity
    assert list(c.roles) == ["master"] and c.not_judged == ["replica", "app", "load"]
    assert c.saturates_first == "master"
    text = render_plan(plan)
    for label in ("each replica (mariadbd)", "app (gunicorn workers)", "load (vegeta)"):
        assert f"  {label}: not judged (not in --cores)" in text, text
    assert "the master saturating first; the roles not judged may saturate sooner" in text
    # no --cores: no capacity, and the plan prints as it did
    bare = costmodel.predict(model, mix)
    assert bare.capacity is None and bare.cores == {} and "Capacity per role" not in render_plan(bare)
    # a model without the app's fit (fitted before it): the app has no figure, is said so, and is not the first
    old = model_of(fitted_model(*synthetic()))
    got = costmodel.predict(old, mix, cores={"master": 2, "app": 0.1}).capacity
    assert got.roles["app"].cores_needed is None and got.saturates_first == "master"
    assert got.roles["app"].no_data.startswith("no data: the model has no fit of the app's CPU per request")


def test_the_capacity_prints_each_role_the_sustained_rate_its_role_and_the_assumption() -> None:
    plan = costmodel.predict(roles_model(), costmodel.parse_mix("update_user=3000/s"),
                             cores={"master": 2, "replica": 4, "app": 2, "load": 1})
    text = render_plan(plan)
    lines = text.splitlines()
    head = lines.index("Capacity per role at 3,000 transactions/s asked (--cores master=2,replica=4,app=2,load=1):")
    assert lines[head + 1].startswith("  master (mariadbd): needs 1.2") and " of its 2; sustains 4," in lines[head + 1]
    assert "its SQL thread (serial apply: one core whatever its cores) busy 0.5" in lines[head + 2]
    assert lines[head + 2].endswith("transactions/s (bound by its SQL thread, not its cores)")
    assert lines[head + 5].startswith("Sustained: 4,") and "the master saturating first" in lines[head + 5]
    assert f"Assumed: {costmodel.CAPACITY_ASSUMPTION}" in lines
    assert "no contention between roles" in costmodel.CAPACITY_ASSUMPTION
    assert "one core = one core of this host's speed" in costmodel.CAPACITY_ASSUMPTION
    assert "as measured on this machine" in costmodel.CAPACITY_ASSUMPTION
    assert "e+" not in text


def test_replica_cores_is_an_alias_of_cores_replica(tmp_path) -> None:
    from .conftest import run_main

    results = tmp_path / "results"
    (results / "model").mkdir(parents=True)
    write_record(results / "model" / "model.json", model_of(fitted_model(with_requests(synthetic()[0]),
                                                                          synthetic()[1])))
    env = {"REPLBENCH_STATE": str(tmp_path / "st"), "REPLBENCH_RESULTS": str(results)}
    mix = ["model", "predict", "--mix", "update_user=300/s"]
    code, alias, err = run_main([*mix, "--replica-cores", "2"], env)
    assert code == 0 and "--replica-cores N is deprecated: give --cores replica=N" in err, err
    code, cores, err = run_main([*mix, "--cores", "replica=2"], env)
    assert code == 0 and "deprecated" not in err, err
    assert alias == cores and "its 2 core(s)" in cores
    assert "Capacity per role at 300 transactions/s asked (--cores replica=2):" in cores
    assert "  master (mariadbd): not judged (not in --cores)" in cores
    # predict itself reads a replica's cores from --cores' roles
    plan = costmodel.predict(model_of(fitted_model(*synthetic())), costmodel.parse_mix("update_user=300/s"),
                             cores={"replica": 2.0})
    assert plan.replica_cores == 2.0 and plan.parallel.at_once == 1.0
    assert plan.replica_cpu_utilisation["value"] == pytest.approx(plan.replica_cpu_cores["value"] / 2)
    code, both, err = run_main([*mix, "--cores", "master=2,replica=2,app=1,load=1"], env)
    assert code == 0 and "  app (gunicorn workers): needs 0.089" in both, err


def test_a_workloads_tables_share_the_roles_cores() -> None:
    """A profile's tables, each priced on its own plan, run on the same hosts: the capacity sums their cores
    needed and their ρ, at their transactions/s summed, as one plan of the whole would."""
    model = roles_model()
    cores = {"master": 2.0, "replica": 4.0, "app": 2.0, "load": 1.0}
    whole = costmodel.predict(model, costmodel.parse_mix("update_user=3000/s"), cores=cores)
    halves = [costmodel.predict(model, costmodel.parse_mix("update_user=1500/s"), master_rate=3000.0, cores=cores)
              for _ in range(2)]
    got = costmodel.workload_capacity(halves, cores, no_data=costmodel.no_data_of(model))
    assert got.tables == ["bench_idx", "bench_idx"] and got.transactions_per_s == 3000
    assert got.saturates_first == whole.capacity.saturates_first == "master"
    for role in costmodel.ROLES:
        assert got.roles[role].cores_needed["value"] == pytest.approx(
            whole.capacity.roles[role].cores_needed["value"]), role
    assert got.sustained_transactions_per_s["value"] == pytest.approx(
        whole.capacity.sustained_transactions_per_s["value"])
    assert "over the workload's tables (bench_idx, bench_idx)" in "\n".join(render_capacity(got))
