"""Who may do what: every operation of the API schema and every page, for every kind of
caller, checked against a table written down here.

The table is the promise; it is written by hand, not read from the views, so a view that
opens itself to one role more fails here. Each row names the callers who may do the
operation and its scope, which decides what everyone else gets:

- PROJECT: the project in the address (or the object's project). A caller who is not a
  member of it gets 404, so project ids do not leak; a member without the role gets 403.
- SITE: site staff only; everyone else signed in gets 403.
- OWNER: the caller's own assignment or crowd session; anyone else gets 404.
- SIGNED_IN: anyone signed in; PUBLIC: anyone at all.
A caller who is not signed in gets 401 from the API, with the Basic challenge.

The callers: nobody, a signed-in user with no membership, one member per project role,
site staff, the admin of another project and a crowd participant (an annotator made by a
study link). The data is built once for the module; each request runs in a savepoint that
is rolled back, so no operation changes what the next one sees.

docs/reference/permissions.md shows the same table; a test below keeps it in step.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.forms.models import model_to_dict
from django.urls import get_resolver, reverse
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from annotate.models import (
    ImportJob,
    InstructionVariant,
    Perturbation,
    Project,
    ProjectInvitation,
    ProjectMembership,
    Role,
)
from annotate.services import assignment_next
from annotate.services.api_tokens import api_token_create
from crowd.models import StudyLink
from crowd.platforms import Arrival
from crowd.services import crowd_consent_record, crowd_entry, study_link_create
from exports.models import ClassifierModel, ExplainerRun, Export
from qc.models import ItemView, ProjectWorker, QualificationStatus, WorkerImportJob
from tests.annotate.perturbation_helpers import original_item
from tests.annotate.workflow_helpers import make_project, submit_first_tokens
from tests.factories import UserFactory

ANONYMOUS = "anonymous"
NO_MEMBERSHIP = "signed in, no membership"
ADMIN = Role.ADMIN.value
RESEARCHER = Role.RESEARCHER.value
REVIEWER = Role.REVIEWER.value
ANNOTATOR = Role.ANNOTATOR.value
AUTHOR = Role.AUTHOR.value
CHECKER = Role.CHECKER.value
CURATOR = Role.CURATOR.value
STAFF = "staff"
OTHER_ADMIN = "admin of another project"
CROWD = "crowd participant"

PROJECT_ROLES = (ADMIN, RESEARCHER, REVIEWER, ANNOTATOR, AUTHOR, CHECKER, CURATOR)
CALLERS = (ANONYMOUS, NO_MEMBERSHIP, *PROJECT_ROLES, STAFF, OTHER_ADMIN, CROWD)
# The crowd participant is an annotator of the project (crowd/services.py, crowd_entry).
MEMBERS = frozenset((*PROJECT_ROLES, CROWD))
SIGNED_IN_CALLERS = frozenset(CALLERS) - {ANONYMOUS}

PROJECT, SITE, OWNER, SIGNED_IN, PUBLIC = "project", "site", "owner", "signed in", "public"


@dataclass(frozen=True)
class Rule:
    allowed: frozenset[str]
    scope: str
    note: str = ""


def rule(scope: str, *allowed: str, note: str = "") -> Rule:
    return Rule(frozenset(allowed), scope, note)


ADMINS = (ADMIN,)
REPORTERS = (ADMIN, RESEARCHER)
REVIEWERS = (ADMIN, REVIEWER)
WORKERS = (ANNOTATOR, CROWD)
PERTURBATION_STEP = (ADMIN, AUTHOR, CHECKER)
DATA_READERS = (ADMIN, RESEARCHER, CURATOR)
CURATORS = (ADMIN, CURATOR)

# One row per operation id of the OpenAPI schema.
API: dict[str, Rule] = {
    # Site accounts: staff only.
    "accounts_list": rule(SITE, STAFF),
    "accounts_create": rule(SITE, STAFF),
    "accounts_active_create": rule(SITE, STAFF),
    "accounts_password_create": rule(SITE, STAFF),
    "accounts_events_list": rule(SITE, STAFF),
    "accounts_sign_in_unlock_create": rule(SITE, STAFF),
    # Invitations into a project: the invitee answers their own; the project's admins list
    # and withdraw them.
    "invitations_list": rule(SIGNED_IN, *SIGNED_IN_CALLERS, note="lists the caller's own"),
    "invitations_accept_create": rule(OWNER, NO_MEMBERSHIP, note="the caller's own invitation"),
    "invitations_decline_create": rule(OWNER, NO_MEMBERSHIP, note="the caller's own invitation"),
    "projects_invitations_list": rule(PROJECT, *ADMINS),
    "projects_invitations_withdraw_create": rule(PROJECT, *ADMINS),
    # Reviews: the annotation's project decides.
    "annotations_review_retrieve": rule(PROJECT, *REVIEWERS, note="the annotation's project"),
    "annotations_reviews_create": rule(PROJECT, *REVIEWERS, note="the annotation's project"),
    # The annotator's own assignment.
    "assignments_retrieve": rule(OWNER, ANNOTATOR, note="the caller's own assignment"),
    "assignments_draft_update": rule(OWNER, ANNOTATOR, note="the caller's own assignment"),
    "assignments_feedback_retrieve": rule(OWNER, ANNOTATOR, note="the caller's own assignment"),
    "assignments_skip_create": rule(OWNER, ANNOTATOR, note="the caller's own assignment"),
    "assignments_submit_create": rule(OWNER, ANNOTATOR, note="the caller's own assignment"),
    # The annotator's own previous answers.
    "answers_retrieve": rule(OWNER, ANNOTATOR, note="the caller's own answer"),
    "answers_change_create": rule(OWNER, ANNOTATOR, note="the caller's own answer"),
    "projects_answers_list": rule(PROJECT, *WORKERS, note="lists the caller's own"),
    # The crowd participant's own session.
    "crowd_sessions_retrieve": rule(OWNER, CROWD, note="the caller's own crowd session"),
    "crowd_sessions_finish_create": rule(OWNER, CROWD, note="the caller's own crowd session"),
    # Projects.
    "projects_list": rule(SIGNED_IN, *SIGNED_IN_CALLERS, note="lists the caller's projects"),
    "projects_create": rule(SITE, STAFF, note="or the 'add project' permission"),
    "projects_retrieve": rule(PROJECT, *MEMBERS),
    "projects_policy_partial_update": rule(PROJECT, *ADMINS),
    "projects_members_create": rule(PROJECT, *ADMINS),
    "projects_progress_retrieve": rule(PROJECT, *REPORTERS),
    "projects_progress_mine_retrieve": rule(PROJECT, *WORKERS),
    # A project's accounts.
    "projects_accounts_list": rule(PROJECT, *ADMINS),
    "projects_accounts_create": rule(PROJECT, *ADMINS),
    "projects_accounts_active_create": rule(PROJECT, *ADMINS, note="a member of this project"),
    "projects_accounts_password_create": rule(PROJECT, *ADMINS, note="a member of this project"),
    "projects_accounts_events_list": rule(PROJECT, *ADMINS),
    # Imports and items.
    "projects_imports_list": rule(PROJECT, *ADMINS),
    "projects_imports_create": rule(PROJECT, *ADMINS),
    "projects_imports_retrieve": rule(PROJECT, *ADMINS, note="an import of this project"),
    "projects_imports_progress_retrieve": rule(PROJECT, *ADMINS, note="an import of this project"),
    # Instructions.
    "projects_variants_list": rule(PROJECT, *REPORTERS),
    "projects_variants_create": rule(PROJECT, *ADMINS),
    "projects_variants_partial_update": rule(PROJECT, *ADMINS, note="a variant of this project"),
    "projects_variants_presets_create": rule(PROJECT, *ADMINS),
    "projects_variants_suggestions_update": rule(
        PROJECT, *ADMINS, note="a variant of this project; the run must be this project's"
    ),
    # Annotating.
    "projects_assignments_next_create": rule(PROJECT, *WORKERS),
    "projects_qualification_retrieve": rule(PROJECT, *WORKERS),
    "projects_qualification_next_create": rule(PROJECT, *WORKERS),
    "projects_qualification_answers_create": rule(PROJECT, *WORKERS),
    # Review and quality.
    "projects_reviews_next_create": rule(PROJECT, *REVIEWERS),
    "projects_reviews_queue_retrieve": rule(PROJECT, *REVIEWERS),
    "projects_pipeline_retrieve": rule(PROJECT, *REPORTERS),
    "projects_charts_pipeline_retrieve": rule(PROJECT, ADMIN, RESEARCHER, REVIEWER),
    "projects_charts_seconds_per_item_retrieve": rule(PROJECT, *REPORTERS),
    "projects_quality_policy_retrieve": rule(PROJECT, *ADMINS),
    "projects_quality_policy_partial_update": rule(PROJECT, *ADMINS),
    "projects_gold_items_update": rule(PROJECT, *ADMINS, note="items of this project only"),
    "projects_gold_items_choices_list": rule(PROJECT, *ADMINS),
    "projects_audit_retrieve": rule(PROJECT, *ADMINS),
    "projects_setup_checklist_list": rule(PROJECT, *ADMINS),
    # Workers.
    "projects_workers_retrieve": rule(PROJECT, *REPORTERS),
    "projects_workers_block_create": rule(PROJECT, *ADMINS, note="a worker of this project"),
    "projects_workers_unblock_create": rule(PROJECT, *ADMINS, note="a worker of this project"),
    "projects_workers_import_create": rule(PROJECT, *ADMINS),
    "projects_workers_import_jobs_create": rule(PROJECT, *ADMINS),
    "projects_workers_import_jobs_retrieve": rule(PROJECT, *ADMINS, note="a job of this project"),
    "projects_workers_import_jobs_progress_retrieve": rule(
        PROJECT, *ADMINS, note="a job of this project"
    ),
    "projects_candidates_retrieve": rule(PROJECT, *ADMINS),
    "projects_candidates_decision_create": rule(PROJECT, *ADMINS, note="a worker of this project"),
    # Agreement.
    "projects_agreement_retrieve": rule(PROJECT, *REPORTERS),
    "projects_agreement_refresh_create": rule(PROJECT, *REPORTERS),
    "projects_agreement_csv_retrieve": rule(PROJECT, *REPORTERS),
    "projects_agreement_progress_retrieve": rule(PROJECT, *REPORTERS),
    "projects_agreement_suggestions_retrieve": rule(PROJECT, *REPORTERS),
    # Exports, explainer runs and the datasheet.
    "projects_exports_list": rule(PROJECT, *REPORTERS),
    "projects_exports_create": rule(PROJECT, *REPORTERS),
    "projects_exports_retrieve": rule(PROJECT, *REPORTERS, note="an export of this project"),
    "projects_exports_cancel_create": rule(PROJECT, *REPORTERS, note="an export of this project"),
    "projects_exports_download_retrieve": rule(
        PROJECT, *REPORTERS, note="an export of this project"
    ),
    "projects_exports_progress_retrieve": rule(
        PROJECT, *REPORTERS, note="an export of this project"
    ),
    "projects_exports_runs_list": rule(PROJECT, *REPORTERS, note="an export of this project"),
    "projects_exports_runs_create": rule(PROJECT, *REPORTERS, note="an export of this project"),
    "projects_models_list": rule(PROJECT, *REPORTERS),
    "projects_models_create": rule(PROJECT, *ADMINS),
    "projects_models_destroy": rule(PROJECT, *ADMINS),
    "projects_runs_compare_list": rule(PROJECT, *REPORTERS),
    "projects_exports_runs_progress_retrieve": rule(
        PROJECT, *REPORTERS, note="a run of an export of this project"
    ),
    "projects_datasheet_retrieve": rule(PROJECT, *REPORTERS),
    "projects_datasheet_partial_update": rule(PROJECT, *ADMINS),
    "projects_datasheet_preview_retrieve": rule(PROJECT, *REPORTERS),
    # Perturbations.
    "projects_perturbations_list": rule(PROJECT, *PERTURBATION_STEP),
    "projects_perturbations_create": rule(PROJECT, ADMIN, AUTHOR, note="an item of this project"),
    "projects_perturbations_retrieve": rule(
        PROJECT, *PERTURBATION_STEP, note="a perturbation of this project"
    ),
    "projects_perturbations_check_create": rule(
        PROJECT, ADMIN, CHECKER, note="a perturbation of this project, not the caller's own"
    ),
    "projects_perturbations_originals_list": rule(PROJECT, *PERTURBATION_STEP),
    "projects_perturbations_originals_retrieve": rule(
        PROJECT, *PERTURBATION_STEP, note="an item of this project"
    ),
    "projects_perturbations_progress_retrieve": rule(PROJECT, ADMIN, RESEARCHER, AUTHOR, CHECKER),
    "projects_perturbations_queue_list": rule(PROJECT, ADMIN, CHECKER),
    "projects_perturbations_settings_retrieve": rule(PROJECT, ADMIN, RESEARCHER, AUTHOR, CHECKER),
    "projects_perturbations_settings_partial_update": rule(PROJECT, *ADMINS),
    # Crowd studies.
    "projects_crowd_links_list": rule(PROJECT, *ADMINS),
    "projects_crowd_links_create": rule(PROJECT, *ADMINS, note="a variant of this project"),
    "projects_crowd_links_retrieve": rule(PROJECT, *ADMINS, note="a link of this project"),
    "projects_crowd_links_partial_update": rule(PROJECT, *ADMINS, note="a link of this project"),
    "projects_crowd_links_bonuses_retrieve": rule(PROJECT, *ADMINS, note="a link of this project"),
    "projects_crowd_links_external_question_retrieve": rule(
        PROJECT, *ADMINS, note="a link of this project"
    ),
    "projects_crowd_links_sessions_retrieve": rule(PROJECT, *ADMINS, note="a link of this project"),
    "projects_crowd_links_verify_create": rule(PROJECT, *ADMINS, note="a link of this project"),
    "projects_crowd_earnings_retrieve": rule(PROJECT, *ADMINS),
    "projects_crowd_pay_report_retrieve": rule(PROJECT, *REPORTERS),
    # The data manager's item page: those who run, study or curate the data.
    "projects_items_retrieve": rule(
        PROJECT, ADMIN, CURATOR, RESEARCHER, note="an item of this project"
    ),
    # The data manager: the list and saved views for those who read the
    # project's data, bulk actions for its admins.
    "projects_items_list": rule(PROJECT, *DATA_READERS),
    "projects_items_bulk_create": rule(PROJECT, *ADMINS),
    "projects_item_views_list": rule(PROJECT, *DATA_READERS),
    "projects_item_views_create": rule(PROJECT, *DATA_READERS),
    "projects_item_views_partial_update": rule(
        PROJECT, ADMIN, RESEARCHER, note="a view seen by the caller: its creator, or an admin"
    ),
    "projects_item_views_destroy": rule(
        PROJECT, ADMIN, RESEARCHER, note="a view seen by the caller: its creator, or an admin"
    ),
    # Hugging Face datasets (docs/howto/huggingface.md): the columns and mapping an import
    # would read, shown before an import is started; as imports, the project's admins only.
    "projects_imports_hf_mapping_create": rule(PROJECT, *ADMINS),
    # Curation: adjudicated gold rationale sets (docs/design/architecture.md#curation).
    # Curators and admins only; the curator role opens nothing else.
    "projects_curation_queue_retrieve": rule(PROJECT, *CURATORS),
    "projects_curation_items_retrieve": rule(PROJECT, *CURATORS, note="an item of this project"),
    "projects_curation_items_update": rule(PROJECT, *CURATORS, note="an item of this project"),
    "projects_curation_items_confirm_create": rule(
        PROJECT, *CURATORS, note="an item of this project"
    ),
    "projects_curation_auto_merge_create": rule(
        PROJECT, *CURATORS, note="items of this project only"
    ),
    # Personal API tokens: the caller's own; a study participant's account
    # cannot have any (and with no token of its own, every token id is not found to it).
    "tokens_list": rule(SIGNED_IN, *(SIGNED_IN_CALLERS - {CROWD}), note="the caller's own"),
    "tokens_create": rule(SIGNED_IN, *(SIGNED_IN_CALLERS - {CROWD}), note="not a crowd account"),
    "tokens_revoke_create": rule(OWNER, NO_MEMBERSHIP, note="the caller's own token"),
    # A project's lifecycle (docs/design/architecture.md, "A project's lifecycle"): members'
    # roles and removal, deletion with restore, archive. A deleted project's admins and site staff restore it.
    "projects_members_update": rule(PROJECT, *ADMINS, note="a member of this project"),
    "projects_members_destroy": rule(PROJECT, *ADMINS, note="a member of this project"),
    "projects_imports_delete_create": rule(PROJECT, *ADMINS, note="an import of this project"),
    "projects_imports_restore_create": rule(PROJECT, *ADMINS, note="an import of this project"),
    "projects_items_delete_create": rule(PROJECT, *ADMINS, note="items of this project only"),
    "projects_items_restore_create": rule(PROJECT, *ADMINS, note="items of this project only"),
    "projects_deleted_retrieve": rule(PROJECT, *ADMINS),
    "projects_delete_create": rule(PROJECT, *ADMINS, note="typing the project's name"),
    "projects_restore_create": rule(PROJECT, ADMIN, STAFF, note="a deleted project"),
    "projects_archive_create": rule(PROJECT, *ADMINS),
    "projects_unarchive_create": rule(PROJECT, *ADMINS),
    "deleted_projects_list": rule(
        SIGNED_IN, *SIGNED_IN_CALLERS, note="lists the deleted projects the caller may restore"
    ),
}


# ---------------------------------------------------------------- the world


@dataclass
class World:
    project: Project
    other_project: Project
    users: dict
    clients: dict
    objects: dict  # path parameter (or path-specific key) -> model instance of `project`
    other_ids: dict  # the other project's id, and its export's (a parent under which to ask)


def _client(user) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_login(user)
    return client


def _build_world() -> World:
    project = make_project(items=6, variants=("plain",), quota=2, min_highlight=1)
    other_project = make_project(items=2, variants=("plain",), quota=1, min_highlight=1)
    users = {role: UserFactory(username=f"matrix-{role}") for role in PROJECT_ROLES}
    for role in PROJECT_ROLES:
        ProjectMembership.objects.create(project=project, user=users[role], role=role)
    users[NO_MEMBERSHIP] = UserFactory(username="matrix-nobody")
    users[STAFF] = UserFactory(username="matrix-staff", is_staff=True)
    users[OTHER_ADMIN] = UserFactory(username="matrix-other-admin")
    ProjectMembership.objects.create(
        project=other_project, user=users[OTHER_ADMIN], role=Role.ADMIN
    )
    # Whom the account operations act on: an annotator of this project and nothing else.
    subject = UserFactory(username="matrix-subject")
    ProjectMembership.objects.create(project=project, user=subject, role=Role.ANNOTATOR)

    variant = InstructionVariant.objects.get(project=project)
    annotator = users[ANNOTATOR]
    # A submitted annotation (for the reviewers) and an open lease (for its owner).
    done = assignment_next(project=project, worker=annotator)
    annotation = submit_first_tokens(done, annotator).annotation
    lease = assignment_next(project=project, worker=annotator)

    link = study_link_create(
        project=project,
        acting_user=users[ADMIN],
        name="matrix study",
        platform="mturk",
        consent_text="I agree.",
        items_required=2,
    )
    entry = crowd_entry(
        link=link,
        arrival=Arrival(
            worker_id="MATRIXWORKER",
            session_id="MATRIXASSIGN",
            task_id="MATRIXHIT",
            submit_to="https://workersandbox.mturk.com",
        ),
    )
    session = crowd_consent_record(session=entry.session, agree=True)
    users[CROWD] = entry.worker

    export = Export.objects.create(
        project=project, params={}, status="succeeded", created_by=users[RESEARCHER]
    )
    run = ExplainerRun.objects.create(export=export, name="matrix run", status="succeeded")
    classifier_model = ClassifierModel.objects.create(
        project=project, name="matrix model", folder="models/matrix", labels=["a", "b"]
    )
    import_job = ImportJob.objects.create(
        project=project,
        source_format="jsonl",
        source_name="matrix.jsonl",
        upload="imports/matrix.jsonl",
        status="succeeded",
    )
    worker_import_job = WorkerImportJob.objects.create(
        project=project, source_name="w.csv", upload="x.csv", status="succeeded"
    )
    original = original_item(project, "matrix-original", ["A plain sentence to perturb ."])
    perturbation = Perturbation.objects.create(
        project=project,
        original=original,
        types=["syntax"],
        texts=["A plain sentence not to perturb ."],
        author=users[AUTHOR],
    )
    candidate = ProjectWorker.objects.create(
        project=project, worker=subject, status=QualificationStatus.PENDING
    )

    # An open invitation into this project, for the signed-in user who belongs to none.
    invitation = ProjectInvitation.objects.create(
        project=project,
        invited_user=users[NO_MEMBERSHIP],
        roles=[Role.ANNOTATOR],
        invited_by=users[ADMIN],
    )

    # A view the researcher shared with the project: theirs to change, and an admin's.
    item_view = ItemView.objects.create(
        project=project,
        creator=users[RESEARCHER],
        name="matrix view",
        query="split=train",
        shared=True,
    )

    other_export = Export.objects.create(project=other_project, params={}, status="succeeded")
    api_token = api_token_create(owner=users[NO_MEMBERSHIP], name="matrix token").api_token
    objects = {
        "project_id": project,
        "annotation_id": annotation,
        "assignment_id": lease,
        "answer_id": done,
        "session_id": session,
        "link_id": link,
        "export_id": export,
        "run_id": run,
        "model_id": classifier_model,
        "imports/job_id": import_job,
        "import-jobs/job_id": worker_import_job,
        "item_id": original,
        "perturbation_id": perturbation,
        "variant_id": variant,
        "worker_id": candidate.worker,
        "accounts/user_id": subject,
        "invitation_id": invitation,
        "view_id": item_view,
        "token_id": api_token,
    }
    other_ids = {
        "project_id": other_project.pk,
        "export_id": other_export.pk,
    }
    clients = {caller: _client(users.get(caller)) for caller in CALLERS}
    return World(project, other_project, users, clients, objects, other_ids)


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """Built once for the module in a transaction that is rolled back at its end, so
    nothing of it outlives the module."""
    with django_db_blocker.unblock(), transaction.atomic():
        yield _build_world()
        transaction.set_rollback(True)


# ---------------------------------------------------------------- the schema


@pytest.fixture(scope="module")
def operations() -> dict[str, tuple[str, str]]:
    """operation id -> (method, path template) of every operation of the schema."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    found = {}
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                found[operation["operationId"]] = (method, path)
    return found


