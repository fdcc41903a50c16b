"""What each crowd platform sends when a worker arrives, and what it expects back.

Plain values in and out, no database: the entry view reads an `Arrival` (or a preview)
from the query string, and the completion pages build the platform's way back from the
link's settings.

- MTurk loads an ExternalQuestion URL with `assignmentId`, `hitId`, `workerId` and
  `turkSubmitTo`; while a worker only previews the HIT, `assignmentId` is
  `ASSIGNMENT_ID_NOT_AVAILABLE` and there is no worker id. The finished HIT is a form
  POST to `turkSubmitTo` + `/mturk/externalSubmit` carrying the `assignmentId`.
- Prolific opens the study URL with `PROLIFIC_PID`, `STUDY_ID` and `SESSION_ID` and takes
  the participant back through its completion URL with a completion (or screen-out) code.
- Any other platform: the study link names the id parameter and a completion URL
  template with `{external_id}`, `{code}` and `{token}`.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote, urlsplit
from xml.sax.saxutils import escape

from django.utils.crypto import constant_time_compare, salted_hmac

MTURK = "mturk"
PROLIFIC = "prolific"
OTHER = "other"

MTURK_PREVIEW_ASSIGNMENT = "ASSIGNMENT_ID_NOT_AVAILABLE"
MTURK_SUBMIT_PATH = "/mturk/externalSubmit"
EXTERNAL_QUESTION_SCHEMA = (
    "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/"
    "ExternalQuestion.xsd"
)

# Every id a platform hands us is used in usernames, URLs and files: a short, plain
# alphabet that no HTML, CSV or URL context treats specially.
ID_MAX_LENGTH = 64
_ID = re.compile(r"\A[A-Za-z0-9_-]{1,64}\Z")
_PARAMETER_NAME = re.compile(r"\A[A-Za-z][A-Za-z0-9_]{0,31}\Z")
TEMPLATE_FIELDS = ("external_id", "code", "token")


class ParameterError(ValueError):
    """A query parameter is missing or malformed; `parameter` names it for the 400 page."""

    def __init__(self, parameter: str, message: str):
        super().__init__(f"{parameter}: {message}")
        self.parameter = parameter
        self.message = message


@dataclass(frozen=True)
class Arrival:
    """A worker arriving from a platform with their ids.

    `session_id` is the platform's id of this piece of work (MTurk's assignment,
    Prolific's session; empty where the platform has none), `task_id` the HIT or study.
    """

    worker_id: str
    session_id: str = ""
    task_id: str = ""
    submit_to: str = ""  # MTurk: the origin the finished HIT is posted to


@dataclass(frozen=True)
class Preview:
    """MTurk shows the HIT before anyone accepts it: no worker, no account."""

    task_id: str = ""


def id_problem(value: str) -> str | None:
    if not value:
        return "is empty"
    if len(value) > ID_MAX_LENGTH:
        return f"is longer than {ID_MAX_LENGTH} characters"
    if not _ID.match(value):
        return "may hold only letters, digits, '_' and '-'"
    return None


def _single(params, name: str) -> str:
    values = params.getlist(name) if hasattr(params, "getlist") else [params[name]]
    if not values:
        raise ParameterError(name, "is missing")
    if len(values) > 1:
        raise ParameterError(name, "is given more than once")
    return values[0]


def _id(params: Mapping[str, str], name: str) -> str:
    if name not in params:
        raise ParameterError(name, "is missing")
    value = _single(params, name)
    problem = id_problem(value)
    if problem:
        raise ParameterError(name, problem)
    return value


def submit_origin(value: str, *, allowed: Sequence[str]) -> str:
    """The origin of MTurk's `turkSubmitTo` if it is one we post to, else ParameterError.

    Only listed origins are accepted: the finished HIT's form carries the completion
    token, and a crafted link must not make it post that anywhere else."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ParameterError("turkSubmitTo", "is not an http(s) address")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ParameterError("turkSubmitTo", "must be a bare origin such as https://www.mturk.com")
    if parts.path not in ("", "/"):
        raise ParameterError("turkSubmitTo", "must be a bare origin such as https://www.mturk.com")
    origin = f"{parts.scheme}://{parts.netloc}".lower()
    if origin not in {a.rstrip("/").lower() for a in allowed}:
        raise ParameterError("turkSubmitTo", f"{origin} is not an MTurk site this study posts to")
    return origin


