"""HierarchyTree: conversion to and from Hierarchy, JSON dicts, checks and refused edits."""

from __future__ import annotations

import pytest

from anonymizer_app.engine import HierarchyError, parse_hierarchy, read_hierarchy
from anonymizer_app.engine.model.tree import HierarchyTree, path_from_id
from tests.reference_data import PEOPLE

TEXT = "1;0-4;0-9;*\n2;0-4;0-9;*\n7;5-9;0-9;*\n12;10-14;10-19;*\n"


def _tree() -> HierarchyTree:
    return HierarchyTree.from_hierarchy(parse_hierarchy(TEXT, "age"))


def _paths(h):
    return sorted(tuple(r) for r in h.to_rows())


def test_from_hierarchy_exact_nesting():
    t = _tree()
    assert t.to_dict() == {
        "label": "*", "id": "[]", "leaves": 4, "has_children": True, "children": [
            {"label": "0-9", "id": '["0-9"]', "leaves": 3, "has_children": True, "children": [
                {"label": "0-4", "id": '["0-9", "0-4"]', "leaves": 2, "has_children": True, "children": [
                    {"label": "1", "id": '["0-9", "0-4", "1"]', "leaves": 1, "has_children": False, "children": []},
                    {"label": "2", "id": '["0-9", "0-4", "2"]', "leaves": 1, "has_children": False, "children": []},
                ]},
                {"label": "5-9", "id": '["0-9", "5-9"]', "leaves": 1, "has_children": True, "children": [
                    {"label": "7", "id": '["0-9", "5-9", "7"]', "leaves": 1, "has_children": False, "children": []},
                ]},
            ]},
            {"label": "10-19", "id": '["10-19"]', "leaves": 1, "has_children": True, "children": [
                {"label": "10-14", "id": '["10-19", "10-14"]', "leaves": 1, "has_children": True, "children": [
                    {"label": "12", "id": '["10-19", "10-14", "12"]', "leaves": 1, "has_children": False,
                     "children": []},
                ]},
            ]},
        ]}
    assert t.leaves() == ["1", "2", "7", "12"]
    assert t.depth_range() == (3, 3)
    assert path_from_id('["0-9", "0-4"]') == ["0-9", "0-4"]


def test_lazy_dict_and_round_trip():
    t = _tree()
    shallow = t.to_dict(max_depth=1)
    assert [c["label"] for c in shallow["children"]] == ["0-9", "10-19"]
    assert all(c["children"] == [] and c["has_children"] for c in shallow["children"])
    assert _paths(t.to_hierarchy()) == _paths(parse_hierarchy(TEXT, "age"))
    again = HierarchyTree.from_dict(t.to_dict(), "age")
    assert _paths(again.to_hierarchy()) == _paths(parse_hierarchy(TEXT, "age"))


def test_label_under_two_parents_is_flagged_and_not_saved():
    # a file with such a label is refused (test_hierarchy.py); an edited tree can still hold one
    t = HierarchyTree.from_dict({"label": "*", "children": [
        {"label": "p", "children": [{"label": "x", "children": [{"label": "a"}]}]},
        {"label": "q", "children": [{"label": "x", "children": [{"label": "b"}]}]}]}, "c")
    assert t.find(["p", "x"]).children[0].label == "a"
    assert t.find(["q", "x"]).children[0].label == "b"
    assert t.checks()["duplicate_labels"] == {1: ["x"]}
    with pytest.raises(HierarchyError, match=r"the label 'x' names two nodes of level 1, one under 'p' and one "
                                             r"under 'q'"):
        t.to_hierarchy()


def test_people_city_file_round_trips_through_the_tree():
    h = read_hierarchy(PEOPLE / "city_birth_generalization.csv", on_conflict="lift")
    t = HierarchyTree.from_hierarchy(h)
    assert len(t.leaves()) == len(h.leaves)
    assert _paths(t.to_hierarchy()) == _paths(h)


