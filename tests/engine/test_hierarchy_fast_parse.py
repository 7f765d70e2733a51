"""parse_hierarchy on files that are plainly trees (read by array operations on the file's bytes) against a
plain-Python reading of the one-row-per-leaf layout written here, on random trees: labels in several
scripts, of 1 to 30 bytes, with spaces; duplicate lines, blank lines, CR-LF line ends."""

from __future__ import annotations

import random

import numpy as np
import pytest

from anonymizer_app.engine.model import hierarchy as hierarchy_module
from anonymizer_app.engine.model.hierarchy import parse_hierarchy

# characters of labels: ASCII, Latin-1, CJK, a 4-byte emoji, Unicode spaces (U+2003, U+3000, U+0085), a line
# separator that csv.reader does not split at (U+2028), a vertical tab
ALPHABET = "abcXYZ019 -*._/'é中😀\u2003\u3000\x85\u2028\x0b"
DELIMITERS = (";", ",", "\t")
BLANKS = ("", " ", "\u3000", "\t \x0b")  # a blank line is one of these, joined by delimiters


def random_label(rng: random.Random, delimiter: str) -> str:
    while True:
        label = "".join(rng.choice(ALPHABET) for _ in range(rng.choice((1, 2, 3, 5, 8, 9, 12, 30))))
        if delimiter not in label:
            return label


def random_tree(rng: random.Random, delimiter: str) -> list[list[str]]:
    """One path per leaf (leaf first): unique labels on each level, each node one parent."""
    leaves = list(dict.fromkeys(random_label(rng, delimiter) for _ in range(rng.randint(1, 200))))
    paths = [[leaf] for leaf in leaves]
    nodes = list(range(len(leaves)))  # the node each leaf is under on the current level
    for _ in range(rng.randint(0, 4)):
        count = len(set(nodes))
        parents = list(dict.fromkeys(random_label(rng, delimiter) for _ in range(rng.randint(1, max(1, count)))))
        parent_of = {n: rng.randrange(len(parents)) for n in sorted(set(nodes))}
        nodes = [parent_of[n] for n in nodes]
        for path, n in zip(paths, nodes):
            path.append(parents[n])
    return paths


def write_file(rng: random.Random, paths: list[list[str]], delimiter: str) -> str:
    """The paths as lines in a random order, some twice, with blank lines between them and CR-LF or LF ends."""
    lines = [delimiter.join(p) for p in paths]
    lines += [rng.choice(lines) for _ in range(rng.randint(0, 5))]
    rng.shuffle(lines)
    for _ in range(rng.randint(0, 3)):
        width = len(paths[0])
        blank = delimiter.join(rng.choice(BLANKS) for _ in range(rng.choice((1, width))))
        lines.insert(rng.randint(0, len(lines)), blank)
    crlf = rng.random() < 0.3
    text = "".join(line + ("\r\n" if crlf and rng.random() < 0.8 else "\n") for line in lines)
    return text if rng.random() < 0.7 else text.rstrip("\r\n")


