"""The summaries' agreement by pair of variants, for the curation queue's order under a
variant filter. Existing summaries are left null; beat's sweep (item_summaries_complete)
writes them, found through the partial index, which is empty once it has."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0026_annotation_versions"),
        ("qc", "0018_data_manager_speed"),
    ]

    operations = [
        migrations.AddField(
            model_name="itemsummary",
            name="variant_pairs",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name="itemsummary",
            index=models.Index(
                condition=models.Q(("variant_pairs__isnull", True)),
                fields=["project"],
                name="qc_summary_pairs_unwritten",
            ),
        ),
    ]
