import json

import numpy as np
import pandas as pd
import pytest

from bayesvm import cli
from bayesvm.bench.acceleration import ACCELERATIONS, run_acceleration_bench
from bayesvm.bench.gpsvm import PAPER_WAVEFORM, run_gpsvm_bench
from bayesvm.bench.kernel import PAPER_NEWSGROUPS_SECONDS, fit_exponents, run_kernel_bench
from bayesvm.bench.peers import (
    PEER_SIZES,
    PEERS,
    SIZE_LIMITS,
    Peer,
    SizeLimit,
    fit_slopes,
    plot_scaling,
    run_peer_bench,
)
from bayesvm.bench.penalized import run_bench
from bayesvm.bench.record import load_tables
from bayesvm.bench.spread import VB_FITS, run_spread_bench
from bayesvm.case_studies.reporting import markdown_table


def test_bench_times_each_method_at_each_thread_count():
    table = run_bench(sizes=[(30, 3)], methods=["vb", "gibbs"], quick=True, threads=[1, 2])
    assert list(zip(table["method"], table["threads"], strict=True)) == [
        ("vb", "1"),
        ("vb", "2"),
        ("gibbs", "1"),
        ("gibbs", "2"),
    ]
    assert (table["seconds"] > 0).all()
    assert table["time_ratio_nuts"].isna().all()  # no NUTS row to compare with


def test_kernel_bench_times_the_paper_run_the_sweeps_and_bgkm():
    tables = run_kernel_bench(methods=["gibbs", "vb"], quick=True)
    assert list(tables) == ["paper_run", "per_sweep", "exponent", "bgkm"]
    paper = tables["paper_run"].iloc[0]
    assert paper["sweeps"] == 50 + 50 * 2  # tune + draws * thin
    assert paper["ratio_to_paper"] == pytest.approx(paper["seconds"] / PAPER_NEWSGROUPS_SECONDS)
    assert 0 < paper["mean_active"] <= paper["k_max"]
    per_sweep = tables["per_sweep"]
    assert list(zip(per_sweep["method"], per_sweep["n"], strict=True)) == [
        ("rj", 60),
        ("gibbs", 60),
        ("rj", 120),
        ("gibbs", 120),
    ]
    assert (per_sweep["ms_per_sweep"] > 0).all() and (per_sweep["setup_s"] > 0).all()
    rj = per_sweep[per_sweep["method"] == "rj"]
    assert (rj["mean_active"] <= rj["k_max"]).all()
    gibbs = per_sweep[per_sweep["method"] == "gibbs"]
    assert (gibbs["mean_active"] == gibbs["n"]).all()  # BGKM: every vector active
    assert list(tables["exponent"]["timing"]) == [
        "rj: ms per sweep",
        "gibbs: ms per sweep",
        "rj: paper Table 3",
        "gibbs: paper Table 3",
    ]
    bgkm = tables["bgkm"]
    assert list(bgkm["method"]) == ["gibbs", "vb"]
    assert bgkm["ess_min"].notna().tolist() == [True, False]  # VB has no draws
    assert bgkm["ess_per_s_ratio_nuts"].isna().all()  # no NUTS row to compare with


def test_fit_exponents_recovers_a_power_law():
    n = np.array([250, 500, 1000, 2000])
    per_sweep = pd.DataFrame({"method": "rj", "n": n, "ms_per_sweep": 0.003 * n**1.5})
    exponents = fit_exponents(per_sweep).set_index("timing")["exponent"]
    assert exponents["rj: ms per sweep"] == pytest.approx(1.5)
    # The paper's BGKM (every vector active) grows faster with n than its FBGKM.
    assert exponents["gibbs: paper Table 3"] > exponents["rj: paper Table 3"]


