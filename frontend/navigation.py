"""The project's pages, grouped in tabs by what people do there, and who may open each.

One table: the page views take their roles from it, and the header's tabs show a tab when the
member's roles open at least one of its pages, linking to the first of them. So a page's
permission and its place in the navigation cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from annotate.models import Role

EVERY_ROLE = frozenset(Role.values)


@dataclass(frozen=True)
class ProjectPage:
    key: str
    url_name: str
    label: str | Promise
    roles: frozenset[str]
    # A page that needs more than the project in its URL (an item) is reached from another
    # page, never from the navigation.
    listed: bool = True


@dataclass(frozen=True)
class ProjectTab:
    key: str
    label: str | Promise
    pages: tuple[ProjectPage, ...]


def _roles(*roles: str) -> frozenset[str]:
    return frozenset(roles)


PROJECT_TABS: tuple[ProjectTab, ...] = (
    ProjectTab(
        "overview",
        _("Overview"),
        (ProjectPage("overview", "project-page", _("Overview"), EVERY_ROLE),),
    ),
    ProjectTab(
        "data",
        _("Data and imports"),
        (
            # The data manager: every item with its status, annotations and agreement.
            ProjectPage(
                "items",
                "data-items-page",
                _("Data manager"),
                _roles(Role.ADMIN, Role.CURATOR, Role.RESEARCHER),
            ),
            ProjectPage("data", "project-data", _("Imports"), _roles(Role.ADMIN)),
            ProjectPage(
                "item",
                "data-item-page",
                _("Item"),
                _roles(Role.ADMIN, Role.CURATOR, Role.RESEARCHER),
                listed=False,
            ),
        ),
    ),
    ProjectTab(
        "instructions",
        _("Instructions"),
        (
            ProjectPage(
                "instructions", "project-instructions", _("Instructions"), _roles(Role.ADMIN)
            ),
        ),
    ),
    ProjectTab(
        "workers",
        _("Workers and qualification"),
        (
            ProjectPage(
                "workers", "project-workers", _("Members and progress"), _roles(Role.ADMIN)
            ),
            # Accounts of the members: create, reset passwords, deactivate (account_views.py).
            ProjectPage("members", "project-members", _("Accounts"), _roles(Role.ADMIN)),
            ProjectPage(
                "quality", "quality-page", _("Qualification and quality"), _roles(Role.ADMIN)
            ),
        ),
    ),
    ProjectTab(
        "review",
        _("Review pipeline"),
        (
            ProjectPage("pipeline", "project-pipeline", _("Pipeline"), _roles(Role.ADMIN)),
            ProjectPage(
                "review", "review-page", _("Review queue"), _roles(Role.ADMIN, Role.REVIEWER)
            ),
            # Adjudicating reviewed work into gold sets: the pipeline's last step (a tab of
            # its own would push the admin's last tabs off a laptop's width).
            ProjectPage(
                "curation", "curation-page", _("Curation"), _roles(Role.ADMIN, Role.CURATOR)
            ),
            ProjectPage(
                "curation-item",
                "curation-item-page",
                _("Curate an item"),
                _roles(Role.ADMIN, Role.CURATOR),
                listed=False,
            ),
        ),
    ),
    ProjectTab(
        "agreement",
        _("Agreement"),
        (
            ProjectPage(
                "agreement", "agreement-page", _("Agreement"), _roles(Role.ADMIN, Role.RESEARCHER)
            ),
        ),
    ),
    ProjectTab(
        "results",
        _("Export and results"),
        (
            ProjectPage(
                "results",
                "project-results",
                _("Exports and results board"),
                _roles(Role.ADMIN, Role.RESEARCHER),
            ),
            ProjectPage(
                "datasheet", "datasheet-page", _("Datasheet"), _roles(Role.ADMIN, Role.RESEARCHER)
            ),
        ),
    ),
    ProjectTab(
        "perturbations",
        _("Perturbations"),
        (
            ProjectPage(
                "perturbations",
                "perturbations-page",
                _("Perturbations"),
                _roles(Role.ADMIN, Role.RESEARCHER, Role.AUTHOR, Role.CHECKER),
            ),
            ProjectPage(
                "perturb-check",
                "perturb-check-page",
                _("Check perturbations"),
                _roles(Role.ADMIN, Role.CHECKER),
            ),
            ProjectPage(
                "perturb-author",
                "perturb-author-page",
                _("Write a perturbation"),
                _roles(Role.ADMIN, Role.AUTHOR),
                listed=False,
            ),
        ),
    ),
    ProjectTab(
        "settings",
        _("Settings"),
        (ProjectPage("settings", "project-settings", _("Settings"), _roles(Role.ADMIN)),),
    ),
)

_PAGES = {page.key: (tab, page) for tab in PROJECT_TABS for page in tab.pages}


def project_page_roles(key: str) -> tuple[str, ...]:
    """The roles that open a page, in the form project_get_for_user takes them."""
    return tuple(sorted(_PAGES[key][1].roles))


@dataclass(frozen=True)
class NavLink:
    key: str
    label: str | Promise
    url: str
    current: bool


@dataclass(frozen=True)
class ProjectNavigation:
    tabs: list[NavLink]
    # The pages of the current tab, when it has more than one the member may open.
    subpages: list[NavLink]
    page_label: str | Promise
    # The breadcrumb after the project: the tab, then the page when it is not the tab's own.
    trail: list[NavLink]


def project_navigation(*, project_id: int, roles: set[str], current: str) -> ProjectNavigation:
    """The tabs `roles` open, the current tab marked, and the current tab's own pages."""
    current_tab, current_page = _PAGES[current]
    tabs = []
    subpages: list[NavLink] = []
    trail: list[NavLink] = []
    for tab in PROJECT_TABS:
        open_pages = [p for p in tab.pages if p.listed and p.roles.intersection(roles)]
        if not open_pages:
            continue
        is_current = tab.key == current_tab.key
        tabs.append(
            NavLink(
                tab.key, tab.label, reverse(open_pages[0].url_name, args=[project_id]), is_current
            )
        )
        if not is_current:
            continue
        if len(open_pages) > 1:
            subpages = [
                NavLink(p.key, p.label, reverse(p.url_name, args=[project_id]), p.key == current)
                for p in open_pages
            ]
        trail.append(tabs[-1])
        if current_page != open_pages[0]:
            trail.append(NavLink(current_page.key, current_page.label, "", True))
    return ProjectNavigation(
        tabs=tabs, subpages=subpages, page_label=current_page.label, trail=trail
    )
