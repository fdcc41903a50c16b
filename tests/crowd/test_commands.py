"""The token check from the command line, and the demo's study links."""

import pytest
from django.core.management import CommandError, call_command

from annotate.models import Project
from annotate.services import variant_create
from crowd.models import StudyLink
from crowd.services import crowd_session_finish
from tests.crowd.conftest import arrive_and_consent, work_items
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def completed(mturk_link):
    session, worker = arrive_and_consent(mturk_link, worker="A1", session="AS1")
    work_items(mturk_link.project, worker, 3)
    return crowd_session_finish(session=session)


def test_one_token(mturk_link, completed, capsys):
    call_command(
        "crowd_verify_tokens",
        str(mturk_link.pk),
        worker="A1",
        assignment="AS1",
        token=completed.completion_token,
    )
    assert "A1 AS1: valid (completed, 3 items)" in capsys.readouterr().out
    with pytest.raises(CommandError, match="0 valid, 1 invalid"):
        call_command(
            "crowd_verify_tokens", str(mturk_link.pk), worker="A2", assignment="AS1", token="ab"
        )


def test_a_results_csv(mturk_link, completed, tmp_path, capsys):
    results = tmp_path / "Batch_1_batch_results.csv"
    results.write_text(
        "HITId,AssignmentId,WorkerId,Answer.completion_token\n"
        f"H1,AS1,A1,{completed.completion_token}\n"
        "H1,AS9,A9,0123abcd\n"
    )
    with pytest.raises(CommandError, match="1 valid, 1 invalid"):
        call_command("crowd_verify_tokens", str(mturk_link.pk), csv_path=str(results))
    out = capsys.readouterr().out
    assert "line 2: A1 AS1: valid" in out and "line 3: A9 AS9: INVALID" in out
    bad = tmp_path / "bad.csv"
    bad.write_text("worker,token\nA1,x\n")
    with pytest.raises(CommandError, match="WorkerId"):
        call_command("crowd_verify_tokens", str(mturk_link.pk), csv_path=str(bad))
    with pytest.raises(CommandError, match="no study link"):
        call_command("crowd_verify_tokens", "999999", worker="A1", token="ab")


def test_the_demo_links(settings):
    settings.DEBUG = True
    admin = UserFactory(username="demo-admin")
    for name in ("Demo: film review sentiment", "Demo: qualification test"):
        project = Project.objects.create(name=name, labels=["negative", "positive"])
        variant_create(project=project, name="guide-minimal-words", text="Highlight.")
    call_command("demo_crowd")
    call_command("demo_crowd")  # twice: nothing new
    links = {link.key: link for link in StudyLink.objects.all()}
    assert sorted(links) == ["demo-mturk", "demo-prolific", "demo-screenout"]
    assert links["demo-mturk"].variant.name == "guide-minimal-words"
    assert links["demo-prolific"].variant is None
    assert links["demo-mturk"].created_by == admin
