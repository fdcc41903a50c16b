"""The perturbation step of the fine-grained benchmark
(docs/design/architecture.md#perturbation-pairs).

Authors write perturbed copies of original items; a checker, never the author, accepts,
edits then accepts, or rejects each. Only an accepted perturbation becomes an item, made
in the transaction that records the decision, so unchecked text never reaches annotators.
Every write records a PerturbationEvent (the audit trail) in the same transaction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from annotate.models import (
    Document,
    DocumentRole,
    Item,
    ItemDocument,
    Perturbation,
    PerturbationAction,
    PerturbationEvent,
    PerturbationStatus,
    Project,
    TaskType,
)
from annotate.perturbation_types import available_types, project_types, project_types_checked
from annotate.services.assignments import project_fill_rows_sync
from annotate.task_types import answer_char_span, options_from_query
from annotate.tokenization import tokenize_texts, tokenizer_name
from config.exceptions import (
    ApplicationError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
)

MAX_TEXT_CHARS = 200_000
DRAFT_FIELDS = ("types", "texts", "query", "label", "answer")


class Decision:
    ACCEPT = "accept"
    REJECT = "reject"
    ALL = (ACCEPT, REJECT)


def _field_error(field: str, message: str) -> ApplicationError:
    # The field is named in the message for people and in `field` for the page, which
    # marks the input it belongs to.
    return ApplicationError(f"{field}: {message}", extra={"field": field})


@dataclass(frozen=True)
class _Original:
    item: Item
    links: list[ItemDocument]  # the original's documents in position order

    def text_name(self, position: int) -> str:
        link = self.links[position]
        if link.role == DocumentRole.QUESTION:
            return "question"
        return "text" if len(self.links) == 1 else f"text {position + 1}"


def _original_loaded(project: Project, original_id: int) -> _Original:
    item = Item.objects.filter(project=project, pk=original_id).first()
    if item is None:
        raise NotFoundError("original item not found")
    if item.perturbation_of_id is not None:
        raise _field_error(
            "original",
            f"item {item.annotation_id!r} is a perturbation itself; perturb its original",
        )
    if item.held_out:
        raise _field_error(
            "original", f"item {item.annotation_id!r} is held out of ordinary work (gold item)"
        )
    links = list(
        ItemDocument.objects.filter(item=item).select_related("document").order_by("position")
    )
    if not links:
        raise _field_error("original", f"item {item.annotation_id!r} has no documents")
    return _Original(item, links)


def _allowed_labels(project: Project, original: _Original) -> list[str]:
    if project.task_type == TaskType.MULTIPLE_CHOICE and original.item.options:
        # A multiple-choice label names one of the item's own options.
        return [str(o) for o in original.item.options]
    return list(project.labels or [])


def _answer_located(answer: Any, texts: list[str], original: _Original) -> dict:
    """The gold answer of a reading-comprehension perturbation: `{"none": true}`, or its
    place in a passage of the perturbed texts, found as a raw-text import finds it (at
    `start_char` when given, else its one occurrence)."""
    if not isinstance(answer, Mapping):
        raise _field_error("answer", "give the answer text, or mark that the passage has none")
    if answer.get("none") is True:
        return {"none": True}
    text = answer.get("text")
    if not isinstance(text, str) or not text.strip():
        raise _field_error("answer", "give the answer text, or mark that the passage has none")
    text = text.strip()
    passages = [i for i, link in enumerate(original.links) if link.role == DocumentRole.TEXT]
    document, start = answer.get("document"), answer.get("start_char")
    for value in (document, start):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise _field_error("answer", "document and start_char must be integers")
    if document is None:
        holding = [i for i in passages if text in texts[i]]
        document = holding[0] if len(holding) == 1 else (passages[0] if passages else None)
    if document not in passages:
        raise _field_error("answer", f"text {document} is not a passage of this item")
    end = None if start is None else start + len(text)
    span, problem = answer_char_span(texts[document], text, start, end)
    if problem is not None:
        raise _field_error("answer", problem[1].replace("the passage", "the perturbed passage"))
    return {"document": document, "start_char": span[0], "end_char": span[1], "text": text}


class QueryMode:
    """What the perturbed example's query is: the author's to edit (`free`), the text of
    the question document (`question`, a reading-comprehension import keeps both), the
    options of a multiple-choice item (`options`, not perturbed), or absent (`none`)."""

    FREE = "free"
    QUESTION = "question"
    OPTIONS = "options"
    NONE = "none"


def query_mode(item: Item, links) -> str:
    if item.query is None:
        return QueryMode.NONE
    if any(
        link.role == DocumentRole.QUESTION and link.document.text == item.query for link in links
    ):
        return QueryMode.QUESTION
    if item.options and options_from_query(item.query) == list(item.options):
        return QueryMode.OPTIONS
    return QueryMode.FREE


def _query_checked(query: Any, texts: list[str], original: _Original) -> str | None:
    mode = query_mode(original.item, original.links)
    if mode == QueryMode.NONE:
        if query not in (None, ""):
            raise _field_error("query", "the original has no query to perturb")
        return None
    if mode == QueryMode.QUESTION:
        # The question is edited as its document; the query follows it.
        position = next(
            n for n, link in enumerate(original.links) if link.role == DocumentRole.QUESTION
        )
        return texts[position]
    if mode == QueryMode.OPTIONS:
        if query not in (None, original.item.query):
            raise _field_error("query", "the options of a multiple-choice item are not perturbed")
        return original.item.query
    if not isinstance(query, str) or not query.strip():
        raise _field_error("query", "the query is empty")
    return query


def _draft_checked(
    project: Project,
    original: _Original,
    *,
    types: Any,
    texts: Any,
    query: Any,
    label: Any,
    answer: Any,
) -> dict:
    """A perturbation's fields, checked against its original and the project; the first
    problem raises an error naming its field."""
    offered = [t["key"] for t in available_types(project.perturbation_types)]
    if not isinstance(types, list) or not types:
        raise _field_error("types", "pick at least one perturbation type")
    unknown = [t for t in types if t not in offered]
    if unknown:
        raise _field_error(
            "types",
            f"unknown type(s) {', '.join(map(repr, unknown))}; this project offers "
            f"{', '.join(offered)}",
        )
    types = list(dict.fromkeys(types))

    expected = len(original.links)
    if not isinstance(texts, list) or len(texts) != expected:
        got = len(texts) if isinstance(texts, list) else type(texts).__name__
        raise _field_error(
            "texts", f"expected {expected} text(s), one per document of the original, got {got}"
        )
    for n, text in enumerate(texts):
        name = original.text_name(n)
        if not isinstance(text, str) or not text.strip():
            raise _field_error(f"texts[{n}]", f"the {name} is empty")
        if len(text) > MAX_TEXT_CHARS:
            raise _field_error(f"texts[{n}]", f"the {name} is over {MAX_TEXT_CHARS} characters")

    query = _query_checked(query, texts, original)
    # Whitespace alone changes no word, and the benchmark compares words.
    same_query = query is None or query.split() == original.item.query.split()
    if same_query and all(
        text.split() == link.document.text.split()
        for text, link in zip(texts, original.links, strict=True)
    ):
        raise _field_error(
            "texts", "the perturbed example has the same words as the original; change at least one"
        )

    allowed = _allowed_labels(project, original)
    reading = project.task_type == TaskType.READING_COMPREHENSION
    if label in (None, ""):
        if not reading:
            raise _field_error("label", "set the gold label of the perturbed example")
        label = None
    elif not isinstance(label, str):
        raise _field_error("label", "must be a string")
    elif allowed and label not in allowed:
        raise _field_error(
            "label", f"{label!r} is not one of the labels {', '.join(map(repr, allowed))}"
        )

    if reading:
        answer = _answer_located(answer, texts, original)
    elif answer is not None:
        raise _field_error("answer", "only reading-comprehension items have an answer")
    return {"types": types, "texts": texts, "query": query, "label": label, "answer": answer}


def _event(perturbation: Perturbation, actor, action: str, **fields) -> PerturbationEvent:
    return PerturbationEvent.objects.create(
        project_id=perturbation.project_id,
        perturbation=perturbation,
        actor=actor,
        action=action,
        **fields,
    )


@transaction.atomic
def perturbation_create(
    *,
    project: Project,
    original_id: int,
    acting_user: AbstractBaseUser,
    types: list[str],
    texts: list[str],
    query: str | None = None,
    label: str | None = None,
    answer: dict | None = None,
) -> Perturbation:
    """A pending perturbation of an original item, waiting for a checker."""
    original = _original_loaded(project, original_id)
    draft = _draft_checked(
        project, original, types=types, texts=texts, query=query, label=label, answer=answer
    )
    perturbation = Perturbation.objects.create(
        project=project, original=original.item, author=acting_user, **draft
    )
    _event(perturbation, acting_user, PerturbationAction.CREATED)
    return perturbation


def _perturbed_item_create(
    project: Project, perturbation: Perturbation, original: _Original
) -> Item:
    """The accepted perturbation as an item: changed texts as new documents, tokenized
    as a raw-text import tokenizes them for the project language; unchanged ones shared
    with the original, so the pair's common text is one document."""
    suffix = f"-p{perturbation.pk}"
    annotation_id = f"{original.item.annotation_id}{suffix}"
    # Deleted items keep their annotation_id until the purge.
    if Item.all_objects.filter(project=project, annotation_id=annotation_id).exists():
        raise ConflictError(f"an item {annotation_id!r} exists already in this project")
    changed = [
        n
        for n, (text, link) in enumerate(zip(perturbation.texts, original.links, strict=True))
        if text != link.document.text
    ]
    docids = {n: f"{original.links[n].document.docid}{suffix}" for n in changed}
    taken = list(
        Document.objects.filter(project=project, docid__in=docids.values()).values_list(
            "docid", flat=True
        )
    )
    if taken:
        raise ConflictError(f"a document {taken[0]!r} exists already in this project")
    documents = [link.document for link in original.links]
    tokenizer = tokenizer_name(project.language)
    tokenized = tokenize_texts((perturbation.texts[n] for n in changed), language=project.language)
    for n, tokens in zip(changed, tokenized, strict=True):
        text = perturbation.texts[n]
        documents[n] = Document.objects.create(
            project=project,
            docid=docids[n],
            text=text,
            tokens=tokens.token_offsets,
            sentences=tokens.sentence_ranges,
            token_count=len(tokens.token_offsets),
            text_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
            tokenizer=tokenizer,
        )
    answer = perturbation.answer
    if answer and not answer.get("none"):
        answer = {
            "docid": documents[answer["document"]].docid,
            "start_char": answer["start_char"],
            "end_char": answer["end_char"],
            "text": answer["text"],
        }
    item = Item.objects.create(
        project=project,
        annotation_id=annotation_id,
        query=perturbation.query,
        query_type=original.item.query_type,
        label=perturbation.label,
        split=original.item.split,
        declared_docids=[d.docid for d in documents],
        perturbation_of=original.item,
        perturbation_types=list(perturbation.types),
        answer=answer,
        options=list(original.item.options or []),
    )
    ItemDocument.objects.bulk_create(
        ItemDocument(item=item, document=document, position=link.position, role=link.role)
        for document, link in zip(documents, original.links, strict=True)
    )
    return item


