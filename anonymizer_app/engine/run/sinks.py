"""Where published rows go: a sink (a Parquet file, a CSV file, a list in a test) gets them a chunk at a
time, in publication order. Every backend hands its rows to the sink through :func:`write_to`."""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np
import pandas as pd

from .coded import plain_frame

SINK_ROWS = 32_768  # rows per chunk handed to a sink (the stored Parquet's row group)


class Sink(Protocol):
    """Where published rows go (a Parquet file, a CSV file): chunks in publication order."""

    def write(self, frame: pd.DataFrame, suppressed: np.ndarray, rows: np.ndarray) -> None:
        """``rows``: the input row of each published row (the web app aligns the original beside it)."""


def write_to(sink: Sink, frame: pd.DataFrame, suppressed: np.ndarray, rows: np.ndarray,
             qi: Sequence[str] = ()) -> None:
    """Hand ``frame`` to ``sink`` in chunks of SINK_ROWS rows (one chunk, maybe empty, at least). The QIs
    ``qi`` held as codes (coded.py) reach the sink as object cells, a chunk at a time, unless the sink says it
    takes them as they are (``takes_codes``: a CSV file writes each code's text, no object made per row).
    ``chunk_rows``: the sink's own chunk size, where it is not SINK_ROWS."""
    plain = (lambda f, qi: f) if getattr(sink, "takes_codes", False) else plain_frame
    step = int(getattr(sink, "chunk_rows", SINK_ROWS))  # a sink may take larger chunks than a row group
    if len(frame) == 0:
        sink.write(plain(frame, qi), np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64))
        return
    for start in range(0, len(frame), step):
        stop = min(start + step, len(frame))
        chunk = plain(frame.iloc[start:stop].reset_index(drop=True), qi)
        sink.write(chunk, suppressed[start:stop], rows[start:stop])
