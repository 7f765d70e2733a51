"""The definitions the product follows (docs/definitions.md) as a page, so that the help texts that cite a
section ("Formulas: definitions, 'Risk analysis'") link to it rather than name a file the user cannot open.
Every h2/h3 gets an id from its title up to the first " (" or ":" ("Risk analysis" -> #risk-analysis)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.http import Http404
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.utils.text import slugify
from django.views.decorators.http import require_GET

DEFINITIONS = Path(settings.BASE_DIR) / "docs" / "definitions.md"


def anchor(title: str) -> str:
    """A section's id: its title before any parenthesis or colon, as a slug ("SafePub: (ε,δ)-..." -> safepub)."""
    short = title.split(" (")[0].split(":")[0]
    return slugify(short) or "section"


@lru_cache(maxsize=4)
def render_definitions(path: Path, mtime: float) -> tuple[str, list[dict]]:
    """The document as HTML (raw HTML in it escaped, tables on) and its table of contents; cached per version."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    toc = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag in ("h2", "h3"):
            title = tokens[i + 1].content
            slug = anchor(title)
            seen[slug] = seen.get(slug, 0) + 1
            if seen[slug] > 1:
                slug = f"{slug}-{seen[slug]}"
            token.attrSet("id", slug)
            toc.append({"id": slug, "title": title, "level": int(token.tag[1])})
    return md.renderer.render(tokens, md.options, {}), toc


@require_GET
def definitions(request):
    if not DEFINITIONS.is_file():
        raise Http404("the definitions are not installed with this copy")
    html, toc = render_definitions(DEFINITIONS, DEFINITIONS.stat().st_mtime)
    return render(request, "anonymizer/definitions.html", {"body": mark_safe(html), "toc": toc})  # noqa: S308 - markdown-it escapes raw HTML (html=False)