def test_gpsvm_bench_times_waveform_the_throughput_and_the_full_gp():
    tables = run_gpsvm_bench(methods=["vb", "gibbs"], quick=True)
    assert list(tables) == ["waveform", "throughput", "full_gp"]
    waveform = tables["waveform"]
    assert list(waveform["method"]) == ["svi", "vb"]
    assert (waveform["folds"] == 2).all() and (waveform["n_train"] == 200).all()
    assert waveform["ratio_to_ecm"].to_numpy() == pytest.approx(
        waveform["seconds"].to_numpy() / PAPER_WAVEFORM["ecm_s"]
    )
    assert waveform["error"].between(0.0, 1.0).all()
    throughput = tables["throughput"]
    assert list(zip(throughput["storage"], throughput["n"], strict=True)) == [
        ("memory", 1000),
        ("dask", 1000),
        ("dask", 3000),
    ]
    assert throughput["points_per_s"].to_numpy() == pytest.approx(
        (throughput["steps"] * throughput["batch_size"] / throughput["seconds"]).to_numpy()
    )
    assert (throughput["peak_mib"] > 0).all()
    full_gp = tables["full_gp"]
    assert list(full_gp["method"]) == ["vb", "gibbs"]
    assert full_gp["ess_min"].notna().tolist() == [False, True]  # VB has no draws
    assert full_gp["ess_per_s_ratio_nuts"].isna().all()  # no NUTS row to compare with


def test_peer_bench_times_each_method_and_notes_those_above_their_limit():
    limit = SizeLimit(max_samples=100, reason="the test's")
    tables = run_peer_bench(
        sizes=[(60, 2), (120, 2)],
        methods=["vb", "liblinear", "libsvm", "vb_logit_fit.m"],
        quick=True,
        limits={"libsvm": limit},
    )
    assert list(tables) == ["timings", "slopes"]
    timings = tables["timings"].set_index(["n_samples", "method"])
    skipped = timings.loc[(120, "libsvm")]
    assert np.isnan(skipped["seconds"])
    assert skipped["note"] == "not timed: above its size limit, n <= 100: the test's"
    timed = timings.drop(index=[(120, "libsvm")])
    assert (timed["seconds"] > 0).all() and (timed["note"] == "").all()
    assert timings.loc[(60, "vb_logit_fit.m"), "group"] == "logistic regression"
    slopes = tables["slopes"].set_index("method")
    assert slopes.loc["libsvm", "sizes"] == 1 and np.isnan(slopes.loc["libsvm", "slope"])
    assert np.isfinite(slopes.drop(index="libsvm")["slope"]).all()


def test_peer_bench_notes_a_missing_optional_package(monkeypatch):
    absent = Peer("NUTS", PEERS["nutpie"].run, requires="a_package_that_is_not_installed")
    monkeypatch.setitem(PEERS, "nutpie", absent)
    timings = run_peer_bench(sizes=[(60, 2)], methods=["vb", "nutpie"], quick=True)["timings"]
    row = timings.set_index("method").loc["nutpie"]
    assert np.isnan(row["seconds"])
    assert row["note"] == "not timed: a_package_that_is_not_installed is not installed"


def test_default_limits_skip_the_exploding_methods_at_a_million_rows():
    allowed = {
        method: [SIZE_LIMITS.get(method, SizeLimit()).allows(n, d) for n, d in PEER_SIZES]
        for method in PEERS
    }
    at_a_million = [n == 1_000_000 for n, _ in PEER_SIZES]
    for method in ("libsvm", "gibbs", "nuts", "nutpie"):
        assert not any(a and m for a, m in zip(allowed[method], at_a_million, strict=True))
        assert SIZE_LIMITS[method].reason  # documented
    for method in ("vb", "em", "ecme", "liblinear", "vb_logit", "vb_logit_fit.m"):
        assert all(allowed[method])


def test_fit_slopes_recovers_each_methods_power_law():
    n = np.array([1000, 10_000, 100_000])
    timings = pd.DataFrame(
        {
            "n_samples": np.tile(n, 2),
            "n_features": 10,
            "method": ["vb"] * 3 + ["libsvm"] * 3,
            "group": "linear SVM",
            "seconds": np.r_[1e-4 * n, 1e-8 * n[:2] ** 2, np.nan],
        }
    )
    slopes = fit_slopes(timings).set_index("method")
    assert slopes.loc["vb", "slope"] == pytest.approx(1.0)
    assert slopes.loc["libsvm", "slope"] == pytest.approx(2.0)
    assert slopes.loc["libsvm", "n_to"] == 10_000 and slopes.loc["libsvm", "sizes"] == 2


