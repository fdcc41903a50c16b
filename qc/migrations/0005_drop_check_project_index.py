"""The check's project leads qc_check_worker_recent; its own index only cost writes."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotate', '0007_drop_indexes_covered_by_composites'),
        ('qc', '0004_submission_check_recent_index'),
    ]

    # Only the index goes (see annotate 0007).
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "qc_submissioncheck_project_id_6191dc00"',
                    reverse_sql='CREATE INDEX "qc_submissioncheck_project_id_6191dc00" '
                    'ON "qc_submissioncheck" ("project_id")',
                ),
            ],
            state_operations=[
                migrations.AlterField(
                    model_name='submissioncheck',
                    name='project',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='submission_checks', to='annotate.project'),
                ),
    
            ],
        ),
    ]
