"""Participants who arrived before consent was kept on their membership get the consent
their sessions recorded, so that it binds them too: session by session, as the entry and
the consent answer now record it (crowd.services). A decline stands for good; a
consented session gives consent; an unanswered one asks for it again; a session screened
out on arrival changes nothing, except that a first arrival leaves it to be asked."""

from django.db import migrations

STARTED, DECLINED = "started", "declined"


def consent_from_sessions(apps, schema_editor):
    CrowdSession = apps.get_model("crowd", "CrowdSession")
    ProjectMembership = apps.get_model("annotate", "ProjectMembership")
    consent: dict[tuple[int, int], str] = {}
    sessions = CrowdSession.objects.order_by("started_at", "pk").values_list(
        "worker_id", "link__project_id", "status", "consented_at"
    )
    for worker_id, project_id, status, consented_at in sessions.iterator():
        key = (worker_id, project_id)
        if consent.get(key) == "declined":
            continue
        if status == DECLINED:
            consent[key] = "declined"
        elif consented_at is not None:
            consent[key] = "given"
        elif status == STARTED or key not in consent:
            consent[key] = "pending"
    for (worker_id, project_id), value in consent.items():
        ProjectMembership.objects.filter(
            project_id=project_id, user_id=worker_id, role="annotator"
        ).update(consent=value)


class Migration(migrations.Migration):
    dependencies = [
        ("crowd", "0001_initial"),
        ("annotate", "0016_blind_annotators_and_member_consent"),
    ]

    operations = [migrations.RunPython(consent_from_sessions, migrations.RunPython.noop)]
