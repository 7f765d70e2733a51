"""The ε ledger of a dataset where a page offers a differentially private release (the run form's SafePub)."""

from __future__ import annotations

from django import template

from ..services import privacy_ledger

register = template.Library()


@register.simple_tag
def privacy_budget(dataset) -> dict:
    """spent, budget, remaining and the number of releases (services.privacy_ledger.BudgetState.as_dict)."""
    return privacy_ledger.state(dataset).as_dict()
