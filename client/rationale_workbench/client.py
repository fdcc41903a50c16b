"""The client: `Client(url, token)` and its parts, one per kind of thing the API serves.

Every call is one or a few HTTP requests, made as they are called (no caching, no
threads). Objects are identified by their id, or by the dict the client returned for
them (its "id" is read). Lists are read page after page and returned whole.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import requests

from rationale_workbench import __version__
from rationale_workbench._progress import Progress, reporter
from rationale_workbench._records import is_records, records_jsonl
from rationale_workbench.errors import ApiError, JobFailed, WaitTimeout, error_message

Ref = int | dict[str, Any]
TOKEN_VARIABLE = "RATIONALE_WORKBENCH_TOKEN"  # noqa: S105 - a variable's name
FINAL = {"succeeded", "failed", "cancelled"}


def _id(ref: Ref) -> int:
    if isinstance(ref, dict):
        return int(ref["id"])
    return int(ref)


class Client:
    """A connection to one server, signed in with a personal API token.

    `url` is the site's address (``http://127.0.0.1:8000``); `token` a token from the site's
    *API tokens* page, else the environment's RATIONALE_WORKBENCH_TOKEN. `timeout` bounds
    each request (seconds); `poll_interval` is how often a wait asks for a job's progress.
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        timeout: float = 60.0,
        poll_interval: float = 1.0,
        session: requests.Session | None = None,
    ):
        token = token or os.environ.get(TOKEN_VARIABLE)
        if not token:
            raise ValueError(f"give a token, or set {TOKEN_VARIABLE}")
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.poll_interval = poll_interval
        self.session = session or requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"
        self.session.headers["User-Agent"] = f"rationale-workbench-client/{__version__}"
        self.session.headers["Accept"] = "application/json"
        self.projects = Projects(self)
        self.imports = Imports(self)
        self.items = Items(self)
        self.exports = Exports(self)
        self.runs = ExplainerRuns(self)
        self.agreement = Agreement(self)

    # ------------------------------------------------------------------ HTTP

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """One request to `path` (under the site, or an absolute URL the server gave);
        an error status raises ApiError with the server's message."""
        url = path if path.startswith(("http://", "https://")) else f"{self.url}{path}"
        kwargs.setdefault("timeout", self.timeout)
        response = self.session.request(method, url, **kwargs)
        if response.status_code >= 400:
            try:
                body = response.json()
            except ValueError:
                body = None
            fallback = response.reason or f"HTTP {response.status_code}"
            raise ApiError(response.status_code, error_message(body, fallback), body, url=url)
        return response

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params=params or None).json()

    def post(self, path: str, json: Any = None, **kwargs: Any) -> Any:
        response = self.request("POST", path, json=json, **kwargs)
        return response.json() if response.content else None

    def pages(self, path: str, **params: Any) -> Iterator[dict[str, Any]]:
        """Every row of a list, following its pages (`next`)."""
        answer = self.get(path, **params)
        while True:
            if isinstance(answer, list):
                yield from answer
                return
            yield from answer["results"]
            if not answer.get("next"):
                return
            answer = self.get(answer["next"])

    def wait(
        self,
        kind: str,
        progress_path: str,
        *,
        progress: Progress = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Poll a job's progress until it is final; returns its last progress. A job that
        did not succeed raises JobFailed, one still running after `timeout` WaitTimeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        shown = reporter(progress, kind)
        try:
            while True:
                state = self.get(progress_path)
                shown.update(
                    int(state.get("done") or 0),
                    int(state.get("total") or 0),
                    str(state.get("unit") or ""),
                )
                if state.get("final") or state.get("status") in FINAL:
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    raise WaitTimeout(
                        f"the {kind} is still {state.get('status')} after {timeout} s"
                    )
                time.sleep(self.poll_interval)
        finally:
            shown.close()
        if state.get("status") != "succeeded":
            raise JobFailed(kind, state)
        return state


class _Part:
    def __init__(self, client: Client):
        self.client = client


class Projects(_Part):
    def list(self) -> list[dict[str, Any]]:
        """The projects the token opens, by name."""
        return list(self.client.pages("/api/projects/"))

    def get(self, project: Ref) -> dict[str, Any]:
        return self.client.get(f"/api/projects/{_id(project)}/")

    def create(self, name: str, **fields: Any) -> dict[str, Any]:
        """A new project (staff, or the 'add project' permission): `labels`, `task_type`,
        `language`, `annotators_per_item`, `description`, ... as the API takes them."""
        return self.client.post("/api/projects/", {"name": name, **fields})


class Imports(_Part):
    def upload(
        self,
        project: Ref,
        source: str | os.PathLike[str] | BinaryIO | Any,
        *,
        source_format: str | None = None,
        filename: str | None = None,
        wait: bool = True,
        progress: Progress = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Import into `project`: a file's path (an ERASER folder's zip, .jsonl, .csv), an
        open binary file, or rows in memory (a pandas DataFrame, a `datasets.Dataset` or
        `DatasetDict`, a list of dicts), sent as JSON lines. With `wait` (the default),
        returns the finished job (JobFailed if it failed); else the job as started."""
        project_id = _id(project)
        if is_records(source):
            content: Any = records_jsonl(source)
            filename = filename or "records.jsonl"
            source_format = source_format or "jsonl"
        elif hasattr(source, "read"):
            content = source
            filename = filename or Path(getattr(source, "name", "upload")).name
        else:
            path = Path(source)
            content = path.read_bytes()
            filename = filename or path.name
        data = {"source_format": source_format} if source_format else None
        job = self.client.post(
            f"/api/projects/{project_id}/imports/", files={"file": (filename, content)}, data=data
        )
        if not wait:
            return job
        return self.wait(project_id, job, progress=progress, timeout=timeout)

    def get(self, project: Ref, job: Ref) -> dict[str, Any]:
        return self.client.get(f"/api/projects/{_id(project)}/imports/{_id(job)}/")

    def list(self, project: Ref) -> list[dict[str, Any]]:
        return list(self.client.pages(f"/api/projects/{_id(project)}/imports/"))

    def wait(
        self, project: Ref, job: Ref, *, progress: Progress = None, timeout: float | None = None
    ) -> dict[str, Any]:
        """The job once it has finished; JobFailed (with the job's problems) if it failed."""
        base = f"/api/projects/{_id(project)}/imports/{_id(job)}/"
        try:
            self.client.wait("import", f"{base}progress/", progress=progress, timeout=timeout)
        except JobFailed:
            raise JobFailed("import", self.client.get(base)) from None
        return self.client.get(base)


class Items(_Part):
    def list(self, project: Ref, **filters: Any) -> list[dict[str, Any]]:
        """The project's items, every page of them. `filters` are the list's query
        parameters as the server names them (the data manager's: `status`, `split`,
        `label`, `search`, `kappa_min`, `ordering`, ...); a list value is sent joined
        by commas. A parameter the server does not know is refused with a 400."""
        return list(self.iter(project, **filters))

    def iter(self, project: Ref, **filters: Any) -> Iterator[dict[str, Any]]:
        """`list`, a page at a time: for projects too large to hold in memory."""
        params = {
            name: ",".join(str(v) for v in value)
            if isinstance(value, (list, tuple, set))
            else value
            for name, value in filters.items()
            if value is not None
        }
        return self.client.pages(f"/api/projects/{_id(project)}/items/", **params)

    def get(self, project: Ref, item: Ref) -> dict[str, Any]:
        """One item with its texts and every annotation of every round (the data
        manager's item view, on servers that have it)."""
        return self.client.get(f"/api/projects/{_id(project)}/items/{_id(item)}/")


class Exports(_Part):
    def start(self, project: Ref, **params: Any) -> dict[str, Any]:
        """Start an export (`selection`, `variant`, `aggregation`, `splits`, `layout`, ...
        as the API takes them); returns the export as started."""
        return self.client.post(f"/api/projects/{_id(project)}/exports/", params)

    def get(self, project: Ref, export: Ref) -> dict[str, Any]:
        return self.client.get(f"/api/projects/{_id(project)}/exports/{_id(export)}/")

    def list(self, project: Ref) -> list[dict[str, Any]]:
        return list(self.client.pages(f"/api/projects/{_id(project)}/exports/"))

    def wait(
        self, project: Ref, export: Ref, *, progress: Progress = None, timeout: float | None = None
    ) -> dict[str, Any]:
        base = f"/api/projects/{_id(project)}/exports/{_id(export)}/"
        try:
            self.client.wait("export", f"{base}progress/", progress=progress, timeout=timeout)
        except JobFailed:
            raise JobFailed("export", self.client.get(base)) from None
        return self.client.get(base)

    def download(self, project: Ref, export: Ref, path: str | os.PathLike[str]) -> Path:
        """Write the finished export's archive to `path` (streamed); returns the path."""
        target = Path(path)
        response = self.client.request(
            "GET",
            f"/api/projects/{_id(project)}/exports/{_id(export)}/download/",
            stream=True,
            headers={"Accept": "*/*"},
        )
        with target.open("wb") as out:
            for chunk in response.iter_content(chunk_size=1 << 16):
                out.write(chunk)
        return target


class ExplainerRuns(_Part):
    def start(
        self,
        project: Ref,
        export: Ref,
        name: str,
        *,
        explainer: str | None = None,
        predictions: str | os.PathLike[str] | None = None,
        split: str = "test",
    ) -> dict[str, Any]:
        """Score an explainer against an export: a built-in one (`explainer`: "occlusion",
        "lime", "linear", "random") or a predictions file in ERASER's format."""
        url = f"/api/projects/{_id(project)}/exports/{_id(export)}/runs/"
        fields: dict[str, Any] = {"name": name, "split": split}
        if explainer is not None:
            fields["explainer"] = explainer
        if predictions is None:
            return self.client.post(url, fields)
        path = Path(predictions)
        return self.client.post(url, data=fields, files={"file": (path.name, path.read_bytes())})

    def list(self, project: Ref, export: Ref) -> list[dict[str, Any]]:
        return list(self.client.pages(f"/api/projects/{_id(project)}/exports/{_id(export)}/runs/"))

    def wait(
        self,
        project: Ref,
        export: Ref,
        run: Ref,
        *,
        progress: Progress = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        base = f"/api/projects/{_id(project)}/exports/{_id(export)}/runs/{_id(run)}/"
        try:
            self.client.wait(
                "explainer run", f"{base}progress/", progress=progress, timeout=timeout
            )
        except JobFailed:
            raise JobFailed("explainer run", self.results(project, export, run)) from None
        return self.results(project, export, run)

    def results(self, project: Ref, export: Ref, run: Ref) -> dict[str, Any]:
        """The run with its `scores` (and plausibility per instruction variant)."""
        run_id = _id(run)
        for found in self.list(project, export):
            if found["id"] == run_id:
                return found
        raise ApiError(404, "explainer run not found", url=f"runs/{run_id}")


class Agreement(_Part):
    def get(self, project: Ref) -> dict[str, Any]:
        """The project's agreement report as it stands."""
        return self.client.get(f"/api/projects/{_id(project)}/agreement/")

    def refresh(
        self,
        project: Ref,
        *,
        wait: bool = True,
        progress: Progress = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Recompute the report; with `wait`, returns it once computed."""
        base = f"/api/projects/{_id(project)}/agreement/"
        started = self.client.post(f"{base}refresh/")
        if not wait:
            return started
        self.client.wait("agreement report", f"{base}progress/", progress=progress, timeout=timeout)
        return self.get(project)
