"""The population a sample was drawn from, and the journalist risk against it.

A population is given by a sampling fraction, a population size, a region preset (its population
size, cited below) or a population table. With a table, each sample class's size in the population is
counted; otherwise it is estimated as f / π (the expected population class size under sampling with
fraction π), never below the sample class size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...errors import InputError
from .classes import Classes, risk_bands

# Region presets, as ARX offers them, with official figures (source, reference date).
REGIONS: dict[str, dict] = {
    "usa": {"label": "USA", "population": 331_449_281,
            "source": "U.S. Census Bureau, 2020 Census, resident population on 1 April 2020"},
    "uk": {"label": "UK", "population": 67_026_292,
           "source": "Office for National Statistics, UK mid-year population estimate, mid-2021"},
    "france": {"label": "France", "population": 67_407_241,
               "source": "Insee, population estimate on 1 January 2021"},
    "germany": {"label": "Germany", "population": 82_700_000,
                "source": "Statistisches Bundesamt, Zensus 2022: 82.7 million on 15 May 2022 (rounded as published)"},
    "canada": {"label": "Canada", "population": 36_991_981,
               "source": "Statistics Canada, 2021 Census of Population, 11 May 2021"},
    "australia": {"label": "Australia", "population": 25_422_788,
                  "source": "Australian Bureau of Statistics, 2021 Census, 10 August 2021"},
}


# More people than live on Earth (about 8.1 billion) is no population: a sampling fraction or size that
# implies one is refused rather than fed to the estimators.
MAX_POPULATION = 10_000_000_000


@dataclass(frozen=True)
class Population:
    """The population of a sample of ``n`` records: its size and the sampling fraction n / size."""

    size: int
    sampling_fraction: float
    source: str  # how it was given, for the report ("sampling fraction 0.01", "region USA (...)", ...)
    table: pd.DataFrame | None = None


def population_model(n: int, *, sampling_fraction: float | None = None, region: str | None = None,
                     size: int | None = None, table: pd.DataFrame | None = None) -> Population | None:
    """The population of an ``n``-record sample from exactly one of the four ways of giving it (None: none)."""
    given = [name for name, v in (("sampling fraction", sampling_fraction), ("region", region),
                                  ("population size", size), ("population table", table)) if v is not None]
    if len(given) > 1:
        raise InputError(f"give one population model, not {' and '.join(given)}")
    if not given:
        return None
    if sampling_fraction is not None:
        f = float(sampling_fraction)
        if not (0 < f <= 1) or np.isnan(f):
            raise InputError(f"sampling fraction {sampling_fraction}: it is above 0 and at most 1")
        if n / f > MAX_POPULATION:
            raise InputError(f"sampling fraction {sampling_fraction}: {n:,} records would be a sample of "
                             f"{n / f:.3g} people, more than {MAX_POPULATION:,}")
        return Population(int(round(n / f)), f, f"sampling fraction {f:g}")
    if region is not None:
        key = str(region).strip().lower()
        if key not in REGIONS:
            raise InputError(f"unknown region {region!r} (one of: {', '.join(REGIONS)})")
        r = REGIONS[key]
        return _sized(n, int(r["population"]), f"region {r['label']}: {r['population']:,} ({r['source']})")
    if size is not None:
        return _sized(n, int(size), f"population size {int(size):,}")
    assert table is not None
    return _sized(n, len(table), f"population table of {len(table):,} records", table)


def _sized(n: int, size: int, source: str, table: pd.DataFrame | None = None) -> Population:
    if size < max(n, 1):
        raise InputError(f"population size {size:,} is smaller than the sample ({n:,} records)")
    if size > MAX_POPULATION:
        raise InputError(f"population size {size:.3g} is more than {MAX_POPULATION:,}")
    return Population(size, n / size, source, table)


def population_class_sizes(classes: Classes, sample: pd.DataFrame, qi: list[str], population: Population) -> np.ndarray:
    """Each sample class's size in the population: counted in the population table, else estimated."""
    sizes = classes.sizes.astype(float)
    if population.table is None:
        return np.maximum(sizes, sizes / population.sampling_fraction)
    table = population.table
    missing = [c for c in qi if c not in table.columns]
    if missing:
        raise InputError(f"the population table has no column {', '.join(map(repr, missing))}")
    key = _row_keys(sample, qi)
    class_key = pd.Series(key).groupby(classes.class_of_row).first().to_numpy()
    counts = _row_keys(table, qi).value_counts()
    found = counts.reindex(class_key).to_numpy(dtype=float)
    short = np.flatnonzero(np.isnan(found) | (found < sizes))
    if len(short):
        c = int(short[0])
        raise InputError(f"the population table holds {0 if np.isnan(found[c]) else int(found[c])} records with "
                         f"{_describe(class_key[c], qi)}, the sample {int(sizes[c])}: the sample is not drawn "
                         f"from it ({len(short)} such classes)")
    return found


def _row_keys(frame: pd.DataFrame, qi: list[str]) -> pd.Index:
    joined = frame[qi[0]].astype(str)
    for c in qi[1:]:
        joined = joined + "\x1f" + frame[c].astype(str)
    return pd.Index(joined.to_numpy())


def _describe(key: str, qi: list[str]) -> str:
    return ", ".join(f"{c} = {v!r}" for c, v in zip(qi, key.split("\x1f")))


def journalist_risks(classes: Classes, population_sizes: np.ndarray, threshold: float) -> dict:
    """Journalist risk: a record's risk is 1 / (its class's size in the population)."""
    sizes = classes.sizes
    n = classes.n
    if n == 0:
        return {"journalist_risk_highest": 0.0, "journalist_risk_average": 0.0, "journalist_records_at_risk": 0,
                "journalist_records_at_risk_share": 0.0, "journalist_risk_bands": risk_bands(sizes, np.zeros(0))}
    risk = 1.0 / population_sizes
    at_risk = int(sizes[risk > threshold].sum())
    return {
        "journalist_risk_highest": float(risk.max()),
        "journalist_risk_average": float(np.sum(sizes * risk) / n),
        "journalist_records_at_risk": at_risk,
        "journalist_records_at_risk_share": at_risk / n,
        "journalist_risk_bands": risk_bands(sizes, risk),
    }
