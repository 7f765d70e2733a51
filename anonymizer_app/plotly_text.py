"""Data values inside plotly figures. Plotly draws trace names, tick texts, category labels and hover texts
through its own pseudo-HTML (<b>, <br>, <a href>, <span style>, entities), so a value such as
``<b>x</b>`` or ``<a href=...>`` would be drawn as markup instead of the text the user uploaded.
Escaping ``& < >`` makes plotly show the value literally: it decodes &amp; &lt; &gt; back to text."""

from __future__ import annotations


def plotly_escape(value: object) -> str:
    """The value as plotly text that is drawn literally (no tags, no links, no entities)."""
    return str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
