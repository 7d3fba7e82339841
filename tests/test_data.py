import hashlib
import re

from bayesvm.data import data_path, load_cardiac, load_heart, load_spam, load_toenail


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
    for name in ["toenail.csv", "heart.csv", "spam.csv", "acath.csv"]:
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