def _row_to_add(operation_id: str, method: str, path: str) -> str:
    scope = "PROJECT" if "{project_id}" in path else "OWNER"
    return f'    "{operation_id}": rule({scope}, ADMIN),  # {method.upper()} {path}'


def test_the_table_declares_every_operation_of_the_schema_and_no_other(operations):
    undeclared = sorted(set(operations) - set(API))
    gone = sorted(set(API) - set(operations))

    assert not undeclared, (
        "operations the permission table does not declare. Add a row to API in "
        "tests/test_permission_matrix.py for each, naming the callers who may call it "
        "(ADMIN, RESEARCHER, REVIEWER, ANNOTATOR, AUTHOR, CHECKER, CROWD, STAFF, ...) and "
        "its scope (PROJECT, SITE, OWNER, SIGNED_IN or PUBLIC); give an operation that takes "
        "a body one in _body; then PERMISSIONS_DOC_UPDATE=1 python -m pytest "
        "tests/test_permission_matrix.py -k docs writes docs/reference/permissions.md:\n"
        + "\n".join(_row_to_add(op, *operations[op]) for op in undeclared)
    )
    assert not gone, f"rows for operations the schema no longer has; remove them: {gone}"


def _object_key(name: str, path: str) -> str:
    if name == "job_id":
        return "import-jobs/job_id" if "/import-jobs/" in path else "imports/job_id"
    if name == "user_id":
        return "accounts/user_id"
    return name


