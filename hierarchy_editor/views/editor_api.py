"""The tree editor's JSON endpoints, under /hierarchies/<id>/edit/<token>/: a node's children one page at a
time (the browser never receives a whole city tree), search, the checks, the sunburst's data and saving the
session's tree back to the hierarchy. The edits themselves are editor_ops."""

from __future__ import annotations

import json

from rest_framework import exceptions
from rest_framework.response import Response

from anonymizer_app.engine import HierarchyError
from anonymizer_app.engine.model.tree import HierarchyTree

from .. import drafts
from ..models import Hierarchy
from .editor import PAGE, Source, checks, load_draft, session_state, tree_to_draft
from .jsonapi import JSONEndpoint, clamped_int, json_list, refuse

PAGE_MAX = 1000  # children one request may ask for
SEARCH_HITS = 50
SEARCH_MAX_CHARS = 200
SUNBURST_DEPTH = 4  # levels below the root drawn in the sunburst
SUNBURST_MAX_DEPTH = 8
SUNBURST_MAX_NODES = 4000
SUNBURST_LABEL_CHARS = 16  # characters of a label written on its slice


def node_json(node: dict, path: list[str], records: int | None) -> dict:
    children = node.get("children") or ()
    return {"label": node["label"], "path": path, "leaves": drafts.leaf_count(node),
            "children": len(children), "records": records}


