"""Importing datasets into a project: validate everything first, then write in one
transaction. Any problem aborts the import with a report naming file, line and field,
and nothing is written; re-importing the same data creates nothing new.

One module per step of a job: `check` (the whole upload), `split` (into chunks, sent to
the workers), `prepare` (a chunk: tokenize, hash, stage), `publish` (write every chunk's
rows in one transaction, under the project's lock, by the one conflict rule); one module
per format with its own reading: `eraser`, `raw_text`, `benchmark`, `huggingface`; `run` starts and runs
imports; `job` keeps the job's row (progress, liveness, ending); `records` is the plain
data the steps hand each other. The rest of the code uses what this module exports.
"""

from annotate.services.imports.check import detect_import_format
from annotate.services.imports.huggingface import hf_mapping_preview_upload
from annotate.services.imports.job import (
    PARTS_ROOT,
    import_job_fail,
    import_job_fail_if_worker_lost,
    import_job_progress,
    import_parts_sweep,
    import_uploads_expire,
    parts_folder,
)
from annotate.services.imports.prepare import import_chunk_run
from annotate.services.imports.publish import import_publish_run
from annotate.services.imports.records import ImportSummary
from annotate.services.imports.run import dataset_import, import_job_create, import_job_run
from annotate.services.imports.split import import_job_split

__all__ = [
    "PARTS_ROOT",
    "ImportSummary",
    "dataset_import",
    "detect_import_format",
    "hf_mapping_preview_upload",
    "import_chunk_run",
    "import_job_create",
    "import_job_fail",
    "import_job_fail_if_worker_lost",
    "import_job_progress",
    "import_job_run",
    "import_job_split",
    "import_parts_sweep",
    "import_publish_run",
    "import_uploads_expire",
    "parts_folder",
]
