"""Disk-based hybrid clustering for data larger than memory (seed 003 chapter 3, Algorithm 3).

1. store: the QI leaf codes of every record go to a file on disk (temporary), in batches, each with
   the Z-order key of the record (numeric QIs scaled to [0, 1], categories at their depth-first
   position in the hierarchy);
2. buckets: the records are read back in key order (an external sort: partition files, each
   sorted in memory), one bucket of at most ``B`` records at a time,
   where B follows from ``memory_mb`` (similar records share a bucket); per bucket, in memory:
   - initialiseClusters: records of a tuple seen at least k times in the bucket form clusters of
     identical records; floor(n/k) random other records seed the clusters;
   - fillClusters (OKA step): every record joins the cluster with the nearest centroid (mean for
     numbers, LCA for categories), found through an index over the centroids (two Z-order curves)
     instead of a comparison with every centroid;
   - removeSmallClusters (k-member step): records of clusters below k go to the nearest cluster of
     at least k; then clusters above 2k-1 are split (farthest pair, halves) until k..2k-1;
   - the cluster of every record (and its output labels, as ids) is written back to disk, in files
     by row range;
3. generalization per cluster (local recoding): ranges [lo-hi] for numbers, LCAs for categories.

Attribute weights (the run's ``weights`` option, issue 30) weigh the record/centroid distance of steps
fillClusters, removeSmallClusters and the splits as in k-member and OKA (search/attribute_weights.py); the
Z-order key that forms the buckets is a locality index, not a loss, and stays unweighted (as OKA's index).

``memory_mb`` bounds the working set of steps 1-2 (batches, one bucket, its centroids) whatever N
is. Through ``engine.anonymize`` the caller still holds the table and its output cells; the product's
jobs and the CLI use ``out_of_core.anonymize_out_of_core`` instead, which streams the table in
chunks through the same :class:`ClusterStore` and never holds it whole.
The files are flat int64 rows written and read with numpy (sequential appends and whole-file reads):
the thesis' database (an SQLite table with an index here before) did the same work 5-10 times slower.
"""

from __future__ import annotations

import math
import os
import tempfile
from typing import Callable

import numpy as np
import pandas as pd

from ..model.table import group_rows
from ..privacy import Parameter
from ..search.attribute_weights import WEIGHTS, problem_factors
from ..search.clustering import (
    SEED,
    finish,
    identical_clusters,
    k_of,
    redistribute_small,
    space_of,
    split_big,
)
from ..search.distance import Encoded, zkey
from ..search.recoding import group_labels
from .base import AlgorithmInfo, CellRecoding, Problem, register

# rough bytes per record of a bucket in memory: codes, encodings, candidates and distances per batch
BYTES_PER_RECORD_AND_QI = 96


def bucket_size(memory_mb: float, q: int, k: int) -> int:
    b = int(memory_mb * 2**20 / (BYTES_PER_RECORD_AND_QI * max(q, 1) + 64))
    return max(b, 4 * k, 64)


def disk_clustering(problem: Problem) -> CellRecoding:
    """The in-memory entry point (the table is already encoded); out_of_core.py streams instead."""
    k = k_of(problem)
    n = problem.table.n
    memory_mb = float(problem.options.get("memory_mb", 256))
    rng = np.random.default_rng(int(problem.options.get("seed", 0)))
    codes = problem.codes
    group = np.full(n, -1, dtype=np.int64)
    factors = problem_factors(problem)  # None: unweighted (no weights, or all equal)
    with ClusterStore(space_of(problem), k, memory_mb, rng, directory=problem.scratch, factors=factors) as store:
        for s in range(0, n, store.io_batch):
            store.add(codes[s:s + store.io_batch])
            problem.report(0.2 * min(s + store.io_batch, n) / n,
                           f"storing the table on disk: {min(s + store.io_batch, n)} of {n}")
        store.cluster(lambda f, phase: problem.report(0.2 + 0.7 * f, phase),
                      tick=lambda: problem.heartbeat(None, "clustering the records of a bucket"))
        for s in range(0, n, store.io_batch):
            group[s:s + store.io_batch] = store.groups(s, min(s + store.io_batch, n))
            problem.heartbeat(0.9, "reading the clusters back")
        stats = dict(store.stats)
    problem.report(0.95, "generalizing every cluster")
    return finish(problem, group, "local", stats)


