"""Utility and risk figures of a set-valued release.

- NCP of items: a published item covering u of the |I| leaf items costs u/|I| (0 for an item left as
  is; a dynamic numeric range [lo-hi] costs (hi-lo)/(max-min)); a suppressed item costs 1. The table's
  NCP is the mean over the input's item occurrences (records as sets).
- Information loss per item: the NCP of each input item's published form.
- Itemset-support error (data-mining utility; Terrovitis et al. 2008): for the ``top`` most frequent
  itemsets of 1..``size`` items of the input, the support estimated from the release (the support of
  the generalized itemset times 1/u for each generalized item covering u items, as if uniform),
  compared with the true support: mean |estimate - true| / true.
- k^m figure: the smallest support of any published itemset of at most m items.
"""

from __future__ import annotations

import numpy as np

from . import itemsets
from .transactions import Transactions

TOP_ITEMSETS = 100
TOP_CHART = 15


def item_ncp(tx: Transactions, node_of_item: np.ndarray, loss_of_node) -> dict:
    """Table NCP (mean over occurrences) and the loss of every item that lost precision."""
    d = tx.distinct()
    per_item = np.ones(len(tx.items))
    present = node_of_item >= 0
    if present.any():
        per_item[present] = loss_of_node(node_of_item[present])
    # the loss is a function of the item's node: taken per item, then read for every occurrence (the same values
    # in the same order, so the same mean)
    loss = per_item[d.codes]
    return {"ncp": float(loss.mean()) if len(loss) else 0.0,
            "item_loss": {str(tx.items[i]): float(per_item[i]) for i in np.flatnonzero(per_item > 0)}}


def top_itemsets(tx: Transactions, size: int, top: int = TOP_ITEMSETS) -> list[tuple[int, tuple[str, ...]]]:
    """The input's ``top`` most frequent itemsets of 1..``size`` items: (support, item texts), by support
    descending, then smaller itemsets first, then the items' codes."""
    base = max(len(tx.items), 1)
    counted = [(itemsets.itemset_supports(tx, s, upto=size), s) for s in range(1, size + 1)]
    keys = np.concatenate([k for (k, _), _ in counted])
    sup = np.concatenate([v for (_, v), _ in counted])
    sizes = np.concatenate([np.full(len(k), s, dtype=np.int64) for (k, _), s in counted])
    if 0 < top < len(sup):
        # only the itemsets as frequent as the top-th (ties included) can be among the top: the rest are not sorted
        floor = np.partition(sup, len(sup) - top)[len(sup) - top]
        near = np.flatnonzero(sup >= floor)
        keys, sup, sizes = keys[near], sup[near], sizes[near]
    best = np.lexsort((keys, sizes, -sup))[:top]  # support descending, then smaller itemsets, then the key
    return [(int(sup[i]), tuple(str(tx.items[c]) for c in itemsets.decode(keys[i:i + 1], int(sizes[i]), base)[0]))
            for i in best]


def estimated_supports(tx: Transactions, node_of_item: np.ndarray, wanted: list[tuple[str, ...]],
                       counted: tuple[int, dict[int, tuple[np.ndarray, np.ndarray]]] | None = None) -> np.ndarray:
    """The supports of the ``wanted`` itemsets (item texts) as estimated from the release of ``tx`` under
    ``node_of_item``: the support of the generalized itemset times 1/u for each generalized item covering
    u items of ``tx`` (as if uniform); 0 for an itemset with an item suppressed or absent from ``tx``.
    ``counted``: (base, size -> (keys, supports)) of the generalized records' itemsets under this
    ``node_of_item`` (AA's last count, :attr:`.apriori.SetRecoding.counted`), read instead of counting again."""
    out = np.zeros(len(wanted))
    if not len(tx.items) or not wanted:
        return out
    code_of = {str(x): i for i, x in enumerate(tx.items)}
    nbase = int(node_of_item.max(initial=0)) + 1
    covered = np.bincount(node_of_item[node_of_item >= 0], minlength=nbase)
    released: dict[int, dict[int, int]] = {}
    generalized: list[tuple[np.ndarray, np.ndarray]] = []

    def release_supports(size: int) -> dict[int, int]:
        if counted is not None and size in counted[1]:
            # AA's counts, keys in its base: re-keyed to nbase (every node of the release is below nbase)
            base, (rk, rs) = counted[0], counted[1][size]
            parts = itemsets.decode(rk, size, base)
            weights = nbase ** np.arange(size - 1, -1, -1, dtype=np.int64)
            return dict(zip((parts @ weights).tolist(), rs.tolist()))
        if not generalized:
            nodes = node_of_item[tx.codes]
            keep = nodes >= 0
            lengths = np.bincount(tx.record_of[keep], minlength=tx.n)
            generalized.append(itemsets.sorted_sets(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                                                    nodes[keep]))
        rk, rs = itemsets.supports(*generalized[0], size, nbase)
        return dict(zip(rk.tolist(), rs.tolist()))

    for i, names in enumerate(wanted):
        if any(name not in code_of for name in names):
            continue  # not in these records
        mapped = node_of_item[[code_of[name] for name in names]]
        if (mapped < 0).any():
            continue  # a suppressed item: the itemset is gone from the release
        distinct = np.unique(mapped)
        if len(distinct) not in released:
            released[len(distinct)] = release_supports(len(distinct))
        weights = nbase ** np.arange(len(distinct) - 1, -1, -1, dtype=np.int64)
        support = released[len(distinct)].get(int(distinct @ weights), 0)
        out[i] = support * float(np.prod(1.0 / covered[mapped]))
    return out


