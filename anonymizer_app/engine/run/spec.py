"""The run specification: everything one anonymization run needs, built by every entry point.

The web job, the CLI, the solution lattice (evaluate, show and keep a node), the comparison, the
experiment and the API all describe their run as one :class:`RunSpec` and hand it to
:func:`.pipeline.run`; none of them assembles an output table or a report by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

import pandas as pd

from ..backends.dask.source import ParquetTable
from ..errors import InputError
from ..model.hierarchy import Hierarchy
from ..model.persons import check_adversary
from ..model.table import Role, Table
from ..privacy import KAnonymity, Parameter, PrivacyModel
from ..republication import Republication
from ..sdc.steps import SdcStep
from ..setvalued.anonymize import SET_ALGORITHMS
from ..setvalued.transactions import Transactions
from .identifiers import IdentifierRule

SUPPRESSION = Parameter("suppression limit", float, 0.0, "share of records that may be suppressed (0..1)",
                        minimum=0.0, maximum=1.0)

# What happens to suppressed records when a table is published (definitions.md, "Suppressed record").
REMOVE, KEEP = "remove", "keep"
SUPPRESSED_ROWS = {
    REMOVE: "removed from the published table (the report says how many)",
    KEEP: "published as rows with '*' in every quasi-identifier, allowed only when the suppressed records "
          "together satisfy every model of the run",
}

ChunkSource = Callable[[], Iterable[pd.DataFrame]]


@dataclass(frozen=True)
class Publishing:
    """How the rows leave the product."""

    suppressed_rows: str = REMOVE

    def __post_init__(self) -> None:
        if self.suppressed_rows not in SUPPRESSED_ROWS:
            raise InputError(f"suppressed rows must be one of {', '.join(SUPPRESSED_ROWS)}, "
                             f"got {self.suppressed_rows!r}")


@dataclass(frozen=True)
class SetColumn:
    """A set-valued column made k^m-anonymous within every published class (setvalued/mixed.py): its
    cells hold items separated by ``delimiter``; ``algorithm`` "apriori" (with ``hierarchy``, an item
    hierarchy) or "dynamic"."""

    column: str
    delimiter: str = "|"
    m: int = 2
    algorithm: str = "apriori"
    hierarchy: Hierarchy | None = None

    def __post_init__(self) -> None:
        if self.m < 1:
            raise InputError(f"m must be at least 1, got {self.m}")
        if len(self.delimiter) != 1:
            raise InputError(f"item delimiter {self.delimiter!r}: give one character")
        if self.algorithm not in ("apriori", "dynamic"):
            raise InputError(f"set-valued algorithm must be apriori or dynamic, got {self.algorithm!r}")
        if self.algorithm == "apriori" and self.hierarchy is None:
            raise InputError(f"set-valued column {self.column!r}: Apriori needs an item hierarchy "
                             f"(or choose dynamic hierarchies)")


@dataclass(frozen=True)
class TransactionSet:
    """A transaction dataset as a run's input: records of items (one per line of the file, ``delimiter``
    between the items, an optional record id first), made k^m-anonymous as a whole by ``algorithm``
    ("apriori" with ``hierarchy``, or "dynamic"); with ``item_suppression`` Apriori may suppress an
    item that reaches the hierarchy's root. The run's k is the spec's k."""

    transactions: Transactions
    m: int = 2
    algorithm: str = "apriori"
    hierarchy: Hierarchy | None = None
    item_suppression: bool = True
    delimiter: str = ","
    name: str = "transactions"
    numeric_items: bool = False  # dynamic hierarchies: ranges of ordered numbers; otherwise items are nominal

    def __post_init__(self) -> None:
        if self.m < 1:
            raise InputError(f"m must be at least 1, got {self.m}")
        if self.algorithm not in SET_ALGORITHMS:
            raise InputError(f"set-valued algorithm must be one of {', '.join(SET_ALGORITHMS)}, "
                             f"got {self.algorithm!r}")
        if self.algorithm == "apriori" and self.hierarchy is None:
            raise InputError("Apriori needs an item hierarchy (or choose dynamic hierarchies)")

    @property
    def has_ids(self) -> bool:
        return self.transactions.ids is not None


