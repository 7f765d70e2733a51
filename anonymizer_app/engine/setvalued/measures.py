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


def item_ncp(tx: Transactions, node_of_item: np.ndarray, loss_of_node) -> dict:
    """Table NCP (mean over occurrences) and the loss of every item that lost precision."""
    d = tx.distinct()
    nodes = node_of_item[d.codes]
    kept = nodes >= 0
    loss = np.ones(len(nodes))
    if kept.any():
        loss[kept] = loss_of_node(nodes[kept])
    per_item = np.ones(len(tx.items))
    present = node_of_item >= 0
    if present.any():
        per_item[present] = loss_of_node(node_of_item[present])
    return {"ncp": float(loss.mean()) if len(loss) else 0.0,
            "item_loss": {str(tx.items[i]): float(per_item[i]) for i in np.flatnonzero(per_item > 0)}}


def support_error(tx: Transactions, node_of_item: np.ndarray, size: int, top: int = TOP_ITEMSETS) -> dict:
    """Relative error of the estimated supports of the input's ``top`` most frequent itemsets."""
    offsets, codes = itemsets.sorted_sets(tx.offsets, tx.codes)
    base = max(len(tx.items), 1)
    candidates = []
    for s in range(1, size + 1):
        keys, sup = itemsets.supports(offsets, codes, s, base)
        for key, value in zip(keys, sup):
            candidates.append((int(value), s, int(key)))
    candidates.sort(key=lambda c: (-c[0], c[1], c[2]))
    chosen = candidates[:top]
    if not chosen:
        return {"itemsets": 0, "mean_relative_error": 0.0}
    # the release, as node ids
    nodes = node_of_item[tx.codes]
    keep = nodes >= 0
    lengths = np.bincount(tx.record_of[keep], minlength=tx.n)
    pub_off, pub_codes = itemsets.sorted_sets(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), nodes[keep])
    nbase = int(max(node_of_item.max(initial=0), pub_codes.max(initial=0))) + 1
    covered = np.bincount(node_of_item[node_of_item >= 0], minlength=nbase)
    released: dict[int, dict[int, int]] = {}
    errors = []
    for true, s, key in chosen:
        items = itemsets.decode(np.array([key]), s, base)[0]
        mapped = node_of_item[items]
        if (mapped < 0).any():
            errors.append(1.0)  # a suppressed item: the itemset is gone from the release
            continue
        distinct = np.unique(mapped)
        if len(distinct) not in released:
            rk, rs = itemsets.supports(pub_off, pub_codes, len(distinct), nbase)
            released[len(distinct)] = dict(zip(rk.tolist(), rs.tolist()))
        weights = nbase ** np.arange(len(distinct) - 1, -1, -1, dtype=np.int64)
        support = released[len(distinct)].get(int(distinct @ weights), 0)
        estimate = support * float(np.prod(1.0 / covered[mapped]))
        errors.append(abs(estimate - true) / true)
    return {"itemsets": len(chosen), "mean_relative_error": float(np.mean(errors))}


TOP_CHART = 15


def frequent_itemsets(tx: Transactions, size: int, top: int = TOP_CHART) -> list[dict]:
    """The ``top`` most frequent itemsets of 1..``size`` items (records as sets): items and support, by
    support descending, then smaller itemsets first, then the items' order."""
    offsets, codes = itemsets.sorted_sets(tx.offsets, tx.codes)
    base = max(len(tx.items), 1)
    found: list[tuple[int, int, list[str]]] = []
    for s in range(1, size + 1):
        keys, sup = itemsets.supports(offsets, codes, s, base)
        if not len(keys):
            continue
        best = np.argsort(-sup, kind="stable")[:top]
        for key, value in zip(itemsets.decode(keys[best], s, base), sup[best]):
            found.append((int(value), s, [str(tx.items[c]) for c in key]))
    found.sort(key=lambda f: (-f[0], f[1], f[2]))
    return [{"items": items, "support": support} for support, _, items in found[:top]]
