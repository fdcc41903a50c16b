from annotate.services.assignments import (
    SubmitResult,
    annotation_submit,
    assignment_draft_save,
    assignment_next,
    assignment_revision_create,
    assignment_skip,
    leases_expire,
    rationale_sets_validate,
    worker_leases_release,
)
from annotate.services.imports import (
    ImportSummary,
    dataset_import,
    hf_mapping_preview_upload,
    import_job_create,
    import_job_run,
)
from annotate.services.perturbations import (
    perturbation_check,
    perturbation_create,
    perturbation_settings_update,
)
from annotate.services.projects import (
    MemberAddOutcome,
    membership_add,
    membership_add_by_username,
    membership_consent_record,
    project_create,
    project_update_policy,
)
from annotate.services.variants import variant_create, variant_presets_install, variant_update

__all__ = [
    "ImportSummary",
    "MemberAddOutcome",
    "SubmitResult",
    "annotation_submit",
    "assignment_draft_save",
    "assignment_next",
    "assignment_revision_create",
    "assignment_skip",
    "dataset_import",
    "hf_mapping_preview_upload",
    "import_job_create",
    "import_job_run",
    "leases_expire",
    "membership_add",
    "membership_add_by_username",
    "membership_consent_record",
    "perturbation_check",
    "perturbation_create",
    "perturbation_settings_update",
    "project_create",
    "project_update_policy",
    "rationale_sets_validate",
    "variant_create",
    "variant_presets_install",
    "variant_update",
    "worker_leases_release",
]
