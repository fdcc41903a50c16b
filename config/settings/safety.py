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
# and even a 32-character hex key (128 random bits, estimated near 116) passes. The
# estimate counts characters, not sequences, so a key made of a repeated pattern
# ("abcdefghij" * 4) or of words ("Password123" three times) is refused by the two checks
# after it: a run of REPEAT_RUN characters that comes back, and a common word or password.
MIN_KEY_LENGTH = 32
MIN_KEY_DISTINCT = 10
MIN_KEY_BITS = 96
# In a random 64-character hex key (the worst case: 16 symbols), some run of 8 characters
# comes back with a probability near 4e-7; in token_urlsafe(50)'s, far less.
REPEAT_RUN = 8
# Lower case, six characters or more (token_urlsafe(50) holds a given one with a probability
# near 6e-8): words people type when asked for a secret, and keyboard runs.
COMMON_KEY_WORDS = (
    "password",
    "passwd",
    "secret",
    "django",
    "letmein",
    "welcome",
    "changeme",
    "default",
    "example",
    "insecure",
    "qwerty",
    "asdfgh",
    "zxcvbn",
    "abcdef",
    "123456",
    "654321",
    "iloveyou",
    "monkey",
    "dragon",
    "master",
    "sunshine",
    "princess",
    "football",
    "baseball",
    "shadow",
    "trustno",
    "superman",
    "batman",
    "production",
    "development",
)


def secret_key_bits(key: str) -> float:
    """Length x the Shannon entropy of the key's character frequencies: what the key would
    carry if its characters were drawn independently at the rates they occur in it."""
    counts = Counter(key)
    return -sum(n * math.log2(n / len(key)) for n in counts.values())


def repeated_run(key: str, length: int = REPEAT_RUN) -> str | None:
    """The first run of `length` characters that occurs again later in `key`, or None."""
    seen: set[str] = set()
    for start in range(len(key) - length + 1):
        run = key[start : start + length]
        if run in seen:
            return run
        seen.add(run)
    return None


def common_word(key: str) -> str | None:
    lowered = key.lower()
    return next((word for word in COMMON_KEY_WORDS if word in lowered), None)


def secret_key_weakness(key: str) -> str | None:
    """Why `key` is no secret, or None."""
    if key in KNOWN_SECRET_KEYS or key.startswith("django-insecure-"):
        # startproject's key, which Django's own deployment check calls insecure.
        return "it is a published example key"
    if len(key) < MIN_KEY_LENGTH:
        return f"it has {len(key)} characters"
    if len(set(key)) < MIN_KEY_DISTINCT or secret_key_bits(key) < MIN_KEY_BITS:
        return "it repeats too few different characters"
    run = repeated_run(key)
    if run is not None:
        return f"it repeats a pattern ({run!r} comes back)"
    word = common_word(key)
    if word is not None:
        return f"it contains a common word or password ({word!r})"
    return None


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
    weakness = secret_key_weakness(secret_key or "")
    if weakness:
        problems.append(
            "DJANGO_SECRET_KEY must be a random value of 32+ characters (README: Operate it); "
            f"this one is refused: {weakness}"
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
