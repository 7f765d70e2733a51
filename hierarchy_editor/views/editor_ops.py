"""POST /hierarchies/<id>/edit/<token>/op/: one edit of the session's tree through engine.model.tree's
HierarchyTree (rename, add, delete, move, pad) or a step back or forth in its history (undo, redo). A refused
edit is a 400 with its reason and records nothing.

Body: {"op": "rename", "path": [...], "label": "..."} | {"op": "add", "path": [...], "label": "..."}
| {"op": "delete", "path": [...], "children": "move"|"delete"} | {"op": "move", "path": [...], "to": [...]}
| {"op": "pad"} | {"op": "undo"} | {"op": "redo"}. The answer names the node's new path (``moved``:
{"from", "to"}) so that the page can keep it open, with the session's state and the checks."""

from __future__ import annotations

from collections.abc import Callable

from rest_framework.response import Response

from anonymizer_app.engine.model.tree import HierarchyTree

from ..forms import size_limits
from ..models import Hierarchy
from .editor import checks, editor_max_nodes, load_draft, session_state, tree_to_draft
from .jsonapi import JSONEndpoint, json_list, refuse, short_json

Moved = dict | None
Edit = Callable[[HierarchyTree, dict, dict], Moved]  # (tree, the draft's tree dict, body) -> moved


def _label(value) -> str:
    """A node label from an edit: text within HIERARCHY_MAX_LABEL_CHARS (the tree refuses an empty one)."""
    if not isinstance(value, str):
        raise refuse(f"label must be text, got {short_json(value)}.", "label")
    limit = size_limits()["max_label_chars"]
    if len(value) > limit:
        raise refuse(f"label has {len(value):,} characters, more than the limit of {limit:,}.", "label")
    return value


def node_count(node: dict) -> tuple[int, int]:
    """(nodes, depth in levels below the node) of a draft tree."""
    count, depth, stack = 0, 0, [(node, 0)]
    while stack:
        n, d = stack.pop()
        count += 1
        depth = max(depth, d)
        stack.extend((c, d + 1) for c in n.get("children") or ())
    return count, depth


def _rename(tree: HierarchyTree, draft_tree: dict, data: dict) -> Moved:
    path = json_list(data.get("path"))
    label = _label(data.get("label"))
    tree.rename(path, label)
    return {"from": path, "to": path[:-1] + [label]} if path else None


def _add(tree: HierarchyTree, draft_tree: dict, data: dict) -> Moved:
    """A child under ``path``, within the editor's node limit and the hierarchy's level limit."""
    path = json_list(data.get("path"))
    label = _label(data.get("label"))
    nodes, most = node_count(draft_tree)[0], editor_max_nodes()
    if nodes >= most:
        raise refuse(f"The tree has {nodes:,} nodes, the editor's limit; delete some before adding more.")
    levels = size_limits()["max_levels"]
    if len(path) + 2 > levels:  # the new node's level count: root, the path, the node
        raise refuse(f"A node under {' > '.join(path)} would make {len(path) + 2} levels, more than the limit "
                     f"of {levels}.", "path")
    tree.add_child(path, label)
    return None


def _delete(tree: HierarchyTree, draft_tree: dict, data: dict) -> Moved:
    tree.delete(json_list(data.get("path")), children=str(data.get("children") or "move"))
    return None


def _check_move_depth(draft_tree: dict, path: list[str], to: list[str]) -> None:
    """A move that would make more levels than the limit is refused (as an add is): repeated moves could
    otherwise nest a chain of nodes deeper than anything the editor, the saved file or json can hold."""
    node = draft_tree
    for label in path:
        child = next((c for c in node.get("children") or () if c.get("label") == label), None)
        if child is None:
            return  # the move itself names the missing node
        node = child
    levels = size_limits()["max_levels"]
    made = len(to) + 2 + node_count(node)[1]  # the root, the new parent's path, the node and its levels below
    if path and made > levels:
        raise refuse(f"Moving {' > '.join(path)} under {' > '.join(to) or 'the root'} would make {made} levels, "
                     f"more than the limit of {levels}.", "to")


def _move(tree: HierarchyTree, draft_tree: dict, data: dict) -> Moved:
    path = json_list(data.get("path"))
    to = json_list(data.get("to"), "to")
    _check_move_depth(draft_tree, path, to)
    tree.move(path, to)
    return {"from": path, "to": to + [path[-1]]} if path else None


EDITS: dict[str, Edit] = {"rename": _rename, "add": _add, "delete": _delete, "move": _move}
OPERATIONS = (*EDITS, "pad", "undo", "redo")


def _padded(tree: HierarchyTree, name: str) -> HierarchyTree:
    """The tree with its shallow leaves repeated down to the deepest level."""
    lo, hi = tree.depth_range()
    if lo == hi:
        raise refuse("Every leaf is already at the same depth: nothing to pad.")
    return HierarchyTree.from_hierarchy(tree.to_hierarchy(pad=True, source=name))


def _apply(h: Hierarchy, draft, op: str, data: dict) -> tuple[HierarchyTree | None, Moved]:
    """Carry out the operation on the session: (the new tree, or None after undo/redo; moved)."""
    if op in ("undo", "redo"):
        if not (draft.undo() if op == "undo" else draft.redo()):
            raise refuse(f"Nothing to {op}.")
        return None, None
    tree = HierarchyTree.from_dict(draft.tree, h.name)
    moved = None
    if op == "pad":
        tree = _padded(tree, h.name)
    else:
        moved = EDITS[op](tree, draft.tree, data)
    draft.push(tree_to_draft(tree))
    return tree, moved


class Op(JSONEndpoint):
    def post(self, request, pk: int, token: str):
        h, draft = load_draft(request, pk, token)
        data = request.data
        op = data.get("op")
        if op not in OPERATIONS:
            raise refuse(f"Unknown operation {op!r}; use one of {', '.join(OPERATIONS)}.", "op")
        tree, moved = _apply(h, draft, op, data)
        return Response({"ok": True, "op": op, "moved": moved, "root": draft.tree["label"],
                         "state": session_state(draft), "checks": checks(request, h, draft, tree)})
