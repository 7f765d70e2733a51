"""Releases of one dataset side by side (issue 33): any mix of its finished releases — k-anonymous runs, runs with
SDC steps, SafePub samples, synthetic sets — measured by the same figures against the dataset's rows, in columns,
with a chart of utility against privacy (views/releases.py). The two-runs comparison (services/solutions.py)
stays the place for two runs' cells and classes; this page takes N releases of any kind.

The figures, the same for every kind of release, over the columns every chosen release publishes (identifiers
left out), each release's published rows (suppressed records left out) against all the dataset's rows:

* utility: the mean 1-way and 2-way total-variation distance of the published values
  (engine.measure.synthetic_figures.marginal_distances). A generalized value ("20-29") is a value of its own, so
  generalization counts as a distance: the figure reads "how far the published values' distribution is from the
  original's", the analyst's view before any re-mapping;
* privacy: the share of published rows equal to an original record on every compared column (exact copies);
* each release's guarantee in words: k-anonymity (and the privacy models it checked), (ε, δ)-differential privacy
  (SafePub, a DP synthesizer), or no formal guarantee (the CART baseline, SDC steps without the k gate's recount)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..engine import Role
from ..engine.measure.synthetic_figures import marginal_distances
from ..models import Dataset, Job, Result
from . import datasets, results
from .labels import algorithm_label

RELEASE_KINDS = (Job.RUN, Job.LATTICE_KEEP, Job.SYNTHESIS)
MAX_RELEASES = 8


def release_jobs(dataset: Dataset):
    """The dataset's finished releases a comparison can take, newest first."""
    return Job.objects.filter(dataset=dataset, kind__in=RELEASE_KINDS, status=Job.SUCCEEDED).order_by("-created")


def guarantee(job: Job, report: dict) -> str:
    if job.kind == Job.SYNTHESIS:
        return (report.get("synthesis") or {}).get("guarantee", "")
    models = job.models or []
    dp = next((m for m in models if m.get("model") == "differential-privacy"), None)
    if dp is not None:
        return f"({float(dp.get('epsilon', 1.0)):g}, {float(dp.get('delta', 1e-6)):g})-differential privacy (SafePub)"
    if job.k and job.k > 1:
        return f"k-anonymity, k = {job.k}" + (f", with {', '.join(m.get('model', '') for m in models)}" if models else "")
    return "no formal privacy guarantee"


def label(job: Job) -> str:
    if job.kind == Job.SYNTHESIS:
        spec = (job.options or {}).get("synthesis", {})
        return f"Synthetic ({spec.get('method', '')}{', ε ' + format(spec.get('epsilon'), 'g') if spec.get('dp') else ''})"
    steps = (job.options or {}).get("sdc") or []
    name = algorithm_label(job.algorithm)
    return f"{name} k={job.k}" + (f" + {', '.join(s.get('method', '') for s in steps)}" if steps else "")


def _published(result: Result, columns: list[str]) -> pd.DataFrame:
    frame, suppressed = results.load_output(result)
    frame.attrs.pop("rows", None)
    return frame.loc[~suppressed, columns].reset_index(drop=True)


def compare(dataset: Dataset, jobs: list[Job]) -> dict:
    """Every chosen release's figures (rows of the table, points of the chart)."""
    chosen = [(j, Result.objects.get(job=j)) for j in jobs]
    identifiers = {c.name for c in dataset.columns.all() if c.role in (Role.IDENTIFYING.value, Role.PERSON.value)}
    common = [c for c in datasets.dataset_columns(dataset) if c not in identifiers
              and all(c in results.output_columns(r) for _, r in chosen)]
    original = datasets.load_frame(dataset, columns=common).astype(str) if common else pd.DataFrame()
    keys = set(map(tuple, original.to_numpy().tolist())) if common else set()
    rows = []
    for job, result in chosen:
        published = _published(result, common).astype(str) if common else pd.DataFrame()
        tvd = marginal_distances(original, published, common) if common and len(published) else {}
        copies = (np.fromiter((tuple(r) in keys for r in published.to_numpy().tolist()), dtype=bool,
                              count=len(published)) if common else np.zeros(0, dtype=bool))
        rows.append({"job": job, "label": label(job), "guarantee": guarantee(job, result.report),
                     "published_rows": len(published), "tvd_1way_mean": tvd.get("one_way_mean"),
                     "tvd_2way_mean": tvd.get("two_way_mean"),
                     "exact_copy_share": float(copies.mean()) if len(copies) else None})
    return {"columns": common, "rows": rows}
