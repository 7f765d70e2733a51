"""Models trained on a synthetic set (engine.measure.synthetic_utility) for a utility job whose source is a
finished synthesis job (services.model_utility reads its source's kind and comes here): trained on the synthetic
rows and on the original rows the synthesizer read, tested on the original rows it never saw, the share the
synthesis held out (drawn again with its seed: services.synthesis.split_holdout, engine.synthesis.holdout; the
digest kept in its figures says whether the dataset still holds them). A synthetic row is no input row's
version: nothing here pairs rows or reads a suppression flag.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from ..engine import InputError
from ..engine.measure.model_utility import UtilitySpec
from ..engine.measure.synthetic_utility import evaluate_synthetic
from ..engine.synthesis.holdout import holdout_mask, rows_digest
from ..models import Job, Result
from . import datasets, storage, synthesis

NUMERIC_TYPES = ("integer", "decimal")
# the test rows are fixed by the synthesis: a utility job of a synthetic set takes no split of its own
SPLIT_FIELDS = ("split", "test_share", "folds")


def check_source(job: Job) -> Result:
    """The synthesis' result, or InputError naming why no model can be trained and tested on it."""
    report = synthesis.report_of(job)
    result = Result.objects.filter(job=job).first()
    if report is None or result is None:
        raise InputError("models are trained on a finished synthetic set")
    if not held_out_rows(job):
        raise InputError("this synthetic set was drawn from every original row (held-out share 0): no original "
                         "row is left that the synthesizer never saw to test the models on; draw the synthetic "
                         "set again with a held-out share above 0")
    return result


def held_out_rows(job: Job) -> int:
    """How many original rows the synthesis held out (its report; 0: none)."""
    figures = (synthesis.report_of(job) or {}).get("figures") or {}
    return int((figures.get("holdout") or {}).get("rows", figures.get("holdout_rows")) or 0)


def utility_columns(result: Result) -> dict:
    """The synthesized columns, every one a possible target (none is generalized), and the numeric ones."""
    job = result.job
    chosen = list((result.report.get("synthesis") or {}).get("columns") or job.options["synthesis"]["columns"])
    types = {c["name"]: c.get("type") for c in (job.config or {}).get("columns", [])}
    return {"columns": chosen, "qi": [], "numeric": {c for c in chosen if types.get(c) in NUMERIC_TYPES},
            "targets": chosen}


def refuse_split(data: dict) -> None:
    """A split given for a synthetic set is refused by name: its test rows are those held out of the synthesis."""
    given = [k for k in SPLIT_FIELDS if data.get(k) not in (None, "")]
    if given:
        raise InputError(f"{given[0].replace('_', ' ')}: the models of a synthetic set are tested on the original "
                         f"rows held out of the synthesis; no split of its own is chosen")


def tables(source: Job, columns: list[str]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(the original rows the synthesizer read, the synthetic rows, the original rows it never saw), ``columns``
    of each; InputError when the dataset no longer holds the rows the synthesis drew from."""
    report = synthesis.report_of(source) or {}
    figures = report.get("figures") or {}
    spec = source.options["synthesis"]
    frame = datasets.load_frame(source.dataset, columns=spec["columns"])  # as the synthesis read it
    held = holdout_mask(len(frame), float(spec.get("holdout", 0.0)), int(spec["seed"]))
    kept = figures.get("holdout") or {}
    then = int(kept.get("input_rows", int(figures.get("original_rows") or 0) + int(figures.get("holdout_rows") or 0)))
    if held is None or len(frame) != then or (kept.get("digest") and rows_digest(
            frame[held].reset_index(drop=True)) != kept["digest"]):
        raise InputError(f"the dataset's rows are no longer those this synthetic set was drawn from ({then} rows "
                         f"then, {len(frame)} now, or other values): the rows the synthesizer never saw cannot be "
                         f"found again")
    result = Result.objects.get(job=source)
    synthetic = storage.read_frame(storage.output_path(result), columns=columns)
    train = frame.loc[~held, columns].reset_index(drop=True)
    test = frame.loc[held, columns].reset_index(drop=True)
    return train, synthetic, test


def run(source: Job, spec: UtilitySpec, progress: Callable[[float, str], bool | None]) -> dict:
    """The figures of a utility job of the synthetic set ``source``."""
    result = check_source(source)
    info = utility_columns(result)
    columns = list(dict.fromkeys([*spec.features, spec.target]))
    progress(0.0, "reading the original rows and the synthetic rows")
    train, synthetic, test = tables(source, columns)
    figures = evaluate_synthetic(train, synthetic, test, spec, info["numeric"],
                                 progress=lambda f, p: progress(0.02 + 0.96 * f, p))
    synthesis_spec = source.options["synthesis"]
    figures["holdout"] = {"share": float(synthesis_spec.get("holdout", 0.0)), "seed": int(synthesis_spec["seed"]),
                          "rows": int(len(test))}
    figures["source_kind"] = Job.SYNTHESIS
    return figures
