"""Parsing generalization hierarchies and building the default ones."""

from __future__ import annotations

import pandas as pd
import pytest

from anonymizer_app.engine import (
    HierarchyError,
    Table,
    anonymize,
    default_hierarchy,
    parse_hierarchy,
    read_hierarchy,
)
from tests.reference_data import PEOPLE as DEMO_PEOPLE


def _paths(h):
    """leaf -> tuple of its labels, level 0 first."""
    return {leaf: tuple(row) for leaf, row in zip(h.leaves, h.to_rows())}


# ---- layouts ---------------------------------------------------------------------------------------
def test_semicolon_file():
    h = parse_hierarchy("1;0-4;0-9;*\n2;0-4;0-9;*\n7;5-9;0-9;*\n", "age")
    assert h.height == 3
    assert list(h.leaves) == ["1", "2", "7"]
    assert _paths(h)["7"] == ("7", "5-9", "0-9", "*")
    assert [list(lab) for lab in h.labels] == [["1", "2", "7"], ["0-4", "5-9"], ["0-9"], ["*"]]


def test_comma_file_with_semicolons_inside_values():
    # ',' splits every line in 3; ';' does not split evenly -> comma
    text = "67010,670**,6****\n67012,670**,6****\n12100,121**,1****\n"
    h = parse_hierarchy(text, "zip")
    assert h.height == 3  # two labels on top (6****, 1****) -> root added
    assert _paths(h)["12100"] == ("12100", "121**", "1****", "*")


def test_tab_and_quoted_fields_and_bom():
    h = parse_hierarchy('\ufeffa\t"x, y"\t*\nb\t"x, y"\t*\n', "c")
    assert _paths(h)["a"] == ("a", "x, y", "*")


def test_blank_lines_are_ignored_and_lines_still_counted():
    with pytest.raises(HierarchyError, match=r"h\.csv, line 4: 2 values where the first line has 3"):
        parse_hierarchy("a;A;*\n\nb;B;*\nc;*\n", "h", source="h.csv", delimiter=";")


def test_ragged_row_after_the_sniffed_lines_names_file_and_line(tmp_path):
    p = tmp_path / "ages.csv"
    p.write_text("".join(f"{i};A;*\n" for i in range(60)) + "x;A\n", encoding="utf-8")
    with pytest.raises(HierarchyError, match=r"^ages\.csv, line 61: 2 values where the first line has 3"):
        read_hierarchy(p)


def test_ragged_row_names_file_and_line(tmp_path):
    # ';' splits these lines unevenly but is the only delimiter present: the ragged line is reported,
    # not read as a one-column file.
    p = tmp_path / "ages.csv"
    p.write_text("1;0-4;*\n2;0-4;*\n3;0-4\n", encoding="utf-8")
    with pytest.raises(HierarchyError) as info:
        read_hierarchy(p)
    assert "ages.csv, line 3" in str(info.value)
    assert "2 values where the first line has 3" in str(info.value)


def test_empty_value_names_line():
    with pytest.raises(HierarchyError, match=r"line 2: an empty value"):
        parse_hierarchy("a;A;*\nb;;*\n", "h")


def test_empty_and_binary_files():
    with pytest.raises(HierarchyError, match="empty"):
        parse_hierarchy("\n\n", "h")
    with pytest.raises(HierarchyError, match="binary"):
        parse_hierarchy("a;\x00;b\n", "h")


def test_unknown_conflict_policy():
    with pytest.raises(HierarchyError, match="unknown conflict resolution 'guess'"):
        parse_hierarchy("a;*\n", "h", on_conflict="guess")


def test_identical_duplicate_rows_accepted():
    h = parse_hierarchy("a;A;*\nb;A;*\na;A;*\na;A;*\n", "h")
    assert list(h.leaves) == ["a", "b"]
    assert h.conflicts == []
    assert _paths(h) == {"a": ("a", "A", "*"), "b": ("b", "A", "*")}


# ---- contradictory rows ---------------------------------------------------------------------------
CONTRADICTORY = """\
Sala;Avellino;Campania;Italy
Roma;Roma;Lazio;Italy
Sala;Forli;Emilia-Romagna;Italy
Vico;Chieti;Abruzzo;Italy
Sala;Avellino;Campania;Italy
Vico;Teramo;Abruzzo;Italy
"""


