"""gunicorn settings, each from the environment.

The production stack puts nginx in front (config/nginx/, docker-compose.yml's `proxy`):
nginx reads whole requests and feeds slow readers, so gunicorn only ever sees complete
requests and fast readers. Behind it, gunicorn runs synchronous workers, each handling
one request at a time and accepting the next from the one listening socket they share.
That socket's queue is a single first-come first-served line for all workers. With
threaded workers (gthread) each worker accepts connections whether or not it has a free
thread, so a request could wait behind a busy worker while another stood idle: on the
2-core machine of bench/load.py, at 50 annotators, gthread's p99 was 2.3 times its
median and sync workers' 1.35 times, at the same throughput.
"""

import gc
import multiprocessing
import os
import sys

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "sync")
# A request spends part of its time waiting on PostgreSQL and Redis, so a few more
# workers than cores keep the cores busy; more than that only adds switching. On the
# 2-core bench machine 4 and 5 workers served the most, 12 a quarter less.
workers = int(os.environ.get("GUNICORN_WORKERS", 2 * multiprocessing.cpu_count() + 1))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))  # for the gthread worker class
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "20"))
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "5"))
# One socket per worker (SO_REUSEPORT) would give each worker its own queue again; the
# shared socket is what makes the line first-come first-served.
reuse_port = os.environ.get("GUNICORN_REUSE_PORT", "false").lower() == "true"
# Load the application once in the master, before forking: workers start warm (no import
# of every view on their first request, which took 1.5 s here and fell on whichever
# annotator came first) and share the loaded code's memory.
preload_app = os.environ.get("GUNICORN_PRELOAD", "true").lower() == "true"
# Recycling guards against slow leaks; a preloaded worker restarts in milliseconds.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "20000"))
max_requests_jitter = 2000
# gunicorn believes X-Forwarded-Proto (wsgi.url_scheme) only from the proxies Django
# believes it from (config/settings/production.py).
forwarded_allow_ips = os.environ.get("DJANGO_TRUSTED_PROXIES", "127.0.0.1,::1")
accesslog = None  # the app writes one structured line per request with its request id
errorlog = "-"

# How long a thread may hold the GIL before another may take it (Python's default: 5 ms).
# Matters for the gthread worker class, whose threads mostly wait on PostgreSQL: at 50
# clients on the 2-core bench machine, 1 ms cut its p99 by a third.
switch_interval = float(os.environ.get("GUNICORN_SWITCH_INTERVAL", "0.001"))


def pre_fork(server, worker):
    # The preloaded application's objects (modules, classes, settings) live as long as the
    # process: moved out of the garbage collector's generations, they are never traversed
    # again, and the workers' pages holding them stay shared with the master. On the load
    # bench this cut the instructions per "next" + "submit" by 1.3 %.
    gc.freeze()


def post_fork(server, worker):
    sys.setswitchinterval(switch_interval)
