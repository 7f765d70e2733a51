"""Hostile hierarchy input in the engine: builders that cannot use a column, interval caps and label
precision, decoding of hierarchy files, wrong-shape JSON and the size limits."""

import json

import pandas as pd
import pytest

from anonymizer_app.engine.errors import HierarchyError, InputError
from anonymizer_app.engine.model import builders
from anonymizer_app.engine.model.formats import detect_format, read_hierarchy, read_hierarchy_text
from anonymizer_app.engine.model.hierarchy import (
    check_size,
    decode_hierarchy,
    parse_hierarchy,
)

AGES = pd.Series(["20", "25", "33", "41", "59"])
CITIES = pd.Series(["Rome", "Milan", "Bari"])


def test_builders_say_which_fit_a_text_column():
    info = builders.get_builder("intervals")
    assert info.refusal("city", CITIES) == (
        "column 'city': value 'Rome' is not a number: the numeric intervals builder cannot use this column; "
        "builders that fit: Ordered grouping, Masking, Data-driven grouping for k, Value → *")
    assert info.refusal("age", AGES) is None
    assert builders.get_builder("grouping").refusal("city", CITIES) is None
    with pytest.raises(HierarchyError, match="^column 'city': value 'Rome' is not a number"):
        builders.build("intervals", "city", CITIES)


def test_interval_count_is_capped_with_the_smallest_width_that_fits():
    with pytest.raises(InputError, match=r"^width 1 lays 40 intervals over \[20, 60\), more than the limit of 10; "
                                         r"choose a width of at least 5$"):
        builders.build("intervals", "age", AGES, lower=20, upper=60, width=1, max_intervals=10)
    h = builders.build("intervals", "age", AGES, lower=20, upper=60, width=5, max_intervals=10)
    assert [str(x) for x in h.labels[1]] == ["[20-25)", "[25-30)", "[30-35)", "[40-45)", "[55-60)"]


def test_labels_that_cannot_be_told_apart_are_refused():
    values = pd.Series([str(1e15 + 1), str(1e15 + 50)])
    with pytest.raises(InputError, match=r"^width 0\.001 is too small for the labels' precision: the interval "):
        builders.build("intervals", "big", values, lower=1e15, upper=1e15 + 100, width=0.001)


def test_masking_levels_and_fanouts_are_bounded():
    with pytest.raises(InputError, match="^levels 6 masks more characters than the values of column 'city' have: "
                                         "the longest, 'Milan', has 5; choose at most 5 levels$"):
        builders.build("masking", "city", CITIES, levels=6)
    with pytest.raises(InputError, match="^fanout must be at most 1,000,000 on every level"):
        builders.parse_fanout("2,10000000")


def test_decoding_hierarchy_files():
    text = "Città;*\nBari;*\n"
    for raw in (text.encode("utf-16"), text.encode("utf-16-le"), text.encode("utf-16-be"),
                b"\xef\xbb\xbf" + text.encode(), text.encode("latin-1")):
        assert decode_hierarchy(raw, "h.csv") == text
    for raw in (b"\x89PNG\r\n\x1a\n" + bytes(64), bytes(range(1, 32)) * 20):
        with pytest.raises(HierarchyError, match=r"^h\.csv: binary content, not a text hierarchy file$"):
            decode_hierarchy(raw, "h.csv")


@pytest.mark.parametrize("doc, kind", [([1, 2], "a list of numbers"), (["a", "b"], "a list of strings"),
                                       ([], "an empty list"), ("x", "a string"), (None, "null"),
                                       ([1, "a"], "a list of numbers, strings"), (True, "a true/false")])
def test_json_of_the_wrong_shape_says_what_it_is(doc, kind):
    text = json.dumps(doc)
    assert detect_format(text, "h.json") == "amnesia-json"
    with pytest.raises(HierarchyError, match=rf"^h\.json, line 1: expected an Amnesia JSON object with hierType "
                                             rf"and level1\.\.levelN maps; got {kind}$"):
        read_hierarchy_text(text, "h", "h.json")


def test_a_csv_whose_first_leaf_looks_like_json_stays_csv():
    assert detect_format("{a, b};*\nc;*\n", "h.csv") == "arx"
    assert detect_format("[20-30);*\n[30-40);*\n", "h.csv") == "arx"


def test_size_limits_name_the_level_and_label(tmp_path):
    h = parse_hierarchy("a;" + "x" * 50 + ";*\nb;y;*\n", "h", "h.csv")
    with pytest.raises(HierarchyError, match=r"^h\.csv: a label of 50 characters at level 1 \('x{30}'…\), more than "
                                             r"the limit of 40$"):
        check_size(h, "h.csv", max_label_chars=40)
    with pytest.raises(HierarchyError, match=r"^h\.csv: 3 levels \(the values and 2 generalizations\), more than "
                                             r"the limit of 2$"):
        check_size(h, "h.csv", max_levels=2)
    path = tmp_path / "cr.csv"
    path.write_bytes(b"a;x;*\rb;y;*\r")  # old Mac line ends
    assert sorted(read_hierarchy(path).leaves) == ["a", "b"]
