"""What the hierarchy pages share: owner-scoped lookups of a dataset column, its URLs and default names, and
the summaries a page shows of a parsed hierarchy (levels with a sample of labels, contradictory rows).

Pages only render samples: a city hierarchy has ~18,000 leaves, so levels show counts and a few labels, never
every leaf."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.urls import reverse

from anonymizer_app.engine import Hierarchy as ParsedHierarchy
from anonymizer_app.models import Column, Dataset

from ..models import fit_name

LABEL_SAMPLE = 8  # labels shown per level
VALUE_SAMPLE = 10  # most frequent data values shown with their labels at every level
LISTED = 20  # uncovered or ambiguous values listed before "and N more"
LEAF_ROWS = 15  # leaves shown with their full path on the detail page
CONFLICT_LINES = 6  # line numbers shown per ambiguous value
CONFLICT_PATHS = 4  # paths shown per ambiguous value


def column_for(request, dataset_id: int, column_id: int) -> tuple[Dataset, Column]:
    """The user's dataset and its column; another user's (or none) is a 404."""
    dataset = get_object_or_404(Dataset, pk=dataset_id, owner=request.user)
    column = get_object_or_404(Column.objects.select_related("hierarchy"), pk=column_id, dataset=dataset)
    return dataset, column


def column_url(column: Column) -> str:
    return reverse("hierarchies:column", args=[column.dataset_id, column.pk])


def default_name(dataset: Dataset, column: Column) -> str:
    """The library name offered for a hierarchy of this column."""
    return fit_name(f"{column.name} ({dataset.name})")


def leaf_labels(parsed: ParsedHierarchy, leaf: int) -> list[str]:
    """A leaf's label at every level, the leaf first."""
    return [str(parsed.labels[lv][parsed.maps[lv][leaf]]) for lv in range(parsed.level_count)]


def frequent_values(parsed: ParsedHierarchy, counts) -> list[dict]:
    """The VALUE_SAMPLE most frequent values (``counts``: a value_counts series, most frequent first), each with
    its labels at every level (None for a value the hierarchy does not cover)."""
    index = parsed.leaf_index
    out = []
    for value, n in counts.head(VALUE_SAMPLE).items():
        leaf = index.get(str(value))
        out.append({"value": str(value), "count": int(n),
                    "labels": None if leaf is None else leaf_labels(parsed, leaf)})
    return out


def levels(parsed: ParsedHierarchy) -> list[dict]:
    """Per level: number of labels and a sample of them, with the number of leaves under each."""
    return [_level(parsed, item) for item in parsed.level_summary(LABEL_SAMPLE)]


def _level(parsed: ParsedHierarchy, item: dict) -> dict:
    level, count = item["level"], item["count"]
    sample: list[tuple[str, int | None]]
    if level == 0:
        sample = [(label, None) for label in item["sample"]]
    else:
        counts = parsed.leaf_counts(level)
        sample = [(str(parsed.labels[level][i]), int(counts[i])) for i in range(min(LABEL_SAMPLE, count))]
    name = "original values" if level == 0 else ("root" if level == parsed.height else "")
    return {"level": level, "count": count, "sample": sample, "more": max(0, count - LABEL_SAMPLE), "name": name}


def conflicts(found, data_values: set | None = None) -> dict:
    """The contradictory rows of a file (the first LISTED), and those among the column's data values."""
    found = list(found or [])
    in_data = [c.value for c in found if data_values is not None and c.value in data_values]
    return {
        "count": len(found),
        "shown": [_conflict(c) for c in found[:LISTED]],
        "more": max(0, len(found) - LISTED),
        "in_data": in_data[:LISTED],
        "in_data_count": len(in_data),
        "in_data_more": max(0, len(in_data) - LISTED),
    }


def _conflict(c) -> dict:
    lines = ", ".join(map(str, c.lines[:CONFLICT_LINES]))
    if len(c.lines) > CONFLICT_LINES:
        lines += f" … ({len(c.lines)} lines)"
    return {"value": c.value, "lines": lines, "paths": [" → ".join(p) for p in c.paths[:CONFLICT_PATHS]],
            "more_paths": max(0, len(c.paths) - CONFLICT_PATHS)}
