"""The result page of a run: summary cards, the transformation, the original and the published rows side
by side a page at a time, charts, the privacy models' figures and the attack report."""

from __future__ import annotations

import json
import re

import numpy as np
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from ..engine.measure.figure_catalogue import FIGURES, attribute_figures, format_check, format_figure
from ..engine.run.report import TOP_VALUES, value_counts
from ..forms import DELIMITER_CHOICES, delimiter_name
from ..models import Dataset, Job, Result
from ..services import advice, datasets, explain, exports, results, sensitive_bins, storage
from ..services.attribute_weights import weight_rows
from ..services.labels import METRICS  # noqa: F401  (re-exported)
from ..services.setvalued_explain import ncp_key
from .charts import attack_figure, class_size_figure, distribution_figure, natural
from .common import (
    RESULT_PAGES,
    algorithm_label,
    format_duration,
    format_value,
    job_label,
    job_result,
    owned_job,
    result_url,
)
from .items_charts import itemset_figure
from .setvalued import result_page

RESULT_PAGE_SIZE = 50
ATTACK_WORST = 30  # ECs in the table and the chart of the attack report

# metric key -> (label, how to show it); the order is the order of the metrics table.
SUMMARY_CARDS = ["equivalence_classes", "suppressed", "ncp", "discernibility", "prosecutor_risk_highest",
                 "prosecutor_risk_average", "records_at_risk"]
SENSITIVE_CARDS = ["homogeneous_classes", "homogeneous_records"]

CHART_SAMPLE = 200_000


def _sampled_counts(res: Result, ds: Dataset, qis: list[str], stale: bool, n: int) -> tuple[dict, int]:
    """Value counts for results stored before the counts were: on a sample of CHART_SAMPLE rows."""
    rng = np.random.default_rng(0)
    rows = np.sort(rng.choice(n, CHART_SAMPLE, replace=False)) if n > CHART_SAMPLE else None
    out_cols = [q for q in qis if q in results.output_columns(res)]
    output, _ = results.load_output(res)
    frame = None if stale else datasets.load_frame(ds, columns=[q for q in out_cols if q in datasets.dataset_columns(ds)])
    counts = {}
    for q in out_cols:
        after = output[q] if rows is None else output[q].iloc[rows]
        before = (frame[q] if rows is None else frame[q].iloc[rows]) if frame is not None and q in frame else after.iloc[:0]
        counts[q] = {"before": value_counts(before), "after": value_counts(after)}
    return counts, (n if rows is None else CHART_SAMPLE)


def _metric_rows(report: dict, keys, k: int = 1) -> list[dict]:
    """Before and after of each figure, its formula (``help``) and what the value after means for this table
    (``reading``, with a good/fair/poor ``cue``: services.explain)."""
    after, before = report.get("metrics", {}), report.get("metrics_before", {})
    ctx = explain.context(report, k)
    rows = []
    for key in keys:
        if key not in after and key not in before:
            continue
        label, kind = METRICS[key]
        reading = explain.reading(key, after.get(key), ctx)
        rows.append({"key": key, "label": label, "help": FIGURES[key].help,
                     "before": format_value(before.get(key), kind), "after": format_value(after.get(key), kind),
                     "reading": reading.text if reading else "", "cue": reading.cue if reading else None,
                     "cue_label": reading.cue_label if reading else ""})
    return rows


