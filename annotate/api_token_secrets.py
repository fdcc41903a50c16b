"""What a personal API token is made of, with no database: "rwt_<prefix>_<secret>".

The secret is 256 random bits, and the token is kept only as its SHA-256 digest. A
password hasher (PBKDF2, Argon2) is slow on purpose, so that guessing a password a person
chose from its hash costs too much; a 256-bit random secret cannot be guessed from its
digest however fast the digest is, so the slowness would buy nothing and would cost
every scripted API request its time (and give anyone who sends bogus tokens a cheap way
to load the server). The same reasoning needs no salt: no two secrets are alike.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

TOKEN_MARK = "rwt"  # noqa: S105 - what a token starts with, not a secret
PREFIX_BYTES = 6  # 8 characters of URL-safe base64: looks a token up, names it on pages
SECRET_BYTES = 32  # 256 bits


@dataclass(frozen=True)
class TokenParts:
    prefix: str
    token: str


def token_generate() -> TokenParts:
    prefix = secrets.token_urlsafe(PREFIX_BYTES)
    # The prefix's characters include "_" and "-"; the token splits at the first "_"
    # after the mark, so a prefix may not hold one.
    prefix = prefix.replace("_", "x")
    return TokenParts(
        prefix=prefix, token=f"{TOKEN_MARK}_{prefix}_{secrets.token_urlsafe(SECRET_BYTES)}"
    )


def token_prefix(token: str) -> str | None:
    """The prefix of something that looks like a token, else None."""
    mark, _, rest = token.partition("_")
    prefix, _, secret = rest.partition("_")
    if mark != TOKEN_MARK or not prefix or not secret:
        return None
    return prefix


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(token: str, digest: str) -> bool:
    return hmac.compare_digest(token_digest(token), digest)