def _path_parameters(path: str) -> list[str]:
    return [part[1:-1] for part in path.split("/") if part.startswith("{")]


def _url(world: World, path: str, overrides: dict | None = None) -> str:
    url = path
    for name in _path_parameters(path):
        key = _object_key(name, path)
        value = (overrides or {}).get(key, world.objects[key].pk)
        url = url.replace("{" + name + "}", str(value))
    return url


# A body good enough to pass validation, for the operations that take one. An allowed
# caller's answer may still be 400 or 409 (the data's state), never 401, 403 or 404.
def _body(operation_id: str, world: World):
    objects = world.objects
    bodies = {
        "accounts_create": {"username": "matrix-new", "credential": "one_time_password"},
        "accounts_active_create": {"active": False},
        "accounts_password_create": {"credential": "one_time_password"},
        "annotations_reviews_create": {
            "comprehensiveness": 2,
            "set_scores": [
                {
                    "rationale_set": objects["annotation_id"].rationale_sets.get().pk,
                    "sufficiency": 2,
                    "compactness": 2,
                }
            ],
        },
        "answers_change_create": {
            "base_version": 1,
            "rationale_sets": [
                [
                    {
                        "docid": objects["answer_id"].item.documents.get().docid,
                        "start_token": 0,
                        "end_token": 3,
                    }
                ]
            ],
        },
        "assignments_draft_update": {"draft": {"sets": []}},
        "assignments_submit_create": {
            "client_uuid": str(uuid.uuid4()),
            "rationale_sets": [
                [
                    {
                        "docid": objects["assignment_id"].item.documents.get().docid,
                        "start_token": 0,
                        "end_token": 2,
                    }
                ]
            ],
            "time_spent_ms": 1500,
        },
        "crowd_sessions_finish_create": {},
        "projects_create": {"name": "matrix new project", "labels": ["a", "b"]},
        "projects_accounts_create": {
            "username": "matrix-member",
            "credential": "one_time_password",
            "role": "annotator",
        },
        "projects_accounts_active_create": {"active": False},
        "projects_accounts_password_create": {"credential": "one_time_password"},
        "projects_policy_partial_update": {"annotators_per_item": 2},
        "projects_members_create": {"username": "matrix-nobody", "role": "annotator"},
        "projects_variants_create": {"name": "matrix-variant", "text": "Highlight."},
        "projects_variants_partial_update": {"text": "Highlight, again."},
        "projects_variants_presets_create": {"task": "classification"},
        "projects_variants_suggestions_update": {"run": None},
        "projects_quality_policy_partial_update": {"min_seconds": 1.0},
        "projects_gold_items_update": {"annotation_ids": ["i0"]},
        "projects_workers_block_create": {"reason": "matrix"},
        "projects_workers_unblock_create": {"reason": "matrix"},
        "projects_candidates_decision_create": {"accept": True},
        "projects_exports_create": {},
        "projects_exports_runs_create": {"name": "matrix run 2", "explainer": "random"},
        "projects_models_create": {"name": "matrix model", "folder": "not-there"},
        "projects_datasheet_partial_update": {"licence": "CC-BY-4.0"},
        "projects_perturbations_create": {
            "original": objects["item_id"].pk,
            "types": ["syntax"],
            "texts": ["A plain sentence never to perturb ."],
        },
        "projects_perturbations_check_create": {"decision": "accept"},
        "projects_perturbations_settings_partial_update": {"perturbations_per_original": 2},
        "projects_crowd_links_create": {
            "name": "matrix study 2",
            "platform": "mturk",
            "consent_text": "I agree.",
            "items_required": 2,
        },
        "projects_crowd_links_partial_update": {"description": "matrix"},
        "projects_crowd_links_verify_create": {
            "worker_id": "MATRIXWORKER",
            "assignment_id": "MATRIXASSIGN",
            "token": "abcdef",
        },
        "projects_qualification_answers_create": {"gold_item": 1, "rationale_sets": [[]]},
        "projects_items_bulk_create": {"action": "mark_gold", "ids": [objects["item_id"].pk]},
        "projects_item_views_create": {"name": "matrix view 2", "query": "split=test"},
        "projects_item_views_partial_update": {"name": "matrix view renamed"},
        "projects_curation_items_update": {
            "version": 0,
            "sets": [[{"docid": "d0", "start_token": 0, "end_token": 1}]],
        },
        "projects_curation_items_confirm_create": {"version": 1},
        "projects_curation_auto_merge_create": {
            "rule": {"test": "unanimous"},
            "ids": [objects["item_id"].pk],
        },
        "tokens_create": {"name": "matrix token 2"},
        "projects_members_update": {"roles": ["annotator", "reviewer"]},
        "projects_items_delete_create": {"ids": [objects["item_id"].pk]},
        "projects_items_restore_create": {"ids": [objects["item_id"].pk]},
        "projects_delete_create": {"confirm_name": world.project.name},
    }
    multipart = {
        "projects_imports_create": lambda: {
            "file": SimpleUploadedFile("matrix.jsonl", b'{"annotation_id": "m1", "text": "a b"}\n')
        },
        "projects_workers_import_create": lambda: {
            "file": SimpleUploadedFile("w.csv", b"WorkerId,Status\nA1,Approved\n"),
            "platform": "mturk",
        },
        "projects_workers_import_jobs_create": lambda: {
            "file": SimpleUploadedFile("w.csv", b"WorkerId,Status\nA1,Approved\n"),
            "platform": "mturk",
        },
    }
    if operation_id in multipart:
        return multipart[operation_id](), "multipart"
    return bodies.get(operation_id), "json"


