"""Set-valued data pages: the upload (layout detected or chosen), the items preview (layout, item counts,
items per record, repeated items, item-frequency chart, the layout override), the set-valued column of a
table, the k^m run form of a transaction dataset, its result page and downloads."""

from __future__ import annotations

import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.throttling import throttle

from ..engine import EngineError, InputError
from ..engine.measure.figure_catalogue import FIGURES, format_figure
from ..engine.run.gate import ITEMS, RECORD_ID
from ..engine.setvalued import SET_ALGORITHMS
from ..models import Dataset, Job
from ..services import (
    datasets,
    downloads,
    release_report,
    results,
    setvalued,
    setvalued_explain,
    storage,
)
from ..setvalued_forms import (
    ItemBuildForm,
    ItemHierarchyUploadForm,
    LayoutForm,
    SetColumnForm,
    SetRunForm,
    SetUploadForm,
    item_library,
)
from .common import format_duration, job_label, job_result, job_rows, owned_dataset, owned_job, queue_job
from .datasets import render_index
from .items_charts import item_frequency_figure, itemset_figure, support_figure

RESULT_PAGE_SIZE = 20  # records of up to CHIPS_PER_CELL items a side: a page stays a few screens tall


def _bound_key(ds: Dataset) -> str:
    return f"items-hierarchy-{ds.pk}"


def bound_hierarchy(request, ds: Dataset, library: list):
    """The item hierarchy last uploaded for this dataset (kept in the session), if it still covers its items."""
    pk = request.session.get(_bound_key(ds))
    return next((h for h in library if h.pk == pk), None)


# ---- upload ---------------------------------------------------------------------------------------------
@login_required
@require_POST
@throttle("upload")
def upload(request):
    form = SetUploadForm(request.POST, request.FILES)
    refused = getattr(request, "upload_refused", "")
    if refused:
        form.is_valid()
        form.errors["file"] = form.error_class([refused])
        return render_index(request, None, status=413, set_form=form)
    if form.is_valid():
        d = form.cleaned_data
        try:
            ds = setvalued.upload(request.user, d["file"], d["file"].name, d["layout"], form.delimiter(),
                                  d["record_id"], name=d["name"] or None)
        except InputError as exc:
            form.add_error("file", str(exc))
        else:
            messages.success(request, f"Uploaded {ds.name} as {ds.layout}: {ds.n_rows:,} records. Check the "
                                      f"detected layout and the items.")
            return redirect("anonymizer:items", dataset_id=ds.pk)
    return render_index(request, None, status=400, set_form=form)


