"""The pieces of the case studies' reports, on hand-made results."""

import numpy as np
import pandas as pd

from bayesvm.case_studies.reporting import (
    breakdown_note,
    single_class_counts,
    single_class_note,
    unconverged_note,
)

LABELS = {"svm": "Default SVM", "vb": "VB", "gibbs": "MCMC"}


def results(single_class) -> pd.DataFrame:
    """Three splits of three methods; ``single_class`` by method."""
    return pd.DataFrame(
        {
            "split": np.repeat([0, 1, 2], 3),
            "method": ["svm", "vb", "gibbs"] * 3,
            "single_class": [value for split in range(3) for value in single_class(split)],
        }
    )


def test_single_class_counts_and_note():
    # The SVM is constant on every split, Gibbs on one, VB on none.
    frame = results(lambda split: [True, False, split == 1])
    counts = single_class_counts(frame, ["method"])
    assert counts.to_dict() == {"svm": 3, "vb": 0, "gibbs": 1}
    assert single_class_note(frame, LABELS, "splits") == (
        "Default SVM predicted a single class on 3 of 3 splits: its BER of 0.5 there is that "
        "of a constant classifier. MCMC predicted a single class on 1 of 3 splits: its BER of "
        "0.5 there is that of a constant classifier."
    )
    assert single_class_note(results(lambda split: [False] * 3), LABELS, "splits") == ""


def test_rows_of_an_older_run_count_as_not_recorded():
    """Rows kept by resume from a run that did not record single_class (NaN in the CSV)."""
    frame = results(lambda split: [np.nan] * 3 if split == 0 else [True, False, False])
    assert single_class_counts(frame, ["method"]).to_dict() == {"svm": 2, "vb": 0, "gibbs": 0}
    assert single_class_note(frame, LABELS, "splits").startswith(
        "Default SVM predicted a single class on 2 of 2 splits"
    )
    older = frame.drop(columns="single_class")
    assert single_class_counts(older, ["method"]).isna().all()
    assert single_class_note(older, LABELS, "splits") == ""


def test_unconverged_note_names_each_method_once_and_explains_once():
    results = pd.DataFrame(
        {
            "method": ["vb"] * 3 + ["gibbs"] * 3 + ["svm"] * 3,
            "converged": [False, False, True, True, False, True, True, True, True],
        }
    )
    labels = {"svm": "Default SVM", "vb": "VB", "gibbs": "MCMC"}
    note = unconverged_note(results, labels, "data sets")
    assert note.startswith("VB did not pass its checks on 2 of 3 data sets, MCMC on 1 of 3 (")
    assert note.count("samplers:") == 1 and note.endswith("treat their numbers there with care.")
    only_mcmc = unconverged_note(results[results["method"] != "vb"], labels, "data sets")
    assert only_mcmc.startswith("MCMC did not pass its checks on 1 of 3 data sets (")
    assert "treat its numbers" in only_mcmc
    assert unconverged_note(results[results["method"] == "svm"], labels, "data sets") == ""


def test_breakdown_note_counts_fits_whose_warnings_hold_a_breakdown():
    results = pd.DataFrame(
        {
            "method": ["vb", "gibbs", "gibbs", "gibbs"],
            "warnings": ["", "NumericalBreakdownError: the linear predictor ran off", np.nan, ""],
        }
    )
    assert breakdown_note(results, LABELS, "data sets") == (
        "Fits that broke down numerically, with no BER (left out of the means and plots; the "
        "`warnings` column of the CSV gives the error): MCMC on 1 of 3 data sets."
    )
    assert breakdown_note(results[results["method"] == "vb"], LABELS, "data sets") == ""
