"""Editing sessions of the visual hierarchy editor: the edited tree kept server-side, with undo/redo.

A session is a folder ``MEDIA_ROOT/hierarchy-drafts/<user>-<hierarchy>-<token>/`` holding one JSON
file per state of the tree (``HierarchyTree.to_dict()``, nested ``{"label", "children", ...}``) and
``state.json`` saying which states exist (``base``..``top``) and which one is current (``pos``).
An edit writes state ``pos + 1`` and drops the redo states above it; undo/redo only move ``pos``.
The tree of a city file (~18,000 leaves) is ~1 MB of JSON, so only MAX_STATES states are kept and
the browser never receives the whole tree: it asks for one node's children at a time.

Drafts are written only on change: opening the editor again on an unchanged hierarchy reuses the
user's untouched session of it (``find_untouched``) instead of writing another copy. Each user has a
cap on sessions and on their bytes (settings HIERARCHY_DRAFTS_PER_USER, HIERARCHY_DRAFT_BYTES_PER_USER):
a new session or state evicts the user's least recently used other sessions, those without unsaved
edits first; a tree that alone exceeds the bytes cap is refused (DraftTooLarge).

The current state of a session is also kept in the editor's cache (hierarchy_editor.caching, scoped to the
user), so that paging through children does not re-read and decode a megabyte of JSON per request.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import time
from pathlib import Path

from django.conf import settings

from anonymizer_app.services import storage

from . import caching

DRAFT_DIR = storage.DRAFTS  # erasure finds a user's and a hierarchy's sessions by this folder and naming
MAX_AGE = 24 * 3600  # seconds an untouched editing session is kept
MAX_STATES = 40  # undo depth
DRAFTS_PER_USER = 10  # defaults of the per-user caps (settings override them)
DRAFT_BYTES_PER_USER = 100 * 1024 * 1024
TOKEN_RE = re.compile(r"^[0-9a-f]{32}$")


class DraftMissing(LookupError):
    """The session does not exist (never did, expired, or belongs to someone else)."""


class DraftTooLarge(ValueError):
    """A tree larger than the user's whole draft space; the message says by how much."""


def per_user_caps() -> tuple[int, int]:
    """(sessions, bytes) a user may keep."""
    return (int(getattr(settings, "HIERARCHY_DRAFTS_PER_USER", DRAFTS_PER_USER)),
            int(getattr(settings, "HIERARCHY_DRAFT_BYTES_PER_USER", DRAFT_BYTES_PER_USER)))


def _size(folder: Path) -> int:
    try:
        return sum(f.stat().st_size for f in folder.iterdir())
    except OSError:
        return 0


def _sessions(user_id: int) -> list[tuple[float, bool, int, Path]]:
    """The user's sessions as (last use, has unsaved edits, bytes, folder), least recently used first."""
    out: list[tuple[float, bool, int, Path]] = []
    root = _root()
    if not root.is_dir():
        return out
    for folder in root.glob(f"{int(user_id)}-*-*"):
        try:
            state_file = folder / "state.json"
            state = json.loads(state_file.read_text(encoding="utf-8"))
            used = state_file.stat().st_mtime
        except (OSError, ValueError):
            state, used = {}, 0.0
        unsaved = state.get("pos", 0) != state.get("saved", 0)
        out.append((used, unsaved, _size(folder), folder))
    return sorted(out, key=lambda s: (s[0], str(s[3])))


def make_room(user_id: int, new_bytes: int, keep: Path | None = None) -> None:
    """Evict the user's sessions (not ``keep``) until one more session of ``new_bytes`` fits the caps:
    untouched or saved ones first, then the least recently used; DraftTooLarge when it cannot fit."""
    max_sessions, max_bytes = per_user_caps()
    if new_bytes > max_bytes:
        raise DraftTooLarge(f"the edited tree takes {new_bytes:,} bytes, more than the {max_bytes:,} bytes an "
                            f"account may keep in editing sessions (HIERARCHY_DRAFT_BYTES_PER_USER)")
    others = [s for s in _sessions(user_id) if s[3] != keep]
    kept_bytes = _size(keep) if keep is not None and keep.is_dir() else 0
    # evict saved/untouched sessions first, each group least recently used first
    order = sorted(others, key=lambda s: (s[1], s[0]))
    count = len(others) + 1  # the new session, or the kept one that grows
    total = sum(s[2] for s in others) + kept_bytes + new_bytes
    for _used, _unsaved, size, folder in order:
        if count <= max_sessions and total <= max_bytes:
            break
        _forget(folder)
        shutil.rmtree(folder, ignore_errors=True)
        count -= 1
        total -= size