def test_unequal_depth_refused_then_padded():
    t = _tree()
    t.add_child(["10-19"], "15")
    with pytest.raises(HierarchyError, match=r"leaf '15' .* is at depth 2 where the deepest leaves are at depth 3"):
        t.to_hierarchy()
    rows = {r[0]: r for r in t.to_hierarchy(pad=True).to_rows()}
    assert rows["15"] == ["15", "15", "10-19", "*"]
    c = t.checks(["1", "2", "99"])
    assert c["uncovered"] == ["99"] and c["unequal_depth"] is True and c["empty_nodes"] == [["10-19", "15"]]


def test_checks_empty_node():
    t = _tree()
    t.delete(["10-19", "10-14", "12"], children="delete")
    assert t.checks()["empty_nodes"] == [["10-19", "10-14"]]


def test_edits():
    t = _tree()
    t.rename(["0-9", "0-4"], "0 to 4")
    t.move(["0-9", "5-9"], ["10-19"])
    t.delete(["0-9"], children="move")
    assert [c.label for c in t.root.children] == ["0 to 4", "10-19"]
    assert [c.label for c in t.find(["10-19"]).children] == ["10-14", "5-9"]


@pytest.mark.parametrize("op, message", [
    (lambda t: t.delete([]), "cannot delete the root"),
    (lambda t: t.move([], ["0-9"]), "cannot move the root"),
    (lambda t: t.move(["0-9"], ["0-9", "0-4"]), "cannot move '0-9' under its own descendant '0-4'"),
    (lambda t: t.move(["0-9"], ["0-9"]), "cannot move '0-9' onto itself"),
    (lambda t: t.move(["0-9", "0-4"], []), None),
    (lambda t: t.rename(["0-9"], "10-19"), "cannot rename '0-9' to '10-19': '*' already has a child '10-19'"),
    (lambda t: t.add_child(["0-9"], "0-4"), "cannot add '0-4': '0-9' already has a child '0-4'"),
    (lambda t: t.add_child(["0-9"], "  "), "empty label under '0-9': every node needs a label"),
    (lambda t: t.find(["0-9", "nope"]), "no node 'nope' under '0-9'"),
    (lambda t: t.delete(["0-9"], children="keep"), "children must be one of move, delete, got 'keep'"),
])
def test_refused_edits(op, message):
    t = _tree()
    if message is None:  # moving to the root works; a second node of that label then is refused
        op(t)
        t.add_child(["10-19"], "0-4")
        with pytest.raises(HierarchyError) as exc:
            t.move(["10-19", "0-4"], [])
        assert str(exc.value) == "cannot move '0-4': '*' already has a child '0-4'"
        return
    with pytest.raises(HierarchyError) as exc:
        op(t)
    assert str(exc.value) == message


def test_delete_move_children_clash():
    t = HierarchyTree.from_dict({"label": "*", "children": [{"label": "a", "children": [{"label": "b"}]},
                                                             {"label": "b"}]}, "x")
    with pytest.raises(HierarchyError) as exc:
        t.delete(["a"], children="move")
    assert str(exc.value) == "cannot move the children of 'a' up: '*' already has a child 'b'"


@pytest.mark.parametrize("d, message", [
    ({"label": "*", "children": [{"label": "a"}, {"label": "a"}]}, "duplicate label 'a' under '*'"),
    ({"label": "*", "children": [{"label": "a", "children": [{"label": ""}]}]},
     "empty label under 'a': every node needs a label"),
])
def test_from_dict_validates(d, message):
    with pytest.raises(HierarchyError) as exc:
        HierarchyTree.from_dict(d, "x")
    assert str(exc.value) == message


def test_missing_cells_are_never_uncovered():
    """Blanks and NA markers get their own leaf at run time ((null) up to the root): the editor does not list
    them as values the tree misses (definitions.md, "Missing values")."""
    tree = HierarchyTree.from_hierarchy(parse_hierarchy("a;A;*\nb;A;*\n", "h"))
    assert tree.checks(["a", "", "NA", "?", "n/a", "c", "None"])["uncovered"] == ["c", "None"]