def _send(client: APIClient, method: str, url: str, body, fmt: str, **headers):
    if method in ("get", "delete"):
        return getattr(client, method)(url, **headers)
    return getattr(client, method)(url, body, format=fmt, **headers)


def _expected_refusal(scope: str, caller: str) -> int:
    if caller == ANONYMOUS:
        return 401
    if scope == SITE:
        return 403
    if scope == OWNER:
        return 404
    return 403 if caller in MEMBERS else 404


def _answer(world, caller, method, url, operation_id, check=None):
    """The status a request gets, in a savepoint rolled back afterwards; `check` runs
    before the rollback."""
    body, fmt = _body(operation_id, world)
    with transaction.atomic():
        response = _send(world.clients[caller], method, url, body, fmt)
        if check is not None:
            check(response)
        transaction.set_rollback(True)
    return response


def _mismatch(rule: Rule, caller: str, response) -> str | None:
    status = response.status_code
    if caller in rule.allowed:
        if status in (401, 403, 404) or status >= 500:
            return f"{caller}: allowed, but got {status} {_detail(response)}"
        return None
    wanted = _expected_refusal(rule.scope, caller)
    if status != wanted:
        return f"{caller}: should be refused with {wanted}, got {status} {_detail(response)}"
    if status == 401 and not response.get("WWW-Authenticate", "").startswith("Basic "):
        return f"{caller}: 401 without a Basic challenge"
    return None


