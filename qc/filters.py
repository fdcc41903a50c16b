"""The data manager's filters over a project's items: the list's query string, as the
OpenAPI schema of GET /api/projects/{id}/items/ describes it. Each filter reads the item
or its summary (qc.models.ItemSummary); filters combine with AND, values of one filter
(comma-separated) with OR. A parameter the list does not know, a value it cannot read and
a range whose minimum exceeds its maximum are refused, each naming the parameter."""

from __future__ import annotations

import django_filters
from django import forms
from django.contrib.postgres.search import SearchQuery
from django.db import connection
from django.db.models import Exists, F, OuterRef, Q
from django.forms.utils import ErrorDict, ErrorList
from django.http import QueryDict

from annotate.models import Assignment, AssignmentStatus, Item, ItemDocument, Split
from qc.curation_selectors import curated_stale
from qc.models import FlagKind, ItemStatus, QualityFlag
from qc.services.item_summaries import SEARCH_CONFIG

UNASSIGNED_SPLIT = "unassigned"
PERTURBATION_ROLES = ("original", "perturbed", "none")
CURATION_STATES = ("none", "curated", "stale")
FLAG_ANY, FLAG_NONE = "any", "none"
MAX_VALUES = 200
SEARCH_MAX_CHARS = 500

# Sortable columns: the list's name -> the model path. The id breaks every tie.
ORDERING_FIELDS = {
    "id": "pk",
    "annotation_id": "annotation_id",
    "split": "split",
    "label": "label",
    "status": "summary__status",
    "submitted": "summary__submitted",
    "kappa": "summary__kappa",
    "f1": "summary__f1",
    "open_flags": "summary__open_flags",
    "review_score": "summary__review_score",
    "last_activity": "summary__last_activity",
}
PAGING_PARAMETERS = ("page", "page_size")
RANGES = (
    ("kappa_min", "kappa_max"),
    ("f1_min", "f1_max"),
    ("review_score_min", "review_score_max"),
    ("submitted_min", "submitted_max"),
    ("last_activity_after", "last_activity_before"),
)


class CommaSeparatedField(forms.Field):
    """Values separated by commas, each read by `child` (a form field)."""

    def __init__(self, *, child: forms.Field, **kwargs):
        super().__init__(**kwargs)
        self.child = child

    def to_python(self, value):
        if value in self.empty_values:
            return []
        values = [part.strip() for part in str(value).split(",")]
        if len(values) > MAX_VALUES:
            raise forms.ValidationError(f"at most {MAX_VALUES} values")
        return [self.child.clean(part) for part in values]


class ValuesFilter(django_filters.Filter):
    """`name=a,b`: any of the values. `child` reads one value."""

    field_class = CommaSeparatedField

    def __init__(self, *args, child: forms.Field, **kwargs):
        kwargs.setdefault("lookup_expr", "in")
        super().__init__(*args, child=child, **kwargs)

    def filter(self, qs, value):
        if not value:
            return qs
        if self.method is not None:
            return self.method(qs, self.field_name, value)
        return qs.filter(**{f"{self.field_name}__in": value})


def _choice(choices) -> forms.ChoiceField:
    return forms.ChoiceField(choices=[(c, c) for c in choices])


def _text() -> forms.CharField:
    return forms.CharField(max_length=255)


def _id() -> forms.IntegerField:
    return forms.IntegerField(min_value=1, max_value=2**63 - 1)


