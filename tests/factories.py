"""factory_boy factories: the shortest way to a valid row, overridable per test."""

import factory
from django.contrib.auth import get_user_model

from annotate.models import Document, Item, ItemDocument, Project, ProjectMembership, Role


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw")


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project

    name = factory.Sequence(lambda n: f"project {n}")
    labels = factory.LazyFunction(lambda: ["neg", "pos"])


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ProjectMembership

    project = factory.SubFactory(ProjectFactory)
    user = factory.SubFactory(UserFactory)
    role = Role.ANNOTATOR


class DocumentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Document

    project = factory.SubFactory(ProjectFactory)
    docid = factory.Sequence(lambda n: f"doc{n}")
    text = "a b c d"
    tokens = factory.LazyFunction(lambda: [[0, 1], [2, 3], [4, 5], [6, 7]])
    sentences = factory.LazyFunction(lambda: [[0, 4]])
    token_count = 4
    text_sha256 = "x"
    tokenizer = "given"


class ItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Item
        skip_postgeneration_save = True

    project = factory.SubFactory(ProjectFactory)
    annotation_id = factory.Sequence(lambda n: f"item{n}")
    label = "pos"

    @factory.post_generation
    def with_document(self, create, extracted, **kwargs):
        if create and extracted is not False:
            doc = DocumentFactory(project=self.project, docid=f"doc-{self.annotation_id}")
            ItemDocument.objects.create(item=self, document=doc, position=0)