def _detail(response) -> str:
    body = response.content[:200].decode("utf-8", "replace")
    return body.replace("\n", " ")


@pytest.mark.parametrize("operation_id", sorted(API))
def test_each_caller_is_answered_as_the_table_says(operation_id, operations, world, db):
    if operation_id not in operations:
        pytest.fail(f"{operation_id} is not an operation of the schema")
    method, path = operations[operation_id]
    rule = API[operation_id]
    url = _url(world, path)

    problems = [
        problem
        for caller in CALLERS
        if (problem := _mismatch(rule, caller, _answer(world, caller, method, url, operation_id)))
    ]

    assert not problems, f"{method.upper()} {url} ({operation_id}):\n" + "\n".join(problems)


def _snapshot(instance) -> dict:
    fresh = type(instance).objects.get(pk=instance.pk)
    return {
        field: value
        for field, value in model_to_dict(fresh).items()
        # The account's last sign-in moves with the test client's own sign-in.
        if field != "last_login"
    }


def _object_operations(operations) -> list[str]:
    return sorted(
        op
        for op, (_, path) in operations.items()
        if any(name != "project_id" for name in _path_parameters(path))
    )


def test_each_object_operation_is_checked_for_other_projects(operations):
    """The list the object test below walks: every operation with an object id in its path."""
    missing = sorted(set(_object_operations(operations)) - set(OBJECT_IDS_CHECKED))
    gone = sorted(set(OBJECT_IDS_CHECKED) - set(_object_operations(operations)))

    assert not missing, (
        f"add to OBJECT_IDS_CHECKED (and, for a new kind of id, its object to the world's "
        f"objects): {missing}"
    )
    assert not gone, f"remove from OBJECT_IDS_CHECKED: {gone}"


