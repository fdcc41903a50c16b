from django.apps import AppConfig


class QcConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "qc"
    verbose_name = "Quality control"

    def ready(self) -> None:
        from annotate.gates import work_gate_register
        from annotate.services.item_bulk_actions import item_bulk_action_register
        from annotate.signals import annotation_submitted
        from qc.receivers import annotation_submitted_check
        from qc.services import qualification_gate
        from qc.services.curation import curation_start
        from qc.services.item_bulk import items_send_back

        work_gate_register(qualification_gate)
        item_bulk_action_register("send_back", items_send_back)
        item_bulk_action_register("curation_start", curation_start)
        annotation_submitted.connect(annotation_submitted_check, dispatch_uid="qc-check")
