"""Risk analysis for the web app and the CLI: one call into engine.measure.risk.analyze for a dataset (before any
run), a result's published rows (after), or a file (manage.py risk).

The risk page computes in the request: distinction and separation are capped at WEB_COMBINATION_LIMIT
combinations and at WEB_ROW_EVALUATIONS (rows x combinations, one np.unique each) so that no request
runs long; a larger request is refused with the figures and a smaller choice to make. Adult's 8 QIs with
combinations of up to 3 QIs (92 combinations) take about 0.3 s.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd

from ..engine import InputError, Role, Table
from ..engine.measure.risk import Population, analyze, combination_count, population_model
from ..engine.model.hierarchy import ROOT
from ..models import Dataset, Result
from . import datasets, results, storage
from .runs import job_spec

RISK_CACHE_VERSION = 1  # raise when the figures' content changes

WEB_COMBINATION_LIMIT = 100
WEB_ROW_EVALUATIONS = 50_000_000
MAX_COMBINATION_SIZE = 4


def default_qi(dataset: Dataset) -> list[str]:
    """The columns marked quasi-identifying, in column order."""
    return [c.name for c in dataset.columns.order_by("position") if c.role == Role.QUASI_IDENTIFYING.value]


def population_for(n: int, model: str, sampling_fraction: float | None = None, region: str | None = None,
                   size: int | None = None, dataset: Dataset | None = None,
                   qi: list[str] | None = None) -> Population | None:
    """The population model chosen on the form: "none", "fraction", "region", "size" or "table" (another
    dataset of the same owner, read on the QI columns)."""
    if model == "table":
        if dataset is None:
            raise InputError("choose the population dataset")
        present = set(datasets.dataset_columns(dataset))
        missing = [q for q in qi or [] if q not in present]
        if missing:
            raise InputError(f"population {dataset.name}: no column {', '.join(map(repr, missing))}")
        return population_model(n, table=datasets.load_frame(dataset, columns=list(qi or [])))
    if model == "fraction":
        return population_model(n, sampling_fraction=sampling_fraction)
    if model == "region":
        return population_model(n, region=region)
    if model == "size":
        return population_model(n, size=size)
    return None


def check_budget(n_rows: int, n_qi: int, combinations: int) -> None:
    """Refuse a request whose distinction/separation would run long (see the module docstring)."""
    count = combination_count(n_qi, combinations)
    if count > WEB_COMBINATION_LIMIT:
        raise InputError(f"{count:,} combinations of up to {min(combinations, n_qi)} of {n_qi} QIs: at most "
                         f"{WEB_COMBINATION_LIMIT} on this page (choose a smaller size or fewer QIs; "
                         f"manage.py risk has no cap)")
    if count * n_rows > WEB_ROW_EVALUATIONS:
        raise InputError(f"{count:,} combinations over {n_rows:,} records is more than this page computes in a "
                         f"request ({WEB_ROW_EVALUATIONS:,} row evaluations): choose a smaller combination size "
                         f"(manage.py risk has no cap)")


def population_choices(dataset: Dataset) -> list[tuple[int, str]]:
    """The owner's other datasets (tables), offered as population tables."""
    others = Dataset.objects.filter(owner_id=dataset.owner_id).exclude(pk=dataset.pk).order_by("name")
    return [(d.pk, f"{d.name} ({d.n_rows:,} rows)") for d in others if getattr(d, "layout", "table") != "transactions"]


def owned_population(dataset: Dataset, options: dict) -> dict:
    """The form's options with the population dataset id turned into the owner's dataset (else refused)."""
    options = dict(options)
    pk = options.pop("dataset", None)
    if options.get("model") == "table":
        found = Dataset.objects.filter(pk=pk, owner_id=dataset.owner_id).exclude(pk=dataset.pk).first()
        if found is None:
            raise InputError("unknown population dataset")
        options["dataset"] = found
    return options


def dataset_risk(dataset: Dataset, qi: list[str], *, threshold: float, population: dict,
                 combinations: int) -> dict:
    """The figures of the dataset as uploaded; ``population``: the form's options (RiskForm.population_options)."""
    check_budget(dataset.n_rows, len(qi), combinations)
    frame = datasets.load_frame(dataset, columns=qi)
    options = owned_population(dataset, population)
    return analyze(frame, qi, threshold=threshold, population=population_for(len(frame), **options, qi=qi),
                   combinations=combinations)