def _page(children: list[dict], params) -> tuple[int, int]:
    """(offset, limit) of ?offset=&limit=, or with &around=<label> from the start up to that child's page."""
    limit = clamped_int(params.get("limit"), PAGE, 1, PAGE_MAX)
    offset = clamped_int(params.get("offset"), 0, 0, max(0, len(children)))
    around = params.get("around")
    if around is not None:
        at = next((i for i, c in enumerate(children) if c["label"] == around), None)
        if at is not None:
            return 0, (at // limit + 1) * limit
    return offset, limit


class Nodes(JSONEndpoint):
    def get(self, request, pk: int, token: str):
        """One page of a node's children: ?path=<JSON list>&offset=&limit=, or &around=<label> for the
        page(s) from the start up to that child (used to reveal a search hit)."""
        h, draft = load_draft(request, pk, token)
        path = json_list(request.query_params.get("path"))
        node = drafts.find(draft.tree, path)
        if node is None:
            raise exceptions.NotFound(f"No node at {' > '.join(path) or 'the root'} (it was moved, renamed or "
                                      f"deleted).")
        children = node.get("children") or []
        offset, limit = _page(children, request.query_params)
        counts = Source(request.user, h, draft.meta).counts()
        records = drafts.record_counts(node, counts) if counts is not None else None

        def shown(n: dict, p: list[str]) -> dict:
            return node_json(n, p, records[id(n)] if records else None)

        return Response({"node": shown(node, path), "offset": offset, "total": len(children),
                         "children": [shown(c, path + [c["label"]]) for c in children[offset:offset + limit]]})


class Search(JSONEndpoint):
    def get(self, request, pk: int, token: str):
        """?q=: the paths of the nodes whose label holds q (case-insensitive), breadth first, and their number."""
        h, draft = load_draft(request, pk, token)
        query = (request.query_params.get("q") or "").strip()
        if not query:
            return Response({"query": "", "hits": [], "total": 0})
        if len(query) > SEARCH_MAX_CHARS:
            raise refuse(f"The search text has {len(query):,} characters; search for at most "
                         f"{SEARCH_MAX_CHARS}.", "q")
        hits, total = drafts.search(draft.tree, query, SEARCH_HITS)
        return Response({"query": query, "hits": hits, "total": total})


class Checks(JSONEndpoint):
    def get(self, request, pk: int, token: str):
        h, draft = load_draft(request, pk, token)
        return Response({"checks": checks(request, h, draft), "state": session_state(draft)})


class _LeafOnes(dict):
    """Counts of 1 for every leaf: sizes by number of leaves."""

    def get(self, key, default=None):
        return 1


def _short(label: str) -> str:
    """A slice shows at most SUNBURST_LABEL_CHARS characters ("…" marks a cut); the hover the whole label."""
    return label if len(label) <= SUNBURST_LABEL_CHARS else label[:SUNBURST_LABEL_CHARS - 1] + "…"


def sunburst_nodes(tree: dict, sizes: dict[int, int], depth: int) -> tuple[dict[str, list], bool]:
    """Plotly's ids, labels, parents and values of the top ``depth`` levels, breadth first (at most
    SUNBURST_MAX_NODES); and whether nodes were left out."""
    data: dict[str, list] = {"ids": [], "labels": [], "parents": [], "values": []}
    queue: list[tuple[dict, list[str], str, int]] = [(tree, [], "", 0)]
    truncated = False
    while queue:
        node, path, parent_id, level = queue.pop(0)
        node_id = json.dumps(path, ensure_ascii=False)
        for name, value in (("ids", node_id), ("labels", str(node["label"])), ("parents", parent_id),
                            ("values", sizes[id(node)])):
            data[name].append(value)
        for c in (node.get("children") or ()) if level < depth else ():
            if len(data["ids"]) + len(queue) >= SUNBURST_MAX_NODES:
                truncated = True
                break
            queue.append((c, path + [c["label"]], node_id, level + 1))
    return data, truncated


class Sunburst(JSONEndpoint):
    def get(self, request, pk: int, token: str):
        """Plotly sunburst data of the top levels, each node sized by the column's records under it, by the item
        occurrences under it for an item hierarchy opened on set-valued data (by leaves when the hierarchy is
        not bound to a column)."""
        h, draft = load_draft(request, pk, token)
        depth = clamped_int(request.query_params.get("depth"), SUNBURST_DEPTH, 1, SUNBURST_MAX_DEPTH)
        source = Source(request.user, h, draft.meta)
        counts = source.counts()
        sizes = drafts.record_counts(draft.tree, counts if counts is not None else _LeafOnes())
        data, truncated = sunburst_nodes(draft.tree, sizes, depth)
        return Response({
            "ids": data["ids"], "labels": data["labels"], "short": [_short(x) for x in data["labels"]],
            "short_chars": SUNBURST_LABEL_CHARS, "parents": data["parents"], "values": data["values"],
            "measure": source.measure if counts is not None else "leaves", "depth": depth, "truncated": truncated,
        })


class Save(JSONEndpoint):
    def post(self, request, pk: int, token: str):
        """Write the session's tree back to the hierarchy (one row per leaf). Body {"pad": bool}: unequal
        leaf depth is refused (400 with ``can_pad``) unless pad is true."""
        h, draft = load_draft(request, pk, token)
        pad = bool(request.data.get("pad"))
        tree = HierarchyTree.from_dict(draft.tree, h.name)
        lo, hi = tree.depth_range()
        try:
            parsed = tree.to_hierarchy(pad=pad, source=h.name)
        except HierarchyError as exc:
            return Response({"error": str(exc), "can_pad": lo != hi}, status=400)
        h = _store(h.pk, parsed)
        if lo != hi:  # padded: the session goes on with the padded tree
            draft.push(tree_to_draft(HierarchyTree.from_hierarchy(parsed)))
        draft.mark_saved()
        return Response({"ok": True, "leaves": h.leaves, "height": h.height, "padded": lo != hi,
                         "message": f"Saved {h.name!r}: {h.leaves} leaves, height {h.height}.",
                         "state": session_state(draft), "checks": checks(request, h, draft)})


def _store(pk: int, parsed) -> Hierarchy:
    """The hierarchy's row rewritten from the parsed tree (one row per leaf, ';')."""
    h = Hierarchy.objects.get(pk=pk)
    h.content, h.delimiter, h.on_conflict = parsed.to_csv(";"), ";", "error"
    h.leaves, h.height = len(parsed.leaves), parsed.height
    h.save(update_fields=["content", "delimiter", "on_conflict", "leaves", "height"])
    return h