def test_contradictory_rows_are_an_error_naming_value_and_lines():
    with pytest.raises(HierarchyError) as info:
        parse_hierarchy(CONTRADICTORY, "city", source="cities.csv")
    msg = str(info.value)
    assert msg.startswith("cities.csv: 2 value(s) have contradictory generalizations")
    assert "'Sala' (lines 1, 3: Avellino;Campania;Italy vs Forli;Emilia-Romagna;Italy)" in msg
    assert "'Vico' (lines 4, 6: Chieti;Abruzzo;Italy vs Teramo;Abruzzo;Italy)" in msg
    assert [(c.value, c.lines) for c in info.value.conflicts] == [("Sala", (1, 3)), ("Vico", (4, 6))]


def test_lift_resolution():
    h = parse_hierarchy(CONTRADICTORY, "city", on_conflict="lift")
    p = _paths(h)
    assert p["Sala"] == ("Sala", "Italy", "Italy", "Italy")  # regions differ: only the country agrees
    assert p["Vico"] == ("Vico", "Abruzzo", "Abruzzo", "Italy")  # both in Abruzzo
    assert p["Roma"] == ("Roma", "Roma", "Lazio", "Italy")
    assert h.height == 3  # 'Italy' is the single top label: no root added
    assert h.notes == ["2 ambiguous value(s) lifted to the lowest level where their paths agree"]
    assert [c.value for c in h.conflicts] == ["Sala", "Vico"]


def test_lift_without_any_agreement_goes_to_the_added_root():
    h = parse_hierarchy("a;A;X\na;B;Y\nb;B;Y\n", "h", on_conflict="lift")
    assert h.height == 3
    assert _paths(h) == {"a": ("a", "*", "*", "*"), "b": ("b", "B", "Y", "*")}


def test_first_resolution():
    h = parse_hierarchy(CONTRADICTORY, "city", on_conflict="first")
    p = _paths(h)
    assert p["Sala"] == ("Sala", "Avellino", "Campania", "Italy")
    assert p["Vico"] == ("Vico", "Chieti", "Abruzzo", "Italy")
    assert h.notes == ["2 ambiguous value(s) given their first path"]


# ---- root ------------------------------------------------------------------------------------------
def test_root_added_when_top_has_several_labels():
    h = parse_hierarchy("1;0-50\n60;50-100\n", "age")
    assert h.height == 2
    assert _paths(h) == {"1": ("1", "0-50", "*"), "60": ("60", "50-100", "*")}
    assert h.notes == ["root level '*' added above the file's top level"]


def test_no_root_added_when_top_is_single():
    h = parse_hierarchy("1;low;ANY\n60;high;ANY\n", "age")
    assert h.height == 2
    assert h.notes == []
    assert list(h.labels[-1]) == ["ANY"]


def test_single_column_file_gets_a_root():
    h = parse_hierarchy("a\nb\n", "h")
    assert h.height == 1
    assert _paths(h) == {"a": ("a", "*"), "b": ("b", "*")}


# ---- data against the hierarchy ----------------------------------------------------------------------
def test_values_missing_from_the_hierarchy():
    frame = pd.DataFrame({"city": ["Roma", "Atlantis", "Roma", "El Dorado", "Atlantis"], "x": list("abcde")})
    h = parse_hierarchy("Roma;Lazio;*\nMilano;Lombardia;*\n", "city", source="cities.csv")
    assert h.missing_values(frame["city"]) == ["Atlantis", "El Dorado"]
    table = Table(frame, {"city": "qi"})
    with pytest.raises(HierarchyError) as info:
        anonymize(table, {"city": h}, k=2)
    msg = str(info.value)
    assert msg == ("column 'city': 2 value(s) not covered by the hierarchy cities.csv: 'Atlantis', 'El Dorado'")


def test_many_missing_values_are_abbreviated():
    values = [f"v{i}" for i in range(12)]
    h = parse_hierarchy("other;*\n", "c")
    with pytest.raises(HierarchyError, match=r"12 value\(s\) not covered .*'v7' and 4 more$"):
        h.encode(pd.Series(values), "c")


