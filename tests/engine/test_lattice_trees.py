"""Lattice searches on hierarchies that are trees by construction, and on random files that are not
trees above the leaves (labels with several parents) resolved by 'lift' or 'first': every loaded
hierarchy is a tree, and Flash and Incognito find the optimum of the exhaustive search and of a
brute force that does not use the lattice engine, without any run aborting."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymizer_app.engine import HierarchyError, Table, UnsatisfiableError, anonymize, parse_hierarchy

from ._lattice_helpers import KEYS, brute_force

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _is_tree(h) -> bool:
    for lv in range(h.height):
        parent: dict[int, int] = {}
        for a, b in zip(h.maps[lv].tolist(), h.maps[lv + 1].tolist()):
            if parent.setdefault(a, b) != b:
                return False
    return True


@st.composite
def hierarchy_files(draw, name: str, tree: bool):
    """A random one-row-per-leaf file: a random tree (each label's parent drawn once) or, when not
    ``tree``, labels drawn per row, so that labels above the leaves get several parents."""
    d = draw(st.integers(2, 7))
    height = draw(st.integers(1, 4))
    leaves = [f"{name}v{i}" for i in range(d)]
    rows = [[leaf] for leaf in leaves]
    parent_of: dict[tuple[int, str], str] = {}
    for lv in range(1, height + 1):
        pool = max(1, d >> lv) if lv < height else draw(st.integers(1, 2))
        for row in rows:
            key = (lv, row[-1])
            if tree and key in parent_of:
                row.append(parent_of[key])
                continue
            label = f"{name}{lv}_{draw(st.integers(0, pool - 1))}"
            parent_of[key] = label
            row.append(label)
    if not tree and draw(st.booleans()):  # an ambiguous value too: a second, different path
        extra = list(draw(st.sampled_from(rows)))
        extra[1:] = [f"{name}{lv}_{draw(st.integers(0, 1))}" for lv in range(1, height + 1)]
        rows.append(extra)
    order = draw(st.permutations(range(len(rows))))
    return leaves, "".join(";".join(rows[i]) + "\n" for i in order)


@st.composite
def tables(draw, tree: bool):
    q = draw(st.integers(2, 3))
    n = draw(st.integers(4, 30))
    policy = draw(st.sampled_from(["lift", "first"]))
    cols, hs = {}, {}
    for j in range(q):
        name = f"q{j}"
        leaves, text = draw(hierarchy_files(name, tree))
        h = parse_hierarchy(text, name, on_conflict=policy)
        assert _is_tree(h)
        hs[name] = h
        cols[name] = [leaves[draw(st.integers(0, len(leaves) - 1))] for _ in range(n)]
    cols["s"] = ["x"] * n
    frame = pd.DataFrame(cols, dtype=object)
    roles = {c: "quasi-identifying" for c in hs}
    roles["s"] = "insensitive"
    return Table(frame, roles, types={c: "string" for c in hs}), hs


def _optimum(table, hs, algorithm, k, suppression, metric):
    try:
        r = anonymize(table, hs, algorithm, k=k, suppression_limit=suppression, options={"metric": metric})
    except UnsatisfiableError:
        return None
    assert r.verified
    return r.metrics[KEYS[metric]]


def _check(data, k, suppression, metric):
    table, hs = data
    expected = brute_force(table, hs, k, suppression, metric)
    exhaustive = _optimum(table, hs, "exhaustive", k, suppression, metric)
    for algorithm in ("flash", "incognito"):
        got = _optimum(table, hs, algorithm, k, suppression, metric)
        if expected is None:
            assert got is None and exhaustive is None
        else:
            assert got == pytest.approx(exhaustive, rel=1e-9, abs=1e-9) == pytest.approx(expected[0])


@SETTINGS
@given(data=tables(tree=True), k=st.integers(2, 4), suppression=st.sampled_from([0.0, 0.1, 0.3]),
       metric=st.sampled_from(list(KEYS)))
def test_random_trees_flash_and_incognito_find_the_exhaustive_optimum(data, k, suppression, metric):
    _check(data, k, suppression, metric)


@SETTINGS
@given(data=tables(tree=False), k=st.integers(2, 4), suppression=st.sampled_from([0.0, 0.1, 0.3]),
       metric=st.sampled_from(list(KEYS)))
def test_resolved_inner_conflicts_flash_and_incognito_find_the_exhaustive_optimum(data, k, suppression, metric):
    _check(data, k, suppression, metric)


@settings(max_examples=60, deadline=None)
@given(file=hierarchy_files("h", tree=False))
def test_a_file_is_refused_exactly_when_it_is_not_a_tree(file):
    _, text = file
    rows = [line.split(";") for line in text.splitlines()]
    parents: dict[tuple[int, str], set[str]] = {}
    for row in rows:
        for lv in range(len(row) - 1):
            parents.setdefault((lv, row[lv]), set()).add(row[lv + 1])
    several = sorted((lv, label) for (lv, label), ps in parents.items() if len(ps) > 1)
    try:
        parse_hierarchy(text, "h")
    except HierarchyError as exc:
        assert several
        for lv, label in several:
            assert f"{label!r}" in str(exc)
            found = {c.value: c for c in exc.conflicts if c.level == lv}
            assert label in found
            lines = found[label].lines
            assert len(lines) >= 2 and all(rows[n - 1][lv] == label for n in lines)
            assert len({rows[n - 1][lv + 1] for n in lines}) == len(lines)  # one line per parent
    else:
        assert not several
    for policy in ("lift", "first"):
        assert _is_tree(parse_hierarchy(text, "h", on_conflict=policy))
