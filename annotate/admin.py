from django.contrib import admin

from annotate.models import (
    Annotation,
    Assignment,
    Document,
    ImportJob,
    InstructionVariant,
    Item,
    ItemDocument,
    Project,
    ProjectMembership,
    RationaleSet,
    RationaleSpan,
)


class MembershipInline(admin.TabularInline):
    model = ProjectMembership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "task_type", "language", "annotators_per_item", "created_at"]
    search_fields = ["name"]
    inlines = [MembershipInline]


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["docid", "project", "token_count", "tokenizer"]
    list_filter = ["project"]
    search_fields = ["docid"]
    readonly_fields = ["tokens", "sentences", "text_sha256"]


class ItemDocumentInline(admin.TabularInline):
    model = ItemDocument
    extra = 0
    raw_id_fields = ["document"]


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ["annotation_id", "project", "label", "split"]
    list_filter = ["project", "split"]
    search_fields = ["annotation_id"]
    inlines = [ItemDocumentInline]
    raw_id_fields = ["perturbation_of"]


@admin.register(InstructionVariant)
class InstructionVariantAdmin(admin.ModelAdmin):
    list_display = ["name", "version", "project", "granularity", "active", "frozen_at"]
    list_filter = ["project", "active"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["item", "worker", "variant", "round", "slot", "status", "lease_expires_at"]
    list_filter = ["status", "variant__project"]
    raw_id_fields = ["item", "worker", "variant"]


class RationaleSpanInline(admin.TabularInline):
    model = RationaleSpan
    extra = 0
    raw_id_fields = ["document"]


@admin.register(RationaleSet)
class RationaleSetAdmin(admin.ModelAdmin):
    list_display = ["id", "annotation", "reference_item", "position"]
    raw_id_fields = ["annotation", "reference_item"]
    inlines = [RationaleSpanInline]


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ["id", "assignment", "label", "time_spent_ms", "created_at"]
    raw_id_fields = ["assignment", "revision_of"]


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "source_name", "status", "created_at", "finished_at"]
    list_filter = ["status"]
    readonly_fields = ["problems", "summary", "error"]
