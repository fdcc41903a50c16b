"""Testing a data migration: the database migrated back to an app's earlier state, with the
models as they were then, and forward again afterwards."""

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate_app(app: str, targets: list[tuple[str, str]]):
    """Migrate `app` to `targets`; returns the models as they are then (other apps at their
    newest)."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    others = [node for node in executor.loader.graph.leaf_nodes() if node[0] != app]
    return executor.loader.project_state(others + targets).apps


def migrate_to_newest() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
