"""A study run keeps what earlier runs wrote, and Ctrl-C stops it in one line, rows kept."""

import importlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pytest

from bayesvm import cli
from bayesvm.case_studies.runner import RunInterrupted, Task, run_tasks
from bayesvm.drivers import run_mcmc
from bayesvm.files import EarlierResultsError
from bayesvm.interrupts import interrupts_end_fits, keeps_on_interrupt

# A study of three tasks on the shared skeleton: the first finishes at once, the others wait
# ``SLOW_STUDY_SECONDS`` (default 0), so that a run can be stopped with one task's rows kept.
SLOW_STUDY = textwrap.dedent(
    """
    import os
    import time
    from dataclasses import dataclass

    from bayesvm.case_studies.study import Study, keyed_task


    @dataclass(frozen=True)
    class Protocol:
        n_tasks: int = 3


    STUDY = Study("slow", ("wait",), Protocol(), Protocol(n_tasks=2), seed=0, distributed=False)
    METHODS = STUDY.methods


    def wait(*, task):
        if task > 0:
            time.sleep(float(os.environ.get("SLOW_STUDY_SECONDS", "0")))
        return [{"method": "wait", "value": task}]


    def execute(run):
        tasks = [keyed_task({"task": i}, wait) for i in range(run.protocol.n_tasks)]
        return run.run_tasks(tasks, "slow.csv", "slow tasks"), "report\\n"


    run = STUDY.entry_point(execute, summary="A slow study.", outputs="", returns="Rows.")
    """
)


@pytest.fixture
def slow_study(tmp_path, monkeypatch):
    """The module of :data:`SLOW_STUDY`, importable here and in worker processes, and run by
    ``bayesvm reproduce toenail``.
    """
    folder = tmp_path / "modules"
    folder.mkdir()
    (folder / "slow_study.py").write_text(SLOW_STUDY)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(folder), *sys.path]))
    monkeypatch.setitem(cli.CASE_STUDIES, "toenail", "slow_study")
    sys.modules.pop("slow_study", None)
    yield importlib.import_module("slow_study")
    sys.modules.pop("slow_study", None)


def folder_state(folder) -> dict:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_a_run_records_what_it_was_and_how_long_it_took(slow_study, tmp_path):
    """``run.json``: what ``docs/results/studies.json`` keeps of each study's full run."""
    slow_study.run(tmp_path / "full", progressbar=False)
    slow_study.run(tmp_path / "quick", quick=True, progressbar=False)
    full, quick = (
        json.loads((tmp_path / name / "run.json").read_text()) for name in ("full", "quick")
    )
    assert full["full"] and not quick["full"]
    assert full["study"] == "slow" and full["wall_s"] >= 0.0 and not full["resumed"]
    settings = json.loads((tmp_path / "full" / "slow.settings.json").read_text())
    assert settings == {**full["settings"], "bayesvm_version": full["bayesvm"]}


def test_a_folder_with_earlier_results_is_refused_unless_resumed_or_replaced(
    slow_study, tmp_path, capsys
):
    out = tmp_path / "out"
    rows = slow_study.run(out, progressbar=False)
    assert list(rows["task"]) == [0, 1, 2]
    before = folder_state(out)
    assert {"slow.csv", "slow.settings.json", "report.md"} <= set(before)

    with pytest.raises(EarlierResultsError, match="holds the results of an earlier run"):
        slow_study.run(out, quick=True, progressbar=False)
    argv = ["reproduce", "toenail", "--quick", "--out", str(out)]
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "--resume" in error and "--replace" in error
    assert folder_state(out) == before  # nothing written over, nothing emptied

    assert cli.main(["reproduce", "toenail", "--resume", "--out", str(out)]) == 0  # same options
    assert pd.read_csv(out / "slow.csv")["task"].tolist() == [0, 1, 2]
    assert cli.main([*argv, "--replace"]) == 0  # the quick protocol: two tasks
    assert pd.read_csv(out / "slow.csv")["task"].tolist() == [0, 1]
    with pytest.raises(ValueError, match="either resume"):
        slow_study.run(out, resume=True, replace=True, progressbar=False)


def test_a_replacement_cut_short_leaves_no_report_of_the_run_it_replaced(
    slow_study, tmp_path, monkeypatch
):
    slow_study.run(tmp_path, progressbar=False)
    assert (tmp_path / "report.md").exists()
    monkeypatch.setattr(slow_study, "wait", interrupt)
    with pytest.raises(RunInterrupted):
        slow_study.run(tmp_path, replace=True, progressbar=False)
    assert not (tmp_path / "report.md").exists()
    assert pd.read_csv(tmp_path / "slow.csv")["value"].tolist() == [0]


