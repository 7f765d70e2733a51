"""The outcome of an anonymization, and its independent verification from the output rows."""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from ..errors import VerificationError
from ..model.cells import FactorizedCells, factorize_cells, pointer_view
from ..model.hierarchy import ROOT, Hierarchy
from ..model.table import DENSE_KEYS_MIN, DENSE_KEYS_PER_ROW, Table, group_keys, group_rows
from ..privacy import PrivacyModel
from ..privacy.distributions import domain_for
from ..search.recoding import parse_range
from .coded import cells_of, is_coded, plain_frame
from .person_check import check_person_models, check_person_suppression, persons_of
from .research import Verdict, research_domain, research_flags, verdicts


@dataclass
class Result:
    algorithm: str
    qi: list[str]
    models: list[PrivacyModel]
    suppression_limit: float
    # input order, identifying columns removed, QIs generalized; read as object cells (see _output below): the
    # run core reads ``coded_output``, where a full-domain run's QIs are Categoricals of their level's labels
    output: pd.DataFrame
    suppressed: np.ndarray  # bool per row
    class_of_row: np.ndarray  # EC index per row, -1 for suppressed rows
    class_sizes: np.ndarray
    metrics: dict
    transformation: dict[str, int] | None = None  # QI -> level, for full-domain recoding
    transformation_labels: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    steps: list[dict] = field(default_factory=list)
    sensitive: str | None = None
    metrics_before: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    search: dict = field(default_factory=dict)  # statistics of the algorithm's search
    options: dict = field(default_factory=dict)  # the algorithm options used
    identifying_removed: list[str] = field(default_factory=list)
    verified: bool = False
    recoding: str = "full-domain"  # full-domain, multidimensional, local, anatomy or m-invariance
    # attack report per sensitive column (attack.attack_report): homogeneous ECs, posteriors, EMD, entropy
    attack: dict = field(default_factory=dict)
    # Anatomy: {"qit": quasi-identifier table (= output), "st": sensitive table (group, value, count)}
    published: dict = field(default_factory=dict)
    # every hierarchy the run used (QIs as recoded, e.g. k-Optimize's cuts; sensitive columns): the
    # publishing gate rechecks the published cells against them
    hierarchies: dict = field(default_factory=dict, repr=False)
    # the QIs' leaf codes (N x q, table.qi order, under the hierarchies above) as the run encoded them,
    # read-only: verification and the gate compare the output cells with them instead of re-encoding
    # the input strings (None: they encode the input themselves)
    leaf_codes: LeafCodes | None = field(default=None, repr=False)
    # a lattice search's nodes as it left them (FullDomainRecoding.known_lattice); never part of the report
    known_lattice: Mapping[str, Any] | None = field(default=None, repr=False)
    # SafePub: the records drawn into the sample (bool per input row); the gate checks the published rows
    sample: np.ndarray | None = field(default=None, repr=False)
    # the recoding kind's own check of what it publishes, set by the kind's stage (m-invariance: its release
    # against the history); None: Anatomy's tables or the recoded table checked here (verify_anatomy, verify_output)
    verifier: Callable[[Result, Table, dict], object] | None = field(default=None, repr=False)
    # with a person id: what the adversary knows (model.persons.ADVERSARIES), and the persons' figures of the run
    person_adversary: str = "class"
    persons: dict = field(default_factory=dict)
    # the output QI columns as the figures hashed them (codes of the very cells): verification takes them for the
    # same buffers instead of hashing every column a second time
    output_codes: FactorizedCells | None = field(default=None, repr=False)

    @property
    def coded_output(self) -> pd.DataFrame:
        """The output as the run holds it (a full-domain run's QIs as codes, coded.py), not converted."""
        return self.__dict__["output"]

    @property
    def k(self) -> int:
        return max([getattr(m, "k", 1) for m in self.models] or [1])

    @property
    def k_achieved(self) -> int:
        return int(self.class_sizes.min()) if len(self.class_sizes) else 0

    def report(self) -> dict:
        """The JSON report of the CLI and the API."""
        return report_head(
            algorithm=self.algorithm, models=self.models, suppression_limit=self.suppression_limit, qi=self.qi,
            sensitive=self.sensitive, class_sizes=self.class_sizes, suppressed=int(self.suppressed.sum()),
            records=int(len(self.coded_output)), recoding=self.recoding, transformation=self.transformation,
            metrics=self.metrics, metrics_before=self.metrics_before, options=self.options, search=self.search,
            steps=self.steps, notes=self.notes, transformation_labels=self.transformation_labels,
            identifying_removed=self.identifying_removed, verified=self.verified, seconds=self.seconds,
            attack=self.attack,
            sensitive_table=self.published["st"].to_dict(orient="records") if "st" in self.published else None)

    def verify(self, table: Table, hierarchies: dict[str, Hierarchy]) -> None:
        """Recheck everything from the output rows; raise VerificationError on the first breach."""
        if self.verifier is not None:
            self.verifier(self, table, hierarchies)
        elif self.recoding == "anatomy":
            verify_anatomy(table, self.published["qit"], self.published["st"], self.sensitive, self.models,
                           self.suppression_limit)
        else:
            verify_output(table, hierarchies, self.coded_output, self.suppressed, self.models, self.suppression_limit,
                          self.metrics, self.transformation, leaf_codes=self.leaf_codes,
                          adversary=self.person_adversary, output_codes=self.output_codes)
        self.output_codes = None  # a code per row and QI: not held past the check
        self.verified = True


