"""What the solution lattice's page and the API answer (views/lattice.py, api/lattice.py): the lattice of a
finished full-domain lattice job (from its report, or evaluated on a worker: services.lattice, with its progress
meanwhile), one node's published table and metrics (cached beside the result), the nodes kept from it as results
of their own, and the levels a request names, checked against the job's quasi-identifiers and heights."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from .. import engine
from ..engine.algorithms import supports
from ..engine.algorithms.fixed import parse_levels
from ..engine.measure.figure_catalogue import FIGURES
from ..engine.run import pipeline
from ..models import Job, Result
from . import datasets, lattice_known, results
from . import jobs as job_service
from . import lattice as lattice_service
from .labels import cut

PREVIEW_ROWS = 50
# the node's metrics table: its figures, worded and formatted by the catalogue of figures as on the result page
NODE_METRICS = ["equivalence_classes", "min_class_size", "suppressed", "discernibility", "generalization_height", "ncp",
                "non_uniform_entropy", "c_avg", "prosecutor_risk_highest", "prosecutor_risk_average"]


def is_lattice_job(job: Job) -> bool:
    return job.kind == Job.RUN and supports(job.algorithm, "lattice")


_read_cache = lattice_service.read_cache
_write_cache = lattice_service.write_cache
CACHE_VERSION = lattice_service.CACHE_VERSION


def job_table(job: Job):
    """The original frame, the engine Table of the job's snapshot and a hierarchy for every QI."""
    frame = datasets.load_frame(job.dataset)
    table = datasets.table_from_config(frame, job.config, job.dataset.name)
    try:
        given = datasets.hierarchies_from_config(job.owner, job.config)
    except Exception as exc:  # a hierarchy of the snapshot was deleted since
        raise engine.InputError(f"a hierarchy this job used is no longer available ({exc})") from None
    return frame, table, table.hierarchies(given)


def pending(evaluation: Job) -> dict:
    """What the page shows while a worker evaluates the lattice."""
    return {"pending": True, "job": str(evaluation.pk), "status": evaluation.status,
            "progress": round(evaluation.progress, 4), "phase": evaluation.phase or "waiting for a worker",
            "job_url": reverse("anonymizer:job", args=[evaluation.pk]),
            "cancel_url": reverse("anonymizer:job_cancel", args=[evaluation.pk])}


def kept_nodes(job: Job) -> dict[str, str]:
    """Levels -> result URL of the nodes kept from this lattice (full-domain jobs with the same setup)."""
    out = {}
    jobs = Job.objects.filter(owner=job.owner, dataset=job.dataset, algorithm="full-domain", k=job.k,
                              suppression_limit=job.suppression_limit, status=Job.SUCCEEDED).order_by("created")
    for j in jobs:
        levels = str((j.options or {}).get("levels", "")).replace(" ", "")
        if levels and j.config == job.config:
            out[levels] = reverse("anonymizer:result", kwargs={"job_id": j.pk})
    return out


def with_known(job: Job, answer: dict) -> dict:
    """A 202 answer with the nodes the run's own search left tagged (services.lattice_known) under "lattice",
    when the run wrote them: the page draws them at once and replaces them with the whole lattice."""
    known = lattice_known.read(job)
    return answer if known is None else dict(answer, lattice=dict(known, kept=kept_nodes(job)))


def lattice_answer(job: Job, retry: bool, known: bool = True) -> tuple[int, dict]:
    """(200, the lattice) when it is known; otherwise a worker evaluates it: (202, its progress and, when the run
    left them and ``known``, its search's nodes under "lattice") while it runs (one evaluation per run at a time),
    (422, {"error"}) when it failed or was cancelled (``retry`` starts a new one). The web's data.json and the
    API's lattice answer this; a poller that has drawn the search's nodes asks without them (known=False)."""
    try:
        data = lattice_service.stored_lattice(job)
        if data is None:
            last = lattice_service.last_evaluation(job)
            if last is not None and last.status in (Job.FAILED, Job.CANCELLED) and not retry:
                return 422, {"error": f"The lattice evaluation {last.status}: {last.message}",
                             "retry": True, "job": str(last.pk)}
            evaluation = job_service.evaluation_job(job)
            assert evaluation is not None
            evaluation.refresh_from_db()
            data = lattice_service.read_cache(job, lattice_service.LATTICE_FILE)  # an eager worker may be done
            if data is None:
                if evaluation.status in (Job.FAILED, Job.CANCELLED):
                    return 422, {"error": f"The lattice evaluation {evaluation.status}: {evaluation.message}",
                                 "retry": True, "job": str(evaluation.pk)}
                return 202, with_known(job, pending(evaluation)) if known else pending(evaluation)
    except engine.EngineError as exc:
        return 422, {"error": str(exc)}
    return 200, dict(data, kept=kept_nodes(job))