# Every operation with an object id in its path; the test above keeps the list complete.
OBJECT_IDS_CHECKED = (
    "accounts_active_create",
    "accounts_password_create",
    "accounts_sign_in_unlock_create",
    "invitations_accept_create",
    "invitations_decline_create",
    "projects_invitations_withdraw_create",
    "projects_item_views_destroy",
    "projects_item_views_partial_update",
    "projects_members_update",
    "projects_members_destroy",
    "projects_imports_delete_create",
    "projects_imports_restore_create",
    "annotations_review_retrieve",
    "annotations_reviews_create",
    "answers_change_create",
    "answers_retrieve",
    "assignments_draft_update",
    "assignments_feedback_retrieve",
    "assignments_retrieve",
    "assignments_skip_create",
    "assignments_submit_create",
    "crowd_sessions_finish_create",
    "crowd_sessions_retrieve",
    "projects_accounts_active_create",
    "projects_accounts_password_create",
    "projects_candidates_decision_create",
    "projects_crowd_links_bonuses_retrieve",
    "projects_crowd_links_external_question_retrieve",
    "projects_crowd_links_partial_update",
    "projects_crowd_links_retrieve",
    "projects_crowd_links_sessions_retrieve",
    "projects_crowd_links_verify_create",
    "projects_curation_items_retrieve",
    "projects_curation_items_update",
    "projects_curation_items_confirm_create",
    "projects_exports_cancel_create",
    "projects_exports_download_retrieve",
    "projects_exports_progress_retrieve",
    "projects_exports_retrieve",
    "projects_exports_runs_create",
    "projects_exports_runs_list",
    "projects_exports_runs_progress_retrieve",
    "projects_models_destroy",
    "projects_imports_progress_retrieve",
    "projects_imports_retrieve",
    "projects_items_retrieve",
    "projects_perturbations_check_create",
    "projects_perturbations_originals_retrieve",
    "projects_perturbations_retrieve",
    "projects_variants_partial_update",
    "projects_variants_suggestions_update",
    "projects_workers_block_create",
    "projects_workers_import_jobs_progress_retrieve",
    "projects_workers_import_jobs_retrieve",
    "projects_workers_unblock_create",
    "tokens_revoke_create",
)


def _other_project_addresses(world: World, path: str) -> list[dict]:
    """The ways the other project's admin may name this project's object: under their own
    project (or, for an address without a project, as it is), and for a nested object
    under their own parent as well."""
    if "{project_id}" not in path:
        return [{}]
    ways = [{"project_id": world.other_ids["project_id"]}]
    if "{export_id}" in path and "{run_id}" in path:
        ways.append(
            {"project_id": world.other_ids["project_id"], "export_id": world.other_ids["export_id"]}
        )
    return ways


