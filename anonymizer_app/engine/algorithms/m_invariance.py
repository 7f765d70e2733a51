"""m-invariance (Xiao & Tao, SIGMOD 2007; seed 003 §2.6): one release of a sequence of releases of a table
whose records come and go, against the history of the earlier ones.

The run needs ``RunSpec.republication`` (engine.republication.Republication): the history, the secret
keying record ids and the record-id column (identifying: never published). The groups are made by
engine/republication/invariance.py (division by signature, balancing with new records, groups of m
distinct values, counterfeits, split, local recoding of each group's box); the published table is
engine/republication/check.py's (group, QIs, sensitive value, counterfeits per group), and the publishing
gate rechecks it against the history from its rows (m-uniqueness, counterfeit counts, signatures).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np
import pandas as pd

from ..errors import InputError, UnsatisfiableError
from ..model.table import Role, Table
from ..privacy import KAnonymity, MInvariance, Parameter
from ..republication import History, Republication, m_invariant_groups, record_keys
from ..republication.check import COUNTERFEITS, GROUP, check_release, release_table
from ..republication.invariance import Grouping
from ..search.recoding import QISpace
from .base import AlgorithmInfo, Problem, register

if TYPE_CHECKING:
    from ..run.result import Result

RECODING = "m-invariance"
# the identifying column naming each record across releases (a policy's option; the CLI's --record-id COL)
RECORD_ID = Parameter("record_id", str, "", "the identifying column that names each record across releases",
                      label="Record-id column", cli_flag="--record-id")


@dataclass
class MInvarianceRecoding:
    grouping: Grouping
    keys: list[str]
    history: History  # the history the release was made against
    column: str  # the sensitive column
    m: int
    suppressed: np.ndarray  # bool per input row: not published
    steps: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    info: dict = field(default_factory=dict)
    recoding: str = RECODING


def republication_keys(table: Table, republication: Republication | None) -> list[str]:
    """The keyed record id of every row; refuses a run without a history or with a bad record-id column."""
    if republication is None:
        raise InputError("m-invariance publishes a release of a sequence: it needs a record-id column and the "
                         "history of the earlier releases (manage.py anonymize --record-id COL --history FILE, "
                         "or a release policy)")
    column = republication.record_id
    if column not in table.frame.columns:
        raise InputError(f"record-id column {column!r}: unknown column; the table has: "
                         f"{', '.join(map(str, table.frame.columns))}")
    if table.roles.get(column) != Role.IDENTIFYING:
        raise InputError(f"record-id column {column!r} must be identifying: it names records across releases and "
                         f"is never published")
    ids = table.frame[column].astype(str)
    blank = np.flatnonzero((ids.str.strip() == "").to_numpy())
    if len(blank):
        raise InputError(f"record-id column {column!r}: row {int(blank[0]) + 1} has no id")
    return record_keys(ids.tolist(), republication.secret)


def _model(models) -> MInvariance:
    found = [m for m in models if isinstance(m, MInvariance)]
    if len(found) != 1:
        raise InputError("the m-invariance algorithm needs the m-invariance model (its m): one release of a sequence "
                         "runs from manage.py anonymize --algorithm m-invariance --m M --record-id COL --history FILE "
                         "or from a release policy")
    return found[0]


def m_invariance(problem: Problem) -> MInvarianceRecoding:
    model = _model(problem.models)
    m = int(model.m)
    column = model.target
    table = problem.table
    for other in problem.models:  # a group holds m rows or more, counterfeits included: k up to m comes with it
        if isinstance(other, KAnonymity) and other.k > m:
            raise InputError(f"k={other.k} is above m={m}: an m-invariant group holds m rows or more (one per value "
                             f"of its signature, counterfeits included); raise m or lower k")
    republication = getattr(problem, "republication", None)
    keys = republication_keys(table, republication)
    assert republication is not None
    if problem.options.get("record_id") not in ("", None, republication.record_id):
        raise InputError(f"the record-id option {problem.options['record_id']!r} differs from the release's record-id "
                         f"column {republication.record_id!r}")
    history = republication.history
    history.check_compatible(m, column, list(table.qi))
    space = QISpace(problem.hierarchies, [table.is_numeric(c) for c in table.qi], problem.codes)
    values = table.frame[column].astype(str).to_numpy()
    grouping = m_invariant_groups(space, problem.codes, values, keys, history, m, list(table.qi), problem.report)
    suppressed = grouping.group < 0
    if int(suppressed.sum()) > problem.budget:
        raise UnsatisfiableError(
            f"m-invariance leaves {int(suppressed.sum())} record(s) unpublished (no group of {m} distinct values "
            f"could take them, or their value left their signature), more than the suppression limit allows "
            f"({problem.budget})")
    info = {"algorithm": RECODING, "m": m, "sensitive": column, "release": history.releases + 1, **grouping.info}
    problem.report(1.0, f"m-invariance: release {history.releases + 1}, {grouping.n_groups:,} group(s)")
    return MInvarianceRecoding(grouping, keys, history, column, m, suppressed, [], list(grouping.notes), info)


def counterfeit_table(published: pd.DataFrame) -> pd.DataFrame:
    """The paper's published count table: (group, counterfeits) for every group that holds any."""
    per_group = published[[GROUP, COUNTERFEITS]].drop_duplicates(GROUP)
    return per_group[per_group[COUNTERFEITS] > 0].reset_index(drop=True)


