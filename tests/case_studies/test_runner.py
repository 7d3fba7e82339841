import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

import bayesvm
from bayesvm.case_studies import simulated
from bayesvm.case_studies.runner import (
    ResumeMismatchError,
    Task,
    check_methods,
    run_tasks,
    settings_path,
    split_tasks,
    task_seed,
)

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


def test_costlier_tasks_start_first_and_rows_keep_task_order(uninterrupted):
    """In one process the tasks run by decreasing cost (in task order within a cost); the
    rows come in task order, the same as without costs.
    """
    tasks = [
        Task(task.key, task.function, task.kwargs, cost=cost)
        for task, cost in zip(make_tasks(6), [1.0, 3.0, 1.0, 2.0, 3.0, 1.0], strict=True)
    ]
    CALLS.clear()
    rows = run_tasks(tasks, progressbar=False)
    assert CALLS == [1, 4, 3, 0, 2, 5]
    pd.testing.assert_frame_equal(rows, uninterrupted)


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


def test_a_case_study_gives_the_same_rows_serially_in_processes_and_on_dask(tmp_path):
    """Real fits (VB and Gibbs of two simulated data sets): every number but the wall-clock
    seconds is the same, bit for bit, wherever the tasks run."""
    distributed = pytest.importorskip("distributed")
    options = {
        "quick": True,
        "n_datasets": 2,
        "methods": ("vb", "gibbs"),
        "seed": 11,
        "progressbar": False,
    }
    serial = simulated.run(tmp_path / "serial", **options)
    in_processes = simulated.run(tmp_path / "processes", workers=2, **options)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        on_dask = simulated.run(tmp_path / "dask", scheduler=cluster, **options)
    assert len(serial) == 2 * 2
    for rows in (in_processes, on_dask):
        pd.testing.assert_frame_equal(
            rows.drop(columns="seconds"), serial.drop(columns="seconds"), check_exact=True
        )


def test_missing_dask_gives_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"bayesvm\[distributed\]"):
        run_tasks(make_tasks(1), scheduler="tcp://127.0.0.1:1", progressbar=False)


SETTINGS = {"study": "draws", "methods": ("a", "b"), "quick": True, "sizes": (3, 4)}


def interrupted_run(path, settings=SETTINGS):
    """The CSV of a run of 6 tasks stopped after its first 4, with ``settings``."""
    with pytest.raises(Interrupted):
        run_tasks(make_tasks(6, fail_from=4), csv_path=path, settings=settings, progressbar=False)


def test_settings_are_written_beside_the_csv_with_the_version(tmp_path):
    path = tmp_path / "rows.csv"
    interrupted_run(path)
    assert settings_path(path) == tmp_path / "rows.settings.json"
    stored = json.loads(settings_path(path).read_text())
    assert stored == {
        "study": "draws",
        "methods": ["a", "b"],
        "quick": True,
        "sizes": [3, 4],
        "bayesvm_version": bayesvm.__version__,
    }
    assert settings_path(tmp_path / "examples") == tmp_path / "examples.settings.json"
    # A run without settings leaves no stale settings file behind.
    run_tasks(make_tasks(1), csv_path=path, progressbar=False)
    assert not settings_path(path).exists()


def test_resume_with_the_same_settings_completes_the_run(uninterrupted, tmp_path):
    path = tmp_path / "rows.csv"
    interrupted_run(path)
    CALLS.clear()
    resumed = run_tasks(
        make_tasks(6), csv_path=path, settings=dict(SETTINGS), resume=True, progressbar=False
    )
    assert CALLS == [4, 5]
    pd.testing.assert_frame_equal(resumed, uninterrupted)


def test_resume_refuses_other_settings_and_leaves_the_csv_alone(tmp_path):
    path = tmp_path / "rows.csv"
    interrupted_run(path)
    before = path.read_text()
    CALLS.clear()
    other = {**SETTINGS, "methods": ("a",), "quick": False, "seed": 3}
    with pytest.raises(ResumeMismatchError) as error:
        run_tasks(make_tasks(6), csv_path=path, settings=other, resume=True, progressbar=False)
    assert isinstance(error.value, ValueError)
    assert list(error.value.differences) == ["methods", "quick", "seed"]
    assert error.value.differences["methods"] == (["a", "b"], ["a"])
    message = str(error.value)
    assert "methods: ['a', 'b'] before, ['a'] now; quick: True before, False now" in message
    assert "seed: (not recorded) before, 3 now" in message
    assert "--replace" in message and "\n" not in message
    assert CALLS == []
    assert path.read_text() == before
    assert json.loads(settings_path(path).read_text())["quick"] is True


