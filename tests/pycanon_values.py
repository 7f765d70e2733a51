"""pycanon's privacy figures for anonymized tables: the second opinion of tests/engine/test_pycanon.py.

Run with the separate venv (pycanon 1.3.6 pins numpy 2.0.2, so it never enters the product's .venv):

    .venv-pycanon/bin/python tests/pycanon_values.py jobs.json

``jobs.json`` is a list of ``{"csv": path, "qi": [columns], "sensitive": column, "numeric": bool}``
(``numeric`` optional, default false). Every cell is read as text (no NaN: an empty cell stays "",
"NA" stays "NA"); a numeric sensitive column is then converted to numbers, so that pycanon's
t_closeness uses its ordered distance on it (equal distance on text columns). The frame keeps the
default 0..n-1 index, which pycanon's positional class lookups need. Suppressed rows are the
caller's business (pycanon would make one class of the rows whose QIs read ``*``).

Prints a JSON list, one object per job, in job order: k, l, entropy_l, recursive_c_l ([c, l]; c is
null when pycanon leaves it NaN, i.e. l = 1), t, basic_beta, enhanced_beta.
"""

from __future__ import annotations

import json
import math
import sys

import pandas as pd
from pycanon import anonymity


def _number(x):
    x = float(x)
    return None if math.isnan(x) else x


def values(job: dict) -> dict:
    frame = pd.read_csv(job["csv"], dtype=str, keep_default_na=False)
    sensitive = job["sensitive"]
    if job.get("numeric"):
        frame[sensitive] = pd.to_numeric(frame[sensitive])
    frame = frame.reset_index(drop=True)
    qi, sa = list(job["qi"]), [sensitive]
    c, l_rec = anonymity.recursive_c_l_diversity(frame, qi, sa)
    return {
        "k": int(anonymity.k_anonymity(frame, qi)),
        "l": int(anonymity.l_diversity(frame, qi, sa)),
        "entropy_l": _number(anonymity.entropy_l_diversity(frame, qi, sa)),
        "recursive_c_l": [_number(c), int(l_rec)],
        "t": _number(anonymity.t_closeness(frame, qi, sa)),
        "basic_beta": _number(anonymity.basic_beta_likeness(frame, qi, sa)),
        "enhanced_beta": _number(anonymity.enhanced_beta_likeness(frame, qi, sa)),
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(f"usage: {argv[0]} JOBS.json", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as fh:
        jobs = json.load(fh)
    json.dump([values(job) for job in jobs], sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
