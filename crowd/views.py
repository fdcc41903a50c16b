"""The worker's pages of a crowd study: the entry from the platform, MTurk's preview,
consent, the work (the annotator workspace with the session's hand-off script), and the
way back to the platform (completion or screen-out). Every dead end has a page that
says what to do on the platform."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth import login
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from annotate.participants import CONSENT_DECLINED, ConsentRequiredError
from annotate.selectors import annotator_access_get
from config.exceptions import NotFoundError
from config.request_body_limits import annotator_request
from crowd import platforms, selectors, services
from crowd.apis import session_page_url
from crowd.models import SessionStatus
from crowd.throttling import CrowdEntryThrottle
from qc.models import QualificationStatus

CROWD_SIGN_IN_BACKEND = "config.auth.ModelBackend"

# Words the pages put into their sentences, in the worker's language (their browser's).
_PLATFORM_WORDS = {
    platforms.MTURK: {"name": "MTurk", "task": "HIT", "leave": gettext_lazy("return the HIT")},
    platforms.PROLIFIC: {
        "name": "Prolific",
        "task": gettext_lazy("study"),
        "leave": gettext_lazy("return your submission"),
    },
    platforms.OTHER: {
        "name": gettext_lazy("the platform"),
        "task": gettext_lazy("task"),
        "leave": gettext_lazy("leave the task"),
    },
}


def _frameable(response, link):
    """MTurk shows the entry in a frame on its own site: allow exactly its origins. The
    rest of the site's Content Security Policy stays (django-csp replaces one directive)."""
    if link is not None and link.platform == platforms.MTURK:
        response.xframe_options_exempt = True
        response._csp_replace = {"frame-ancestors": ["'self'", *settings.CROWD_FRAME_ANCESTORS]}
    return response


def _message(request, *, title: str, text: str, status: int, link=None, hint: str = ""):
    response = render(
        request,
        "crowd/message.html",
        {"title": title, "text": text, "hint": hint, "link": link, **_words(link)},
        status=status,
    )
    return _frameable(response, link)


def _words(link) -> dict:
    return {"words": _PLATFORM_WORDS[link.platform] if link is not None else {}}


@require_http_methods(["GET", "HEAD"])
def entry(request, key: str):
    link = selectors.study_link_by_key(key=key)
    if link is None:
        return _message(
            request,
            title=_("Study not found"),
            text=_("This study link does not exist. Check the address you were given."),
            status=404,
        )
    throttle = CrowdEntryThrottle()
    if not throttle.allow_request(request, None):
        wait = int(throttle.wait() or 60) + 1
        response = _message(
            request,
            title=_("Too many requests"),
            text=_(
                "Too many visits from your network just now. Please try again in %(wait)s seconds."
            )
            % {"wait": wait},
            status=429,
            link=link,
        )
        response["Retry-After"] = str(wait)
        return response
    if not link.active:
        return _closed(request, link)
    try:
        arrival = platforms.arrival_from_query(
            link.platform,
            request.GET,
            id_parameter=link.id_parameter,
            submit_origins=settings.CROWD_MTURK_SUBMIT_ORIGINS,
        )
    except platforms.ParameterError as error:
        return _message(
            request,
            title=_("This link is missing something"),
            # The parameter's problem is the platforms module's own words (English).
            text=_("The parameter %(parameter)s %(problem)s.")
            % {"parameter": error.parameter, "problem": error.message},
            hint=_(
                "Please open the %(task)s again from %(name)s; if this keeps happening, "
                "contact the researcher."
            )
            % _words(link)["words"],
            status=400,
            link=link,
        )
    if isinstance(arrival, platforms.Preview):
        return _preview(request, link)
    if request.method == "HEAD":
        # A link checker's request: the ids are fine, but nobody arrived.
        return _frameable(HttpResponse(), link)
    if request.headers.get("Sec-Fetch-Dest") == "iframe":
        # Inside MTurk's frame the site's cookies are third-party, which browsers
        # increasingly refuse: the work opens in a tab of its own, top-level.
        return _frameable(
            render(
                request,
                "crowd/open_in_tab.html",
                {"link": link, "url": request.get_full_path(), **_words(link)},
            ),
            link,
        )
    if _signed_in_as_someone_else(request):
        return _frameable(
            render(
                request,
                "crowd/sign_out_first.html",
                {"username": request.user.get_username(), "study_url": request.get_full_path()},
                status=409,
            ),
            link,
        )
    try:
        # The arrival and the sign-in (its session row, last login and access log) in one
        # commit: at a crowd launch's 30 arrivals a second each commit's WAL flush counts,
        # and an entry made five of them.
        with transaction.atomic():
            arrived = services.crowd_entry(link=link, arrival=arrival)
            # The platform's ids are the credential here, not a password: sign the worker
            # in with the model backend by name (with several backends configured,
            # login() must be told).
            login(request, arrived.worker, backend=CROWD_SIGN_IN_BACKEND)
    except services.StudyClosedError:
        return _closed(request, link)
    except services.EntryRefusedError as error:
        return _message(
            request,
            title=_("This link cannot be used"),
            text=error.message,
            hint=_("Please contact the researcher through the platform."),
            status=403,
            link=link,
        )
    return redirect(session_page_url(arrived.session))