@dataclass(frozen=True)
class StreamedTable:
    """A table too large to hold: read again and again as chunks of text cells, in input order."""

    chunks: ChunkSource
    roles: dict[str, Role]
    types: dict[str, str] = field(default_factory=dict)
    name: str = "table"


@dataclass(frozen=True)
class RunSpec:
    """One run: the table (or a streamed table), hierarchies, privacy models, algorithm and publishing.

    ``models`` holds every privacy model of the run, k-anonymity included (``k`` is a shortcut that
    adds it); ``sensitive`` is the column the homogeneity figures and models without a column use."""

    table: Table | StreamedTable | TransactionSet | ParquetTable
    hierarchies: dict[str, Hierarchy] = field(default_factory=dict)
    algorithm: str = "datafly"
    models: tuple[PrivacyModel, ...] = ()
    options: dict = field(default_factory=dict)
    suppression_limit: float = 0.0
    sensitive: str | None = None
    publishing: Publishing = Publishing()
    set_column: SetColumn | None = None
    # a folder of the run's own for its scratch files (the disk hybrid's database and class counts), made and
    # removed by the caller (a web job: services.storage.job_scratch); None: the system temp folder
    scratch: str | None = None
    # a Dask cluster (tcp://HOST:PORT or local:N) that runs the stages (engine.backends.dask); the table is
    # then a ParquetTable every worker can read
    cluster: str | None = None
    # a release of a sequence (m-invariance): the history so far, the record-id column, the id secret
    republication: Republication | None = None
    # identifying columns published as keyed pseudonyms, masks or surrogates (engine/run/identifiers.py); a column
    # without a rule is removed. The secrets are bytes by key name, kept out of repr so no log shows them.
    identifiers: tuple[IdentifierRule, ...] = ()
    pseudonym_keys: dict[str, bytes] = field(default_factory=dict, repr=False)
    # a population table's name (a web job's population dataset): the report's research section names it
    population: str | None = None
    # with a person id (a column of role "person id"): what the adversary knows of a person (model.persons)
    person_adversary: str = "class"
    # SDC methods applied to the published rows after the recoding, in order (engine/run/sdc.py): local suppression,
    # microaggregation, PRAM, noise, ...; the gate recounts every recoding-kind step's guarantee; sdc_seed seeds
    # the random ones
    sdc: tuple[SdcStep, ...] = ()
    sdc_seed: int = 0

    def __post_init__(self) -> None:
        check_adversary(self.person_adversary)

    @classmethod
    def build(cls, table: Table | StreamedTable | TransactionSet | ParquetTable, hierarchies: dict[str, Hierarchy] | None = None,
              algorithm: str = "datafly", k: int | None = None, models: Iterable[PrivacyModel] = (),
              options: dict | None = None, suppression_limit: float = 0.0, sensitive: str | None = None,
              suppressed_rows: str = REMOVE, set_column: SetColumn | None = None) -> "RunSpec":
        """A spec from the usual parts; ``k`` adds k-anonymity unless a KAnonymity model is given."""
        models = list(models)
        if k is not None and not any(isinstance(m, KAnonymity) for m in models):
            models.insert(0, KAnonymity(k))
        return cls(table=table, hierarchies=dict(hierarchies or {}), algorithm=algorithm, models=tuple(models),
                   options=dict(options or {}), suppression_limit=float(SUPPRESSION.validate(suppression_limit)),
                   sensitive=sensitive or None, publishing=Publishing(suppressed_rows), set_column=set_column)

    @property
    def k(self) -> int:
        return max((int(getattr(m, "k", 1)) for m in self.models), default=1)

    @property
    def transactions(self) -> bool:
        return isinstance(self.table, TransactionSet)

    @property
    def streamed(self) -> bool:
        return isinstance(self.table, StreamedTable)

    def with_algorithm(self, algorithm: str, options: dict | None = None) -> "RunSpec":
        """The same run with another algorithm (e.g. a lattice node as a full-domain transformation)."""
        return replace(self, algorithm=algorithm, options=dict(options or {}))

    def describe_models(self) -> str:
        return ", ".join(m.describe() for m in self.models)
