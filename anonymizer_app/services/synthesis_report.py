"""The release report of a synthetic set, as a run has one (services/release_report.py dispatches here for a job
of kind "synthesis"): the guarantee in words ("(ε, δ)-differential privacy for each person's record" with the
values, or no formal privacy guarantee for the CART baseline), the method, the budget split, the columns and how
each was discretized, the dataset's ε ledger after this release, the synthetic figures (TVD 1-/2-way, exact
copies, exact copies of rare QI combinations flagged, membership AUC), the models trained on the set if a
model-utility job of it exists, and the publication check (services/synthesis_gate.py). One context for the
page, the PDF and a deposit's HTML file."""

from __future__ import annotations

import math

from django.template.loader import render_to_string
from django.utils import timezone

from hierarchy_editor.models import Hierarchy

from ..engine.measure.figure_catalogue import format_kind
from ..engine.synthesis import SYNTHESIZERS
from ..models import Job, PrivacyLedgerEntry
from . import model_utility, privacy_ledger
from .results import job_result
from .synthesis import NUMERIC_TYPES, figure_rows

NO_GUARANTEE = ("This synthetic set gives no formal privacy guarantee: its rows are drawn from decision trees "
                "fitted to the original records (the CART baseline) and may reproduce rare records.")


def guarantee_sentence(report: dict) -> str:
    """The guarantee in words, with ε and δ as the job spent them."""
    if not report.get("dp"):
        return NO_GUARANTEE
    return (f"This synthetic set satisfies ({report['epsilon']:g}, {report['delta']:g})-differential privacy for "
            f"each person's record.")


def _hierarchy_name(job: Job, column: dict) -> str:
    if column.get("hierarchy_snapshot"):
        return str(column["hierarchy_snapshot"].get("name", ""))
    if not column.get("hierarchy"):
        return "(none)"
    found = Hierarchy.objects.filter(pk=int(column["hierarchy"]), owner=job.owner).values_list("name", flat=True).first()
    return found or "(deleted)"


def column_rows(job: Job, spec: dict) -> list[dict]:
    """Each synthesized column: its type and how the method read it (its discretization)."""
    config = {c["name"]: c for c in job.config.get("columns", [])}
    dp = bool(spec.get("dp"))
    rows = []
    for name in spec["columns"]:
        c = config.get(name, {"type": "string"})
        numeric = c.get("type") in NUMERIC_TYPES
        has_hierarchy = bool(c.get("hierarchy") or c.get("hierarchy_snapshot"))
        bounds = (spec.get("bounds") or {}).get(name)
        if numeric and bounds:
            lower, upper, count = bounds
            how = (f"{int(count)} equal-width bins from {lower:g} to {upper:g} (values outside put in the first or "
                   f"last bin), chosen without looking at the data")
        elif numeric and has_hierarchy:
            how = f"the level-1 groups of its hierarchy {_hierarchy_name(job, c)!r}"
        elif has_hierarchy and dp:
            how = f"categorical: the leaves of its hierarchy {_hierarchy_name(job, c)!r} as its domain"
        elif numeric:
            how = "numeric: the values as they are (the trees split on them)"
        else:
            how = "categorical: the values it holds"
        rows.append({"column": name, "type": c.get("type", "string"), "role": c.get("role", ""),
                     "discretization": how})
    return rows


def budget_rows(report: dict) -> list[dict]:
    """The budget split: each step's ρ (zCDP) and its share of the total."""
    budget = report.get("budget") or {}
    total = budget.get("rho")  # the whole ρ the (ε, δ) converts to (engine/synthesis/marginal_common.py)
    rows = []
    for part in budget.get("parts") or []:
        rho = part.get("rho")
        share = rho / total if isinstance(rho, (int, float)) and total else None
        rows.append({"step": str(part.get("step", "")), "rho": format_kind("amount", rho),
                     "share": f"{share * 100:.1f}%" if share is not None else "—"})
    return rows


def ledger_after(job: Job) -> dict:
    """The dataset's ε ledger right after this release: the entries up to and including this job's (by the
    ledger's order), or for a method that spends nothing the entries made before it was created."""
    entries = list(PrivacyLedgerEntry.objects.filter(dataset=job.dataset).order_by("created_at", "id")
                   .values_list("job_id", "epsilon", "delta", "created_at"))
    mine = [i for i, e in enumerate(entries) if e[0] == job.pk]
    upto = entries[: mine[-1] + 1] if mine else [e for e in entries if e[3] <= job.created]
    spent = math.fsum(e[1] for e in upto)
    budget = privacy_ledger.budget_of(job.dataset)
    out: dict = {"charged": bool(mine), "epsilon": math.fsum(entries[i][1] for i in mine) if mine else 0.0,
                 "delta": math.fsum(entries[i][2] for i in mine) if mine else 0.0,
                 "spent": spent, "delta_spent": math.fsum(e[2] for e in upto), "releases": len(upto),
                 "budget": budget, "remaining": None if budget is None else max(0.0, budget - spent),
                 "accounting": privacy_ledger.ACCOUNTING}
    # the figures as the ledger page writes them (%g: 1.25, 1e-09)
    out["text"] = {k: f"{v:g}" for k, v in out.items() if isinstance(v, float)}
    return out


def check_statement(report: dict) -> str:
    """What the publication check found when the rows were stored (every download checks them again)."""
    check = report.get("publication_check")
    if not check:
        return "This synthetic set was stored before the publication check existed; every download checks it."
    text = (f"Before it was stored, the synthetic table ({check['rows']:,} rows) was read back and checked: its "
            f"columns are exactly the {len(check['columns'])} synthesized ({', '.join(check['columns'])}), its row "
            f"count is the one requested")
    text += ", the dataset's ε ledger holds this release's charge" if check.get("ledger_entry") else ""
    if check.get("rare_copies") is not None:
        text += (f", and {check['rare_copies']} row(s) copying an original record with a rare quasi-identifier "
                 f"combination (fewer than {check['rare_below']} records) were recounted, none beyond those flagged")
    return text + ". Every download and export repeats the check on the stored rows."


def context(job: Job) -> dict:
    result = job_result(job)
    report = result.report.get("synthesis") or {}
    spec = job.options["synthesis"]
    figures = report.get("figures") or {}
    synthesizer = SYNTHESIZERS.get(report.get("method", ""))
    return {
        "generated": timezone.now(), "report": report, "spec": spec, "figures": figures,
        "guarantee": guarantee_sentence(report), "method": report.get("label", report.get("method", "")),
        "method_summary": synthesizer.summary if synthesizer else "", "columns": column_rows(job, spec),
        "budget_rows": budget_rows(report), "rho_total": format_kind("amount", (report.get("budget") or {}).get("rho"))
        if (report.get("budget") or {}).get("rho") is not None else "", "ledger": ledger_after(job),
        "figure_rows": figure_rows(figures), "rare": int(figures.get("rare_exact_copies") or 0),
        "rare_listed": figures.get("rare_listed") or [], "rare_qi": figures.get("rare_qi") or [],
        "rare_below": figures.get("rare_below"), "model_utility": model_utility.report_section(job),
        "check": check_statement(report), "options": sorted((spec.get("options") or {}).items()),
        "epsilon": f"{report['epsilon']:g}" if report.get("dp") else "", "delta": f"{report['delta']:g}" if report.get("dp") else "",
    }


def report_html(job: Job, owner_name: str, pdf: bool, request=None) -> str:
    ctx = context(job)
    ctx.update({"job": job, "dataset": job.dataset, "pdf": pdf, "owner": owner_name})
    return render_to_string("anonymizer/synthesis_release_report.html", ctx, request=request)