@transaction.atomic
def perturbation_check(
    *,
    project: Project,
    perturbation_id: int,
    acting_user: AbstractBaseUser,
    decision: str,
    comment: str = "",
    edits: Mapping[str, Any] | None = None,
) -> Perturbation:
    """Accept (with the checker's `edits`, if any) or reject a pending perturbation.

    The row is locked, so of two checkers deciding at once one decides and the other is
    told it is decided. Accepting makes the perturbed item and its queue rows here."""
    if decision not in Decision.ALL:
        raise _field_error("decision", f"must be one of {', '.join(Decision.ALL)}")
    comment = (comment or "").strip()
    perturbation = (
        Perturbation.objects.select_for_update(of=("self",))
        .filter(project=project, pk=perturbation_id)
        .first()
    )
    if perturbation is None:
        raise NotFoundError("perturbation not found")
    if perturbation.author_id == acting_user.pk:
        raise PermissionDeniedError(
            "you wrote this perturbation: another checker must decide it",
            extra={"code": "own_perturbation"},
        )
    if perturbation.status != PerturbationStatus.PENDING:
        raise ConflictError(
            f"this perturbation was {perturbation.status} already by {perturbation.checker}",
            extra={"code": "decided"},
        )
    unknown = sorted(set(edits or {}) - set(DRAFT_FIELDS))
    if unknown:
        raise _field_error("edits", f"cannot edit {', '.join(unknown)}")

    changes: dict[str, list] = {}
    if decision == Decision.REJECT:
        if edits:
            raise _field_error("edits", "edits are kept only when accepting; reject without them")
        if not comment:
            raise _field_error("comment", "say why the perturbation is rejected")
        perturbation.status = PerturbationStatus.REJECTED
    else:
        original = _original_loaded(project, perturbation.original_id)
        before = {field: getattr(perturbation, field) for field in DRAFT_FIELDS}
        # The final draft is checked whether or not it was edited: the project's labels
        # or types may have changed since the author saved it.
        draft = _draft_checked(project, original, **{**before, **(edits or {})})
        changes = {f: [before[f], draft[f]] for f in DRAFT_FIELDS if draft[f] != before[f]}
        for field, value in draft.items():
            setattr(perturbation, field, value)
        perturbation.edited_in_check = bool(changes)
        perturbation.item = _perturbed_item_create(project, perturbation, original)
        perturbation.status = PerturbationStatus.ACCEPTED
    perturbation.checker = acting_user
    perturbation.checked_at = timezone.now()
    perturbation.check_comment = comment
    perturbation.save()
    _event(
        perturbation,
        acting_user,
        PerturbationAction.ACCEPTED if decision == Decision.ACCEPT else PerturbationAction.REJECTED,
        comment=comment,
        changes=changes,
    )
    if perturbation.item_id is not None:
        # The new item joins every active variant's pool, as an imported one does.
        project_fill_rows_sync(project=project)
    return perturbation