def _output(self: Result) -> pd.DataFrame:
    """Result.output: the output with every QI as object cells (coded.plain_frame), the cells a text output
    always had; converted once, on the first reading, and kept instead of the codes."""
    frame = self.__dict__["output"] = plain_frame(self.__dict__["output"], self.qi)
    return frame


def _set_output(self: Result, frame: pd.DataFrame) -> None:
    self.__dict__["output"] = frame


# a property over the dataclass field, which stays in the instance's __dict__ under its name (so
# Result(**result.__dict__) builds the same result): __init__ and dataclasses.replace set it through _set_output
Result.output = property(_output, _set_output)  # type: ignore[assignment]


def _with_input_loss(metrics: dict, before: dict) -> dict:
    """The input's side of ARX's Loss when the run has it: 0, since every cell of the input is a leaf (S_j =
    N/|leaves|), as NCP and height are 0 there; the backends' 'before' figures name only the figures they count."""
    if "loss" in metrics and "loss" not in before:
        return {**before, "loss": 0.0}
    return before


def report_head(*, algorithm: str, models: list, suppression_limit: float, qi: list[str], sensitive: str | None,
                class_sizes: np.ndarray, suppressed: int, records: int, recoding: str,
                transformation: dict[str, int] | None, metrics: dict, metrics_before: dict, options: dict,
                search: dict, steps: list, notes: list[str], transformation_labels: dict[str, str],
                identifying_removed: list[str], verified: bool, seconds: float, attack: dict,
                sensitive_table: list[dict] | None = None) -> dict:
    """The run's own keys of a report, in their order: one definition for every backend (a Result in memory,
    the out-of-core run's counted classes, a cluster run's merged ones). ``class_sizes``: one size per class."""
    smallest = int(class_sizes.min()) if len(class_sizes) else 0
    return {
        "algorithm": algorithm,
        "models": [m.to_dict() for m in models],
        "k": max([getattr(m, "k", 1) for m in models] or [1]),
        "suppression_limit": suppression_limit,
        "quasi_identifiers": list(qi),
        "sensitive": sensitive,
        "k_achieved": smallest,
        "equivalence_classes": int(len(class_sizes)),
        "min_class_size": smallest,
        "suppressed": suppressed,
        "records": records,
        "recoding": recoding,
        "transformation": None if transformation is None else dict(transformation),
        "metrics": plain(metrics),
        "metrics_before": plain(_with_input_loss(metrics, metrics_before)),
        "options": options,
        "search": search,
        "steps": steps,
        "notes": notes,
        "class_size_histogram": class_size_histogram(class_sizes),
        "transformation_labels": transformation_labels,
        "identifying_removed": identifying_removed,
        "verified": verified,
        "seconds": round(seconds, 4),
        "attack": attack,
        **({"sensitive_table": sensitive_table} if sensitive_table is not None else {}),
    }


