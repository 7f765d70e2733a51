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
is; the engine's input table and the output cells are held by the caller as for every algorithm.
SQLite (standard library) is used: no new dependency; the work is sequential batched inserts and
one ordered scan over an index, which SQLite does at a few hundred thousand rows per second.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile

import numpy as np

from ..clustering import (
    finish,
    identical_clusters,
    k_of,
    redistribute_small,
    space_of,
    split_big,
)
from ..distance import Encoded, zkey
from ..privacy import PRIVACY_MODELS, Parameter
from ..table import group_rows
from . import AlgorithmInfo, register
from .base import CellRecoding, Problem
from .oka import SEED

# rough bytes per record of a bucket in memory: codes, encodings, candidates and distances per batch
BYTES_PER_RECORD_AND_QI = 96


def bucket_size(memory_mb: float, q: int, k: int) -> int:
    b = int(memory_mb * 2**20 / (BYTES_PER_RECORD_AND_QI * max(q, 1) + 64))
    return max(b, 4 * k, 64)


def disk_clustering(problem: Problem) -> CellRecoding:
    k = k_of(problem)
    n = problem.table.n
    q = len(problem.hierarchies)
    memory_mb = float(problem.options.get("memory_mb", 256))
    rng = np.random.default_rng(int(problem.options.get("seed", 0)))
    space = space_of(problem)
    B = bucket_size(memory_mb, q, k)
    io_batch = max(1000, min(B, 200_000))
    codes = problem.codes
    group = np.full(n, -1, dtype=np.int64)
    stats = {"bucket_records": B, "buckets": 0, "database": "sqlite"}
    with tempfile.TemporaryDirectory(prefix="disk-clustering-") as tmp:
        path = os.path.join(tmp, "records.sqlite")
        db = sqlite3.connect(path)
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        db.execute(f"PRAGMA cache_size=-{max(1024, int(memory_mb * 256))}")  # KiB: a quarter of the budget
        cols = ", ".join(f"c{j} INTEGER" for j in range(q))
        db.execute(f"CREATE TABLE rec (id INTEGER PRIMARY KEY, z INTEGER, {cols})")
        db.execute("CREATE TABLE asg (id INTEGER PRIMARY KEY, cluster INTEGER)")
        # 1. store
        for s in range(0, n, io_batch):
            block = codes[s:s + io_batch]
            enc = Encoded(space, block)
            z = zkey(_global_embedding(space, enc, block))
            rows = np.column_stack([np.arange(s, s + len(block)), z, block]).tolist()
            db.executemany(f"INSERT INTO rec VALUES ({', '.join('?' * (q + 2))})", rows)
            problem.report(0.2 * (s + len(block)) / n, f"storing the table on disk: {s + len(block)} of {n}")
        db.execute("CREATE INDEX rec_z ON rec (z, id)")
        db.commit()
        # 2. buckets in key order; equal sizes so that none is below k
        n_buckets = max(1, -(-n // B))
        sizes = np.full(n_buckets, n // n_buckets)
        sizes[: n % n_buckets] += 1
        stats["buckets"] = int(n_buckets)
        cursor = db.execute(f"SELECT id, {', '.join(f'c{j}' for j in range(q))} FROM rec ORDER BY z, id")
        next_cluster = 0
        done = 0
        for b, size in enumerate(sizes):
            got = cursor.fetchmany(int(size))
            arr = np.array(got, dtype=np.int64).reshape(-1, q + 1)
            ids, block = arr[:, 0], arr[:, 1:]
            local = _cluster_bucket(space, block, k, rng)
            local += next_cluster
            next_cluster = int(local.max()) + 1 if len(local) else next_cluster
            db.executemany("INSERT INTO asg VALUES (?, ?)", np.column_stack([ids, local]).tolist())
            done += len(ids)
            problem.report(0.2 + 0.7 * done / n, f"clustering bucket {b + 1} of {n_buckets} ({done} of {n} records)")
        db.commit()
        # 3. read the clusters back in batches
        cur = db.execute("SELECT id, cluster FROM asg ORDER BY id")
        while True:
            got = cur.fetchmany(io_batch)
            if not got:
                break
            arr = np.array(got, dtype=np.int64)
            group[arr[:, 0]] = arr[:, 1]
        db.close()
    problem.report(0.95, "generalizing every cluster")
    return finish(problem, group, "local", stats)


def _global_embedding(space, enc: Encoded, block: np.ndarray) -> np.ndarray:
    """Records in [0, 1]^q with the column's global range (not the block's)."""
    parts = []
    for j in enc.num:
        v = space.values[j][block[:, j]]
        lo = np.nanmin(space.values[j][np.isfinite(space.values[j])]) if np.isfinite(space.values[j]).any() else 0
        parts.append(((np.nan_to_num(v) - lo) / (space.span[j] or 1.0))[:, None])
    for t in range(len(enc.cat)):
        parts.append(enc.pos[t][enc.L[:, t]][:, None])
    return np.concatenate(parts, axis=1) if parts else np.zeros((len(block), 0))


def _cluster_bucket(space, block: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Algorithm 3 steps 3-5 on one bucket: cluster ids 0.. for its records."""
    first, inverse, counts = group_rows(block)
    tuples = block[first]
    enc = Encoded(space, tuples)
    group, n_ident = identical_clusters(inverse, counts, k)
    rest = np.flatnonzero(group < 0)
    if len(rest) >= k:
        from ..clustering import oka_fill

        items = inverse[rest]
        cent, cl = oka_fill(enc, items, k, rng)
        cl = redistribute_small(enc, items, cent, cl, k)
        cl = split_big(enc, items, cl, k)
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