def _types_in_use(project: Project) -> dict[str, int]:
    used: dict[str, int] = {}
    for types in Perturbation.objects.filter(project=project).values_list("types", flat=True):
        for key in types or []:
            used[key] = used.get(key, 0) + 1
    return used


@transaction.atomic
def perturbation_settings_update(
    *,
    project: Project,
    perturbation_types: list[dict] | None = None,
    perturbations_per_original: int | None = None,
    perturbations_per_type: int | None = None,
) -> Project:
    """The project's own perturbation types and its quotas. A type that perturbations
    use cannot be removed: their items would name a type the project no longer has."""
    project = Project.objects.select_for_update(no_key=True).get(pk=project.pk)
    changed = []
    if perturbation_types is not None:
        cleaned, problems = project_types_checked(perturbation_types)
        if problems:
            raise ApplicationError(
                "; ".join(problems), extra={"field": "perturbation_types", "problems": problems}
            )
        kept = {t["key"] for t in cleaned}
        used = _types_in_use(project)
        removed_in_use = [
            t["key"]
            for t in project_types(project.perturbation_types)
            if t["key"] not in kept and used.get(t["key"])
        ]
        if removed_in_use:
            key = removed_in_use[0]
            raise _field_error(
                "perturbation_types",
                f"{key!r} is the type of {used[key]} perturbation(s) and cannot be removed",
            )
        project.perturbation_types = cleaned
        changed.append("perturbation_types")
    if perturbations_per_original is not None:
        project.perturbations_per_original = perturbations_per_original
        changed.append("perturbations_per_original")
    if perturbations_per_type is not None:
        project.perturbations_per_type = perturbations_per_type
        changed.append("perturbations_per_type")
    if changed:
        project.save(update_fields=changed)
    return project
