"""The report of a run as a value: the Report the report builders (engine/run/report.py) make once and
nobody changes afterwards, and the keys its JSON has."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping, TypedDict

from .result import json_default


class ModelCheck(TypedDict):
    model: str
    label: str
    describe: str
    column: str | None
    parameters: dict
    value: Any
    value_label: str
    failing_classes: int
    holds: bool


def model_check(verdict: Any) -> ModelCheck:
    """A model's entry in model_checks from its verdict on the classes it counts (research.Verdict: the model, its
    failing classes, the class sizes, the sensitive counts and domain)."""
    m = verdict.model
    card = m.card(verdict.sizes, verdict.counts, verdict.domain) if verdict.domain is not None else m.card(verdict.sizes)
    bad = int(verdict.failing.sum())
    return ModelCheck(model=m.name, label=m.label, describe=m.describe(), column=m.column, parameters=m.to_dict(),
                      value=card["value"], value_label=card["value_label"], failing_classes=bad, holds=bad == 0)


class ReportKeys(TypedDict, total=False):
    """The keys of a run's report (JSON), as stored with a result and written by the CLI."""

    algorithm: str
    models: list[dict]
    k: int
    suppression_limit: float
    quasi_identifiers: list[str]
    sensitive: str | None
    k_achieved: int
    equivalence_classes: int
    min_class_size: int
    suppressed: int
    records: int  # rows published
    input_records: int  # rows of the input (the population with δ-presence)
    recoding: str
    transformation: dict[str, int] | None
    metrics: dict
    metrics_before: dict
    options: dict
    search: dict
    steps: list[dict]
    notes: list[str]
    class_size_histogram: dict[str, int]
    transformation_labels: dict[str, str]
    identifying_removed: list[str]
    verified: bool
    seconds: float
    attack: dict
    sensitive_table: list[dict]
    model_checks: list[ModelCheck]
    value_counts: dict
    publishing: dict
    research_subset: dict
    guarantee: str
    set_column: dict  # a table's set-valued column (mixed mode): its k^m figures and rules
    # a transaction dataset (kind "set-valued"): k^m figures, rules, item losses (build_set_report)
    kind: str
    m: int
    layout: dict
    items: int
    item_occurrences: int
    records_with_repeated_items: int
    repeated_items_rule: str
    generalization_rules: dict[str, list[str]]
    suppressed_items: list[str]
    rounds: int
    item_loss: dict[str, float]
    hierarchy_rows: list[list[str]]
    risk: dict  # engine.measure.risk.sample_risks of the published classes (not for Anatomy)
    frequent_itemsets: dict  # the top itemsets of at most min(m, 2) items before and after, with supports
    # with a person id: the run's persons (column, adversary, persons, suppressed, published, blank ids), the
    # published classes in persons (smallest, its records, histogram), model_checks per person, risk per person
    persons: dict
    # a full-domain run's figures per QI (measure.metrics.attribute_figures): level, loss, NCP, height, shares
    attributes: list[dict]
    # SDC methods after the recoding (engine/run/sdc.py): each step's parameters, figures, changed cells and the
    # gate's recount of its guarantee, or the sentence that a perturbation gives no k guarantee
    sdc: dict


@dataclass(frozen=True)
class Report:
    """A run's report, built once by a report builder (build_report, build_set_report, the out-of-core and
    cluster backends' builders through publication_sections) and never changed afterwards: ``sections``
    holds the JSON keys (ReportKeys) in the order the stored report lists them, read-only. Whoever needs
    the JSON (the stored job result, the CLI, the API) takes ``to_dict()``, a fresh copy."""

    sections: Mapping[str, Any]

    @classmethod
    def of(cls, sections: Mapping[str, Any]) -> Report:
        """The report of these sections, as JSON values (numpy scalars and arrays as plain numbers and lists)."""
        return cls(MappingProxyType(json.loads(json.dumps(dict(sections), default=json_default))))

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON: the same keys in the same order, a copy the caller may change."""
        return copy.deepcopy(dict(self.sections))
