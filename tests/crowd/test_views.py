"""The worker's pages without a browser: the entry with bad and missing parameters,
MTurk's preview and frame, consent and decline, screen-out, completion, returning
workers, account takeover and the rate limit."""

import re
from html import unescape

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from crowd.models import CrowdSession, SessionStatus
from crowd.platforms import completion_token_valid
from crowd.services import crowd_session_finish
from qc.services import quality_policy_update
from tests.crowd.conftest import (
    entry_url,
    make_link,
    mturk_params,
    prolific_params,
    work_items,
)
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
User = get_user_model()


def signed_in(client) -> str | None:
    user_id = client.session.get("_auth_user_id")
    return User.objects.get(pk=user_id).username if user_id else None


def consent(client, response, answer="agree"):
    assert response.status_code == 302, response.content
    return client.post(response["Location"], {"answer": answer})


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({}, "assignmentId"),
        (
            {"assignmentId": "AS1", "hitId": "H1", "turkSubmitTo": "https://www.mturk.com"},
            "workerId",
        ),
        ({**mturk_params(), "workerId": "<script>alert(1)</script>"}, "workerId"),
        ({**mturk_params(), "workerId": "W" * 65}, "workerId"),
        ({**mturk_params(), "turkSubmitTo": "https://attacker.example"}, "turkSubmitTo"),
    ],
)
def test_bad_or_missing_mturk_parameters_get_a_400_naming_them(mturk_link, params, named):
    response = Client().get(entry_url(mturk_link), params)
    assert response.status_code == 400
    text = response.content.decode()
    assert f"The parameter {named} " in text
    assert "<script>alert" not in text
    assert not User.objects.exists() or not User.objects.filter(username__startswith="mturk.")


@pytest.mark.parametrize("missing", ["PROLIFIC_PID", "STUDY_ID", "SESSION_ID"])
def test_missing_prolific_parameters_get_a_400_naming_them(prolific_link, missing):
    params = prolific_params()
    del params[missing]
    response = Client().get(entry_url(prolific_link), params)
    assert response.status_code == 400
    assert f"The parameter {missing} is missing" in response.content.decode()


def test_other_platforms_read_their_own_parameter(other_link):
    client = Client()
    assert client.get(entry_url(other_link), {"workerId": "w1"}).status_code == 400
    response = client.get(entry_url(other_link), {"pid": "w1"})
    assert response.status_code == 302 and signed_in(client) == "other.w1"


def test_an_unknown_or_closed_link(study, mturk_link):
    assert Client().get(reverse("crowd:entry", args=["nope"])).status_code == 404
    mturk_link.active = False
    mturk_link.save()
    response = Client().get(entry_url(mturk_link), mturk_params())
    assert response.status_code == 410
    assert "return the HIT" in response.content.decode()


