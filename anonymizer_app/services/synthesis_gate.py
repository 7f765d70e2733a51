"""The publication check of a synthetic set, the analogue of a run's publishing gate: before synthetic rows are
stored, downloaded or exported (every format, the SQL export, a repository deposit: services/exports.py calls
it for every result of a synthesis job), the stored rows are read back and checked against the job's recorded
spec (Job.options["synthesis"]):

(a) the columns published are exactly the columns synthesized, in their order: no original column (an
    identifier, a column left out of the synthesis) slipped into the table;
(b) a differentially private method's ε and δ are charged to the dataset's ledger by an entry of this job
    (services/privacy_ledger.py), and the method's registry entry agrees with the spec on whether it is DP;
(c) the row count is the one requested (the ``rows`` option; else, for the CART baseline, the rows the
    synthesizer read; else the model's noisy total, which the job recorded when it drew the rows);
(d) for a method without a formal guarantee (the CART baseline), the exact copies of original rows whose
    quasi-identifier combination is rare (fewer than RARE_BELOW rows) are recounted from the original rows the
    synthesizer read: more than the report flagged is refused (the report and its release report warn of the
    ones flagged; none is published unannounced).

A refusal names the check and the values; nothing is written (the store deletes its file, an export sends
nothing)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..engine import InputError, Role
from ..engine.synthesis import SYNTHESIZERS
from ..engine.synthesis.holdout import holdout_mask
from ..models import Job, PrivacyLedgerEntry, Result
from . import datasets, results, storage

RARE_BELOW = 5  # as services.synthesis.RARE_BELOW: an original QI combination of fewer rows is rare
# ε and δ are floats written by the same code: equal up to a float's rounding
TOLERANCE = 1e-12


class SyntheticTableRefused(InputError):
    """A synthetic table that fails the publication check; the message names the check and the values."""


@dataclass(frozen=True)
class Verdict:
    """What the check found on a table it let through."""

    columns: list[str]
    rows: int
    ledger_entry: int | None  # the ledger entry's id (None: a method without a guarantee spends nothing)
    rare_copies: int | None  # recounted exact copies of rare original QI combinations (None: a DP method)

    def as_dict(self) -> dict:
        return {"columns": self.columns, "rows": self.rows, "ledger_entry": self.ledger_entry,
                "rare_copies": self.rare_copies, "rare_below": RARE_BELOW}


def _refuse(job: Job, text: str) -> SyntheticTableRefused:
    return SyntheticTableRefused(f"publication of synthetic set {job.pk} refused: {text}")


def _text(values: pd.Series) -> pd.Series:
    """Cells as the stored synthetic rows hold them (text; a missing original cell as empty text)."""
    return values.astype(object).where(values.notna(), "").astype(str)


def requested_rows(job: Job, report: dict, read_rows: int) -> int:
    """The rows the job was asked for: its ``rows`` option, else the rows the synthesizer read (the CART
    baseline), else the noisy total the job recorded (a DP model's, drawn with the rows)."""
    spec = job.options["synthesis"]
    asked = int((spec.get("options") or {}).get("rows") or 0)
    if asked:
        return asked
    if not spec.get("dp"):
        return read_rows
    recorded = (report.get("parameters") or {}).get("rows")
    if recorded is None:
        raise _refuse(job, "the job recorded no row count for its model's noisy total")
    return int(recorded)


def read_rows_count(job: Job) -> int:
    """The rows the synthesizer read: the dataset's rows minus those held out (services.synthesis.split_holdout's
    count, recomputed)."""
    n = int(job.dataset.n_rows)
    held = int(round(float(job.options["synthesis"].get("holdout", 0.0)) * n))
    return n if held == 0 or held >= n else n - held


def _ledger_entry(job: Job) -> int | None:
    spec = job.options["synthesis"]
    synthesizer = SYNTHESIZERS.get(spec.get("method", ""))
    if synthesizer is None:
        raise _refuse(job, f"the method {spec.get('method')!r} is not in the synthesizers' registry")
    if bool(spec.get("dp")) != synthesizer.dp:
        raise _refuse(job, f"the spec says dp={bool(spec.get('dp'))} but {synthesizer.label} is "
                           f"{'differentially private' if synthesizer.dp else 'without a formal guarantee'}")
    if not synthesizer.dp:
        return None
    entries = list(PrivacyLedgerEntry.objects.filter(job=job, dataset=job.dataset).values_list("pk", "epsilon", "delta"))
    if not entries:
        raise _refuse(job, f"the ε ledger of the dataset holds no charge for this job ({synthesizer.label}, "
                           f"ε = {spec['epsilon']:g}, δ = {spec['delta']:g})")
    epsilon, delta = math.fsum(e for _, e, _ in entries), math.fsum(d for _, _, d in entries)
    if abs(epsilon - float(spec["epsilon"])) > TOLERANCE or abs(delta - float(spec["delta"])) > TOLERANCE:
        raise _refuse(job, f"the ε ledger charged this job ε = {epsilon:g}, δ = {delta:g}, but it spends "
                           f"ε = {spec['epsilon']:g}, δ = {spec['delta']:g}")
    return int(entries[0][0])


def _original_rows_read(job: Job) -> pd.DataFrame:
    """The original rows the synthesizer read (the holdout left out as the job drew it)."""
    spec = job.options["synthesis"]
    frame = datasets.load_frame(job.dataset, columns=list(spec["columns"]))
    held = holdout_mask(len(frame), float(spec.get("holdout", 0.0)), int(spec["seed"]))  # as the job drew it
    return frame if held is None else frame[~held].reset_index(drop=True)


def rare_copies(job: Job, synthetic: pd.DataFrame, train: pd.DataFrame | None = None) -> int:
    """Synthetic rows equal (every column) to an original row read by the synthesizer whose QI combination
    occurs fewer than RARE_BELOW times among those rows; counted with a Counter and a set."""
    spec = job.options["synthesis"]
    columns = list(spec["columns"])
    qi = [c["name"] for c in job.config.get("columns", [])
          if c["role"] == Role.QUASI_IDENTIFYING.value and c["name"] in columns]
    if not qi:
        return 0
    original = _original_rows_read(job) if train is None else train
    rows = list(zip(*(_text(original[c]).tolist() for c in columns)))
    where = [columns.index(q) for q in qi]
    frequency = Counter(tuple(r[i] for i in where) for r in rows)
    rare = {r for r in rows if frequency[tuple(r[i] for i in where)] < RARE_BELOW}
    if not rare:
        return 0
    return sum(1 for r in zip(*(synthetic[c].astype(str).tolist() for c in columns)) if r in rare)


def check_table(job: Job, path: Path, report: dict, train: pd.DataFrame | None = None) -> Verdict:
    """Checks (a)-(d) on the rows stored at ``path`` with the synthesis report ``report``; SyntheticTableRefused
    otherwise. ``train``: the original rows read (when the caller holds them; else read again)."""
    if job.kind != Job.SYNTHESIS or "synthesis" not in (job.options or {}):
        raise _refuse(job, "the job is not a synthesis")
    spec = job.options["synthesis"]
    wanted = [str(c) for c in spec["columns"]]
    stored = [c for c in storage.stored_columns(path) if c not in (results.SUPPRESSED_COLUMN, results.ROW_COLUMN)]
    if results.ROW_COLUMN in storage.stored_columns(path):
        raise _refuse(job, "the stored table links its rows to the original rows (a synthetic row has none)")
    extra = [c for c in stored if c not in wanted]
    if extra:
        raise _refuse(job, f"the stored table has the column {extra[0]!r}, which was not synthesized "
                           f"(synthesized: {', '.join(wanted)})")
    missing = [c for c in wanted if c not in stored]
    if missing:
        raise _refuse(job, f"the stored table lacks the synthesized column {missing[0]!r}")
    if stored != wanted:
        raise _refuse(job, f"the stored columns are in the order {', '.join(stored)}, not the synthesized "
                           f"{', '.join(wanted)}")
    if [str(c) for c in report.get("columns", wanted)] != wanted:
        raise _refuse(job, "the report's columns are not the synthesized ones")
    entry = _ledger_entry(job)
    frame, suppressed = results.split_suppressed(storage.read_frame(path))
    if np.asarray(suppressed).any():
        raise _refuse(job, f"{int(np.asarray(suppressed).sum())} stored row(s) are marked suppressed; a synthetic "
                           "table suppresses none")
    expected = requested_rows(job, report, len(train) if train is not None else read_rows_count(job))
    if len(frame) != expected:
        raise _refuse(job, f"the stored table has {len(frame):,} rows; {expected:,} were requested")
    copies = None
    if not spec.get("dp"):
        copies = rare_copies(job, frame, train)
        flagged = int((report.get("figures") or {}).get("rare_exact_copies") or 0)
        if copies > flagged:
            raise _refuse(job, f"the stored table holds {copies} exact cop{'y' if copies == 1 else 'ies'} of "
                               f"original rows with a rare quasi-identifier combination (fewer than {RARE_BELOW} "
                               f"rows), but the report flagged {flagged}: not published unannounced")
    return Verdict(columns=stored, rows=len(frame), ledger_entry=entry, rare_copies=copies)


def check_result(result: Result) -> Verdict:
    """The check on a stored synthetic set (every export calls it)."""
    job = result.job
    return check_table(job, storage.output_path(result), result.report.get("synthesis") or {})
