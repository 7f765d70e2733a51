"""The release report of a run: what a data steward files with the data protection officer. The dataset, the
columns' roles, the hierarchies and the level each was generalized to, the privacy models with their
parameters, the algorithm and its options, the verification statement, the risk and utility figures before
and after (explained, with charts), the suppressed records and the configuration that repeats the run.

One context for the page and the PDF; the PDF is the same HTML rendered by WeasyPrint, with no access to
any URL (the charts are inline SVG, the stylesheet is read from the static files)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from django.conf import settings
from django.http import Http404, HttpResponse
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.http import content_disposition_header

from hierarchy_editor.models import Hierarchy

from ..engine import ALGORITHMS, Role
from ..engine.measure.figure_catalogue import attribute_figures, format_check, format_figure
from ..engine.privacy import PRIVACY_MODELS, model_groups
from ..engine.run.spec import KEEP, SUPPRESSED_ROWS
from ..models import Job, Result
from . import explain, exports, model_utility, rerun, statistics
from .labels import METRICS, format_value, job_label
from .results import RESULT_PAGES, job_result
from .svg_charts import Series, bar_chart

UTILITY_KEYS = ["ncp", "generalization_height", "equivalence_classes", "mean_class_size", "discernibility", "c_avg",
                "non_uniform_entropy", "loss"]
RISK_KEYS = ["prosecutor_risk_highest", "prosecutor_risk_average", "records_at_risk", "marketer_risk",
             "sample_uniques", "homogeneous_classes", "homogeneous_records"]
RISK_CHART = {"prosecutor_risk_highest": "highest", "prosecutor_risk_average": "average",
              "records_at_risk": "records at risk", "marketer_risk": "marketer"}
MAX_BARS = 16
# WeasyPrint logs every layout step at INFO: not in the server's log
logging.getLogger("weasyprint.progress").setLevel(logging.WARNING)
REPORT_CSS = Path(__file__).resolve().parents[2] / "static" / "css" / "report.css"


def hierarchy_rows(job: Job, report: dict) -> list[dict]:
    """Per quasi-identifier: the hierarchy used (its name, or the default built from the data) and the
    generalization applied (level of height, or what the local/multidimensional recoding left)."""
    columns = [c for c in job.config.get("columns", []) if c["role"] == Role.QUASI_IDENTIFYING.value]
    ids = [c["hierarchy"] for c in columns if c.get("hierarchy")]
    names = dict(Hierarchy.objects.filter(pk__in=ids, owner=job.owner).values_list("pk", "name"))
    labels = report.get("transformation_labels", {})
    counts = report.get("value_counts", {})
    rows = []
    for c in columns:
        if c.get("hierarchy_snapshot"):
            used = f"{c['hierarchy_snapshot'].get('name', '')} (deleted since; its text is kept with the job)"
        elif c.get("hierarchy"):
            used = names.get(c["hierarchy"], "(deleted)")
        else:
            article = "an" if c["type"][:1] in "aeiou" else "a"  # "an integer column", "a date column"
            used = f"default for {article} {c['type']} column, built from the data"
        distinct = counts.get(c["name"], {})
        rows.append({"column": c["name"], "hierarchy": used, "applied": labels.get(c["name"], ""),
                     "before": distinct.get("before", {}).get("distinct"),
                     "after": distinct.get("after", {}).get("distinct")})
    return rows


def verification_statement(report: dict) -> str:
    """One paragraph: whether the published rows were checked again and what holds."""
    checks = report.get("model_checks") or []
    held = [c.get("describe") or c.get("model", "") for c in checks if c.get("holds")]
    broken = [c.get("describe") or c.get("model", "") for c in checks if c.get("holds") is False]
    if not report.get("verified"):
        return ("This table was NOT verified: the figures below are those of the run, not a check of the "
                "published rows. Do not release it.")
    text = (f"Before it was stored, the published table ({report.get('records', 0):,} rows) was read back and "
            f"every privacy model was checked again on its rows, independently of the algorithm that produced it")
    text += f": {', '.join(held)} hold{'s' if len(held) == 1 else ''}." if held else "."
    if broken:
        text += f" Not met: {', '.join(broken)}."
    return text


def figure_rows(report: dict, keys: list[str], k: int, labels: dict[str, tuple[str, str]], fmt) -> list[dict]:
    """Before and after of each figure, with its plain-words reading and cue (of the value after)."""
    after, before = report.get("metrics", {}), report.get("metrics_before", {})
    ctx = explain.context(report, k)
    ctx_before = {**ctx, "kept": ctx["n"]}
    rows = []
    for key in keys:
        if key not in after and key not in before:
            continue
        label, kind = labels[key]
        now = explain.reading(key, after.get(key), ctx)
        was = explain.reading(key, before.get(key), ctx_before)
        rows.append({"key": key, "label": label, "before": fmt(before.get(key), kind), "after": fmt(after.get(key), kind),
                     "text": now.text if now else "", "cue": now.cue if now else None,
                     "cue_label": now.cue_label if now else "", "cue_before": was.cue if was else None,
                     "cue_before_label": was.cue_label if was else ""})
    return rows


def _size_bins(histogram: dict) -> tuple[list[str], list[int]]:
    """The class-size histogram ({size: classes}) as at most MAX_BARS bars: single sizes when few, else
    ranges doubling in width (1, 2-3, 4-7, ...)."""
    sizes = sorted((int(s), int(c)) for s, c in histogram.items())
    if len(sizes) <= MAX_BARS:
        return [str(s) for s, _ in sizes], [c for _, c in sizes]
    bins: dict[int, int] = {}
    for s, c in sizes:
        low = 1 << (max(s, 1).bit_length() - 1)
        bins[low] = bins.get(low, 0) + c
    labels = [str(low) if low == 1 else f"{low}–{2 * low - 1}" for low in bins]
    return labels, list(bins.values())


def charts(report: dict) -> dict[str, str]:
    """The report's charts as SVG markup: risk before and after, class sizes, distinct values per QI."""
    after, before = report.get("metrics", {}), report.get("metrics_before", {})
    keys = [k for k in RISK_CHART if k in after]
    out = {}
    if keys:
        out["risk"] = bar_chart("Re-identification risk before and after", [RISK_CHART[k] for k in keys],
                                [Series("before", [before.get(k) for k in keys]),
                                 Series("after", [after.get(k) for k in keys])],
                                "probability", percent=True)
    histogram = report.get("class_size_histogram") or {}
    if histogram:
        labels, counts = _size_bins(histogram)
        out["classes"] = bar_chart("Equivalence classes by size", labels, [Series("classes", counts)],
                                   "classes", x_title="records in the class", integer=True)
    value_counts = report.get("value_counts") or {}
    qis = [q for q in report.get("quasi_identifiers", []) if q in value_counts]
    if qis:
        out["distinct"] = bar_chart("Distinct values per quasi-identifier", qis,
                                    [Series("original", [value_counts[q]["before"].get("distinct") for q in qis]),
                                     Series("published", [value_counts[q]["after"].get("distinct") for q in qis])],
                                    "distinct values", integer=True)
    return out


