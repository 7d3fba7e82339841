"""Files appear whole or not at all, and a folder is used by one run at a time."""

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from bayesvm.files import (
    LOCK_FILE_NAME,
    FolderInUseError,
    atomic_path,
    locked_folder,
    save_figure,
    write_csv,
    write_text,
)


def listing(folder) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


def test_each_writer_replaces_its_file_and_leaves_nothing_else(tmp_path):
    report, rows, image = tmp_path / "report.md", tmp_path / "rows.csv", tmp_path / "figure.png"
    for path in (report, rows, image):
        path.write_text("old")
    write_text(report, "# Résumé\n")
    frame = pd.DataFrame({"a": [1, 2], "b": [0.5, np.nan]})
    write_csv(frame, rows, index=False)
    figure = Figure()
    figure.add_subplot().plot([0, 1])
    save_figure(figure, image, dpi=20)
    assert report.read_text(encoding="utf-8") == "# Résumé\n"
    pd.testing.assert_frame_equal(pd.read_csv(rows), frame)
    assert image.read_bytes().startswith(b"\x89PNG")  # the format chosen by the suffix
    assert listing(tmp_path) == ["figure.png", "report.md", "rows.csv"]


def test_temporary_files_are_beside_the_target_with_its_suffix_and_unique_names(tmp_path):
    target = tmp_path / "fit.nc"
    with atomic_path(target) as first, atomic_path(target) as second:
        assert first.parent == second.parent == tmp_path and first != second
        assert first.suffix == second.suffix == ".nc"
        assert first.exists() and not target.exists()
        first.write_text("first")
        second.write_text("second")
    assert target.read_text() == "first"  # the outer block ends last
    assert listing(tmp_path) == ["fit.nc"]


def test_a_new_file_gets_the_permissions_open_would_give_it(tmp_path):
    umask = os.umask(0)
    os.umask(umask)
    write_text(tmp_path / "notes.txt", "x")
    assert (tmp_path / "notes.txt").stat().st_mode & 0o777 == 0o666 & ~umask


