"""The pyarrow reading path (unquoted UTF-8) and the dictionary-encoded Table: the same frames, types,
missing cells, codes and messages as pandas' parser and the row-by-row encoding."""

from __future__ import annotations

import codecs

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import EngineError, Hierarchy, InputError, Role, Table, read_table
from anonymizer_app.engine.io import reader as reader_mod
from anonymizer_app.engine.model.missing import parse_markers

CELLS = ["a", "b", "", "NA", " n/a ", "?", "null", "NaN", "None", "Zürich", "日本", "x y", " lead", "trail ", "10", "-3",
         "2.5", "1e3", "0", "2020-01-31"]


def pandas_only(monkeypatch) -> None:
    monkeypatch.setattr(reader_mod, "_read_arrow", lambda *args: None)


def random_csv(rng: np.random.Generator, rows: int, cols: int, delimiter: str, header: bool = True,
               crlf: bool = False, bom: bool = False, last_newline: bool = True) -> bytes:
    pool = rng.choice(CELLS, size=(cols, 4))  # few values per column: ties everywhere
    lines = [delimiter.join(f"c{j}" for j in range(cols))] if header else []
    for _ in range(rows):
        lines.append(delimiter.join(pool[j, rng.integers(0, 4)] for j in range(cols)))
    end = "\r\n" if crlf else "\n"
    text = end.join(lines) + (end if last_newline else "")
    return (codecs.BOM_UTF8 if bom else b"") + text.encode("utf-8")


def both(raw: bytes, monkeypatch, **kw) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    arrow, fmt_a = read_table(raw, "t.csv", **kw)
    categorical, _ = read_table(raw, "t.csv", dictionary=True, **kw)
    with monkeypatch.context() as m:
        pandas_only(m)
        pandas_frame, fmt_p = read_table(raw, "t.csv", **kw)
    assert fmt_a == fmt_p
    return arrow, categorical, pandas_frame


def assert_same_frame(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns)
    assert list(a.dtypes) == list(b.dtypes)
    assert a.index.equals(b.index)
    assert a.equals(b)
    assert all(type(v) is str for col in a.columns for v in a[col].to_numpy())