def _state_key(path: Path) -> str:
    """The cache key of a state's file, scoped to the session's user (the folder's first part). The file's
    inode, modification time and size are part of it: a state rewritten after an undo (by any process) is a
    new key."""
    stat = path.stat()  # OSError when the state is gone
    folder = path.parent.name
    return caching.user_key(int(folder.split("-")[0]), "draft", folder, path.name, stat.st_ino,
                           stat.st_mtime_ns, stat.st_size)


def _forget(folder: Path) -> None:
    """Drop the cached states of a session that is being removed."""
    keys = []
    for path in folder.glob("*.json"):
        try:
            keys.append(_state_key(path))
        except OSError:
            pass
    if keys:
        caching.forget(keys)


def _json_bytes(data) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _root() -> Path:
    return Path(settings.MEDIA_ROOT) / DRAFT_DIR


def _folder(user_id: int, hierarchy_id: int, token: str) -> Path:
    if not TOKEN_RE.match(token or ""):
        raise DraftMissing(token)
    return _root() / f"{int(user_id)}-{int(hierarchy_id)}-{token}"


def _cleanup() -> None:
    cutoff = time.time() - MAX_AGE
    root = _root()
    if not root.is_dir():
        return
    for folder in root.iterdir():
        try:
            state = folder / "state.json"
            if (state.stat().st_mtime if state.exists() else folder.stat().st_mtime) < cutoff:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            pass


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _write_json(path: Path, data, encoded: bytes | None = None) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(_json_bytes(data) if encoded is None else encoded)
    tmp.replace(path)


class Draft:
    """One editing session. ``tree`` is the current state's dict; ``meta`` extra session data."""

    def __init__(self, folder: Path, state: dict):
        self.folder = folder
        self.state = state
        self._current: tuple[int, dict] | None = None  # (pos, tree) read by this request

    # ---- creation and lookup -------------------------------------------------------------------
    @classmethod
    def create(cls, user_id: int, hierarchy_id: int, tree: dict, meta: dict | None = None,
               digest: str = "") -> "Draft":
        """A new session; ``digest`` identifies the hierarchy's stored text it was opened on."""
        _cleanup()
        encoded = _json_bytes(tree)
        make_room(user_id, len(encoded))
        token = secrets.token_hex(16)
        folder = _folder(user_id, hierarchy_id, token)
        folder.mkdir(parents=True)
        draft = cls(folder, {"base": 0, "pos": 0, "top": 0, "meta": meta or {}, "token": token, "digest": digest})
        _write_json(folder / "0.json", tree, encoded)
        draft._save_state()
        return draft

    @classmethod
    def find_untouched(cls, user_id: int, hierarchy_id: int, digest: str, meta: dict) -> "Draft | None":
        """The user's session on this hierarchy's unchanged text with no edit and the same ``meta``: opening
        the editor again goes back to it instead of writing another copy of the tree."""
        root = _root()
        if not digest or not root.is_dir():
            return None
        for folder in sorted(root.glob(f"{int(user_id)}-{int(hierarchy_id)}-*")):
            try:
                state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if state.get("digest") == digest and state.get("top") == 0 and state.get("meta") == meta:
                try:
                    os.utime(folder / "state.json")  # in use again: not the next to expire or be evicted
                except OSError:
                    continue
                return cls(folder, state)
        return None

    @classmethod
    def load(cls, user_id: int, hierarchy_id: int, token: str) -> "Draft":
        folder = _folder(user_id, hierarchy_id, token)
        try:
            state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise DraftMissing(token) from None
        return cls(folder, state)

    @property
    def token(self) -> str:
        return self.state["token"]

    @property
    def meta(self) -> dict:
        return self.state.setdefault("meta", {})

    def _save_state(self) -> None:
        _write_json(self.folder / "state.json", self.state)

    # ---- the current tree ----------------------------------------------------------------------
    @property
    def tree(self) -> dict:
        pos = self.state["pos"]
        if self._current is None or self._current[0] != pos:
            path = self.folder / f"{pos}.json"
            try:
                self._current = (pos, caching.remember(_state_key(path), lambda: _read_json(path)))
            except (OSError, ValueError):
                raise DraftMissing(self.token) from None
        return self._current[1]

    def push(self, tree: dict) -> None:
        """A new state after an edit: the redo states are dropped, the oldest beyond MAX_STATES too."""
        pos = self.state["pos"] + 1
        encoded = _json_bytes(tree)
        make_room(int(self.folder.name.split("-")[0]), len(encoded), keep=self.folder)
        for n in range(pos, self.state["top"] + 1):
            (self.folder / f"{n}.json").unlink(missing_ok=True)
        _write_json(self.folder / f"{pos}.json", tree, encoded)
        caching.put(_state_key(self.folder / f"{pos}.json"), tree)
        self._current = (pos, tree)
        self.state["pos"] = self.state["top"] = pos
        _, max_bytes = per_user_caps()
        others = sum(size for _, _, size, folder in _sessions(int(self.folder.name.split("-")[0]))
                     if folder != self.folder)
        # the undo depth shrinks before the user's bytes cap is passed (the current state always stays)
        while self.state["top"] - self.state["base"] + 1 > MAX_STATES or (
                self.state["base"] < pos and others + _size(self.folder) > max_bytes):
            (self.folder / f"{self.state['base']}.json").unlink(missing_ok=True)
            self.state["base"] += 1
        self._save_state()

    @property
    def can_undo(self) -> bool:
        return self.state["pos"] > self.state["base"]

    @property
    def can_redo(self) -> bool:
        return self.state["pos"] < self.state["top"]

    @property
    def edits(self) -> int:
        """Edits since the session started or was last saved (undone ones excluded)."""
        return self.state["pos"] - self.state.get("saved", 0)

    def undo(self) -> bool:
        if not self.can_undo:
            return False
        self.state["pos"] -= 1
        self._save_state()
        return True

    def redo(self) -> bool:
        if not self.can_redo:
            return False
        self.state["pos"] += 1
        self._save_state()
        return True

    def mark_saved(self) -> None:
        self.state["saved"] = self.state["pos"]
        self._save_state()


