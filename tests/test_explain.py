"""services.explain: each figure's sentence and cue at its thresholds (docs/definitions.md, "Reading the
figures")."""

import pytest

from anonymizer_app.services import explain

CTX = {"n": 1000, "kept": 990, "k": 5, "q": 4, "sensitive": "diagnosis"}


@pytest.mark.parametrize("key, value, cue", [
    ("ncp", 0.2, "good"), ("ncp", 0.3, "fair"), ("ncp", 0.5, "fair"), ("ncp", 0.51, "poor"),
    ("prosecutor_risk_highest", 0.09, "good"), ("prosecutor_risk_highest", 0.2, "fair"),
    ("prosecutor_risk_highest", 0.25, "poor"),
    ("suppressed", 10, "good"), ("suppressed", 50, "fair"), ("suppressed", 51, "poor"),
    ("records_at_risk", 0.0, "good"), ("records_at_risk", 0.01, "fair"),
    ("sample_uniques", 0, "good"), ("sample_uniques", 1, "poor"),
    ("homogeneous_classes", 0, "good"), ("homogeneous_classes", 3, "poor"),
    ("min_class_size", 5, "good"), ("min_class_size", 4, "poor"),
    ("mean_class_size", 10, "good"), ("mean_class_size", 50, "fair"), ("mean_class_size", 51, "poor"),
    ("equivalence_classes", 100, None), ("non_uniform_entropy", 123.0, None),
])
def test_cues_at_their_thresholds(key, value, cue):
    assert explain.reading(key, value, CTX).cue == cue


def test_sentences_speak_of_this_table():
    assert explain.reading("ncp", 0.3, CTX).text.startswith(
        "On average a quasi-identifier cell kept 70% of its detail and lost 30%")
    assert "1 in 4" in explain.reading("prosecutor_risk_highest", 0.25, CTX).text
    assert explain.reading("suppressed", 10, CTX).text == "10 of 1,000 records (1%) were suppressed."
    # what became of them, as the run's publishing option says
    assert explain.reading("suppressed", 10, {**CTX, "suppressed_rows": "remove"}).text == \
        "10 of 1,000 records (1%) were suppressed: removed from the release (not in the download)."
    assert explain.reading("suppressed", 10, {**CTX, "suppressed_rows": "keep"}).text == \
        "10 of 1,000 records (1%) were suppressed: published with every quasi-identifier replaced by '*'."
    assert "same value of diagnosis" in explain.reading("homogeneous_classes", 2, CTX).text
    assert "(0.031 bits per quasi-identifier cell)" in explain.reading("non_uniform_entropy", 124.0, CTX).text
    assert explain.reading("min_class_size", 5, CTX).text.startswith(
        "Every published record shares its quasi-identifiers with at least 4 others")
    assert explain.reading("min_class_size", 2, CTX).text == \
        "Every published record shares its quasi-identifiers with at least 1 other (k asked: 5)."


def test_no_reading_without_a_value_or_a_reader():
    assert explain.reading("ncp", None, CTX) is None
    assert explain.reading("unknown", 1, CTX) is None
    assert explain.reading("ncp", [0.1], CTX) is None


def test_the_context_of_a_report():
    ctx = explain.context({"input_records": 100, "suppressed": 4, "quasi_identifiers": ["a", "b"],
                           "sensitive": "s"}, 3)
    assert ctx == {"n": 100, "kept": 96, "k": 3, "q": 2, "sensitive": "s", "suppressed_rows": None}


def test_one_is_singular_everywhere():
    """Issue 29: "1 records", "1 others" read wrong; every count agrees with its noun."""
    one = {
        "suppressed": "1 of 1,000 records (0.1%) was suppressed.",
        "sample_uniques": "1 record is the only one with their quasi-identifier values.",
        "homogeneous_records": "1 record (0.101%) is in such groups.",
    }
    for key, text in one.items():
        assert explain.reading(key, 1, CTX).text == text, key
    assert explain.reading("sample_uniques", 3, CTX).text.startswith("3 records are each the only one")
    assert explain.reading("homogeneous_classes", 1, CTX).text.startswith("1 group in which everybody")
    assert explain.reading("equivalence_classes", 1, {**CTX, "kept": 1}).text.startswith(
        "The published records fall into 1 group that shares every quasi-identifier value (about 1 record per group)")
    assert explain.reading("min_class_size", 2, CTX).text.startswith(
        "Every published record shares its quasi-identifiers with at least 1 other (k asked")
    assert explain.reading("mean_class_size", 1, {**CTX, "k": 1}).text.startswith("A group holds 1 record on average")
    assert explain.reading("discernibility", 1000, CTX).text.startswith(
        "A record is on average indistinguishable from 1 record (1 = every record distinct")
    assert (explain.count(1, "record"), explain.count(2, "record"), explain.count(1.5, "record"),
            explain.count(1204, "group")) == ("1 record", "2 records", "1.5 records", "1,204 groups")


def test_discernibility_says_it_averages_over_records():
    # issue 29, item 8: "indistinguishable from 479 records" beside "about 16.1 per group". Two groups of 1 and 9
    # records: C_DM = 1 x 1 + 9 x 9 = 82, 8.2 per record, while the groups hold 10 / 2 = 5 records on average
    ctx = {**CTX, "n": 10, "kept": 10}
    assert explain.reading("equivalence_classes", 2, ctx).text.startswith(
        "The published records fall into 2 groups that share every quasi-identifier value (about 5 records per group)")
    text = explain.reading("discernibility", 1 * 1 + 9 * 9, ctx).text
    assert text.startswith("A record is on average indistinguishable from 8.2 records (1 = every record distinct, "
                           "10 = one single group")
    assert "An average over records, not over groups: a group of s records counts s times" in text
