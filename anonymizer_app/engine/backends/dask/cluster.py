"""Where a cluster run goes: the address of a Dask scheduler, or a local cluster of N worker processes.

``tcp://HOST:PORT`` (also ``tls://``) names a running ``dask scheduler`` whose workers see the table's
Parquet under the same path; ``local:N`` starts N worker processes on this machine for the run (one
thread each). dask and distributed are imported here, when a run asks for a cluster, never at import.
"""

from __future__ import annotations

import logging
import os
import re
from contextlib import contextmanager
from typing import Iterator

from ...errors import InputError

SETTING = "ANONYMIZER_DASK_CLUSTER"  # the web app's setting (and environment variable) naming the cluster
CONNECT_SECONDS = float(os.environ.get("ANONYMIZER_DASK_CONNECT_SECONDS", "10"))  # to reach the scheduler
MAX_LOCAL_WORKERS = 256
_REMOTE = re.compile(r"^(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$")
_LOCAL = re.compile(r"^local:(\d{1,4})$")


class ClusterError(InputError):
    """The cluster cannot be used as named (a bad address, an unreachable scheduler, no workers)."""


def check_address(address: str) -> str:
    """The address as given when it is one we can use; else a ClusterError saying what is expected."""
    text = (address or "").strip()
    local = _LOCAL.match(text)
    if local:
        n = int(local.group(1))
        if not 1 <= n <= MAX_LOCAL_WORKERS:
            raise ClusterError(f"cluster {address!r}: a local cluster has 1 to {MAX_LOCAL_WORKERS} workers, got {n}")
        return text
    remote = _REMOTE.match(text)
    if remote:
        if not 1 <= int(remote.group(3)) <= 65535:
            raise ClusterError(f"cluster {address!r}: the port must be 1..65535")
        return text
    raise ClusterError(f"cluster {address!r}: give the Dask scheduler as tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786) "
                       f"or local:N for N worker processes on this machine")


def _imports():
    try:
        import dask  # noqa: F401
        import distributed
    except ImportError:  # pragma: no cover - `make test` installs the `cluster` extra (`make run` does not)
        raise ClusterError("running on a Dask cluster needs dask[dataframe] and distributed: "
                           "pip install -e '.[cluster]'") from None
    return distributed


@contextmanager
def connect(address: str, memory_limit: str | int | None = None, timeout: float | None = None) -> Iterator:
    """A ``distributed.Client`` on the cluster named by ``address`` (closed, and a local cluster stopped,
    on leaving). ``memory_limit``: per worker of a local cluster (dask's syntax, e.g. "2GB")."""
    address = check_address(address)
    timeout = CONNECT_SECONDS if timeout is None else timeout
    distributed = _imports()
    local = _LOCAL.match(address)
    if local:
        # quiet: a command's stderr holds its own lines only (the scheduler and nannies run in this process)
        for name in ("distributed", "distributed.scheduler", "distributed.nanny", "distributed.core",
                     "distributed.http.proxy", "distributed.worker"):
            logging.getLogger(name).setLevel(logging.ERROR)
        # a daemonic process (a task in Celery's prefork pool) may not start processes: its local cluster's
        # workers are threads of this process then (the same result, less parallel: docs/operations/cluster.md)
        import multiprocessing

        processes = not multiprocessing.current_process().daemon
        cluster = distributed.LocalCluster(n_workers=int(local.group(1)), processes=processes, threads_per_worker=1,
                                           memory_limit=memory_limit or "auto", dashboard_address=":0",
                                           silence_logs=logging.ERROR)
        try:
            with distributed.Client(cluster) as client:
                yield client
        finally:
            cluster.close()
        return
    try:
        client = distributed.Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"cluster {address}: cannot reach the Dask scheduler within {timeout:g} s ({exc})") from None
    try:
        if not client.scheduler_info().get("workers"):
            try:
                client.wait_for_workers(1, timeout=timeout)
            except (OSError, TimeoutError):
                raise ClusterError(f"cluster {address}: the scheduler has no worker") from None
        yield client
    finally:
        client.close()
