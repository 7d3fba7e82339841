from bayesvm.bench import run_bench


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
