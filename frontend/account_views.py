"""Account pages: the project's members and the site's users (their actions call the
account API, annotate/account_apis.py), the page an invitation or reset link opens, and
the password page a one-time password leads to."""

from __future__ import annotations

from django.contrib.auth import login, update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from annotate import account_selectors, selectors
from annotate.account_tokens import account_link_tokens
from annotate.models import Role
from annotate.services import accounts as account_services
from crowd.throttling import client_address
from frontend.password_change_required import SESSION_KEY, password_change_done
from frontend.views import project_page_render

SIGN_IN_BACKEND = "config.auth.ModelBackend"
# Links that do not check out, per client address and window: a token is an HMAC, so
# guessing one is hopeless anyway; this keeps anyone from trying at scale.
LINK_FAILURE_LIMIT = 20
LINK_FAILURE_WINDOW_SECONDS = 15 * 60


@login_required
def users_page(request):
    if not (request.user.is_staff or request.user.is_superuser):
        raise PermissionDenied
    return render(
        request,
        "frontend/users.html",
        {
            "role_choices": Role.choices,
            "project_choices": account_selectors.account_project_choices(),
        },
    )


def _link_failures_key(request) -> str:
    return f"account-link-failures:{client_address(request)}"


def _link_failure_count(request) -> None:
    key = _link_failures_key(request)
    cache.add(key, 0, LINK_FAILURE_WINDOW_SECONDS)
    try:
        cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, LINK_FAILURE_WINDOW_SECONDS)


class AccountLinkPage(auth_views.PasswordResetConfirmView):
    """An invitation or reset link: Django's password-reset confirmation (the token moves
    from the URL into the session before the form shows, so it never leaks in a Referer)
    with the account-link tokens; the owner chooses a password, is signed in and lands in
    the project the link came from. A link that does not check out says only that, never
    whether the account exists."""

    template_name = "registration/account_link.html"
    token_generator = account_link_tokens

    def dispatch(self, request, *args, **kwargs):
        if (cache.get(_link_failures_key(request)) or 0) >= LINK_FAILURE_LIMIT:
            response = render(
                request, "registration/account_link.html", {"throttled": True}, status=429
            )
            response["Retry-After"] = str(LINK_FAILURE_WINDOW_SECONDS)
            return response
        response = super().dispatch(request, *args, **kwargs)
        if not self.validlink:
            _link_failure_count(request)
        return response

    def get_user(self, uidb64):
        user = super().get_user(uidb64)
        return user if user is not None and user.is_active else None

    def form_valid(self, form):
        user = account_services.account_password_set_from_link(
            user=form.user, password=form.cleaned_data["new_password1"]
        )
        del self.request.session[auth_views.INTERNAL_RESET_SESSION_TOKEN]
        login(self.request, user, backend=SIGN_IN_BACKEND)
        project = account_selectors.account_link_project(user=user)
        if project is not None and selectors.project_roles_of_user(project=project, user=user):
            return redirect("project-page", project.pk)
        return redirect("home")


class PasswordChangePage(auth_views.PasswordChangeView):
    """The signed-in user's password: where a one-time password must be replaced, and
    where anyone changes theirs (the old one is asked for either way)."""

    template_name = "registration/password_change.html"

    def dispatch(self, request, *args, **kwargs):
        # A study participant's account has no password: their platform's ids sign them in
        # (crowd.services), and giving it one would open a second way in.
        if request.user.is_authenticated and not request.user.has_usable_password():
            raise PermissionDenied
        return super().dispatch(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        return {
            **super().get_context_data(**kwargs),
            "next": self._next(),
            "password_change_required": bool(self.request.session.get(SESSION_KEY)),
        }

    def form_valid(self, form):
        user = account_services.account_password_change(
            user=form.user, password=form.cleaned_data["new_password1"]
        )
        update_session_auth_hash(self.request, user)
        password_change_done(self.request.session)
        return redirect(self._next() or reverse("home"))

    def _next(self) -> str:
        target = self.request.POST.get("next") or self.request.GET.get("next") or ""
        allowed = url_has_allowed_host_and_scheme(
            target, allowed_hosts={self.request.get_host()}, require_https=self.request.is_secure()
        )
        return target if allowed else ""


@login_required
def project_members_page(request, project_id: int):
    return project_page_render(
        request,
        project_id,
        "members",
        "frontend/project_members.html",
        lambda project, roles: {"role_choices": Role.choices},
    )
