"""One catalogue (bayesvm.catalogue): every front door takes the same model names and the same
options per method, which are the backends' own, checked before any work.
"""

import inspect

import numpy as np
import pandas as pd
import pytest

import bayesvm
from bayesvm import cli, fit_command, registry
from bayesvm.catalogue import FORMER_NAMES, METHODS, MODELS
from bayesvm.estimator import BayesianRegressor, BayesianSVC
from bayesvm.models import LinearSVM

from conftest import simulate_logistic


def frame(n_samples=40, seed=0) -> pd.DataFrame:
    """Three features, two classes, a real response and five groups."""
    X, y = simulate_logistic(n_samples, 3, seed=seed)
    data = pd.DataFrame(X, columns=["a", "b", "c"])
    data["label"] = y
    data["level"] = X @ [1.0, -0.5, 0.0] + np.random.default_rng(seed).normal(size=n_samples)
    data["ward"] = np.arange(n_samples) % 5
    return data


class Built(Exception):
    """Raised in place of the fit, with the model that would have been fitted."""


def stop(model, *args, **options):
    """Stands in for a fit (or its checks): raises :class:`Built` with the model."""
    raise Built(model)


def test_each_method_declares_exactly_its_backends_options():
    for backend in registry.backends():
        parameters = list(inspect.signature(backend.run).parameters)[1:]
        assert sorted(parameters) == sorted(METHODS[backend.method].options), backend.method
    assert {backend.method for backend in registry.backends()} == set(METHODS)


@pytest.mark.parametrize("name", list(MODELS))
def test_the_estimator_the_formulas_and_the_command_line_take_each_model_name(
    name, tmp_path, monkeypatch
):
    kind, data = MODELS[name], frame()
    response = "label" if kind.classifier else "level"
    groups = {"groups": data["ward"].to_numpy()} if kind.grouped else {}
    term = " + (1|ward)" if kind.grouped else ""
    X = data[["a", "b", "c"]].to_numpy()
    by_formula = bayesvm.from_formula(f"{response} ~ a + b + c{term}", data, model=name)
    assert type(by_formula) is type(kind.build(X, data[response].to_numpy(), **groups))

    monkeypatch.setattr(registry, "check_fit", stop)
    path = tmp_path / "data.csv"
    data.drop(columns=["level" if kind.classifier else "label"]).to_csv(path, index=False)
    argv = ["fit", str(path), "--target", response, "--model", name]
    argv += ["--groups", "ward"] if kind.grouped else ["--features", "a,b,c"]
    with pytest.raises(Built) as built:
        cli.main([*argv, "--out", str(tmp_path / "fit.nc")])
    assert type(built.value.args[0]) is type(by_formula)

    estimator = BayesianSVC(model=name) if kind.classifier else BayesianRegressor()
    monkeypatch.setattr("bayesvm.estimator.fit_model", stop)
    with pytest.raises(Built) as built:
        estimator.fit(X, data[response], **groups)
    assert type(built.value.args[0]) is type(by_formula)


def test_the_estimator_sends_a_regression_to_the_regressor():
    X, y = simulate_logistic(20, 2, seed=1)
    with pytest.raises(ValueError, match="is a regression: use BayesianRegressor"):
        BayesianSVC(model="regression").fit(X, y)


@pytest.mark.parametrize(
    ("former", "now"), [(name, new) for name, (new, _) in FORMER_NAMES.items()]
)
def test_a_former_model_name_warns_naming_the_new_one_at_every_front_door(
    former, now, tmp_path, monkeypatch, capsys
):
    data = frame().drop(columns=["level", "ward"])
    with pytest.warns(FutureWarning, match=f"the model '{former}' is now '{now}'"):
        bayesvm.from_formula("label ~ a + b + c", data, model=former)
    with pytest.warns(FutureWarning, match=f"the model '{former}' is now '{now}'"):
        BayesianSVC(model=former, draws=20).fit(data[["a", "b", "c"]], data["label"])
    path = tmp_path / "data.csv"
    data.to_csv(path, index=False)

    monkeypatch.setattr(registry, "check_fit", stop)
    with pytest.raises(Built):
        cli.main(["fit", str(path), "--target", "label", "--model", former, "--out", "f.nc"])
    assert f"warning: --model: the model '{former}' is now '{now}'" in capsys.readouterr().err


@pytest.mark.parametrize("method", list(METHODS))
def test_the_command_line_offers_every_option_of_each_method_that_takes_a_plain_value(method):
    offered = {
        name
        for name, (option, help_text) in fit_command.METHOD_ARGUMENTS.items()
        if f"{method}" in help_text
    } | set(fit_command.FIT_ARGUMENTS)
    plain = {name for name, option in METHODS[method].options.items() if option.kind != "python"}
    assert plain <= offered
    python_only = {
        name for name, option in METHODS[method].options.items() if option.kind == "python"
    }
    assert python_only <= {"step", "learn_hyperparameters", "sample_kwargs"}


def test_the_command_lines_vb_options_give_bayesvm_fits_numbers(tmp_path, capsys):
    data = frame(60, seed=2).drop(columns=["level", "ward"])
    path, out = tmp_path / "data.csv", tmp_path / "fit.nc"
    data.to_csv(path, index=False)
    options = ["--family", "gaussian", "--covariance", "lrvb", "--starts", "2", "--seed", "4"]
    assert cli.main(["fit", str(path), "--target", "label", *options, "--out", str(out)]) == 0
    by_command = bayesvm.load(out)
    model = LinearSVM.from_frame(data, "label")
    fit = bayesvm.fit(model, "vb", family="gaussian", covariance="lrvb", starts=2, seed=4)
    for name in ("beta", "u", "nu"):
        np.testing.assert_allclose(
            by_command.idata.posterior[name], fit.idata.posterior[name], rtol=1e-10, atol=1e-12
        )
    np.testing.assert_allclose(by_command.lower_bound, fit.lower_bound, rtol=1e-10)


@pytest.mark.parametrize(
    ("method", "options", "message"),
    [
        ("vb", {"accelerate": 1}, "accelerate must be True or False"),
        ("vb", {"family": "full"}, r"family must be one of \('mean-field', 'gaussian'\)"),
        ("vb", {"starts": 0}, "starts must be a positive integer or points"),
        ("gibbs", {"thin": 0}, "thin must be >= 1"),
        ("nuts", {"target_accept": 1.0}, r"target_accept must be in \(0, 1\)"),
        ("nuts", {"sampler": "stan"}, r"sampler must be one of \('pymc', 'nutpie'\)"),
    ],
)
def test_bayesvm_fit_checks_each_option_against_its_declaration_before_any_work(
    method, options, message
):
    model = LinearSVM.from_arrays(*simulate_logistic(20, 2, seed=1), alpha=1.0)
    with pytest.raises(ValueError, match=message):
        bayesvm.fit(model, method, **options)
