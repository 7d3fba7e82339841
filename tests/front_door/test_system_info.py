import os

import numpy as np
import pytensor
import pytest

import bayesvm
from bayesvm import cli


@pytest.fixture(scope="module")
def facts():
    return bayesvm.info()


def test_info_reports_versions_blas_and_cores(facts):
    assert facts["bayesvm"] == bayesvm.__version__
    assert facts["packages"]["numpy"] == np.__version__
    assert facts["packages"]["pytensor"] == pytensor.__version__
    assert facts["pytensor_blas"]["ldflags"] == pytensor.config.blas__ldflags
    assert facts["cores"] == len(os.sched_getaffinity(0))
    assert facts["numpy_blas"], "NumPy's own BLAS is not visible to threadpoolctl"
    assert all(pool["num_threads"] >= 1 for pool in facts["numpy_blas"])


def test_info_command_prints_the_same_facts(facts, capsys):
    assert cli.main(["info"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"bayesvm: {bayesvm.__version__}"
    assert f"BLAS of PyTensor (NUTS): {facts['pytensor_blas']['summary']}" in lines
    assert f"cores available: {facts['cores']}" in lines
    assert sum(line.startswith("BLAS of NumPy/SciPy: ") for line in lines) == len(
        facts["numpy_blas"]
    )


def test_version_option_prints_the_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"bayesvm {bayesvm.__version__}\n"