def reference(text: str, delimiter: str) -> tuple[list[str], list[list[str]], list[list[int]], bool]:
    """Leaves, labels per level and leaf -> label codes per level of a tree file, read line by line: lines end
    at LF (a CR before it dropped), values split at the delimiter, lines of blank values skipped, repeated
    lines read once; labels numbered by first appearance; a root '*' added above several top labels (or
    above the leaves of a one-column file). Also whether that root was added."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    rows: list[tuple[str, ...]] = []
    for line in lines:
        if line.endswith("\r"):
            line = line[:-1]
        values = tuple(line.split(delimiter))
        if any(v.strip() for v in values) and values not in rows:
            rows.append(values)
    columns = [[row[j] for row in rows] for j in range(len(rows[0]))]
    rooted = len(set(columns[-1])) > 1 or len(columns) == 1
    if rooted:
        columns.append(["*"] * len(rows))
    labels = [list(dict.fromkeys(col)) for col in columns]
    maps = [[lab.index(v) for v in col] for lab, col in zip(labels, columns)]
    return columns[0], labels, maps, rooted


def check_same(h, text: str, delimiter: str) -> None:
    leaves, labels, maps, rooted = reference(text, delimiter)
    assert list(h.leaves) == leaves
    assert [list(lab) for lab in h.labels] == labels
    assert [m.tolist() for m in h.maps] == maps
    assert all(m.dtype == np.int32 for m in h.maps)
    assert h.notes == (["root level '*' added above the file's top level"] if rooted else [])
    assert h.conflicts == [] and h.lifted == {} and h.kind == "file" and h.source == "f.csv"


@pytest.mark.parametrize("seed", range(60))
def test_random_trees_read_as_the_reference_reads_them(seed, monkeypatch):
    rng = random.Random(seed)
    files = []
    for _ in range(5):
        delimiter = rng.choice(DELIMITERS)
        files.append((write_file(rng, random_tree(rng, delimiter), delimiter), delimiter))
    for text, delimiter in files:
        # the array reading takes these files (none goes the row-by-row way)
        assert hierarchy_module._parse_tree_text(text, "c", "f.csv", delimiter) is not None
        check_same(parse_hierarchy(text, "c", "f.csv", delimiter), text, delimiter)
    # and the row-by-row way reads them as the reference does too
    monkeypatch.setattr(hierarchy_module, "_parse_tree_text", lambda *args: None)
    for text, delimiter in files:
        check_same(parse_hierarchy(text, "c", "f.csv", delimiter), text, delimiter)


def test_colliding_keys_are_told_apart(monkeypatch):
    # every value of over 8 bytes folded to one key: the values are then told apart by their bytes
    monkeypatch.setattr(hierarchy_module, "_fold_words", lambda words: np.zeros(len(words), dtype=np.uint64))
    rng = random.Random(7)
    for _ in range(20):
        text = write_file(rng, random_tree(rng, ";"), ";")
        check_same(parse_hierarchy(text, "c", "f.csv", ";"), text, ";")


def test_long_and_prefix_labels():
    text = "abcdefgh;abcdefghi;x\nabcdefg;abcdefghij;x\nabcdefghijklmnopq;abcdefghi;x\nab;abcdefghij;x\n"
    h = parse_hierarchy(text, "c", "f.csv", ";")
    check_same(h, text, ";")
    assert list(h.labels[1]) == ["abcdefghi", "abcdefghij"] and h.height == 2


@pytest.mark.parametrize("text", [
    'a;"b";*\n',  # a quoted value
    "a;A;*\rb;B;*\n",  # a CR that is not a line end
    "a;A;*\r",  # a CR at the end of the file
    "a;A;*\nb;*\n",  # a line of another width
    "a;;*\n",  # an empty value
    "a;A;*\na;B;*\n",  # a value with two paths
    "a;A;X\nb;A;Y\n",  # a label with two parents
    "",  # no line
    " ; \n",  # blank lines only
])
def test_other_files_go_the_row_by_row_way(text):
    # (which gives their errors and resolutions, with the file, line and value: tests/engine/test_hierarchy.py)
    assert hierarchy_module._parse_tree_text(text, "c", "f.csv", ";") is None


def test_other_delimiters_and_surrogates_go_the_row_by_row_way():
    assert hierarchy_module._parse_tree_text("a§A\n", "c", "f.csv", "§") is None
    assert hierarchy_module._parse_tree_text("a\ud800;A\n", "c", "f.csv", ";") is None
    h = parse_hierarchy("a\ud800;A\n", "c", "f.csv", ";")  # still read, the row-by-row way
    assert list(h.leaves) == ["a\ud800"]


def test_every_whitespace_character_starts_with_a_byte_that_may_be_space():
    # the array reading keeps a line at once when its first byte cannot begin a whitespace character
    for code in range(0x110000):
        char = chr(code)
        if char.isspace():
            assert hierarchy_module._MAY_BE_SPACE[char.encode("utf-8")[0]], hex(code)


def test_lines_led_by_letters_of_other_scripts():
    text = "é1;Б;*\nДа;Б;*\n中;文;*\n\u3000x;文;*\n\u3000;\u2003;\u3000\n"
    h = parse_hierarchy(text, "c", "f.csv", ";")
    check_same(h, text, ";")
    assert list(h.leaves) == ["é1", "Да", "中", "\u3000x"]
