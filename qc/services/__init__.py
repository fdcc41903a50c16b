from qc.services.checks import annotation_quality_check, worker_standing_update
from qc.services.qualification import (
    candidate_decide,
    gold_items_set,
    project_worker_block,
    project_worker_unblock,
    qualification_answer_submit,
    qualification_gate,
    qualification_standing,
    qualification_test_next,
    quality_policy_get,
    quality_policy_update,
)
from qc.services.reviews import review_submit
from qc.services.workers import (
    worker_profile_for_user,
    worker_profile_set_status,
    worker_profiles_import_csv,
    worker_verdict_record,
)

__all__ = [
    "annotation_quality_check",
    "candidate_decide",
    "gold_items_set",
    "project_worker_block",
    "project_worker_unblock",
    "qualification_answer_submit",
    "qualification_gate",
    "qualification_standing",
    "qualification_test_next",
    "quality_policy_get",
    "quality_policy_update",
    "review_submit",
    "worker_profile_for_user",
    "worker_profile_set_status",
    "worker_profiles_import_csv",
    "worker_standing_update",
    "worker_verdict_record",
]
