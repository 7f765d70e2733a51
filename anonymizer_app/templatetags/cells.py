"""Showing table cells on pages: a long cell is cut (a 30 MB cell must not make a 30 MB page), the cut
marked with an ellipsis and the full length in the tooltip. The text stays escaped: format_html escapes
it, the markup around it is ours."""

from __future__ import annotations

from django import template
from django.utils.html import format_html

from ..services.labels import CELL_CHARS, cut

register = template.Library()

NAME_CHARS = 60  # of a column name in a table heading


@register.filter
def cell(value, limit: int = CELL_CHARS):
    """``{{ value|cell }}``: the value, or its first ``limit`` characters, an ellipsis and a tooltip."""
    text, length = cut(value, int(limit))
    if length is None:
        return text  # escaped by the template like any value
    return format_html('<span class="cell-cut" title="{} characters; {} shown">{}</span>',
                       f"{length:,}", f"{int(limit):,}", text)


MISSING_TEXT = "(missing)"  # how a missing cell (blank or NA marker, engine.model.missing) is named on pages


@register.filter
def value_or_missing(value, limit: int = CELL_CHARS):
    """``{{ value|value_or_missing }}``: a listed value as ``cell`` shows it, but a missing cell (an empty or
    blank text: a run reads every NA marker as one) named "(missing)", styled apart from a value."""
    text = "" if value is None else str(value)
    if text.strip() == "":
        return format_html('<span class="missing-value" title="empty cells and NA markers">{}</span>', MISSING_TEXT)
    return cell(value, limit)
