"""The record/centroid distance of seed 003 §3.2.3, vectorized, and an index over centroids.

- numeric QI: |v1 - v2| / (max - min of the column);
- categorical QI: 0 for equal values, else height(LCA(v1, v2)) / height(tree);
- record to cluster: the sum over QIs of the distance to the cluster's centroid, whose value is the
  mean for numeric QIs and the lowest common ancestor of the cluster's values for categorical ones.

A centroid's categorical value is kept as (level of the LCA, one leaf under it): the LCA of a leaf v
and that node is at level max(level, LCA level of v and the leaf).

With attribute weights (search/attribute_weights.py) each QI's term is multiplied by its factor
w_j * q / sum(w): the numeric columns are stored scaled by it and the tree heights divided by it (a factor 0:
an infinite height, a term 0), so every distance computed from ``X`` and ``H`` is the weighted sum. The
embedding for the centroid index stays in [0, 1] (the scaling undone). Without weights nothing is scaled.
"""

from __future__ import annotations

import numpy as np

from .recoding import QISpace


class Encoded:
    """Items (records or distinct tuples) given by their leaf codes, ready for distances."""

    def __init__(self, space: QISpace, codes: np.ndarray, factors: np.ndarray | None = None):
        self.space = space
        self.factors = factors  # per QI, None: unweighted
        self.num = [j for j in range(space.q) if space.numeric[j]]
        self.cat = [j for j in range(space.q) if not space.numeric[j]]
        self.n = len(codes)
        cols = []
        self.lo = []
        for j in self.num:
            v = space.sortable_values(j)[codes[:, j]]  # a missing value: one span above the maximum
            lo = float(v.min()) if len(v) else 0.0
            self.lo.append(lo)
            cols.append((v - lo) / (space.span[j] or 1.0))
        self.X = np.stack(cols, axis=1) if cols else np.zeros((self.n, 0))
        self.L = codes[:, self.cat].astype(np.int64) if self.cat else np.zeros((self.n, 0), dtype=np.int64)
        self.H = np.array([max(space.heights[j], 1) for j in self.cat], dtype=float)
        # the numeric columns' factors, to undo the scaling in the embedding (a factor 0 leaves a column of 0s)
        self.x_scale: np.ndarray | None = None
        if factors is not None:
            f_num = np.array([factors[j] for j in self.num], dtype=float)
            self.X = self.X * f_num
            self.x_scale = np.where(f_num > 0, f_num, 1.0)
            with np.errstate(divide="ignore"):
                self.H = self.H / np.array([factors[j] for j in self.cat], dtype=float)
        self.anc = [space.anc[j] for j in self.cat]
        # LCA level of every pair of leaves, when the hierarchy is small enough for a table
        self.lca_table = []
        for j in self.cat:
            anc = space.anc[j]
            if len(anc) <= 2048:
                self.lca_table.append(np.argmax(anc[:, None, :] == anc[None, :, :], axis=-1).astype(np.int16))
            else:
                self.lca_table.append(None)
        # position of each leaf in a depth-first order of its hierarchy (siblings adjacent), in [0, 1]
        self.pos = []
        for j in self.cat:
            anc = space.anc[j]
            order = np.lexsort(tuple(anc[:, lv] for lv in range(anc.shape[1])))
            p = np.empty(len(order))
            p[order] = np.arange(len(order)) / max(len(order) - 1, 1)
            self.pos.append(p)

    def lca(self, t: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        table = self.lca_table[t]
        if table is not None:
            return table[a, b]
        anc = self.anc[t]
        return np.argmax(anc[a] == anc[b], axis=-1)

    def lca_rows(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The LCA level of every categorical QI at once: ``a`` (n, c) leaf codes against ``b`` (c,) or
        (n, c); an (n, c) array (one lookup in the tables laid end to end when every QI has one)."""
        if not self.cat:
            return np.zeros((len(a), 0), dtype=np.int64)
        if all(t is not None for t in self.lca_table):
            flat = getattr(self, "_lca_flat", None)
            if flat is None:
                sizes = np.array([len(t) for t in self.lca_table], dtype=np.int64)
                offsets = np.concatenate([[0], np.cumsum(sizes * sizes)[:-1]]).astype(np.int64)
                flat = (np.concatenate([t.reshape(-1) for t in self.lca_table]), sizes, offsets)
                self._lca_flat = flat
            table, sizes, offsets = flat
            return table[a * sizes + (b + offsets)]
        return np.stack([self.lca(t, a[:, t], b[..., t]) for t in range(len(self.cat))], axis=1)

    def unscaled(self, x: np.ndarray) -> np.ndarray:
        """Numeric values back in [0, 1] (the weights' scaling undone), for the embedding."""
        return x if self.x_scale is None else x / self.x_scale

    def embed_items(self, items: np.ndarray) -> np.ndarray:
        parts = [self.unscaled(self.X[items])] + [self.pos[t][self.L[items, t]][:, None] for t in range(len(self.cat))]
        return np.concatenate(parts, axis=1)

    def distance_pairs(self, items: np.ndarray, cent: "Centroids", cl: np.ndarray) -> np.ndarray:
        """Distance of item i to centroid c for aligned (broadcast) arrays items, cl."""
        d = np.zeros(np.broadcast_shapes(items.shape, cl.shape))
        if self.num:
            d += np.abs(self.X[items] - cent.mean()[cl]).sum(axis=-1)
        for t in range(len(self.cat)):
            lv = np.maximum(cent.level[cl, t], self.lca(t, self.L[items, t], cent.rep[cl, t]))
            d += lv / self.H[t]
        return d

    def distance_to_item(self, items: np.ndarray, other: int) -> np.ndarray:
        d = np.abs(self.X[items] - self.X[other]).sum(axis=1) if self.num else np.zeros(len(items))
        for t in range(len(self.cat)):
            d += self.lca(t, self.L[items, t], self.L[other, t]) / self.H[t]
        return d


class Centroids:
    """K centroids: numeric sums and counts, categorical (LCA level, a leaf under it)."""

    def __init__(self, enc: Encoded, items: np.ndarray):
        self.enc = enc
        self.sums = enc.X[items].copy()
        self.count = np.ones(len(items))
        self.level = np.zeros((len(items), len(enc.cat)), dtype=np.int64)
        self.rep = enc.L[items].copy()

    def __len__(self) -> int:
        return len(self.count)

    def mean(self) -> np.ndarray:
        return self.sums / np.maximum(self.count, 1)[:, None]

    def add(self, cl: np.ndarray, items: np.ndarray, sign: int = 1) -> None:
        enc = self.enc
        np.add.at(self.count, cl, sign)
        if enc.num:
            np.add.at(self.sums, cl, sign * enc.X[items])
        if sign > 0:
            for t in range(len(enc.cat)):
                np.maximum.at(self.level[:, t], cl, enc.lca(t, enc.L[items, t], self.rep[cl, t]))

    def rebuild(self, cl: np.ndarray, items: np.ndarray, which: np.ndarray) -> None:
        """Recompute the centroids ``which`` from scratch from their members (items with cluster cl)."""
        enc = self.enc
        sel = np.isin(cl, which)
        cl, items = cl[sel], items[sel]
        self.count[which] = 0
        self.sums[which] = 0
        self.level[which] = 0
        # bincount adds the members in row order from 0.0, as np.add.at did (the same sums, bit for bit),
        # and is many times faster on a whole table
        n = len(self.count)
        self.count[which] = np.bincount(cl, minlength=n)[which]
        for j in range(len(enc.num)):
            self.sums[which, j] = np.bincount(cl, weights=enc.X[items, j], minlength=n)[which]
        first = np.full(n, -1, dtype=np.int64)
        first[cl[::-1]] = items[::-1]
        has = first >= 0
        self.rep[has] = enc.L[first[has]]
        for t in range(len(enc.cat)):
            # the highest LCA level per cluster: levels assigned in increasing order, the last (highest) stays
            lv = enc.lca(t, enc.L[items, t], self.rep[cl, t])
            col = np.zeros(n, dtype=np.int64)
            for v in range(1, int(lv.max(initial=0)) + 1):
                col[cl[lv == v]] = v
            self.level[which, t] = col[which]

    def embed(self, which: np.ndarray) -> np.ndarray:
        enc = self.enc
        parts = [enc.unscaled(self.mean()[which])] + [enc.pos[t][self.rep[which, t]][:, None] for t in range(len(enc.cat))]
        return np.concatenate(parts, axis=1)


def zkey(points: np.ndarray, shift: float = 0.0) -> np.ndarray:
    """Z-order (Morton) key of points in [0, 1]^d, as int64."""
    n, d = points.shape
    if d == 0:
        return np.zeros(n, dtype=np.int64)
    bits = max(1, min(16, 62 // d))
    scale = (1 << bits) - 1
    q = np.clip(((points + shift) / (1 + shift)) * scale, 0, scale).astype(np.int64)
    key = np.zeros(n, dtype=np.int64)
    for b in range(bits - 1, -1, -1):
        for j in range(d):
            key = (key << 1) | ((q[:, j] >> b) & 1)
    return key


class CentroidIndex:
    """Candidates for the nearest centroid: neighbours along two shifted Z-order curves.

    A space-filling curve over the encoded centroids (numeric QIs scaled to [0, 1], categories at
    their depth-first position in the hierarchy) keeps similar centroids close in one sorted array,
    so a record is compared with ``2 x 2 x window`` centroids instead of all of them; the exact
    distance then picks among those.
    """

    SHIFTS = (0.0, 1 / 3)

    def __init__(self, cent: Centroids, which: np.ndarray, window: int = 16):
        self.which = which
        self.window = window
        pts = cent.embed(which)
        self.keys, self.orders = [], []
        for s in self.SHIFTS:
            key = zkey(pts, s)
            order = np.argsort(key, kind="stable")
            self.keys.append(key[order])
            self.orders.append(which[order])

    def candidates(self, points: np.ndarray) -> np.ndarray:
        out = []
        w = self.window
        for s, keys, order in zip(self.SHIFTS, self.keys, self.orders):
            pos = np.searchsorted(keys, zkey(points, s))
            offs = np.arange(-w, w)
            idx = np.clip(pos[:, None] + offs[None, :], 0, len(keys) - 1)
            out.append(order[idx])
        return np.concatenate(out, axis=1)


def nearest(enc: Encoded, cent: Centroids, items: np.ndarray, allowed: np.ndarray | None = None,
            exhaustive: int = 256, window: int = 16, batch: int = 4096,
            index: CentroidIndex | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(nearest allowed centroid, its distance) for each item; exact below ``exhaustive`` centroids."""
    which = np.arange(len(cent)) if allowed is None else np.flatnonzero(allowed)
    best = np.full(len(items), -1, dtype=np.int64)
    dist = np.full(len(items), np.inf)
    if not len(which) or not len(items):
        return best, dist
    if index is None and len(which) > exhaustive:
        index = CentroidIndex(cent, which, window)
    step = batch if index is not None else max(1, (1 << 20) // len(which))
    for s in range(0, len(items), step):
        it = items[s:s + step]
        if index is None:
            cand = np.broadcast_to(which, (len(it), len(which)))
        else:
            cand = index.candidates(enc.embed_items(it))
        d = enc.distance_pairs(it[:, None], cent, cand)
        a = np.argmin(d, axis=1)
        best[s:s + step] = cand[np.arange(len(it)), a]
        dist[s:s + step] = d[np.arange(len(it)), a]
    return best, dist