@pytest.mark.parametrize("operation_id", OBJECT_IDS_CHECKED)
def test_another_projects_admin_cannot_reach_this_projects_objects(
    operation_id, operations, world, db
):
    method, path = operations[operation_id]
    before = {key: _snapshot(instance) for key, instance in world.objects.items()}
    problems = []

    def unchanged(response):
        after = {key: _snapshot(instance) for key, instance in world.objects.items()}
        changed = [key for key in before if before[key] != after[key]]
        if changed:
            problems.append(f"{response.status_code}: changed {changed}")

    # Under their own project nothing of this one is found; an address without a project
    # answers as the table says (site staff's operations refuse them with 403).
    wanted = (
        404 if "{project_id}" in path else _expected_refusal(API[operation_id].scope, OTHER_ADMIN)
    )
    for overrides in _other_project_addresses(world, path):
        url = _url(world, path, overrides)
        response = _answer(world, OTHER_ADMIN, method, url, operation_id, check=unchanged)
        if response.status_code != wanted:
            problems.append(f"{url}: {response.status_code} {_detail(response)}")

    assert not problems, f"{operation_id}:\n" + "\n".join(problems)


def _borrowing_bodies(world: World) -> dict:
    """Bodies that name an object of this project, for operations of the other one."""
    return {
        "projects_perturbations_create": {
            "original": world.objects["item_id"].pk,
            "types": ["syntax"],
            "texts": ["A plain sentence never to perturb ."],
        },
        "projects_crowd_links_create": {
            "name": "borrowed variant",
            "platform": "mturk",
            "consent_text": "I agree.",
            "items_required": 1,
            "variant": world.objects["variant_id"].pk,
        },
    }


def _rows_of_this_project(world: World) -> tuple[int, int]:
    return (
        Perturbation.objects.filter(project=world.project).count(),
        StudyLink.objects.filter(project=world.project).count(),
    )


@pytest.mark.parametrize(
    "operation_id", ["projects_perturbations_create", "projects_crowd_links_create"]
)
def test_a_body_naming_this_projects_objects_is_refused_under_another_project(
    operation_id, operations, world, db
):
    """Objects named in a body (an original item, a variant) are looked up in the
    address's project only: the other project's admin gets nothing of this one."""
    _, path = operations[operation_id]
    url = _url(world, path, {"project_id": world.other_ids["project_id"]})
    rows_before = _rows_of_this_project(world)

    with transaction.atomic():
        response = world.clients[OTHER_ADMIN].post(
            url, _borrowing_bodies(world)[operation_id], format="json"
        )
        rows_after = _rows_of_this_project(world)
        made_in_other_project = (
            Perturbation.objects.filter(project=world.other_project).count()
            + StudyLink.objects.filter(project=world.other_project).count()
        )
        transaction.set_rollback(True)

    assert response.status_code in (400, 404), _detail(response)
    assert rows_after == rows_before
    assert made_in_other_project == 0


# ---------------------------------------------------------------- the pages

LOGIN = "login"  # what an anonymous caller gets from a page that needs a sign-in


@dataclass(frozen=True)
class Page:
    allowed: frozenset[str]
    scope: str
    anonymous: str = LOGIN  # LOGIN, or a status code as text


def page(scope: str, *allowed: str, anonymous: str = LOGIN) -> Page:
    return Page(frozenset(allowed), scope, anonymous)


# Page url name -> who may open it (GET). A refused caller gets what the API's table says
# for the scope; a caller who is not signed in is sent to the sign-in page.
PAGES: dict[str, Page] = {
    # Open to everyone: signing in, the probes, the page scripts' strings, and the API's
    # description (it names the operations; every one of them still checks its caller).
    "login": page(PUBLIC, *CALLERS),
    "healthz": page(PUBLIC, *CALLERS),
    "readyz": page(PUBLIC, *CALLERS),
    "javascript-catalog": page(PUBLIC, *CALLERS),
    "schema": page(PUBLIC, *CALLERS),
    "api-docs": page(PUBLIC, *CALLERS),
    # The documentation site (built or not: unbuilt, its front page says how to build it).
    "docs-site": page(PUBLIC, *CALLERS),
    # A study link's door (here MTurk's preview of the HIT, which makes no account).
    "crowd:entry": page(PUBLIC, *CALLERS),
    "home": page(SIGNED_IN, *SIGNED_IN_CALLERS),
    "users-page": page(SITE, STAFF),
    # A crowd account has no password to change (it signs in through its study link).
    "password-change": page(SIGNED_IN, *(SIGNED_IN_CALLERS - {CROWD})),
    # Personal API tokens: nor can it have API tokens.
    "api-tokens": page(SIGNED_IN, *(SIGNED_IN_CALLERS - {CROWD})),
    "project-page": page(PROJECT, *MEMBERS),
    "project-data": page(PROJECT, ADMIN),
    # The data manager and its item page.
    "data-items-page": page(PROJECT, ADMIN, CURATOR, RESEARCHER),
    "data-item-page": page(PROJECT, ADMIN, CURATOR, RESEARCHER),
    "project-instructions": page(PROJECT, ADMIN),
    "project-workers": page(PROJECT, ADMIN),
    "project-members": page(PROJECT, ADMIN),
    "quality-page": page(PROJECT, ADMIN),
    "project-pipeline": page(PROJECT, ADMIN),
    "review-page": page(PROJECT, ADMIN, REVIEWER),
    "curation-page": page(PROJECT, *CURATORS),
    "curation-item-page": page(PROJECT, *CURATORS),
    "agreement-page": page(PROJECT, *REPORTERS),
    "project-results": page(PROJECT, *REPORTERS),
    "datasheet-page": page(PROJECT, *REPORTERS),
    "perturbations-page": page(PROJECT, ADMIN, RESEARCHER, AUTHOR, CHECKER),
    "perturb-check-page": page(PROJECT, ADMIN, CHECKER),
    "perturb-author-page": page(PROJECT, ADMIN, AUTHOR),
    "project-settings": page(PROJECT, ADMIN),
    "workspace": page(PROJECT, *WORKERS),
    "answers-page": page(PROJECT, *WORKERS),
    "assignment-page": page(OWNER, ANNOTATOR),
    # The crowd participant's own session; to anyone else, signed in or not, it is lost.
    "crowd:consent": page(OWNER, CROWD, anonymous="404"),
    "crowd:work": page(OWNER, CROWD, anonymous="404"),
    "crowd:done": page(OWNER, CROWD, anonymous="404"),
    "crowd:end": page(OWNER, CROWD, anonymous="404"),
}