# ---- reading a tree dict -------------------------------------------------------------------------
def find(tree: dict, path: list[str]) -> dict | None:
    """The node at ``path`` (labels from the root's child down), or None."""
    node = tree
    for label in path:
        for child in node.get("children") or ():
            if child["label"] == label:
                node = child
                break
        else:
            return None
    return node


def leaf_values(node: dict):
    """The labels of the leaves under a node (the node itself when it has no children)."""
    stack = [node]
    while stack:
        n = stack.pop()
        children = n.get("children") or ()
        if children:
            stack.extend(reversed(children))
        else:
            yield n["label"]


def record_counts(tree: dict, counts: dict[str, int]) -> dict[int, int]:
    """id(node) -> number of data records under it (leaves matched by label)."""
    out: dict[int, int] = {}

    def walk(node: dict) -> int:
        children = node.get("children") or ()
        total = sum(walk(c) for c in children) if children else int(counts.get(node["label"], 0))
        out[id(node)] = total
        return total

    walk(tree)  # hierarchies are a few levels deep: recursion is fine
    return out


def leaf_count(node: dict) -> int:
    """Number of leaves under a node; uses the dict's ``leaves`` field when it is a count."""
    leaves = node.get("leaves")
    if isinstance(leaves, int):
        return leaves
    if isinstance(leaves, list):
        return len(leaves)
    return sum(1 for _ in leaf_values(node))


def search(tree: dict, query: str, limit: int = 50) -> tuple[list[list[str]], int]:
    """Paths of nodes whose label contains ``query`` (case-insensitive), breadth first; and the total."""
    q = query.casefold()
    found: list[list[str]] = []
    total = 0
    queue: list[tuple[dict, list[str]]] = [(c, [c["label"]]) for c in tree.get("children") or ()]
    i = 0
    while i < len(queue):
        node, path = queue[i]
        i += 1
        if q in str(node["label"]).casefold():
            total += 1
            if len(found) < limit:
                found.append(path)
        queue.extend((c, path + [c["label"]]) for c in node.get("children") or ())
    return found, total
