"""Agreement reports on a small project computed by hand; API permissions, staleness, CSV."""

import csv
import io
import uuid

import pytest
from django.urls import reverse

from annotate.models import InstructionVariant, ProjectMembership, Role, WorkerVariantBinding
from annotate.services import annotation_submit, assignment_next
from qc.agreement import agreement_report_get, agreement_report_refresh
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.factories import UserFactory

# Item text has 10 tokens: "w0 ... w8 ." ; highlights per worker (same on both items).
HIGHLIGHTS = {"a1": {0, 1}, "a2": {0, 1}, "a3": {0, 1, 2, 3}, "b1": {9}, "b2": {5}}


@pytest.fixture
def small_project(db):
    project = make_project(
        items=2, variants=("a", "b"), quota=3, text="w0 w1 w2 w3 w4 w5 w6 w7 w8 ."
    )
    variants = {v.name: v for v in InstructionVariant.objects.filter(project=project)}
    for name, tokens in HIGHLIGHTS.items():
        user = UserFactory(username=name)
        WorkerVariantBinding.objects.create(
            project=project, worker=user, variant=variants[name[0]], seed=0
        )
        while (lease := assignment_next(project=project, worker=user)) is not None:
            docid = lease.item.documents.get().docid
            spans = [{"docid": docid, "start_token": t, "end_token": t + 1} for t in sorted(tokens)]
            annotation_submit(
                assignment_id=lease.pk,
                worker=user,
                client_uuid=uuid.uuid4(),
                rationale_sets=[spans],
                time_spent_ms=2000,
            )
    return project


def kappa(both, x, y, n=10):
    p_o = (n - x - y + 2 * both) / n
    p_e = (x / n) * (y / n) + (1 - x / n) * (1 - y / n)
    return (p_o - p_e) / (1 - p_e)


def test_numbers_by_hand(small_project):
    data = agreement_report_refresh(project_id=small_project.pk).data

    # Variant a: pairs (a1,a2) = 1; (a1,a3) and (a2,a3): both 2, sizes 2 and 4.
    intra_a = (1 + 2 * kappa(2, 2, 4)) / 3
    cells = data["matrix"]["cells"]
    assert cells["a|a"]["kappa"] == pytest.approx(intra_a)
    assert cells["a|a"]["items"] == 2
    # Variant b: one pair, disjoint single tokens.
    assert cells["b|b"]["kappa"] == pytest.approx(kappa(0, 1, 1))
    # Cross a x b: every pair disjoint; sizes (2,1) four times and (4,1) twice per item.
    assert cells["a|b"]["kappa"] == pytest.approx((4 * kappa(0, 2, 1) + 2 * kappa(0, 4, 1)) / 6)
    variant_a = next(v for v in data["variants"] if v["variant"] == "a")
    assert variant_a["length_ratio"] == pytest.approx((2 + 2 + 4) / 3 / 10)
    assert variant_a["empty_rate"] == 0
    assert variant_a["annotators"] == 3 and variant_a["items"] == 2
    assert variant_a["seconds"]["median"] == 2.0
    assert variant_a["intra_kappa_ci95"][0] <= intra_a <= variant_a["intra_kappa_ci95"][1]
    a3 = next(w for w in data["workers"] if w["worker"] == "a3")
    # Majority of variant a per token: {0, 1}; a3 has {0, 1, 2, 3}.
    assert a3["majority_kappa"] == pytest.approx(kappa(2, 4, 2))
    assert a3["majority_f1"] == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert data["permutation_tests"][0]["a"] == "a"


def test_reports_go_stale_when_annotations_arrive(small_project):
    agreement_report_refresh(project_id=small_project.pk)
    assert agreement_report_get(project=small_project)[1] is False

    user = UserFactory(username="late")
    WorkerVariantBinding.objects.create(
        project=small_project,
        worker=user,
        variant=InstructionVariant.objects.get(project=small_project, name="b"),
        seed=0,
    )
    lease = assignment_next(project=small_project, worker=user)
    annotation_submit(
        assignment_id=lease.pk,
        worker=user,
        client_uuid=uuid.uuid4(),
        rationale_sets=[
            [{"docid": lease.item.documents.get().docid, "start_token": 0, "end_token": 1}]
        ],
    )

    assert agreement_report_get(project=small_project)[1] is True