def _signed_in_as_someone_else(request) -> bool:
    """The browser is signed in as a member's or staff's account (anything but a crowd
    worker's): a study link must not replace that session with a crowd account's."""
    user = request.user
    if not user.is_authenticated:
        return False
    if user.is_staff or user.is_superuser:
        return True
    return not selectors.platform_account_ids([user.pk])


def _closed(request, link):
    return _message(
        request,
        title=_("This study is closed"),
        text=_("This study no longer takes part."),
        hint=_("Please %(leave)s on %(name)s. Thank you for your interest.")
        % _PLATFORM_WORDS[link.platform],
        status=410,
        link=link,
    )


def _preview(request, link):
    variant = selectors.link_variant_current(link)
    return _frameable(
        render(
            request,
            "crowd/preview.html",
            {"link": link, "variant": variant, "examples": _examples(variant), **_words(link)},
        ),
        link,
    )


def _examples(variant) -> list[dict]:
    """A variant's examples as tokens with their highlight, for the template."""
    if variant is None:
        return []
    examples = []
    for example in variant.examples or []:
        highlighted = set(example.get("highlighted", []))
        examples.append(
            {
                "tokens": [
                    {"text": t, "on": n in highlighted} for n, t in enumerate(example["tokens"])
                ],
                "label": example.get("label", ""),
                "note": example.get("note", ""),
            }
        )
    return examples


def _own_session(request, session_id: int, *, with_project: bool = False):
    try:
        return selectors.crowd_session_get_for_worker(
            session_id=session_id, worker=request.user, with_project=with_project
        )
    except NotFoundError:
        return None


def _lost(request):
    return _message(
        request,
        title=_("Session not found"),
        text=_("We could not find your session in this browser."),
        hint=_("Please open the study again from the platform: your work so far is kept."),
        status=404,
    )


@annotator_request
@require_http_methods(["GET", "HEAD", "POST"])
def consent(request, session_id: int):
    session = _own_session(request, session_id)
    if session is None:
        return _lost(request)
    if request.method == "POST":
        answer = request.POST.get("answer")
        if answer not in ("agree", "decline"):
            return _message(
                request,
                title=_("Please choose"),
                text=_("The form must say whether you agree or decline."),
                status=400,
                link=session.link,
            )
        session = services.crowd_consent_record(session=session, agree=answer == "agree")
        return redirect(session_page_url(session))
    if session.status != SessionStatus.STARTED:
        return redirect(session_page_url(session))
    return render(
        request,
        "crowd/consent.html",
        {"session": session, "link": session.link, **_words(session.link)},
    )