def published_rows(result: Result) -> pd.DataFrame:
    """The rows a result publishes: suppressed rows only when the run published them ('*' rows)."""
    frame, suppressed = results.load_output(result)
    if not result.report.get("publishing", {}).get("suppressed_published"):
        frame = frame[~np.asarray(suppressed, dtype=bool)]
    return frame


def result_risk(result: Result, *, threshold: float, population: dict) -> dict:
    """The same figures before (the dataset's rows the run read) and after (the published rows), on the
    run's QIs; single QIs only for distinction and separation."""
    qi = [q for q in result.report.get("quasi_identifiers", [])]
    if not qi:
        raise InputError("this result has no quasi-identifiers to analyse")
    options = owned_population(result.job.dataset, population)
    # A result, its input and a population dataset never change: the figures of one set of options are kept
    # with the job's cached views (deleted with it), so a page seen again reads no million rows again.
    key = hashlib.sha256(json.dumps({"version": RISK_CACHE_VERSION, "qi": qi, "threshold": threshold,
                                     "population": population}, sort_keys=True, default=str).encode()).hexdigest()
    cache = storage.lattice_cache_dir(result.job) / f"risk-{key[:32]}.json"
    cached = storage.read_json(cache)
    if isinstance(cached, dict) and cached.get("quasi_identifiers") == qi:
        return cached
    before_frame = datasets.load_frame(result.job.dataset, columns=qi)
    after_frame = published_rows(result)
    missing = [q for q in qi if q not in after_frame.columns]
    if missing:
        raise InputError(f"the published table has no column {', '.join(map(repr, missing))} "
                         f"(this kind of result is not analysed per record)")
    before_population = population_for(len(before_frame), **options, qi=qi)
    before = analyze(before_frame, qi, threshold=threshold, population=before_population)
    # the published table is a sample of the same population as the input
    after = analyze(after_frame, qi, threshold=threshold, population=_published_population(
        result, before_population, qi, after_frame))
    figures = {"quasi_identifiers": qi, "before": before, "after": after}
    # what a cached read gives (JSON types), the first time too
    figures = json.loads(json.dumps(figures, default=storage.json_default))
    storage.write_json(cache, figures)
    if not Result.objects.filter(pk=result.pk).exists():  # deleted meanwhile: leave nothing of it
        storage.delete_names([storage.lattice_cache_name(result.job)])
    return figures


def _published_population(result: Result, population: Population | None, qi: list[str],
                          after: pd.DataFrame) -> Population | None:
    """The input's population for the published rows. A population table is generalized by the result's
    transformation (full-domain: every value to its ancestor at the level the run chose, in the run's
    hierarchies), so that each published class is counted among the population records it matches; otherwise
    (local or multidimensional recoding, values the hierarchies lack) only its size is used and the source
    says why. Published '*' rows (suppressed records kept) match every population record."""
    n = len(after)
    if population is None or n == 0:
        return population
    if population.table is None:
        return _resized(population, n)
    levels = result.report.get("transformation")
    if not levels or any(q not in levels for q in qi):
        return _resized(population, n, "the run's recoding is not one level per quasi-identifier")

    spec = job_spec(result.job)
    if not isinstance(spec.table, Table):  # a transaction dataset: no rows of QI values to generalize
        return _resized(population, n, "the run's input is not a table of rows")
    hierarchies = spec.table.hierarchies(spec.hierarchies)
    generalized = {}
    for q in qi:
        values = population.table[q].astype(str)
        h, level = hierarchies[q], int(levels[q])
        unknown = sorted(set(values.unique()) - set(h.leaf_index))
        if unknown:
            return _resized(population, n, f"the run's hierarchy of {q} lacks the population's value {unknown[0]!r}")
        labels = {v: h.ancestor(v, level) for v in values.unique()}
        generalized[q] = values.map(labels)
    table = pd.DataFrame(generalized)
    everything = (table == ROOT).all(axis=1)
    if (after[qi] == ROOT).all(axis=1).any() and not everything.all():
        # '*' rows (suppressed records kept) match every population record: their class counts all N
        table = pd.concat([table[~everything], pd.DataFrame({q: [ROOT] * population.size for q in qi})],
                          ignore_index=True)
    return Population(population.size, n / population.size,
                      f"{population.source}, generalized as the run generalized the input", table)


def _resized(population: Population, n: int, why: str | None = None) -> Population:
    """The input's population for a published table of ``n`` rows by its size only (a population table holds
    the original values, the published rows generalized ones: ``why`` the table could not be generalized)."""
    source = population.source if population.table is None else \
        f"{population.source} (after: its size only; {why or 'published values are generalized'})"
    return Population(population.size, n / population.size, source)
