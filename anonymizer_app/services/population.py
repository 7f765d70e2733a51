"""A population table for the models on the research subset (δ-presence, k-map against a population table):
the job's dataset is the research subset of a population (another dataset of the owner). Its rows are found
in the population on their shared columns and marked by the RESEARCH_MARKER column; the population is
anonymized and the publication keeps the research rows only. The one matching function of the web app and the
CLI (--population)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..engine import InputError, Role
from ..engine.privacy import PRIVACY_MODELS

if TYPE_CHECKING:
    from ..models import Dataset, Job

# the models and services.datasets (which imports them) are imported by the functions on stored datasets only:
# the CLI's --population matches two files without Django's app registry (management/deferred_setup.py)

RESEARCH_MARKER = "__research_subset__"  # the 0/1 column added to the population (never published)


def match_research(research: pd.DataFrame, population: pd.DataFrame, marker: str = RESEARCH_MARKER,
                   label: str = "the population") -> tuple[pd.DataFrame, np.ndarray]:
    """The population with a ``marker`` column reading "1" for the research records, "0" for the others,
    and for each research row (in its order) the position of the population row it matched.

    Rows are matched on every column the two tables share, as text; each population row is used once
    (the n-th research copy of a row takes the n-th population copy). Every research record must be found."""
    shared = [c for c in research.columns if c in population.columns]
    if not shared:
        raise InputError(f"{label}: the population and the research subset share no column")

    def keys(frame):
        return frame[shared].astype(str).agg("\x1f".join, axis=1) if len(frame) else pd.Series([], dtype=str)

    pop_key, res_key = keys(population).reset_index(drop=True), keys(research).reset_index(drop=True)
    pop_rank = pop_key.groupby(pop_key).cumcount()
    res_rank = res_key.groupby(res_key).cumcount()
    where = pd.Series(np.arange(len(pop_key)), index=pd.MultiIndex.from_arrays([pop_key, pop_rank]))
    found = where.reindex(pd.MultiIndex.from_arrays([res_key, res_rank]))
    missing = int(found.isna().sum())
    if missing:
        raise InputError(f"{label}: {missing} of the {len(research)} research records are not in the population "
                         f"(matched on {', '.join(map(str, shared))})")
    positions = found.to_numpy(dtype=np.int64)
    marked = population.copy()
    flag = np.zeros(len(population), dtype=bool)
    flag[positions] = True
    marked[marker] = np.where(flag, "1", "0")
    return marked, positions


def population_config(research: Dataset, population: Dataset) -> dict:
    """The job's snapshot for a population run: the population's columns with the research dataset's
    roles, types and hierarchies where it has the column (the population's own otherwise), plus the
    research marker (insensitive, never published)."""
    from . import datasets

    mine = {c["name"]: c for c in datasets.dataset_config(research)["columns"]}
    theirs = datasets.dataset_config(population)["columns"]
    names = {c["name"] for c in theirs}
    missing = [n for n, c in mine.items() if c["role"] == Role.QUASI_IDENTIFYING.value and n not in names]
    if missing:
        raise InputError(f"population {population.name}: no column {', '.join(map(repr, missing))} "
                         f"(a quasi-identifier of the research subset)")
    columns = [mine.get(c["name"], c) for c in theirs]
    columns.append({"name": RESEARCH_MARKER, "role": Role.INSENSITIVE.value, "type": "string", "hierarchy": None})
    return {"columns": columns, "population": {"dataset": population.pk, "name": population.name,
                                               "research_columns": list(mine)}}


def population_models(research: Dataset, population: Dataset, models: list[dict] | None) -> list[dict]:
    """The job's models with every model on the research subset (δ-presence, k-map against a population table)
    applied to the research marker; refuses a population without such a model, another user's dataset or the
    research subset itself."""
    specs = [dict(m) for m in models or []]
    on_subset = [m for m in specs if getattr(PRIVACY_MODELS.get(str(m.get("model"))), "column_source", None)
                 == "research"]
    if not on_subset:
        offered = " or ".join(cls.label for cls in PRIVACY_MODELS.values() if cls.column_source == "research")
        raise InputError(f"a population dataset applies to {offered}: tick one or choose no population")
    if population.owner_id != research.owner_id:
        raise InputError("unknown population dataset")
    if population.pk == research.pk:
        raise InputError("the population must be another dataset than the research subset")
    for m in on_subset:
        m["column"] = RESEARCH_MARKER
    return specs


presence_models = population_models  # the name of before, when δ-presence was the only such model


def marked_population(job: Job) -> tuple[Dataset, pd.DataFrame, np.ndarray]:
    """A population job's population dataset, its rows with the research marker, and the position of
    each research row in it."""
    from ..models import Dataset
    from . import datasets

    population = Dataset.objects.get(pk=job.config["population"]["dataset"], owner=job.owner)
    marked, positions = match_research(datasets.load_frame(job.dataset), datasets.load_frame(population),
                                       RESEARCH_MARKER, f"population {population.name}")
    return population, marked, positions
