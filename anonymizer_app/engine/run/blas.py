"""One BLAS thread while a run computes.

The searches, the gate and the report take dot products of vectors as long as the frequency set or the
table (class sizes against per-class losses: up to millions of entries). OpenBLAS splits a dot product of
more than 10,000 entries over its threads; on a machine whose cores are shared (a worker beside other
workers) those threads wait for each other at every call: a 6,480-node lattice evaluation of the 1M Adult
resample took 64 s CPU and 425 s wall with OpenBLAS's threads and 10 s CPU with one thread (load 13 on two
cores). The split also makes a float sum's last bit depend on how many cores the machine has; with one
thread every machine adds in the same order. Below 10,000 entries OpenBLAS uses one thread anyway, so small
tables give the same values either way.

Finding the loaded BLAS libraries walks every shared object of the process (about 2 ms): the controller is
found once and found again only after an import (a new library can only come with one), and a block inside
another (pipeline.run → compute → search) leaves the outer block's limit as it is.
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from typing import Iterator

from threadpoolctl import ThreadpoolController

_LOCAL = threading.local()
_FOUND: tuple[int, ThreadpoolController] | None = None


def _controller() -> ThreadpoolController:
    global _FOUND
    modules = len(sys.modules)
    if _FOUND is None or _FOUND[0] != modules:
        _FOUND = (modules, ThreadpoolController())
    return _FOUND[1]


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS limited to one thread inside the block (also a decorator); the previous limit is put back after."""
    if getattr(_LOCAL, "depth", 0):
        _LOCAL.depth += 1
        try:
            yield
        finally:
            _LOCAL.depth -= 1
        return
    with _controller().limit(limits=1, user_api="blas"):
        _LOCAL.depth = 1
        try:
            yield
        finally:
            _LOCAL.depth = 0