def _comparison(frame, output, suppressed, start: int, identifying: list[str], sensitive: str | None = None,
                published: np.ndarray | None = None) -> dict:
    """One page of the original and the anonymized rows (already cut to the page), aligned by row. The
    sensitive column comes first on both sides (kept in view while the tables scroll sideways).
    ``published``: when suppressed records were removed from the release, the page is one of dataset rows
    (``frame``: rows start, start+1, ...) and ``published`` says, per dataset row, which row of ``output`` it is
    (-1: removed, shown with its original values and 'removed from the release', never silently missing)."""
    def front(columns: list) -> list:
        return [c for c in columns if c == sensitive] + [c for c in columns if c != sensitive]

    orig_cols = front(list(frame.columns))
    out_cols = front(list(output.columns))

    def original_cells(o) -> list[dict]:
        return [{"value": "" if o is None else str(o[c]), "struck": c in identifying, "sensitive": c == sensitive}
                for c in orig_cols]

    def anonymized_cells(o, a) -> list[dict]:
        return [{"value": str(a[c]), "changed": o is None or c not in frame.columns or str(a[c]) != str(o[c]),
                 "sensitive": c == sensitive} for c in out_cols]

    rows = []
    if published is not None:
        for i, at in enumerate(published):
            o = frame.iloc[i]
            if at < 0:
                rows.append({"number": start + i + 1, "suppressed": True, "removed": True,
                             "original": original_cells(o), "anonymized": []})
            else:
                rows.append({"number": start + i + 1, "suppressed": bool(suppressed[at]),
                             "original": original_cells(o), "anonymized": anonymized_cells(o, output.iloc[at])})
    else:
        shown = output.attrs.get("rows")  # the dataset row it comes from
        for i in range(len(output)):
            o = frame.iloc[i] if i < len(frame) else None
            number = int(shown[i]) + 1 if shown is not None and shown[i] >= 0 else start + i + 1
            rows.append({"number": number, "suppressed": bool(suppressed[i]), "original": original_cells(o),
                         "anonymized": anonymized_cells(o, output.iloc[i])})
    return {
        "original_columns": [{"name": c, "struck": c in identifying, "sensitive": c == sensitive} for c in orig_cols],
        "anonymized_columns": out_cols,
        "sensitive": sensitive if sensitive in out_cols else None,
        "rows": rows,
        "any_suppressed": any(r["suppressed"] for r in rows),
    }


def _dataset_paged(res: Result, report: dict, expected_rows: int, page_number) -> dict | None:
    """Suppressed records removed from the release: the side-by-side view pages through the dataset's rows
    (every one shown, the removed ones marked) instead of the published ones. None when the published rows'
    dataset rows are not stored in order (older results, m-invariance's counterfeits): the published rows then."""
    if not int((report.get("publishing") or {}).get("suppressed_removed", 0) or 0):
        return None
    path = storage.output_path(res)
    if results.ROW_COLUMN not in storage.stored_columns(path):
        return None
    rows = storage.read_integers(path, results.ROW_COLUMN)  # read on every page of the view: no object cells
    if len(rows) and (rows[0] < 0 or rows[-1] >= expected_rows or (np.diff(rows) <= 0).any()):
        return None
    page = Paginator(range(expected_rows), RESULT_PAGE_SIZE).get_page(page_number)
    start = page.start_index() - 1 if expected_rows else 0
    stop = page.end_index() if expected_rows else 0
    first, last = np.searchsorted(rows, [start, stop])
    published = np.full(stop - start, -1, dtype=np.int64)
    published[rows[first:last] - start] = np.arange(last - first)
    return {"page": page, "start": start, "stop": stop, "first": int(first), "last": int(last),
            "published": published}


def _numeric(side: dict) -> bool:
    shown = side.get("values", [])
    return bool(shown) and all(sensitive_bins.as_number(v) is not None for v in shown)


def _numeric_distributions(ds: Dataset, res: Result, counts: dict, n: int) -> dict[str, tuple]:
    """Per numeric QI with more distinct values than the charts show: its values in ranges of a round width in
    value order (not its 30 most frequent values in frequency order), read from the dataset; the published side
    in the same ranges when it is still numbers with many values, else its values in value order."""
    chosen = [qi for qi, c in counts.items() if c["before"].get("distinct", 0) > TOP_VALUES and _numeric(c["before"])]
    if not chosen or max(n, ds.n_rows) > sensitive_bins.BINNED_MAX_ROWS:
        return {}
    chosen = [qi for qi in chosen if qi in datasets.dataset_columns(ds)]
    frame = datasets.load_frame(ds, columns=chosen)
    published = results.output_columns(res)
    out = {}
    for qi in chosen:
        before = sensitive_bins.histogram(frame[qi])
        if before is None:
            continue
        after = counts[qi]["after"]
        if after.get("distinct", 0) > TOP_VALUES and _numeric(after) and qi in published:
            column = storage.read_frame(storage.output_path(res), columns=[qi])[qi]
            after = sensitive_bins.histogram(column, before["edges"]) or after
            label = f"Anonymized ({len(before['edges']) - 1} ranges)"
        else:
            order = sorted(range(len(after["values"])), key=lambda i: sensitive_bins.value_order(after["values"][i]))
            label = ("Anonymized (in value order)" if after.get("distinct", 0) <= TOP_VALUES
                     else f"Anonymized (top {TOP_VALUES}, in value order)")
            after = {"values": [after["values"][i] for i in order], "counts": [after["counts"][i] for i in order]}
        out[qi] = (before, after, (f"Original ({len(before['edges']) - 1} ranges)", label))
    return out


