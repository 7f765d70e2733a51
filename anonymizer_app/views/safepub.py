"""SafePub's pages: the derived parameters of (ε, δ) as JSON (the run form shows them live as ε and δ
change), and the refusal shown where a SafePub run's node would be chosen another way (the lattice)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ..engine import InputError
from ..engine.privacy.differential_privacy import EDDifferentialPrivacy
from ..engine.safepub.parameters import DEFAULT_SEARCH_SHARE, SafePubParameters, derive

LATTICE_REFUSAL = ("This run was published under (ε,δ)-differential privacy by SafePub, which draws the published "
                   "generalization by the exponential mechanism within the privacy budget. Choosing or keeping "
                   "another node of the lattice by looking at its utility reads the data outside that budget "
                   "and would spend privacy the guarantee does not account for, so SafePub runs have no "
                   "solution lattice. To publish differently, start a new SafePub run (it spends its ε again).")


def derive_from(query) -> SafePubParameters:
    """The parameters of a query's ε, δ (default 1e-6, the run form's) and search share (default 10%); the
    web's parameters.json and the API answer this. InputError names the bad value."""
    return derive(query.get("epsilon", ""), query.get("delta", "1e-6"),
                  query.get("search_share") or DEFAULT_SEARCH_SHARE)


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


def is_dp_run(job) -> bool:
    """A run published under (ε,δ)-differential privacy (SafePub): it has no lattice and no node to keep."""
    return job.algorithm == "safepub" or any(m.get("model") == EDDifferentialPrivacy.name
                                             for m in (job.models or []))


def refuse_lattice(request, job) -> HttpResponse | None:
    """The refusal page (409) for a SafePub run's lattice and "keep this node"; None for other runs."""
    if not is_dp_run(job):
        return None
    return render(request, "anonymizer/safepub_refusal.html", {"job": job, "dataset": job.dataset,
                                                               "message": LATTICE_REFUSAL}, status=409)
