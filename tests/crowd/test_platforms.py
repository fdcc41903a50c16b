"""What platforms send and expect back, without a database: entry parameters, the MTurk
submit origin, completion URL templates, completion tokens and the ExternalQuestion."""

import xml.etree.ElementTree as ET

import pytest
from django.http import QueryDict

from crowd import platforms
from crowd.platforms import Arrival, ParameterError, Preview, arrival_from_query

ORIGINS = ["https://www.mturk.com", "https://workersandbox.mturk.com"]


def query(text: str) -> QueryDict:
    return QueryDict(text)


def mturk(text: str):
    return arrival_from_query("mturk", query(text), submit_origins=ORIGINS)


def test_mturk_arrival_reads_its_four_parameters():
    arrival = mturk(
        "assignmentId=3AB&hitId=H9&workerId=A1B2&turkSubmitTo=https%3A%2F%2Fworkersandbox.mturk.com"
    )
    assert arrival == Arrival(
        worker_id="A1B2",
        session_id="3AB",
        task_id="H9",
        submit_to="https://workersandbox.mturk.com",
    )


def test_mturk_preview_has_no_worker():
    assert mturk("assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H9") == Preview(task_id="H9")
    assert mturk("assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE") == Preview()


@pytest.mark.parametrize(
    ("text", "parameter", "words"),
    [
        ("", "assignmentId", "missing"),
        ("assignmentId=A&hitId=H&turkSubmitTo=https://www.mturk.com", "workerId", "missing"),
        ("assignmentId=A&workerId=W&turkSubmitTo=https://www.mturk.com", "hitId", "missing"),
        ("assignmentId=A&workerId=W&hitId=H", "turkSubmitTo", "missing"),
        ("assignmentId=A&workerId=W%3Cb%3E&hitId=H", "workerId", "letters, digits"),
        ("assignmentId=A&workerId=" + "x" * 65 + "&hitId=H", "workerId", "longer than 64"),
        ("assignmentId=&workerId=W&hitId=H", "assignmentId", "empty"),
        ("assignmentId=A&assignmentId=B&workerId=W&hitId=H", "assignmentId", "more than once"),
        (
            "assignmentId=A&workerId=W&hitId=H&turkSubmitTo=https://evil.example",
            "turkSubmitTo",
            "not an MTurk site",
        ),
        (
            "assignmentId=A&workerId=W&hitId=H&turkSubmitTo=https://www.mturk.com/x",
            "turkSubmitTo",
            "bare origin",
        ),
        (
            "assignmentId=A&workerId=W&hitId=H&turkSubmitTo=javascript:alert(1)",
            "turkSubmitTo",
            "http(s)",
        ),
    ],
)
def test_bad_mturk_parameters_are_named(text, parameter, words):
    with pytest.raises(ParameterError) as error:
        mturk(text)
    assert error.value.parameter == parameter
    assert words in error.value.message


def test_prolific_arrival_and_its_missing_parameters():
    arrival = arrival_from_query(
        "prolific", query("PROLIFIC_PID=abc123&STUDY_ID=s1&SESSION_ID=x_9")
    )
    assert arrival == Arrival(worker_id="abc123", session_id="x_9", task_id="s1")
    for missing in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"):
        params = {"PROLIFIC_PID": "a", "STUDY_ID": "b", "SESSION_ID": "c"}
        del params[missing]
        with pytest.raises(ParameterError) as error:
            arrival_from_query("prolific", params)
        assert error.value.parameter == missing
    with pytest.raises(ParameterError, match="PROLIFIC_PID"):
        arrival_from_query(
            "prolific", query("PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID=b&SESSION_ID=c")
        )


def test_other_platforms_name_their_id_parameter():
    assert arrival_from_query("other", query("pid=w-1"), id_parameter="pid") == Arrival("w-1")
    with pytest.raises(ParameterError) as error:
        arrival_from_query("other", query("workerId=w-1"), id_parameter="pid")
    assert error.value.parameter == "pid"


def test_completion_templates_take_only_the_known_placeholders():
    good = "https://example.org/done?pid={external_id}&code={code}&t={token}"
    assert platforms.completion_template_problem(good) is None
    assert "placeholders" in platforms.completion_template_problem("https://x.org/{worker}")
    assert "placeholders" in platforms.completion_template_problem("https://x.org/{code.__class__}")
    assert "placeholders" in platforms.completion_template_problem("https://x.org/{code!r}")
    assert "valid template" in platforms.completion_template_problem("https://x.org/{code")
    assert "absolute" in platforms.completion_template_problem("/done?c={code}")
    assert "absolute" in platforms.completion_template_problem("javascript:alert({code})")


def test_completion_urls_percent_encode_what_they_fill_in():
    url = platforms.completion_url(
        "https://example.org/done?pid={external_id}&code={code}", external_id="a b&c", code="X/Y"
    )
    assert url == "https://example.org/done?pid=a%20b%26c&code=X%2FY"


def test_completion_tokens_bind_link_platform_worker_and_assignment(settings):
    ids = {"link_id": 4, "platform": "mturk", "worker_id": "A1", "session_id": "AS1"}
    token = platforms.completion_token(**ids)
    assert len(token) == 40 and token == platforms.completion_token(**ids)
    assert platforms.completion_token_valid(token, **ids)
    assert platforms.completion_token_valid(f" {token.upper()} ", **ids)
    for changed in (
        {"link_id": 5},
        {"platform": "prolific"},
        {"worker_id": "A2"},
        {"session_id": "AS2"},
    ):
        assert not platforms.completion_token_valid(token, **{**ids, **changed})
    settings.SECRET_KEY = "another secret key, of a different site, long enough"
    assert not platforms.completion_token_valid(token, **ids)


def test_external_question_is_the_schema_with_an_escaped_url():
    document = platforms.external_question_xml("https://w.org/crowd/s/k?a=1&b=2", frame_height=640)
    root = ET.fromstring(document)  # noqa: S314 - our own document
    ns = "{" + platforms.EXTERNAL_QUESTION_SCHEMA + "}"
    assert root.tag == f"{ns}ExternalQuestion"
    assert root.find(f"{ns}ExternalURL").text == "https://w.org/crowd/s/k?a=1&b=2"
    assert root.find(f"{ns}FrameHeight").text == "640"