def cell_checker(table: Table, hierarchies: dict) -> Callable[[str, np.ndarray, np.ndarray], None]:
    """check_release's cell check: each real row's QI cell generalizes its input (ranges for numeric QIs)."""
    from ..run.result import check_cells

    def check(column: str, cells: np.ndarray, rows: np.ndarray) -> None:
        source = table.frame[column].iloc[rows].reset_index(drop=True)
        check_cells(column, source, cells, hierarchies[column], np.zeros(len(cells), dtype=bool), None,
                    ranges=table.is_numeric(column))
    return check


def assemble_m_invariance(table: Table, recoding: MInvarianceRecoding, models: list, suppression_limit: float) -> Result:
    from ..measure.metrics import class_figures
    from ..run.result import Result

    grouping = recoding.grouping
    published, rows = release_table(grouping, table.frame[recoding.column].astype(str).to_numpy(), list(table.qi),
                                    recoding.column)
    sizes = np.bincount(published[GROUP].to_numpy(dtype=np.int64) - 1, minlength=grouping.n_groups).astype(np.int64)
    k = max((getattr(m, "k", 1) for m in models), default=1)
    metrics = class_figures(sizes, table.n, int(recoding.suppressed.sum()), k)
    metrics["groups"] = int(grouping.n_groups)
    metrics["counterfeits"] = int(grouping.info.get("counterfeits", 0))
    return Result(
        algorithm=RECODING, qi=list(table.qi), models=models, suppression_limit=suppression_limit,
        output=published, suppressed=recoding.suppressed, class_of_row=grouping.group, class_sizes=sizes,
        metrics=metrics, transformation=None,
        transformation_labels={c: "each group's box (local recoding, m-invariance)" for c in table.qi},
        sensitive=recoding.column, notes=list(recoding.notes), recoding=RECODING,
        published={"release": published, "rows": rows, "counterfeits": counterfeit_table(published),
                   "keys": recoding.keys, "history_before": recoding.history, "m": recoding.m},
    )


def verify_m_invariance(result: Result, table: Table, hierarchies: dict) -> History:
    """The result's release against the history it was made from (Result.verify); the history after it."""
    p = result.published
    sensitive = str(result.sensitive)
    return check_release(p["release"], p["rows"], table.frame[sensitive].astype(str).to_numpy(), p["keys"],
                         p["history_before"], int(p["m"]), list(table.qi), sensitive,
                         cell_checker(table, hierarchies))


register(
    AlgorithmInfo(
        name=RECODING,
        label="m-invariance (re-publication)",
        summary="One release of a sequence: groups of at least m distinct sensitive values, every returning record "
        "in a group with its earlier signature, counterfeits where a value left (counted per group), each "
        "group's QI box (Xiao & Tao 2007).",
        run=m_invariance,
        honours=("m-invariance", "k-anonymity"),
        recoding="local",
        republishes=True,
        options=(RECORD_ID,),
        reference="X. Xiao, Y. Tao, m-Invariance: towards privacy preserving re-publication of dynamic datasets, "
                  "SIGMOD 2007",
    )
)
