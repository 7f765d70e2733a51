"""The original rows held out of a synthesis (pure: numpy/pandas): drawn with the synthesis' seed, never read by
the synthesizer. The membership-inference test compares them with the rows it read, and the models trained on a
synthetic set are tested on them (engine.measure.synthetic_utility). The draw is a function of the number of rows,
the share and the seed only, so the web job, ``manage.py synthesize`` and ``manage.py utility`` find the same
rows again; a digest of their values tells whether the table still holds them."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd


def holdout_mask(rows: int, share: float, seed: int) -> np.ndarray | None:
    """Per row, whether it is held out: round(share × rows) rows drawn without replacement with ``seed``;
    None when that is no row or every row (nothing is held out)."""
    count = int(round(share * rows))
    if count == 0 or count >= rows:
        return None
    held = np.zeros(rows, dtype=bool)
    held[np.random.default_rng(seed).choice(rows, count, replace=False)] = True
    return held


def rows_digest(frame: pd.DataFrame) -> str:
    """SHA-256 of the rows' cells as text, in order (column names included): equal tables, equal digests."""
    digest = hashlib.sha256()
    digest.update("\x1f".join(map(str, frame.columns)).encode())
    for name in frame.columns:
        digest.update(b"\x1e")
        digest.update("\x1f".join(frame[name].astype(str)).encode())
    return digest.hexdigest()


def describe(rows: int, share: float, seed: int, holdout: pd.DataFrame | None) -> dict:
    """What a synthesis held out, for its report: the draw (rows, share, seed: holdout_mask draws the same rows
    again) and a digest of the held-out rows' cells, which tells later whether the table still holds them."""
    return {"share": share, "seed": seed, "input_rows": rows, "rows": 0 if holdout is None else int(len(holdout)),
            "digest": None if holdout is None else rows_digest(holdout)}
