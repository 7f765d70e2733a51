"""engine.backends.dask.cluster: the addresses a run accepts, and a local cluster from a daemonic process
(a task of Celery's prefork pool) whose workers must then be threads."""

import subprocess
import sys
from pathlib import Path

import pytest

from anonymizer_app.engine.backends.dask.cluster import ClusterError, check_address

pytest.importorskip("distributed")
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("address", ["local:1", "local:16", "tcp://10.0.0.5:8786", "tls://scheduler.example:8786",
                                     "tcp://[::1]:8786", " tcp://host:1 "])
def test_accepted_addresses(address):
    assert check_address(address) == address.strip()


@pytest.mark.parametrize("address, message", [
    ("", "give the Dask scheduler as tcp://HOST:PORT"), ("local", "give the Dask scheduler"),
    ("local:0", "a local cluster has 1 to 256 workers, got 0"), ("local:999", "1 to 256 workers, got 999"),
    ("http://host:8786", "give the Dask scheduler"), ("tcp://host", "give the Dask scheduler"),
    ("tcp://host:0", "the port must be 1..65535"), ("tcp://host:70000", "the port must be 1..65535"),
    ("tcp://a b:1", "give the Dask scheduler"),
])
def test_refused_addresses(address, message):
    with pytest.raises(ClusterError, match=message):
        check_address(address)


# in a fresh interpreter (forking the test process itself, which runs threads under pytest-xdist, could hang)
DAEMON = r"""
import multiprocessing

def child(queue):
    from anonymizer_app.engine.backends.dask.cluster import connect

    with connect("local:2") as client:
        queue.put((len(client.scheduler_info()["workers"]), client.submit(sum, [1, 2]).result()))

if __name__ == "__main__":
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=child, args=(queue,), daemon=True)
    process.start()
    print(queue.get(timeout=120))
    process.join(timeout=60)
    print(process.exitcode)
"""


def test_a_daemonic_process_gets_a_local_cluster_of_threads():
    done = subprocess.run([sys.executable, "-c", DAEMON], cwd=REPO, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["(2, 3)", "0"], done.stdout + done.stderr
