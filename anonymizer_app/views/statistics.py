"""A result's statistics before and after (/jobs/<id>/result/statistics/): per column counts, numbers and
frequencies of the dataset's rows against the published rows, and for two columns picked on a GET form their
contingency tables and the change in association (services.statistics; definitions.md, "Statistics before
and after"). A synthetic set (a job of kind "synthesis") is compared the same way: its rows against the
dataset's, each table counted on its own (no row is paired, none suppressed). Owner-only: another user's job is
a 404. Every figure reads through the figure catalogue's kinds
(engine.measure.figure_catalogue.format_kind), every value is escaped by the template (and by plotly_escape in
the charts)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ..engine import InputError
from ..engine.measure.figure_catalogue import format_kind
from ..engine.measure.statistics import QUANTILES
from ..models import Job
from ..services import statistics as statistics_service
from ..templatetags.cells import MISSING_TEXT
from .common import job_result, owned_job
from .statistics_charts import frequency_figure, histogram_figure

# (key, label) of the numeric figures, in the order the tables list them
NUMBER_ROWS = [("records", "Values counted"), ("mean", "Mean"), ("sd", "Standard deviation (n − 1)"),
               ("median", "Median")] + [(f"p{round(p * 100)}", f"{round(p * 100)}th percentile") for p in QUANTILES]
ASSOCIATION_ROWS = [("cramers_v", "Cramér's V (no continuity correction)"),
                    ("pearson", "Pearson correlation (midpoints)"), ("spearman", "Spearman correlation (midpoints)")]


def number_rows(column: dict) -> list[dict]:
    """The numeric figures of a column: before, after (by midpoint when generalized) and interval-aware."""
    before, after = column["before"].get("numbers", {}), column["after"].get("numbers", {})
    aware = column["after"].get("interval_aware")
    rows = []
    for key, label in NUMBER_ROWS:
        kind = "count" if key == "records" else "amount"
        values = [format_kind(kind, before.get(key)), format_kind(kind, after.get(key))]
        if aware is not None:
            values.append(format_kind(kind, aware.get(key)))
        rows.append({"key": key, "label": label, "values": values})
    return rows


def count_row(column: dict, synthetic: bool = False) -> dict:
    """A column's counts before and after; a synthetic set's after leaves out '*' cells and suppressed records:
    it generalizes and suppresses nothing."""
    b, a = column["before"], column["after"]
    recoded = [] if synthetic else [format_kind("count", a["generalized_to_root"]),
                                    format_kind("count", a["suppressed"])]
    return {"column": column["column"], "kind": column["kind"],
            "before": [format_kind("count", b[k]) for k in ("records", "non_missing", "missing", "distinct")],
            "after": [format_kind("count", a[k]) for k in ("records", "non_missing", "missing")] + recoded +
                     [format_kind("count", a["distinct"])]}


def frequency_rows(side: dict) -> list[dict]:
    rows = [{"value": v if str(v).strip() else MISSING_TEXT, "missing": not str(v).strip(),
             "count": format_kind("count", c)} for v, c in zip(side["values"], side["counts"])]
    if side.get("other_values"):
        rows.append({"value": f"({format_kind('count', side['other_values'])} other values)", "missing": True,
                     "count": format_kind("count", side["other_records"])})
    return rows


def signed(value) -> str:
    text = format_kind("ratio", value)
    return "+" + text if value is not None and value > 0 else text


def pair_context(pair: dict) -> dict:
    rows = []
    for key, label in ASSOCIATION_ROWS:
        if key != "cramers_v" and pair["kinds"] != ["numeric", "numeric"]:
            continue
        rows.append({"key": key, "label": label, "before": format_kind("ratio", pair["before"][key]),
                     "after": format_kind("ratio", pair["after"][key]), "change": signed(pair["change"][key])})

    def table(side: dict) -> dict:
        t = side["table"]
        shown = [v if str(v).strip() else MISSING_TEXT for v in t["rows"]]
        return {"columns": [v if str(v).strip() else MISSING_TEXT for v in t["columns"]],
                "rows": [{"label": label, "counts": [format_kind("count", c) for c in counts]}
                         for label, counts in zip(shown, t["counts"])],
                "records": format_kind("count", side["records"])}

    return {"columns": pair["columns"], "rows": rows, "before": table(pair["before"]), "after": table(pair["after"])}


@login_required
@require_GET
def result_statistics(request, job_id):
    job = owned_job(request, job_id)
    if job.kind not in statistics_service.PUBLISHING_KINDS:
        raise Http404("this job has no published table")
    result = job_result(job)
    status, error, pair, figures = 200, "", None, None
    try:
        figures = statistics_service.result_statistics(result)
    except InputError as exc:
        error = str(exc)
    columns = [c["column"] for c in figures["columns"]] if figures else []
    first, second = request.GET.get("a", ""), request.GET.get("b", "")
    if figures and (first or second):
        try:
            pair = pair_context(statistics_service.pair_statistics(result, first, second))
        except InputError as exc:
            error, status = str(exc), 400
    charts, details = {}, []
    for column in (figures or {}).get("columns", []):
        name = column["column"]
        if column.get("histogram"):
            charts[name] = histogram_figure(column["histogram"], "interval_aware" in column["after"])
        else:
            charts[name] = frequency_figure(column["before"]["frequencies"], column["after"]["frequencies"])
        details.append({"column": name, "kind": column["kind"], "chart": f"chart-{len(details)}",
                        "numbers": number_rows(column) if column["kind"] == "numeric" else [],
                        "interval_aware": "interval_aware" in column["after"],
                        "ranges": format_kind("count", column["after"].get("ranges")),
                        "before": frequency_rows(column["before"]["frequencies"]),
                        "after": frequency_rows(column["after"]["frequencies"])})
    synthetic = job.kind == Job.SYNTHESIS  # made-up rows: none paired with an input row, none suppressed
    return render(request, "anonymizer/result_statistics.html", {
        "job": job, "dataset": job.dataset, "figures": figures, "error": error, "columns": columns,
        "synthetic": synthetic, "method": (result.report.get("synthesis") or {}).get("label", "") if synthetic else "",
        "counts": [count_row(c, synthetic) for c in (figures or {}).get("columns", [])], "details": details,
        "chart_ids": {d["column"]: d["chart"] for d in details}, "charts": {d["chart"]: charts[d["column"]]
                                                                          for d in details},
        "pair": pair, "first": first or (columns[0] if columns else ""),
        "second": second or (columns[1] if len(columns) > 1 else ""),
        "suppressed": format_kind("count", (figures or {}).get("suppressed")),
        "records_before": format_kind("count", (figures or {}).get("records_before")),
        "records_after": format_kind("count", (figures or {}).get("records_after")),
    }, status=status)