def test_the_mturk_preview_shows_instructions_and_makes_no_account(study):
    project, admin = study
    variant = project.variants.get(name="plain")
    variant.examples = [{"tokens": ["A", "<b>fine</b>", "film"], "highlighted": [1], "note": ""}]
    variant.save()
    link = make_link(project, admin, "mturk", variant=variant, description="Rate <i>films</i>.")
    response = Client().get(
        entry_url(link), {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "H1"}
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "Highlight words (plain)." in page
    assert '<span class="crowd-on">&lt;b&gt;fine&lt;/b&gt;</span>' in page
    assert "Rate &lt;i&gt;films&lt;/i&gt;." in page
    assert "No real item" in page
    assert not User.objects.filter(username__startswith="mturk.").exists()
    # MTurk frames the page: only its origins may
    assert "X-Frame-Options" not in response.headers
    policy = dict(
        directive.strip().split(" ", 1)
        for directive in response["Content-Security-Policy"].split(";")
    )
    assert policy["frame-ancestors"].startswith("'self' https://")
    assert "https://worker.mturk.com" in policy["frame-ancestors"]
    assert policy["script-src"] == "'self'", "the rest of the site's policy stays"


def test_a_preview_of_an_allocated_link_shows_no_variant(mturk_link):
    response = Client().get(entry_url(mturk_link), {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"})
    page = response.content.decode()
    assert "Highlight words (" not in page
    assert "shown when you start" in page


def test_inside_the_frame_the_work_opens_in_its_own_tab(mturk_link):
    client = Client()
    response = client.get(entry_url(mturk_link), mturk_params(), HTTP_SEC_FETCH_DEST="iframe")
    assert response.status_code == 200
    page = unescape(response.content.decode())
    assert 'target="_blank"' in page and "workerId=A1WORKER" in page
    assert signed_in(client) is None
    assert not CrowdSession.objects.exists()


def test_a_head_request_signs_nobody_in(prolific_link):
    client = Client()
    assert client.head(entry_url(prolific_link), prolific_params()).status_code == 200
    assert client.head(entry_url(prolific_link), {}).status_code == 400
    assert signed_in(client) is None and not CrowdSession.objects.exists()


def test_prolific_pages_cannot_be_framed(prolific_link):
    response = Client().get(entry_url(prolific_link), prolific_params())
    follow = Client().get(entry_url(prolific_link), {})
    assert follow["X-Frame-Options"] == "DENY"
    assert response.status_code == 302


def test_entry_consent_work_and_the_mturk_submit_form(mturk_link):
    client = Client()
    response = client.get(entry_url(mturk_link), mturk_params(worker="A1", assignment="AS1"))
    assert signed_in(client) == "mturk.A1"
    session = CrowdSession.objects.get()
    assert response["Location"] == reverse("crowd:consent", args=[session.pk])
    page = client.get(response["Location"]).content.decode()
    assert "I agree that my highlights are used for research." in page
    response = consent(client, response)
    assert response["Location"] == reverse("crowd:work", args=[session.pk])
    work = client.get(response["Location"])
    assert work.status_code == 200
    assert f'data-session-id="{session.pk}"' in work.content.decode()
    assert "crowd/crowd.js" in work.content.decode()
    # The done page waits for the work
    assert client.get(reverse("crowd:done", args=[session.pk]))["Location"].endswith("/work/")
    work_items(mturk_link.project, session.worker, 3)
    crowd_session_finish(session=session)
    done = client.get(reverse("crowd:done", args=[session.pk]))
    page = done.content.decode()
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in page
    # The Content Security Policy lets this page's form go to that origin alone.
    assert (
        "form-action 'self' https://workersandbox.mturk.com;"
        in done["Content-Security-Policy"] + ";"
    )
    assert 'name="assignmentId" value="AS1"' in page
    token = re.search(r'name="completion_token" value="([0-9a-f]+)"', page).group(1)
    assert completion_token_valid(
        token, link_id=mturk_link.pk, platform="mturk", worker_id="A1", session_id="AS1"
    )


def test_the_consent_text_is_escaped(study):
    project, admin = study
    link = make_link(project, admin, "prolific", consent_text='<img src=x onerror="alert(1)">')
    client = Client()
    page = client.get(client.get(entry_url(link), prolific_params())["Location"])
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page.content.decode()
    assert "<img src=x" not in page.content.decode()


def test_a_consent_form_without_an_answer_is_refused(prolific_link):
    client = Client()
    url = client.get(entry_url(prolific_link), prolific_params())["Location"]
    assert client.post(url, {"answer": "maybe"}).status_code == 400
    assert CrowdSession.objects.get().status == SessionStatus.STARTED


def test_declining_on_mturk_asks_to_return_the_hit(mturk_link):
    client = Client()
    response = consent(client, client.get(entry_url(mturk_link), mturk_params()), "decline")
    page = client.get(response["Location"]).content.decode()
    assert "You declined" in page and "return the HIT" in page
    assert 'http-equiv="refresh"' not in page


def test_declining_on_prolific_returns_with_the_screen_out_code(prolific_link):
    client = Client()
    response = consent(client, client.get(entry_url(prolific_link), prolific_params()), "decline")
    page = client.get(response["Location"]).content.decode()
    target = "https://app.prolific.com/submissions/complete?cc=SCR33N"
    assert f'content="3;url={target}"' in page and f'href="{target}"' in page


def test_declining_without_a_screen_out_code_says_what_to_do(study):
    project, admin = study
    link = make_link(project, admin, "prolific", screen_out_code="")
    client = Client()
    response = consent(client, client.get(entry_url(link), prolific_params()), "decline")
    page = client.get(response["Location"]).content.decode()
    assert "return your submission on Prolific" in page


def test_the_rules_screen_out_before_any_work(study, settings):
    settings.CROWD_PROLIFIC_COMPLETION_URL = "https://prolific.test/end?cc={code}"
    project, admin = study
    quality_policy_update(project=project, masters_only=True)
    link = make_link(project, admin, "prolific")
    client = Client()
    response = consent(client, client.get(entry_url(link), prolific_params()))
    response = client.get(response["Location"])  # the work page turns them away
    assert response["Location"].endswith("/end/")
    page = client.get(response["Location"]).content.decode()
    assert "not a match" in page
    assert 'href="https://prolific.test/end?cc=SCR33N"' in page
    assert CrowdSession.objects.get().status == SessionStatus.SCREENED_OUT


def test_selection_by_hand_says_the_researcher_will_decide(study):
    project, admin = study
    quality_policy_update(project=project, manual_selection=True)
    link = make_link(project, admin, "prolific")
    client = Client()
    response = client.get(
        consent(client, client.get(entry_url(link), prolific_params()))["Location"]
    )
    page = client.get(response["Location"]).content.decode()
    assert "the researcher will decide" in page and "SCR33N" in page


def test_completing_on_prolific_returns_with_the_completion_code(prolific_link):
    client = Client()
    consent(client, client.get(entry_url(prolific_link), prolific_params()))
    session = CrowdSession.objects.get()
    work_items(prolific_link.project, session.worker, 3)
    crowd_session_finish(session=session)
    page = client.get(reverse("crowd:done", args=[session.pk])).content.decode()
    assert 'href="https://app.prolific.com/submissions/complete?cc=C0MPL3TE"' in page
    assert "C0MPL3TE" in page
    # Back to the platform by a script the worker can stop (WCAG 2.2.1), not a meta refresh.
    assert 'http-equiv="refresh"' not in page
    assert "crowd/return_countdown.js" in page and 'id="return-stay"' in page


def test_completing_on_another_platform_fills_its_template(other_link):
    client = Client()
    consent(client, client.get(entry_url(other_link), {"pid": "w-7"}))
    session = CrowdSession.objects.get()
    work_items(other_link.project, session.worker, 3)
    crowd_session_finish(session=session)
    page = client.get(reverse("crowd:done", args=[session.pk])).content.decode()
    assert 'href="https://example.org/done?pid=w-7&amp;code=DONE1"' in page


def test_a_returning_worker_resumes_where_they_were(prolific_link):
    first = Client()
    consent(first, first.get(entry_url(prolific_link), prolific_params()))
    session = CrowdSession.objects.get()
    work_items(prolific_link.project, session.worker, 1)
    # Another browser, the same ids: the same account and session, straight to work
    second = Client()
    response = second.get(entry_url(prolific_link), prolific_params())
    assert response["Location"] == reverse("crowd:work", args=[session.pk])
    progress = second.get(reverse("crowd:session", args=[session.pk])).json()
    assert (progress["items_done"], progress["items_required"]) == (1, 3)


def test_the_same_id_on_two_platforms_signs_in_two_accounts(study):
    project, admin = study
    mturk, prolific = make_link(project, admin, "mturk"), make_link(project, admin, "prolific")
    a, b = Client(), Client()
    a.get(entry_url(mturk), mturk_params(worker="X1"))
    b.get(entry_url(prolific), prolific_params(pid="X1"))
    assert (signed_in(a), signed_in(b)) == ("mturk.X1", "prolific.X1")


def test_an_entry_cannot_take_over_a_staff_account(mturk_link):
    UserFactory(username="mturk.boss", is_staff=True, is_superuser=True)
    client = Client()
    response = client.get(entry_url(mturk_link), mturk_params(worker="boss"))
    assert response.status_code == 403
    assert "existing account" in response.content.decode()
    assert signed_in(client) is None


def test_someone_elses_session_pages_are_not_found(mturk_link):
    owner = Client()
    owner.get(entry_url(mturk_link), mturk_params(worker="A1"))
    session = CrowdSession.objects.get()
    other = Client()
    other.get(entry_url(mturk_link), mturk_params(worker="A2", assignment="AS2"))
    for name in ("consent", "work", "done", "end"):
        response = other.get(reverse(f"crowd:{name}", args=[session.pk]))
        assert response.status_code == 404, name
        assert "open the study again" in response.content.decode()
    assert Client().get(reverse("crowd:consent", args=[session.pk])).status_code == 404


def test_entries_are_rate_limited_per_address(mturk_link, settings):
    settings.CROWD_ENTRY_RATE = "3/min"
    client = Client()
    for n in range(3):
        params = mturk_params(worker=f"W{n}", assignment=f"AS{n}")
        assert client.get(entry_url(mturk_link), params).status_code == 302
    limited = client.get(entry_url(mturk_link), mturk_params(worker="W9", assignment="AS9"))
    assert limited.status_code == 429 and int(limited["Retry-After"]) > 0
    # An invented X-Forwarded-For does not help while no proxy is trusted
    spoofed = client.get(
        entry_url(mturk_link), mturk_params(worker="W9"), HTTP_X_FORWARDED_FOR="10.9.9.9"
    )
    assert spoofed.status_code == 429
    assert not User.objects.filter(username="mturk.W9").exists()
    # Another address is not limited
    other = Client(REMOTE_ADDR="10.0.0.2")
    assert other.get(entry_url(mturk_link), mturk_params(worker="W9")).status_code == 302


def test_behind_a_trusted_proxy_the_limit_reads_the_forwarded_address(mturk_link, settings):
    settings.CROWD_ENTRY_RATE = "1/min"
    settings.CROWD_TRUSTED_PROXIES = 1
    client = Client()
    url = entry_url(mturk_link)
    ids = [mturk_params(worker=f"W{n}", assignment=f"AS{n}") for n in range(3)]
    first = client.get(url, ids[0], HTTP_X_FORWARDED_FOR="1.1.1.1, 10.0.0.5")
    again = client.get(url, ids[1], HTTP_X_FORWARDED_FOR="9.9.9.9, 10.0.0.5")
    other = client.get(url, ids[2], HTTP_X_FORWARDED_FOR="10.0.0.6")
    assert (first.status_code, again.status_code, other.status_code) == (302, 429, 302)


def test_the_crowd_pages_read_the_workers_session_by_its_key_without_ordering(prolific_link):
    """One row by primary key: an ORDER BY there only cost its compiling, on each of the
    consent page, its answer and the workspace."""
    client = Client()
    arrived = client.get(entry_url(prolific_link), prolific_params())

    with CaptureQueriesContext(connection) as queries:
        page = client.get(arrived["Location"])

    assert page.status_code == 200
    session_reads = [
        q["sql"] for q in queries.captured_queries if 'FROM "crowd_crowdsession"' in q["sql"]
    ]
    assert len(session_reads) == 1
    assert "ORDER BY" not in session_reads[0]


def test_the_entry_reads_its_unique_rows_without_ordering(prolific_link):
    """The link by its key and the account by its name: each one row by a unique key,
    read without an ORDER BY compiled for nothing."""
    with CaptureQueriesContext(connection) as queries:
        arrived = Client().get(entry_url(prolific_link), prolific_params())

    assert arrived.status_code == 302
    tables = ("crowd_studylink", "auth_user")
    reads = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].startswith("SELECT") and any(f'FROM "{t}"' in q["sql"] for t in tables)
    ]
    assert {t for t in tables if any(f'FROM "{t}"' in sql for sql in reads)} == set(tables)
    assert [sql for sql in reads if "ORDER BY" in sql] == []


def test_a_new_workers_entry_reads_the_link_alone_and_inserts_profile_and_session(
    prolific_link,
):
    """The link without its project's and variant's columns (an arrival needs their ids
    alone), and a new account's profile and platform session inserted without a look-up
    first (a new account has neither)."""
    with CaptureQueriesContext(connection) as queries:
        arrived = Client().get(entry_url(prolific_link), prolific_params())

    assert arrived.status_code == 302
    sql = [q["sql"] for q in queries.captured_queries]
    (link_read,) = [s for s in sql if s.startswith("SELECT") and 'FROM "crowd_studylink"' in s]
    assert "JOIN" not in link_read
    for table in ("qc_workerprofile", "crowd_crowdsession"):
        assert [s for s in sql if s.startswith("SELECT") and f'FROM "{table}"' in s] == []
        assert [s for s in sql if s.startswith(f'INSERT INTO "{table}"')]
    session = CrowdSession.objects.get()
    assert session.worker.worker_profile.external_id == prolific_params()["PROLIFIC_PID"]


def test_a_new_worker_arriving_with_another_workers_session_is_refused(prolific_link):
    first = Client().get(entry_url(prolific_link), prolific_params(pid="a" * 24))
    taken = Client().get(entry_url(prolific_link), prolific_params(pid="b" * 24))
    assert (first.status_code, taken.status_code) == (302, 403)
    assert CrowdSession.objects.get().worker.username == f"prolific.{'a' * 24}"


def test_the_consent_page_and_workspace_join_no_more_than_they_read(prolific_link):
    """The consent page and its answer read the session with its link (no project, no
    variant); the workspace adds the project; the standing and the worker's record are
    read by their unique keys without an ORDER BY."""
    client = Client()
    arrived = client.get(entry_url(prolific_link), prolific_params())

    with CaptureQueriesContext(connection) as page_queries:
        page = client.get(arrived["Location"])
    with CaptureQueriesContext(connection) as answer_queries:
        answered = client.post(arrived["Location"], {"answer": "agree"})
    with CaptureQueriesContext(connection) as work_queries:
        work = client.get(answered["Location"])

    assert (page.status_code, answered.status_code, work.status_code) == (200, 302, 200)

    def session_read(queries):
        return next(
            q["sql"]
            for q in queries.captured_queries
            if q["sql"].startswith("SELECT") and 'FROM "crowd_crowdsession"' in q["sql"]
        )

    for queries in (page_queries, answer_queries):
        assert '"annotate_project"' not in session_read(queries)
        assert '"annotate_instructionvariant"' not in session_read(queries)
    assert '"annotate_project"' in session_read(work_queries)
    assert '"annotate_instructionvariant"' not in session_read(work_queries)
    qc_reads = [
        q["sql"]
        for q in work_queries.captured_queries
        if q["sql"].startswith("SELECT")
        and any(f'FROM "{t}"' in q["sql"] for t in ("qc_projectworker", "qc_workerrecord"))
    ]
    assert len(qc_reads) == 2
    assert [sql for sql in qc_reads if "ORDER BY" in sql] == []
