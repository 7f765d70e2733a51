"""What several benchmark scripts share: the best time of repeated runs, the Django set-up of the scripts that
use the app's services, and an engine Problem built the way engine.run.stages does (for running a search directly)."""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np


def problem_for(engine, table, hs, k, suppression, options):
    from anonymizer_app.engine.algorithms.base import Problem
    from anonymizer_app.engine.model.table import frequency_set

    h = table.hierarchies(hs)
    ordered = [h[c] for c in table.qi]
    codes = table.encode(h)
    freq = frequency_set(codes, np.array([len(x.leaves) for x in ordered], dtype=np.int64))
    return Problem(table, ordered, codes, freq, [engine.KAnonymity(k)], suppression,
                   math.floor(suppression * table.n + 1e-9), options)


REPO = Path(__file__).resolve().parent.parent


def best(repeat: int, fn):
    """(the shortest of ``repeat`` timed calls of ``fn``, the last call's value)."""
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return min(times), value


def parser(doc: str) -> argparse.ArgumentParser:
    """The options of a script on the shared datasets: --shared (default ../shared beside the checkout)."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--shared", default=str(REPO.parent / "shared"))
    return ap


def setup_django() -> None:
    """The app's settings (DATABASE_URL, MEDIA_ROOT from the environment) for a script run from benchmarks/."""
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")
    import django

    django.setup()
