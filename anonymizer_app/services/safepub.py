"""SafePub runs ((ε, δ)-differential privacy): the parameters derived from a query's ε and δ, whether a run was
published under differential privacy, and why such a run has no lattice. The pages (views/safepub.py,
views/lattice.py) and the API share these."""

from __future__ import annotations

from ..engine.privacy.differential_privacy import EDDifferentialPrivacy
from ..engine.safepub.parameters import DEFAULT_SEARCH_SHARE, SafePubParameters, derive

LATTICE_REFUSAL = ("This run was published under (ε,δ)-differential privacy by SafePub, which draws the published "
                   "generalization by the exponential mechanism within the privacy budget. Choosing or keeping "
                   "another node of the lattice by looking at its utility reads the data outside that budget "
                   "and would spend privacy the guarantee does not account for, so SafePub runs have no "
                   "solution lattice. To publish differently, start a new SafePub run (it spends its ε again).")


def derive_from(query) -> SafePubParameters:
    """The parameters of a query's ε, δ (default 1e-6, the run form's) and search share (default 10%); the
    web's parameters.json and the API answer this. InputError names the bad value."""
    return derive(query.get("epsilon", ""), query.get("delta", "1e-6"),
                  query.get("search_share") or DEFAULT_SEARCH_SHARE)


def is_dp_run(job) -> bool:
    """A run published under (ε,δ)-differential privacy (SafePub): it has no lattice and no node to keep."""
    return job.algorithm == "safepub" or any(m.get("model") == EDDifferentialPrivacy.name
                                             for m in (job.models or []))