# ---- default hierarchies -----------------------------------------------------------------------------
def test_default_integer_intervals_with_negatives():
    # span 25-(-7) = 32 -> 32/10 = 3.2 -> width 5; origin floor(-7/5)*5 = -10
    # level 1 (width 5):  -7 -> [-10,-5), 3 -> [0,5), 12 -> [10,15), 25 -> [25,30)
    # level 2 (width 10): [-10,0), [0,10), [10,20), [20,30)
    # level 3 (width 20): [-10,10), [-10,10), [10,30), [10,30)
    # width 40 puts all in [-10,30): stop, root '*'
    h = default_hierarchy("n", pd.Series(["-7", "3", "12", "25", "3"]), numeric=True)
    assert h.kind == "intervals"
    assert _paths(h) == {
        "-7": ("-7", "[-10, -5)", "[-10, 0)", "[-10, 10)", "*"),
        "3": ("3", "[0-5)", "[0-10)", "[-10, 10)", "*"),
        "12": ("12", "[10-15)", "[10-20)", "[10-30)", "*"),
        "25": ("25", "[25-30)", "[20-30)", "[10-30)", "*"),
    }


def test_default_decimal_intervals():
    # span 3.25 -> 0.325 -> width 0.5; origin 0.5; upper past the maximum: 4 (the intervals builder's
    # defaults, so the default equals the builder's first preview: the last node stops at upper)
    # width 0.5: 0.5 [0.5,1) 1.25 [1,1.5) 2.0 [2,2.5) 3.75 [3.5,4)
    # width 1:   [0.5,1.5) [0.5,1.5) [1.5,2.5) [3.5,4)
    # width 2:   [0.5,2.5) [0.5,2.5) [0.5,2.5) [2.5,4); width 4: one interval -> root
    h = default_hierarchy("d", pd.Series(["0.5", "1.25", "2.0", "3.75"]), numeric=True)
    assert _paths(h) == {
        "0.5": ("0.5", "[0.5-1)", "[0.5-1.5)", "[0.5-2.5)", "*"),
        "1.25": ("1.25", "[1-1.5)", "[0.5-1.5)", "[0.5-2.5)", "*"),
        "2.0": ("2.0", "[2-2.5)", "[1.5-2.5)", "[0.5-2.5)", "*"),
        "3.75": ("3.75", "[3.5-4)", "[3.5-4)", "[2.5-4)", "*"),
    }


def test_default_decimal_intervals_contain_their_values():
    # 0.1, 0.2, 0.7: span 0.6 -> width 0.1, origin 0.1. Every value must lie in its own interval
    # [a, b): 0.7 belongs in [0.7-0.8), never in [0.6-0.7).
    # (0.7 - 0.1) / 0.1 = 5.999999999999999 in floating point: 0.7 must still land in [0.7-0.8).
    h = default_hierarchy("d", pd.Series(["0.1", "0.2", "0.7"]), numeric=True)
    for leaf, path in _paths(h).items():
        for label in path[1:-1]:
            lo, hi = (float(x) for x in label[1:-1].split("-"))
            assert lo <= float(leaf) < hi, f"{leaf} placed in {label}"
    assert _paths(h)["0.7"][1] == "[0.7-0.8)"


def test_default_integer_interval_contains_value_on_boundaries():
    # 0, 10, 20, ..., 100: span 100 -> width 10, origin 0: each value opens its own interval
    values = [str(v) for v in range(0, 101, 10)]
    h = default_hierarchy("n", pd.Series(values), numeric=True)
    assert [_paths(h)[v][1] for v in values] == [f"[{v}-{int(v) + 10})" for v in values]


def test_default_string_hierarchy():
    h = default_hierarchy("s", pd.Series(["b", "a", "b", "None"]), numeric=False)
    assert h.kind == "flat"
    assert h.height == 1
    assert _paths(h) == {"b": ("b", "*"), "a": ("a", "*"), "None": ("None", "*")}


@pytest.mark.parametrize("numeric", [True, False])
def test_default_one_value_column(numeric):
    h = default_hierarchy("one", pd.Series(["5", "5", "5"]), numeric=numeric)
    assert h.height == 1
    assert _paths(h) == {"5": ("5", "*")}


