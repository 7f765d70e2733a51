"""Figures on the result page: a share as a percentage with as many decimals as it needs."""

from __future__ import annotations

from django import template

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
