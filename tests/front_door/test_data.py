import hashlib
import re

import numpy as np
import pytest

from bayesvm.data import (
    BENCHMARKS,
    data_path,
    load_benchmark,
    load_cardiac,
    load_heart,
    load_spam,
    load_toenail,
)


def _provenance_md5(name: str) -> str:
    text = data_path("PROVENANCE.md").read_text()
    match = re.search(rf"^\| {re.escape(name)} \|.*\| ([0-9a-f]{{32}}) \|$", text, re.MULTILINE)
    assert match, f"no row for {name} in PROVENANCE.md"
    return match.group(1)


def test_toenail_matches_its_provenance():
    frame = load_toenail()
    assert frame.shape == (1908, 5)
    assert list(frame.columns) == ["patientID", "outcome", "treatment", "time", "visit"]
    assert frame["patientID"].nunique() == 294
    assert (frame["outcome"] == "moderate or severe").sum() == 408
    assert set(frame["outcome"]) == {"none or mild", "moderate or severe"}
    assert set(frame["treatment"]) == {"itraconazole", "terbinafine"}
    assert frame.groupby("treatment")["patientID"].nunique().to_dict() == {
        "itraconazole": 146,
        "terbinafine": 148,
    }
    assert frame["visit"].between(1, 7).all() and frame["time"].min() == 0.0


def test_bundled_files_have_the_md5_of_their_provenance():
    benchmarks = [f"{name}{suffix}" for name in BENCHMARKS for suffix in (".csv", "_splits.json")]
    for name in ["toenail.csv", "heart.csv", "spam.csv", "acath.csv", *benchmarks]:
        digest = hashlib.md5(data_path(name).read_bytes()).hexdigest()
        assert digest == _provenance_md5(name), name


def test_heart_shape():
    assert load_heart().shape == (270, 14)


def test_spam_matches_its_provenance():
    frame = load_spam()
    assert frame.shape == (4601, 58)
    assert list(frame.columns[:3]) == ["make", "address", "all"]
    assert list(frame.columns[-4:]) == ["capitalAve", "capitalLong", "capitalTotal", "type"]
    assert frame["type"].value_counts().to_dict() == {"nonspam": 2788, "spam": 1813}
    assert (frame["type"].iloc[:1813] == "spam").all()
    assert not frame.isna().any().any()


def test_cardiac_matches_its_provenance():
    frame = load_cardiac()
    assert frame.shape == (3504, 6)
    assert list(frame.columns) == ["sex", "age", "cad.dur", "choleste", "sigdz", "tvdlm"]
    assert frame.isna().sum().to_dict() == {
        "sex": 0,
        "age": 0,
        "cad.dur": 0,
        "choleste": 1246,
        "sigdz": 0,
        "tvdlm": 3,
    }
    assert frame["sigdz"].value_counts().to_dict() == {1: 2334, 0: 1170}
    assert frame["tvdlm"].value_counts().to_dict() == {1: 1129, 0: 2372}
    assert frame["sex"].value_counts().to_dict() == {0: 2405, 1: 1099}
    assert (frame["cad.dur"] == 0).sum() == 123 and frame["cad.dur"].min() == 0
    assert frame.duplicated().sum() == 132


# Zhang et al. (2010) Table 1 (n, m, p), the benchmark's published sizes, and the
# provenance's class counts and realisations.
BENCHMARK_FACTS = {
    "ringnorm": (400, 7000, 20, 3664, 10),
    "twonorm": (400, 7000, 20, 3703, 1),
    "waveform": (400, 4600, 21, 1647, 10),
    "heart": (170, 100, 13, 120, 10),
    "breast_cancer": (200, 77, 9, 81, 10),
    "banana": (400, 4900, 2, 2376, 10),
}


@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_matches_table_1_and_its_provenance(name):
    n_train, n_test, n_features, n_positive, n_splits = BENCHMARK_FACTS[name]
    X, y, splits = load_benchmark(name)
    assert X.shape == (n_train + n_test, n_features) and X.dtype == float
    assert set(np.unique(y)) == {-1, 1} and (y == 1).sum() == n_positive
    assert len(splits) == n_splits
    for train, test in splits:
        assert (train.size, test.size) == (n_train, n_test)
        # Rätsch's convention: the test part is every row outside the training part.
        assert np.array_equal(np.sort(np.concatenate([train, test])), np.arange(y.size))
    # Realisation 1's training rows come first in the file.
    assert np.array_equal(splits[0][0], np.arange(n_train))


def test_benchmark_splits_differ_between_realisations():
    _, _, splits = load_benchmark("ringnorm")
    assert len({tuple(train) for train, _ in splits}) == len(splits)


def test_unknown_benchmark_is_refused():
    with pytest.raises(ValueError, match="ringnorm"):
        load_benchmark("splice")


def test_heart_benchmark_is_the_bundled_heart_table():
    X, y, _ = load_benchmark("heart")
    frame = load_heart()
    assert np.array_equal(X, frame.drop(columns="y").to_numpy())
    assert np.array_equal(y, frame["y"].to_numpy())
