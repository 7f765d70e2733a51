"""SafePub (Bild, Kuhn & Prasser, PoPETs 2018): (ε,δ)-differentially private full-domain generalization.

- :mod:`.parameters`: β and k from ε, δ (Li, Qardaji & Su 2012's d(k, β, ε), binomial tails);
- :mod:`.mechanism`: the exponential mechanism (Gumbel-max) and the run's seeded or OS-drawn randomness;
- :mod:`.scores`: the paper's score functions with sensitivity 1;
- :mod:`.search`: the walk down the lattice;
- :mod:`.publication`: the publishing gate's checks of a SafePub release.

The algorithm itself is ``algorithms/safepub.py``; the privacy model ``privacy/differential_privacy.py``.
"""

from .parameters import SafePubParameters, derive

__all__ = ["SafePubParameters", "derive"]
