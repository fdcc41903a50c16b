"""Reading a variant's model suggestions: the tokens an item is shown.

A variant's `suggestions` names an explainer run's predictions file in the storage and k
(exports.suggestions checks both when an admin sets them). The whole run's suggestions are
computed once per (run, k, file) and cached; an item's are then a dictionary look-up.
"""

from __future__ import annotations

import hashlib

from django.core.cache import cache
from django.core.files.storage import default_storage

from annotate.models import InstructionVariant, Item
from rationale_metrics.suggestions import (
    annotation_key,
    instance_scores_read,
    suggestions_by_instance,
)

# The predictions of a finished run never change; a day keeps a campaign's table warm.
_CACHE_SECONDS = 24 * 3600


def _cache_key(settings: dict) -> str:
    name = hashlib.sha256(str(settings["file"]).encode()).hexdigest()[:16]
    return f"suggestions:run-{settings['run']}:k-{settings['k']}:{name}"


def run_suggestions(settings: dict) -> dict[str, list[list]]:
    """Every instance's suggested tokens as [docid, token] pairs, by annotation key; empty
    when the run's file is gone."""
    key = _cache_key(settings)
    table = cache.get(key)
    if table is not None:
        return table
    try:
        with default_storage.open(settings["file"], "rb") as stream:
            instances = instance_scores_read(stream)
    except FileNotFoundError:
        return {}
    table = {
        instance: [[docid, token] for docid, token in tokens]
        for instance, tokens in suggestions_by_instance(instances, int(settings["k"])).items()
    }
    cache.set(key, table, _CACHE_SECONDS)
    return table


def item_suggestions(*, variant: InstructionVariant, item: Item) -> list[list] | None:
    """The item's suggested tokens ([docid, token], in the documents' order) under this
    variant, or None when the variant shows none. Tokens outside the item's documents
    (a run on other data) are left out. Reads the item's documents as prefetched."""
    settings = variant.suggestions
    if not settings:
        return None
    tokens = run_suggestions(settings).get(annotation_key(item.annotation_id_value), [])
    # The tokens' length, not `token_count`: "next" loads documents without that column.
    counts = {link.document.docid: len(link.document.tokens) for link in item.item_documents.all()}
    return [[docid, token] for docid, token in tokens if token < counts.get(docid, 0)]
