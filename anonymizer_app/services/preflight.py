"""Pre-flight checks of a run before it is queued: every problem the run form can find on the dataset's
values, each with the field it belongs to and a message that says what to change.

- k above the records (lower k to at most N), or, with a person id, above the persons;
- a bound hierarchy that does not cover every value of its quasi-identifier (the values named, and where to
  fix it);
- a privacy model no table can satisfy on its column (l above the distinct values, an entropy the column
  cannot reach, ...: the model's own ``infeasible``), with the largest value that can be met.
- a column that looks like a direct identifier (a name, a patient id, e-mails, ...: a high-confidence
  suggestion of engine/model/identifier_detection/) left insensitive or sensitive, so published as it is,
  and not confirmed in ``publish_as_is``: set its role, or confirm it.

Every hierarchy ends in one value (the engine adds a root '*' to a file that does not), so at the top of
every hierarchy the whole table is one class: a run that passes these checks has a solution, and a search
cannot fail on k alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import engine
from ..engine import HierarchyError, InputError, Role
from ..engine.model.persons import Persons
from ..models import Dataset
from . import datasets, identifier_suggestions
from .dicom import check_roles
from .jobs import build_models


@dataclass(frozen=True)
class Problem:
    """One pre-flight finding: the run form's field it concerns (None: the form as a whole) and what to do."""

    field: str | None
    message: str

    def to_dict(self) -> dict:
        return {"field": self.field, "message": self.message}


def _model_field(spec: dict, field: str) -> str:
    # the run form's name of a model's field (forms.model_field_name): the group key of the model's class
    cls = engine.privacy.PRIVACY_MODELS.get(spec.get("model", ""))
    return f"model:{getattr(cls, 'group', None) or spec.get('model', '')}:{field}"


def check_run(dataset: Dataset, algorithm: str, k: int, suppression_limit: float,
              models: list[dict] | None = None, publish_as_is: Iterable[str] = ()) -> list[Problem]:
    """Every problem found (empty: the run may be queued). Parameters the engine refuses outright (k < 1,
    an unknown algorithm) are left to the job's own validation, whose message is the engine's.
    ``publish_as_is``: the columns the user confirmed to publish as they are although they look identifying."""
    problems: list[Problem] = []
    n = dataset.n_rows
    if n and k > n:
        problems.append(Problem("k", f"k={k} is larger than the dataset's {n} records: lower k to at most {n}"))
    else:
        problems += _persons(dataset, k)
    problems += _coverage(dataset)
    try:
        built = build_models(models)
    except (InputError, TypeError):
        built = []  # bad parameters: the job's validation names them
    problems += _models(dataset, built, models or [], suppression_limit)

    problems += [Problem(None, message) for message in check_roles(dataset)]
    problems += identifier_holds(dataset, publish_as_is)
    return problems


def _persons(dataset: Dataset, k: int) -> list[Problem]:
    """With a person id every class must hold k persons: k above the dataset's persons cannot be met."""
    columns = [c.name for c in dataset.columns.all() if c.role == Role.PERSON.value]
    if len(columns) != 1 or dataset.is_transactions:
        return []  # none, or several: the job's validation names them
    column = columns[0]
    persons = Persons.of(datasets.load_frame(dataset, columns=[column])[column], column).count
    if k > persons:
        return [Problem("k", f"k={k} is larger than the dataset's {persons:,} persons (person id {column!r}): "
                             f"lower k to at most {persons:,}")]
    return []


def identifier_holds(dataset: Dataset, publish_as_is: Iterable[str] = ()) -> list[Problem]:
    """One problem per high-confidence identifier the run would publish as it is, unconfirmed."""
    held = identifier_suggestions.held(dataset, publish_as_is, datasets.stored_table(dataset)) \
        if not dataset.is_transactions else []
    return [Problem(identifier_suggestions.CONFIRM_FIELD, identifier_suggestions.hold_message(s)) for s in held]


def _bound_hierarchies(dataset: Dataset) -> dict:
    """The engine hierarchies bound to the dataset's quasi-identifiers (the defaults are built from the data
    and cover it by construction)."""
    config = datasets.dataset_config(dataset)
    return datasets.hierarchies_from_config(dataset.owner, config)


def _coverage(dataset: Dataset) -> list[Problem]:
    problems = []
    try:
        hierarchies = _bound_hierarchies(dataset)
    except (HierarchyError, InputError) as exc:
        return [Problem(None, f"{exc}: fix the hierarchy on the columns page or bind another one")]
    for column, h in hierarchies.items():
        values = datasets.distinct_values(dataset, column)
        try:
            h.encode(values.astype(str), column)  # the engine's own test, on the distinct values only
        except HierarchyError as exc:
            problems.append(Problem(None, f"{exc}. Add the missing values to the hierarchy (the tree editor lists "
                                          f"them), bind a hierarchy that covers them, or use the default one for "
                                          f"{column!r} on the columns page"))
    return problems


def _models(dataset: Dataset, built: list, specs: list[dict], suppression_limit: float) -> list[Problem]:
    problems = []
    columns = {c.name: c for c in dataset.columns.all()}
    for model, spec in zip(built, specs):
        column = getattr(model, "column", None)
        if column is None or column not in columns or columns[column].role in (
                Role.QUASI_IDENTIFYING.value, Role.IDENTIFYING.value):
            continue  # no column, or a wrong one: the job's validation says which
        values = datasets.load_frame(dataset, columns=[column])[column]
        try:
            why = model.infeasible(dataset.n_rows, values, suppression_limit)
        except InputError as exc:  # values the model cannot read (a research marker that is not 0/1)
            problems.append(Problem(_model_field(spec, "column"), str(exc)))
            continue
        if why:
            problems.append(Problem(_model_field(spec, _main_parameter(model)),
                                    f"{why}. {_model_fix(model, values, suppression_limit)}"))
    return problems


def _main_parameter(model) -> str:
    """The field the message is shown at: l for l-diversity, else the model's first parameter."""
    names = [p.name for p in model.parameters]
    return "l" if "l" in names else (names[0] if names else "enabled")


def _model_fix(model, values: pd.Series, suppression_limit: float) -> str:
    """What to change for an infeasible model: the largest parameter the column allows, when it is known."""
    distinct = int(values.nunique(dropna=False))
    name = getattr(model, "name", "")
    if name.endswith("l-diversity"):
        top = distinct
        if name == "entropy-l-diversity" and suppression_limit <= 0:
            shares = values.value_counts(normalize=True, dropna=False).to_numpy(dtype=float)
            top_entropy = math.exp(float(-(shares * np.log(shares)).sum()))
            return (f"Lower l to at most {math.floor(top_entropy * 1000) / 1000:g} (the column's entropy is "
                    f"ln {top_entropy:.4g}), allow some suppression, or protect a column with more varied values")
        return f"Lower l to at most {top}, or protect a column with at least l distinct values"
    if name == "alpha-k-anonymity":
        share = float(values.astype(str).value_counts(normalize=True).iloc[0])
        return f"Raise α to at least {math.ceil(share * 1000) / 1000:g}, or allow some suppression"
    if name == "delta-presence":
        return "Widen [δmin, δmax] to hold the research subset's share, or allow some suppression"
    return "Change its parameters or allow some suppression"
