"""gunicorn's settings for `make serve` and benchmarks/bench_load.py (gunicorn reads ./gunicorn.conf.py; the
environment variables below override, command-line flags override both).

Measured with benchmarks/bench_load.py (20 users, 2 Celery workers, this 2-core machine; docs/operations/deployment.md):
- keepalive: gunicorn's default of 2 s is inside a client's pause between two requests (a person reading a
  page; locust's users wait 1 to 3 s). A client that sends its next request on a kept-alive connection just as
  the server closes it after 2 s idle gets "connection reset by peer": the benchmark's only errors. Idle
  connections are kept 75 s, longer than any such pause and than the usual proxy's idle timeout to its
  upstream (nginx keepalive_timeout: 60 s), so the server is never the side that closes a connection a
  client is about to reuse. A gthread worker keeps idle connections in its poller, not in a thread.
- workers x threads: 4 processes keep both cores busy with Python work (a thread runs Python under its
  process's lock, the GIL); 4 threads each let short pages pass a long request (an upload being parsed, the
  20 logins of the benchmark's first seconds, whose password hashing takes ~0.4 s of CPU each) instead of
  queueing behind it: with 4 x 2 the clients waited far longer than the server worked (p95 933 ms seen by
  locust against 256 ms in gunicorn), with 4 x 4 the gap closed (450 against 330 ms) on an equally busy
  machine.
"""

import os

bind = os.environ.get("BIND", "127.0.0.1:8000")
workers = int(os.environ.get("WEB_WORKERS", "4"))
threads = int(os.environ.get("WEB_THREADS", "4"))
worker_class = "gthread"
keepalive = int(os.environ.get("WEB_KEEPALIVE", "75"))
timeout = 120  # a request (an upload of ANONYMIZER_MAX_UPLOAD_MB) may take this long; the proxy waits 130 s
# the workers' heartbeat files in memory, not on a disk a busy worker may be writing to
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
accesslog = os.environ.get("WEB_ACCESS_LOG", "-")
# the request, its status and the microseconds the server spent on it
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(D)sus'
