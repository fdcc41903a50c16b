"""Saved views of the data manager: a name for the list's query string, private to its
creator or shared with everyone who may read the project's list."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.http import QueryDict

from annotate.models import Item, Project, Role
from annotate.selectors import project_roles_of_user
from config.exceptions import ApplicationError, PermissionDeniedError
from qc.filters import ItemListFilter
from qc.models import ItemView

NOT_A_VIEW_QUERY = ("page",)


def item_view_query_clean(query: str) -> str:
    """The list's query string without its page, refused when the list would refuse it."""
    data = QueryDict(query.lstrip("?"), mutable=True)
    for name in NOT_A_VIEW_QUERY:
        data.pop(name, None)
    filters = ItemListFilter(data=data, queryset=Item.objects.none())
    if not filters.is_valid():
        problems = "; ".join(
            f"{name}: {' '.join(map(str, m))}" for name, m in filters.errors.items()
        )
        raise ApplicationError(f"query: {problems}")
    return data.urlencode()


def _saved(view: ItemView) -> ItemView:
    try:
        with transaction.atomic():
            view.full_clean(validate_unique=False, validate_constraints=False)
            view.save()
    except IntegrityError:
        where = "the project" if view.shared else "your views"
        raise ApplicationError(f"name: {where} already has a view named {view.name!r}") from None
    return view


def item_view_create(
    *, project: Project, creator, name: str, query: str, shared: bool = False
) -> ItemView:
    return _saved(
        ItemView(
            project=project,
            creator=creator,
            name=name.strip(),
            query=item_view_query_clean(query),
            shared=shared,
        )
    )


def _may_change(view: ItemView, user) -> None:
    """Its creator may change a view; a project's admin may change a shared one too."""
    if view.creator_id == user.pk:
        return
    if view.shared and Role.ADMIN in project_roles_of_user(project=view.project, user=user):
        return
    raise PermissionDeniedError("only its creator (or, shared, an admin) may change this view")


def item_view_update(*, view: ItemView, acting_user, **changes) -> ItemView:
    _may_change(view, acting_user)
    if "name" in changes:
        view.name = changes["name"].strip()
    if "query" in changes:
        view.query = item_view_query_clean(changes["query"])
    if "shared" in changes:
        view.shared = changes["shared"]
    return _saved(view)


def item_view_delete(*, view: ItemView, acting_user) -> None:
    _may_change(view, acting_user)
    view.delete()