def command_line(job: Job) -> tuple[str, str]:
    """The run as ``manage.py anonymize`` flags (each hierarchy named as a file exported from the library),
    and what the command line cannot say ('' when it says everything)."""
    import shlex


    quote = shlex.quote
    columns = job.config.get("columns", [])
    treated = {r["column"]: r for r in job.config.get("identifiers", []) if isinstance(r, dict) and "column" in r}
    parts = ["manage.py", "anonymize", quote(job.dataset.original_name)]
    for c in columns:
        if c["name"].startswith("__"):
            continue  # the research marker of a population job
        if c["role"] == Role.QUASI_IDENTIFYING.value:
            parts += ["--qi", quote(c["name"])]
            if c.get("hierarchy") or c.get("hierarchy_snapshot"):
                parts += ["--hierarchy", quote(f"{c['name']}={c['name']}-hierarchy.csv")]
        elif c["role"] == Role.SENSITIVE.value:
            parts += ["--sensitive", quote(c["name"])]
        elif c["role"] == Role.IDENTIFYING.value:
            parts += _identifier_flags(treated.get(c["name"]), c["name"])
    if any(r.get("treatment") == "pseudonym" for r in treated.values()):
        # the key's hex, shown once at its creation, saved by the user to a file (never written here)
        parts += ["--pseudonym-key-file", "KEY.hex"]
        rule = next(r for r in treated.values() if r.get("treatment") == "pseudonym")
        if rule.get("case_sensitive") is False:
            parts += ["--pseudonym-fold-case"]
    lengths = {r.get("length", 16) for r in treated.values() if r.get("treatment") in ("pseudonym", "surrogate")}
    if lengths and lengths != {16}:
        parts += ["--token-length", str(max(lengths))]
    parts += ["--algorithm", job.algorithm, "--k", str(job.k), "--suppression", f"{job.suppression_limit:g}"]
    options = _shown_options(job)
    if options.pop("suppressed_rows", None) == KEEP:
        parts += ["--suppressed-rows", KEEP]
    info = ALGORITHMS.get(job.algorithm)
    for param in info.options if info is not None else []:
        if param.name in options:
            parts += [param.flag, quote(str(options[param.name]))]
    groups = {cls.name: group for group in model_groups() for cls in group.models}
    columns_used, missing = set(), []
    for spec in job.models or []:
        group, cls = groups.get(spec.get("model", "")), PRIVACY_MODELS.get(spec.get("model", ""))
        if group is None or cls is None:
            missing.append(spec.get("model", ""))
            continue
        if group.has_variants:
            parts += [f"--{group.key}-variant", cls.variant_name or cls.name]
        for param in cls.parameters:
            if param.name in spec:
                parts += [param.flag, quote(f"{spec[param.name]:g}" if isinstance(spec[param.name], float)
                                            else str(spec[param.name]))]
        if spec.get("column"):
            columns_used.add(spec["column"])
    note = ""
    if len(columns_used) == 1:
        parts += ["--model-column", quote(next(iter(columns_used)))]
    elif len(columns_used) > 1:
        note = "the models apply to several columns, which one command line cannot say: see the JSON"
    if job.config.get("population") or job.config.get("set_column") or missing:
        note = "a population, a set-valued column or a model the command line lacks: see the JSON"
    if _seed_withheld(job):
        note = (note + "; " if note else "") + SEED_WITHHELD
    for step in (job.options or {}).get("sdc") or []:  # SDC steps after the recoding (management/sdc_flags.py)
        shown = ",".join(f"{name}={value}" for name, value in (step.get("parameters") or {}).items())
        parts += ["--sdc", quote(f"{step['method']}:{shown}" if shown else step["method"])]
    if (job.options or {}).get("sdc") and (job.options or {}).get("sdc_seed"):
        parts += ["--sdc-seed", str(job.options["sdc_seed"])]
    parts += ["--out", "anonymized.csv", "--report", "report.json"]
    return " ".join(parts), note


