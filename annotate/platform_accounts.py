"""Which accounts sign in through a crowd platform, as the app that makes them knows them:
`crowd` registers its check when it loads (annotate may not import it). Kept apart from
the selectors so that the models' validation can ask without importing them."""

from __future__ import annotations

from collections.abc import Callable, Collection

# A check takes user ids and returns those of platform accounts.
PlatformAccountCheck = Callable[[Collection[int]], set[int]]
_platform_account_checks: list[PlatformAccountCheck] = []


def platform_account_check_register(check: PlatformAccountCheck) -> None:
    if check not in _platform_account_checks:
        _platform_account_checks.append(check)


def platform_accounts(user_ids: Collection[int]) -> set[int]:
    found: set[int] = set()
    for check in _platform_account_checks:
        found |= check(user_ids)
    return found