def class_size_histogram(sizes: np.ndarray) -> dict[str, int]:
    """EC size -> number of classes of that size."""
    if len(sizes) == 0:
        return {}
    values, counts = np.unique(sizes, return_counts=True)
    return {str(int(v)): int(c) for v, c in zip(values, counts)}


def json_default(o):
    """numpy scalars as JSON (NaN as null): the one encoder of reports."""
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return None if math.isnan(o) else float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    raise TypeError(f"{type(o).__name__} is not JSON serializable")


def plain(d: dict) -> dict:
    """Figures as plain JSON numbers (numpy scalars as Python ones, NaN as None)."""
    out = {}
    for key, v in d.items():
        if isinstance(v, (np.integer,)):
            v = int(v)
        elif isinstance(v, (np.floating, float)):
            v = None if math.isnan(v) else float(v)
        out[key] = v
    return out


def verify_output(
    table: Table,
    hierarchies: dict[str, Hierarchy],
    output: pd.DataFrame,
    suppressed: np.ndarray,
    models: list[PrivacyModel],
    suppression_limit: float,
    metrics: dict | None = None,
    transformation: dict[str, int] | None = None,
    leaf_codes: LeafCodes | None = None,
    adversary: str = "class",
    output_codes: FactorizedCells | None = None,
) -> None:
    """Independent check of a result; it uses only the input, the hierarchies and the output rows.

    ``leaf_codes``: the input QIs as the run encoded them (used when encoded under ``hierarchies``),
    so the input strings are not encoded again; ``output_codes``: output columns already hashed (of these very
    cells), so they are not hashed again."""
    n = table.n
    expected_cols = [c for c in table.frame.columns if c not in table.identifying]
    if list(output.columns) != expected_cols:
        raise VerificationError(f"output columns {list(output.columns)} differ from the expected {expected_cols}")
    if len(output) != n:
        raise VerificationError(f"output has {len(output)} rows, input {n}")
    for col in expected_cols:
        if col not in table.qi and not unchanged(output[col].to_numpy(), table.frame[col].to_numpy()):
            raise VerificationError(f"column {col!r} is not a QI but was changed")

    suppressed = np.asarray(suppressed, dtype=bool)
    n_sup = int(suppressed.sum())
    flags = research_flags(table.frame, models)  # with a population table: research records are counted
    persons = persons_of(table)
    if persons is not None:  # the limit counts persons, whose records go together
        check_person_suppression(suppressed, persons, suppression_limit)
    else:
        counted_sup = n_sup if flags is None else int((suppressed & flags).sum())
        budget = math.floor(suppression_limit * (n if flags is None else int(flags.sum())) + 1e-9)
        if counted_sup > budget:
            raise VerificationError(f"{counted_sup} records suppressed, more than the limit of {budget}")

    qi = table.qi
    encoded = encoded_input(table, hierarchies, leaf_codes)
    for col in qi:
        if (cells_of(output[col], suppressed) != ROOT).any():
            raise VerificationError(f"a suppressed record shows a value in {col!r} instead of {ROOT!r}")
    kept = ~suppressed
    key = None
    if transformation is not None and encoded is not None:
        key = level_key(output, qi, hierarchies, transformation, encoded, kept)
    if key is not None:  # every kept cell is its input's label at the level: classes from the labels' codes
        sizes, row_class = _classes_of_key(key, kept)
    else:
        sizes, row_class = _verify_cells(table, hierarchies, output, suppressed, transformation, encoded,
                                         output_codes)
    check_models(table, hierarchies, models, sizes, row_class, adversary)
    if metrics is not None:
        if metrics.get("equivalence_classes") != len(sizes):
            raise VerificationError(
                f"reported {metrics.get('equivalence_classes')} equivalence classes, output has {len(sizes)}"
            )
        if metrics.get("suppressed") != n_sup:
            raise VerificationError(f"reported {metrics.get('suppressed')} suppressed records, output has {n_sup}")
        if len(sizes) and metrics.get("min_class_size") != int(sizes.min()):
            raise VerificationError("reported smallest class size differs from the output's")
        discernibility = int(np.sum(sizes.astype(np.int64) ** 2)) + n_sup * n
        if "discernibility" in metrics and metrics["discernibility"] != discernibility:
            raise VerificationError(
                f"reported discernibility {metrics['discernibility']} differs from the output's {discernibility}")


