"""The interface language: each person picks it, the browser's preference is the default,
every page renders in Chinese, and the API keeps English."""

import json

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotate.models import ProjectMembership, Role, TaskType
from frontend.models import UserPreference
from tests.annotate.workflow_helpers import make_project
from tests.factories import UserFactory

CHINESE_BROWSER = "zh-CN,zh;q=0.9,en;q=0.5"


def page(client, url, **headers) -> str:
    response = client.get(url, **headers)
    assert response.status_code == 200, (url, response.status_code)
    return response.content.decode()


def test_a_choice_is_stored_and_comes_back_at_the_next_sign_in(db, client):
    user = UserFactory(username="li")
    client.force_login(user)

    response = client.post("/language/", {"language": "zh-hans", "next": "/"})

    assert response.status_code == 302
    assert response["Location"] == "/"
    assert UserPreference.objects.get(user=user).language == "zh-hans"
    assert "我的项目" in page(client, "/")
    # Another browser that asks for English still gets the stored choice once signed in.
    elsewhere = Client()
    elsewhere.force_login(user)
    home = page(elsewhere, "/", HTTP_ACCEPT_LANGUAGE="en")
    assert "我的项目" in home
    assert '<html lang="zh-hans">' in home


def test_a_sign_in_reads_the_stored_choice_by_its_user_without_ordering(db, client):
    """One row by a unique key, read at each sign-in (each arrival of a crowd launch):
    no ORDER BY compiled for it, with a stored choice and without one."""
    chose, did_not = UserFactory(), UserFactory()
    UserPreference.objects.create(user=chose, language="zh-hans")

    with CaptureQueriesContext(connection) as queries:
        Client().force_login(chose)
        Client().force_login(did_not)

    reads = [q["sql"] for q in queries.captured_queries if "frontend_userpreference" in q["sql"]]
    assert len(reads) == 2
    assert [sql for sql in reads if "ORDER BY" in sql] == []


def test_switching_back_to_english(db, client):
    user = UserFactory(username="li")
    UserPreference.objects.create(user=user, language="zh-hans")
    client.force_login(user)
    assert "我的项目" in page(client, "/")

    client.post("/language/", {"language": "en", "next": "/"})

    assert "Your projects" in page(client, "/", HTTP_ACCEPT_LANGUAGE=CHINESE_BROWSER)
    assert UserPreference.objects.get(user=user).language == "en"


def test_without_a_choice_the_browser_decides(db, client):
    client.force_login(UserFactory(username="li"))

    assert "我的项目" in page(client, "/", HTTP_ACCEPT_LANGUAGE=CHINESE_BROWSER)
    assert "Your projects" in page(client, "/", HTTP_ACCEPT_LANGUAGE="en-GB,en;q=0.8")
    assert "Your projects" in page(client, "/")
    assert not UserPreference.objects.exists()


def test_anonymous_visitors_follow_accept_language_and_may_switch(db, client):
    assert "用户名" in page(client, "/accounts/login/", HTTP_ACCEPT_LANGUAGE=CHINESE_BROWSER)
    assert "User name" in page(client, "/accounts/login/", HTTP_ACCEPT_LANGUAGE="en")

    client.post("/language/", {"language": "zh-hans", "next": "/accounts/login/"})

    assert "用户名" in page(client, "/accounts/login/", HTTP_ACCEPT_LANGUAGE="en")
    assert not UserPreference.objects.exists()


@pytest.mark.parametrize("language", ["fr", "xx", "", "zh-hans-cn"])
def test_a_language_the_interface_does_not_have_is_not_stored(db, client, language):
    user = UserFactory(username="li")
    client.force_login(user)

    response = client.post("/language/", {"language": language, "next": "/"})

    assert response.status_code == 302
    assert not UserPreference.objects.filter(user=user).exists()
    assert "Your projects" in page(client, "/")


def test_the_switcher_only_redirects_to_this_site(db, client):
    client.force_login(UserFactory(username="li"))

    response = client.post("/language/", {"language": "en", "next": "https://example.com/"})

    assert response["Location"] == "/"


def test_the_switcher_takes_posts_only(db, client):
    user = UserFactory(username="li")
    client.force_login(user)

    assert client.get("/language/?language=zh-hans").status_code == 405
    assert not UserPreference.objects.exists()


