from annotate.services.dataset_import import (
    ImportSummary,
    dataset_import,
    import_job_create,
    import_job_run,
)
from annotate.services.projects import membership_add, project_create

__all__ = [
    "ImportSummary",
    "dataset_import",
    "import_job_create",
    "import_job_run",
    "membership_add",
    "project_create",
]