RECODING_TEXT = {
    "multidimensional": "multidimensional recoding ({label}): each equivalence class has its own ranges",
    "local": "local recoding ({label}): each cluster is generalized on its own",
    "m-invariance": "m-invariance ({label}): each group is generalized on its own; the counterfeits column counts "
                    "the group's counterfeit rows (shown here with an empty original)",
}


def _recoding_rows(report: dict) -> list[dict]:
    """Per QI: how many distinct values the output has (local/multidimensional recodings)."""
    labels = report.get("transformation_labels", {})
    counts = report.get("value_counts", {})
    rows = []
    for qi in report.get("quasi_identifiers", []):
        distinct = counts.get(qi, {}).get("after", {}).get("distinct")
        if distinct is None:
            m = re.search(r"(\d+) distinct", labels.get(qi, ""))
            distinct = int(m.group(1)) if m else None
        before = counts.get(qi, {}).get("before", {}).get("distinct")
        rows.append({"qi": qi, "distinct": distinct, "before": before})
    return rows


# Options and search statistics in words: no raw key is shown (an unknown key reads with spaces).
PLAIN_LABELS = {
    "metric": "Metric the search minimizes",
    "keep_lattice": "Every lattice node kept",
    "optimum_levels": "Levels of the optimum",
    "optimum_value": "Metric value of the optimum",
    "nodes_checked": "Nodes checked",
    "lattice_size": "Nodes in the lattice",
    "anonymous_nodes_known": "Nodes known to be anonymous",
    "pruned_by_bound": "Nodes pruned by the bound",
    "rollups": "Roll-ups (counts derived from a finer node)",
    "monotonic_models": "Models monotonic (pruning allowed)",
    "search_seconds": "Search time (s)",
    "minimal_anonymous_nodes": "Minimal anonymous nodes",
    "time_budget": "Time budget (s)",
    "memory_mb": "Memory (MB)",
    "seed": "Random seed",
    "levels": "Levels chosen",
    "variant": "Variant",
}
# internal keys repeated elsewhere (metric_key: the metric's name again; algorithm, strategy: the page's title)
HIDDEN_KEYS = {"metric_key", "algorithm", "strategy", "lattice"}


def plain_label(key: str) -> str:
    """An option's or a search statistic's name in words."""
    return PLAIN_LABELS.get(key, key[:1].upper() + key[1:].replace("_", " "))


def _plain_rows(d: dict) -> list[dict]:
    """Options or search statistics as (name, shown value) rows, in words; the lattice of --keep-lattice is a
    download (lattice.json), never a value on the page."""
    out = []
    for key, value in (d or {}).items():
        if key in HIDDEN_KEYS or value is None or value == "":  # an option left unset (no weights) is not a setting
            continue
        if isinstance(value, dict) and all(isinstance(v, (int, float, str)) for v in value.values()):
            out.append({"name": plain_label(key), "key": key,
                        "value": ", ".join(f"{k} {v}" for k, v in value.items())})
            continue
        if isinstance(value, bool):
            shown = "yes" if value else "no"
        elif isinstance(value, int):
            shown = f"{value:,}"
        elif isinstance(value, float):
            shown = f"{value:,.4g}"
        elif isinstance(value, (dict, list)):
            shown = json.dumps(value)
        else:
            shown = str(value)
        out.append({"name": plain_label(key), "key": key, "value": shown})
    return out


def _model_value(check: dict) -> str:
    """The reached value of a model check as the catalogue reads it (engine.measure.figure_catalogue)."""
    return format_check(check)


def attribute_context(report: dict, job) -> dict:
    """The result page's per-quasi-identifier rows (figure_catalogue.attribute_figures), each with the run's
    attribute weight when it was weighted (services.attribute_weights: the unnamed at 0.5)."""
    rows = attribute_figures(report)
    weights = {w["qi"]: w["text"] for w in weight_rows((job.options or {}).get("weights"), [r["qi"] for r in rows])}
    return {"attribute_figures": [dict(r, weight=weights.get(r["qi"], "")) for r in rows], "weighted": bool(weights)}