def object_addresses(cells: np.ndarray) -> np.ndarray | None:
    """The address of each cell's object (uint64 per row) of an object array on a 64-bit build; None otherwise."""
    if cells.dtype != object or cells.ndim != 1 or ctypes.sizeof(ctypes.c_void_p) != 8:
        return None
    if len(cells) == 0:
        return np.zeros(0, dtype=np.uint64)
    held = np.ascontiguousarray(cells)  # one PyObject pointer per row; copied below while ``held`` lives
    return pointer_view(held).copy()


def unchanged(out: np.ndarray, original: np.ndarray) -> bool:
    """np.array_equal(out, original), where cells holding the very same object count as equal without
    comparing their values (a copied column holds its input's objects: 1 ms per 1M rows, not 7)."""
    if out.shape != original.shape:
        return False
    if (out.dtype != object or original.dtype != object or out.ndim != 1 or len(out) == 0
            or ctypes.sizeof(ctypes.c_void_p) != 8):
        return bool(np.array_equal(out, original))
    held_out, held_original = np.ascontiguousarray(out), np.ascontiguousarray(original)  # referenced below
    a, b = pointer_view(held_out), pointer_view(held_original)  # not copied: a block of rows compared at a time
    for start in range(0, len(a), LEVEL_KEY_BLOCK):
        rows = slice(start, start + LEVEL_KEY_BLOCK)
        differ = a[rows] != b[rows]
        if differ.any() and not np.array_equal(held_out[rows][differ], held_original[rows][differ]):
            return False
    return True


LEVEL_KEY_BLOCK = 1 << 18  # rows per block in level_key


