"""What a project still needs before annotators can work on it: the setup checklist that its
overview shows an admin, and the reasons its workspace gives when it is not ready.

Two steps are required (items to annotate, an active instruction variant): without either,
"next" can serve nothing. Members in each needed role come next (annotators to do the work,
reviewers when annotations are reviewed), then two optional steps: a qualification rule or
test, and review thresholds chosen for this project rather than left at their defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotate.models import InstructionVariant, Item, Project, Role
from qc.models import QualityPolicy

# Where each step is done: the name of the project page's URL.
STEP_PAGES = {
    "data": "project-data",
    "variant": "project-instructions",
    "annotators": "project-workers",
    "reviewers": "project-workers",
    "qualification": "quality-page",
    "review_thresholds": "project-settings",
}


@dataclass(frozen=True)
class SetupStep:
    key: str
    title: str
    done: bool
    optional: bool
    # What is there (done) or what to do (not done), in words.
    detail: str
    url: str
    # What is missing, in words for anyone (not only those who can do it); "" when done.
    missing: str = ""


def _thresholds_are_defaults(project: Project) -> bool:
    fields = ("sufficiency_threshold", "compactness_threshold", "comprehensiveness_threshold")
    return all(getattr(project, name) == Project._meta.get_field(name).default for name in fields)


def _qualification_set(policy: QualityPolicy | None) -> bool:
    if policy is None:
        return False
    return bool(
        policy.min_approval_rate is not None
        or policy.min_approved_count is not None
        or policy.max_approval_rate is not None
        or policy.max_approved_count is not None
        or policy.allowed_locales
        or policy.masters_only
        or policy.test_enabled
        or policy.manual_selection
    )


def _url(project: Project, key: str) -> str:
    return reverse(STEP_PAGES[key], args=[project.pk])


def _data_step(project: Project) -> SetupStep:
    items = Item.objects.filter(project=project, gold__isnull=True).count()
    if items:
        detail = ngettext("%(n)d item to annotate.", "%(n)d items to annotate.", items) % {
            "n": items
        }
    else:
        detail = _("Import an ERASER dataset or raw texts.")
    return SetupStep(
        "data",
        _("Data imported"),
        items > 0,
        False,
        detail,
        _url(project, "data"),
        "" if items else _("There are no items to annotate yet."),
    )


def _variant_step(project: Project) -> SetupStep:
    active = InstructionVariant.objects.filter(project=project, active=True).count()
    if active:
        detail = ngettext("%(n)d variant active.", "%(n)d variants active.", active) % {"n": active}
    else:
        detail = _("Write an instruction variant, or add the study's presets, and activate it.")
    return SetupStep(
        "variant",
        _("An instruction variant active"),
        active > 0,
        False,
        detail,
        _url(project, "variant"),
        "" if active else _("No instruction variant is active yet."),
    )


def _member_steps(project: Project) -> list[SetupStep]:
    members = project.memberships.aggregate(
        annotators=Count("user", filter=Q(role=Role.ANNOTATOR), distinct=True),
        reviewers=Count("user", filter=Q(role=Role.REVIEWER), distinct=True),
    )
    annotators, reviewers = members["annotators"], members["reviewers"]
    return [
        SetupStep(
            "annotators",
            _("Annotators"),
            annotators > 0,
            False,
            ngettext("%(n)d annotator.", "%(n)d annotators.", annotators) % {"n": annotators}
            if annotators
            else _(
                "Add members with the annotator role, or share a crowd study link "
                "(Settings): its participants join as annotators."
            ),
            _url(project, "annotators"),
        ),
        SetupStep(
            "reviewers",
            _("Reviewers"),
            reviewers > 0,
            False,
            ngettext("%(n)d reviewer.", "%(n)d reviewers.", reviewers) % {"n": reviewers}
            if reviewers
            else _(
                "Add members with the reviewer role: they score annotations and send back "
                "what falls below the thresholds."
            ),
            _url(project, "reviewers"),
        ),
    ]


def _optional_steps(project: Project) -> list[SetupStep]:
    qualification = _qualification_set(QualityPolicy.objects.filter(project=project).first())
    thresholds_chosen = not _thresholds_are_defaults(project)
    return [
        SetupStep(
            "qualification",
            _("Worker qualification"),
            qualification,
            True,
            _("Rules or a test decide who may work.")
            if qualification
            else _(
                "Optional: rules on workers' records, a test on gold items, or manual selection."
            ),
            _url(project, "qualification"),
        ),
        SetupStep(
            "review_thresholds",
            _("Review thresholds"),
            thresholds_chosen,
            True,
            _("Chosen for this project.")
            if thresholds_chosen
            else _("Optional: the defaults apply until you choose this project's own."),
            _url(project, "review_thresholds"),
        ),
    ]


def project_setup_checklist(*, project: Project) -> list[SetupStep]:
    """Every setup step of `project`, in the order an admin does them."""
    return [
        _data_step(project),
        _variant_step(project),
        *_member_steps(project),
        *_optional_steps(project),
    ]


def project_missing_to_annotate(*, project: Project) -> list[SetupStep]:
    """The steps `project` still lacks before any annotator can be served an item (items to
    annotate, an active variant): empty when it is ready."""
    return [step for step in (_data_step(project), _variant_step(project)) if not step.done]
