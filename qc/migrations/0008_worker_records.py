"""Worker attributes move from the shared profile to one record per (project, profile),
so one project's imports and reviews cannot change what another project's rules read.

The copy: the shared attributes never said which project imported them (any project's
admin could) nor which project's reviews counted in them, and every project's rules read
them. So each profile that carries any attribute is copied into every project: on the day
of the upgrade no project's rules see anything different and nothing is lost; from then on
each project's imports and reviews write its own record only. The fields leave the
profile in 0009, a migration of its own, because PostgreSQL refuses to alter a table in
the transaction that has just inserted rows referencing it.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

ATTRIBUTES = ("approval_rate", "approved_count", "judged_count", "locale", "is_master")
BATCH = 1000


def _carries_attributes(profile) -> bool:
    return (
        profile.approval_rate is not None
        or profile.judged_count > 0
        or profile.approved_count > 0
        or bool(profile.locale)
        or profile.is_master
    )


def copy_to_projects(apps, schema_editor):
    WorkerProfile = apps.get_model("qc", "WorkerProfile")
    WorkerRecord = apps.get_model("qc", "WorkerRecord")
    Project = apps.get_model("annotate", "Project")
    project_ids = list(Project.objects.order_by("pk").values_list("pk", flat=True))
    if not project_ids:
        return
    batch = []
    for profile in WorkerProfile.objects.order_by("pk").iterator(chunk_size=BATCH):
        if not _carries_attributes(profile):
            continue  # no record reads the same as the defaults
        values = {name: getattr(profile, name) for name in ATTRIBUTES}
        batch.extend(
            WorkerRecord(project_id=project_id, profile_id=profile.pk, **values)
            for project_id in project_ids
        )
        if len(batch) >= BATCH:
            WorkerRecord.objects.bulk_create(batch)
            batch = []
    WorkerRecord.objects.bulk_create(batch)


def copy_back_to_profiles(apps, schema_editor):
    """Going back, a profile takes its most recently updated record's figures: the one
    shared record can hold only one project's."""
    WorkerProfile = apps.get_model("qc", "WorkerProfile")
    WorkerRecord = apps.get_model("qc", "WorkerRecord")
    newest = {}
    for record in WorkerRecord.objects.order_by("updated_at", "pk").iterator(chunk_size=BATCH):
        newest[record.profile_id] = record
    for profile_id, record in newest.items():
        WorkerProfile.objects.filter(pk=profile_id).update(
            **{name: getattr(record, name) for name in ATTRIBUTES}
        )


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0012_project_multi_set_mode"),
        ("qc", "0007_workerprofile_platform"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="WorkerRecord",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "approval_rate",
                    models.FloatField(
                        blank=True, help_text="Percent of judged work approved (0-100).", null=True
                    ),
                ),
                ("approved_count", models.PositiveIntegerField(default=0)),
                (
                    "judged_count",
                    models.PositiveIntegerField(
                        default=0,
                        help_text="Work judged (approved or rejected), imported and reviewed here.",
                    ),
                ),
                (
                    "locale",
                    models.CharField(blank=True, help_text="Country code, e.g. US.", max_length=16),
                ),
                ("is_master", models.BooleanField(default=False)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "profile",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="records",
                        to="qc.workerprofile",
                    ),
                ),
                (
                    "project",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="worker_records",
                        to="annotate.project",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("project", "profile"), name="workerrecord_unique_project_profile"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("approval_rate__isnull", True),
                            models.Q(("approval_rate__gte", 0), ("approval_rate__lte", 100)),
                            _connector="OR",
                        ),
                        name="workerrecord_approval_rate_percent",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("approved_count__lte", models.F("judged_count"))),
                        name="workerrecord_approved_within_judged",
                    ),
                ],
            },
        ),
        migrations.AlterField(
            model_name="auditevent",
            name="action",
            field=models.CharField(
                choices=[
                    ("accept", "Accept"),
                    ("reject", "Reject"),
                    ("block", "Block"),
                    ("unblock", "Unblock"),
                    ("import", "Import worker attributes"),
                ],
                max_length=16,
            ),
        ),
        migrations.AlterField(
            model_name="auditevent",
            name="worker",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="audit_events",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.RunPython(copy_to_projects, copy_back_to_profiles),
    ]
