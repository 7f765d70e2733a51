"""The ε ledger of a dataset: every differentially private release of it (a DP histogram or randomized
response on its DP page or through the API, a SafePub run) with the ε and δ it spent, the mechanism, who and
when, and a link to the release; and the dataset's budget.

Accounting by sequential composition: releases of the same data spend Σε (and Σδ) in total (Dwork & Roth
2014, Thm. 3.16), the simplest bound and a safe one for any mix of mechanisms. A release whose ε would take the
total past the budget is refused before any noise is drawn, with the figures spent and remaining. Entries are
kept when a release is deleted (a SafePub run removed): its ε was spent when it was published. A SafePub run is
charged when it is created (queued): a run that then fails or is cancelled keeps its entry, which errs on the
safe side (the worker may already have read the data).

Post-processing a release (rounding, clamping, consistent totals) is free and is not charged.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction

from ..engine import InputError
from ..models import Dataset, Job, PrivacyBudget, PrivacyLedgerEntry

ACCOUNTING = "sequential composition: the ε of every release of the dataset add up"
# a float sum such as 0.1 + 0.2 must not refuse a release that exactly fills the budget
TOLERANCE = 1e-9


@dataclass(frozen=True)
class BudgetState:
    budget: float | None  # None: no budget set
    spent: float
    delta_spent: float
    releases: int

    @property
    def remaining(self) -> float | None:
        return None if self.budget is None else max(0.0, self.budget - self.spent)

    def as_dict(self) -> dict:
        return {"budget": self.budget, "spent": self.spent, "remaining": self.remaining,
                "delta_spent": self.delta_spent, "releases": self.releases, "accounting": ACCOUNTING}


def budget_of(dataset: Dataset) -> float | None:
    row = PrivacyBudget.objects.filter(dataset=dataset).first()
    if row is not None and row.epsilon is not None:
        return row.epsilon
    return settings.ANONYMIZER_DP_DEFAULT_EPSILON_BUDGET


def state(dataset: Dataset) -> BudgetState:
    entries = list(PrivacyLedgerEntry.objects.filter(dataset=dataset).values_list("epsilon", "delta"))
    return BudgetState(budget=budget_of(dataset), spent=math.fsum(e for e, _ in entries),
                       delta_spent=math.fsum(d for _, d in entries), releases=len(entries))


def entries(dataset: Dataset):
    return PrivacyLedgerEntry.objects.filter(dataset=dataset).select_related("user", "job").order_by("-created_at", "-id")


def set_budget(dataset: Dataset, epsilon: float | None) -> None:
    """The dataset's budget (None: back to the default setting). A budget below what is spent already is
    allowed (it refuses every further release) and said so by the page."""
    if epsilon is not None and (not math.isfinite(epsilon) or epsilon <= 0):
        raise InputError(f"the ε budget must be a number above 0, got {epsilon!r}")
    PrivacyBudget.objects.update_or_create(dataset=dataset, defaults={"epsilon": epsilon})


def refusal(current: BudgetState, epsilon: float) -> str | None:
    """The message refusing a release of ``epsilon``, or None when it fits the budget."""
    if current.budget is None or current.spent + epsilon <= current.budget + TOLERANCE:
        return None
    return (f"refused: this release would spend ε = {epsilon:g}, but the dataset's privacy budget is "
            f"ε = {current.budget:g}, of which {current.spent:g} is spent ({current.releases} release"
            f"{'s' if current.releases != 1 else ''}), {current.remaining:g} remaining. Raise the budget on the "
            f"dataset's Differential privacy page or release with a smaller ε ({ACCOUNTING}).")


@contextmanager
def charge(dataset: Dataset, user, mechanism: str, epsilon: float, delta: float = 0.0, description: str = "",
           job: Job | None = None):
    """Check the budget, let the caller make the release, then write its ledger entry, all in one transaction
    that holds the dataset's row locked (two releases at once cannot both take the last of the budget). The
    caller may fill ``entry.release``/``entry.job`` before the block ends; an exception in the block writes
    nothing. InputError: the budget would be exceeded (nothing released)."""
    with transaction.atomic():
        Dataset.objects.select_for_update().filter(pk=dataset.pk).first()
        message = refusal(state(dataset), epsilon)
        if message:
            raise InputError(message)
        entry = PrivacyLedgerEntry(dataset=dataset, user=user, mechanism=mechanism, epsilon=epsilon, delta=delta,
                                   description=description[:500], job=job)
        yield entry
        entry.save()


def charge_safepub_job(job: Job, user=None) -> None:
    """The ledger entry of a SafePub run (a job whose models hold (ε,δ)-differential privacy), written when it
    is created; InputError (and the caller's transaction rolled back) when the budget would be exceeded."""
    model = next((m for m in job.models or [] if m.get("model") == "differential-privacy"), None)
    if job.algorithm != "safepub" or model is None:
        return
    epsilon, delta = float(model.get("epsilon", 1.0)), float(model.get("delta", 1e-6))
    with charge(job.dataset, user or job.owner, "SafePub (sampling + exponential mechanism)", epsilon, delta,
                f"SafePub run, ({epsilon:g}, {delta:g})-differential privacy", job=job):
        pass
