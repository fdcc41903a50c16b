"""What the client raises: the server's refusals, a job that ended badly, a wait that
ran out of time."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """The server answered with an error status. `status` is the HTTP status, `message`
    the server's own words (its `detail`, or each field's messages), `body` the decoded
    JSON body (None when it was not JSON)."""

    def __init__(self, status: int, message: str, body: Any = None, *, url: str = ""):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.body = body
        self.url = url


class JobFailed(Exception):
    """A background job (import, export, explainer run, agreement report) ended without
    succeeding. `job` is its last state as the server gave it."""

    def __init__(self, kind: str, job: dict[str, Any]):
        error = job.get("error") or job.get("status") or "failed"
        super().__init__(f"the {kind} ended {job.get('status', 'badly')}: {error}")
        self.kind = kind
        self.job = job


class WaitTimeout(TimeoutError):
    """A job was still running when the wait's timeout ran out (it goes on on the server)."""


def error_message(body: Any, fallback: str) -> str:
    """The server's words in one line: `detail`, or `field: message` for each field of a
    body that did not validate."""
    if isinstance(body, dict):
        if isinstance(body.get("detail"), str):
            return body["detail"]
        parts = []
        for field, messages in body.items():
            if isinstance(messages, list):
                messages = "; ".join(str(m) for m in messages)
            parts.append(f"{field}: {messages}")
        if parts:
            return ", ".join(parts)
    if isinstance(body, list) and body:
        return "; ".join(str(m) for m in body)
    return fallback