def test_resume_of_a_csv_without_settings_warns_and_goes_on(uninterrupted, tmp_path):
    path = tmp_path / "rows.csv"
    interrupted_run(path)
    settings_path(path).unlink()
    with pytest.warns(UserWarning, match="without checking its settings"):
        resumed = run_tasks(
            make_tasks(6), csv_path=path, settings=SETTINGS, resume=True, progressbar=False
        )
    pd.testing.assert_frame_equal(resumed, uninterrupted)
    assert settings_path(path).exists()  # checked next time


def test_resume_across_bayesvm_versions_warns(tmp_path, monkeypatch):
    path = tmp_path / "rows.csv"
    interrupted_run(path)
    monkeypatch.setattr(bayesvm, "__version__", "99.0")
    with pytest.warns(UserWarning, match=r"with bayesvm 99\.0: its rows come from two versions"):
        run_tasks(make_tasks(6), csv_path=path, settings=SETTINGS, resume=True, progressbar=False)


def test_rows_with_new_columns_widen_a_resumed_csv(uninterrupted, tmp_path):
    """Rows kept from an older version that lacked a column: the CSV gains the column as
    soon as a new row has it, blank for the old rows."""
    path = tmp_path / "rows.csv"
    uninterrupted.iloc[:4].drop(columns="value").to_csv(path, index=False)  # tasks 0 and 1
    with pytest.raises(Interrupted):
        run_tasks(make_tasks(4, fail_from=3), csv_path=path, resume=True, progressbar=False)
    on_disk = pd.read_csv(path)
    assert list(on_disk.columns) == ["replicate", "label", "method", "value"]
    assert on_disk["replicate"].tolist() == [0, 0, 1, 1, 2, 2]
    assert on_disk["value"].isna().tolist() == [True] * 4 + [False] * 2
    np.testing.assert_array_equal(on_disk["value"].iloc[4:], uninterrupted["value"].iloc[4:6])


def test_check_methods():
    assert check_methods(["vb"], ("svm", "vb")) == ("vb",)
    for bad in [[], ["nuts"]]:
        with pytest.raises(ValueError, match="non-empty subset"):
            check_methods(bad, ("svm", "vb"))


def test_split_tasks_over_data_sets_are_keyed_by_both():
    tasks = split_tasks(draw_rows, 2, datasets=("ringnorm", "twonorm"), seed=0)
    assert [task.key for task in tasks] == [
        {"dataset": "ringnorm", "split": 0},
        {"dataset": "ringnorm", "split": 1},
        {"dataset": "twonorm", "split": 0},
        {"dataset": "twonorm", "split": 1},
    ]
    assert tasks[3].kwargs == {"dataset": "twonorm", "split": 1, "seed": 0}
    assert [task.key for task in split_tasks(draw_rows, 2, seed=0)] == [{"split": 0}, {"split": 1}]


STOPPED_STUDY = """
import os
import sys
import time

from bayesvm.case_studies.runner import Task, run_tasks


def wait(*, index, folder):
    with open(os.path.join(folder, f"{os.getpid()}.pid"), "w"):
        pass
    time.sleep(300)
    return [{"index": index}]


if __name__ == "__main__":
    tasks = [Task({"index": i}, wait, {"index": i, "folder": sys.argv[1]}) for i in range(2)]
    run_tasks(tasks, workers=2, progressbar=False)
"""


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie, dead but not yet reaped, is not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="tells a worker that ended from a zombie by /proc/<pid>/stat, which only Linux has",
)
def test_workers_stop_when_the_main_process_is_killed(tmp_path):
    """A run whose main process alone is ended by SIGTERM (``kill PID``, a batch system's
    time limit) leaves no worker running its task: each stops within seconds.
    """
    script = tmp_path / "study.py"
    script.write_text(STOPPED_STUDY)
    main = subprocess.Popen([sys.executable, str(script), str(tmp_path)])
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while len(workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            workers = [int(path.stem) for path in tmp_path.glob("*.pid")]
        assert len(workers) == 2, "the workers did not start their tasks within two minutes"
        main.send_signal(signal.SIGTERM)
        main.wait(timeout=30)
        deadline = time.monotonic() + 30
        while any(map(_running, workers)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(map(_running, workers))
    finally:
        main.kill()
        for pid in filter(_running, workers):
            os.kill(pid, signal.SIGKILL)
