"""Figures on the result page: a share as a percentage with as many decimals as it needs."""

from __future__ import annotations

from django import template

from ..engine import Role
from ..services.sensitive_bins import MANY_VALUES

register = template.Library()


@register.filter
def percent(value) -> str:
    """0.4988 -> '49.9%', 0.00012 -> '0.012%', 0 -> '0%' (two significant digits below 1%)."""
    try:
        share = float(value) * 100
    except (TypeError, ValueError):
        return ""
    if share == 0 or share >= 1:
        return f"{share:.3g}%" if share < 100 else f"{share:.0f}%"
    return f"{share:.2g}%"


@register.simple_tag
def continuous_sensitive(dataset) -> dict:
    """{column: distinct values} of the dataset's numeric sensitive columns with many distinct values: the run
    form selects t-closeness with the ordered distance for them (static/js/run_sensitive.js), where equal-distance
    models and homogeneity on exact values mean little."""
    return {c.name: c.distinct_count for c in dataset.columns.filter(role=Role.SENSITIVE.value, type__in=NUMERIC_TYPES)
            if c.distinct_count > MANY_VALUES}


NUMERIC_TYPES = ("integer", "decimal")