@pytest.mark.parametrize(
    ("role", "code"),
    [
        (Role.ADMIN, 200),
        (Role.RESEARCHER, 200),
        (Role.REVIEWER, 403),
        (Role.ANNOTATOR, 403),
        (None, 404),
    ],
)
def test_report_endpoints_are_for_admins_and_researchers(
    small_project, role, code, django_capture_on_commit_callbacks
):
    user = UserFactory(username=f"rep-{role}")
    if role:
        ProjectMembership.objects.create(project=small_project, user=user, role=role)
    client = client_for(user)

    with django_capture_on_commit_callbacks(execute=True):
        refresh = client.post(reverse("qc:agreement-refresh", args=[small_project.id]))
    report = client.get(reverse("qc:agreement", args=[small_project.id]))
    table = client.get(reverse("qc:agreement-csv", args=[small_project.id]), {"table": "variants"})

    assert refresh.status_code == (202 if code == 200 else code)
    assert report.status_code == code and table.status_code == code
    if code == 200:
        assert report.data["status"] == "ready" and report.data["stale"] is False
        rows = list(csv.DictReader(io.StringIO(table.content.decode())))
        assert [r["variant"] for r in rows] == ["a", "b"]


def test_csv_bad_table_and_missing_report(small_project):
    user = UserFactory(username="res")
    ProjectMembership.objects.create(project=small_project, user=user, role=Role.RESEARCHER)
    client = client_for(user)
    url = reverse("qc:agreement-csv", args=[small_project.id])

    assert "no agreement report has been computed yet" in client.get(url).data["detail"]
    agreement_report_refresh(project_id=small_project.pk)
    assert "table: 'nope'" in client.get(url, {"table": "nope"}).data["detail"]
    assert client.get(url, {"table": "matrix"}).status_code == 200


def test_cohorts_by_hand_compare_only_within_a_variant(small_project):
    from qc.models import ProjectWorker, QualityFlag

    ProjectWorker.objects.filter(worker__username__in=["a1", "b1"]).update(cohort="master")
    ProjectWorker.objects.filter(worker__username__in=["a2", "a3", "b2"]).update(
        cohort="approval ≥ 95%"
    )
    data = agreement_report_refresh(project_id=small_project.pk).data

    top = "approval ≥ 95%"
    cells = data["cohort_matrix"]["cells"]
    # Within "≥ 95%": only a2 and a3 share a variant; b2 is alone under b.
    assert cells[f"{top}|{top}"]["kappa"] == pytest.approx(kappa(2, 2, 4))
    assert cells[f"{top}|{top}"]["items"] == 2
    # a1 and b1 never share a variant: no master-master pair at all.
    assert "master|master" not in cells
    # Across: (a1 with a2, a3) under a, (b1 with b2) under b; per (item, variant), then mean.
    across = (2 * ((1 + kappa(2, 2, 4)) / 2) + 2 * kappa(0, 1, 1)) / 4
    assert cells[f"{top}|master"]["kappa"] == pytest.approx(across)
    rows = {row["cohort"]: row for row in data["cohorts"]}
    assert list(rows) == ["master", top]  # in the fixed cohort order
    assert rows["master"]["annotators"] == 2 and rows["master"]["intra_kappa"] is None
    assert rows[top]["variants"] == ["a", "b"]
    assert rows[top]["intra_kappa"] == pytest.approx(kappa(2, 2, 4))

    workers = {w["worker"]: w for w in data["workers"]}
    assert workers["a1"]["cohort"] == "master" and workers["a1"]["status"] == "qualified"
    flagged = QualityFlag.objects.filter(annotation__assignment__worker__username="b2").count()
    assert sum(workers["b2"]["flags"].values()) == flagged


def test_cohort_csv_tables(small_project):
    agreement_report_refresh(project_id=small_project.pk)
    admin = UserFactory(username="cohort-admin")
    ProjectMembership.objects.create(project=small_project, user=admin, role=Role.ADMIN)
    client = client_for(admin)

    cohorts = client.get(reverse("qc:agreement-csv", args=[small_project.id]), {"table": "cohorts"})
    rows = list(csv.DictReader(io.StringIO(cohorts.content.decode())))

    assert cohorts.status_code == 200
    assert [r["cohort"] for r in rows] == ["no platform record"]
