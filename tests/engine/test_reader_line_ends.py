"""engine.io.reader's line-end checks (mixed or CR-only line ends, blank CR-LF lines) compare bytes with numpy a
MiB at a time: the same answers as bytes.count / ``in``, at every position, across the block boundaries."""

from __future__ import annotations

import random

import pytest

from anonymizer_app.engine.io import reader as reader_mod

STEP = 1 << 20


def lone_cr(raw: bytes) -> bool:
    return raw.count(b"\r") != raw.count(b"\r\n")


def test_small_inputs_at_random():
    rng = random.Random(0)
    for _ in range(5000):
        raw = bytes(rng.choice(b"\r\na;") for _ in range(rng.choice([0, 1, 2, 3, 5, 12, 40])))
        assert reader_mod._has_bytes(raw, b"\r", not_followed_by=b"\n") == lone_cr(raw), raw
        assert reader_mod._has_bytes(raw, b"\n\r\n") == (b"\n\r\n" in raw), raw


@pytest.mark.parametrize("offset", [-3, -2, -1, 0, 1, 2])
def test_matches_across_the_blocks(offset):
    crlf = b"x;y\r\n" * (2 * STEP // 5 + 3)
    assert not reader_mod._has_bytes(crlf, b"\r", not_followed_by=b"\n")
    assert not reader_mod._has_bytes(crlf, b"\n\r\n")
    for at in (STEP + offset, 2 * STEP + offset):
        lone = bytearray(crlf)
        lone[at] = ord("z")
        assert reader_mod._has_bytes(bytes(lone), b"\r", not_followed_by=b"\n") == lone_cr(bytes(lone))
        blank = bytearray(crlf)
        blank[at:at + 2] = b"\r\n"
        assert reader_mod._has_bytes(bytes(blank), b"\n\r\n") == (b"\n\r\n" in bytes(blank))


def test_a_cr_at_the_end_is_a_lone_one():
    assert reader_mod._has_bytes(b"a\r\nb\r", b"\r", not_followed_by=b"\n")
    assert reader_mod._one_newline(b"a\r\nb\r") == b"a\nb\n"
    assert reader_mod._one_newline(b"a\r\nb\r\n") == b"a\r\nb\r\n"
