"""One BLAS thread while a run computes.

The searches, the gate and the report take dot products of vectors as long as the frequency set or the
table (class sizes against per-class losses: up to millions of entries). OpenBLAS splits a dot product of
more than 10,000 entries over its threads; on a machine whose cores are shared (a worker beside other
workers) those threads wait for each other at every call: a 6,480-node lattice evaluation of the 1M Adult
resample took 64 s CPU and 425 s wall with OpenBLAS's threads and 10 s CPU with one thread (load 13 on two
cores). The split also makes a float sum's last bit depend on how many cores the machine has; with one
thread every machine adds in the same order. Below 10,000 entries OpenBLAS uses one thread anyway, so small
tables give the same values either way.
"""

from __future__ import annotations

from contextlib import contextmanager

from threadpoolctl import threadpool_limits


@contextmanager
def one_blas_thread():
    """BLAS limited to one thread inside the block (also a decorator); the previous limit is put back after."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield
