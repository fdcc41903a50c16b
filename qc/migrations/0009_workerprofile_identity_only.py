"""The shared profile keeps identity only (platform, id, account, site-wide status); the
attributes now live in each project's WorkerRecord (copied there by 0008)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("qc", "0008_worker_records"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="workerprofile", name="workerprofile_approval_rate_percent"
        ),
        migrations.RemoveConstraint(
            model_name="workerprofile", name="workerprofile_approved_within_judged"
        ),
        migrations.RemoveField(model_name="workerprofile", name="approval_rate"),
        migrations.RemoveField(model_name="workerprofile", name="approved_count"),
        migrations.RemoveField(model_name="workerprofile", name="is_master"),
        migrations.RemoveField(model_name="workerprofile", name="judged_count"),
        migrations.RemoveField(model_name="workerprofile", name="locale"),
    ]