# ---- the items preview ------------------------------------------------------------------------------------
def _render_items(request, ds: Dataset, layout_form=None, column_form=None, status: int = 200, build_form=None,
                  hierarchy_form=None):
    figures, error, column = None, "", None
    try:
        if ds.is_transactions:
            figures = setvalued.figures(setvalued.transactions(ds))
        else:
            column = setvalued.set_column(ds)
            if column is not None:
                figures = setvalued.figures(setvalued.column_records(ds, column.name, column.item_delimiter))
    except InputError as exc:  # the file was read with these settings before; say so if it no longer is
        error = str(exc)
    initial = {"layout": ds.layout, "item_delimiter": setvalued.delimiter_label(ds.item_delimiter or ","),
               "record_id": ds.record_id}
    names = [c.name for c in ds.columns.all()]
    column_initial = {"column": column.name if column else "",
                      "item_delimiter": setvalued.delimiter_label(column.item_delimiter) if column else "pipe"}
    preview = datasets.dataset_rows(ds, 0, 10)
    library = item_library(request.user, ds) if figures else []
    return render(request, "anonymizer/items.html", {
        "dataset": ds, "tab": "items", "figures": figures, "error": error, "column": column,
        "layout_form": layout_form or LayoutForm(initial=initial),
        "column_form": column_form or SetColumnForm(columns=names, initial=column_initial),
        "delimiter_label": setvalued.delimiter_label(ds.item_delimiter) if ds.item_delimiter else "",
        "preview_columns": [str(c) for c in preview.columns],
        "preview_rows": preview.astype(str).values.tolist(),
        "charts": {"items": item_frequency_figure(figures["top_items"]) if figures else None},
        "build_form": build_form or ItemBuildForm(),
        "hierarchy_form": hierarchy_form or ItemHierarchyUploadForm(),
        "library": library, "bound": bound_hierarchy(request, ds, library),
    }, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def items(request, dataset_id: int):
    ds = owned_dataset(request, dataset_id)
    if request.method == "GET":
        return _render_items(request, ds)
    form = LayoutForm(request.POST)
    if form.is_valid():
        d = form.cleaned_data
        try:
            setvalued.relayout(ds, d["layout"], form.delimiter(), d["record_id"])
        except InputError as exc:
            form.add_error(None, str(exc))
            ds.refresh_from_db()
        else:
            messages.success(request, f"Read {ds.original_name} again as {ds.layout}: {ds.n_rows:,} records.")
            return redirect("anonymizer:items", dataset_id=ds.pk)
    return _render_items(request, ds, layout_form=form, status=400)


@login_required
@require_POST
def set_column(request, dataset_id: int):
    ds = owned_dataset(request, dataset_id)
    if ds.is_transactions:
        raise Http404("a transaction dataset has no columns")
    form = SetColumnForm(request.POST, columns=[c.name for c in ds.columns.all()])
    if form.is_valid():
        name = form.cleaned_data["column"]
        try:
            if name:
                setvalued.mark_set_column(ds, name, form.delimiter())
            else:
                setvalued.unmark_set_column(ds)
        except InputError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Column {name!r} is set-valued (items separated by "
                                      f"{setvalued.delimiter_label(form.delimiter())})." if name
                             else "No set-valued column.")
            return redirect("anonymizer:items", dataset_id=ds.pk)
    return _render_items(request, ds, column_form=form, status=400)


# ---- item hierarchies: built from the items or uploaded, into the library (and its tree editor) ----------------
@login_required
@require_POST
def build_hierarchy(request, dataset_id: int):
    ds = owned_dataset(request, dataset_id)
    form = ItemBuildForm(request.POST)
    if form.is_valid():
        try:
            h = setvalued.build_item_hierarchy(ds, form.cleaned_data["kind"], form.options(),
                                               form.cleaned_data["name"])
        except (InputError, EngineError) as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Item hierarchy {h.name!r} added to your library ({h.leaves} items, height "
                                      f"{h.height}); edit it in the tree editor or choose it on the run form.")
            return redirect("hierarchies:detail", pk=h.pk)
    return _render_items(request, ds, build_form=form, status=400)


@login_required
@require_POST
@throttle("upload")
def upload_hierarchy(request, dataset_id: int):
    ds = owned_dataset(request, dataset_id)
    form = ItemHierarchyUploadForm(request.POST, request.FILES)
    if form.is_valid():
        f = form.cleaned_data["file"]
        try:
            raw = f.read(settings.ANONYMIZER_MAX_UPLOAD_MB * 1024 * 1024 + 1)
            try:
                text = raw.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise InputError(f"{f.name}: not UTF-8 text (byte {exc.start})") from None
            h = setvalued.upload_item_hierarchy(ds, text, f.name)
        except (InputError, EngineError) as exc:
            form.add_error("file", str(exc))
        else:  # back to the dataset, the hierarchy bound to it (chosen on its run form)
            request.session[_bound_key(ds)] = h.pk
            messages.success(request, f"Item hierarchy {h.name!r} covers every item of {ds.name} ({h.leaves} items, "
                                      f"height {h.height}); it is saved to your library and chosen on the run form.")
            return redirect(f"{reverse('anonymizer:items', args=[ds.pk])}#item-hierarchies")
    return _render_items(request, ds, hierarchy_form=form, status=400)


# ---- the k^m run of a transaction dataset ---------------------------------------------------------------------
@login_required
@require_http_methods(["GET", "POST"])
@throttle("run")
def run(request, dataset_id: int):
    ds = owned_dataset(request, dataset_id)
    if not ds.is_transactions:
        return redirect("anonymizer:run", dataset_id=ds.pk)
    library = item_library(request.user, ds)  # offered: only the hierarchies covering its items
    status = 200
    if request.method == "POST":  # any of the owner's: one missing an item is refused naming the item
        form = SetRunForm(request.POST, hierarchies=item_library(request.user))
        if form.is_valid():
            d = form.cleaned_data
            try:
                job = setvalued.create_set_job(ds, d["set_algorithm"], d["k"], d["m"], d["item_suppression"],
                                               form.hierarchy(), numeric_items=d["numeric_items"])
            except InputError as exc:
                form.add_error(None, str(exc))
            else:
                queue_job(request, job)
                return redirect("anonymizer:job", job_id=job.pk)
        status = 400
    else:
        bound = bound_hierarchy(request, ds, library)
        form = SetRunForm(hierarchies=library, initial={"item_hierarchy": bound.pk, "set_algorithm": "apriori"}
                          if bound else {"set_algorithm": "apriori" if library else "dynamic"})
    if not library:
        form.fields["item_hierarchy"].help_text = ("None of your hierarchies covers this dataset's items: build or "
                                                   "upload one on the items page, or use dynamic hierarchies.")
    else:
        form.fields["item_hierarchy"].help_text = "Your hierarchies that cover every item of this dataset."
    return render(request, "anonymizer/run_items.html", {
        "dataset": ds, "tab": "run", "form": form, "algorithms": SET_ALGORITHMS,
        "recent_jobs": job_rows(ds.jobs.all()[:5]),
    }, status=status)


# ---- the result ----------------------------------------------------------------------------------------------
def _original_records(job: Job, start: int, stop: int) -> list[list[str]]:
    """The input records [start, stop) as the job read them (the stored table, or the original parsed again
    with the job's settings when the dataset was read another way since)."""
    ds, config = job.dataset, job.config
    delimiter = config["item_delimiter"]
    if ds.is_transactions and ds.item_delimiter == delimiter and ds.record_id == config["record_id"]:
        frame = datasets.dataset_rows(ds, start, stop)
        return [[x for x in str(cell).split(delimiter) if x] for cell in frame[ITEMS].tolist()]

    tx = setvalued.parse(storage.original_path(ds), ds.original_name, delimiter, config["record_id"])
    return [tx.record(r) for r in range(start, min(stop, tx.n))]


CHIPS_PER_CELL = 15  # items shown in a record's cell; the rest counted ("+N more")
RULES_SHOWN = 15  # generalization rules shown (largest groups first; a filter finds any other)
ITEMS_PER_RULE = 10
SUPPRESSED_SHOWN = 50
HIERARCHY_ROWS_SHOWN = 50
FILTER_MAX = 100


GROUP_ITEMS_SHOWN = 3  # a group's label in a chip: its first items, then how many more


def short_label(label: str, rules: dict) -> str:
    """A group of many items as a chip: a set label {a; b; c; ...} of dynamic hierarchies shortened to its
    first items and the count (the full label is the chip's title and in the rules and the CSV); a hierarchy's
    label (milk, [20000-30500]) is short already and left as is."""
    items = rules.get(label)
    if not items or len(items) <= GROUP_ITEMS_SHOWN or not (label.startswith("{") and label.endswith("}")):
        return label
    return "{" + "; ".join(str(x) for x in items[:GROUP_ITEMS_SHOWN]) + f" … +{len(items) - GROUP_ITEMS_SHOWN}}}"


def _capped(chips: list[dict], limit: int = CHIPS_PER_CELL) -> tuple[list[dict], int]:
    """At most ``limit`` chips, the changed ones first chosen (their order kept), and how many are left out:
    a record of 80 liked movies shows what changed, not a wall of chips."""
    if len(chips) <= limit:
        return chips, 0
    changed = [i for i, c in enumerate(chips) if c["changed"]][:limit]
    rest = [i for i, c in enumerate(chips) if not c["changed"]][:limit - len(changed)]
    keep = sorted(changed + rest)
    return [chips[i] for i in keep], len(chips) - len(keep)


def _side_by_side(originals: list[list[str]], published: list[list[str]], ids: list[str] | None, start: int,
                  rules: dict | None = None):
    """Rows of the comparison: every item flagged when it differs (generalized, suppressed, or a label);
    each cell capped at CHIPS_PER_CELL items."""
    rows = []
    for i, (before, after) in enumerate(zip(originals, published)):
        kept = set(after)
        source = set(before)
        shown_before, more_before = _capped([{"item": x, "changed": x not in kept} for x in dict.fromkeys(before)])
        shown_after, more_after = _capped([{"item": x, "changed": x not in source,
                                            "short": short_label(x, rules or {})} for x in after])
        rows.append({
            "number": start + i + 1,
            "id": ids[i] if ids is not None else None,
            "before": shown_before, "more_before": more_before,
            "after": shown_after, "more_after": more_after,
            "changed": kept != source,
        })
    return rows


def rules_rows(report: dict, needle: str = "") -> tuple[list[dict], int]:
    """The generalization rules to show: those whose label or an item holds ``needle`` (any case), the groups
    of most items first, at most RULES_SHOWN of them with at most ITEMS_PER_RULE items each (the matching
    items first); and how many rules matched in all."""
    rules = report.get("generalization_rules") or {}
    needle = needle.casefold()
    matching = []
    for label, items in rules.items():
        hits = [x for x in items if needle in str(x).casefold()] if needle else []
        if needle and not hits and needle not in str(label).casefold():
            continue
        matching.append((label, items, hits))
    matching.sort(key=lambda r: (-len(r[1]), str(r[0])))
    out = []
    for label, items, hits in matching[:RULES_SHOWN]:
        ordered = hits + [x for x in items if x not in set(hits)] if hits else list(items)
        out.append({"label": label, "short": short_label(label, rules), "items": ordered[:ITEMS_PER_RULE],
                    "count": len(items),
                    "more": max(len(items) - ITEMS_PER_RULE, 0)})
    return out, len(matching)


def _hierarchy_shown(rows: list) -> tuple[list, int]:
    """The hierarchy built, its generalized items only (an item left as is maps to itself), capped."""
    merged = [r for r in rows if len(r) > 1 and r[0] != r[1]]
    return merged[:HIERARCHY_ROWS_SHOWN], len(merged)


def _card(figure: str, value, card_id: str, reading: str, label: str = "") -> dict:
    """A card of the set-valued result: the catalogue's label and value text, the id of its reading's row."""
    return {"label": label or FIGURES[figure].label, "value": format_figure(figure, value), "id": card_id,
            "reading": f"figure-{reading}"}


def result_page(request, job: Job, res):
    """The result page of a transaction dataset's k^m run: its size bounded whatever the data (records
    paged, every list of items capped, the charts of at most 15 itemsets)."""
    report = res.report
    metrics = report.get("metrics", {})
    n = int(report.get("records", 0))
    page = Paginator(range(n), RESULT_PAGE_SIZE).get_page(request.GET.get("page"))
    start = page.start_index() - 1 if n else 0
    stop = page.end_index() if n else 0
    output, _ = results.output_rows(res, start, stop)
    delimiter = job.config["item_delimiter"]
    published = [[x for x in str(cell).split(delimiter) if x] for cell in output[ITEMS].tolist()]
    ids = output[RECORD_ID].astype(str).tolist() if RECORD_ID in output.columns else None
    rows = _side_by_side(_original_records(job, start, stop), published, ids, start,
                         report.get("generalization_rules") or {})
    km = metrics.get("km_smallest_support")
    needle = request.GET.get("rule", "").strip()[:FILTER_MAX]
    rules, rules_matching = rules_rows(report, needle)
    suppressed = report.get("suppressed_items", [])
    hierarchy_rows, hierarchy_merged = _hierarchy_shown(report.get("hierarchy_rows", []))
    compared = report.get("support_compared") or []
    cards = [
        {"label": "k", "value": job.k, "id": "card-k"},
        {"label": "m", "value": report.get("m"), "id": "card-m"},
        # the figures' labels and values as the figure catalogue reads them; each card links to its reading in
        # "What the figures mean" (services/setvalued_explain.py)
        _card("km_smallest_support", km, "card-km", "km",
              label=f"{FIGURES['km_smallest_support'].label} (smallest support of a published itemset of ≤ m items)"),
        _card(setvalued_explain.ncp_key(str(report.get("algorithm", ""))), metrics.get("ncp", 0), "card-ncp", "ncp"),
        *([_card("changed_occurrences", metrics["changed_occurrences"], "card-changed", "changed")]
          if metrics.get("changed_occurrences") is not None else []),
        _card("support_error", metrics.get("support_error", 0), "card-support-error", "support-error",
              label=f"{FIGURES['support_error'].label} ({metrics.get('support_error_itemsets', 0)} top itemsets)"),
        _card("generalized_items", metrics.get("generalized_items", 0), "card-generalized", "generalized"),
        _card("suppressed_items", len(suppressed), "card-suppressed", "suppressed"),
    ]
    return render(request, "anonymizer/result_items.html", {
        "job": job, "dataset": job.dataset, "report": report, "cards": cards,
        "algorithm": job_label(job), "duration": format_duration(job.duration),
        "km_ok": km is None or km >= job.k,
        "rules": rules, "rules_total": len(report.get("generalization_rules") or {}),
        "rules_matching": rules_matching, "rule_filter": needle,
        "suppressed_items": suppressed[:SUPPRESSED_SHOWN],
        "suppressed_more": max(len(suppressed) - SUPPRESSED_SHOWN, 0),
        "hierarchy_rows": hierarchy_rows, "hierarchy_merged": hierarchy_merged,
        "hierarchy_more": hierarchy_merged - len(hierarchy_rows),
        "has_hierarchy": bool(report.get("hierarchy_rows")),
        "layout": report.get("layout", {}),
        "delimiter_label": setvalued.delimiter_label(delimiter),
        "page": page, "rows": rows, "has_ids": ids is not None,
        "compared": bool(compared),
        "explained": setvalued_explain.figures(report, job.k, (job.config.get("item_hierarchy") or {}).get("name", "")),
        "charts": {"itemsets": support_figure(compared) if compared
                   else itemset_figure(report.get("frequent_itemsets", {}))},
    })


@login_required
@require_POST
def save_built_hierarchy(request, job_id):
    """Save the hierarchy a dynamic-hierarchies run built to the owner's hierarchy library."""
    j = owned_job(request, job_id)
    res = job_result(j)
    if res.report.get("kind") != "set-valued":
        raise Http404("this result has no hierarchy built")
    try:
        h, created = setvalued.save_built_hierarchy(j, res.report)
    except (InputError, EngineError) as exc:
        messages.error(request, f"The hierarchy built could not be saved: {exc}")
        response = result_page(request, j, res)
        response.status_code = 400
        return response
    if created:
        messages.success(request, f"Item hierarchy {h.name!r} added to your library ({h.leaves} items, height "
                                  f"{h.height}); edit it in the tree editor or choose it on the run form.")
    else:
        messages.info(request, f"This hierarchy is already in your library as {h.name!r}.")
    return redirect("hierarchies:detail", pk=h.pk)


# ---- the release report ------------------------------------------------------------------------------------------
def items_report_html(job: Job, owner_name: str, pdf: bool, request=None) -> str:
    """The release report of a transaction dataset's k^m run (the structure of services.release_report's:
    the dataset, the guarantee, what was published, the figures explained, the configuration)."""
    from django.template.loader import render_to_string
    from django.utils import timezone

    report = job.result.report
    rules, _ = rules_rows(report)
    suppressed = report.get("suppressed_items") or []
    hierarchy = job.config.get("item_hierarchy") or {}
    config = {"algorithm": job.algorithm, "k": job.k, **job.options,
              "item_hierarchy": hierarchy.get("name"), "item_delimiter": job.config.get("item_delimiter"),
              "record_id": job.config.get("record_id")}
    algorithm = SET_ALGORITHMS.get(job.algorithm)
    return render_to_string("anonymizer/release_report_items.html", {
        "job": job, "dataset": job.dataset, "report": report, "pdf": pdf, "owner": owner_name,
        "generated": timezone.now(), "algorithm": job_label(job),
        "algorithm_summary": algorithm.summary if algorithm else job.algorithm,
        "verified": bool(report.get("verified")), "km": (report.get("metrics") or {}).get("km_smallest_support"),
        "delimiter_label": setvalued.delimiter_label(job.config.get("item_delimiter", ",")),
        "hierarchy_name": hierarchy.get("name", ""), "numeric_items": bool(job.options.get("numeric_items")),
        "rules": rules, "rules_total": len(report.get("generalization_rules") or {}),
        "suppressed": len(suppressed), "suppressed_items": suppressed[:SUPPRESSED_SHOWN],
        "suppressed_more": max(len(suppressed) - SUPPRESSED_SHOWN, 0),
        "explained": setvalued_explain.figures(report, job.k, hierarchy.get("name", "")),
        "compared": report.get("support_compared") or [],
        "configuration": json.dumps(config, indent=2, ensure_ascii=False),
    }, request=request)


def _items_reported(request, job_id) -> Job:
    j = owned_job(request, job_id)
    if job_result(j).report.get("kind") != "set-valued":
        raise Http404("this result is not a transaction dataset's")
    return j


@login_required
@require_GET
def items_release_report(request, job_id):
    j = _items_reported(request, job_id)
    return HttpResponse(items_report_html(j, request.user.get_username(), pdf=False, request=request))


@login_required
@require_GET
@throttle("download", methods=("GET",))
def items_release_report_pdf(request, job_id):
    j = _items_reported(request, job_id)
    try:
        pdf = release_report.render_pdf(items_report_html(j, request.user.get_username(), pdf=True, request=request))
    except release_report.PdfUnavailable as exc:
        return HttpResponse(f"{exc}. Print the HTML report from the browser.", status=503,
                            content_type="text/plain; charset=utf-8")
    return _attachment_bytes(pdf, "application/pdf", f"{downloads.set_stem(j)}-m{j.options.get('m')}-release-report.pdf")


def _attachment_bytes(body: bytes, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


# ---- downloads (services/downloads.py: the API's too) --------------------------------------------------------
@login_required
@require_GET
@throttle("download", methods=("GET",))
def download_records(request, job_id):
    """The published records in the input's layout (one per line, the record id first), formulas neutralized."""
    return downloads.records_download(owned_job(request, job_id))


@login_required
@require_GET
@throttle("download", methods=("GET",))
def download_report(request, job_id):
    j = owned_job(request, job_id)
    res = downloads.set_result(j)
    body = json.dumps(res.report, indent=2, ensure_ascii=False) + "\n"
    return downloads.attachment(body, "application/json; charset=utf-8", f"{downloads.set_stem(j)}-report.json")


@login_required
@require_GET
@throttle("download", methods=("GET",))
def download_rules(request, job_id):
    """The generalization rules (item;generalized item) or the dynamic hierarchy built (item;group;*)."""
    return downloads.rules_download(owned_job(request, job_id))


__all__ = ["items_release_report", "items_release_report_pdf", "build_hierarchy", "upload_hierarchy", "download_records", "download_report", "download_rules", "items", "result_page",
           "run", "save_built_hierarchy", "set_column", "upload"]
