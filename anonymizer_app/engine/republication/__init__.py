"""Re-publication of a changing table: m-invariance (Xiao & Tao 2007; seed 003 §2.6).

- :mod:`.history`: the state kept between releases (signatures by keyed record id);
- :mod:`.invariance`: the groups of one release (division, balancing, assignment, counterfeits, split, boxes);
- :mod:`.check`: the independent check of a release's published rows against the history (the gate's).
"""

from .history import FORMAT, Entry, History, Republication, record_keys
from .invariance import Grouping, m_invariant_groups

__all__ = ["FORMAT", "Entry", "Grouping", "History", "Republication", "m_invariant_groups", "record_keys"]
