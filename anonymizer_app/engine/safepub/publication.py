"""The publishing gate's checks of a SafePub release ((ε,δ)-differential privacy), on the rows that leave.

Called by :func:`..gate.publish` for every run whose models include (ε,δ)-differential privacy; nothing
here trusts the algorithm's report. From the model's ε, δ and search share the gate derives k again, and:

- the release comes from SafePub (no other algorithm's choice of node is paid for by the budget);
- suppressed records are never published ('*' rows would publish how many there are: a count no budget
  pays for), and records not drawn into the sample never are (the sample is recorded on the result);
- every published row was drawn into the sample;
- the published rows are exactly the sampled records whose class has k records or more at the published
  transformation (the suppression rule of the guarantee: no fewer, no more), a class being the sampled
  records with equal generalized QIs and equal values in every other published column;
- counted on the published table itself: every distinct published row (all its columns) occurs at least
  k times.

The cells themselves (valid generalizations of their input, other columns unchanged) are the gate's
general checks.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError, VerificationError
from ..model.table import Table, group_rows


def dp_model(models):
    return next((m for m in models if getattr(m, "differential_privacy", False)), None)


def check_request(models, keep_suppressed: bool) -> None:
    """Before anything is selected: a SafePub release never publishes suppressed records."""
    if dp_model(models) is not None and keep_suppressed:
        raise InputError("(ε,δ)-differential privacy: suppressed records are never published as '*' rows (their "
                         "number would be released without privacy budget); publish without them (the default)")


def _k(models) -> int:
    dp = dp_model(models)
    from ..safepub.parameters import derive  # derived again, independently of the run's report

    k = derive(dp.epsilon, dp.delta, dp.search_share).k
    return max([k, *(int(m.k) for m in models if m.name == "k-anonymity")])


def check_publication(result, table: Table, hierarchies: dict, frame: pd.DataFrame, rows: np.ndarray) -> None:
    """``frame``: the published rows (every column that leaves), ``rows``: their input rows."""
    dp = dp_model(result.models)
    if dp is None:
        return
    if result.algorithm != "safepub":
        raise VerificationError(f"(ε,δ)-differential privacy: the release comes from {result.algorithm or 'no'} "
                                f"algorithm, not SafePub")
    n = table.n
    sample = getattr(result, "sample", None)
    if sample is None or np.asarray(sample).dtype != bool or len(sample) != n:
        raise VerificationError("(ε,δ)-differential privacy: the run did not record its sample")
    sample = np.asarray(sample, dtype=bool)
    rows = np.asarray(rows, dtype=np.int64)
    outside = rows[~sample[rows]]
    if len(outside):
        raise VerificationError(f"(ε,δ)-differential privacy: input record {int(outside[0]) + 1} is published but was "
                                f"not drawn into the sample")
    k = _k(result.models)

    # every distinct published row occurs at least k times
    if len(frame):
        codes = np.column_stack([pd.factorize(frame[c].to_numpy(dtype=object), use_na_sentinel=False)[0]
                                 for c in frame.columns]).astype(np.int64)
        _, _, sizes = group_rows(codes)
        if (sizes < k).any():
            raise VerificationError(f"(ε,δ)-differential privacy: a published row occurs {int(sizes.min())} time(s), "
                                    f"fewer than k={k}")

    # the suppression rule: exactly the sampled records in classes of at least k at the published node
    transformation = result.transformation
    if transformation is None:
        raise VerificationError("(ε,δ)-differential privacy: the release is not a full-domain generalization")
    from ..algorithms.safepub import other_codes  # the algorithm package imports the gate's neighbours

    drawn = np.flatnonzero(sample)
    columns = []
    for c in table.qi:
        h = hierarchies[c]
        columns.append(h.maps[int(transformation[c])][h.encode(table.frame[c].iloc[drawn], c)].astype(np.int64))
    columns.append(other_codes(table, drawn))
    expected = drawn
    if len(drawn):
        _, inverse, sizes = group_rows(np.column_stack(columns))
        expected = drawn[sizes[inverse] >= k]
    if len(expected) != len(rows) or not np.array_equal(expected, np.sort(rows)):
        missing = np.setdiff1d(expected, rows)
        extra = np.setdiff1d(rows, expected)
        which = (f"sampled record {int(missing[0]) + 1} in a class of k={k} or more is not published" if len(missing)
                 else f"record {int(extra[0]) + 1} is published from a class below k={k}")
        raise VerificationError(f"(ε,δ)-differential privacy: the published rows are not the sample's classes of "
                                f"at least k records: {which}")