def test_the_api_answers_in_english_whatever_the_page_language(db, client):
    user = UserFactory(username="li")
    UserPreference.objects.create(user=user, language="zh-hans")
    client.force_login(user)

    response = client.get("/api/projects/999999/", HTTP_ACCEPT_LANGUAGE=CHINESE_BROWSER)

    assert response.status_code == 404
    assert response.json()["detail"].isascii()
    assert "Content-Language" not in response
    # The page after it is still Chinese: the API left no language behind.
    assert "我的项目" in page(client, "/")


def test_the_javascript_catalog_serves_chinese(db, client):
    chinese = page(client, "/jsi18n/?language=zh-hans", HTTP_ACCEPT_LANGUAGE=CHINESE_BROWSER)
    english = page(client, "/jsi18n/?language=en", HTTP_ACCEPT_LANGUAGE="en")

    # The catalog is JSON inside the script, with non-ASCII characters escaped.
    assert json.dumps("理由集合")[1:-1] in chinese
    assert json.dumps("集合 %(set)s：%(count)s 个词元")[1:-1] in chinese
    assert "\\u" not in english


def test_pages_load_the_catalog_for_their_language_and_offer_every_language(db, client):
    client.force_login(UserFactory(username="li"))

    chinese = page(client, "/", HTTP_ACCEPT_LANGUAGE=CHINESE_BROWSER)
    assert "/jsi18n/?language=zh-hans" in chinese
    assert "/jsi18n/?language=en" in page(client, "/")
    assert '<option value="en" lang="en">English</option>' in chinese
    assert '<option value="zh-hans" lang="zh-hans" selected>简体中文</option>' in chinese


@pytest.mark.parametrize(
    ("task_type", "task_name"),
    [
        (TaskType.CLASSIFICATION, "单文本"),
        (TaskType.SENTENCE_PAIR, "文本对"),
        (TaskType.READING_COMPREHENSION, "阅读理解"),
        (TaskType.MULTIPLE_CHOICE, "多项选择"),
    ],
)
def test_every_page_renders_in_chinese(db, client, task_type, task_name):
    project = make_project(items=2, task_type=task_type, language="zh")
    user = UserFactory(username="all-roles", is_staff=True)
    for role in Role.values:
        ProjectMembership.objects.create(project=project, user=user, role=role)
    UserPreference.objects.create(user=user, language="zh-hans")
    client.force_login(user)
    item = project.items.first()
    expected = {
        "/": "我的项目",
        f"/projects/{project.id}/": "开始标注",
        f"/projects/{project.id}/annotate/": "加载中…",
        f"/projects/{project.id}/review/": "请为每个理由集合以及整份标注评分",
        f"/projects/{project.id}/quality/": "审核策略",
        f"/projects/{project.id}/agreement/": "一致性",
        f"/projects/{project.id}/perturbations/": "原始条目",
        f"/projects/{project.id}/perturbations/originals/{item.id}/": "扰动条目",
        f"/projects/{project.id}/perturbations/check/": "检查扰动",
    }

    for url, heading in expected.items():
        html = page(client, url)
        assert '<html lang="zh-hans">' in html, url
        assert heading in html, url
    project_page = "".join(
        page(client, f"/projects/{project.id}/{path}")
        for path in ("", "data/", "instructions/", "results/")
    )
    for text in ("导入数据集", "指令变体", "结果看板", "管理员", f"{task_name} (中文)"):
        assert text in project_page


def test_a_chinese_page_leaves_the_default_language_to_what_runs_next(db, client):
    from django.conf import settings
    from django.utils import translation

    client.force_login(UserFactory(username="li"))
    assert "我的项目" in page(client, "/", HTTP_ACCEPT_LANGUAGE=CHINESE_BROWSER)

    assert translation.get_language() == settings.LANGUAGE_CODE


def test_error_pages_speak_the_page_language(db, client):
    client.force_login(UserFactory(username="li"))

    not_member = client.get("/projects/999999/", HTTP_ACCEPT_LANGUAGE=CHINESE_BROWSER)
    no_page = client.get("/no-such-page/", HTTP_ACCEPT_LANGUAGE=CHINESE_BROWSER)

    assert not_member.status_code == 404
    assert "未找到" in not_member.content.decode()
    assert "返回我的项目" in not_member.content.decode()
    assert no_page.status_code == 404
    assert "未找到" in no_page.content.decode()


def test_the_server_error_page_renders_in_chinese_without_a_request(db):
    from django.template import loader
    from django.utils import translation

    with translation.override("zh-hans"):
        html = loader.get_template("500.html").render()

    assert "服务器错误" in html and 'style="' not in html
