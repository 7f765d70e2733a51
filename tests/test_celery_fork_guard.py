"""The worker's own threads (sweep, retention check) hold celery.FORK_GUARD while they talk to the database;
a fork of the prefork pool (a new child after one died) waits until they let go, so that no child starts with a
copy of a held SQLite or driver mutex (the child would hang at its first query, its job queued for good)."""

import os
import threading
import time

from anonymizer_app import celery


def test_a_fork_waits_until_the_thread_holding_the_guard_lets_go():
    order: list[str] = []
    celery.FORK_GUARD.acquire()

    def let_go() -> None:
        time.sleep(0.3)
        order.append("released")
        celery.FORK_GUARD.release()

    holder = threading.Thread(target=let_go)
    holder.start()
    pid = os.fork()
    if pid == 0:  # the child: the guard is free again
        os._exit(1 if celery.FORK_GUARD.locked() else 0)
    order.append("forked")
    _, status = os.waitpid(pid, 0)
    holder.join()
    assert order == ["released", "forked"]
    assert os.waitstatus_to_exitcode(status) == 0
    assert not celery.FORK_GUARD.locked()
