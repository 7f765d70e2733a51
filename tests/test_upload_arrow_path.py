"""An upload written to Parquet from pyarrow's tables (ingestion's ``arrow`` pieces) and described from the distinct
values and counts gathered while writing (services.column_profile) stores and describes exactly what the frame path
stored and described: the same pandas frames read back, the same Parquet schema, the same columns (types,
distinct counts, roles) and the same identifier suggestions; the same messages for bad files. The old path is the
same code with arrow=False and no profile (describe_columns then reads the stored table, as before)."""

from __future__ import annotations

import csv
import io
import random
from collections import Counter

import pandas as pd
import pyarrow.parquet as pq
import pytest
from django.core.cache import cache

from anonymizer_app.engine import InputError
from anonymizer_app.services import column_profile, datasets, identifier_suggestions, ingestion, storage

pytestmark = pytest.mark.django_db
ROWS = 3000


def _rows(seed: int = 1) -> list[list[str]]:
    rng = random.Random(seed)
    first = ["Anna", "Jan", "Sofía", "Zoë", "Li"]
    rows = [["patient_id", "name", "email", "age", "zip", "visit", "note", "score", "blank"]]
    for i in range(ROWS):
        rows.append([f"P{i // 2:06d}", rng.choice(first) + " " + rng.choice(["Smit", "de Vries", "Ødegård"]),
                     f"user{rng.randrange(5000)}@example.org", str(rng.randrange(18, 90)),
                     rng.choice(["1011", "1012", " 1013", "1013 ", "\u00a01014", ""]),
                     f"2024-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
                     rng.choice(["NA", "", "n/a", "fine", "café au lait", "?", "null"]),
                     f"{rng.random() * 100:.2f}", rng.choice(["", " "])])
    return rows


def _text(rows, delimiter=";", newline="\n", quote_all=False) -> str:
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, lineterminator=newline,
               quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL).writerows(rows)
    return out.getvalue()


def _files() -> dict[str, bytes]:
    rows = _rows()
    plain = _text(rows)
    return {
        "plain.csv": plain.encode(),
        "bom-crlf.csv": b"\xef\xbb\xbf" + _text(rows, ",", "\r\n").encode(),
        "blank-lines.csv": plain.replace("\n", "\n\n", 700).encode(),  # blank lines, some at the start of a block
        "quoted.csv": _text(rows, ",", quote_all=True).encode(),
        "latin1.csv": _text(rows, "\t").encode("latin-1", errors="replace"),
        "few-distinct.csv": _text([r[3:6] for r in rows]).encode(),
    }


FILES = _files()


@pytest.fixture(params=[False, True], ids=["whole", "blocks"])
def streamed(request, monkeypatch):
    if request.param:  # 8 KiB blocks: every file is read in many pieces
        monkeypatch.setattr(ingestion, "STREAM_THRESHOLD", 1024)
        monkeypatch.setattr(ingestion, "STREAM_BLOCK", 8192)
    return request.param


@pytest.fixture(params=[ROWS + 1, 500], ids=["head-is-table", "head-of-table"])
def detection_rows(request, monkeypatch):
    """The detection's first rows: the whole table (uniqueness counted as Python strips), or fewer (as Arrow)."""
    monkeypatch.setattr(identifier_suggestions, "DETECTION_ROWS", request.param)
    cache.clear()
    return request.param


def _old_path(monkeypatch):
    """The frame path: no arrow pieces, no profile (the stored table read again to describe it)."""
    store = ingestion.store_table_file
    monkeypatch.setattr(ingestion, "store_table_file", lambda *a, **k: store(*a, **{**k, "arrow": False}))
    monkeypatch.setattr(datasets, "ColumnProfile", lambda: None)


def _counted(calls: Counter, name: str, function):
    def spy(*args, **kwargs):
        calls[name] += 1
        return function(*args, **kwargs)
    return spy


def _described(dataset):
    return [(c.name, c.position, c.inferred_type, c.type, c.role, c.distinct_count)
            for c in dataset.columns.order_by("position")]


