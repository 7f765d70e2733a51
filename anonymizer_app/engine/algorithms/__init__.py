"""The algorithm registry: forms, the CLI and the API list and validate algorithms from here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Union

from ..errors import InputError
from ..privacy import PRIVACY_MODELS, Parameter
from .base import CellRecoding, FullDomainRecoding, Problem, PublishedClasses

if TYPE_CHECKING:
    from .anatomy import AnatomyRecoding
    from .m_invariance import MInvarianceRecoding

# what an algorithm's run returns: levels per QI, cells per record, Anatomy's groups or an m-invariant release
Recoding = Union[FullDomainRecoding, CellRecoding, "AnatomyRecoding", "MInvarianceRecoding"]

__all__ = ["ALGORITHMS", "SUPPORT_FLAGS", "AlgorithmInfo", "FullDomainRecoding", "Problem", "PublishedClasses",
           "check_person_level", "get_algorithm", "register", "supporting", "supports"]


@dataclass(frozen=True)
class AlgorithmInfo:
    """An algorithm as every part of the product reads it: the run, the forms, the CLI, the API, the pages.

    What it supports is said here, never in a list kept elsewhere: ``lattice`` (the lattice page, the solution
    lattice, the metric advice), ``cluster`` (a Dask cluster run), ``out_of_core`` (the streamed run of a table
    larger than memory), ``person_level`` (counting people, not records, when one person has several records);
    ``honours`` the privacy models it takes (None: every model of the registry, read when asked, so a model
    registered later is taken too). A new algorithm is its module plus its import at the foot of this file."""

    name: str
    label: str
    summary: str
    run: Callable[[Problem], Recoding]
    # the privacy models it can honour by name; None: every model of PRIVACY_MODELS, read at call time (models)
    honours: tuple[str, ...] | None = None
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
    # A search of the full-domain generalization lattice that can keep it (keep_lattice, metric): the run's
    # lattice page, the solution lattice (search/solution_lattice.py) and the metric advice apply.
    lattice: bool = False
    # Runs on a Dask cluster, searched on the merged frequency set of the partitions (backends/dask).
    cluster: bool = False
    # Runs out of core, a table larger than memory streamed in chunks with k alone: backends/out_of_core.py,
    # whose streamed stages (chunks stored on disk, clustered bucket by bucket) are the disk hybrid's.
    out_of_core: bool = False
    # Counts people, not records, when one person has several records; until an algorithm says so a run
    # asking for person-level counting refuses it by name (check_person_level).
    person_level: bool = False

    @property
    def models(self) -> tuple[str, ...]:
        """The privacy models it takes, read from the registry now. A model that names the only algorithms
        that may honour it ((ε,δ)-DP: SafePub; m-invariance) is left out of the others'."""
        names = tuple(PRIVACY_MODELS) if self.honours is None else self.honours

        def allowed(model: str) -> bool:
            only = getattr(PRIVACY_MODELS.get(model), "algorithms", None)
            return only is None or self.name in only

        return tuple(m for m in names if allowed(m))


ALGORITHMS: dict[str, AlgorithmInfo] = {}
SUPPORT_FLAGS = ("lattice", "cluster", "out_of_core", "person_level")


def register(info: AlgorithmInfo) -> AlgorithmInfo:
    ALGORITHMS[info.name] = info
    return info


def get_algorithm(name: str) -> AlgorithmInfo:
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise InputError(f"unknown algorithm {name!r}; available: {', '.join(sorted(ALGORITHMS))}") from None


def supporting(flag: str) -> tuple[str, ...]:
    """The names of the registered algorithms whose ``flag`` (lattice, cluster, out_of_core, person_level) is
    set, in registry order; read when called, so an algorithm registered later is counted too."""
    if flag not in SUPPORT_FLAGS:
        raise ValueError(f"{flag!r} is not one of {', '.join(SUPPORT_FLAGS)}")
    return tuple(name for name, info in ALGORITHMS.items() if getattr(info, flag))


def supports(name: str, flag: str) -> bool:
    """Does the algorithm ``name`` support ``flag``? False for an unknown name."""
    info = ALGORITHMS.get(name)
    return info is not None and bool(getattr(info, flag))


def check_person_level(info: AlgorithmInfo, person_level: bool) -> None:
    """Refuse, naming the algorithm, a run that counts people (not records) with an algorithm that does not."""
    if person_level and not info.person_level:
        able = ", ".join(supporting("person_level")) or "none yet"
        raise InputError(f"{info.label} counts records, not people; person-level counting is done by: {able}")


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
