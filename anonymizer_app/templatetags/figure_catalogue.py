"""The catalogue of figures in templates: ``{{ value|figure:"marketer_risk" }}`` is the figure's display text,
``{{ "marketer_risk"|figure_label }}`` its name and ``{{ "marketer_risk"|figure_help }}`` how it is computed,
the same as on every other page, the release report, the API's labels and the command line
(engine.measure.figure_catalogue)."""

from __future__ import annotations

from django import template

from ..engine.measure.figure_catalogue import FIGURES, format_kind

register = template.Library()


@register.filter
def figure(value, key: str) -> str:
    """The display text of figure ``key`` at ``value``; a kind (count, share, ratio, ...) may stand for a key."""
    if key in FIGURES:
        return FIGURES[key].format(value)
    return format_kind(key, value)


@register.filter
def figure_label(key: str) -> str:
    return FIGURES[key].label


@register.filter
def figure_help(key: str) -> str:
    return FIGURES[key].help
