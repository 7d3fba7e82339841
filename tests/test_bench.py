import numpy as np
import pandas as pd
import pytest

from bayesvm.bench import run_bench
from bayesvm.bench_gpsvm import PAPER_WAVEFORM, run_gpsvm_bench
from bayesvm.bench_kernel import PAPER_NEWSGROUPS_SECONDS, fit_exponents, run_kernel_bench


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
