from django.contrib import admin

from crowd.models import CrowdEvent, CrowdSession, StudyLink


@admin.register(StudyLink)
class StudyLinkAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "platform", "variant", "items_required", "active"]
    list_filter = ["platform", "active"]
    search_fields = ["name", "project__name", "key"]
    readonly_fields = ["key", "created_by", "created_at"]


@admin.register(CrowdSession)
class CrowdSessionAdmin(admin.ModelAdmin):
    list_display = ["link", "worker", "platform_session_id", "status", "items_done", "started_at"]
    list_filter = ["status", "link__platform"]
    search_fields = ["platform_session_id", "worker__username"]
    # The platform's records: read, never edited by hand (pay is computed from them).
    readonly_fields = [f.name for f in CrowdSession._meta.fields]


@admin.register(CrowdEvent)
class CrowdEventAdmin(admin.ModelAdmin):
    list_display = ["created_at", "kind", "project", "link", "actor"]
    list_filter = ["kind"]
    readonly_fields = [f.name for f in CrowdEvent._meta.fields]
