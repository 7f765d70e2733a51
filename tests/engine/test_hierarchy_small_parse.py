"""Small hierarchy files are parsed line by line (hierarchy._small_tree), larger ones by array operations
(_vector_tree): on any text both give the same Hierarchy, or both decline (None: the row-by-row parser then reads
the file and words its errors)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from anonymizer_app.engine.model.hierarchy import _small_tree, _vector_tree, parse_hierarchy
from tests.reference_data import ADULT

ALPHABET = ["a", "b", "c", "é", "1", "2", " ", "\u00a0", ";", ";", ";", ",", "\t", "\n", "\n", "\r\n", "\r", '"', "*"]


def _both(text: str, delimiter: str):
    small = _small_tree(text, "q", "f.csv", delimiter)
    vector = _vector_tree(text, text.encode("utf-8"), "q", "f.csv", delimiter)
    return small, vector


def _same(small, vector) -> None:
    assert (small is None) == (vector is None)
    if small is None:
        return
    assert small.leaves.tolist() == vector.leaves.tolist() and small.leaves.dtype == vector.leaves.dtype
    assert [lab.tolist() for lab in small.labels] == [lab.tolist() for lab in vector.labels]
    assert all(a.dtype == b.dtype and np.array_equal(a, b) for a, b in zip(small.maps, vector.maps))
    assert small.notes == vector.notes and small.source == vector.source and small.name == vector.name


def _tree_text(rng: random.Random) -> str:
    """A tree (or nearly one: a few edits may break it), with blank lines, CR-LF and repeated lines."""
    width = rng.randint(1, 4)
    lines = []
    for leaf in range(rng.randint(1, 30)):
        path = [f"v{leaf}"] + [f"L{j}-{leaf // (2 ** j + 1)}" for j in range(1, width)]
        lines.append(";".join(path))
        if rng.random() < 0.1:
            lines.append(lines[-1])  # the same line twice
        if rng.random() < 0.05:
            lines.append(rng.choice(["", "  ", ";;", " ; "]))
    if rng.random() < 0.3:  # one edit that may make it no tree
        i = rng.randrange(len(lines))
        lines[i] = lines[i].replace(rng.choice(["L1", "v", ";"]), rng.choice(["L2", "v1", ";;", "", ","]), 1)
    end = rng.choice(["\n", "\r\n"])
    return end.join(lines) + rng.choice(["", end, end + end, "\r"])


@pytest.mark.parametrize("seed", range(300))
def test_trees_and_near_trees(seed):
    rng = random.Random(seed)
    text = _tree_text(rng)
    _same(*_both(text, ";"))


@pytest.mark.parametrize("seed", range(300))
def test_random_text(seed):
    rng = random.Random(1000 + seed)
    text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 60)))
    for delimiter in (";", ",", "\t"):
        _same(*_both(text, delimiter))


def test_adult_files_parse_the_same():
    files = sorted(ADULT.glob("adult_hierarchy_*.csv"))
    assert files
    for f in files:
        text = f.read_text()
        _same(*_both(text, ";"))
        assert parse_hierarchy(text, f.stem, f.name).leaves.tolist() == _vector_tree(
            text, text.encode(), f.stem, f.name, ";").leaves.tolist()
