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
from ..engine.measure.figure_catalogue import format_kind
from ..engine.measure.risk import Population, analyze, combination_count, population_model
from ..engine.measure.risk.classes import Classes, column_codes
from ..engine.measure.risk.persons import person_risks
from ..engine.model.hierarchy import ROOT
from ..engine.model.persons import Persons
from ..models import Dataset, Result
from . import datasets, results, storage
from .runs import job_spec

RISK_CACHE_VERSION = 2  # raise when the figures' content changes (2: the figures per person)

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
    report = analyze(frame, qi, threshold=threshold, population=population_for(len(frame), **options, qi=qi),
                     combinations=combinations)
    column = person_column(dataset)
    if column is not None:  # one person, several records: the figures per person beside those per record
        persons = Persons.of(datasets.load_frame(dataset, columns=[column])[column], column)
        report["per_person"] = per_person(frame, qi, persons.codes, column, threshold, options)
    return report


# ---- risk per person (definitions.md, "The unit counted: the person", Risk per person) -------------------------
def person_column(dataset: Dataset) -> str | None:
    """The dataset's person-id column (role "person id"), None without one."""
    found = [c.name for c in dataset.columns.order_by("position") if c.role == Role.PERSON.value]
    return found[0] if len(found) == 1 else None


def per_person(frame: pd.DataFrame, qi: list[str], person: np.ndarray, column: str, threshold: float,
               options: dict, population_size: int | None = None) -> dict:
    """engine.measure.risk.persons.person_risks of ``frame``'s rows (``person``: each row's person code) on the
    QIs, with the population of the form counted in people: a sampling fraction (N = persons / π), a region or a
    population size; a population table holds records, not persons, and gives no figure per person.
    ``population_size``: the people already derived (a result's published rows: a sample of the same people)."""
    row_class = Classes.of(column_codes(frame, qi)).class_of_row
    model = options.get("model")
    fraction = options.get("sampling_fraction") if model == "fraction" and population_size is None else None
    size = population_size
    if size is None and model in ("region", "size"):
        size = population_for(len(frame), **options, qi=qi).size  # type: ignore[union-attr]
    figures = person_risks(row_class, person, threshold, population_size=size, sampling_fraction=fraction)
    figures["column"] = column
    figures["rows"] = person_rows(figures)
    if model == "table":
        figures["population_note"] = "a population table counts records, not persons: no population figure per person"
    return figures


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
    column = (result.report.get("persons") or {}).get("column") or person_column(result.job.dataset)
    if column is not None:
        figures["per_person"] = _result_per_person(result, column, qi, threshold, options, before_frame, after_frame)
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


# (key, label, kind, how it is computed) of the figures per person, in the order the pages list them
PERSON_FIGURES = (
    ("persons", "Persons", "count", "distinct person ids among the rows analysed (a blank id is a person of its own)"),
    ("equivalence_classes", "Equivalence classes", "count", "classes on the quasi-identifiers"),
    ("min_class_persons", "Smallest class, in persons", "count", "the fewest distinct persons in a class"),
    ("persons_in_several_classes", "Persons in several classes", "count",
     "persons whose records fall in more than one class"),
    ("sample_uniques", "Sample uniques per person", "count",
     "persons no other person shares all their classes with"),
    ("prosecutor_risk_highest", "Highest prosecutor risk per person", "risk",
     "max over persons of 1 / |{q : S(p) ⊆ S(q)}|, S(p) the classes of p's records"),
    ("prosecutor_risk_average", "Average prosecutor risk per person", "risk", "the mean of that risk over persons"),
    ("persons_at_risk_share", "Persons at risk", "share", "share of persons whose risk is above the threshold"),
    ("marketer_risk", "Marketer risk per person", "risk", "distinct sets of classes S(p) / persons"),
    ("journalist_risk_highest", "Highest journalist risk per person", "risk",
     "1 / the persons sharing p's classes in the population, estimated as that count / the sampling fraction"),
    ("journalist_risk_average", "Average journalist risk per person", "risk", "the mean of that risk over persons"),
)


def person_rows(figures: dict, after: dict | None = None) -> list[dict]:
    """The figures per person as rows of text (``after``: a second column), worded and formatted once for the
    risk pages; journalist rows only with a population, the population uniques when they were estimated."""
    sides = [figures] if after is None else [figures, after]
    rows = [{"key": key, "label": label, "help": help_, "values": [format_kind(kind, side.get(key)) for side in sides]}
            for key, label, kind, help_ in PERSON_FIGURES if key in figures]
    if "population_uniqueness" in figures:
        rows.append({"key": "population_uniques", "label": "Population uniques per person (Dankar's choice)",
                     "help": "the population uniqueness estimators on the class sizes counted in persons",
                     "values": [_uniques_text(side) for side in sides]})
    return rows


def _uniques_text(side: dict) -> str:
    chosen = (side.get("population_uniqueness") or {}).get("dankar") or {}
    if chosen.get("uniques") is None:
        return "did not converge" if chosen else "—"
    return f"{format_kind('amount', chosen['uniques'])} ({format_kind('share', chosen.get('share'))})"


def _result_per_person(result: Result, column: str, qi: list[str], threshold: float, options: dict,
                       before: pd.DataFrame, after: pd.DataFrame) -> dict:
    """The figures per person before (the dataset's rows) and after (the published rows, each traced to its
    dataset row, whose person it is: the published table has no person id)."""
    dataset = result.job.dataset
    if column not in datasets.dataset_columns(dataset):
        return {"column": column, "unavailable": f"the dataset has no column {column!r}"}
    persons = Persons.of(datasets.load_frame(dataset, columns=[column])[column], column)
    out: dict = {"column": column, "before": per_person(before, qi, persons.codes, column, threshold, options)}
    rows = _published_dataset_rows(result)
    if rows is None or len(rows) != len(after) or (len(rows) and (rows.min() < 0 or rows.max() >= len(before))):
        out["unavailable"] = "this result does not store the dataset row of each published row"
        return out
    size = (out["before"].get("population") or {}).get("size")
    out["after"] = per_person(after, qi, persons.codes[rows], column, threshold, options, population_size=size)
    out["rows"] = person_rows(out["before"], out["after"])
    return out


def _published_dataset_rows(result: Result) -> np.ndarray | None:
    """The dataset row of each row published_rows gives (suppressed rows left out unless the run published
    them), None when the result did not store them."""
    path = storage.output_path(result)
    if results.ROW_COLUMN not in storage.stored_columns(path):
        return None
    stored = storage.read_frame(path, columns=[results.ROW_COLUMN, results.SUPPRESSED_COLUMN])
    rows = stored[results.ROW_COLUMN].to_numpy(dtype=np.int64)
    if not result.report.get("publishing", {}).get("suppressed_published"):
        rows = rows[~stored[results.SUPPRESSED_COLUMN].to_numpy(dtype=bool)]
    return rows
