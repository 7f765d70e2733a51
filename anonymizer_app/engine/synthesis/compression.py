"""MST's domain compression (McKenna, Miklau and Sheldon 2021): once the 1-way marginals are measured,
the values of a column whose noisy count is below 3σ are merged into one cell for the rest of the run.

A column of 16,584 cities over 100 rows otherwise makes tree selection, the 2-way measurements and the model
work on hundreds of thousands of cells of noise. The merge is decided from the noisy 1-way counts only
(post-processing: no budget, no look at the data). The 1-way measurement is re-expressed on the merged domain:
the merged cell's noisy count is the sum of its values' noisy counts (noise σ·sqrt(m) for m values), entered
with weight 1/sqrt(m) so that every cell of the measurement has noise σ. A synthetic row in the merged cell gets
one of its values uniformly at random (as the paper does)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .discretize import Encoded
from .graphical import Measurement

THRESHOLD = 3.0  # in σ of the 1-way measurement, the paper's value


@dataclass
class Compression:
    encoded: Encoded  # the codes and sizes on the merged domains
    kept: dict[str, np.ndarray]  # column -> the original codes kept, in their new order
    merged: dict[str, np.ndarray]  # column -> the original codes merged into the last cell (empty: none)
    one_way: list[Measurement]  # the 1-way measurements on the merged domains (weights on merged cells)

    def expand(self, codes: dict[str, np.ndarray], rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Codes on the merged domains back to the original codes (a merged cell: one of its values)."""
        out = {}
        for name, code in codes.items():
            code = np.asarray(code, dtype=np.int64)
            kept, merged = self.kept[name], self.merged[name]
            original = np.empty(code.size, dtype=np.int64)
            inside = code < kept.size
            original[inside] = kept[code[inside]]
            rows = np.flatnonzero(~inside)
            if rows.size:
                original[rows] = merged[rng.integers(0, merged.size, size=rows.size)]
            out[name] = original
        return out

    def describe(self) -> list[dict]:
        return [{"column": c, "cells": int(self.kept[c].size + (self.merged[c].size > 0)),
                 "merged_values": int(self.merged[c].size)} for c in self.kept]


def compress(encoded: Encoded, one_way: list[Measurement]) -> Compression:
    """Merge each column's values with a noisy count below THRESHOLD·σ (each measurement is one column's)."""
    codes, columns, kept, merged, measurements = {}, [], {}, {}, []
    by_name = {m.clique[0]: m for m in one_way}
    for coding in encoded.columns:
        m = by_name[coding.name]
        noisy = np.asarray(m.noisy, dtype=float)
        keep = noisy >= THRESHOLD * m.sigma
        kept[coding.name] = np.flatnonzero(keep)
        merged[coding.name] = np.flatnonzero(~keep)
        size = int(keep.sum()) + int((~keep).any())
        new_code = np.full(coding.size, keep.sum(), dtype=np.int64)  # merged values: the last cell
        new_code[keep] = np.arange(keep.sum())
        codes[coding.name] = new_code[encoded.codes[coding.name]]
        columns.append(dataclasses.replace(coding, size=size))
        if (~keep).any():
            m_merged = int((~keep).sum())
            weights = np.ones(size)
            weights[-1] = 1.0 / np.sqrt(m_merged)
            values = np.append(noisy[keep], noisy[~keep].sum())
            measurements.append(Measurement(m.clique, values, m.sigma, weights=weights))
        else:
            measurements.append(m)
    return Compression(Encoded(codes, columns), kept, merged, measurements)
