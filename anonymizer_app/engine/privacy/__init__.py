"""Privacy models: one module per model family, one registry.

A model is one class in one module (see :mod:`.base` for what a class declares: parameters, check,
monotonicity, card, summary, how the run form and the command line offer it); adding one is that
module plus an entry in ``PRIVACY_MODELS`` below. The run form (``forms.RunForm``) and the CLI flags
(``management/model_flags.py``) are generated from this registry. Everything reads the registry when
called (never a copy made at import: the algorithms' ``AlgorithmInfo.models``, the forms, the CLI, the API), so
a model registered later is offered, accepted and checked by all of them.
"""

from __future__ import annotations

from ..errors import InputError
from .alpha_k import AlphaKAnonymity
from .average_risk import AverageRisk, average_risk
from .base import EPS, ModelGroup, Parameter, PrivacyModel, SensitiveModel, shares
from .beta_likeness import BetaLikeness
from .delta_disclosure import DeltaDisclosure
from .delta_presence import MARKER_IN, MARKER_OUT, DeltaPresence, parse_marker
from .differential_privacy import EDDifferentialPrivacy
from .k_anonymity import KAnonymity
from .k_map import KMap
from .k_map_table import KMapPopulationTable
from .l_diversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity
from .m_invariance import MInvariance
from .population_uniqueness import PopulationUniqueness
from .t_closeness import DISTANCES, TCloseness, emd_equal, emd_hierarchical, emd_ordered

PRIVACY_MODELS: dict[str, type[PrivacyModel]] = {
    m.name: m for m in (KAnonymity, DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity, TCloseness,
                        BetaLikeness, DeltaPresence, AlphaKAnonymity, DeltaDisclosure, AverageRisk, KMap,
                        KMapPopulationTable, PopulationUniqueness, EDDifferentialPrivacy, MInvariance)
}


def sensitive_models() -> tuple[str, ...]:
    """The names of the models on a sensitive column's values, read from the registry when called."""
    return tuple(n for n, m in PRIVACY_MODELS.items() if m.needs_sensitive)


def make_model(name: str, **params) -> PrivacyModel:
    """A model from its registry name and parameters (forms, CLI)."""
    try:
        cls = PRIVACY_MODELS[name]
    except KeyError:
        raise InputError(f"unknown privacy model {name!r}; available: {', '.join(PRIVACY_MODELS)}") from None
    return cls(**params)


def check_feasible(models: list[PrivacyModel], n_records: int, columns: dict, suppression_limit: float) -> None:
    """Refuse, before any run, a model no anonymization of the table can satisfy (each model's own
    ``infeasible``: k above the records, l above the distinct values, ...). ``columns``: the values of the
    models' columns by name (a model whose column is missing is left to the later checks)."""
    for m in models:
        column = getattr(m, "column", None)
        values = columns.get(column) if column is not None else None
        if column is not None and values is None:
            continue
        why = m.infeasible(n_records, values, suppression_limit)
        if why:
            raise InputError(why)


def research_models(models: list[PrivacyModel]) -> list[PrivacyModel]:
    """The models that need the table split into a population and the research subset published from it
    (δ-presence, k-map against a population table): those whose ``column_source`` is "research"."""
    return [m for m in models if m.column_source == "research"]


def research_column(models: list[PrivacyModel]) -> str | None:
    """The marker column of the research subset within the population (None: the whole table is published).
    The models on the research subset must all name the same one."""
    columns = list(dict.fromkeys(m.column for m in research_models(models)))
    if len(columns) > 1:
        raise InputError(f"{' and '.join(m.describe() for m in research_models(models))} mark the research subset "
                         f"with different columns ({', '.join(map(repr, columns))}): use one")
    return columns[0] if columns else None


def model_groups(registry: dict[str, type[PrivacyModel]] | None = None) -> list[ModelGroup]:
    """The models offered beside k, grouped as the run form and the CLI show them (registry order; read
    when called, so a model registered later is offered too)."""
    by_key: dict[str, list[type[PrivacyModel]]] = {}
    for cls in (PRIVACY_MODELS if registry is None else registry).values():
        if cls.group is not None:
            by_key.setdefault(cls.group, []).append(cls)
    groups = [ModelGroup(key, tuple(models)) for key, models in by_key.items()]
    for g in groups:
        g.check()
    return groups


__all__ = [
    "DISTANCES", "MARKER_IN", "MARKER_OUT", "PRIVACY_MODELS", "EPS", "AlphaKAnonymity",
    "AverageRisk", "BetaLikeness", "DeltaDisclosure", "average_risk",
    "DeltaPresence", "DistinctLDiversity", "EDDifferentialPrivacy", "EntropyLDiversity", "KAnonymity", "KMap", "KMapPopulationTable", "MInvariance", "ModelGroup", "Parameter",
    "PopulationUniqueness", "PrivacyModel", "RecursiveCLDiversity", "TCloseness", "SensitiveModel", "emd_equal", "emd_hierarchical",
    "emd_ordered", "make_model", "model_groups", "sensitive_models", "research_column", "research_models", "check_feasible", "parse_marker", "shares",
]