def test_non_numeric_value_in_numeric_default():
    with pytest.raises(HierarchyError, match="column 'n': value 'x' is not a number"):
        default_hierarchy("n", pd.Series(["1", "x"]), numeric=True)


def test_table_builds_defaults_from_types():
    frame = pd.DataFrame({"age": ["30", "41", "52"], "town": ["None", "NA", "Roma"]})
    hs = Table(frame, {"age": "qi", "town": "qi"}).hierarchies()
    assert hs["age"].kind == "intervals"
    assert hs["town"].kind == "flat"
    # 'NA' is an NA marker: the missing value (''), a leaf of its own under the root
    assert set(hs["town"].leaves) == {"None", "", "Roma"}
    kept = Table(frame, {"age": "qi", "town": "qi"}, na_values=("",)).hierarchies()
    assert set(kept["town"].leaves) == {"None", "NA", "Roma"}


# ---- a town called None ----------------------------------------------------------------------------
def test_town_named_none_survives():
    h = parse_hierarchy("None;Torino;Piemonte\nNA;Napoli;Campania\nnull;Torino;Piemonte\n", "town")
    assert _paths(h)["None"] == ("None", "Torino", "Piemonte", "*")
    frame = pd.DataFrame({"town": ["None", "None", "NA", "NA", "null"], "d": list("abcde")})
    # with only blanks as missing (na_values), NA (Napoli) and null are towns like None
    table = Table(frame, {"town": "qi"}, na_values=("",))
    result = anonymize(table, {"town": h}, k=2, suppression_limit=0.2)
    assert result.transformation == {"town": 0}
    assert result.output["town"].tolist() == ["None", "None", "NA", "NA", "*"]
    # with the default NA markers, NA and null are the missing value: one class of three
    result = anonymize(Table(frame, {"town": "qi"}), {"town": h}, k=2)
    assert result.transformation == {"town": 0}
    assert result.output["town"].tolist() == ["None", "None", "", "", ""]


def test_none_in_the_real_city_file():
    # the copy the product ships for its demo: always present, so the test never skips
    h = read_hierarchy(DEMO_PEOPLE / "city_birth_generalization.csv", on_conflict="first")
    assert [h.ancestor("None", lv) for lv in range(4)] == ["None", "Torino", "Piemonte", "Italy"]


# ---- labels above the leaves with two parents (the file is not a tree above the leaves) ------------
INNER = "a;A;X;T\nb;B;X;T\nc;A;Y;T\nd;C;Y;T\n"  # 'A' (level 1) under X on line 1, under Y on line 3


def test_inner_label_with_two_parents_is_refused_naming_label_level_and_lines():
    with pytest.raises(HierarchyError) as info:
        parse_hierarchy(INNER, "h", source="h.csv")
    msg = str(info.value)
    assert msg.startswith("h.csv: 1 label(s) above the leaves have more than one parent, so the file is not a "
                          "tree: 'A' at level 1 has parents 'X' (line 1), 'Y' (line 3).")
    assert "'lift'" in msg and "'first'" in msg
    (c,) = info.value.conflicts
    assert (c.value, c.level, c.lines, c.paths) == ("A", 1, (1, 3), (("X", "T"), ("Y", "T")))


def test_inner_conflict_on_a_higher_level_and_with_an_ambiguous_value():
    text = "a;A;P;T\nb;B;Q;T\nc;C;P;U\nb;D;Q;T\n"  # 'P' (level 2) under T and U; value 'b' under B and D
    with pytest.raises(HierarchyError) as info:
        parse_hierarchy(text, "h")
    msg = str(info.value)
    assert "1 value(s) have contradictory generalizations and 1 label(s) above the leaves have more than one " \
           "parent" in msg
    assert "'b' (lines 2, 4: B;Q;T vs D;Q;T)" in msg
    assert "'P' at level 2 has parents 'T' (line 1), 'U' (line 3)" in msg
    h = parse_hierarchy(text, "h", on_conflict="lift")
    assert _paths(h) == {"a": ("a", "A", "P", "*", "*"), "b": ("b", "Q", "Q", "T", "*"),
                         "c": ("c", "C", "P", "*", "*")}
    h = parse_hierarchy(text, "h", on_conflict="first")
    assert _paths(h) == {"a": ("a", "A", "P", "T"), "b": ("b", "B", "Q", "T"), "c": ("c", "C", "P", "T")}


