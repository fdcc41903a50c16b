from django.contrib import admin

from exports.models import Export, ProjectDatasheet


@admin.register(Export)
class ExportAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "status", "sha256", "created_at", "finished_at"]
    list_filter = ["status"]
    readonly_fields = ["params", "datasheet", "summary", "error", "sha256", "file_path"]


@admin.register(ProjectDatasheet)
class ProjectDatasheetAdmin(admin.ModelAdmin):
    list_display = ["project", "licence", "updated_by", "updated_at"]
    readonly_fields = ["updated_by", "updated_at"]
