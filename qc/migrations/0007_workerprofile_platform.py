"""Worker profiles name their platform: the same external id on MTurk and on Prolific is
two people. Existing profiles (CSV imports that named no platform) keep the empty value
and stay unique among themselves, so they still link to accounts as before."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("qc", "0006_recruitment_bands"),
    ]

    operations = [
        migrations.AddField(
            model_name="workerprofile",
            name="platform",
            field=models.CharField(
                blank=True,
                choices=[
                    ("", "Not given"),
                    ("mturk", "Amazon Mechanical Turk"),
                    ("prolific", "Prolific"),
                    ("other", "Other platform"),
                ],
                default="",
                max_length=16,
            ),
        ),
        # The pair's constraint first, so the ids are never unconstrained in between.
        migrations.AddConstraint(
            model_name="workerprofile",
            constraint=models.UniqueConstraint(
                fields=("platform", "external_id"), name="workerprofile_unique_platform_id"
            ),
        ),
        migrations.AlterField(
            model_name="workerprofile",
            name="external_id",
            field=models.CharField(max_length=200),
        ),
    ]