# ---- one node ----------------------------------------------------------------------------------
def checked_levels(job: Job, text: str) -> list[int]:
    data_qi = [c["name"] for c in job.config.get("columns", []) if c["role"] == engine.Role.QUASI_IDENTIFYING.value]
    result = Result.objects.get(job=job)
    qi = result.report.get("quasi_identifiers") or data_qi
    heights = (result.report.get("search") or {}).get("lattice", {}).get("heights")
    if heights is None:
        cached = _read_cache(job, "lattice.json")
        heights = cached["heights"] if cached else None
    if heights is None:
        _, table, hs = job_table(job)
        qi, heights = list(table.qi), [hs[c].height for c in table.qi]
    return parse_levels(text, list(qi), [int(h) for h in heights])


_job_spec = lattice_service.run_spec


def node_detail(job: Job, levels: list[int]) -> dict:
    """The node's published table (first rows, beside the original) and its metrics (cached): the job's
    full specification with the node's transformation, through the pipeline and its publishing gate."""
    key = ",".join(map(str, levels))
    name = f"node-{key.replace(',', '-')}.json"
    cached = _read_cache(job, name)
    if cached is not None:
        return cached
    spec = _job_spec(job)
    table = spec.table
    data = {"version": CACHE_VERSION, "levels": key, "qi": list(table.qi)}
    try:
        publication = pipeline.publish_levels(spec, key)
    except engine.UnsatisfiableError as exc:
        data.update(anonymous=False, message=str(exc))
        _write_cache(job, name, data)
        return data
    report = publication.report
    after, before = report["metrics"], report["metrics_before"]
    shown = publication.table.iloc[:PREVIEW_ROWS]
    data.update(
        anonymous=True,
        message="",
        k_achieved=report["k_achieved"],
        suppressed=report["suppressed"],
        records=report["records"],
        models=[c["describe"] for c in report["model_checks"]],
        transformation=[{"qi": qi, "level": lv, "label": report["transformation_labels"].get(qi, "")}
                        for qi, lv in results.transformation_levels(report)],
        metrics=after,
        metric_rows=[{"key": key_, "label": FIGURES[key_].label, "before": before.get(key_), "after": after.get(key_),
                      "before_text": FIGURES[key_].format(before.get(key_)),
                      "after_text": FIGURES[key_].format(after.get(key_))}
                     for key_ in NODE_METRICS if key_ in after],
        table=comparison(table.frame.iloc[publication.rows[:PREVIEW_ROWS]].reset_index(drop=True), shown,
                         publication.suppressed[:PREVIEW_ROWS], len(shown), report["identifying_removed"],
                         publication.rows[:PREVIEW_ROWS]),
    )
    _write_cache(job, name, data)
    return data


def comparison(frame, output, suppressed, rows: int, identifying: list[str], numbers=None) -> dict:
    """The first rows of the original and the published table; changed anonymized cells flagged."""
    orig = frame.iloc[:rows]
    out = output.iloc[:rows]
    orig_cols, out_cols = [str(c) for c in frame.columns], [str(c) for c in output.columns]
    shown = []
    for i in range(len(out)):
        o = orig.iloc[i] if i < len(orig) else None
        a = out.iloc[i]
        row: dict[str, Any] = {  # one table row for the template
            "number": int(numbers[i]) + 1 if numbers is not None else i + 1,
            "suppressed": bool(suppressed[i]),
            "changed": [o is None or c not in frame.columns or str(a[c]) != str(o[c]) for c in output.columns],
            "cut": {"original": {}, "anonymized": {}},  # column index -> full length of a cell cut for the page
        }
        for side, values in (("original", ["" if o is None else str(o[c]) for c in frame.columns]),
                             ("anonymized", [str(a[c]) for c in output.columns])):
            row[side] = []
            for j, value in enumerate(values):
                text, length = cut(value)
                row[side].append(text)
                if length is not None:
                    row["cut"][side][j] = length
        shown.append(row)
    return {"original_columns": orig_cols, "anonymized_columns": out_cols,
            "identifying": [str(c) for c in identifying], "rows": shown}
