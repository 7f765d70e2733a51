"""Disk-based hybrid clustering for data larger than memory (seed 003 chapter 3, Algorithm 3).

1. store: the QI leaf codes of every record go to an embedded SQLite database on disk (a temporary
   file), in batches, each with the Z-order key of the record (numeric QIs scaled to [0, 1],
   categories at their depth-first position in the hierarchy) under an index;
2. buckets: the records are read back in key order, one bucket of at most ``B`` records at a time,
   where B follows from ``memory_mb`` (similar records share a bucket); per bucket, in memory:
   - initialiseClusters: records of a tuple seen at least k times in the bucket form clusters of
     identical records; floor(n/k) random other records seed the clusters;
   - fillClusters (OKA step): every record joins the cluster with the nearest centroid (mean for
     numbers, LCA for categories), found through an index over the centroids (two Z-order curves)
     instead of a comparison with every centroid;
   - removeSmallClusters (k-member step): records of clusters below k go to the nearest cluster of
     at least k; then clusters above 2k-1 are split (farthest pair, halves) until k..2k-1;
   - the cluster of every record is written back to the database in batches;
3. generalization per cluster (local recoding): ranges [lo-hi] for numbers, LCAs for categories.

``memory_mb`` bounds the working set of steps 1-2 (batches, one bucket, its centroids) whatever N
is. Through ``engine.anonymize`` the caller still holds the table and its output cells; the product's
jobs and the CLI use ``out_of_core.anonymize_out_of_core`` instead, which streams the table in
chunks through the same :class:`ClusterStore` and never holds it whole.
SQLite (standard library) is used: no new dependency; the work is sequential batched inserts and
one ordered scan over an index, which SQLite does at a few hundred thousand rows per second.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from typing import Callable

import numpy as np

from ..clustering import (
    SEED,
    finish,
    identical_clusters,
    k_of,
    redistribute_small,
    space_of,
    split_big,
)
from ..distance import Encoded, zkey
from ..privacy import PRIVACY_MODELS, Parameter
from ..recoding import group_labels
from ..table import group_rows
from . import AlgorithmInfo, register
from .base import CellRecoding, Problem

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
    with ClusterStore(space_of(problem), k, memory_mb, rng, directory=problem.scratch) as store:
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
    """Steps 1-2 of Algorithm 3 over an SQLite file: records are added in batches (their QI leaf
    codes, in row order), clustered bucket by bucket, and read back by row range - as cluster ids,
    or (``keep_labels``) directly as each row's output labels, written per cluster while its bucket
    is in memory. Nothing here grows with N except the database file."""

    def __init__(self, space, k: int, memory_mb: float, rng: np.random.Generator, keep_labels: bool = False,
                 directory: str | None = None):
        self.space, self.k, self.rng, self.keep_labels = space, k, rng, keep_labels
        self.q = space.q
        self.B = bucket_size(memory_mb, self.q, k)
        self.io_batch = max(1000, min(self.B, 200_000))
        self.n = 0
        self.stats = {"bucket_records": self.B, "buckets": 0, "database": "sqlite"}
        self._tmp = tempfile.TemporaryDirectory(prefix="disk-clustering-", dir=directory)
        self.db = sqlite3.connect(os.path.join(self._tmp.name, "records.sqlite"))
        self.db.execute("PRAGMA journal_mode=OFF")
        self.db.execute("PRAGMA synchronous=OFF")
        self.db.execute(f"PRAGMA cache_size=-{max(1024, int(memory_mb * 256))}")  # KiB: a quarter of the budget
        cols = ", ".join(f"c{j} INTEGER" for j in range(self.q))
        self.db.execute(f"CREATE TABLE rec (id INTEGER PRIMARY KEY, z INTEGER, {cols})")
        self.db.execute("CREATE TABLE asg (id INTEGER PRIMARY KEY, cluster INTEGER)")
        labels = ", ".join(f"l{j} TEXT" for j in range(self.q))
        self.db.execute(f"CREATE TABLE lab (cluster INTEGER PRIMARY KEY, {labels})")
        self.db.execute("CREATE TABLE want (cluster INTEGER PRIMARY KEY)")

    def __enter__(self) -> "ClusterStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()
        self._tmp.cleanup()

    def add(self, block: np.ndarray) -> None:
        """Step 1 (store): the next rows' leaf codes with their Z-order key."""
        block = np.asarray(block, dtype=np.int64)
        z = zkey(_global_embedding(self.space, Encoded(self.space, block), block))
        rows = np.column_stack([np.arange(self.n, self.n + len(block)), z, block]).tolist()
        self.db.executemany(f"INSERT INTO rec VALUES ({', '.join('?' * (self.q + 2))})", rows)
        self.n += len(block)

    def cluster(self, progress=None, tick: Callable[[], None] | None = None) -> None:
        """Step 2: buckets of similar records in key order (equal sizes, so none is below k); ``progress``
        after every bucket, ``tick()`` (if given) within a bucket at every unit of its work."""
        n, q = self.n, self.q
        self.db.execute("CREATE INDEX rec_z ON rec (z, id)")
        self.db.commit()
        n_buckets = max(1, -(-n // self.B))
        sizes = np.full(n_buckets, n // n_buckets)
        sizes[: n % n_buckets] += 1
        self.stats["buckets"] = int(n_buckets)
        cursor = self.db.execute(f"SELECT id, {', '.join(f'c{j}' for j in range(q))} FROM rec ORDER BY z, id")
        next_cluster = done = 0
        for b, size in enumerate(sizes):
            arr = np.array(cursor.fetchmany(int(size)), dtype=np.int64).reshape(-1, q + 1)
            ids, block = arr[:, 0], arr[:, 1:]
            local = _cluster_bucket(self.space, block, self.k, self.rng, tick)
            n_local = int(local.max()) + 1 if len(local) else 0
            self.db.executemany("INSERT INTO asg VALUES (?, ?)", np.column_stack([ids, local + next_cluster]).tolist())
            if self.keep_labels and n_local:
                labels = group_labels(self.space, block, local, n_local)
                rows = zip(range(next_cluster, next_cluster + n_local), *(lab.tolist() for lab in labels))
                self.db.executemany(f"INSERT INTO lab VALUES ({', '.join('?' * (q + 1))})", rows)
            if n_local:
                sizes_here = np.bincount(local)
                self.stats["smallest_cluster"] = int(min(self.stats.get("smallest_cluster", n), sizes_here.min()))
                self.stats["largest_cluster"] = int(max(self.stats.get("largest_cluster", 0), sizes_here.max()))
            next_cluster += n_local
            done += len(ids)
            if progress is not None:
                progress(done / max(n, 1), f"clustering bucket {b + 1} of {n_buckets} ({done} of {n} records)")
        self.db.commit()
        self.stats["clusters"] = int(next_cluster)

    def groups(self, start: int, stop: int) -> np.ndarray:
        """The cluster of rows start..stop-1."""
        got = self.db.execute("SELECT cluster FROM asg WHERE id >= ? AND id < ? ORDER BY id", (start, stop)).fetchall()
        return np.array(got, dtype=np.int64).reshape(-1)

    def labels(self, start: int, stop: int) -> list[np.ndarray]:
        """Per QI the output labels of rows start..stop-1 (needs ``keep_labels``): each distinct
        cluster's labels are read once, the rows share those string objects."""
        group = self.groups(start, stop)
        if len(group) != stop - start:
            raise RuntimeError(f"rows {start + 1}..{stop}: {len(group)} clustered records found on disk")
        clusters, row_of = np.unique(group, return_inverse=True)
        self.db.execute("DELETE FROM want")
        self.db.executemany("INSERT INTO want VALUES (?)", ((int(c),) for c in clusters))
        cols = ", ".join(f"lab.l{j}" for j in range(self.q))
        got = self.db.execute(f"SELECT lab.cluster, {cols} FROM want JOIN lab ON lab.cluster = want.cluster "
                              "ORDER BY lab.cluster").fetchall()
        if len(got) != len(clusters):
            raise RuntimeError(f"rows {start + 1}..{stop}: labels of {len(clusters) - len(got)} cluster(s) missing")
        columns = list(zip(*got))
        return [np.array(columns[j + 1], dtype=object)[row_of] for j in range(self.q)]


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
                    tick: Callable[[], None] | None = None) -> np.ndarray:
    """Algorithm 3 steps 3-5 on one bucket: cluster ids 0.. for its records; ``tick()`` (if given) at every
    batch of records placed and every cluster split."""
    first, inverse, counts = group_rows(block)
    tuples = block[first]
    enc = Encoded(space, tuples)
    group, n_ident = identical_clusters(inverse, counts, k)
    rest = np.flatnonzero(group < 0)
    if len(rest) >= k:
        from ..clustering import oka_fill

        items = inverse[rest]
        cent, cl = oka_fill(enc, items, k, rng, progress=None if tick is None else lambda f: tick())
        cl = redistribute_small(enc, items, cent, cl, k)
        cl = split_big(enc, items, cl, k, tick)
        _, cl = np.unique(cl, return_inverse=True)
        group[rest] = n_ident + cl
    elif len(rest):
        from ..clustering import place_leftovers

        group = place_leftovers(enc, inverse, group, rest, k)
    return group


register(
    AlgorithmInfo(
        name="disk-clustering",
        label="Disk-based hybrid clustering",
        summary="For tables larger than memory (seed 003, Amnesia): the records are kept in an SQLite database "
        "on disk and clustered bucket by bucket in bounded memory - OKA assignment to the nearest centroid "
        "through an index, small clusters redistributed, large ones split to k..2k-1 - then generalized "
        "locally per cluster.",
        run=disk_clustering,
        models=tuple(PRIVACY_MODELS),
        recoding="local",
        options=(
            Parameter("memory_mb", int, 256, "memory for the clustering working set, in MB (the table itself "
                      "stays on disk and is read one bucket at a time)", minimum=1),
            SEED,
        ),
        reference="Big Data Anonymization (NTUA master's thesis 2022, seed 003) chapter 3; J.-L. Lin et al. 2010",
    )
)