@pytest.mark.parametrize("interruption", [KeyboardInterrupt, OSError])
def test_an_interrupted_write_leaves_the_old_file_and_no_temporary_file(
    tmp_path, monkeypatch, interruption
):
    target = tmp_path / "rows.csv"
    write_csv(pd.DataFrame({"a": [1, 2, 3]}), target, index=False)
    old = target.read_bytes()
    write_rows = pd.DataFrame.to_csv

    def killed_midway(frame, path, **kwargs):
        write_rows(frame, path, **kwargs)
        os.truncate(path, os.path.getsize(path) // 2)
        raise interruption("killed midway")

    monkeypatch.setattr(pd.DataFrame, "to_csv", killed_midway)
    with pytest.raises(interruption):
        write_csv(pd.DataFrame({"a": range(1000)}), target, index=False)
    with pytest.raises(interruption):
        write_csv(pd.DataFrame({"a": range(1000)}), tmp_path / "new.csv", index=False)
    assert target.read_bytes() == old
    assert listing(tmp_path) == ["rows.csv"]


def read_lock(folder) -> dict:
    return json.loads((folder / LOCK_FILE_NAME).read_text())


def write_lock(folder, **record) -> None:
    (folder / LOCK_FILE_NAME).write_text(json.dumps(record))


def finished_process_id() -> int:
    """The pid of a process that has exited (and been reaped): no process has it now."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_held_folder_records_its_holder_and_is_released_on_any_exit(tmp_path):
    folder = tmp_path / "results" / "run"
    with locked_folder(folder) as held:
        assert held == folder and listing(folder) == [LOCK_FILE_NAME]
        record = read_lock(folder)
        assert record["pid"] == os.getpid() and record["hostname"] == socket.gethostname()
        assert record["command"] and record["started"]
    assert listing(folder) == []
    with pytest.raises(KeyboardInterrupt), locked_folder(folder):
        raise KeyboardInterrupt
    assert listing(folder) == []


def test_a_held_folder_is_refused_in_one_line_naming_its_holder(tmp_path):
    with locked_folder(tmp_path):
        record = read_lock(tmp_path)
        with pytest.raises(FolderInUseError) as refused, locked_folder(tmp_path):
            pytest.fail("entered a held folder")
        assert read_lock(tmp_path) == record  # the holder's lock is left alone
    message, holder = str(refused.value), f"process {os.getpid()} ({record['command']})"
    assert message.startswith(f"{tmp_path} is in use by {holder}, started ")
    assert message.endswith("; wait for it or choose another folder") and "\n" not in message
    assert refused.value.holder == record


def test_a_lock_left_by_a_process_that_no_longer_runs_is_taken_over(tmp_path):
    pid = finished_process_id()
    command = "bayesvm reproduce simulated --out results/x"
    started = "2024-05-01T18:02:11+00:00"
    write_lock(tmp_path, pid=pid, hostname=socket.gethostname(), command=command, started=started)
    expected = (
        rf"{tmp_path} was locked by process {pid} \(bayesvm reproduce simulated --out "
        r"results/x\), started 2024-05-01 18:02:11, which no longer runs: taking it over"
    )
    with pytest.warns(UserWarning, match=expected), locked_folder(tmp_path):
        assert read_lock(tmp_path)["pid"] == os.getpid()
    assert listing(tmp_path) == []


def test_locks_of_other_hosts_and_unreadable_locks_count_as_held(tmp_path):
    record = {"pid": finished_process_id(), "command": "bayesvm reproduce toenail"}
    write_lock(tmp_path, **record, hostname="node7.example", started="2024-05-01T18:02:11")
    with pytest.raises(FolderInUseError, match=rf"process {record['pid']} on node7\.example \("):
        with locked_folder(tmp_path):
            pytest.fail("entered a held folder")
    (tmp_path / LOCK_FILE_NAME).write_text("")  # a lock being written, or cut short
    with pytest.raises(FolderInUseError, match="its lock file .* cannot be read"):
        with locked_folder(tmp_path):
            pytest.fail("entered a held folder")
    assert listing(tmp_path) == [LOCK_FILE_NAME]


def test_write_errors_name_the_target_and_a_folder_is_refused_before_writing(tmp_path):
    """The temporary file's name would mean nothing to the user; and a target that is a
    folder is refused before the writer runs (a fit's netCDF written whole, then refused).
    """
    written = []

    def write(path):
        with atomic_path(path) as temporary:
            written.append(temporary)
            temporary.write_text("data")

    (tmp_path / "folder").mkdir()
    with pytest.raises(IsADirectoryError) as refused:
        write(tmp_path / "folder")
    assert refused.value.filename == str(tmp_path / "folder") and not written
    missing = tmp_path / "no such folder" / "fit.nc"
    with pytest.raises(FileNotFoundError) as refused:
        write(missing)
    assert refused.value.filename == str(missing) and ".tmp" not in str(refused.value)
    too_long = tmp_path / ("x" * 300 + ".nc")
    with pytest.raises(OSError, match="File name too long") as refused:
        write(too_long)
    assert refused.value.filename == str(too_long) and not written
    long_enough = tmp_path / ("y" * 250 + ".nc")  # fits, though its temporary's name would not
    write(long_enough)
    assert long_enough.read_text() == "data"
    assert listing(tmp_path) == sorted(["folder", long_enough.name])


def test_a_fit_saved_to_a_folder_fails_before_writing_naming_the_folder(tmp_path, monkeypatch):
    import arviz as az

    import bayesvm
    from bayesvm.models import LinearSVM

    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 2))
    fit = bayesvm.fit(LinearSVM.from_arrays(X, np.where(X[:, 0] > 0, 1, -1), alpha=1.0), "em")
    folder = tmp_path / "a_folder"
    folder.mkdir()
    monkeypatch.setattr(az.InferenceData, "to_netcdf", pytest.fail)  # nothing may be written
    with pytest.raises(IsADirectoryError, match=r"is a folder, not a file.*a_folder'"):
        fit.to_netcdf(folder)
    assert listing(tmp_path) == ["a_folder"] and listing(folder) == []
