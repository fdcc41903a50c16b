"""Export names valid on every OS (docs/design/architecture.md#the-interface): a pure function,
tested without a database."""

import re

import pytest

from exports.file_names import portable_file_name

# What Windows, macOS (":") and Linux ("/") refuse in a name, and the control characters.
REFUSED = re.compile(r'[<>:"/\\|?*\x00-\x1f]')


@pytest.mark.parametrize(
    ("typed", "portable"),
    [
        ("Movies: v2 / test", "Movies_v2_test"),
        ("Movies", "Movies"),
        ('a<b>c:d"e/f\\g|h?i*j', "a_b_c_d_e_f_g_h_i_j"),
        ("  spaced   out  ", "spaced_out"),
        ("tab\tand\nnewline", "tab_and_newline"),
        ("情感分析：第二轮", "情感分析_第二轮"),
        ("..hidden", "hidden"),
        ("-rf", "rf"),
        ("ends with dots...", "ends_with_dots"),
        ("snake_case-and-dashes", "snake_case-and-dashes"),
        ("v1.2 release", "v1.2_release"),
        ("CON", "CON_"),
        ("nul.txt", "nul_.txt"),
        ("com1.export.zip", "com1_.export.zip"),
        ("Console", "Console"),
    ],
)
def test_a_typed_name_becomes_one_every_os_accepts(typed, portable):
    assert portable_file_name(typed) == portable


@pytest.mark.parametrize("typed", ["", "   ", ":::", "///", "...", "?*"])
def test_a_name_with_nothing_portable_falls_back(typed):
    assert portable_file_name(typed, fallback="export") == "export"


def test_decomposed_letters_are_stored_composed():
    assert portable_file_name("Cafe\u0301") == "Caf\u00e9"


def test_a_long_name_is_cut_on_a_character_boundary():
    name = portable_file_name("影" * 200, max_bytes=100)

    assert len(name.encode("utf-8")) <= 100
    assert name == "影" * 33


@pytest.mark.parametrize(
    "typed", ["a:b", "x/y", "C:\\dir", "tab\there", 'quote"d', "pipe|d", "<>", "question?"]
)
def test_no_refused_character_survives(typed):
    assert not REFUSED.search(portable_file_name(typed))


def test_an_export_of_a_project_with_a_colon_names_its_zip_and_folder_portably(
    db, django_capture_on_commit_callbacks
):
    import io
    import zipfile

    from django.urls import reverse

    from annotate.models import ProjectMembership, Role
    from tests.conftest import client_for
    from tests.exports.test_export_chunks import make_study, published, run_export
    from tests.factories import UserFactory

    project = make_study(items=3)
    project.name = "Movies: v2 / test"
    project.save(update_fields=["name"])
    researcher = UserFactory(username="researcher")
    ProjectMembership.objects.create(project=project, user=researcher, role=Role.RESEARCHER)

    export = run_export(project, django_capture_on_commit_callbacks)
    response = client_for(researcher).get(
        reverse("exports:export-download", args=[project.pk, export.pk])
    )

    with zipfile.ZipFile(io.BytesIO(published(export))) as archive:
        roots = {name.split("/", 1)[0] for name in archive.namelist()}
    assert roots == {"Movies_v2_test-export"}
    disposition = response["Content-Disposition"]
    assert f'filename="Movies_v2_test-export-{export.pk}.zip"' in disposition
    assert not REFUSED.search(disposition.split("filename=", 1)[1].strip('"'))