@pytest.mark.parametrize("name", sorted(FILES))
def test_both_paths_store_and_describe_the_same(user, monkeypatch, streamed, detection_rows, name):
    calls: Counter = Counter()
    for owner, attr in ((identifier_suggestions, "detect_profiled"), (storage, "column_distinct"),
                        (ingestion, "_arrow_text")):
        monkeypatch.setattr(owner, attr, _counted(calls, attr, getattr(owner, attr)))
    new = datasets.create_dataset(user, FILES[name], name)
    # described from the profile, not from the stored table; pyarrow's blocks written without a frame
    assert (calls["detect_profiled"], calls["column_distinct"]) == (1, 0)
    if name != "blank-lines.csv":  # a block starting with a blank line is read by pandas (the checked path)
        assert (calls["_arrow_text"] == 0) == (streamed and name in ("plain.csv", "bom-crlf.csv", "few-distinct.csv"))
    cache.clear()
    with monkeypatch.context() as m:
        _old_path(m)
        old = datasets.create_dataset(user, FILES[name], name)
    new_path, old_path = storage.table_path(new), storage.table_path(old)
    assert (new.n_rows, new.n_columns, new.encoding, new.delimiter) == (old.n_rows, old.n_columns, old.encoding,
                                                                        old.delimiter)
    assert pq.read_schema(new_path).equals(pq.read_schema(old_path), check_metadata=True)
    pd.testing.assert_frame_equal(storage.read_frame(new_path), storage.read_frame(old_path))
    pd.testing.assert_frame_equal(storage.read_frame(new_path, dictionary=True),
                                  storage.read_frame(old_path, dictionary=True))
    assert _described(new) == _described(old)
    cache.clear()
    with_profile = identifier_suggestions.for_dataset(new)  # cached at upload from the profile
    cache.clear()
    assert identifier_suggestions.detect_file(new_path) == identifier_suggestions.detect_file(old_path)
    assert with_profile == identifier_suggestions.detect_file(old_path)
    assert with_profile.suggestions or name == "few-distinct.csv"


@pytest.mark.parametrize("name", ["plain.csv", "quoted.csv", "latin1.csv"])
def test_the_profile_counts_every_stored_cell(tmp_path, streamed, name):
    source = tmp_path / name
    source.write_bytes(FILES[name])
    profile = column_profile.ColumnProfile()
    target = tmp_path / "t.parquet"
    _, rows, columns = ingestion.store_table_file(source, name, None, target, profile, **datasets._limits())
    frame = storage.read_frame(target)
    assert (profile.rows, profile.names) == (rows, columns) == (len(frame), list(frame.columns))
    for column in columns:
        cells = list(frame[column])
        first_seen = list(dict.fromkeys(cells))  # brute force: the order of first appearance, each value's count
        values, counts = profile.counted(column)
        assert values.to_pylist() == first_seen == storage.column_distinct(target, column).to_pylist()
        assert list(counts) == [Counter(cells)[v] for v in first_seen]


@pytest.mark.parametrize("block", [8192, 1 << 20])
@pytest.mark.parametrize("bad, message", [
    (lambda lines: lines.__setitem__(2500, "1;2"), r"^t\.csv, line 2501: 2 field\(s\) where the first line has 9$"),
    (lambda lines: lines.__setitem__(2900, lines[2900] + "x" * 70_000),
     r"^t\.csv, line 2901, column 9 \('blank'\): a cell of 70,00[01] characters, more than the limit of"),
    (lambda lines: lines.__setitem__(1700, "\udcff;" * 8 + "z"), r"^t\.csv, line 1701: cannot be decoded as"),
])
def test_bad_files_fail_with_the_same_message(tmp_path, monkeypatch, block, bad, message):
    lines = _text(_rows()).split("\n")
    bad(lines)
    path = tmp_path / "t.csv"
    path.write_bytes("\n".join(lines).encode("utf-8", errors="surrogateescape"))
    monkeypatch.setattr(ingestion, "STREAM_THRESHOLD", 1024)
    found = []
    for arrow in (True, False):
        with pytest.raises(InputError, match=message) as caught:
            ingestion.store_table_file(path, "t.csv", ingestion.sniff_file(path, "t.csv"), tmp_path / "t.parquet",
                                       column_profile.ColumnProfile(), arrow=arrow, block_bytes=block,
                                       **datasets._limits())
        found.append(str(caught.value))
        assert not (tmp_path / "t.parquet").exists()
    assert found[0] == found[1]


@pytest.mark.parametrize("tail", ["é", "ü;€", "plain", "\udce9", "x\udce9y€"])
@pytest.mark.parametrize("at", [0, 1, 2, 3])
def test_the_scan_finds_utf8_as_decoding_the_whole_file_does(tmp_path, monkeypatch, tail, at):
    """ASCII blocks are not decoded: a character cut by a block's end, or a single-byte text after ASCII blocks,
    is still found as decoding the whole file finds it."""
    monkeypatch.setattr(ingestion, "STREAM_BLOCK", 64)
    data = ("a;b\n" + "x;1\n" * 40).encode()[: 64 * 3 - at] + tail.encode("utf-8", errors="surrogateescape") + b";2\n"
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    try:
        data.decode("utf-8")
        utf8 = True
    except UnicodeDecodeError:
        utf8 = False
    assert ingestion._scan(path, check_utf8=True) == (False, utf8)