# A SafePub seed decides which records were sampled; the (ε,δ) guarantee needs the sample secret, and a report
# travels further than the owner's own configuration download, which keeps it.
SEED_WITHHELD = ("the SafePub seed is withheld from this report: whoever holds it can tell which records were "
                 "sampled, which the (ε,δ) guarantee needs kept secret; the result page's configuration download "
                 "(owner only) holds it")


def _seed_withheld(job: Job) -> bool:
    return job.algorithm == "safepub" and (job.options or {}).get("seed") not in (None, "")


def _identifier_flags(rule: dict | None, name: str) -> list[str]:
    """The CLI flags of an identifying column: removed, or published by its rule (engine/run/identifiers.py)."""
    import shlex

    rule = rule or {}
    treatment = rule.get("treatment", "remove")
    if treatment == "pseudonym":
        return ["--pseudonymize", shlex.quote(name)]
    if treatment == "surrogate":
        return ["--surrogate", shlex.quote(name)]
    if treatment == "mask":
        if rule.get("regex") is not None:
            spec = f"{name}=regex:{rule['regex']}"
        else:
            spec = f"{name}=prefix:{rule.get('prefix', 0)},suffix:{rule.get('suffix', 0)},char:{rule.get('char', '*')}"
        return ["--mask", shlex.quote(spec)]
    return ["--identifier", shlex.quote(name)]


def _shown_options(job: Job) -> dict:
    """The algorithm's options as the report lists them (SDC steps have their own row and section)."""
    options = {k: v for k, v in (job.options or {}).items() if k not in ("sdc", "sdc_seed")}
    if _seed_withheld(job):
        options["seed"] = "withheld"
    return options


KEPT_COLUMNS_LISTED = 10  # insensitive columns beyond this many are one row of names in the report