def level_key(output: pd.DataFrame, qi: list[str], hierarchies: dict[str, Hierarchy], transformation: dict[str, int],
              encoded: np.ndarray, kept: np.ndarray) -> np.ndarray | None:
    """A full-domain output checked without hashing its cells: when every kept cell of every QI is the very
    label object ``labels[level][maps[level][leaf]]`` of its input's leaf (what the output builder writes, so
    equal to it), the kept rows' key packing those label codes (mixed radix; rows with equal keys show equal
    cells, labels of a level being distinct); None when some cell is another object (the caller checks the
    values) or the key would not fit in int64."""
    radices = [len(hierarchies[c].labels[transformation[c]]) for c in qi]
    if not qi or float(np.prod(np.array(radices, dtype=float))) >= 2**62:
        return None
    everything = bool(kept.all())
    key = np.zeros(len(kept), dtype=np.int64)  # over every row, the kept ones taken once at the end
    for j, (col, radix) in enumerate(zip(qi, radices)):
        h, level = hierarchies[col], transformation[col]
        column = output[col]
        cells = column.array if is_coded(column) else column.to_numpy()  # referenced until this column is checked
        labels = object_addresses(np.asarray(h.labels[level], dtype=object))
        if labels is None or cells.ndim != 1:  # (labels None: not a 64-bit build)
            return None
        label_of = np.asarray(h.maps[level], dtype=np.int64)  # per leaf: its label's code, and that label's object
        if isinstance(cells, pd.Categorical):
            # a row's cell is its category's object: the label code that object is (-1: no label's) per category
            shown = cells.codes
            if len(shown) and int(shown.min()) < 0:  # a missing cell: no label's
                return None
            code_of = {int(a): i for i, a in enumerate(labels)}
            held = object_addresses(np.asarray(cells.categories, dtype=object))
            if held is None:
                return None
            category_label = np.array([code_of.get(int(a), -1) for a in held], dtype=np.int64)
            expected = label_of
        else:
            if cells.dtype != object:
                return None
            cells = np.ascontiguousarray(cells)
            shown = pointer_view(cells) if len(cells) else np.zeros(0, dtype=np.uint64)
            category_label = None
            expected = labels[label_of]  # per leaf: its label's object
        # a block of rows at a time: the per-row temporaries stay a few MB however long the table (at 5M rows
        # whole columns of them were ~160 MB on top of the output)
        for start in range(0, len(kept), LEVEL_KEY_BLOCK):
            rows = slice(start, start + LEVEL_KEY_BLOCK)
            leaves = encoded[rows, j].astype(np.intp)  # the index type np.take works in
            # np.take raises on a code that is no leaf's, as indexing does
            seen = shown[rows] if category_label is None else np.take(category_label, shown[rows])
            input_label = np.take(expected, leaves)
            other = seen != input_label
            if (other.any() if everything else (other & kept[rows]).any()):
                return None
            part = key[rows]
            part *= radix
            # a Categorical's expected values are the label codes themselves: the gather above is the key's digit
            part += input_label if expected is label_of else np.take(label_of, leaves)
    return key if everything else key[kept]


