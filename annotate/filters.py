import django_filters

from annotate.models import Item, Split


class ItemFilter(django_filters.FilterSet):
    split = django_filters.ChoiceFilter(choices=Split.choices)
    label = django_filters.CharFilter()

    class Meta:
        model = Item
        fields = ["split", "label"]
