"""Exact marginals of a fitted graphical model by belief propagation on its junction tree, in numpy.

AIM scores every candidate marginal against the current model each round. mbi answers a marginal outside the
model's cliques with a jax program compiled for that model (variable elimination), and every round's model is
new, so the compiling dominated the run. The models AIM keeps are small (≤ max_model_mb), and numpy's log-space
sum-product on the same junction tree mbi builds answers every 1- and 2-way marginal exactly without compiling:

* each potential (log-space, on a measured clique) is added to one tree node containing its clique;
* two passes of Shafer-Shenoy messages (log-sum-exp over the variables a separator drops) calibrate the nodes;
* a pair (a, b) found in no single node is carried along the tree path between the nearest nodes holding a and
  b: P(a, Cᵢ) = P(a, S) · P(Cᵢ) / P(S) at each node (a is independent of Cᵢ given the separator S), summed down
  to the next separator, until b's node.

Everything here is post-processing of the model (no data, no budget)."""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import networkx as nx

Clique = tuple[str, ...]
Table = tuple[tuple[str, ...], np.ndarray]  # (the axes' column names, the array)


def _letters(names: dict[str, str], axes: Sequence[str]) -> str:
    return "".join(names[a] for a in axes)


def _logsumexp_to(table: Table, keep: Sequence[str]) -> Table:
    axes, values = table
    drop = tuple(i for i, a in enumerate(axes) if a not in keep)
    if drop:
        top = np.max(values, axis=drop, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        values = np.log(np.sum(np.exp(values - top), axis=drop)) + np.squeeze(top, axis=drop)
    kept = tuple(a for a in axes if a in keep)
    order = [kept.index(a) for a in keep if a in kept]
    return tuple(kept[i] for i in order), np.transpose(values, order)


def _broadcast(table: Table, axes: Sequence[str], sizes: dict[str, int]) -> np.ndarray:
    """The table's values with its axes placed among ``axes`` (size 1 where it has none)."""
    own, values = table
    order = [own.index(a) for a in axes if a in own]
    values = np.transpose(values, order)
    return values.reshape([sizes[a] if a in own else 1 for a in axes])


class CalibratedTree:
    """A junction tree whose node marginals (counts summing to the model's total) are known."""

    def __init__(self, potentials: dict[Clique, np.ndarray], sizes: dict[str, int], total: float,
                 tree: nx.Graph):
        self.sizes, self.total, self.tree = sizes, total, tree
        nodes: list[Clique] = list(tree.nodes)
        logpot = {n: np.zeros([sizes[a] for a in n]) for n in nodes}
        for clique, values in potentials.items():
            home = next(n for n in nodes if set(clique) <= set(n))
            logpot[home] = logpot[home] + _broadcast((clique, values), home, sizes)
        messages: dict[tuple[Clique, Clique], Table] = {}
        order: list[Clique] = []  # children before parents, component by component (the tree may be a forest)
        parent: dict[Clique, Clique] = {}
        import networkx as nx  # here: importing the package (0.2 s) is paid by a model fit, not by every importer

        for component in nx.connected_components(tree):
            root = min(component)
            order += list(nx.dfs_postorder_nodes(tree, root))
            parent |= {child: par for par, child in nx.dfs_edges(tree, root)}

        def send(src: Clique, dst: Clique) -> None:
            belief = logpot[src].copy()
            for other in tree.neighbors(src):
                if other != dst:
                    belief = belief + _broadcast(messages[(other, src)], src, sizes)
            separator = tuple(a for a in src if a in dst)
            messages[(src, dst)] = _logsumexp_to((src, belief), separator)

        for node in order:
            if node in parent:
                send(node, parent[node])
        for node in reversed(order):
            for child in tree.neighbors(node):
                if parent.get(child) == node:
                    send(node, child)
        self.beliefs: dict[Clique, np.ndarray] = {}
        for n in nodes:
            log_belief = logpot[n].copy()
            for other in tree.neighbors(n):
                log_belief = log_belief + _broadcast(messages[(other, n)], n, sizes)
            log_belief -= np.max(log_belief)
            belief = np.exp(log_belief)
            self.beliefs[n] = belief * (total / belief.sum())

    def _project(self, node: Clique, keep: Sequence[str]) -> np.ndarray:
        drop = tuple(i for i, a in enumerate(node) if a not in keep)
        values = self.beliefs[node].sum(axis=drop) if drop else self.beliefs[node]
        kept = [a for a in node if a in keep]
        return np.transpose(values, [kept.index(a) for a in keep])

    def marginal(self, clique: Sequence[str]) -> np.ndarray:
        """The model's counts on a clique of one or two columns, flattened in C order."""
        clique = tuple(clique)
        for node in self.tree.nodes:
            if set(clique) <= set(node):
                return self._project(node, clique).ravel()
        if len(clique) != 2:
            raise ValueError(f"no tree node holds {clique!r} (only pairs are carried along the tree)")
        a, b = clique
        holders_a = [n for n in self.tree.nodes if a in n]
        holders_b = [n for n in self.tree.nodes if b in n]
        import networkx as nx

        if not nx.has_path(self.tree, holders_a[0], holders_b[0]):  # separate components: independent
            return np.outer(self._project(holders_a[0], (a,)), self._project(holders_b[0], (b,))).ravel() / self.total
        path = min((nx.shortest_path(self.tree, u, v) for u in holders_a for v in holders_b), key=len)
        names = dict(zip(sorted(self.sizes), string.ascii_letters))
        if len(self.sizes) > len(string.ascii_letters):
            raise ValueError("too many columns for the pair marginal")
        # P(a, S) on the first separator, then through each interior node to b's node
        separator = tuple(x for x in path[0] if x in path[1])
        carried: Table = ((a, *separator), self._project(path[0], (a, *separator)))
        for i in range(1, len(path)):
            node = path[i]
            incoming = separator
            outgoing = (b,) if i == len(path) - 1 else tuple(x for x in node if x in path[i + 1])
            sep_counts = self._project(node, incoming)
            conditional = np.divide(self.beliefs[node], _broadcast((incoming, sep_counts), node, self.sizes),
                                    out=np.zeros_like(self.beliefs[node]),
                                    where=_broadcast((incoming, sep_counts), node, self.sizes) > 0)
            target = (a, *outgoing)
            spec = (f"{_letters(names, carried[0])},{_letters(names, node)}->{_letters(names, target)}")
            carried = (target, np.einsum(spec, carried[1], conditional))
            separator = outgoing
        return carried[1].ravel()


def calibrate(fitted: Any, sizes: dict[str, int]) -> CalibratedTree:
    """The calibrated junction tree of an mbi model (its log-potentials read once into numpy)."""
    from .graphical import _mbi

    mbi = _mbi()
    domain = mbi.Domain(list(sizes), [sizes[c] for c in sizes])
    cliques = [tuple(cl) for cl in fitted.potentials.cliques]
    tree, _ = mbi.junction_tree.make_junction_tree(domain, cliques)
    potentials = {}
    for cl in cliques:
        factor = fitted.potentials[cl]
        potentials[tuple(factor.domain)] = np.asarray(factor.values, dtype=float)
    return CalibratedTree(potentials, sizes, float(fitted.total), tree)
