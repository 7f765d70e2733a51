"""The algorithm registry: forms, the CLI and the API list and validate algorithms from here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Union

from ..errors import InputError
from ..privacy import Parameter
from .base import CellRecoding, FullDomainRecoding, Problem, PublishedClasses

if TYPE_CHECKING:
    from .anatomy import AnatomyRecoding
    from .m_invariance import MInvarianceRecoding

# what an algorithm's run returns: levels per QI, cells per record, Anatomy's groups or an m-invariant release
Recoding = Union[FullDomainRecoding, CellRecoding, "AnatomyRecoding", "MInvarianceRecoding"]

__all__ = ["ALGORITHMS", "AlgorithmInfo", "FullDomainRecoding", "Problem", "PublishedClasses", "get_algorithm",
           "register"]


@dataclass(frozen=True)
class AlgorithmInfo:
    name: str
    label: str
    summary: str
    run: Callable[[Problem], Recoding]
    models: tuple[str, ...]  # privacy models it can honour
    recoding: str = "full-domain"  # full-domain, multidimensional, local
    optimal: bool = False
    options: tuple[Parameter, ...] = field(default_factory=tuple)
    reference: str = ""
    # The algorithm's own guarantee beyond the run's models (e.g. MHA's Jensen-Shannon bound), checked by
    # the publishing gate on the published classes; raises VerificationError naming the breach.
    check_published: Callable[[PublishedClasses], None] | None = None
    # The algorithm suppresses by its own rule, with no limit (SafePub: every class below k, whatever their
    # number); the run's suppression limit does not apply and is taken as 1.
    decides_suppression: bool = False
    # A release of a sequence (m-invariance): it needs RunSpec.republication (the history, the record ids), so
    # it runs from the CLI's --history and from release policies, not from the one-off run and compare forms.
    republishes: bool = False

    def __post_init__(self) -> None:
        # a model that names the only algorithms that may honour it ((ε,δ)-DP: SafePub) is not listed by others,
        # whatever they were registered with (many take ``tuple(PRIVACY_MODELS)``)
        from ..privacy import PRIVACY_MODELS

        def allowed(model: str) -> bool:
            only = getattr(PRIVACY_MODELS.get(model), "algorithms", None)
            return only is None or self.name in only

        object.__setattr__(self, "models", tuple(m for m in self.models if allowed(m)))


ALGORITHMS: dict[str, AlgorithmInfo] = {}


def register(info: AlgorithmInfo) -> AlgorithmInfo:
    ALGORITHMS[info.name] = info
    return info


def get_algorithm(name: str) -> AlgorithmInfo:
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise InputError(f"unknown algorithm {name!r}; available: {', '.join(sorted(ALGORITHMS))}") from None


# Registration happens on import of each algorithm module.
from . import (  # noqa: E402,F401
    anatomy,
    datafly,
    disk_clustering,
    exhaustive,
    fixed,
    flash,
    incognito,
    kmember,
    koptimize,
    m_invariance,
    mha,
    mondrian,
    oka,
    safepub,
    samarati,
)