def configuration_rows(job: Job) -> list[dict]:
    """The settings that repeat the run, as (setting, value) rows in words. The job's JSON (every column's
    configuration, hierarchy texts included) filled pages of the PDF (issue 29); it stays the job page's
    download (config.json)."""
    config = exports.job_configuration(job)
    info = ALGORITHMS.get(job.algorithm)
    options = _shown_options(job)
    handling = options.pop("suppressed_rows", "remove")
    rows = [
        ("Dataset file", config["dataset"]),
        ("Algorithm", f"{info.label} ({job.algorithm})" if info else job.algorithm),
        ("k", str(job.k)),
        ("Suppression limit", f"{job.suppression_limit * 100:g}%"),
        ("Suppressed records", SUPPRESSED_ROWS.get(handling, handling)),
        ("Sensitive column for the reports", job.sensitive or "(none)"),
        ("Privacy models beside k", rerun.models_text(job.models) or "(none)"),
        ("Quasi-identifiers", ", ".join(config["quasi_identifiers"]) or "(none)"),
        ("Identifying columns", ", ".join(config["identifiers"]) or "(none)"),
    ]
    rows += [(f"Option: {name.replace('_', ' ')}", str(value)) for name, value in options.items()]
    if config.get("population"):
        rows.append(("Population dataset", str(config["population"].get("name", ""))))
    steps = (job.options or {}).get("sdc") or []
    if steps:
        text = "; ".join(s["method"] + "".join(f", {k}={v}" for k, v in (s.get("parameters") or {}).items())
                         for s in steps)
        rows.append(("SDC methods after the recoding", f"{text} (seed {(job.options or {}).get('sdc_seed', 0)})"))
    return [{"name": name, "value": value} for name, value in rows]


def configuration_json(job: Job) -> str:
    config = exports.job_configuration(job)
    if _seed_withheld(job):
        config["options"] = _shown_options(job)
    return json.dumps(config, indent=2, ensure_ascii=False)


def context(job: Job, result: Result, labels: dict[str, tuple[str, str]], fmt) -> dict:
    """Everything the report template shows (``labels``/``fmt``: the result page's figure names and format)."""
    report = result.report
    n = int(report.get("input_records", report.get("records", 0)) or 0)
    suppressed = int(report.get("suppressed", 0) or 0)
    # an identifying column published by a rule says how (its description, the key by id), not "removed"
    treatments = {e["column"]: e["description"] for e in report.get("identifiers", []) if e.get("treatment") != "remove"}
    columns = [dict(c, treatment=treatments.get(c["name"], "")) for c in job.config.get("columns", [])]
    # a wide table's insensitive columns, kept as they are, in one row rather than a page of identical rows
    plain = [c["name"] for c in columns if c["role"] == Role.INSENSITIVE.value and not c["treatment"]]
    kept_columns = plain if len(plain) > KEPT_COLUMNS_LISTED else []
    if kept_columns:
        columns = [c for c in columns if c["name"] not in set(kept_columns)]
    return {
        "kept_columns": kept_columns,
        "generated": timezone.now(),
        "columns": columns,
        "hierarchies": hierarchy_rows(job, report),
        "model_rows": rerun.model_rows(job.models, (job.config.get("population") or {}).get("name")),
        "options": [{"name": key.replace("_", " "), "value": value} for key, value in _shown_options(job).items()],
        "verification": verification_statement(report),
        "verified": bool(report.get("verified")),
        "model_checks": [dict(c, value_text=format_check(c)) for c in report.get("model_checks") or []],
        "utility": figure_rows(report, UTILITY_KEYS, job.k, labels, fmt),
        "attributes": attribute_figures(report),  # per quasi-identifier (the figure catalogue's texts)
        "statistics": statistics.report_rows(result, leave_out=kept_columns),  # before and after (services.statistics)
        "model_utility": model_utility.report_section(job),  # models trained on the release (newest job)
        "risk": figure_rows(report, RISK_KEYS, job.k, labels, fmt),
        "charts": charts(report),
        "records": n,
        "published": int(report.get("records", n) or 0),
        "suppressed": suppressed,
        "suppressed_share": format_figure("suppressed_share", suppressed / n if n else 0),
        "suppression_percent": f"{job.suppression_limit * 100:g}",
        "publishing": (report.get("publishing") or {}).get("description", ""),
        "configuration": configuration_rows(job),
        "command": command_line(job),
        "k_achieved": report.get("k_achieved"),
        "notes": report.get("notes") or [],
        "sdc": report.get("sdc"),  # the SDC steps after the recoding and the gate's recount (engine/run/sdc.py)
    }


