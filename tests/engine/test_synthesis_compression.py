"""MST's domain compression: the values below 3σ merged, the merged 1-way measurement's closed form, and the
expansion of merged codes back to one of their values."""

from __future__ import annotations

import numpy as np
import pytest

from anonymizer_app.engine.synthesis.compression import compress
from anonymizer_app.engine.synthesis.discretize import ColumnCoding, Encoded
from anonymizer_app.engine.synthesis.graphical import Measurement


def _encoded():
    codes = {"a": np.array([0, 1, 2, 3, 0, 2]), "b": np.array([0, 1, 1, 0, 1, 1])}
    return Encoded(codes, [ColumnCoding("a", 4, ["w", "x", "y", "z"], "values"),
                           ColumnCoding("b", 2, ["p", "q"], "values")])


def test_values_below_three_sigma_are_merged_into_the_last_cell():
    one_way = [Measurement(("a",), np.array([100.0, 2.0, 50.0, 29.9]), 10.0),
               Measurement(("b",), np.array([40.0, 31.0]), 10.0)]
    c = compress(_encoded(), one_way)
    assert c.kept["a"].tolist() == [0, 2] and c.merged["a"].tolist() == [1, 3]
    assert c.encoded.sizes == {"a": 3, "b": 2}
    # original codes 0, 1, 2, 3 -> 0, merged (2), 1, merged (2)
    assert c.encoded.codes["a"].tolist() == [0, 2, 1, 2, 0, 1]
    assert c.encoded.codes["b"].tolist() == [0, 1, 1, 0, 1, 1]
    merged = c.one_way[0]
    assert merged.noisy.tolist() == [100.0, 50.0, 31.9]
    assert merged.weights == pytest.approx([1.0, 1.0, 1 / np.sqrt(2)])
    assert merged.sigma == 10.0
    assert c.one_way[1] is one_way[1]  # nothing merged: the measurement as it was
    assert c.describe()[0] == {"column": "a", "cells": 3, "merged_values": 2}


def test_a_merged_code_expands_to_one_of_its_values():
    one_way = [Measurement(("a",), np.array([100.0, 2.0, 50.0, 1.0]), 10.0),
               Measurement(("b",), np.array([40.0, 31.0]), 10.0)]
    c = compress(_encoded(), one_way)
    out = c.expand({"a": np.array([0, 1] + [2] * 400), "b": np.array([1] * 402)}, np.random.default_rng(0))
    assert out["a"][:2].tolist() == [0, 2]
    assert set(out["a"][2:].tolist()) == {1, 3}
    assert out["b"].tolist() == [1] * 402