def _page_kwargs(world: World, name: str) -> dict:
    """The page's address parameters, each filled with this project's object."""
    resolver = get_resolver()
    if ":" in name:
        namespace, name = name.split(":")
        resolver = resolver.namespace_dict[namespace][1]
    possibilities, *_ = resolver.reverse_dict.getlist(name)[0]
    _, parameters = possibilities[0]
    return {
        parameter: world.objects["link_id"].key
        if parameter == "key"
        else world.objects[parameter].pk
        for parameter in parameters
    }


# What a page needs in its query string besides its address.
PAGE_QUERIES = {"crowd:entry": "?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=MATRIXHIT"}


def _page_mismatch(rule: Page, caller: str, response) -> str | None:
    status = response.status_code
    if caller in rule.allowed:
        # The crowd pages send the worker on to where the session stands (a redirect).
        if status in (401, 403, 404) or status >= 500:
            return f"{caller}: allowed, but got {status}"
        if status in (301, 302) and "/accounts/login/" in response["Location"]:
            return f"{caller}: allowed, but sent to sign in"
        return None
    if caller == ANONYMOUS:
        if rule.anonymous == LOGIN:
            if status == 302 and response["Location"].startswith(reverse("login")):
                return None
            return f"{caller}: should be sent to sign in, got {status}"
        wanted = int(rule.anonymous)
    else:
        wanted = _expected_refusal(rule.scope, caller)
    if status != wanted:
        return f"{caller}: should be refused with {wanted}, got {status}"
    return None


def test_the_page_table_declares_every_page_with_an_owner():
    """Every project page of the navigation's table is declared here (the table is
    written out, not read from the navigation, so the two are checked against each other)."""
    from frontend.navigation import PROJECT_TABS

    navigation = {page.url_name for tab in PROJECT_TABS for page in tab.pages}

    assert navigation - set(PAGES) == set()


@pytest.mark.parametrize("name", sorted(PAGES))
def test_each_caller_is_answered_as_the_page_table_says(name, world, db):
    rule = PAGES[name]
    url = reverse(name, kwargs=_page_kwargs(world, name)) + PAGE_QUERIES.get(name, "")
    problems = []
    # A public page does not look at its caller (and the schema takes a second to build):
    # the caller least entitled and one signed in stand for all.
    callers = (ANONYMOUS, NO_MEMBERSHIP) if rule.scope == PUBLIC else CALLERS
    for caller in callers:
        with transaction.atomic():
            response = world.clients[caller].get(url)
            transaction.set_rollback(True)
        if problem := _page_mismatch(rule, caller, response):
            problems.append(problem)

    assert not problems, f"GET {url} ({name}):\n" + "\n".join(problems)


# ---------------------------------------------------------------- the table in the docs

PERMISSIONS_DOC = Path(__file__).resolve().parents[1] / "docs" / "reference" / "permissions.md"
TABLE_START = "<!-- permission-tables: start -->"
TABLE_END = "<!-- permission-tables: end -->"
SHORT_NAMES = {
    ANONYMOUS: "anonymous",
    NO_MEMBERSHIP: "no membership",
    STAFF: "staff",
    OTHER_ADMIN: "other project's admin",
    CROWD: "crowd",
}


def _cell(allowed: bool, refusal: str) -> str:
    return "yes" if allowed else refusal


def permission_tables(operations: dict[str, tuple[str, str]]) -> str:
    """The API's and the pages' tables as Markdown, as docs/reference/permissions.md shows
    them: "yes", or the status a refused caller gets."""
    header = "| | " + " | ".join(SHORT_NAMES.get(c, c) for c in CALLERS) + " | object rule |"
    rule_line = "|---" * (len(CALLERS) + 2) + "|"
    lines = ["### API operations", "", header, rule_line]
    for operation_id in sorted(API, key=lambda op: (operations[op][1], operations[op][0])):
        method, path = operations[operation_id]
        row = API[operation_id]
        cells = [
            _cell(caller in row.allowed, str(_expected_refusal(row.scope, caller)))
            for caller in CALLERS
        ]
        lines.append(
            f"| `{method.upper()} {path}` | "
            + " | ".join(cells)
            + f" | {row.note} |".replace("|  |", "| |")
        )
    lines += ["", "### Pages", "", header.replace(" object rule |", " address |"), rule_line]
    for name in sorted(PAGES):
        row = PAGES[name]
        cells = []
        for caller in CALLERS:
            if caller == ANONYMOUS and caller not in row.allowed:
                refusal = "sign-in page" if row.anonymous == LOGIN else row.anonymous
            else:
                refusal = str(_expected_refusal(row.scope, caller))
            cells.append(_cell(caller in row.allowed, refusal))
        pattern = get_resolver()
        if ":" in name:
            namespace, short = name.split(":")
            pattern, name_in = pattern.namespace_dict[namespace][1], short
        else:
            name_in = name
        possibilities, *_ = pattern.reverse_dict.getlist(name_in)[0]
        address = "/" + possibilities[0][0].replace("%(", "{").replace(")s", "}")
        lines.append(f"| {name} | " + " | ".join(cells) + f" | `{address}` |")
    return "\n".join(lines)


def _doc_with_tables(text: str, tables: str) -> str:
    before, rest = text.split(TABLE_START, 1)
    _, after = rest.split(TABLE_END, 1)
    return f"{before}{TABLE_START}\n{tables}\n{TABLE_END}{after}"


def test_the_docs_show_this_table(operations):
    """PERMISSIONS_DOC_UPDATE=1 writes the table into the page first (after adding a row)."""
    wanted = permission_tables(operations)
    if os.environ.get("PERMISSIONS_DOC_UPDATE") == "1":
        PERMISSIONS_DOC.write_text(_doc_with_tables(PERMISSIONS_DOC.read_text(), wanted))
    text = PERMISSIONS_DOC.read_text()

    assert text == _doc_with_tables(text, wanted), (
        f"{PERMISSIONS_DOC.name} does not show the table of tests/test_permission_matrix.py; "
        "run: PERMISSIONS_DOC_UPDATE=1 python -m pytest tests/test_permission_matrix.py -k docs"
    )