class ItemListFilter(django_filters.FilterSet):
    search = django_filters.CharFilter(
        method="filter_search",
        max_length=SEARCH_MAX_CHARS,
        help_text="Words to find in the item's texts and its query.",
    )
    status = ValuesFilter(
        field_name="summary__status",
        child=_choice(ItemStatus.values),
        help_text="Comma-separated statuses: " + ", ".join(ItemStatus.values),
    )
    split = ValuesFilter(
        method="filter_split",
        child=_choice([*[s for s in Split.values if s], UNASSIGNED_SPLIT]),
        help_text="Comma-separated splits (train, val, test, unassigned).",
    )
    label = ValuesFilter(field_name="label", child=_text(), help_text="Comma-separated labels.")
    majority_label = ValuesFilter(
        field_name="summary__majority_label",
        child=_text(),
        help_text="Comma-separated labels the annotators' majority gave.",
    )
    variant = ValuesFilter(
        method="filter_variant",
        child=_id(),
        help_text="Variant ids: items with work under any of them.",
    )
    annotator = ValuesFilter(
        method="filter_annotator",
        child=_id(),
        help_text="User ids: items with an annotation submitted by any of them.",
    )
    flag = ValuesFilter(
        method="filter_flag",
        child=_choice([*FlagKind.values, FLAG_ANY, FLAG_NONE]),
        help_text="Comma-separated flag kinds on the newest annotations, or 'any' or 'none'.",
    )
    perturbation = django_filters.ChoiceFilter(
        method="filter_perturbation",
        choices=[(r, r) for r in PERTURBATION_ROLES],
        help_text="original (has perturbed copies), perturbed (is one), none.",
    )
    perturbation_type = ValuesFilter(
        method="filter_perturbation_type",
        child=_text(),
        help_text="Comma-separated perturbation types.",
    )
    curation = django_filters.ChoiceFilter(
        method="filter_curation",
        choices=[(c, c) for c in CURATION_STATES],
        help_text="none (no curated gold), curated (curated gold, stale or not), stale "
        "(an annotation changed after the gold was curated or last confirmed).",
    )
    kappa_min = django_filters.NumberFilter(field_name="summary__kappa", lookup_expr="gte")
    kappa_max = django_filters.NumberFilter(field_name="summary__kappa", lookup_expr="lte")
    f1_min = django_filters.NumberFilter(field_name="summary__f1", lookup_expr="gte")
    f1_max = django_filters.NumberFilter(field_name="summary__f1", lookup_expr="lte")
    review_score_min = django_filters.NumberFilter(
        field_name="summary__review_score", lookup_expr="gte"
    )
    review_score_max = django_filters.NumberFilter(
        field_name="summary__review_score", lookup_expr="lte"
    )
    submitted_min = django_filters.NumberFilter(
        field_name="summary__submitted", lookup_expr="gte", min_value=0
    )
    submitted_max = django_filters.NumberFilter(
        field_name="summary__submitted", lookup_expr="lte", min_value=0
    )
    last_activity_after = django_filters.IsoDateTimeFilter(
        field_name="summary__last_activity", lookup_expr="gte"
    )
    last_activity_before = django_filters.IsoDateTimeFilter(
        field_name="summary__last_activity", lookup_expr="lte"
    )
    ordering = django_filters.ChoiceFilter(
        method="filter_ordering",
        choices=[
            (f"{sign}{name}", f"{sign}{name}") for name in ORDERING_FIELDS for sign in ("", "-")
        ],
        help_text="A column to sort by, '-' first for descending; ties go by id.",
    )

    class Meta:
        model = Item
        fields: list[str] = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._refused: dict[str, list[str]] = {}
        for name in ("submitted_min", "submitted_max"):
            self.form.fields[name] = forms.IntegerField(required=False, min_value=0)

    @property
    def qs(self):
        items = super().qs
        if not self.form.cleaned_data.get("ordering"):
            items = items.order_by("pk")
        return items

    def is_valid(self) -> bool:
        self._refused = {
            name: ["not a filter of the item list"]
            for name in sorted(set(self.data) - set(self.filters) - set(PAGING_PARAMETERS))
        }
        for name in self.data:
            if name in self.filters and len(self.data.getlist(name)) > 1:
                self._refused[name] = ["give it once; separate values with commas"]
        if super().is_valid():
            cleaned = self.form.cleaned_data
            for low, high in RANGES:
                lowest, highest = cleaned.get(low), cleaned.get(high)
                if lowest is not None and highest is not None and lowest > highest:
                    self._refused[high] = [f"{high} is below {low}"]
            flags = cleaned.get("flag") or []
            if len(flags) > 1 and {FLAG_ANY, FLAG_NONE} & set(flags):
                self._refused["flag"] = ["'any' and 'none' stand alone"]
        return not self.errors

    @property
    def errors(self) -> ErrorDict:
        refused = {name: ErrorList(messages) for name, messages in self._refused.items()}
        return ErrorDict({**self.form.errors, **refused})

    # ---------------------------------------------------------------- the filters

    def filter_search(self, items, name, value):
        words = value.strip()
        if not words:
            return items
        if connection.vendor == "postgresql":
            return items.filter(
                summary__search_vector=SearchQuery(
                    words, config=SEARCH_CONFIG, search_type="websearch"
                )
            )
        in_texts = ItemDocument.objects.filter(item=OuterRef("pk"), document__text__icontains=words)
        return items.filter(Q(query__icontains=words) | Exists(in_texts))

    def filter_split(self, items, name, values):
        return items.filter(split__in=["" if v == UNASSIGNED_SPLIT else v for v in values])

    def filter_variant(self, items, name, values):
        work = Assignment.objects.filter(item=OuterRef("pk"), variant_id__in=values)
        return items.filter(Exists(work))

    def filter_annotator(self, items, name, values):
        submitted = Assignment.objects.filter(
            item=OuterRef("pk"), worker_id__in=values, status=AssignmentStatus.SUBMITTED
        )
        return items.filter(Exists(submitted))

    def filter_flag(self, items, name, values):
        if values == [FLAG_ANY]:
            return items.filter(summary__open_flags__gt=0)
        if values == [FLAG_NONE]:
            return items.filter(summary__open_flags=0)
        flagged = QualityFlag.objects.filter(
            annotation__assignment__item=OuterRef("pk"),
            annotation__revisions__isnull=True,
            kind__in=values,
        )
        return items.filter(Exists(flagged))

    def filter_perturbation(self, items, name, value):
        has_copies = Exists(
            Item.objects.filter(perturbation_of=OuterRef("pk"), deleted_at__isnull=True)
        )
        if value == "original":
            return items.filter(has_copies)
        if value == "perturbed":
            return items.filter(perturbation_of__isnull=False)
        return items.filter(~has_copies, perturbation_of__isnull=True)

    def filter_perturbation_type(self, items, name, values):
        any_of = Q()
        for kind in values:
            if connection.vendor == "postgresql":
                any_of |= Q(perturbation_types__contains=[kind])
            else:  # SQLite's JSON has no containment: the value as it is written
                any_of |= Q(perturbation_types__icontains=f'"{kind}"')
        return items.filter(any_of)

    def filter_curation(self, items, name, value):
        if value == "none":
            return items.filter(curated_annotation__isnull=True)
        if value == "curated":
            return items.filter(curated_annotation__isnull=False)
        return items.filter(curated_stale())

    def filter_ordering(self, items, name, value):
        """Nulls sort as the largest value on every database (PostgreSQL's own order, the
        one its indexes hold; SQLite would put them first)."""
        descending = value.startswith("-")
        path = ORDERING_FIELDS[value.lstrip("-")]
        if path == "pk":
            return items.order_by("-pk" if descending else "pk")
        if descending:
            return items.order_by(F(path).desc(nulls_first=True), "-pk")
        return items.order_by(F(path).asc(nulls_last=True), "pk")


def item_filter_data(query: str) -> QueryDict:
    """A saved or passed-on query string as the filters' data: the filter alone, without
    the page it was on or the order of its rows."""
    data = QueryDict(query.lstrip("?"), mutable=True)
    for name in ("page", "page_size", "ordering"):
        data.pop(name, None)
    return data


def item_filter_problems(filters: ItemListFilter) -> str:
    return "; ".join(f"{name}: {' '.join(map(str, m))}" for name, m in filters.errors.items())
