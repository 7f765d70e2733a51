"""SafePub's pages: the derived parameters of (ε, δ) as JSON (the run form shows them live as ε and δ
change), and the refusal shown where a SafePub run's node would be chosen another way (the lattice)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ..engine import InputError
from ..services.safepub import LATTICE_REFUSAL, derive_from, is_dp_run  # noqa: F401  (re-exported)


@login_required
@require_GET
def parameters(request):
    """{"epsilon", "delta", "search_share", "epsilon_anon", "epsilon_search", "beta", "k"} or {"error"} (400)."""
    try:
        p = derive_from(request.GET)
    except InputError as exc:
        response = JsonResponse({"error": str(exc)}, status=400)
    else:
        response = JsonResponse(p.to_dict())
    response["Cache-Control"] = "no-store"
    return response


def refuse_lattice(request, job) -> HttpResponse | None:
    """The refusal page (409) for a SafePub run's lattice and "keep this node"; None for other runs."""
    if not is_dp_run(job):
        return None
    return render(request, "anonymizer/safepub_refusal.html", {"job": job, "dataset": job.dataset,
                                                               "message": LATTICE_REFUSAL}, status=409)
