"""The interface in Chinese in the browser: a user who chose Chinese and a browser that asks
for it see the home, project and workspace pages in Chinese, and switch to English and back
with the header's switcher; the choice is kept on the user."""

import pytest

from annotate.models import ProjectMembership, Role
from frontend.models import UserPreference
from tests.annotate.workflow_helpers import make_project
from tests.e2e.conftest import login
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

TEXT = "这部电影很好看，演员也很出色。"


def chinese_project():
    project = make_project(items=1, quota=1, text=TEXT, labels=("正面", "负面"), language="zh")
    project.name = "中文情感"
    project.save(update_fields=["name"])
    return project


def member(project, username, *roles):
    user = UserFactory(username=username)
    for role in roles:
        ProjectMembership.objects.create(project=project, user=user, role=role)
    return user


def switch_language(page, code):
    with page.expect_navigation():
        page.select_option(".language-switch select", code)
    page.wait_for_load_state()


def walk_in_chinese(page, base, project):
    """Home, project and workspace, each checked for its Chinese headings and buttons."""
    page.goto(f"{base}/")
    assert page.inner_text("main h1") == "我的项目"
    assert "中文情感" in page.inner_text("main table")
    assert page.locator("html").get_attribute("lang") == "zh-hans"

    page.click("text=中文情感")
    page.wait_for_selector("#start-annotating")
    assert page.inner_text("#start-annotating") == "开始标注"
    assert "你的角色" in page.inner_text(".facts")
    assert "单文本 (中文)" in page.inner_text(".facts")
    page.click("#tab-instructions")
    assert page.inner_text("#admin-panel h2 >> nth=0") == "指令变体"

    page.click("#tab-overview")
    page.click("#start-annotating")
    page.wait_for_selector("#workspace[data-ready=true]")
    assert page.inner_text(".instructions summary").startswith("指令（")
    assert page.inner_text(".workspace .submit") == "提交 (Enter)"
    assert "理由集合" in page.inner_text(".sets-card")
    assert page.locator(".legend-set").all_inner_texts() == ["集合 1：0 个词元"]
    assert page.inner_text(".task-chip") == "单文本"
    # Imported text is shown as it is: Chinese without spaces between its characters.
    assert page.inner_text(".document").strip() == TEXT
    page.keyboard.press("Enter")
    assert "提交前请至少高亮 1 个词。" in page.inner_text(".message")


def test_a_user_who_chose_chinese_works_in_chinese_and_switches(page, live_server):
    base = live_server.url
    project = chinese_project()
    user = member(project, "li", Role.ANNOTATOR, Role.ADMIN)
    UserPreference.objects.create(user=user, language="zh-hans")
    login(page, base, "li")

    walk_in_chinese(page, base, project)

    switch_language(page, "en")
    page.wait_for_selector("#workspace[data-ready=true]")
    assert page.inner_text(".workspace .submit") == "Submit (Enter)"
    assert page.locator(".legend-set").all_inner_texts() == ["Set 1: 0 tokens"]
    assert UserPreference.objects.get(user=user).language == "en"
    page.goto(f"{base}/projects/{project.id}/")
    assert page.inner_text("#start-annotating") == "Start annotating"

    switch_language(page, "zh-hans")
    assert page.inner_text("#start-annotating") == "开始标注"
    assert UserPreference.objects.get(user=user).language == "zh-hans"


def test_a_browser_asking_for_chinese_gets_it_until_the_user_chooses(browser, live_server):
    base = live_server.url
    project = chinese_project()
    user = member(project, "wang", Role.ANNOTATOR, Role.ADMIN)
    context = browser.new_context(locale="zh-CN", viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto(f"{base}/accounts/login/")
        assert page.inner_text("main h1") == "登录"
        login(page, base, "wang")

        walk_in_chinese(page, base, project)
        assert not UserPreference.objects.filter(user=user).exists()

        page.goto(f"{base}/")
        switch_language(page, "en")
        assert page.inner_text("main h1") == "Your projects"
        assert UserPreference.objects.get(user=user).language == "en"
        switch_language(page, "zh-hans")
        assert page.inner_text("main h1") == "我的项目"
    finally:
        context.close()
