"""The client's parts that need no server: its error messages, a wait that runs out of
time, rows in memory written as JSON lines, and the token it sends."""

from __future__ import annotations

import json

import pytest

rationale_workbench = pytest.importorskip("rationale_workbench")
from rationale_workbench import Client, JobFailed, WaitTimeout  # noqa: E402
from rationale_workbench._records import is_records, records_jsonl  # noqa: E402
from rationale_workbench.errors import error_message  # noqa: E402


class _Answer:
    def __init__(self, body, status=200):
        self.body, self.status_code, self.reason = body, status, "OK"
        self.content = json.dumps(body).encode()

    def json(self):
        return self.body


class _Session:
    """Answers every request with the next of `bodies` (the last one again at the end)."""

    def __init__(self, *bodies):
        self.bodies, self.headers, self.asked = list(bodies), {}, []

    def request(self, method, url, **kwargs):
        self.asked.append((method, url))
        return _Answer(self.bodies.pop(0) if len(self.bodies) > 1 else self.bodies[0])


def test_the_servers_words_make_the_message():
    assert error_message({"detail": "project not found"}, "x") == "project not found"
    assert error_message({"name": ["This field is required."]}, "x") == (
        "name: This field is required."
    )
    assert error_message(["one", "two"], "x") == "one; two"
    assert error_message(None, "Bad Gateway") == "Bad Gateway"


def test_the_token_is_sent_as_a_bearer_and_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("RATIONALE_WORKBENCH_TOKEN", "rwt_abc_def")
    session = _Session({"count": 0, "next": None, "previous": None, "results": []})

    client = Client("http://server/", session=session)

    assert client.projects.list() == []
    assert session.headers["Authorization"] == "Bearer rwt_abc_def"
    assert session.asked == [("GET", "http://server/api/projects/")]


def test_no_token_is_refused_before_any_request(monkeypatch):
    monkeypatch.delenv("RATIONALE_WORKBENCH_TOKEN", raising=False)
    with pytest.raises(ValueError, match="token"):
        Client("http://server")


def test_a_wait_that_runs_out_of_time_says_so():
    running = {"status": "running", "final": False, "done": 1, "total": 4, "unit": "chunks"}
    client = Client("http://server", "t", session=_Session(running), poll_interval=0)

    with pytest.raises(WaitTimeout, match="still running"):
        client.wait("export", "/progress/", timeout=0)


def test_a_job_that_failed_raises_with_its_state():
    failed = {"status": "failed", "final": True, "error": "the worker was lost"}
    client = Client("http://server", "t", session=_Session(failed), poll_interval=0)

    with pytest.raises(JobFailed, match="the worker was lost"):
        client.wait("import", "/progress/")


def test_pages_are_followed_to_the_end():
    first = {"next": "http://server/api/projects/?offset=1", "results": [{"id": 1}]}
    last = {"next": None, "results": [{"id": 2}]}
    session = _Session(first, last)

    rows = Client("http://server", "t", session=session).projects.list()

    assert rows == [{"id": 1}, {"id": 2}]
    assert session.asked[1] == ("GET", "http://server/api/projects/?offset=1")


def test_rows_in_memory_become_json_lines():
    numpy = pytest.importorskip("numpy")
    rows = [{"id": "a", "text": "Ünïcode", "score": numpy.float64(0.5), "n": numpy.int64(2)}]

    written = records_jsonl(rows).decode()

    assert json.loads(written) == {"id": "a", "text": "Ünïcode", "score": 0.5, "n": 2}
    assert is_records(rows) and not is_records("rows.jsonl")
    with pytest.raises(TypeError, match="row 1"):
        records_jsonl(["not a dict"])


def test_items_are_read_lazily_with_list_filters_joined_and_one_item_by_id():
    page = {"next": None, "results": [{"id": 5}]}
    session = _Session(page, page, {"item": {"id": 5}, "annotations": []})
    client = Client("http://server", "t", session=session)

    rows = client.items.iter({"id": 3}, status=["complete", "in_review"], split=None)
    assert session.asked == []  # nothing asked before the first row is wanted
    assert list(rows) == [{"id": 5}]
    assert client.items.list(3, label="POS") == [{"id": 5}]
    assert client.items.get(3, {"id": 5})["item"]["id"] == 5
    assert session.asked[-1] == ("GET", "http://server/api/projects/3/items/5/")
