"""OKA, one-pass k-means for k-anonymization (Lin & Wei 2008), with the distance of seed 003 §3.2.3.

Records of a QI tuple seen at least k times first form clusters of identical records (no loss).
The others: floor(n/k) random records seed the clusters, one pass puts every record in the cluster
whose centroid is nearest (the centroid follows; an index over the centroids limits the comparisons,
see engine/search/distance.py); then the adjustment: clusters above k give up the records farthest from
their centroid, which go to the nearest clusters below k, then to the nearest ones below 2k-1. Every
cluster ends with k..2k-1 records when the table has at least k. Local recoding: each cluster's
numeric values become its range [lo-hi], the others their lowest common ancestor.

With a person id the units clustered are persons (search/clustering.py, units_of): every cluster holds k..2k-1
distinct persons, and all of a person's records go to its cluster.
"""

from __future__ import annotations

import numpy as np

from ..search.attribute_weights import WEIGHTS, problem_factors
from ..search.clustering import (
    SEED,
    finish,
    identical_clusters,
    k_of,
    oka_adjust,
    oka_fill,
    place_leftovers,
    space_of,
    units_of,
)
from ..search.distance import Encoded
from .base import AlgorithmInfo, CellRecoding, Problem, register


def oka(problem: Problem) -> CellRecoding:
    k = k_of(problem)
    freq = problem.freq
    rng = np.random.default_rng(int(problem.options.get("seed", 0)))
    units = units_of(problem)  # records, or persons with a person id: the clusters hold k..2k-1 of them
    group, n_ident = identical_clusters(units.item, units.counts, k)
    rest = np.flatnonzero(group < 0)
    enc = Encoded(space_of(problem), freq.codes, problem_factors(problem))  # weighted distances
    items = units.item[rest]
    problem.report(0.05, f"OKA: {n_ident} cluster(s) of identical records, {len(rest)} {units.word}(s) to cluster")
    if len(rest) >= k:
        cent, cl = oka_fill(enc, items, k, rng,
                            progress=lambda f: problem.heartbeat(0.05 + 0.6 * f, "OKA: one pass over the records"))
        problem.report(0.7, "OKA: adjusting the clusters to k..2k-1 records")
        cl = oka_adjust(enc, items, cent, cl, k,
                        tick=lambda: problem.heartbeat(0.8, "OKA: adjusting the clusters to k..2k-1 records"))
        group[rest] = n_ident + cl
    else:
        group = place_leftovers(enc, units.item, group, rest, k)
    return finish(problem, units.rows(group), "local", {"identical_clusters": n_ident})


register(
    AlgorithmInfo(
        name="oka",
        label="OKA (one-pass k-means)",
        summary="Clustering: one k-means pass from n/k random seeds, then clusters above k give their farthest "
        "records to clusters below k; each cluster is generalized locally (Lin & Wei 2008).",
        run=oka,
        recoding="local",
        options=(SEED, WEIGHTS),
        person_level=True,
        reference="J.-L. Lin, M.-C. Wei, An efficient clustering method for k-anonymization, PAIS 2008",
    )
)
