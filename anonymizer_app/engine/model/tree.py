"""A generalization hierarchy as an editable tree of labelled nodes, for the visual editor.

``Hierarchy`` (one lookup array per level) is what the algorithms need; this module converts it to
nested nodes that can be renamed, moved and deleted, checked, and converted back. A path is the
list of labels from the root's child down to a node (``[]`` is the root itself); siblings have
distinct labels, so a path names one node.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Iterable, Iterator

import pandas as pd

from ..errors import HierarchyError
from ..io import json_limits
from .hierarchy import ROOT, Hierarchy
from .missing import is_marker

MOVE_CHILDREN = ("move", "delete")


@dataclass
class Node:
    """A node of the tree; leaves (the original values) are nodes without children."""

    label: str
    children: list["Node"] = field(default_factory=list)

    def child(self, label: str) -> "Node | None":
        for c in self.children:
            if c.label == label:
                return c
        return None

    @property
    def is_leaf(self) -> bool:
        return not self.children


def path_id(path: list[str] | tuple[str, ...]) -> str:
    """The id of a node in ``to_dict``: its path as JSON, unambiguous whatever the labels hold."""
    return json.dumps(list(path), ensure_ascii=False)


def path_from_id(node_id: str) -> list[str]:
    """Inverse of ``path_id``; a malformed id is a HierarchyError."""
    try:
        path = json_limits.loads(node_id, "node id")  # a deep id would make the decoder recurse
    except (TypeError, ValueError):
        raise HierarchyError(f"node id {node_id[:80]!r} is not a path") from None
    if not isinstance(path, list) or not all(isinstance(p, str) for p in path):
        raise HierarchyError(f"node id {node_id!r} is not a path")
    return path


def _show(path: list[str] | tuple[str, ...]) -> str:
    return " > ".join(repr(p) for p in path) if path else "the root"


def _check_label(label: object, parent: Node) -> str:
    if not isinstance(label, str) or not label.strip():
        raise HierarchyError(f"empty label under {parent.label!r}: every node needs a label")
    return label


class HierarchyTree:
    """A rooted tree of labels; ``root.label`` is usually '*'."""

    def __init__(self, root: Node, name: str, kind: str = "file") -> None:
        self.root = root
        self.name = name
        self.kind = kind  # the Hierarchy kind it came from, kept on the way back

    def __repr__(self) -> str:
        return f"HierarchyTree({self.name!r}, {len(self.leaves())} leaves)"

    # ---- conversion ---------------------------------------------------------------------------
    @classmethod
    def from_hierarchy(cls, h: Hierarchy) -> "HierarchyTree":
        """Nested nodes from the leaves' paths; a label under two parents becomes two nodes."""
        top = h.height
        root = Node(str(h.labels[top][0]) if len(h.labels[top]) == 1 else ROOT)
        # one label column per level below the root, for all leaves at once (fast on 18,000 leaves)
        columns = [h.labels[lv][h.maps[lv]] for lv in range(top - 1, -1, -1)]
        index: dict[tuple[int, str], Node] = {}  # (id of parent node, label) -> node
        for i in range(len(h.leaves)):
            node = root
            for col in columns:
                label = str(col[i])
                key = (id(node), label)
                nxt = index.get(key)
                if nxt is None:
                    nxt = Node(label)
                    node.children.append(nxt)
                    index[key] = nxt
                node = nxt
        return cls(root, h.name, h.kind)

    def to_hierarchy(self, pad: bool = False, source: str = "") -> Hierarchy:
        """Back to levels. Full-domain algorithms need every leaf at the same depth: unequal depth
        is refused unless ``pad``, which repeats a shallow leaf's label on its missing levels."""
        paths = list(self._leaf_paths())
        if not self.root.children:
            raise HierarchyError(f"hierarchy {self.name!r} has no values: the root has no children")
        depth = max(len(p) for p in paths)
        rows = []
        for p in paths:
            if len(p) < depth:
                if not pad:
                    raise HierarchyError(
                        f"hierarchy {self.name!r}: leaf {p[-1]!r} ({_show(p)}) is at depth {len(p)} "
                        f"where the deepest leaves are at depth {depth}; every leaf must be at the same "
                        f"depth (pad the shallow leaves to repeat their label on the missing levels)"
                    )
                p = p + [p[-1]] * (depth - len(p))
            rows.append(list(reversed(p)) + [self.root.label])
        # the engine needs a tree of labels: one label on one level is one node (one parent)
        parent_of: dict[tuple[int, str], str] = {}
        for row in rows:
            for level in range(1, len(row) - 1):
                known = parent_of.setdefault((level, row[level]), row[level + 1])
                if known != row[level + 1]:
                    raise HierarchyError(
                        f"hierarchy {self.name!r}: the label {row[level]!r} names two nodes of level {level}, "
                        f"one under {known!r} and one under {row[level + 1]!r}; a label must name one node "
                        f"per level (its generalization must be unambiguous): rename or merge them"
                    )
        return Hierarchy.from_rows(rows, self.name, source or f"hierarchy {self.name!r}", kind=self.kind)

    def to_dict(self, max_depth: int | None = None, path: list[str] | None = None) -> dict:
        """JSON for the editor: {"label", "children", "leaves", "id", "has_children"}.

        ``max_depth`` levels of children are included (None: all); deeper nodes come with
        ``children: []`` and ``has_children`` so that the page can load them lazily, starting from
        ``path``."""
        start = list(path or [])
        return self._node_dict(self.find(start), start, max_depth)

    def _node_dict(self, node: Node, path: list[str], max_depth: int | None) -> dict:
        counts = self._leaf_counts()
        # iterative, so that a deep tree cannot hit Python's recursion limit
        out: dict = {"label": node.label, "children": [], "leaves": counts[id(node)], "id": path_id(path),
                     "has_children": bool(node.children)}
        stack = [(node, path, out, 0)]
        while stack:
            n, p, d, depth = stack.pop()
            if max_depth is not None and depth >= max_depth:
                continue
            for c in n.children:
                cp = p + [c.label]
                cd: dict = {"label": c.label, "children": [], "leaves": counts[id(c)], "id": path_id(cp),
                            "has_children": bool(c.children)}
                d["children"].append(cd)
                stack.append((c, cp, cd, depth + 1))
        return out

    @classmethod
    def from_dict(cls, d: dict, name: str) -> "HierarchyTree":
        """Validate and build: non-empty labels, no two siblings with one label."""
        if not isinstance(d, dict):
            raise HierarchyError("a hierarchy tree must be an object with 'label' and 'children'")
        root_label = d.get("label", ROOT)
        if not isinstance(root_label, str) or not root_label.strip():
            raise HierarchyError("empty label for the root")
        root = Node(root_label)
        stack = [(d, root)]
        while stack:
            src, node = stack.pop()
            children = src.get("children") or []
            if not isinstance(children, list):
                raise HierarchyError(f"children of {node.label!r} must be a list")
            seen: set[str] = set()
            for c in children:
                if not isinstance(c, dict):
                    raise HierarchyError(f"a child of {node.label!r} is not an object")
                label = _check_label(c.get("label"), node)
                if label in seen:
                    raise HierarchyError(f"duplicate label {label!r} under {node.label!r}")
                seen.add(label)
                child = Node(label)
                node.children.append(child)
                stack.append((c, child))
        return cls(root, name)

    # ---- navigation ---------------------------------------------------------------------------
    def find(self, path: list[str]) -> Node:
        node = self.root
        for i, label in enumerate(path):
            nxt = node.child(label)
            if nxt is None:
                raise HierarchyError(f"no node {label!r} under {_show(list(path[:i]))}")
            node = nxt
        return node

    def _leaf_paths(self) -> Iterator[list[str]]:
        """Each leaf's path (labels from the root's child down), in depth-first order."""
        stack: list[tuple[Node, list[str]]] = [(c, [c.label]) for c in reversed(self.root.children)]
        while stack:
            node, path = stack.pop()
            if not node.children:
                yield path
            else:
                stack.extend((c, path + [c.label]) for c in reversed(node.children))

    def _walk(self) -> Iterator[tuple[Node, list[str]]]:
        """Every node with its path, parents before children."""
        stack: list[tuple[Node, list[str]]] = [(self.root, [])]
        while stack:
            node, path = stack.pop()
            yield node, path
            stack.extend((c, path + [c.label]) for c in reversed(node.children))

    def _leaf_counts(self) -> dict[int, int]:
        nodes = list(self._walk())
        counts: dict[int, int] = {}
        for node, _ in reversed(nodes):  # children before parents
            counts[id(node)] = sum(counts[id(c)] for c in node.children) if node.children else 1
        return counts

    def leaves(self) -> list[str]:
        return [p[-1] for p in self._leaf_paths()]

    def depth_range(self) -> tuple[int, int]:
        """(shallowest, deepest) leaf depth, counted in edges from the root."""
        depths = [len(p) for p in self._leaf_paths()]
        return (min(depths), max(depths)) if depths else (0, 0)

    def checks(self, data_values: Iterable[str] | None = None) -> dict:
        """What the editor shows live.

        uncovered: data values that are not leaves; empty_nodes: paths of nodes without children
        above the deepest level that are not data values themselves (a group emptied by edits);
        unequal_depth; duplicate_labels: {level: labels on more than one node of that level}, the
        level counted from the deepest leaves (0) up, as in ``Hierarchy``."""
        leaves = self.leaves()
        leaf_set = set(leaves)
        values: set[str] | None = None
        uncovered: list[str] = []
        if data_values is not None:
            distinct = [str(v) for v in pd.unique(pd.Series(list(data_values), dtype=object))]
            values = set(distinct)
            # missing cells (blank or an NA marker) are never uncovered: a run gives them their own leaf,
            # (null) up to the root (hierarchy.with_missing)
            uncovered = [v for v in distinct if v not in leaf_set and not is_marker(v)]
        lo, hi = self.depth_range()
        empty: list[list[str]] = []
        by_level: dict[int, dict[str, int]] = {}
        for node, path in self._walk():
            if not path:
                continue
            if not node.children and len(path) < hi and (values is None or node.label not in values):
                empty.append(path)
            level = hi - len(path)
            seen = by_level.setdefault(level, {})
            seen[node.label] = seen.get(node.label, 0) + 1
        duplicates = {
            level: [label for label, n in seen.items() if n > 1]
            for level, seen in sorted(by_level.items())
            if any(n > 1 for n in seen.values())
        }
        return {"uncovered": uncovered, "empty_nodes": empty, "unequal_depth": lo != hi,
                "duplicate_labels": duplicates}

    # ---- edits (each refused with a HierarchyError saying why) ----------------------------------
    def _parent_of(self, path: list[str], verb: str) -> tuple[Node, Node]:
        if not path:
            raise HierarchyError(f"cannot {verb} the root")
        parent = self.find(list(path[:-1]))
        return parent, self.find(list(path))

    def rename(self, path: list[str], new_label: str) -> Node:
        node = self.find(list(path))
        if not path:
            node.label = _check_label(new_label, node)
            return node
        parent = self.find(list(path[:-1]))
        new_label = _check_label(new_label, parent)
        if new_label != node.label and parent.child(new_label) is not None:
            raise HierarchyError(f"cannot rename {node.label!r} to {new_label!r}: {parent.label!r} "
                                 f"already has a child {new_label!r}")
        node.label = new_label
        return node

    def add_child(self, path: list[str], label: str) -> Node:
        parent = self.find(list(path))
        label = _check_label(label, parent)
        if parent.child(label) is not None:
            raise HierarchyError(f"cannot add {label!r}: {parent.label!r} already has a child {label!r}")
        node = Node(label)
        parent.children.append(node)
        return node

    def delete(self, path: list[str], children: str = "move") -> None:
        """Delete a node; its children move up to its parent (``move``) or go with it (``delete``)."""
        if children not in MOVE_CHILDREN:
            raise HierarchyError(f"children must be one of {', '.join(MOVE_CHILDREN)}, got {children!r}")
        parent, node = self._parent_of(list(path), "delete")
        at = next(i for i, c in enumerate(parent.children) if c is node)
        if children == "move":
            clash = [c.label for c in node.children
                     if any(s.label == c.label for s in parent.children if s is not node)]
            if clash:
                raise HierarchyError(f"cannot move the children of {node.label!r} up: {parent.label!r} "
                                     f"already has a child {clash[0]!r}")
            parent.children[at:at + 1] = node.children
        else:
            del parent.children[at]

    def move(self, path: list[str], new_parent_path: list[str]) -> None:
        """Move a subtree under another node."""
        path, target = list(path), list(new_parent_path)
        parent, node = self._parent_of(path, "move")
        new_parent = self.find(target)
        if target == path:
            raise HierarchyError(f"cannot move {node.label!r} onto itself")
        if target[: len(path)] == path:
            raise HierarchyError(f"cannot move {node.label!r} under its own descendant {new_parent.label!r}")
        if new_parent is parent:
            return  # already there
        if new_parent.child(node.label) is not None:
            raise HierarchyError(f"cannot move {node.label!r}: {new_parent.label!r} already has a child "
                                 f"{node.label!r}")
        parent.children[:] = [c for c in parent.children if c is not node]
        new_parent.children.append(node)
