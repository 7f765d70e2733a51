"""Hierarchy file formats: ARX CSV, the Datafly exercise files, Amnesia text and Amnesia JSON.

- ``arx``: one row per leaf, ``leaf;level1;...;root``, quoted as CSV where needed.
- ``datafly``: the same with ``,`` (identical duplicate rows accepted).
- ``amnesia-text``: ``distinct`` (or ``range``), ``name N``, ``type T``, ``height H``, then lines
  ``parent has child child ...``, from the leaves' parents up to the root. Labels are separated by
  spaces, so a label holding a space cannot be written: the writer says so instead of corrupting.
  We write a blank line between levels, which lets a label recur on several levels (ARX-style
  padding); files without those blank lines are read by label, where each label is one node.
- ``amnesia-json``: ``{"hierType", "name", "type", "height", "level1": {root: [children]}, ...,
  "levelN": {leaf parent: [leaves]}}``, top down.

``height`` is written as the number of generalization levels above the leaves (the number of
parent blocks); the reader accepts either that or the number of levels including the leaves.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import pandas as pd

from ..errors import HierarchyError
from ..io import json_limits
from .column_types import infer_type
from .hierarchy import (
    MAX_LABEL_CHARS,
    MAX_LEVELS,
    Hierarchy,
    check_size,
    conflict_error,
    decode_hierarchy,
    head_lines,
    parse_hierarchy,
    sniff_hierarchy_delimiter,
)

FORMATS = ("arx", "datafly", "amnesia-text", "amnesia-json")
AMNESIA_TYPES = {"integer": "int", "decimal": "double", "date": "date", "string": "string"}
_HEADER_KEYS = ("name", "type", "height")


# ---- detection ------------------------------------------------------------------------------------
def detect_format(text: str, filename: str = "") -> str:
    """amnesia-json (a JSON object), amnesia-text (first line distinct/range), else by delimiter:
    ';' or tab -> arx, ',' -> datafly; a one-column file by its extension, else arx."""
    text = text.lstrip("\ufeff")
    stripped = text.lstrip()
    if stripped[:1] in ("{", "[") or filename.lower().endswith(".json"):
        try:
            json_limits.loads(stripped, filename or "hierarchy")
            return "amnesia-json"  # any JSON document: the reader says what is wrong with its shape
        except json_limits.JsonLimitError:
            return "amnesia-json"  # the reader names the file and the depth
        except ValueError:
            if filename.lower().endswith(".json"):
                return "amnesia-json"  # the reader names the line of the syntax error
            # else e.g. a first leaf '{a, b}' of a CSV file
    head = head_lines(text, 50)  # (the whole text split only when its first 50 lines are all blank)
    first = next((ln.strip() for ln in (head if any(ln.strip() for ln in head) else text.splitlines())
                  if ln.strip()), "")
    if first.lower() in ("distinct", "range"):
        return "amnesia-text"
    lines = [ln for ln in head if ln.strip()]
    if any(d in ln for ln in lines for d in ";,\t"):
        return "datafly" if sniff_hierarchy_delimiter(text) == "," else "arx"
    if filename.lower().endswith(".json"):
        return "amnesia-json"
    return "arx"


# ---- reading --------------------------------------------------------------------------------------
def read_hierarchy_text(
    text: str,
    name: str,
    filename: str = "",
    fmt: str | None = None,
    on_conflict: str = "error",
) -> Hierarchy:
    """Parse a hierarchy file's text in ``fmt`` (detected when None)."""
    where = filename or f"hierarchy of {name!r}"
    if "\x00" in text:
        raise HierarchyError(f"{where}: binary content, not a text hierarchy file")
    text = text.lstrip("\ufeff")
    fmt = fmt or detect_format(text, filename)
    if fmt == "arx":
        delimiter = "\t" if sniff_hierarchy_delimiter(text) == "\t" else ";"
        return parse_hierarchy(text, name, where, delimiter, on_conflict)
    if fmt == "datafly":
        return parse_hierarchy(text, name, where, ",", on_conflict)
    if fmt == "amnesia-text":
        return _read_amnesia_text(text, name, where, on_conflict)
    if fmt == "amnesia-json":
        return _read_amnesia_json(text, name, where, on_conflict)
    raise HierarchyError(f"unknown hierarchy format {fmt!r}; choose one of {', '.join(FORMATS)}")