def test_a_folder_of_other_files_is_not_an_earlier_run(slow_study, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    slow_study.run(tmp_path, progressbar=False)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def stop_with_ctrl_c(command: list[str], csv_path, rows: int = 1, timeout: float = 120.0):
    """Run ``command`` in its own process group, send Ctrl-C (SIGINT to the group, as a
    terminal does) once ``csv_path`` holds ``rows`` rows (0: once it exists, the run's tasks
    about to start), and return ``(returncode, stdout, stderr)``.
    """
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "SLOW_STUDY_SECONDS": "300", "MPLBACKEND": "Agg"},
    )
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and process.poll() is None:
            if csv_path.exists() and (not rows or len(csv_path.read_text().splitlines()) > rows):
                break
            time.sleep(0.1)
        assert process.poll() is None, process.communicate()
        os.killpg(process.pid, signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    return process.returncode, stdout, stderr


@pytest.mark.parametrize(("workers", "rows"), [(1, 1), (2, 1), (2, 0)])
def test_ctrl_c_stops_a_run_in_one_line_and_resume_goes_on(slow_study, tmp_path, workers, rows):
    """With workers, Ctrl-C reaches the fork server and every worker too: none of them may
    print a traceback, whether it comes as they import the tasks' modules (``rows`` 0) or
    while they run tasks.
    """
    out = tmp_path / "out"
    argv = ["reproduce", "toenail", "--out", str(out), "--workers", str(workers)]
    command = [
        sys.executable,
        "-c",
        "import sys\nfrom bayesvm import cli\ncli.CASE_STUDIES['toenail'] = 'slow_study'\n"
        "sys.exit(cli.main(sys.argv[1:]))",
        *argv,
    ]
    returncode, stdout, stderr = stop_with_ctrl_c(command, out / "slow.csv", rows)
    assert returncode == cli.INTERRUPTED, stderr
    kept = (
        f"the rows of the 1 of 3 tasks that finished are kept in {out / 'slow.csv'}"
        if rows
        else "none of the 3 tasks had finished"
    )
    assert stderr == (
        f"bayesvm reproduce: interrupted; {kept}: add --resume to the same command to go on\n"
    )
    assert "Traceback" not in stdout
    csv_text = (out / "slow.csv").read_text()  # empty where no task had finished
    assert (pd.read_csv(out / "slow.csv")["task"].tolist() if csv_text else []) == [0] * rows
    assert not (out / ".bayesvm.lock").exists() and not (out / "report.md").exists()
    assert cli.main([*argv, "--resume"]) == 0
    assert pd.read_csv(out / "slow.csv")["task"].tolist() == [0, 1, 2]


def test_ctrl_c_while_the_fork_server_starts_is_not_lost_and_prints_nothing():
    """Ctrl-C (to the whole process group) just as the fork server has been started, still
    importing the tasks' modules: the main process stops when the start is over; the server
    prints no traceback.
    """
    code = (
        "import multiprocessing, os, signal, time\n"
        "from multiprocessing import forkserver\n"
        "from bayesvm.case_studies import runner\n"
        "multiprocessing.get_context('forkserver').set_forkserver_preload(\n"
        "    ['bayesvm.case_studies.runner'])\n"
        "start = forkserver.ensure_running\n"
        "def start_and_ctrl_c():\n"
        "    start()\n"
        "    os.killpg(0, signal.SIGINT)\n"
        "    time.sleep(0.5)\n"
        "    print('started')\n"
        "forkserver.ensure_running = start_and_ctrl_c\n"
        "try:\n"
        "    runner._start_forkserver_deaf_to_ctrl_c()\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, start_new_session=True
    )
    assert result.stdout == "started\ninterrupted\n", result
    assert "Traceback" not in result.stderr, result.stderr


def test_ctrl_c_before_a_run_writes_anything_says_so(slow_study, tmp_path, capsys, monkeypatch):
    def stopped(out_dir, **options):
        raise KeyboardInterrupt

    monkeypatch.setattr(slow_study, "run", stopped)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["reproduce", "toenail", "--out", str(tmp_path / "new")])
    assert exit_info.value.code == cli.INTERRUPTED
    assert capsys.readouterr().err == (
        "bayesvm reproduce: interrupted before the run wrote any results\n"
    )


def interrupt(*, task):
    if task == 1:
        raise KeyboardInterrupt
    return [{"value": task}]


def test_an_interrupted_run_says_how_many_tasks_finished(tmp_path):
    tasks = [Task({"task": i}, interrupt, {"task": i}) for i in range(3)]
    with pytest.raises(RunInterrupted) as stopped:
        run_tasks(tasks, csv_path=tmp_path / "rows.csv", progressbar=False)
    assert (stopped.value.finished, stopped.value.total) == (1, 3)
    assert stopped.value.csv_path == tmp_path / "rows.csv"
    assert isinstance(stopped.value, KeyboardInterrupt)
    assert pd.read_csv(tmp_path / "rows.csv")["task"].tolist() == [0]


def test_ctrl_c_ends_a_fit_inside_a_study_and_keeps_its_draws_outside():
    def step(state, rng):
        if state == 5:
            raise KeyboardInterrupt
        return state + 1, {}

    def sample():
        rng = np.random.default_rng(0)
        record = lambda state: {"x": float(state)}  # noqa: E731
        return run_mcmc(lambda rng: 0, step, record, rng=rng, chains=1, tune=0, draws=10)

    with pytest.warns(UserWarning, match="interrupted: keeping 1 chain"):
        kept = sample()
    assert kept.interrupted and kept.samples["x"].tolist() == [[1.0, 2.0, 3.0, 4.0, 5.0]]
    with interrupts_end_fits(), pytest.raises(KeyboardInterrupt):
        sample()
    assert keeps_on_interrupt()  # as before the block