class ClusterStore:
    """Steps 1-2 of Algorithm 3 over flat binary files on disk: records are added in batches (their QI
    leaf codes, in row order), clustered bucket by bucket, and read back by row range - as cluster ids,
    or (``keep_labels``) as each row's output labels, written per row while its bucket is in memory.
    Nothing here grows with N except the files (and a 1-in-64 sample of the sort keys).

    The buckets are the records in (Z-order key, row) order cut into equal runs; that order comes from
    an external distribution sort: the records are spread over partition files by splitters drawn from
    the sample, then each partition is sorted in memory. The cluster results go to files by row range,
    read back in order by the output pass. (An SQLite table with an index did the same, 5-10 times
    slower: every value crossed the Python/SQLite boundary as an object.)"""

    SAMPLE = 64  # every 64th record's key is kept to choose the splitters

    def __init__(self, space, k: int, memory_mb: float, rng: np.random.Generator, keep_labels: bool = False,
                 directory: str | None = None, factors: np.ndarray | None = None):
        self.space, self.k, self.rng, self.keep_labels = space, k, rng, keep_labels
        self.factors = factors  # per QI weight factors of the clustering distance (None: unweighted)
        self.q = space.q
        self.B = bucket_size(memory_mb, self.q, k)
        self.io_batch = max(1000, min(self.B, 200_000))
        # a partition of the sort, or of the results, held whole: an eighth of the memory setting
        self.part_bytes = max(memory_mb, 1) * 2**20 / 8
        self.n = 0
        self.stats = {"bucket_records": self.B, "buckets": 0, "database": "files"}
        self._tmp = tempfile.TemporaryDirectory(prefix="disk-clustering-", dir=directory)
        self._records = os.path.join(self._tmp.name, "records.bin")
        open(self._records, "wb").close()
        self._sample: list[np.ndarray] = []
        self._results: _Partitioned | None = None
        self._loaded: tuple[int, np.ndarray] | None = None  # one results partition, dense by row
        self._labels: list[dict] = [dict() for _ in range(self.q)]  # per QI: label -> id
        self._label_values: list[np.ndarray] = [np.zeros(0, dtype=object) for _ in range(self.q)]

    def __enter__(self) -> "ClusterStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._loaded = None
        self._tmp.cleanup()

    def add(self, block: np.ndarray) -> None:
        """Step 1 (store): the next rows' leaf codes with their Z-order key."""
        block = np.asarray(block, dtype=np.int64)
        z = zkey(_global_embedding(self.space, Encoded(self.space, block), block))
        ids = np.arange(self.n, self.n + len(block), dtype=np.int64)
        rows = np.column_stack([z, ids, block]).astype(np.int64, copy=False)
        with open(self._records, "ab") as fh:
            rows.tofile(fh)
        self._sample.append(rows[ids % self.SAMPLE == 0, :2])
        self.n += len(block)

    def _sorted(self) -> tuple[int, Callable[[int], np.ndarray]]:
        """The records (z, id, codes...) in (z, id) order, a partition at a time: (partitions, take) where
        take(p) reads partition p sorted (once; nothing here keeps a reference to it)."""
        width = self.q + 2
        parts = int(min(1024, max(1, math.ceil(self.n * 8 * width / self.part_bytes))))
        sample = np.concatenate(self._sample) if self._sample else np.zeros((0, 2), dtype=np.int64)
        self._sample = []
        sample = sample[np.lexsort((sample[:, 1], sample[:, 0]))]
        cut = sample[(np.arange(1, parts) * len(sample)) // parts] if len(sample) else np.zeros((0, 2), np.int64)
        split = _Partitioned(os.path.join(self._tmp.name, "sort"), width, len(cut) + 1)
        with open(self._records, "rb") as fh:
            while len(rows := np.fromfile(fh, dtype=np.int64, count=self.io_batch * width)):
                rows = rows.reshape(-1, width)
                split.add(rows, _rank(cut, rows[:, 0], rows[:, 1]))
        os.remove(self._records)

        def take(p: int) -> np.ndarray:
            rows = split.take(p, remove=True)
            ids = rows[:, 1]
            if len(ids) < 2 or bool((ids[1:] > ids[:-1]).all()):
                # appended in row order (every batch split stably): a stable sort by key alone is (key, id)
                return rows[np.argsort(rows[:, 0], kind="stable")]
            return rows[np.lexsort((rows[:, 1], rows[:, 0]))]

        return split.parts, take

    def cluster(self, progress=None, tick: Callable[[], None] | None = None) -> None:
        """Step 2: buckets of similar records in key order (equal sizes, so none is below k); ``progress``
        after every bucket, ``tick()`` (if given) within a bucket at every unit of its work."""
        n, q = self.n, self.q
        n_buckets = max(1, -(-n // self.B))
        sizes = np.full(n_buckets, n // n_buckets)
        sizes[: n % n_buckets] += 1
        self.stats["buckets"] = int(n_buckets)
        out_width = 2 + (q if self.keep_labels else 0)  # id, cluster, label ids
        self._rows_per_part = max(1024, int(self.part_bytes // (8 * out_width)))
        # row ids, cluster ids and label ids are all below n: 4-byte cells while n fits (half the bytes)
        self._results = _Partitioned(os.path.join(self._tmp.name, "results"), out_width,
                                     max(1, -(-n // self._rows_per_part)), np.int32 if n < 2**31 else np.int64)
        pending: list[np.ndarray] = []
        held = 0
        n_parts, take = self._sorted()
        next_part = next_cluster = done = 0
        for b, size in enumerate(sizes):
            while held < size:
                if next_part >= n_parts:
                    raise RuntimeError(f"{n} records stored, {done + held} found on disk")
                pending.append(take(next_part))
                next_part += 1
                held += len(pending[-1])
            arr = np.concatenate(pending) if len(pending) > 1 else pending[0]
            # copies, so that neither the partition nor the concatenation outlives this point
            ids, block = arr[:size, 1].copy(), np.ascontiguousarray(arr[:size, 2:])
            pending = [arr[size:].copy()] if len(arr) > size else []
            held = len(arr) - size
            del arr
            local = _cluster_bucket(self.space, block, self.k, self.rng, tick, self.factors)
            n_local = int(local.max()) + 1 if len(local) else 0
            out = [ids, local + next_cluster]
            if self.keep_labels:
                labels = group_labels(self.space, block, local, n_local) if n_local else [
                    np.zeros(0, dtype=object) for _ in range(q)]
                out += [self._label_ids(j, labels[j])[local] for j in range(q)]
            self._results.add(np.column_stack(out), ids // self._rows_per_part)
            if n_local:
                sizes_here = np.bincount(local)
                self.stats["smallest_cluster"] = int(min(self.stats.get("smallest_cluster", n), sizes_here.min()))
                self.stats["largest_cluster"] = int(max(self.stats.get("largest_cluster", 0), sizes_here.max()))
            next_cluster += n_local
            done += len(ids)
            if progress is not None:
                progress(done / max(n, 1), f"clustering bucket {b + 1} of {n_buckets} ({done} of {n} records)")
        self.stats["clusters"] = int(next_cluster)

    def _label_ids(self, j: int, labels: np.ndarray) -> np.ndarray:
        """Ids of the labels (object array) in QI j's table of distinct labels, shared by all buckets."""
        codes, distinct = pd.factorize(pd.Series(labels, dtype=object))
        ids = self._labels[j]
        table = np.array([ids.setdefault(v, len(ids)) for v in distinct], dtype=np.int64)
        if len(ids) > len(self._label_values[j]):
            values = np.empty(len(ids), dtype=object)
            for v, i in ids.items():
                values[i] = v
            self._label_values[j] = values
        return table[codes]

    def _rows(self, start: int, stop: int) -> np.ndarray:
        """The results (cluster, label ids...) of rows start..stop-1, in row order."""
        if self._results is None:
            raise RuntimeError("the records are not clustered yet")
        R = self._rows_per_part
        pieces = []
        for p in range(start // R, (max(stop, start + 1) - 1) // R + 1):
            if self._loaded is None or self._loaded[0] != p:
                self._loaded = None
                rows = self._results.take(p) if p < self._results.parts else np.zeros((0, self._results.width))
                expected = max(0, min(R, self.n - p * R))
                dense = np.empty((expected, self._results.width - 1), dtype=np.int64)
                at = rows[:, 0] - p * R
                if len(rows) != expected or (expected and np.bincount(at, minlength=expected).min() != 1):
                    raise RuntimeError(f"rows {p * R + 1}..{p * R + expected}: {len(rows)} clustered records "
                                       f"found on disk")
                dense[at] = rows[:, 1:]
                self._loaded = (p, dense)
            lo = max(start, p * R) - p * R
            hi = min(stop, (p + 1) * R) - p * R
            pieces.append(self._loaded[1][lo:hi])
        got = np.concatenate(pieces) if len(pieces) > 1 else pieces[0]
        if len(got) != stop - start:
            raise RuntimeError(f"rows {start + 1}..{stop}: {len(got)} clustered records found on disk")
        return got

    def release(self) -> None:
        """Drop the results partition held for reading (the next read loads it again)."""
        self._loaded = None

    def groups(self, start: int, stop: int) -> np.ndarray:
        """The cluster of rows start..stop-1 (read in increasing row order)."""
        return self._rows(start, stop)[:, 0].copy()

    def labels(self, start: int, stop: int) -> list[np.ndarray]:
        """Per QI the output labels of rows start..stop-1 (needs ``keep_labels``; read in increasing row
        order): the rows share each distinct label's string object."""
        if not self.keep_labels:
            raise RuntimeError("the store keeps no labels")
        got = self.label_ids(start, stop)
        return [self._label_values[j][got[:, j]] for j in range(self.q)]

    def label_ids(self, start: int, stop: int) -> np.ndarray:
        """Rows start..stop-1's output label ids (rows x q; needs ``keep_labels``; read in increasing row order):
        QI j's labels are ``label_values(j)[ids[:, j]]``."""
        if not self.keep_labels:
            raise RuntimeError("the store keeps no labels")
        return self._rows(start, stop)[:, 1:]

    def label_values(self, j: int) -> np.ndarray:
        """QI j's distinct output labels (object array, one per id; shared by all buckets)."""
        return self._label_values[j]


class _Partitioned:
    """Rows of ``width`` ints (int64, or ``dtype``) appended to ``parts`` files by a given partition number; a file is read
    back whole."""

    def __init__(self, directory: str, width: int, parts: int, dtype: type = np.int64):
        os.makedirs(directory, exist_ok=True)
        self.width, self.parts = width, parts
        self.dtype = np.dtype(dtype)  # of the files' cells (every value must fit: the caller knows)
        self.paths = [os.path.join(directory, f"part-{p:04d}.bin") for p in range(parts)]
        for path in self.paths:
            open(path, "wb").close()

    def add(self, rows: np.ndarray, part: np.ndarray) -> None:
        rows = np.ascontiguousarray(rows, dtype=self.dtype)
        if self.parts == 1:
            with open(self.paths[0], "ab") as fh:
                rows.tofile(fh)
            return
        order = np.argsort(part, kind="stable")
        bounds = np.searchsorted(part[order], np.arange(self.parts + 1))
        for p in np.flatnonzero(np.diff(bounds)):
            with open(self.paths[p], "ab") as fh:
                rows[order[bounds[p]:bounds[p + 1]]].tofile(fh)

    def take(self, p: int, remove: bool = False) -> np.ndarray:
        rows = np.fromfile(self.paths[p], dtype=self.dtype).reshape(-1, self.width)
        if remove:  # read once: the disk space goes back at once
            os.remove(self.paths[p])
            open(self.paths[p], "wb").close()
        return rows


def _rank(cut: np.ndarray, z: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """How many splitters (z, id) in ``cut`` (sorted) are below each record's (z, id): its partition."""
    if not len(cut):
        return np.zeros(len(z), dtype=np.int64)
    lo = np.searchsorted(cut[:, 0], z, side="left")
    hi = np.searchsorted(cut[:, 0], z, side="right")
    tied = np.flatnonzero(hi > lo)  # the record's z is a splitter's: order by id among those splitters
    if len(tied):
        for value in np.unique(z[tied]):
            rows = tied[z[tied] == value]
            a, b = np.searchsorted(cut[:, 0], value, side="left"), np.searchsorted(cut[:, 0], value, side="right")
            lo[rows] = a + np.searchsorted(cut[a:b, 1], ids[rows], side="left")
    return lo


def _global_embedding(space, enc: Encoded, block: np.ndarray) -> np.ndarray:
    """Records in [0, 1]^q with the column's global range (not the block's)."""
    parts = []
    for j in enc.num:
        values = space.sortable_values(j)  # a missing value: one span above the maximum
        v = values[block[:, j]]
        lo = np.nanmin(values[np.isfinite(values)]) if np.isfinite(values).any() else 0
        parts.append(((np.nan_to_num(v) - lo) / (space.span[j] or 1.0))[:, None])
    for t in range(len(enc.cat)):
        parts.append(enc.pos[t][enc.L[:, t]][:, None])
    return np.concatenate(parts, axis=1) if parts else np.zeros((len(block), 0))


def _cluster_bucket(space, block: np.ndarray, k: int, rng: np.random.Generator,
                    tick: Callable[[], None] | None = None, factors: np.ndarray | None = None) -> np.ndarray:
    """Algorithm 3 steps 3-5 on one bucket: cluster ids 0.. for its records; ``tick()`` (if given) at every
    batch of records placed and every cluster split; ``factors``: the attribute weights' per-QI factors."""
    first, inverse, counts = group_rows(block)
    tuples = block[first]
    enc = Encoded(space, tuples, factors)
    group, n_ident = identical_clusters(inverse, counts, k)
    rest = np.flatnonzero(group < 0)
    if len(rest) >= k:
        from ..search.clustering import oka_fill

        items = inverse[rest]
        cent, cl = oka_fill(enc, items, k, rng, progress=None if tick is None else lambda f: tick())
        cl = redistribute_small(enc, items, cent, cl, k)
        cl = split_big(enc, items, cl, k, tick)
        _, cl = np.unique(cl, return_inverse=True)
        group[rest] = n_ident + cl
    elif len(rest):
        from ..search.clustering import place_leftovers

        group = place_leftovers(enc, inverse, group, rest, k)
    return group


register(
    AlgorithmInfo(
        name="disk-clustering",
        label="Disk-based hybrid clustering",
        summary="For tables larger than memory (seed 003, Amnesia): the records are kept in flat files on disk, "
        "sorted by a space-filling-curve key and clustered bucket by bucket in bounded memory - OKA assignment "
        "to the nearest centroid, small clusters redistributed, large ones split to k..2k-1 - then generalized "
        "locally per cluster.",
        run=disk_clustering,
        recoding="local",
        options=(
            Parameter("memory_mb", int, 256, "memory for the clustering working set, in MB (the table itself "
                      "stays on disk and is read one bucket at a time)", minimum=1, label="Memory (MB)"),
            SEED,
            WEIGHTS,
        ),
        reference="Big Data Anonymization (NTUA master's thesis 2022, seed 003) chapter 3; J.-L. Lin et al. 2010",
        out_of_core=True,
    )
)