def relative_error(chosen: list[tuple[int, tuple[str, ...]]], estimates: np.ndarray) -> dict:
    """Mean |estimate - true| / true over the ``chosen`` itemsets ((true support, items)); ``compared``:
    the first TOP_CHART of them with both supports, so a chart sets each original itemset beside its own
    estimate (like with like, never an item beside a group)."""
    if not chosen:
        return {"itemsets": 0, "mean_relative_error": 0.0, "compared": []}
    true = np.array([t for t, _ in chosen], dtype=float)
    compared = [{"items": list(names), "support": int(t), "estimate": round(float(e), 4)}
                for (t, names), e in zip(chosen[:TOP_CHART], estimates[:TOP_CHART])]
    return {"itemsets": len(chosen), "mean_relative_error": float(np.mean(np.abs(estimates - true) / true)),
            "compared": compared}


def changed_occurrences(tx: Transactions, node_of_item: np.ndarray, labels: list[str]) -> float:
    """The share of the input's item occurrences (records as sets) published as another item or suppressed:
    the same figure whatever built the groups (a hierarchy's cut or dynamic hierarchies), unlike NCP,
    whose denominator is the hierarchy's leaves or the data's items."""
    d = tx.distinct()
    if not len(d.codes):
        return 0.0
    # decided once per item, then counted over the occurrences (records as sets: each item's records); the
    # same float as the mean over the occurrences (a count over a count)
    changed = np.array([n < 0 or labels[n] != str(x) for n, x in zip(node_of_item.tolist(), tx.items)], dtype=bool)
    held = itemsets.record_counts(tx)
    return int(held[changed].sum()) / len(d.codes)


def support_error(tx: Transactions, node_of_item: np.ndarray, size: int, top: int = TOP_ITEMSETS,
                  counted: tuple[int, dict[int, tuple[np.ndarray, np.ndarray]]] | None = None) -> dict:
    """Relative error of the estimated supports of the input's ``top`` most frequent itemsets (``counted``:
    see :func:`estimated_supports`)."""
    chosen = top_itemsets(tx, size, top)
    return relative_error(chosen, estimated_supports(tx, node_of_item, [names for _, names in chosen], counted))



def frequent_itemsets(tx: Transactions, size: int, top: int = TOP_CHART) -> list[dict]:
    """The ``top`` most frequent itemsets of 1..``size`` items (records as sets): items and support, by
    support descending, then smaller itemsets first, then the items' order."""
    base = max(len(tx.items), 1)
    found: list[tuple[int, int, list[str]]] = []
    for s in range(1, size + 1):
        keys, sup = itemsets.itemset_supports(tx, s, upto=size)
        if not len(keys):
            continue
        near = np.arange(len(sup))
        if 0 < top < len(sup):  # only those as frequent as the top-th (ties included) are sorted
            near = np.flatnonzero(sup >= np.partition(sup, len(sup) - top)[len(sup) - top])
        best = near[np.argsort(-sup[near], kind="stable")[:top]]
        for key, value in zip(itemsets.decode(keys[best], s, base), sup[best]):
            found.append((int(value), s, [str(tx.items[c]) for c in key]))
    found.sort(key=lambda f: (-f[0], f[1], f[2]))
    return [{"items": items, "support": support} for support, _, items in found[:top]]
