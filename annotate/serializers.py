from rest_framework import serializers

from annotate.models import ImportFormat, ImportJob, Item, Language, Project, TaskType


class ProjectOutputSerializer(serializers.ModelSerializer):
    item_count = serializers.IntegerField(read_only=True, default=None)

    class Meta:
        model = Project
        fields = [
            "id",
            "name",
            "description",
            "task_type",
            "labels",
            "language",
            "annotators_per_item",
            "min_highlight",
            "max_rounds",
            "reviewers_per_annotation",
            "sufficiency_threshold",
            "compactness_threshold",
            "comprehensiveness_threshold",
            "lease_seconds",
            "created_at",
            "item_count",
        ]


class ProjectCreateInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    task_type = serializers.ChoiceField(choices=TaskType.choices, default=TaskType.CLASSIFICATION)
    labels = serializers.ListField(
        child=serializers.CharField(max_length=255), required=False, default=list
    )
    language = serializers.ChoiceField(choices=Language.choices, default=Language.ENGLISH)
    annotators_per_item = serializers.IntegerField(min_value=1, max_value=50, default=3)
    min_highlight = serializers.IntegerField(min_value=0, max_value=10_000, default=1)


class ImportJobCreateInputSerializer(serializers.Serializer):
    file = serializers.FileField()
    source_format = serializers.ChoiceField(choices=ImportFormat.choices, required=False)


class ImportJobOutputSerializer(serializers.ModelSerializer):
    progress = serializers.SerializerMethodField()
    created_by = serializers.CharField(source="created_by.username", default=None)

    class Meta:
        model = ImportJob
        fields = [
            "id",
            "project",
            "source_format",
            "source_name",
            "status",
            "progress",
            "problems",
            "summary",
            "error",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
        ]

    def get_progress(self, job) -> dict:
        from annotate.services.dataset_import import import_job_progress

        return import_job_progress(job)


class ItemOutputSerializer(serializers.ModelSerializer):
    annotation_id = serializers.SerializerMethodField()
    docids = serializers.SerializerMethodField()
    reference_set_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Item
        fields = [
            "id",
            "annotation_id",
            "docids",
            "query",
            "query_type",
            "label",
            "split",
            "reference_set_count",
        ]

    def get_annotation_id(self, item) -> str | int:
        return item.annotation_id_value

    def get_docids(self, item) -> list[str]:
        return [link.document.docid for link in item.item_documents.all()]
