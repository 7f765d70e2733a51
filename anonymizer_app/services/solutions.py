"""Two solutions side by side (issue 30): two runs of one dataset, or two nodes of one run's solution lattice, with
every figure of each (the run's metrics and risk figures, the privacy models' checks, the per-quasi-identifier
figures, the settings and attribute weights) in two columns and the difference B - A, each worded and formatted
by the figure catalogue (engine.measure.figure_catalogue) as on the result page.

A run's side is its stored report. A lattice node's side is the run's full specification with the node's
transformation through the pipeline and its publishing gate (engine.run.pipeline.publish_levels, as the lattice
page's node table), its report kept beside the lattice's cache (``solution-<levels>.json``), with the node's
statistics before and after (engine.measure.statistics over the published rows the pipeline gave, against the
dataset's: the figures a kept node's statistics page shows), computed with the node's report and cached with it."""

from __future__ import annotations

import json

import numpy as np

from .. import engine
from ..engine.measure import statistics as statistics_engine
from ..engine.measure.figure_catalogue import (
    ATTRIBUTE_FIGURES,
    CHECK_KINDS,
    FIGURES,
    MISSING,
    RUN_METRICS,
    format_check,
    format_kind,
)
from ..engine.run import pipeline
from ..models import Job, Result
from . import datasets, results, storage
from . import lattice as lattice_service
from . import statistics as statistics_service
from .attribute_weights import weights_text

CACHE_VERSION = 2  # 2: a node's statistics before and after
# the parts of a report the comparison reads (a node's cached report keeps only these)
REPORT_PARTS = ("metrics", "metrics_before", "attributes", "model_checks", "k_achieved", "suppressed", "records",
                "input_records", "transformation", "quasi_identifiers", "recoding")
FIGURE_KEYS = ["k_achieved", *RUN_METRICS]


def algorithm_label(name: str) -> str:
    info = engine.ALGORITHMS.get(name)
    return info.label if info is not None else name


def _qi_of(job: Job) -> list[str]:
    return [c["name"] for c in (job.config or {}).get("columns", []) if c.get("role") == engine.Role.QUASI_IDENTIFYING.value]


def run_side(job: Job) -> dict:
    """A finished run as one side: its settings and its report's figures."""
    report = Result.objects.get(job=job).report
    key = results.transformation_key(report)
    return {"kind": "run", "job": str(job.pk), "levels": key or None,
            "title": f"{algorithm_label(job.algorithm)}, k={job.k}",
            "settings": _settings(job, job.algorithm, key, (job.options or {}).get("weights")),
            "anonymous": True, "message": "", "report": {p: report[p] for p in REPORT_PARTS if p in report}}


def node_side(job: Job, levels: list[int]) -> dict:
    """The node ``levels`` of a lattice run as one side (computed once, then read from the lattice's cache). A
    node that is not anonymous within the run's suppression limit is a side with its reason and no figures."""
    key = ",".join(map(str, levels))
    name = f"solution-{key.replace(',', '-')}.json"
    cached = lattice_service.read_cache(job, name)
    if cached is None or cached.get("version") != CACHE_VERSION:
        cached = {"version": CACHE_VERSION}
        try:
            publication = pipeline.publish_levels(lattice_service.run_spec(job), key)
        except engine.UnsatisfiableError as exc:
            cached.update(anonymous=False, message=str(exc), report={}, statistics=None)
        else:
            report = publication.report
            cached.update(anonymous=True, message="", report={p: report[p] for p in REPORT_PARTS if p in report},
                          statistics=_publication_statistics(job, publication))
        lattice_service.write_cache(job, name, cached)
    # the node was evaluated with the run's metric and weights; its own settings are the full-domain transformation
    return {"kind": "node", "job": str(job.pk), "levels": key, "title": f"Transformation {key}",
            "settings": _settings(job, "full-domain", key, (job.options or {}).get("weights")),
            "anonymous": cached["anonymous"], "message": cached["message"], "report": cached["report"],
            "statistics": cached.get("statistics")}