def model_cards(report: dict) -> list[dict]:
    """One card per privacy model of the run (k included): what was asked, the figure reached, whether it holds."""
    checks = report.get("model_checks")
    if checks is None:  # results stored before the checks were: the models only (verified results hold them)
        checks = [{"describe": m.get("model", ""), "holds": report.get("verified")} for m in report.get("models", [])]
    return [{"name": c.get("model", ""), "describe": c.get("describe", ""), "holds": c.get("holds"),
             "value": _model_value(c), "value_label": c.get("value_label", ""),
             "failing": c.get("failing_classes", 0)} for c in checks]


def _worst_classes(attack: dict, limit: int = ATTACK_WORST) -> list[dict]:
    """The ECs of the report with the lowest entropy (ties: the larger EC first), with their EMD to the table."""
    table = attack.get("table_distribution", {})
    dists = {d["class"]: d["counts"] for d in attack.get("class_distributions", [])}
    capped = {d["class"]: d for d in attack.get("class_distributions", []) if "other_values" in d}
    total = sum(table.values())
    rows = []
    for e in attack.get("entropy", []):
        counts = dists.get(e["class"], {})
        size = e["size"] or 1
        # ½ Σ_v |p_v - q_v| over the EC's own values only (the others add q_v each, and Σ q_v = 1): a term per
        # value of the EC, not per value of the table (100,000 of a continuous column)
        emd = 0.5 * (total + sum(abs(c / size - table.get(v, 0.0)) - table.get(v, 0.0)
                                               for v, c in counts.items()))
        if e["class"] in capped:  # an EC's counts capped by the report (many values): its EMD and count as stored
            emd = capped[e["class"]].get("emd", emd)
        top = max(counts.items(), key=lambda kv: kv[1]) if counts else ("", 0)
        rows.append({"class": e["class"], "size": e["size"], "entropy": e["entropy"], "emd": emd,
                     "distinct": len(counts) + capped.get(e["class"], {}).get("other_values", 0),
                     "bin_counts": capped.get(e["class"], {}).get("bin_counts"),
                     "top_value": top[0], "top_share": top[1] / size, "counts": counts})
    rows.sort(key=lambda r: (r["entropy"], -r["size"], r["class"]))
    return rows[:limit]


ATTACK_VALUES = 20  # rows of the posterior table of a column with many values; the rest summed in one line
CHART_VALUES = 12  # values stacked in the attack chart of a non-numeric column with many values (+ "other")
HOMOGENEOUS_ROWS = 10  # dataset rows listed per homogeneous EC


def _posterior_rows(attack: dict) -> tuple[list[dict], dict | None]:
    """The posterior table: every value when they are few (numbers in order, then text); else the ATTACK_VALUES
    values of highest posterior (ties: the larger table share, then the value) and one line for the rest (how
    many, their share of the records). Picked with numpy: a continuous column has a value per record."""
    posterior = attack.get("posterior") or {}

    def row(value: str) -> dict:
        p = posterior[value]
        return {"value": value, "prior": p["prior"], "highest": p["highest"], "class": p["class"],
                "class_size": p["class_size"]}

    if len(posterior) <= sensitive_bins.MANY_VALUES:
        return sorted((row(v) for v in posterior), key=lambda r: natural(r["value"])), None
    values = list(posterior)
    highest = np.fromiter((p["highest"] for p in posterior.values()), dtype=float, count=len(values))
    prior = np.fromiter((p["prior"] for p in posterior.values()), dtype=float, count=len(values))
    # candidates: every value tied with the ATTACK_VALUES-th by (highest, prior); the exact order among them
    cut = np.lexsort((-prior, -highest))[ATTACK_VALUES - 1]
    near = np.flatnonzero((highest > highest[cut]) | ((highest == highest[cut]) & (prior >= prior[cut])))
    top = sorted((row(values[i]) for i in near), key=lambda r: (-r["highest"], -r["prior"], natural(r["value"])))
    top = top[:ATTACK_VALUES]
    rest = len(values) - len(top)
    left = (attack.get("capped") or {}).get("posterior") or {}  # values the report itself left out (capped)
    return top, {"values": rest + left.get("other_values", 0),
                 "share": max(float(prior.sum()) - sum(r["prior"] for r in top), 0.0) + left.get("other_share", 0.0)}


