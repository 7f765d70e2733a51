"""Each column's distinct values and their counts, gathered while an upload is written to Parquet
(ingestion.write_parquet), so that describing the columns and the identifier detection need not read the stored
table again: what storage.column_distinct and identifier_suggestions.whole_table_counts would find there.

A piece's values are counted by Arrow (value_counts: one hash of each cell, the distinct values in order of first
appearance); the pieces' counts are merged by hashing their distinct values only.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

MERGE_EVERY = 64  # pieces kept apart before their counts are merged (memory follows the distinct values)


class ColumnProfile:
    """Distinct values (in order of first appearance) and counts of every column of the tables added, in order."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.rows = 0
        self.nulls: dict[str, int] = {}
        self._parts: dict[str, list[tuple[pa.Array, np.ndarray]]] = {}

    def add(self, table: pa.Table) -> None:
        """The next rows of the table (string columns; the names of the first table added name the columns)."""
        if not self.names:
            self.names = [str(n) for n in table.column_names]
            self.nulls = dict.fromkeys(self.names, 0)
            self._parts = {n: [] for n in self.names}
        self.rows += table.num_rows
        for name, column in zip(self.names, table.columns):
            self.nulls[name] += column.null_count
            if pa.types.is_dictionary(column.type):
                column = column.cast(column.type.value_type)
            counted = pc.value_counts(column)  # nulls are not values: value_counts gives them a row of their own
            values, counts = counted.field("values"), counted.field("counts")
            if column.null_count:
                valid = pc.is_valid(values)
                values, counts = values.filter(valid), counts.filter(valid)
            parts = self._parts[name]
            parts.append((values, counts.to_numpy(zero_copy_only=False).astype(np.int64)))
            if len(parts) > MERGE_EVERY:
                self._parts[name] = [_merged(parts)]

    def counted(self, name: str) -> tuple[pa.Array, np.ndarray]:
        """The column's distinct values (a string Array, order of first appearance) and the count of each."""
        parts = self._parts[name]
        if len(parts) != 1:
            self._parts[name] = parts = [_merged(parts)]
        return parts[0]

    def distinct(self, name: str) -> pa.Array:
        return self.counted(name)[0]


def _merged(parts: list[tuple[pa.Array, np.ndarray]]) -> tuple[pa.Array, np.ndarray]:
    """The pieces' counts as one: their distinct values hashed together (dictionary_encode keeps the order of
    first appearance, and the pieces come in row order), counts added up per value."""
    if not parts:
        return pa.array([], type=pa.string()), np.zeros(0, dtype=np.int64)
    if len(parts) == 1:
        return parts[0]
    encoded = pc.dictionary_encode(pa.concat_arrays([values for values, _ in parts]))
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    weights = np.concatenate([counts for _, counts in parts])
    # float64 sums of counts are exact (below 2**53 rows)
    totals = np.bincount(codes, weights=weights, minlength=len(encoded.dictionary)).astype(np.int64)
    return encoded.dictionary, totals
