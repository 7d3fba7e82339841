import sys

import numpy as np
import pandas as pd
import pytest

from bayesvm.case_studies.runner import Task, check_methods, run_tasks, task_seed

CALLS: list[int] = []


class Interrupted(Exception):
    pass


def draw_rows(*, replicate: int, seed: int, fail: bool = False) -> list[dict]:
    """Two rows of seeded draws; raises instead when ``fail`` (a crash in the middle of a run)."""
    CALLS.append(replicate)
    if fail:
        raise Interrupted(f"replicate {replicate}")
    rng = np.random.default_rng(task_seed(seed, replicate))
    return [{"method": method, "value": rng.standard_normal()} for method in ("a", "b")]


def make_tasks(n_tasks: int, fail_from: int | None = None, seed: int = 5) -> list[Task]:
    return [
        Task(
            key={"replicate": replicate, "label": f"r{replicate}"},
            function=draw_rows,
            kwargs={
                "replicate": replicate,
                "seed": seed,
                "fail": fail_from is not None and replicate >= fail_from,
            },
        )
        for replicate in range(n_tasks)
    ]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    path = tmp_path_factory.mktemp("runner") / "rows.csv"
    return run_tasks(make_tasks(6), csv_path=path, progressbar=False)


def test_rows_come_in_task_order_with_their_keys(uninterrupted):
    assert list(uninterrupted.columns) == ["replicate", "label", "method", "value"]
    assert uninterrupted["replicate"].tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert uninterrupted["label"].tolist()[:3] == ["r0", "r0", "r1"]


def test_interrupted_run_keeps_finished_rows_and_resume_completes_it(uninterrupted, tmp_path):
    path = tmp_path / "rows.csv"
    with pytest.raises(Interrupted):
        run_tasks(make_tasks(6, fail_from=4), csv_path=path, progressbar=False)
    assert pd.read_csv(path)["replicate"].tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    CALLS.clear()
    resumed = run_tasks(make_tasks(6), csv_path=path, resume=True, progressbar=False)
    assert CALLS == [4, 5]
    pd.testing.assert_frame_equal(resumed, uninterrupted)
    pd.testing.assert_frame_equal(pd.read_csv(path), uninterrupted)


def test_resume_drops_a_line_cut_short_and_reruns_its_task(uninterrupted, tmp_path):
    path = tmp_path / "rows.csv"
    uninterrupted.iloc[:7].to_csv(path, index=False)  # task 3 half written ...
    with path.open("a") as handle:
        handle.write("3,r3,b,0.12")  # ... and its second line cut short
    CALLS.clear()
    resumed = run_tasks(make_tasks(6), csv_path=path, resume=True, progressbar=False)
    assert CALLS == [3, 4, 5]
    pd.testing.assert_frame_equal(resumed, uninterrupted)


def test_resume_without_a_csv_runs_everything_and_without_resume_starts_afresh(
    uninterrupted, tmp_path
):
    path = tmp_path / "rows.csv"
    CALLS.clear()
    pd.testing.assert_frame_equal(
        run_tasks(make_tasks(6), csv_path=path, resume=True, progressbar=False), uninterrupted
    )
    assert CALLS == list(range(6))
    # Drops rows of tasks no longer asked for; a fresh run ignores the old file.
    assert len(run_tasks(make_tasks(2), csv_path=path, resume=True, progressbar=False)) == 4
    assert len(pd.read_csv(path)) == 4
    CALLS.clear()
    run_tasks(make_tasks(2), csv_path=path, progressbar=False)
    assert CALLS == [0, 1]
    with pytest.raises(ValueError, match="resume needs csv_path"):
        run_tasks(make_tasks(2), resume=True, progressbar=False)


def test_dask_cluster_gives_the_rows_of_one_process(uninterrupted, tmp_path):
    distributed = pytest.importorskip("distributed")
    path = tmp_path / "rows.csv"
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        # Workers import this test module by name: spawned processes inherit sys.path.
        on_cluster = run_tasks(make_tasks(6), csv_path=path, scheduler=client, progressbar=False)
        by_address = run_tasks(
            make_tasks(2), scheduler=cluster.scheduler_address, progressbar=False
        )
    pd.testing.assert_frame_equal(on_cluster, uninterrupted)
    pd.testing.assert_frame_equal(pd.read_csv(path), uninterrupted)
    pd.testing.assert_frame_equal(by_address, uninterrupted.iloc[:4])
    with pytest.raises(ValueError, match="either workers"):
        run_tasks(make_tasks(2), workers=2, scheduler=cluster.scheduler_address)


def test_missing_dask_gives_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"bayesvm\[distributed\]"):
        run_tasks(make_tasks(1), scheduler="tcp://127.0.0.1:1", progressbar=False)


def test_check_methods():
    assert check_methods(["vb"], ("svm", "vb")) == ("vb",)
    for bad in [[], ["nuts"]]:
        with pytest.raises(ValueError, match="non-empty subset"):
            check_methods(bad, ("svm", "vb"))