def _shown_value(value) -> str:
    """A sensitive value as the attack report shows it: numbers to 6 significant digits (a wage stored as
    31.6346912671082 reads 31.6347), text as it is."""
    number = sensitive_bins.as_number(value)
    if number is None or len(str(value)) <= 8:
        return value
    return sensitive_bins.figure(number, 6)


def _grouped_chart(attack: dict, worst: list[dict]) -> tuple[dict, list[dict], list[str]]:
    """A non-numeric column with many values, for the chart: its CHART_VALUES most frequent values and one
    "other values" bar."""
    table = attack.get("table_distribution", {})
    top = sorted(table, key=lambda v: (-table[v], natural(v)))[:CHART_VALUES]
    left = (attack.get("capped") or {}).get("table_distribution") or {}  # values the report left out (capped)
    other = f"other values ({len(table) - len(top) + left.get('other_values', 0):,})"
    keep = set(top)

    def grouped(counts: dict) -> dict:
        out = {v: counts.get(v, 0) for v in top}
        out[other] = sum(c for v, c in counts.items() if v not in keep)
        return out

    shares = grouped(table)
    shares[other] += left.get("other_share", 0.0)
    return ({"table_distribution": shares}, [{**w, "counts": grouped(w["counts"])} for w in worst],
            [*top, other])


def attack_sections(report: dict, result: Result | None = None) -> tuple[list[dict], dict]:
    """Per sensitive column of report["attack"]: the summary, posteriors, worst ECs; and their charts. A
    numeric column with many values is also read in ranges (services.sensitive_bins), from the published rows
    of ``result`` when given."""
    sections, figures = [], {}
    for column, attack in (report.get("attack") or {}).items():
        worst = _worst_classes(attack)
        table = attack.get("table_distribution", {})
        bins = attack.get("bins")  # the report's ranges (a capped numeric column): the same rule, over all values
        if bins:
            binning: sensitive_bins.Binning | None = sensitive_bins.Binning(bins["edges"], bins["labels"])
        else:
            binning = sensitive_bins.binning(table) if sensitive_bins.continuous(table) else None
        posterior, rest = _posterior_rows(attack)
        for w in worst:
            w["top_value"] = _shown_value(w["top_value"])
            if binning is not None:
                in_ranges = w["bin_counts"] or sensitive_bins.binned_counts(binning, w["counts"])
                w["bins"] = sum(1 for c in in_ranges if c)
        homogeneous = [{**h, "value": _shown_value(h["value"]), "rows_shown": h.get("rows", [])[:HOMOGENEOUS_ROWS],
                        "rows_more": max(len(h.get("rows", [])) - HOMOGENEOUS_ROWS, 0)}
                       for h in attack.get("homogeneous", [])[:ATTACK_WORST]]
        binned = None
        if bins:  # the report's figures on ranges (over all its values; no column read here)
            binned = {"records": attack.get("records", 0), "classes": attack.get("equivalence_classes", 0),
                      "homogeneous_classes": bins["homogeneous_classes"],
                      "homogeneous_records": bins["records_in_homogeneous_classes"], "l_min": bins["l_min"],
                      "posterior": bins["posterior"]}
        elif binning is not None and result is not None:  # a report stored before it had them
            binned = sensitive_bins.binned_attack(result, report, column, binning)
        sections.append({
            "column": column, "slug": re.sub(r"[^A-Za-z0-9_-]", "_", column),
            "records": attack.get("records", 0), "classes": attack.get("equivalence_classes", 0),
            "homogeneous_classes": attack.get("homogeneous_classes", 0),
            "homogeneous_records": attack.get("records_in_homogeneous_classes", 0),
            "homogeneous": homogeneous,
            "worst_emd": attack.get("worst_emd_equal"), "worst_emd_ordered": attack.get("worst_emd_ordered"),
            "entropy_min": attack.get("entropy_min"), "entropy_mean": attack.get("entropy_mean"),
            "posterior": [{**p, "value": _shown_value(p["value"])} for p in posterior], "posterior_rest": rest,
            "values": (attack.get("capped") or {}).get("distinct_values", len(table)),
            "binning": binning, "binned": binned, "worst": worst,
        })
        if not worst:
            continue
        if binning is not None:
            shares = [p["prior"] for p in bins["posterior"]] if bins else sensitive_bins.binned_table(binning, table)
            ranges = {"table_distribution": dict(zip(binning.labels, shares))}
            rows = [{**w, "counts": dict(zip(binning.labels, w["bin_counts"]
                                             or sensitive_bins.binned_counts(binning, w["counts"])))}
                    for w in worst]
            figures[column] = attack_figure(ranges, rows, order=binning.labels)
        elif len(table) > sensitive_bins.MANY_VALUES:
            figures[column] = attack_figure(*_grouped_chart(attack, worst))
        else:
            figures[column] = attack_figure(attack, worst)
    return sections, figures