def consent_refused_page(request, refusal: ConsentRequiredError, *, project_id: int, link=None):
    """What a participant whose consent stands in the way sees instead of the work: the way
    to the consent form while it is to be answered; after a decline, that it was."""
    declined = refusal.code == CONSENT_DECLINED
    awaiting = (
        None
        if declined
        else selectors.session_awaiting_consent(worker=request.user, project_id=project_id)
    )
    link = awaiting.link if awaiting is not None else link
    response = render(
        request,
        "crowd/consent_refused.html",
        {
            "declined": declined,
            "consent_url": reverse("crowd:consent", args=[awaiting.pk]) if awaiting else "",
            "link": link,
            **_words(link),
        },
        status=403,
    )
    return _frameable(response, link)


@annotator_request
@require_http_methods(["GET", "HEAD"])
def work(request, session_id: int):
    session = _own_session(request, session_id, with_project=True)
    if session is None:
        return _lost(request)
    if session.status != SessionStatus.WORKING:
        return redirect(session_page_url(session))
    project = session.link.project
    try:
        # Another session of theirs may have asked for consent again since, or declined.
        annotator_access_get(project=project, user=request.user)
    except ConsentRequiredError as refusal:
        return consent_refused_page(request, refusal, project_id=project.pk, link=session.link)
    from qc.services import qualification_standing

    # The first visit decides the standing by the rules; whoever is turned away goes
    # back to the platform from here, before any work is shown.
    standing = qualification_standing(project=session.link.project, worker=request.user)
    if standing.status in (
        QualificationStatus.REJECTED,
        QualificationStatus.BLOCKED,
        QualificationStatus.PENDING,
    ):
        session = services.crowd_session_finish(session=session)
        if session.ended:
            return redirect(session_page_url(session))
    return render(
        request,
        "crowd/work.html",
        {
            "session": session,
            "link": session.link,
            "project": session.link.project,
            "progress": selectors.session_progress(session),
            **_words(session.link),
        },
    )


@annotator_request
@require_http_methods(["GET", "HEAD"])
def done(request, session_id: int):
    session = _own_session(request, session_id)
    if session is None:
        return _lost(request)
    if session.status != SessionStatus.COMPLETED:
        return redirect(session_page_url(session))
    link = session.link
    context = {"session": session, "link": link, **_words(link)}
    if link.platform == platforms.MTURK:
        context["submit_url"] = platforms.mturk_submit_url(session.submit_to)
    else:
        context["return_url"] = _return_url(session, link.completion_code)
        context["code"] = link.completion_code
    response = render(request, "crowd/done.html", context)
    if "submit_url" in context:
        # The page's form posts the HIT to MTurk: the policy's form-action lets it go to
        # that origin alone (checked against CROWD_MTURK_SUBMIT_ORIGINS at arrival).
        submit_to = urlsplit(context["submit_url"])
        response._csp_update = {"form-action": [f"{submit_to.scheme}://{submit_to.netloc}"]}
    return response


def _return_url(session, code: str) -> str:
    link = session.link
    if link.platform == platforms.PROLIFIC:
        template = settings.CROWD_PROLIFIC_COMPLETION_URL
    else:
        template = link.completion_url_template
    profile = getattr(session.worker, "worker_profile", None)
    try:
        return platforms.completion_url(
            template,
            external_id=profile.external_id if profile else "",
            code=code,
            token=session.completion_token,
        )
    except ValueError:
        # A template saved before placeholders in the host were refused: the page shows
        # the code without a link rather than send the worker to a host an id chose.
        return ""


@annotator_request
@require_http_methods(["GET", "HEAD"])
def end(request, session_id: int):
    """Declined or screened out: back to the platform with the screen-out code where it
    takes one, else a page saying what to do there."""
    session = _own_session(request, session_id)
    if session is None:
        return _lost(request)
    if session.status not in (SessionStatus.SCREENED_OUT, SessionStatus.DECLINED):
        return redirect(session_page_url(session))
    link = session.link
    return_url = ""
    if link.platform != platforms.MTURK and link.screen_out_code:
        return_url = _return_url(session, link.screen_out_code)
    return render(
        request,
        "crowd/end.html",
        {
            "session": session,
            "link": link,
            "declined": session.status == SessionStatus.DECLINED,
            "awaiting": session.end_reason == services.AWAITING_SELECTION,
            "return_url": return_url,
            "code": link.screen_out_code,
            **_words(link),
        },
    )
