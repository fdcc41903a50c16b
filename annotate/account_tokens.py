"""The token of an invitation or password-reset link: Django's password-reset token under
a salt of its own, so that no other token of the site passes for it.

It is signed with the secret key and dated, and stops working when it has been used (the
password it sets changes the hash), when its owner signs in, when a newer link or
password is issued, when the account is deactivated, or after PASSWORD_RESET_TIMEOUT.
"""

from django.contrib.auth.tokens import PasswordResetTokenGenerator


class AccountLinkTokenGenerator(PasswordResetTokenGenerator):
    key_salt = "annotate.account_tokens.AccountLinkTokenGenerator"

    def _make_hash_value(self, user, timestamp):
        return f"{super()._make_hash_value(user, timestamp)}{user.is_active}"


account_link_tokens = AccountLinkTokenGenerator()