def test_plot_scaling_draws_one_panel_per_d_with_the_slopes_in_the_legend():
    timings = pd.DataFrame(
        {
            "n_samples": [100, 200, 100, 200],
            "n_features": [3, 3, 6, 6],
            "method": "vb",
            "group": "linear SVM",
            "seconds": [0.1, 0.2, 0.1, np.nan],
        }
    )
    figure = plot_scaling(timings, fit_slopes(timings))
    first, second = figure.axes
    assert [first.get_title(), second.get_title()] == ["d = 3", "d = 6"]
    assert first.get_legend_handles_labels()[1] == ["vb (slope 1.00)"]
    assert second.get_legend_handles_labels()[1] == ["vb"]  # one size: no slope


def test_save_keeps_the_printed_tables_and_what_measured_them(tmp_path, capsys):
    """``bayesvm bench --save``: the docs' measured tables are made from such files."""
    path = tmp_path / "bench.json"
    argv = ["bench", "--quick", "--methods", "vb", "--repeats", "1", "--save", str(path)]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    (table,) = load_tables(path).values()
    assert markdown_table(table) in printed
    record = json.loads(path.read_text())
    assert record["command"] == "bayesvm bench --quick --methods vb --repeats 1"
    assert {"machine", "load_average", "bayesvm", "date"} <= set(record)


def test_save_refuses_a_file_that_is_not_json_before_any_work(tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["bench", "--quick", "--save", str(tmp_path / "bench.csv")])
    assert exit_info.value.code == 2
    assert list(tmp_path.iterdir()) == []


def test_bench_takes_the_samplers_draws_and_tuning():
    table = run_bench(sizes=[(30, 3)], methods=["gibbs"], quick=True, draws=40, tune=10)
    assert table["iter_per_s"].iloc[0] * table["sampling_s"].iloc[0] == pytest.approx(50)


def test_acceleration_bench_reaches_the_optimum_every_way_and_faster_when_accelerated():
    table = run_acceleration_bench(quick=True)
    heart = table[table["problem"].str.startswith("heart")].set_index("acceleration")
    assert list(heart.index) == list(ACCELERATIONS)  # too few rows for a subsample's start
    simulated = table[~table["problem"].str.startswith("heart")]
    assert set(simulated["start"]) == {"papers'", "subsample"}
    assert table["converged"].all()
    # Each stops on the model's rule (1e-10 of the bound): within 1e-2 sd of the optimum.
    assert (table["means_off_sd"] < 1e-2).all()
    plain = heart.loc["none (the papers')", "sweeps"]
    assert (heart["sweeps"].drop("none (the papers')") < plain).all()


def test_spread_bench_gives_each_q_its_range_of_sd_ratios():
    (row,) = run_spread_bench(quick=True).to_dict("records")
    assert row["weights"] == 13 and row["gibbs_draws"] == "2 x 1,000"
    ranges = {column: [float(v) for v in row[column].split("-")] for column in VB_FITS}
    assert all(low <= high for low, high in ranges.values())
    # mean-field's sds are too narrow (about half of Gibbs's on heart); LRVB's wider
    assert ranges["mean_field"][1] < 0.8 < ranges["lrvb"][1]


def test_a_case_studys_csv_is_a_result_file_of_one_table(tmp_path):
    path = tmp_path / "linlogit_timings.csv"
    pd.DataFrame({"example": ["2.6.2"], "seconds": [0.03]}).to_csv(path, index=False)
    (name, table), *_ = load_tables(path).items()
    assert name == "linlogit_timings"
    assert markdown_table(table) == "| example | seconds |\n|---|---|\n| 2.6.2 | 0.03 |"
