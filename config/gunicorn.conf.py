"""gunicorn settings, each from the environment. Workers default to cores + 1, 6 threads each."""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
# Threads over processes: requests mostly wait on PostgreSQL, and on the 2-core machine
# of bench/load.py cores + 1 workers x 6 threads served 51-55 submits/s where the classic
# 2 x cores + 1 workers x 4 threads served 46.
workers = int(os.environ.get("GUNICORN_WORKERS", multiprocessing.cpu_count() + 1))
threads = int(os.environ.get("GUNICORN_THREADS", "6"))
worker_class = "gthread"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "20"))
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "5"))
# SO_REUSEPORT: the kernel spreads new connections across the workers instead of the
# busiest accepting most of them; at 50 keep-alive clients it halved the p99 of "next".
reuse_port = os.environ.get("GUNICORN_REUSE_PORT", "true").lower() == "true"
# Recycling guards against slow leaks; each recycle resets kept-alive connections, so not
# too often: at 50 busy clients 2,000 meant a recycle every 20 s or so.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "20000"))
max_requests_jitter = 2000
accesslog = None  # the app writes one structured line per request with its request id
errorlog = "-"

# How long a thread may hold the GIL before another may take it (Python's default: 5 ms).
# The threads of a worker mostly wait on PostgreSQL; when one becomes ready it waited for
# the running thread's whole slice. At 50 clients on the 2-core bench machine, 1 ms cut
# the p99 of "next" from 663-900 ms to 433-603 ms, with throughput unchanged or better.
switch_interval = float(os.environ.get("GUNICORN_SWITCH_INTERVAL", "0.001"))


def post_fork(server, worker):
    import sys

    sys.setswitchinterval(switch_interval)