def _range_label(text: str, where: str) -> str:
    """Amnesia range node 'lo,hi' -> '[lo-hi]' (bounds included, as Amnesia reads them)."""
    lo, sep, hi = text.partition(",")
    try:
        float(lo), float(hi)
    except ValueError:
        raise HierarchyError(f"{where}: range {text!r} is not written lo,hi") from None
    if not sep:
        raise HierarchyError(f"{where}: range {text!r} is not written lo,hi")
    if lo.startswith("-") or hi.startswith("-"):
        return f"[{lo}, {hi}]"
    return f"[{lo}-{hi}]"


def _read_amnesia_text(text: str, name: str, where: str, on_conflict: str) -> Hierarchy:
    lines = text.splitlines()
    header: dict[str, str] = {}
    blocks: list[list[tuple[int, str, list[str]]]] = [[]]
    hier_type = None
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            if blocks[-1]:
                blocks.append([])
            continue
        tokens = line.split()
        if hier_type is None:
            if line.lower() not in ("distinct", "range"):
                raise HierarchyError(f"{where}, line {lineno}: expected 'distinct' or 'range' as the first line, "
                                     f"got {line[:40]!r}")
            hier_type = line.lower()
            continue
        if len(tokens) >= 2 and tokens[1] == "has":
            if len(tokens) == 2:
                raise HierarchyError(f"{where}, line {lineno}: {tokens[0]!r} has no children listed")
            parent, children = tokens[0], tokens[2:]
            if hier_type == "range":
                here = f"{where}, line {lineno}"
                parent = _range_label(parent, here)
                children = [_range_label(c, here) for c in children]
            blocks[-1].append((lineno, parent, children))
        elif tokens[0].lower() in _HEADER_KEYS and not any(b for b in blocks):
            header[tokens[0].lower()] = line[len(tokens[0]):].strip()
        else:
            raise HierarchyError(f"{where}, line {lineno}: expected 'PARENT has CHILD ...' or a header line "
                                 f"(name, type, height), got {line[:60]!r}")
    blocks = [b for b in blocks if b]
    if hier_type is None or not blocks:
        raise HierarchyError(f"{where}: the hierarchy is empty")
    height = _height(header.get("height"), where)
    # blank-line separated levels, one block per level: labels may then recur on several levels
    by_level = len(blocks) > 1 and height in (len(blocks), len(blocks) + 1)
    edges = []
    for j, block in enumerate(blocks):
        for lineno, parent, children in block:
            level = j if by_level else None
            for child in children:
                edges.append(((level, child), (None if level is None else level + 1, parent), lineno, f"line {lineno}"))
    h = _from_edges(edges, header.get("name") or name, where, on_conflict)
    if hier_type == "range":
        h.notes.append("Amnesia range hierarchy: its leaves are ranges, not data values")
    return h


def _height(value: object, where: str) -> int | None:
    if value is None:
        return None
    try:
        return int(str(value))
    except ValueError:
        raise HierarchyError(f"{where}: height {value!r} is not a whole number") from None


