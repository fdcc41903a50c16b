"""A crowd worker whose browser asks for Chinese gets the study's pages in Chinese, with
the platform's own names kept and the researcher's consent text as written."""

from django.test import Client
from django.urls import reverse

from crowd.models import CrowdSession
from crowd.services import crowd_session_finish
from tests.crowd.conftest import entry_url, mturk_params, work_items

CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}


def test_consent_work_and_done_pages_in_chinese(mturk_link):
    client = Client()
    response = client.get(entry_url(mturk_link), mturk_params(worker="A1"), **CHINESE)
    session = CrowdSession.objects.get()

    consent = client.get(response["Location"], **CHINESE).content.decode()
    assert "参与本研究" in consent and "我同意，开始" in consent
    assert "你的 MTurk 编号会与你的作答一起保存" in consent
    assert "I agree that my highlights are used for research." in consent  # the researcher's words
    client.post(response["Location"], {"answer": "agree"}, **CHINESE)
    work = client.get(reverse("crowd:work", args=[session.pk]), **CHINESE).content.decode()
    assert "个条目" in work and "结束并返回 MTurk" in work
    work_items(mturk_link.project, session.worker, 3)
    crowd_session_finish(session=session)
    done = client.get(reverse("crowd:done", args=[session.pk]), **CHINESE).content.decode()
    assert "谢谢，你已完成" in done and "你标注了 3 个条目。" in done


def test_a_dead_end_in_chinese(db):
    page = Client().get(reverse("crowd:entry", args=["no-such-key"]), **CHINESE)

    assert page.status_code == 404
    assert "找不到研究" in page.content.decode()
