"""The search's own lattice nodes (FullDomainRecoding.known_lattice) are written out only when read, from copies:
they equal the eager export, and the result holding them does not keep the search (its node cache, the problem)
alive."""

from __future__ import annotations

import gc

from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.engine.search import lattice_search
from tests.engine.test_lattice_node_figures import _table


def test_known_nodes_are_the_export_and_do_not_hold_the_search(monkeypatch):
    exports = []
    original = lattice_search.LatticeSearch.export

    def spy(self, optimum):  # the eager export, as the search's state stands when it ends
        out = original(self, optimum)
        exports.append(out)
        return out

    searches = []
    init = lattice_search.LatticeSearch.__init__

    def track(self, *args, **kwargs):
        init(self, *args, **kwargs)
        searches.append(self)
        monkeypatch.setattr(self, "export", lambda optimum: spy(self, optimum), raising=False)

    monkeypatch.setattr(lattice_search.LatticeSearch, "__init__", track)
    table, hs, _ = _table(4)
    result = pipeline.run(RunSpec.build(table, hs, "flash", k=3, suppression_limit=0.05, sensitive=None)).result
    known = result.known_lattice
    assert known is not None and searches
    eager = searches[-1].export(result.search["optimum_levels"].values())
    searches.clear()
    monkeypatch.undo()
    gc.collect()
    # type(), not isinstance(): a dead weakref proxy among the objects raises on isinstance
    assert not [o for o in gc.get_objects() if type(o) is lattice_search.LatticeSearch]
    assert dict(known) == eager and len(known["nodes"]) == len(eager["nodes"])
