"""Risk with sampling weights (sdcMicro's figures) for the risk pages, the API and the CLI: a dataset's rows on
chosen key variables, and a result's published rows beside its input's (before and after), with the dataset's
sampling-weight and household columns (the column roles) and dRisk of the numeric columns a result changed.

Computed in the request like the rest of the risk page; above WEB_SUDA_ROWS records SUDA2 is left out there and the
page offers a job that computes it on a worker (services.sdc_risk_jobs, which calls these functions with web=False;
the CLI has no cap either). A result's figures are cached with its job's views, as services.risk does.
"""

from __future__ import annotations

import hashlib
import json

import pandas as pd

from ..engine import InputError, Role
from ..engine.measure.figure_catalogue import sdc_risk_figures
from ..engine.measure.risk.sdc_risk import numeric_risk, sdc_risk_report
from ..engine.model.column_types import NUMERIC_TYPES
from ..engine.model.hierarchy import ROOT
from ..engine.model.missing import MISSING
from ..models import Dataset, Result
from . import datasets, storage
from .risk import _published_dataset_rows, published_rows

SDC_CACHE_VERSION = 2  # 2: the cap says a worker can compute SUDA2
WEB_SUDA_ROWS = 200_000
# roles whose numeric columns are perturbed and compared by dRisk (neither keys nor the weight or household)
_NOT_NUMERIC_RISK = (Role.IDENTIFYING.value, Role.PERSON.value, Role.QUASI_IDENTIFYING.value, Role.WEIGHT.value,
                     Role.HOUSEHOLD.value)


def marked_column(dataset: Dataset, role: Role) -> str | None:
    """The dataset's column of ``role`` (one at most: the columns form allows no second), None without one."""
    found = [c.name for c in dataset.columns.order_by("position") if c.role == role.value]
    return found[0] if found else None


def _suda_allowed(n: int, options: dict, web: bool) -> tuple[bool, str]:
    if not options.get("suda", True):
        return False, ""
    if web and n > WEB_SUDA_ROWS:
        return False, (f"SUDA2 is not computed in the page's request above {WEB_SUDA_ROWS:,} records ({n:,} here): "
                       f"compute it on a worker (or run 'manage.py risk --sdc' on the file)")
    return True, ""


def _report(frame: pd.DataFrame, keys: list[str], weight: str | None, household: str | None, options: dict,
            web: bool, progress=None) -> dict:
    suda, why = _suda_allowed(len(frame), options, web)
    report = sdc_risk_report(frame, keys, weight=weight, household=household, method=options["method"],
                             max_global_risk=options["max_global_risk"], suda=suda, progress=progress)
    if why:  # "worker": the page offers the job that computes it (services.sdc_risk_jobs)
        report["suda2"] = {"unavailable": why, "worker": True}
    report["figures"] = sdc_risk_figures(report)
    return report


def dataset_sdc_risk(dataset: Dataset, keys: list[str], options: dict, web: bool = True, progress=None) -> dict:
    """sdcMicro's figures of the dataset as uploaded, on the key variables ``keys``; ``progress(fraction, phase)``
    is told as SUDA2 goes (a job's)."""
    if not keys:
        raise InputError("choose at least one key variable (quasi-identifier)")
    weight, household = marked_column(dataset, Role.WEIGHT), marked_column(dataset, Role.HOUSEHOLD)
    columns = list(dict.fromkeys([*keys, *(c for c in (weight, household) if c)]))
    frame = datasets.load_frame(dataset, columns=columns)
    return _report(frame, keys, weight, household, options, web, progress)


def result_sdc_risk(result: Result, options: dict, web: bool = True, progress=None) -> dict:
    """The figures before (the dataset's rows the run read) and after (the published rows) on the run's
    quasi-identifiers (a published '*' read as missing, which matches any value; ``progress`` told as SUDA2 goes
    on each side); the weights and households of the published rows are their dataset rows' (a run publishes
    those columns as they are, or leaves them out); dRisk of the numeric columns the run changed."""
    keys = list(result.report.get("quasi_identifiers") or [])
    if not keys:
        raise InputError("this result has no quasi-identifiers to analyse")
    dataset = result.job.dataset
    key = hashlib.sha256(json.dumps({"version": SDC_CACHE_VERSION, "keys": keys, "options": options, "web": web},
                                    sort_keys=True).encode()).hexdigest()
    cache = storage.lattice_cache_dir(result.job) / f"sdc-risk-{key[:32]}.json"
    cached = storage.read_json(cache)
    if isinstance(cached, dict) and cached.get("key_variables") == keys:
        return cached
    weight, household = marked_column(dataset, Role.WEIGHT), marked_column(dataset, Role.HOUSEHOLD)
    numeric = [c.name for c in dataset.columns.order_by("position")
               if c.type in NUMERIC_TYPES and c.role not in _NOT_NUMERIC_RISK]
    stored = set(datasets.dataset_columns(dataset))
    before_frame = datasets.load_frame(dataset, columns=[c for c in dict.fromkeys(
        [*keys, *(c for c in (weight, household) if c), *numeric]) if c in stored])
    after_frame = published_rows(result).reset_index(drop=True)
    absent = [k for k in keys if k not in after_frame.columns]
    if absent:
        raise InputError(f"the published table has no column {', '.join(map(repr, absent))} "
                         f"(this kind of result is not analysed per record)")
    for k in keys:  # a published '*' (a suppressed or fully generalized cell) could be any value: sdcMicro's NA
        after_frame[k] = after_frame[k].where(after_frame[k].astype(str) != ROOT, MISSING)
    rows = _published_dataset_rows(result)
    aligned = rows is not None and len(rows) == len(after_frame) and (
        len(rows) == 0 or (rows.min() >= 0 and rows.max() < len(before_frame)))
    for column in (weight, household):
        if column and column not in after_frame.columns:
            if not aligned:
                raise InputError(f"the published table has no column {column!r} and does not say which dataset row "
                                 f"each published row is")
            after_frame[column] = before_frame[column].to_numpy()[rows]
    def half(start: float):
        return None if progress is None else (lambda f, phase: progress(start + f / 2, phase))

    out: dict = {"key_variables": keys,
                 "before": _report(before_frame, keys, weight, household, options, web, half(0.0)),
                 "after": _report(after_frame, keys, weight, household, options, web, half(0.5))}
    changed = [c for c in numeric if c in after_frame.columns and aligned]
    if changed:
        assert rows is not None
        original = before_frame[changed].iloc[rows].reset_index(drop=True)
        differs = [c for c in changed if not original[c].astype(str).equals(after_frame[c].astype(str))]
        if differs:
            out["numeric"] = numeric_risk(original, after_frame, differs)
    out = json.loads(json.dumps(out, default=storage.json_default))
    storage.write_json(cache, out)
    if not Result.objects.filter(pk=result.pk).exists():  # deleted meanwhile: leave nothing of it
        storage.delete_names([storage.lattice_cache_name(result.job)])
    return out


def before_after_rows(figures: dict) -> list[dict]:
    """The figures of both sides as rows (label, help, before text, after text) in catalogue order."""
    before = {r["key"]: r for r in figures["before"]["figures"]}
    after = {r["key"]: r for r in figures["after"]["figures"]}
    keys = list(dict.fromkeys([*before, *after]))
    return [{"key": k, "label": (before.get(k) or after[k])["label"], "help": (before.get(k) or after[k])["help"],
             "before": before[k]["text"] if k in before else "—", "after": after[k]["text"] if k in after else "—"}
            for k in keys]

