"""Prepared statements give the same model instances as the ORM, on SQLite and PostgreSQL."""

from django.contrib.auth import get_user_model
from django.utils import timezone

from annotate.models import Project
from config.prepared_sql import PreparedStatement, columns
from tests.annotate.workflow_helpers import make_project
from tests.factories import UserFactory

_USER = PreparedStatement(
    "rw_test_user",
    f"SELECT 'extra value' AS note, {columns(get_user_model(), 'u')} "  # noqa: S608
    f"FROM {get_user_model()._meta.db_table} u WHERE u.id = %(id)s",
    [("id", "bigint")],
)
_PROJECT = PreparedStatement(
    "rw_test_project",
    f"SELECT {columns(Project, 'p')} FROM {Project._meta.db_table} p WHERE p.id = %(id)s",  # noqa: S608
    [("id", "bigint")],
)


def _field_values(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}


def test_instances_match_what_the_orm_loads_with_converted_values(db):
    user = UserFactory()
    user.last_login = timezone.now()
    user.save()

    (loaded,) = _USER.instances(get_user_model(), {"id": user.pk}, extra=("note",))

    assert _field_values(loaded) == _field_values(get_user_model().objects.get(pk=user.pk))
    assert loaded.note == "extra value"
    assert loaded.last_login.tzinfo is not None, "datetimes come back converted, not as text"
    assert loaded._state.adding is False and loaded._state.db == "default"


def test_instances_convert_every_field_type_a_project_has(db):
    project = make_project()

    (loaded,) = _PROJECT.instances(Project, {"id": project.pk})

    assert _field_values(loaded) == _field_values(Project.objects.get(pk=project.pk))


def test_instances_of_no_row_is_an_empty_list(db):
    assert _USER.instances(get_user_model(), {"id": 10**12}) == []


_OPTIONAL_USER = PreparedStatement(
    "rw_test_optional_user",
    f"SELECT p.name, {columns(get_user_model(), 'u')} FROM {Project._meta.db_table} p "  # noqa: S608
    f"LEFT JOIN {get_user_model()._meta.db_table} u ON u.id = %(user)s WHERE p.id = %(id)s",
    [("id", "bigint"), ("user", "bigint")],
)


def test_rows_with_instances_give_the_leading_columns_and_none_for_an_outer_join_miss(db):
    project, user = make_project(), UserFactory()

    found = _OPTIONAL_USER.rows_with_instances(
        get_user_model(), {"id": project.pk, "user": user.pk}, leading=1
    )
    missed = _OPTIONAL_USER.rows_with_instances(
        get_user_model(), {"id": project.pk, "user": 10**12}, leading=1
    )

    assert [(lead, u.pk) for lead, u in found] == [((project.name,), user.pk)]
    assert missed == [((project.name,), None)]
