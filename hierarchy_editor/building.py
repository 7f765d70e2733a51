"""The automatic builders for a dataset column, as the builder page and the HTTP API use them: which builder,
its form with defaults from the column's data, and the build (engine.model.builders)."""

from __future__ import annotations

import pandas as pd
from django.conf import settings
from django.http import Http404

from anonymizer_app.engine import Hierarchy as ParsedHierarchy
from anonymizer_app.engine import HierarchyError, InputError
from anonymizer_app.engine.model.builders import BUILDERS, MAX_INTERVALS
from anonymizer_app.engine.model.defaults import default_builder
from anonymizer_app.models import Column

from .forms import BuilderForm

GUESS_BY_TYPE = {"integer": "intervals", "decimal": "intervals", "date": "dates"}  # without the data at hand


def max_builder_intervals() -> int:
    """The cap on the intervals one builder may lay (setting HIERARCHY_BUILDER_MAX_INTERVALS)."""
    return int(getattr(settings, "HIERARCHY_BUILDER_MAX_INTERVALS", MAX_INTERVALS))


def builder_for(key: str | None, column: Column, values: pd.Series | None = None):
    """(key, builder) of the builder asked for; none asked: the builder of the column's default hierarchy
    (engine.model.defaults), so that the first preview shows what the column page shows. Unknown: 404."""
    if key in BUILDERS:
        return key, BUILDERS[key]
    if key:
        raise Http404(f"no builder {key!r}")
    if values is not None:
        guess = default_builder(values, column.type)[0]
    else:
        guess = GUESS_BY_TYPE.get(column.type, "grouping")
    key = guess if guess in BUILDERS else next(iter(BUILDERS))
    return key, BUILDERS[key]


def builder_form(builder, column: Column, values: pd.Series, data=None) -> BuilderForm:
    """The builder's form with defaults from the data; none when the builder cannot use the column."""
    defaults = {} if builder.refusal(column.name, values) else builder.defaults(values)
    return BuilderForm(data, builder=builder, defaults=defaults)


def build(builder, form: BuilderForm, name: str, values: pd.Series) -> tuple[ParsedHierarchy | None, str]:
    """(hierarchy, "") for a bound builder form, else (None, why): a column the builder cannot use is named
    first, then the form's errors by field label, then the builder's own refusal."""
    refused = builder.refusal(name, values)
    if refused:
        return None, refused
    if not form.is_valid():
        return None, "; ".join(f"{form.fields[k].label if k in form.fields else 'Options'}: {' '.join(map(str, v))}"
                               for k, v in form.errors.items())
    try:
        return builder.run(name, values, form.cleaned_data["options"], max_builder_intervals()), ""
    except (HierarchyError, InputError) as exc:
        return None, str(exc)