def test_inner_conflict_lift_keeps_the_label_and_lifts_its_ancestors():
    h = parse_hierarchy(INNER, "h", on_conflict="lift")
    # A's paths agree only on T: A stays on level 1, T stands for it on level 2
    assert _paths(h) == {"a": ("a", "A", "T", "T"), "b": ("b", "B", "X", "T"), "c": ("c", "A", "T", "T"),
                         "d": ("d", "C", "Y", "T")}
    assert h.notes == ["1 label(s) above the leaves with several parents kept, with their ancestors lifted to "
                       "the lowest level where their paths agree: 'A' (level 1)"]
    assert [(c.value, c.level) for c in h.conflicts] == [("A", 1)]
    # T on level 2 is the root's node: it counts all 4 leaves (NCP)
    assert dict(zip(h.labels[2], h.leaf_counts(2))) == {"T": 4, "X": 1, "Y": 1}


def test_inner_conflict_first_keeps_the_first_path():
    h = parse_hierarchy(INNER, "h", on_conflict="first")
    assert _paths(h) == {"a": ("a", "A", "X", "T"), "b": ("b", "B", "X", "T"), "c": ("c", "A", "X", "T"),
                         "d": ("d", "C", "Y", "T")}
    assert h.notes == ["1 label(s) above the leaves with several parents given their first parent (the path of "
                       "their first line): 'A' (level 1)"]


def test_the_people_age_file_is_not_a_tree():
    path = DEMO_PEOPLE / "age_generalization.csv"
    with pytest.raises(HierarchyError, match=r"'0-20' at level 2 has parents '0-50' \(line 1\), '50-100' \(line 6\)"):
        read_hierarchy(path)
    lift = read_hierarchy(path, on_conflict="lift")
    assert [lift.ancestor("7", lv) for lv in range(5)] == ["7", "0-10", "0-20", "*", "*"]
    first = read_hierarchy(path, on_conflict="first")
    assert [first.ancestor("7", lv) for lv in range(5)] == ["7", "0-10", "0-20", "0-50", "*"]


def test_amnesia_text_inner_conflict_names_the_parent_links():
    from anonymizer_app.engine.model.formats import read_hierarchy_text

    text = "distinct\nname c\ntype string\nheight 3\n\nA has a b\nB has c\n\nX has A B\nY has A\n\nT has X Y\n"
    with pytest.raises(HierarchyError, match=r"^c\.txt: 1 label\(s\) above the leaves have more than one parent, "
                                             r"so the file is not a tree: 'A' at level 1 has parents 'X' \(line 9\), "
                                             r"'Y' \(line 10\)\."):
        read_hierarchy_text(text, "c", "c.txt")
    assert _paths(read_hierarchy_text(text, "c", "c.txt", on_conflict="lift"))["a"] == ("a", "A", "T", "T")
    assert _paths(read_hierarchy_text(text, "c", "c.txt", on_conflict="first"))["a"] == ("a", "A", "X", "T")


def test_the_constructor_refuses_a_non_tree():
    import numpy as np

    from anonymizer_app.engine import Hierarchy

    leaves = np.array(["a", "b", "c"], dtype=object)
    labels = [leaves, np.array(["A", "B"], dtype=object), np.array(["X", "Y"], dtype=object),
              np.array(["*"], dtype=object)]
    maps = [np.arange(3), np.array([0, 0, 1]), np.array([0, 1, 1]), np.zeros(3, dtype=np.int64)]
    with pytest.raises(HierarchyError, match=r"is not a tree: the label 'A' at level 1 has two parents, 'X' and "
                                             r"'Y' \(leaves 'a' and 'b'\)"):
        Hierarchy("h", leaves, labels, maps)
    with pytest.raises(HierarchyError, match="a label occurs twice on level 1"):
        Hierarchy("h", leaves, [leaves, np.array(["A", "A"], dtype=object), np.array(["*"], dtype=object)],
                  [np.arange(3), np.array([0, 0, 1]), np.zeros(3, dtype=np.int64)])
    maps[2] = np.array([0, 0, 1])  # a tree
    assert Hierarchy("h", leaves, labels, maps).height == 3