def _read_amnesia_json(text: str, name: str, where: str, on_conflict: str) -> Hierarchy:
    try:
        # Amnesia JSON is 3 deep; the decoder recurses per level, so a deeper file is refused unparsed
        doc = json_limits.loads(text, where)
    except json_limits.JsonLimitError as exc:
        raise HierarchyError(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise HierarchyError(f"{where}, line {exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(doc, dict):
        raise HierarchyError(f"{where}, line 1: expected an Amnesia JSON object with hierType and level1..levelN "
                             f"maps; got {_json_kind(doc)}")
    hier_type = str(doc.get("hierType", "distinct")).lower()
    if hier_type not in ("distinct", "range"):
        raise HierarchyError(f"{where}: hierType must be distinct or range, got {doc.get('hierType')!r}")
    levels = sorted((int(k[5:]), k) for k in doc if k.startswith("level") and k[5:].isdigit())
    if not levels:
        raise HierarchyError(f"{where}: no level1..levelN maps")
    numbers = [n for n, _ in levels]
    if numbers != list(range(1, len(numbers) + 1)):
        raise HierarchyError(f"{where}: levels must be level1..level{len(numbers)} without gaps, got "
                             f"{', '.join(k for _, k in levels)}")
    n = len(levels)
    edges = []
    for i, key in levels:
        block = doc[key]
        if not isinstance(block, dict):
            raise HierarchyError(f"{where}: {key} must map each parent to a list of children")
        child_level = n - i  # level1 holds the root's children, levelN the leaves
        for parent, children in block.items():
            if not isinstance(children, list) or not children:
                raise HierarchyError(f"{where}: {key}, parent {parent!r}: children must be a non-empty list")
            for child in children:
                if not isinstance(child, (str, int, float)) or isinstance(child, bool) or str(child) == "":
                    raise HierarchyError(f"{where}: {key}, parent {parent!r}: child {child!r} is not a label")
                c, p = str(child), str(parent)
                if hier_type == "range":
                    c, p = _range_label(c, f"{where}: {key}"), _range_label(p, f"{where}: {key}")
                edges.append(((child_level, c), (child_level + 1, p), i, f"{key}, parent {parent!r}"))
    return _from_edges(edges, str(doc.get("name") or name), where, on_conflict)


def _json_kind(doc: object) -> str:
    """What a JSON document is, in words: 'a list of numbers', 'a string', ..."""
    def one(x: object) -> str:
        if isinstance(x, bool):
            return "true/false"
        if isinstance(x, (int, float)):
            return "number"
        return {str: "string", list: "list", dict: "object", type(None): "null"}[type(x)]

    if isinstance(doc, list):
        if not doc:
            return "an empty list"
        kinds = sorted({one(x) for x in doc})
        return f"a list of {kinds[0]}s" if len(kinds) == 1 else f"a list of {', '.join(k + 's' for k in kinds)}"
    kind = one(doc)
    return "null" if kind == "null" else f"a{'n' if kind[0] in 'aeiou' else ''} {kind}"


def _from_edges(edges: list, name: str, where: str, on_conflict: str) -> Hierarchy:
    """Rows (one per leaf path) from child -> parent edges keyed by (level or None, label)."""
    parents: dict = defaultdict(list)
    first_line: dict = {}
    edge_line: dict = {}  # (child label, parent label) -> first line of that link
    for child, parent, lineno, place in edges:
        if child[1] == "" or parent[1] == "":
            raise HierarchyError(f"{where}, {place}: an empty label")
        edge_line.setdefault((child[1], parent[1]), lineno)
        if parent not in parents[child]:
            parents[child].append(parent)
        first_line.setdefault(child, lineno)
        first_line.setdefault(parent, lineno)
    children_of = {p for ps in parents.values() for p in ps}
    roots = [k for k in children_of if k not in parents]
    if len(roots) != 1:
        shown = ", ".join(repr(r[1]) for r in sorted(roots, key=lambda r: first_line[r])[:5])
        raise HierarchyError(f"{where}: {len(roots)} top nodes ({shown}); a hierarchy has exactly one root"
                             if roots else f"{where}: no root: the parent links form a cycle")
    leaves = sorted((k for k in parents if k not in children_of), key=lambda k: first_line[k])
    if not leaves:
        raise HierarchyError(f"{where}: no leaves")
    rows, numbers = [], []
    for leaf in leaves:
        for path in _paths_up(leaf, parents, where):
            rows.append([k[1] for k in path])
            numbers.append(first_line[leaf])
    width = max(len(r) for r in rows)
    # a shallow leaf repeats its label on the missing levels (ARX padding), so every row has one width
    rows = [[r[0]] * (width - len(r)) + r for r in rows]
    try:
        return Hierarchy.from_rows(rows, name, where, on_conflict, numbers)
    except HierarchyError as exc:
        found = getattr(exc, "conflicts", None)
        if not found or not any(c.level for c in found):
            raise
        # a label above the leaves with two parents: name the lines of its parent links, not its leaves'
        leaves_c = [c for c in found if not c.level]
        inner = [replace(c, lines=tuple(edge_line.get((c.value, p[0]), n) for p, n in zip(c.paths, c.lines)))
                 for c in found if c.level]
        raise conflict_error(where, leaves_c, inner) from None


def _paths_up(leaf: tuple, parents: dict, where: str) -> list[list[tuple]]:
    out, stack = [], [[leaf]]
    while stack:
        path = stack.pop()
        ups = parents.get(path[-1])
        if not ups:
            out.append(path)
            continue
        for p in reversed(ups):
            if p in path:
                raise HierarchyError(f"{where}: {p[1]!r} is its own ancestor (the parent links form a cycle)")
            stack.append(path + [p])
        if len(out) + len(stack) > 10_000:
            raise HierarchyError(f"{where}: value {leaf[1]!r} has too many different paths to the root")
    return out


# ---- writing --------------------------------------------------------------------------------------
def write_hierarchy(h: Hierarchy, fmt: str) -> str:
    """The hierarchy in ``fmt``; a HierarchyError says why when the format cannot hold a label."""
    if fmt not in FORMATS:
        raise HierarchyError(f"unknown hierarchy format {fmt!r}; choose one of {', '.join(FORMATS)}")
    rows = h.to_rows()
    for lv in range(h.level_count):
        for label in h.labels[lv]:
            if str(label) == "":
                raise HierarchyError(f"cannot write hierarchy {h.name!r}: an empty label at level {lv}")
    if fmt in ("arx", "datafly"):
        text = h.to_csv(";" if fmt == "arx" else ",")
        if any("\n" in c or "\r" in c for r in rows for c in r):
            raise HierarchyError(f"cannot write hierarchy {h.name!r} as {fmt}: a label holds a line break")
        return text
    blocks = _parent_blocks(h)  # level 1 .. H: [(parent, [children])]
    type_ = AMNESIA_TYPES[infer_type(pd.Series(h.leaves, dtype=object))]
    # every node an inclusive range "[lo-hi]" (as read from an Amnesia range file): write it as range
    found = {str(x): _range_text(str(x)) for lv in range(h.level_count) for x in h.labels[lv]}
    hier_type = "range" if all(found.values()) else "distinct"
    if hier_type == "range":
        ranges = {label: text for label, text in found.items() if text is not None}
        type_ = "double" if any("." in r for r in ranges.values()) else "int"
        blocks = [[(ranges[p], [ranges[c] for c in cs]) for p, cs in block] for block in blocks]
    if fmt == "amnesia-json":
        doc: dict = {"hierType": hier_type, "name": h.name, "type": type_, "height": h.height}
        for i, block in enumerate(reversed(blocks), 1):
            doc[f"level{i}"] = {parent: children for parent, children in block}
        return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"
    for lv in range(h.level_count):
        for label in h.labels[lv]:
            if any(ch.isspace() for ch in str(label)):
                raise HierarchyError(
                    f"cannot write hierarchy {h.name!r} as Amnesia text: the label {str(label)!r} (level {lv}) "
                    f"holds a space, which that format uses to separate labels; use Amnesia JSON or ARX"
                )
    if any(ch.isspace() for ch in h.name):
        name = "_".join(h.name.split())
    else:
        name = h.name
    out = [hier_type, f"name {name}", f"type {type_}", f"height {h.height}", ""]
    for block in blocks:
        out.extend(f"{parent} has {' '.join(children)}" for parent, children in block)
        out.append("")
    return "\n".join(out)


_RANGE = re.compile(r"\[(-?\d+(?:\.\d+)?)(?:-|, )(-?\d+(?:\.\d+)?)\]")


def _range_text(label: str) -> str | None:
    """'[0-9]' or '[-5, 5]' (the reader's form of Amnesia ranges) -> '0,9'; None for other labels."""
    m = _RANGE.fullmatch(label)
    return f"{m.group(1)},{m.group(2)}" if m else None


def _parent_blocks(h: Hierarchy) -> list[list[tuple[str, list[str]]]]:
    """Per level 1..H, each label with its distinct children one level down, in leaf order."""
    blocks = []
    for lv in range(1, h.level_count):
        kids: dict[str, list[str]] = {}
        parent_of: dict[str, str] = {}
        below, here = h.labels[lv - 1][h.maps[lv - 1]], h.labels[lv][h.maps[lv]]
        for child, parent in zip(below, here):
            child, parent = str(child), str(parent)
            known = parent_of.get(child)
            if known is None:
                parent_of[child] = parent
                kids.setdefault(parent, []).append(child)
            elif known != parent:
                # Amnesia stores nodes by label: one label with two parents cannot be written
                raise HierarchyError(
                    f"cannot write hierarchy {h.name!r} as Amnesia: the label {child!r} at level {lv - 1} has "
                    f"two parents ({known!r} and {parent!r}), and that format holds only trees; use ARX"
                )
        blocks.append(list(kids.items()))
    return blocks


# ---- reading a file -------------------------------------------------------------------------------
def read_hierarchy(
    path: str | Path, name: str | None = None, delimiter: str | None = None, on_conflict: str = "error",
    max_label_chars: int = MAX_LABEL_CHARS, max_levels: int = MAX_LEVELS,
) -> Hierarchy:
    """A hierarchy file in any of the formats (read_hierarchy_text), or with ``delimiter`` the one-row-per-leaf
    layout; within the size limits."""
    path = Path(path)
    text = decode_hierarchy(path.read_bytes(), path.name)
    if delimiter is None:
        h = read_hierarchy_text(text, name or path.stem, path.name, on_conflict=on_conflict)
    else:
        h = parse_hierarchy(text, name or path.stem, path.name, delimiter, on_conflict)
    check_size(h, path.name, max_label_chars, max_levels)
    return h
