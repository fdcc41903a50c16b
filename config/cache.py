"""The cache that CACHE_URL names, made to outlast a Redis outage.

Nothing this project keeps in the cache is the only copy of anything: the lease-expiry
sweep's "not before" mark, an import's live progress (the job row has the last saved
one), the crowd entry's rate-limit counters. Sessions are in the database
(config/sessions). So while Redis is away a cache read answers "nothing cached" and a
write is dropped, rather than failing the request: signed-in work goes on, and the cache
fills again when Redis returns. What that costs meanwhile: the lease-expiry sweep waits
for a worker who finds nothing (`annotate.services.assignments.leasing`), and the crowd
entry is not rate-limited.

django-redis does this with its IGNORE_EXCEPTIONS option (each ignored error is logged);
the socket timeouts bound how long a Redis that hangs, rather than refuses, holds a request.
"""

from __future__ import annotations

DJANGO_REDIS_BACKEND = "django_redis.cache.RedisCache"


def cache_outage_tolerant(cache: dict, *, timeout_seconds: float) -> dict:
    """`cache` (one entry of CACHES, as django-environ reads it from a URL) with, for a
    django-redis cache, Redis errors ignored and connects and replies bounded by
    `timeout_seconds`; any other cache as given."""
    if cache.get("BACKEND") != DJANGO_REDIS_BACKEND:
        return cache
    return {
        **cache,
        "OPTIONS": {
            **cache.get("OPTIONS", {}),
            "IGNORE_EXCEPTIONS": True,
            "SOCKET_CONNECT_TIMEOUT": timeout_seconds,
            "SOCKET_TIMEOUT": timeout_seconds,
        },
    }
