"""Checks that production settings must pass before the process starts."""

import math
from collections import Counter

from django.core.exceptions import ImproperlyConfigured
from publicsuffixlist import PublicSuffixList

DEFAULT_SECRET_KEY = "insecure-development-key-change-me"  # noqa: S105 - refused in production
# .env.example's value: copied as it stands, it passes every test of randomness below.
EXAMPLE_SECRET_KEY = "replace-with-a-long-random-string-of-at-least-32-characters"  # noqa: S105
KNOWN_SECRET_KEYS = {DEFAULT_SECRET_KEY, EXAMPLE_SECRET_KEY}

# A key is refused unless it has MIN_KEY_LENGTH characters, MIN_KEY_DISTINCT different ones
# and MIN_KEY_BITS by the estimate below. A typed key ("a" * 32, a word and a run of one
# letter) fails; what secrets.token_urlsafe(50) prints (README) is far above every bound,
# and even a 32-character hex key (128 random bits, estimated near 116) passes. Repeated
# patterns of many characters ("abcdefghij" * 4) are not caught: the estimate counts
# characters, not sequences.
MIN_KEY_LENGTH = 32
MIN_KEY_DISTINCT = 10
MIN_KEY_BITS = 96


def secret_key_bits(key: str) -> float:
    """Length x the Shannon entropy of the key's character frequencies: what the key would
    carry if its characters were drawn independently at the rates they occur in it."""
    counts = Counter(key)
    return -sum(n * math.log2(n / len(key)) for n in counts.values())


def _secret_key_weak(key: str) -> bool:
    return (
        key in KNOWN_SECRET_KEYS
        # startproject's key, which Django's own deployment check calls insecure.
        or key.startswith("django-insecure-")
        or len(key) < MIN_KEY_LENGTH
        or len(set(key)) < MIN_KEY_DISTINCT
        or secret_key_bits(key) < MIN_KEY_BITS
    )


def _host_too_wide(host: str) -> bool:
    """'*', an empty entry, and a leading-dot entry (the domain and every subdomain) whose
    domain is empty or a public suffix ('.', '.com', '.co.uk', '.github.io'): each lets any
    site's name through, so the Host header protects nothing."""
    host = host.strip()
    if host in {"*", ""}:
        return True
    if not host.startswith("."):
        return False
    domain = host[1:]
    if not domain or domain.startswith(".") or any(c.isspace() for c in domain):
        return True
    return PublicSuffixList().is_public(domain.lower())


def unsafe_settings(
    *, debug: bool, secret_key: str, allowed_hosts: list[str], broker_url: str
) -> list[str]:
    """What production refuses in these settings, one line per problem."""
    problems = []
    if debug:
        problems.append("DJANGO_DEBUG must be false")
    if _secret_key_weak(secret_key or ""):
        problems.append(
            "DJANGO_SECRET_KEY must be a random value of 32+ characters (README: Operate it)"
        )
    if not allowed_hosts or any(_host_too_wide(host) for host in allowed_hosts):
        problems.append(
            "DJANGO_ALLOWED_HOSTS must list the real host names "
            "(no '*', no '.' or wildcard of a public suffix such as '.com')"
        )
    # Without a broker every task runs eagerly inside the web request that queued it: an
    # export or an import of 100,000 items would outlast the server's timeout and die with
    # the worker process gunicorn kills, half done.
    if not (broker_url or "").strip():
        problems.append(
            "CELERY_BROKER_URL must name the job queue's broker (e.g. redis://redis:6379/0), "
            "or background jobs run inside web requests"
        )
    return problems


def refuse_unsafe_settings(
    *, debug: bool, secret_key: str, allowed_hosts: list[str], broker_url: str
) -> None:
    problems = unsafe_settings(
        debug=debug, secret_key=secret_key, allowed_hosts=allowed_hosts, broker_url=broker_url
    )
    if problems:
        raise ImproperlyConfigured("Unsafe production settings: " + "; ".join(problems))