def _st_page(res: Result, request) -> dict | None:
    """Anatomy: one page of the sensitive table (group, value, count)."""
    st = results.load_sensitive_table(res)
    if st is None:
        return None
    page = Paginator(range(len(st)), RESULT_PAGE_SIZE).get_page(request.GET.get("st_page"))
    start = page.start_index() - 1 if len(st) else 0
    rows = st.iloc[start:page.end_index()].astype(str).values.tolist() if len(st) else []
    return {"columns": [str(c) for c in st.columns], "rows": rows, "page": page}


@login_required
@require_GET
def result(request, job_id):
    j = owned_job(request, job_id)
    if j.status != Job.SUCCEEDED:
        return redirect("anonymizer:job", job_id=j.pk)
    if j.kind in RESULT_PAGES or j.kind == Job.LATTICE:
        return redirect(result_url(j))
    res = job_result(j)
    report = res.report
    if report.get("kind") == "set-valued":  # a transaction dataset's k^m result

        return result_page(request, j, res)
    ds = j.dataset
    n = report.get("records", ds.n_rows)
    research = report.get("research_subset")  # δ-presence against a population: the research rows only
    identifying = report.get("identifying_removed", [])
    page = Paginator(range(n), RESULT_PAGE_SIZE).get_page(request.GET.get("page"))
    start = page.start_index() - 1 if n else 0
    stop = page.end_index() if n else 0
    # only the row groups of this page are read, from the output and from the stored dataset
    output, suppressed = results.output_rows(res, start, stop)
    config_names = [c["name"] for c in j.config.get("columns", [])]
    if j.config.get("population"):
        config_names = j.config["population"].get("research_columns", config_names)
    expected_rows = research["research_records"] if research else report.get("input_records", n)
    stale = ds.n_rows != expected_rows or datasets.dataset_columns(ds) != config_names
    rows = output.attrs.get("rows")  # the dataset row of each published row (suppressed ones may be left out)
    every_row = None if stale or report.get("recoding") == "anatomy" else \
        _dataset_paged(res, report, expected_rows, request.GET.get("page"))
    if every_row is not None:  # suppressed records removed: every dataset row of the page, removed ones marked
        page, start = every_row["page"], every_row["start"]
        output, suppressed = results.output_rows(res, every_row["first"], every_row["last"])
        frame = datasets.dataset_rows(ds, start, every_row["stop"])
    elif rows is not None and not stale and (rows < 0).any():
        # m-invariance: a counterfeit row (-1) has no dataset row; its original side stays empty
        real = datasets.dataset_rows_at(ds, rows[rows >= 0])
        frame = real.iloc[np.maximum(np.cumsum(rows >= 0) - 1, 0)].reset_index(drop=True).astype(object)
        frame.loc[rows < 0, :] = ""
    else:
        frame = datasets.dataset_rows_at(ds, rows) if rows is not None and not stale else \
            datasets.dataset_rows(ds, start, stop)
    # a pseudonymized, masked or surrogate column: its originals are not shown beside the published tokens (that
    # pairing is the re-identification table, kept encrypted and sent only after the password)
    for entry in report.get("identifiers", []):
        if entry.get("treatment") != "remove" and entry.get("column") in frame.columns:
            frame = frame.assign(**{entry["column"]: "(hidden)"})
    qis = report.get("quasi_identifiers", [])
    sensitive = report.get("sensitive")
    k_achieved = report.get("k_achieved", 0)
    limit = float(report.get("suppression_limit", j.suppression_limit))

    transformation = [
        {"qi": qi, "level": level, "label": report.get("transformation_labels", {}).get(qi, "")}
        for qi, level in results.transformation_levels(report)
    ]
    recoding = report.get("recoding", "full-domain")
    recoding_text = RECODING_TEXT.get(recoding, "{label}").format(label=job_label(j))
    counts = report.get("value_counts")
    if counts:
        chart_rows, sampled = n, False
        if stale:
            counts = {q: {"before": {"values": [], "counts": []}, "after": c["after"]} for q, c in counts.items()}
    else:
        counts, chart_rows = _sampled_counts(res, ds, qis, stale, n)
        sampled = chart_rows < n
    charts = {"classes": class_size_figure(report.get("class_size_histogram", {})), "distributions": {}}
    ranges = {} if stale or research else _numeric_distributions(ds, res, counts, n)
    for qi in qis:
        if qi in ranges:
            charts["distributions"][qi] = distribution_figure(*ranges[qi])
        elif qi in counts:
            charts["distributions"][qi] = distribution_figure(counts[qi]["before"], counts[qi]["after"])
    attack, charts["attack"] = attack_sections(report, res)
    if report.get("set_column", {}).get("frequent_itemsets"):  # mixed mode: the set column's itemsets

        charts["set_itemsets"] = itemset_figure(report["set_column"]["frequent_itemsets"])
    return render(request, "anonymizer/result.html", {
        "model_cards": model_cards(report),
        "attack": attack,
        "anatomy": recoding == "anatomy",
        "st": _st_page(res, request) if recoding == "anatomy" else None,
        "job": j,
        "dataset": ds,
        "report": report,
        # per quasi-identifier: the catalogue's figures (as the API and the release report), the run's weights beside
        **attribute_context(report, j),
        "algorithm": job_label(j),
        "set_algorithm": algorithm_label(report["set_column"]["algorithm"]) if report.get("set_column") else "",
        # the set-valued column's NCP is the catalogue's figure for its algorithm (Apriori's or the groups built)
        "set_ncp_key": ncp_key(report["set_column"]["algorithm"]) if report.get("set_column") else "",
        "duration": format_duration(j.duration),
        "k_achieved": k_achieved,
        "k_ok": k_achieved >= j.k,
        "k_before": format_figure("k_achieved", report.get("metrics_before", {}).get("min_class_size")),
        "k_label": FIGURES["k_achieved"].label,
        "k_help": FIGURES["k_achieved"].help,
        "classes_help": FIGURES["equivalence_classes"].help,
        "suppressed_count": report.get("suppressed", 0),
        # the limit the run applied (the report's: SafePub suppresses by its own rule, with no limit)
        "suppression_allowed": int(limit * report.get("input_records", n) + 1e-9),
        "research": research,
        "suppression_percent": f"{limit * 100:g}",
        "cards": _metric_rows(report, SUMMARY_CARDS + (SENSITIVE_CARDS if sensitive else []), j.k),
        # the sensitive column read on value ranges (a continuous one): its homogeneity beside the exact values'
        "ranges_max_rows": sensitive_bins.BINNED_MAX_ROWS,
        "ranges_card": next((a for a in attack if a["column"] == sensitive and a["binned"]), None),
        "all_metrics": _metric_rows(report, METRICS, j.k),
        "has_lattice": bool((report.get("search") or {}).get("lattice")),
        "advice": advice.advise(j, report),
        "transformation": transformation,
        "recoding": recoding,
        "recoding_text": recoding_text,
        "recoding_rows": _recoding_rows(report) if not transformation else [],
        "options_rows": _plain_rows(report.get("options")),
        # the metric once: under the options when it is one, not again under the search statistics
        "search_rows": _plain_rows({key: value for key, value in (report.get("search") or {}).items()
                                    if not (key == "metric" and "metric" in (report.get("options") or {}))}),
        "identifying": identifying,
        "page": page,
        "table": _comparison(frame, output, suppressed, start, identifying, sensitive,
                             every_row["published"] if every_row is not None else None),
        "publishing": report.get("publishing") or {},
        "stale": stale,
        "qis": [q for q in qis if q in charts["distributions"]],
        "charts": charts,
        "chart_rows": chart_rows,
        "chart_sampled": sampled,
        "steps_json": json.dumps(report.get("steps", []), indent=1),
        "delimiter_choices": DELIMITER_CHOICES,
        "export_format_choices": [(f.name, f.label) for f in exports.EXPORT_FORMATS.values()],
        "default_delimiter": delimiter_name(ds.delimiter),
    })
