"""R's default random numbers (Mersenne-Twister, ``set.seed``; ``rnorm`` by inversion), re-implemented for
tests that reproduce an sdcMicro value computed from ``set.seed(s)`` draws (the reference README's fixtures
section describes the same construction). numpy's MT19937 is the same generator; only the seeding and the
conversion to doubles are R's."""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

_MASK = 0xFFFFFFFF
_BIG = 134217728.0  # 2^27: R's INVERSION draws two uniforms per normal
_I2_32M1 = 2.328306437080797e-10  # 1/(2^32 - 1), R's fixup bound


class RRandom:
    """``set.seed(seed)`` then ``runif``/``rnorm`` as R (RNGkind Mersenne-Twister, Inversion)."""

    def __init__(self, seed: int) -> None:
        s = seed & _MASK
        for _ in range(50):  # R's initial scrambling
            s = (69069 * s + 1) & _MASK
        key = []
        for _ in range(625):  # dummy[0] (mti, then fixed up to 624) and the 624 state words
            s = (69069 * s + 1) & _MASK
            key.append(s)
        self._bits = np.random.MT19937()
        self._bits.state = {"bit_generator": "MT19937",
                            "state": {"key": np.array(key[1:], dtype=np.uint32), "pos": 624}}

    def unif_rand(self, n: int) -> np.ndarray:
        u = self._bits.random_raw(n).astype(np.float64) * 2.3283064365386963e-10
        return np.clip(u, 0.5 * _I2_32M1, 1.0 - 0.5 * _I2_32M1)  # R's fixup: strictly inside (0, 1)

    def runif(self, n: int, low: float = 0.0, high: float = 1.0) -> np.ndarray:
        return low + (high - low) * self.unif_rand(n)

    def norm_rand(self, n: int) -> np.ndarray:
        u = self.unif_rand(2 * n)
        return ndtri((np.floor(_BIG * u[0::2]) + u[1::2]) / _BIG)
