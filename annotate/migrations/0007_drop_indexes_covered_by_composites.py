"""Foreign keys that lead a composite index or constraint lose their own index: each was
written on every lease or submit and served no lookup the composite does not."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotate', '0006_allocation_tickets'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    # Only the indexes go: Django's AlterField would also drop and re-add each foreign key,
    # revalidating it over the whole table under an exclusive lock.
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "annotate_assignment_item_id_21b13dc6"',
                    reverse_sql='CREATE INDEX "annotate_assignment_item_id_21b13dc6" ON "annotate_assignment" ("item_id")',
                ),
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "annotate_assignment_worker_id_54ace9ff"',
                    reverse_sql='CREATE INDEX "annotate_assignment_worker_id_54ace9ff" ON "annotate_assignment" ("worker_id")',
                ),
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "annotate_itemvariantfill_variant_id_845581e7"',
                    reverse_sql='CREATE INDEX "annotate_itemvariantfill_variant_id_845581e7" ON "annotate_itemvariantfill" ("variant_id")',
                ),
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "annotate_rationaleset_annotation_id_1ec01752"',
                    reverse_sql='CREATE INDEX "annotate_rationaleset_annotation_id_1ec01752" ON "annotate_rationaleset" ("annotation_id")',
                ),
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "annotate_rationaleset_reference_item_id_7724f94d"',
                    reverse_sql='CREATE INDEX "annotate_rationaleset_reference_item_id_7724f94d" ON "annotate_rationaleset" ("reference_item_id")',
                ),
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "annotate_rationalespan_rationale_set_id_a7ad8e6e"',
                    reverse_sql='CREATE INDEX "annotate_rationalespan_rationale_set_id_a7ad8e6e" ON "annotate_rationalespan" ("rationale_set_id")',
                ),
            ],
            state_operations=[
                migrations.AlterField(
                    model_name='assignment',
                    name='item',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='assignments', to='annotate.item'),
                ),
                migrations.AlterField(
                    model_name='assignment',
                    name='worker',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='assignments', to=settings.AUTH_USER_MODEL),
                ),
                migrations.AlterField(
                    model_name='itemvariantfill',
                    name='variant',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='fills', to='annotate.instructionvariant'),
                ),
                migrations.AlterField(
                    model_name='rationaleset',
                    name='annotation',
                    field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='rationale_sets', to='annotate.annotation'),
                ),
                migrations.AlterField(
                    model_name='rationaleset',
                    name='reference_item',
                    field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='reference_sets', to='annotate.item'),
                ),
                migrations.AlterField(
                    model_name='rationalespan',
                    name='rationale_set',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='spans', to='annotate.rationaleset'),
                ),
    
            ],
        ),
    ]
