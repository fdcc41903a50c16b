"""Migration operations the framework does not have."""

from django.db import migrations


class AddIndexOnPostgresql(migrations.AddIndex):
    """An index only PostgreSQL can build (GIN for full-text search). Every database gets
    it in the migration state, so the models and migrations agree everywhere; only
    PostgreSQL builds it. SQLite (`make run`) searches without it (qc/item_list.py)."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)