@pytest.mark.parametrize("seed", range(6))
def test_arrow_frame_equals_pandas_frame(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    delimiter = [",", ";", "\t", "|"][seed % 4]
    raw = random_csv(rng, rows=int(rng.integers(1, 300)), cols=int(rng.integers(2, 6)), delimiter=delimiter,
                     header=seed != 3, crlf=seed % 2 == 1, bom=seed == 2, last_newline=seed != 4)
    arrow, categorical, pandas_frame = both(raw, monkeypatch)
    assert_same_frame(arrow, pandas_frame)
    assert all(isinstance(t, pd.CategoricalDtype) for t in categorical.dtypes)
    assert_same_frame(reader_mod.text_frame(categorical), pandas_frame)


def test_arrow_path_is_taken_for_unquoted_utf8(monkeypatch):
    calls = []
    original = reader_mod._read_arrow
    monkeypatch.setattr(reader_mod, "_read_arrow", lambda *a: calls.append(1) or original(*a))
    frame, _ = read_table(b"a;b\nx;1\ny;2\n", "t.csv", dictionary=True)
    assert calls and list(frame["a"].astype(str)) == ["x", "y"]
    assert isinstance(frame["a"].dtype, pd.CategoricalDtype)
    # quoted cells, a single column, other encodings and previews go through pandas' parser
    for raw, kw in ((b'a;b\n"x";1\n', {}), (b"a\nx\ny\n", {}), ("a;b\nä;1\n".encode("latin-1"), {}),
                    (b"a;b\nx;1\ny;2\n", {"nrows": 1})):
        frame, _ = read_table(raw, "t.csv", dictionary=True, **kw)
        assert not any(isinstance(t, pd.CategoricalDtype) for t in frame.dtypes)


@pytest.mark.parametrize("raw", [
    b"a;b\n1;2\n3\n",  # a short line
    b"a;b\n1;2\n3;4;5\n",  # a long line
    b"a;b\n1;2\n  \n3;4\n",  # a line of blanks
    b"a;b\r\n1;2\r\n\r\n3;4\r\n",  # a CR-LF blank line (pandas skips it, the checks refuse it)
    b"\na;b\n1;2\n",  # a blank first line
    b"a;b\n1;2\n" + "x".encode() * 40 + b";2\n",  # a cell over the cap (limits below)
    b"a;b\n1;2\n\xff\xfe;3\n",  # not UTF-8 past the sniffed bytes: read as Windows-1252 by both
    b"a;b\n",  # a header only
])
def test_arrow_path_reports_as_the_checked_path(raw, monkeypatch):
    limits = reader_mod.Limits(max_cell_chars=30)
    outcomes = []
    for arrow in (True, False):
        with monkeypatch.context() as m:
            if not arrow:
                pandas_only(m)
            try:
                frame, fmt = read_table(raw, "t.csv", limits=limits)
                outcomes.append((frame.to_dict("list"), fmt))
            except InputError as exc:
                outcomes.append(str(exc))
    assert outcomes[0] == outcomes[1]


def frame_of(raw: bytes, dictionary: bool) -> pd.DataFrame:
    return read_table(raw, "t.csv", dictionary=dictionary)[0]


def leaves_hierarchy(name: str, values) -> Hierarchy:
    return Hierarchy.from_rows([[v, "*"] for v in values], name)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("na_values", [None, "NA"])
def test_table_from_dictionary_frame_equals_table_from_text(seed, na_values, monkeypatch):
    rng = np.random.default_rng(100 + seed)
    raw = random_csv(rng, rows=500, cols=4, delimiter=";")
    kw = {} if na_values is None else {"na_values": parse_markers(na_values)}
    roles = {"c0": Role.QUASI_IDENTIFYING, "c1": Role.QUASI_IDENTIFYING, "c2": Role.SENSITIVE}
    text = Table(frame_of(raw, False), dict(roles), encode_objects=False, **kw)  # every row read: the reference
    coded = Table(frame_of(raw, True), dict(roles), **kw)
    objects = Table(frame_of(raw, False), dict(roles), **kw)  # text objects dictionary-encoded on arrival
    assert set(coded.dictionaries) == {"c0", "c1", "c2"} and not text.dictionaries
    for fast in (coded, objects):
        assert_same_frame(fast.frame, text.frame)
        assert fast.types == text.types and fast.holding_missing == text.holding_missing
    # hierarchies covering every value but one ("a"), so that both a success and the message are compared
    present = sorted(set(text.frame["c0"]) | set(text.frame["c1"]) | {""})
    for given in ({c: leaves_hierarchy(c, present) for c in ("c0", "c1")},
                  {c: leaves_hierarchy(c, [v for v in present if v != "a"]) for c in ("c0", "c1")}):
        results = []
        for table in (text, coded, objects):
            try:
                results.append(table.encode(table.hierarchies(given)).tolist())
            except EngineError as exc:
                results.append(f"{type(exc).__name__}: {exc}")
        assert results[0] == results[1] == results[2]


def test_codes_of_a_changed_frame_are_not_used():
    raw = b"q;s\nx;1\ny;2\nx;3\ny;4\n"
    table = Table(frame_of(raw, True), {"q": Role.QUASI_IDENTIFYING})
    h = leaves_hierarchy("q", ["x", "y", "z"])
    assert table.encode({"q": h})[:, 0].tolist() == [0, 1, 0, 1]
    table.frame.loc[2, "q"] = "z"  # in place: the codes no longer describe the column
    assert not table.dictionaries["q"].describes(table.frame["q"].to_numpy(dtype=object))
    assert table.encode({"q": h})[:, 0].tolist() == [0, 1, 2, 1]
    table.frame = pd.DataFrame({"q": ["y", "y", "y", "x"], "s": ["1", "2", "3", "4"]})  # replaced
    assert table.encode({"q": h})[:, 0].tolist() == [1, 1, 1, 0]


def test_missing_markers_on_the_categories():
    raw = b"q;s\nNA;1\nx;2\n ? ;3\nx;4\n"
    table = Table(frame_of(raw, True), {"q": Role.QUASI_IDENTIFYING})
    assert table.frame["q"].tolist() == ["", "x", "", "x"] and table.holding_missing == {"q"}
    kept = Table(frame_of(raw, True), {"q": Role.QUASI_IDENTIFYING}, na_values=parse_markers("NA"))
    assert kept.frame["q"].tolist() == ["", "x", " ? ", "x"]
    plain = Table(frame_of(b"q;s\nx;1\ny;2\n", True), {"q": Role.QUASI_IDENTIFYING})
    assert plain.holding_missing == set() and plain.types == {"q": "string", "s": "integer"}


def test_join_pieces_keeps_categories_and_text():
    a = pd.DataFrame({"u": pd.Categorical(["x", "y"]), "v": ["1", "2"]})
    b = pd.DataFrame({"u": pd.Categorical(["z", "x"]), "v": pd.Categorical(["3", "4"])})
    joined = reader_mod.join_pieces([a, b])
    assert isinstance(joined["u"].dtype, pd.CategoricalDtype)
    assert joined["u"].astype(str).tolist() == ["x", "y", "z", "x"]
    assert joined["v"].dtype == object and joined["v"].tolist() == ["1", "2", "3", "4"]
    assert joined.index.equals(pd.RangeIndex(4))


@pytest.mark.parametrize("seed", range(4))
def test_sensitive_domain_codes_as_a_sorted_factorize(seed):
    from anonymizer_app.engine.privacy.distributions import sensitive_domain

    rng = np.random.default_rng(seed)
    pool = np.array(CELLS if seed % 2 else ["10", "9", "", "100", "-1", "2.5"], dtype=object)
    values = pool[rng.integers(0, len(pool), 5000)]
    frame = pd.DataFrame({"s": values})
    dom = sensitive_domain(frame, "s")
    codes, uniq = pd.factorize(frame["s"].astype(str).to_numpy(), sort=True)
    if seed % 2 == 0:  # every present value a number (or missing): ordered numerically, the missing value last
        order = np.argsort(pd.to_numeric(pd.Series(uniq), errors="coerce").to_numpy(dtype=float), kind="stable")
        remap = np.empty(len(uniq), dtype=np.int64)
        remap[order] = np.arange(len(uniq))
        uniq, codes = np.asarray(uniq, dtype=object)[order], remap[codes]
    assert list(dom.values) == list(uniq)
    assert dom.codes.tolist() == codes.tolist()
    assert dom.table_counts.tolist() == np.bincount(codes, minlength=len(uniq)).tolist()
