"""The algorithm registry: forms, the CLI and the API list and validate algorithms from here.

An algorithm is one module that registers an ``AlgorithmInfo`` (algorithms/base.py: the registry itself, so that
a module imports base, never this package) plus its import at the foot of this file."""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

from .base import (
    ALGORITHMS,
    SUPPORT_FLAGS,
    AlgorithmInfo,
    CellRecoding,
    FullDomainRecoding,
    Problem,
    PublishedClasses,
    check_person_level,
    get_algorithm,
    register,
    supporting,
    supports,
)

if TYPE_CHECKING:
    from .anatomy import AnatomyRecoding
    from .m_invariance import MInvarianceRecoding

# what an algorithm's run returns: levels per QI, cells per record, Anatomy's groups or an m-invariant release
Recoding = Union[FullDomainRecoding, CellRecoding, "AnatomyRecoding", "MInvarianceRecoding"]

__all__ = ["ALGORITHMS", "SUPPORT_FLAGS", "AlgorithmInfo", "CellRecoding", "FullDomainRecoding", "Problem",
           "PublishedClasses", "Recoding", "check_person_level", "get_algorithm", "register", "supporting",
           "supports"]

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