def _publication_statistics(job: Job, publication) -> dict:
    """The statistics before and after of a node's publication, as services.statistics computes them for a stored
    result: the columns both tables hold in the dataset's order (identifiers' columns left out), the published
    rows against the dataset's, suppressed records left out after (kept as '*' rows or removed)."""
    report = publication.report
    hidden = {e.get("column") for e in report.get("identifiers", [])}
    published = set(publication.table.columns)
    columns = [c for c in datasets.dataset_columns(job.dataset) if c in published and c not in hidden]
    before = datasets.load_frame(job.dataset, columns=columns, dictionary=True)
    flags = np.asarray(publication.suppressed, dtype=bool)
    removed = max(int(report.get("suppressed", 0) or 0) - int(flags.sum()), 0)
    figures = statistics_engine.table_statistics(before, publication.table[columns], flags, removed=removed)
    return json.loads(json.dumps(figures, default=storage.json_default))  # what a cached read gives


def _settings(job: Job, algorithm: str, levels: str, weights) -> dict:
    return {"algorithm": algorithm_label(algorithm), "k": job.k,
            "suppression_limit": format_kind("share", job.suppression_limit), "transformation": levels or MISSING,
            "weights": weights_text(weights, _qi_of(job)) or "none (every quasi-identifier counts the same)"}


def difference(kind: str, a, b) -> tuple[float | None, str]:
    """B - A as a number and as text: the figure's own format with a sign ('+0.120', '−3', '+4%': percentage
    points for shares and risks); MISSING when either side lacks the figure."""
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or isinstance(a, bool) or isinstance(b, bool):
        return None, MISSING
    d = b - a
    if d == 0:
        return 0, format_kind(kind, 0)
    return d, ("+" if d > 0 else "−") + format_kind(kind, abs(d))


def _row(key: str, label: str, help: str, kind: str, a, b) -> dict:
    diff, diff_text = difference(kind, a, b)
    return {"key": key, "label": label, "help": help, "a": a, "b": b, "difference": diff,
            "a_text": format_kind(kind, a), "b_text": format_kind(kind, b), "difference_text": diff_text}


def figure_rows(a: dict, b: dict) -> list[dict]:
    """The run figures (k reached, then the catalogue's RUN_METRICS) either side has, A and B and B - A."""
    def values(report: dict) -> dict:
        out = dict(report.get("metrics") or {})
        if report.get("k_achieved") is not None:
            out["k_achieved"] = report["k_achieved"]
        return out

    va, vb = values(a), values(b)
    return [_row(key, FIGURES[key].label, FIGURES[key].help, FIGURES[key].kind, va.get(key), vb.get(key))
            for key in FIGURE_KEYS if key in va or key in vb]


def attribute_rows(a: dict, b: dict) -> list[dict]:
    """Per quasi-identifier (A's order, then B's others) its per-attribute figures, A and B and B - A. A side
    without them (a local or multidimensional recoding) shows MISSING."""
    rows_a = {r["qi"]: r for r in a.get("attributes") or []}
    rows_b = {r["qi"]: r for r in b.get("attributes") or []}
    out = []
    for qi in list(rows_a) + [q for q in rows_b if q not in rows_a]:
        ra, rb = rows_a.get(qi, {}), rows_b.get(qi, {})
        out.append({"qi": qi, "figures": [_row(key, FIGURES[key].label, FIGURES[key].help, FIGURES[key].kind,
                                               ra.get(source), rb.get(source)) for key, source in ATTRIBUTE_FIGURES]})
    return out


def check_rows(a: dict, b: dict) -> list[dict]:
    """Each privacy model checked on either side (by its description): holds or not, and its reached value."""
    def by_model(report: dict) -> dict:
        return {str(c.get("describe") or c.get("model")): c for c in report.get("model_checks") or []}

    ca, cb = by_model(a), by_model(b)
    out = []
    for name in list(ca) + [n for n in cb if n not in ca]:
        x, y = ca.get(name), cb.get(name)
        first = x or y or {}
        kind = CHECK_KINDS.get(str(first.get("model", "")), "parameter")
        row = _row(f"check:{name}", f"{name}: {first.get('value_label', '')}".rstrip(": "), "", kind,
                   (x or {}).get("value"), (y or {}).get("value"))
        row.update(a_text=format_check(x) if x else MISSING, b_text=format_check(y) if y else MISSING,
                   a_holds=None if x is None else x.get("holds"), b_holds=None if y is None else y.get("holds"))
        if isinstance(row["a"], list) or isinstance(row["b"], list):
            row.update(difference=None, difference_text=MISSING)
        out.append(row)
    return out


