"""Two solutions side by side (services/solutions.py): two runs of one dataset, or two nodes of one run's solution
lattice, every figure in two columns and the difference.

- ``solutions_pick``: from a run's result page ("Compare with another run…"), the owner's other runs of the same
  dataset to put beside it;
- ``solutions_runs``: runs A and B side by side;
- ``solutions_nodes``: nodes ``?a=`` and ``?b=`` (levels, '0,2,1') of a lattice run side by side.

Owner-scoped like every page: another user's run, or a run of another dataset as B, is a 404.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET

from accounts.throttling import throttle

from .. import engine
from ..models import Job, Result
from ..services import solutions as solution_service
from ..services.lattice_pages import checked_levels, is_lattice_job
from .common import owned_job


def finished_run(request, job_id) -> Job:
    """The user's finished run (a table result, not a transaction dataset's), or 404."""
    job = owned_job(request, job_id)
    if not solution_service.is_comparable_run(job):
        raise Http404("this job has no result to compare")
    return job


@login_required
@require_GET
def solutions_pick(request, job_id):
    job = finished_run(request, job_id)
    return render(request, "anonymizer/solutions_pick.html", {
        "job": job, "dataset": job.dataset, "title": solution_service.run_side(job)["title"],
        "others": [{"job": j, "title": f"{solution_service.algorithm_label(j.algorithm)}, k={j.k}"}
                   for j in solution_service.comparable_runs(job)],
    })


@login_required
@require_GET
@throttle("lattice", methods=("GET",))
def solutions_runs(request, job_id, other_id):
    a = finished_run(request, job_id)
    b = finished_run(request, other_id)
    if a.dataset_id != b.dataset_id:  # two runs of one dataset only: the figures count the same records
        raise Http404("these runs are not of one dataset")
    data = solution_service.side_by_side(solution_service.run_side(a), solution_service.run_side(b))
    data["statistics"] = solution_service.statistics_rows(a, b)  # computed once per result, then cached
    return render(request, "anonymizer/solutions.html", {"job": a, "dataset": a.dataset, "data": data,
                                                          "kind": "runs", "b_job": b})


@login_required
@require_GET
@throttle("lattice", methods=("GET",))
def solutions_nodes(request, job_id):
    job = owned_job(request, job_id)
    if not is_lattice_job(job) or job.status != Job.SUCCEEDED or not Result.objects.filter(job=job).exists():
        raise Http404("this job has no solution lattice")
    context = {"job": job, "dataset": job.dataset, "kind": "nodes", "a_levels": request.GET.get("a", ""),
               "b_levels": request.GET.get("b", "")}
    try:
        a = checked_levels(job, context["a_levels"])
        b = checked_levels(job, context["b_levels"])
        side_a, side_b = solution_service.node_side(job, a), solution_service.node_side(job, b)
        data = solution_service.side_by_side(side_a, side_b)
        data["statistics"] = solution_service.node_statistics_rows(side_a, side_b)  # cached with each node
    except engine.InputError as exc:
        return render(request, "anonymizer/solutions.html", {**context, "error": str(exc)}, status=400)
    except engine.EngineError as exc:
        return render(request, "anonymizer/solutions.html", {**context, "error": str(exc)}, status=422)
    return render(request, "anonymizer/solutions.html", {**context, "data": data})