def _classes_of_key(key: np.ndarray, kept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Class sizes and row -> class (-1 suppressed) of the kept rows grouped by ``key`` (the kept rows' keys,
    overwritten), numbered in key order (group_keys' numbering). Keys few enough per row are counted and
    renumbered in place (no per-row array beyond ``key``); others go through group_keys."""
    if not kept.any():
        return np.zeros(0, dtype=np.int64), np.full(len(kept), -1, dtype=np.int64)
    span = dense_span(key)
    if span is None:
        _, inverse, sizes = group_keys(key)
    else:
        every = np.bincount(key, minlength=span)
        present = np.flatnonzero(every > 0)
        rank = np.zeros(span, dtype=np.int64)
        rank[present] = np.arange(len(present), dtype=np.int64)
        take_in_place(rank, key)
        inverse, sizes = key, every[present]
    sizes = np.asarray(sizes, dtype=np.int64)
    if len(inverse) == len(kept):  # every row kept: the classes are the array itself
        return sizes, inverse
    row_class = np.full(len(kept), -1, dtype=np.int64)
    row_class[kept] = inverse
    return sizes, row_class


def dense_span(key: np.ndarray) -> int | None:
    """max(key) + 1 when the int64 keys are non-negative and few enough per row to be counted, one slot per
    possible key (model.table's bound for group_keys), else None."""
    if key.dtype != np.int64 or not len(key):
        return None
    low, high = int(key.min()), int(key.max())
    return high + 1 if low >= 0 and high < max(DENSE_KEYS_PER_ROW * len(key), DENSE_KEYS_MIN) else None


def take_in_place(lookup: np.ndarray, values: np.ndarray) -> None:
    """values[:] = lookup[values], a block of rows at a time (temporaries of a block, not of the column)."""
    for start in range(0, len(values), LEVEL_KEY_BLOCK):
        part = values[start:start + LEVEL_KEY_BLOCK]
        part[...] = lookup[part]


def _verify_cells(table: Table, hierarchies: dict[str, Hierarchy], output: pd.DataFrame, suppressed: np.ndarray,
                  transformation: dict[str, int] | None,
                  encoded: np.ndarray | None,
                  output_codes: FactorizedCells | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every kept QI cell checked by value (each output column hashed once); the classes of identical kept
    QI cells: (sizes, row -> class)."""
    n, qi = table.n, table.qi
    out_codes = np.empty((n, len(qi)), dtype=np.int64)
    for j, col in enumerate(qi):
        cells = cells_of(output[col])
        # each output column hashed once: its codes serve the cell check and the classes below
        factorized = (output_codes.get(col, cells) if output_codes is not None else None) or factorize_cells(cells)
        check_cells(col, table.frame[col], cells, hierarchies[col], suppressed,
                     None if transformation is None else transformation[col],
                     ranges=transformation is None and table.is_numeric(col),
                     codes=None if encoded is None else encoded[:, j], factorized=factorized)
        out_codes[:, j] = factorized[0]

    kept = ~suppressed
    row_class = np.full(n, -1, dtype=np.int64)
    if not kept.any():
        return np.zeros(0, dtype=np.int64), row_class
    _, inverse, sizes = group_rows(out_codes[kept])
    row_class[kept] = inverse
    return sizes, row_class


@dataclass(frozen=True)
class LeafCodes:
    """The input QIs as a run encoded them: N x q leaf codes (table.qi order), read-only, and the
    hierarchy object each column was encoded under."""

    codes: np.ndarray
    hierarchies: tuple[Hierarchy, ...]

    @classmethod
    def freeze(cls, codes: np.ndarray, hierarchies: list[Hierarchy]) -> "LeafCodes":
        """Mark ``codes`` read-only (no algorithm can change what the checks compare with) and keep them."""
        codes.flags.writeable = False
        return cls(codes, tuple(hierarchies))


def encoded_input(table: Table, hierarchies: dict[str, Hierarchy], leaf_codes: LeafCodes | None) -> np.ndarray | None:
    """The run's leaf codes of the input QIs when they were encoded from this table under these very
    hierarchies (N x q); None: the caller encodes the strings."""
    if leaf_codes is None or leaf_codes.codes.shape != (table.n, len(table.qi)):
        return None
    if any(hierarchies.get(c) is not h for c, h in zip(table.qi, leaf_codes.hierarchies)):
        return None
    return leaf_codes.codes


def check_cells(
    col: str, original: pd.Series, cells: np.ndarray, h: Hierarchy, suppressed: np.ndarray, level: int | None,
    ranges: bool = False, codes: np.ndarray | None = None,
    factorized: tuple[np.ndarray, pd.Index] | None = None,
) -> None:
    """Every non-suppressed cell is its input value or one of its ancestors (at ``level`` if given);
    with ``ranges`` (numeric QIs of a local/multidimensional recoding) also a range '[lo-hi]' with
    lo <= value <= hi. ``codes``: the input's leaf codes under ``h`` when the run has them (else
    ``original`` is encoded); ``factorized``: factorize_cells(cells) when the caller has it."""
    if codes is None:
        codes = h.encode(original, col)
    kept = ~suppressed
    # compare integer codes, not strings: each distinct output cell is looked up once per level
    cell_codes, distinct_cells = factorized if factorized is not None else factorize_cells(cells)
    ok = np.zeros(len(cells), dtype=bool)
    levels = [level] if level is not None else range(h.level_count)
    for lv in levels:
        at_level = pd.Index(h.labels[lv]).get_indexer(distinct_cells)
        ok |= at_level[cell_codes] == h.maps[lv][codes]
    if ranges and (kept & ~ok).any():
        bounds = np.array([parse_range(c) or (np.nan, np.nan) for c in distinct_cells], dtype=float)
        rows = np.flatnonzero(kept & ~ok)
        values = pd.to_numeric(original.iloc[rows], errors="coerce").to_numpy(dtype=float)
        lo, hi = bounds[cell_codes[rows], 0], bounds[cell_codes[rows], 1]
        ok[rows] = (lo <= values) & (values <= hi)
    bad = np.flatnonzero(kept & ~ok)
    if bad.size:
        i = int(bad[0])
        raise VerificationError(
            f"row {i + 1}, column {col!r}: output {cells[i]!r} is not a generalization of {original.iloc[i]!r}"
            + (f" at level {level}" if level is not None else "")
        )


def check_models(table: Table, hierarchies: dict, models: list[PrivacyModel], sizes: np.ndarray,
                 row_class: np.ndarray, adversary: str = "class") -> None:
    """Every model on the classes (row -> class, -1 suppressed); sensitive values from the input. With a
    population table each model counts what research.verdicts says, with a person id the persons
    (definitions.md, "The unit counted")."""
    flags = research_flags(table.frame, models)

    def domain_of(model):
        return domain_for(model, table.frame, hierarchies, table.is_numeric(model.target))

    persons = persons_of(table)
    if persons is not None:
        check_person_models(models, row_class, persons, len(sizes), domain_of, adversary)
        return

    def research_domain_of(model):
        assert flags is not None
        return research_domain(lambda frame: domain_for(model, frame, hierarchies, table.is_numeric(model.target)),
                               table.frame, flags)

    raise_failures(verdicts(models, sizes, row_class, domain_of, flags, research_domain_of))


def raise_failures(found: Iterable[Verdict]) -> None:
    """The one verdict of verification and of the gate (in memory and on a cluster's merged classes):
    VerificationError naming the first model that fails on the classes it counts (``found``: research.verdicts)."""
    for verdict in found:
        if verdict.failing.any():
            counted = verdict.sizes
            raise VerificationError(
                f"{verdict.model.describe()} does not hold: {int(verdict.failing.sum())} equivalence class(es) "
                f"fail, the smallest has {int(counted.min()) if len(counted) else 0} record(s)"
            )


def verify_anatomy(table: Table, qit: pd.DataFrame, st: pd.DataFrame, column: str | None,
                   models: list[PrivacyModel],
                   suppression_limit: float) -> None:
    """Anatomy's QIT and ST against the input: QIs unchanged (``*`` when suppressed), ST counts equal to the
    input's sensitive values of each group, suppression within the limit, every model on the groups."""
    if column is None:
        raise VerificationError("Anatomy: the result names no sensitive column")
    n = table.n
    if len(qit) != n:
        raise VerificationError(f"QIT has {len(qit)} rows, input {n}")
    group = qit["group"].to_numpy(dtype=np.int64)
    sup = group < 0
    budget = math.floor(suppression_limit * n + 1e-9)
    if int(sup.sum()) > budget:
        raise VerificationError(f"{int(sup.sum())} records suppressed, more than the limit of {budget}")
    if column in qit.columns:
        raise VerificationError(f"the QIT shows the sensitive column {column!r}")
    for col in qit.columns:
        if col == "group":
            continue
        cells = qit[col].to_numpy(dtype=object)
        orig = table.frame[col].to_numpy(dtype=object)
        if col in table.qi:
            if (cells[sup] != ROOT).any() or (cells[~sup] != orig[~sup]).any():
                raise VerificationError(f"QIT column {col!r} differs from the input")
        elif (cells != orig).any():
            raise VerificationError(f"QIT column {col!r} differs from the input")
    kept = ~sup
    actual = (pd.DataFrame({"group": group[kept], column: table.frame[column].astype(str).to_numpy()[kept]})
              .groupby(["group", column], sort=True).size().rename("count").reset_index())
    published = st.sort_values(["group", column]).reset_index(drop=True)
    if not actual.astype(str).equals(published[["group", column, "count"]].astype(str)):
        raise VerificationError("the sensitive table's counts differ from the input's values per group")
    row_class = np.where(kept, group, -1)
    _, dense = np.unique(group[kept], return_inverse=True)
    row_class[kept] = dense
    sizes = np.bincount(dense).astype(np.int64) if kept.any() else np.zeros(0, np.int64)
    check_models(table, {}, models, sizes, row_class)
