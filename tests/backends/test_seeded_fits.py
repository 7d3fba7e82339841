"""Seeded fits give the numbers they gave when ``seeded_fits.json`` was recorded: every model
variant by every method that fits it (and VB's other families and covariances), one BLAS
thread, so that a change of the code's structure shows as a change of numbers. NUTS's fits
(PyMC's sampler on ``to_pymc()``, some 5 s of compilation each) are in the slow suite, and are
held to the same call's numbers on the same machine, not to a record: the tree's discrete
doublings and U-turns turn another CPU's round-off into other draws (on two machines, the ARD
regression's means differed by their whole scale). The default suite proves ``to_pymc()``'s
density deterministically (``tests/models/test_log_density.py``).

Held to :data:`RELATIVE` of each value's scale: bit-identical on the machine that recorded
them, not on another CPU. NumPy's and OpenBLAS's AVX2 kernels round otherwise than their
AVX-512 ones, and iterations carry that on: with both kernels forced to AVX2 on an AVX-512
machine the numbers differed by up to 3e-10 of their scale (ECME on the general mixed SVM),
1e-11 for VB's linear response. :data:`RELATIVE` stays thirty times above that, far below
any change of what a fit computes. Re-record (``PYTHONPATH=tests python
tests/backends/test_seeded_fits.py``) only with a line in ``CHANGELOG.md`` saying which numbers
changed and why; never loosen :data:`RELATIVE` to pass a change of numbers.
"""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import bayesvm
from bayesvm.models import GPSVM

from conftest import simulate_logistic
from model_variants import VARIANTS

RECORDED = Path(__file__).with_name("seeded_fits.json")
RELATIVE = 1e-8
#: Each method's options: short runs, every kind of step taken at least once.
OPTIONS = {
    "vb": {},
    "vb-gaussian": {"family": "gaussian"},
    "vb-lrvb": {"covariance": "lrvb"},
    "gibbs": {"chains": 2, "tune": 20, "draws": 30},
    "rj": {"chains": 2, "tune": 20, "draws": 30},
    "em": {},
    "ecme": {},
    "svi": {"epochs": 5, "draws": 50},
    "nuts": {"chains": 1, "tune": 20, "draws": 10},
}
MODELS = {
    **VARIANTS,
    "gp-inducing": lambda: GPSVM.from_arrays(*simulate_logistic(30, 2, seed=3), inducing=6),
}
#: The variants that VB's Gaussian family and its LRVB covariance fit (those with a Gaussian
#: coefficient block and the hinge; those whose coefficient block takes a tilt).
TAKES = {
    "vb-gaussian": {"ridge-fixed", "ridge-learned", "ridge-learned-std", "gp-full"},
    "vb-lrvb": {"ridge-fixed", "ridge-learned", "ridge-learned-std", "lasso-fixed", "gp-full"},
}
TAKES["vb-gaussian"] |= {"mixed-penalized", "mixed-random-intercept", "mixed-general"}
TAKES["vb-lrvb"] |= {"mixed-penalized", "mixed-random-intercept", "mixed-general"}
TAKES["vb-lrvb"] |= {"logistic-shared", "logistic-ard"}
#: New rows at which predictions are recorded, by variant: as many columns as its data.
NEW_ROWS = simulate_logistic(4, 3, seed=11)[0]
COLUMNS = {"kernel-probit": 2, "kernel-hinge": 2, "gp-full": 2, "gp-inducing": 2}
COLUMNS |= {"kernel-gaussian": 1, "kernel-gaussian-fixed-tau": 1}
NEW_INPUTS = {
    variant: {"X_new": NEW_ROWS[:, : COLUMNS.get(variant, 3)]}
    for variant in MODELS
    if not variant.startswith("mixed-") or variant == "mixed-penalized"
}
NEW_INPUTS["mixed-random-intercept"] = {"X_new": NEW_ROWS[:, :2], "groups": [0, 1, 2, 3]}


def cases() -> list[tuple[str, str]]:
    """Every (model variant, method option set) that fits."""
    found = []
    for variant, build in MODELS.items():
        for method in bayesvm.methods(build()):
            found += [
                (variant, name)
                for name in OPTIONS
                if name.split("-")[0] == method and variant in TAKES.get(name, {variant})
            ]
    return found


def seeded_numbers(variant: str, case: str) -> dict[str, list[float]]:
    """What a seeded fit gives: each posterior variable's mean over draws and its last draw,
    the replicated data's mean, the pointwise log likelihood's sum, and predicted
    probabilities (or means) at :data:`NEW_ROWS`.
    """
    model = MODELS[variant]()
    method = case.split("-")[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short runs: convergence warnings are expected
        fit = bayesvm.fit(model, method, seed=1, threads=1, progressbar=False, **OPTIONS[case])
    numbers = {}
    for name, values in fit.idata.posterior.data_vars.items():
        draws = values.to_numpy().astype(float)
        numbers[f"mean {name}"] = draws.mean(axis=(0, 1)).ravel().tolist()
        numbers[f"last {name}"] = draws[-1, -1].ravel().tolist()
    replicated = fit.idata.posterior_predictive["y"].to_numpy().astype(float)
    numbers["replicated y"] = replicated.mean(axis=(0, 1)).ravel().tolist()
    if "log_likelihood" in fit.idata.groups():
        numbers["log likelihood"] = [float(fit.idata.log_likelihood["y"].sum())]
    if variant in NEW_INPUTS:
        numbers["predicted"] = np.asarray(fit.predict(**NEW_INPUTS[variant]), float).tolist()
    return numbers


def recorded() -> dict:
    return json.loads(RECORDED.read_text())


@pytest.fixture(scope="module")
def record() -> dict:
    return recorded()


def recorded_cases() -> list[tuple[str, str]]:
    """The cases of :func:`cases` that ``seeded_fits.json`` holds: all but NUTS's."""
    return [(variant, case) for variant, case in cases() if case != "nuts"]


def assert_same_numbers(numbers: dict, expected: dict) -> None:
    """``numbers`` are ``expected``'s within :data:`RELATIVE` of each value's scale."""
    assert sorted(numbers) == sorted(expected)
    for name, values in numbers.items():
        values, wanted = np.asarray(values), np.asarray(expected[name])
        scale = max(1.0, float(np.max(np.abs(wanted), initial=0.0)))
        assert values.shape == wanted.shape, name
        assert np.max(np.abs(values - wanted), initial=0.0) <= RELATIVE * scale, name


def test_every_model_and_method_has_a_record(record):
    assert sorted(f"{variant} {case}" for variant, case in recorded_cases()) == sorted(record)


@pytest.mark.parametrize(("variant", "case"), recorded_cases())
def test_a_seeded_fit_gives_the_recorded_numbers(record, variant, case):
    assert_same_numbers(seeded_numbers(variant, case), record[f"{variant} {case}"])


@pytest.mark.slow
@pytest.mark.parametrize("variant", [variant for variant, case in cases() if case == "nuts"])
def test_a_seeded_nuts_fit_gives_the_same_numbers_twice(variant):
    assert_same_numbers(seeded_numbers(variant, "nuts"), seeded_numbers(variant, "nuts"))


if __name__ == "__main__":
    table = {f"{v} {c}": seeded_numbers(v, c) for v, c in recorded_cases()}
    RECORDED.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(table)} fits in {RECORDED}")