# the statistics before and after compared per column (services/statistics.py, computed and cached per result):
# (key, label, kind, numeric columns only); numbers published as ranges are taken at their midpoints
STATISTICS = [("distinct", "Distinct values", "count", False), ("missing", "Missing or '*' cells", "count", False),
              ("mean", "Mean", "amount", True), ("median", "Median", "amount", True),
              ("sd", "Standard deviation", "amount", True)]


def statistics_rows(a: Job, b: Job) -> list[dict] | None:
    """Per column both results publish, the summary statistics of the input, of A and of B and B - A (midpoints for
    ranges); None when either result has no statistics (an Anatomy result, a research subset)."""
    try:
        fa = statistics_service.result_statistics(Result.objects.get(job=a))
        fb = statistics_service.result_statistics(Result.objects.get(job=b))
    except engine.InputError:
        return None
    return statistics_rows_of(fa, fb)


def node_statistics_rows(a: dict, b: dict) -> list[dict] | None:
    """statistics_rows for two lattice nodes (node_side); None when either is not anonymous (no publication)."""
    if not a.get("statistics") or not b.get("statistics"):
        return None
    return statistics_rows_of(a["statistics"], b["statistics"])


def statistics_rows_of(fa: dict, fb: dict) -> list[dict]:
    """The rows of statistics_rows from the two sides' figures (engine.measure.statistics.table_statistics)."""
    by_b = {c["column"]: c for c in fb["columns"]}
    rows = []
    for ca in fa["columns"]:
        cb = by_b.get(ca["column"])
        if cb is None:
            continue
        for key, label, kind, numeric in STATISTICS:
            if numeric and ca["kind"] != "numeric":
                continue

            def value(side: dict, key: str = key, numeric: bool = numeric):
                return (side.get("numbers") or {}).get(key) if numeric else side.get(key)

            row = _row(f"{ca['column']}:{key}", label, "", kind, value(ca["after"]), value(cb["after"]))
            row.update(column=ca["column"], input_text=format_kind(kind, value(ca["before"])))
            rows.append(row)
    return rows


SETTING_LABELS = [("algorithm", "Algorithm"), ("k", "k"), ("suppression_limit", "Suppression limit"),
                  ("transformation", "Transformation (levels)"), ("weights", "Attribute weights")]


def side_by_side(a: dict, b: dict) -> dict:
    """Everything the page and the API show for sides ``a`` and ``b`` (run_side / node_side)."""
    ra, rb = a["report"], b["report"]
    return {
        "a": {k: a[k] for k in ("kind", "job", "levels", "title", "anonymous", "message")},
        "b": {k: b[k] for k in ("kind", "job", "levels", "title", "anonymous", "message")},
        "settings": [{"key": key, "label": label, "a_text": str(a["settings"][key]), "b_text": str(b["settings"][key])}
                     for key, label in SETTING_LABELS],
        "figures": figure_rows(ra, rb),
        "attributes": attribute_rows(ra, rb),
        "checks": check_rows(ra, rb),
    }


def is_comparable_run(job: Job) -> bool:
    """A finished run with a table result (not a transaction dataset's, whose figures are of another kind)."""
    return (job.kind == Job.RUN and job.status == Job.SUCCEEDED and not job.dataset.is_transactions
            and Result.objects.filter(job=job).exists())


def comparable_runs(job: Job) -> list[Job]:
    """The owner's other finished runs of the same dataset with a result (a comparison's B), newest first."""
    return list(Job.objects.filter(owner=job.owner, dataset=job.dataset, kind=Job.RUN, status=Job.SUCCEEDED,
                                   result__isnull=False).exclude(pk=job.pk).order_by("-created"))