class PdfUnavailable(RuntimeError):
    """The server lacks what WeasyPrint needs (Pango): the HTML report still works."""


def render_pdf(html: str) -> bytes:
    """The report's HTML as PDF (WeasyPrint; its stylesheet read from the static files). No URL is ever
    fetched: the report needs none, and a value of the data must not make the server fetch one."""
    try:
        from weasyprint import CSS, HTML  # imported when a PDF is asked for: it loads Pango
        from weasyprint.urls import URLFetcher
    except OSError as exc:  # WeasyPrint loads Pango (a system library) on import
        raise PdfUnavailable(f"the PDF renderer cannot start on this server: {str(exc)[:200]}") from None

    class NoFetch(URLFetcher):
        def fetch(self, url, headers=None):
            raise ValueError(f"the release report loads no resource ({url[:60]})")

    fetcher = NoFetch()
    stylesheets = [CSS(string=REPORT_CSS.read_text(encoding="utf-8"), url_fetcher=fetcher)]
    return HTML(string=html, base_url=str(settings.BASE_DIR), url_fetcher=fetcher).write_pdf(stylesheets=stylesheets)


def report_html(job: Job, owner_name: str, pdf: bool, request=None) -> str:
    """The release report of a finished run as HTML: the page, the PDF's source, a deposit's file. A synthetic
    set has its own (services/synthesis_report.py)."""
    if job.kind == Job.SYNTHESIS:
        from . import synthesis_report  # it reads the synthesis service, which a run's report never needs

        return synthesis_report.report_html(job, owner_name, pdf, request)
    ctx = context(job, job.result, METRICS, format_value)
    ctx.update({"job": job, "dataset": job.dataset, "report": job.result.report, "algorithm": job_label(job),
                "pdf": pdf, "owner": owner_name})
    return render_to_string("anonymizer/release_report.html", ctx, request=request)


def standalone_html(job: Job, owner_name: str) -> str:
    """The report as one file (a deposit's): the stylesheet inline, there is no server to fetch it from."""
    css = REPORT_CSS.read_text(encoding="utf-8").replace("</", "<\\/")
    return report_html(job, owner_name, pdf=True).replace("</head>", f"<style>{css}</style></head>", 1)


# ---- the page and the PDF as HTTP responses (the web's and the API's: views/release_report.py, api/runs.py) ----
def reported_job(job: Job) -> Job:
    """The owner's run whose table the report covers (404 for figures, a lattice, a set-valued result or no
    result); a synthetic set's once it has succeeded."""
    if job.kind == Job.SYNTHESIS:
        job_result(job)  # 404 until the set is drawn
        return job
    if job.kind in RESULT_PAGES or job.kind == Job.LATTICE:
        raise Http404("this job has no published table")
    if job_result(job).report.get("kind") == "set-valued":
        raise Http404("the release report covers tables; a set-valued result has its own report (JSON)")
    return job


def page_response(job: Job, request) -> HttpResponse:
    """The report as a page, for the signed-in owner of ``request`` (a Django request)."""
    j = reported_job(job)
    return HttpResponse(report_html(j, request.user.get_username(), pdf=False, request=request))


def pdf_response(job: Job, request) -> HttpResponse:
    """The report as PDF (503 with what to install when WeasyPrint cannot render)."""
    j = reported_job(job)
    try:
        pdf = render_pdf(report_html(j, request.user.get_username(), pdf=True, request=request))
    except PdfUnavailable as exc:
        return HttpResponse(f"{exc}. Install Pango (Debian: apt-get install libpango-1.0-0 libpangoft2-1.0-0) or "
                            f"print the HTML report from the browser.", status=503,
                            content_type="text/plain; charset=utf-8")
    response = HttpResponse(pdf, content_type="application/pdf")
    filename = f"{Path(j.dataset.original_name).stem}-{j.algorithm}-k{j.k}-release-report.pdf"
    if j.kind == Job.SYNTHESIS:
        filename = f"{Path(j.dataset.original_name).stem}-synthetic-{j.algorithm.split(':')[-1]}-release-report.pdf"
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response