def arrival_from_query(
    platform: str,
    params: Mapping[str, str],
    *,
    id_parameter: str = "",
    submit_origins: Sequence[str] = (),
) -> Arrival | Preview:
    """Read a platform's entry parameters; ParameterError names the first bad one."""
    if platform == MTURK:
        assignment = _single(params, "assignmentId") if "assignmentId" in params else ""
        if assignment == MTURK_PREVIEW_ASSIGNMENT:
            hit = params.get("hitId", "")
            return Preview(task_id=hit if id_problem(hit) is None else "")
        assignment = _id(params, "assignmentId")
        worker = _id(params, "workerId")
        hit = _id(params, "hitId")
        if "turkSubmitTo" not in params:
            raise ParameterError("turkSubmitTo", "is missing")
        origin = submit_origin(_single(params, "turkSubmitTo"), allowed=submit_origins)
        return Arrival(worker_id=worker, session_id=assignment, task_id=hit, submit_to=origin)
    if platform == PROLIFIC:
        worker = _id(params, "PROLIFIC_PID")
        study = _id(params, "STUDY_ID")
        session = _id(params, "SESSION_ID")
        return Arrival(worker_id=worker, session_id=session, task_id=study)
    if platform == OTHER:
        return Arrival(worker_id=_id(params, id_parameter))
    raise ValueError(f"unknown platform {platform!r}")


def mturk_submit_url(origin: str) -> str:
    return origin.rstrip("/") + MTURK_SUBMIT_PATH


def parameter_name_problem(name: str) -> str | None:
    if not _PARAMETER_NAME.match(name or ""):
        return "must start with a letter and hold only letters, digits and '_' (at most 32)"
    return None


# The literal start of a completion URL template, up to where its path, query or fragment
# begins: scheme and host, which no placeholder may reach (a template without a path ends
# with its host).
_FIXED_ORIGIN = re.compile(r"\A(https?://[^/?#\\]+)(?=[/?#])", re.IGNORECASE)
_ORIGIN = re.compile(r"\A(https?://[^/?#\\]+)(?=[/?#]|\Z)", re.IGNORECASE)


def _template_parts(template: str) -> list[tuple[str, str | None]]:
    """(literal text, placeholder name or None) pairs; raises ValueError if malformed."""
    return [(literal, name) for literal, name, _, _ in string.Formatter().parse(template)]


def completion_template_problem(template: str) -> str | None:
    """Why a completion URL template cannot be used, or None."""
    try:
        fields = [
            (name, spec, conversion)
            for _, name, spec, conversion in string.Formatter().parse(template)
            if name is not None
        ]
    except ValueError as error:
        return f"is not a valid template ({error}); write literal braces as {{{{ and }}}}"
    for name, spec, conversion in fields:
        if name not in TEMPLATE_FIELDS or spec or conversion:
            return f"uses {{{name}}}; the placeholders are " + ", ".join(
                f"{{{f}}}" for f in TEMPLATE_FIELDS
            )
    parts = urlsplit(template.replace("{", "").replace("}", ""))
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return "must be an absolute http(s) URL"
    if fields and not _FIXED_ORIGIN.match(_template_parts(template)[0][0]):
        return (
            "must not put a placeholder in the scheme or host: write the address up to the "
            "first '/' after the host (e.g. https://platform.example/done?code={code}) "
            "and the placeholders after it"
        )
    return None


def completion_url(template: str, *, external_id: str = "", code: str = "", token: str = "") -> str:
    """Fill a completion URL template (checked by `completion_template_problem`), each
    value percent-encoded, and only after the template's fixed scheme and host: whatever
    a value holds, the URL goes to the host the template names. A template with a
    placeholder before its path (stored before that was refused) raises ValueError."""
    values = {"external_id": external_id, "code": code, "token": token}
    origin = _ORIGIN.match(template)
    if origin is None or "{" in origin.group(1) or "}" in origin.group(1):
        raise ValueError("the completion URL template has no fixed scheme and host")
    rest = template[origin.end() :]
    return origin.group(1) + rest.format_map({k: quote(v, safe="") for k, v in values.items()})


def completion_token(*, link_id: int, platform: str, worker_id: str, session_id: str) -> str:
    """A receipt the platform's records can be checked against: an HMAC, under the
    site's secret key, over the link, the platform, the worker and the assignment (or
    session). Ids never contain a newline, so the joined message is unambiguous."""
    message = "\n".join((str(link_id), platform, worker_id, session_id))
    return salted_hmac("crowd.completion-token", message, algorithm="sha256").hexdigest()[:40]


def completion_token_valid(
    token: str, *, link_id: int, platform: str, worker_id: str, session_id: str
) -> bool:
    expected = completion_token(
        link_id=link_id, platform=platform, worker_id=worker_id, session_id=session_id
    )
    return constant_time_compare(expected, (token or "").strip().lower())


def external_question_xml(url: str, *, frame_height: int) -> str:
    """MTurk's ExternalQuestion document for a HIT that loads `url` in its frame."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<ExternalQuestion xmlns="{EXTERNAL_QUESTION_SCHEMA}">\n'
        f"  <ExternalURL>{escape(url)}</ExternalURL>\n"
        f"  <FrameHeight>{int(frame_height)}</FrameHeight>\n"
        "</ExternalQuestion>\n"
    )
