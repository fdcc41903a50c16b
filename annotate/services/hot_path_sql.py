""" "Next item" and "submit" in one PostgreSQL statement each, for the common case.

Under load these two requests are most of the platform's work. Through the ORM, "next"
took 14 round trips (transaction, savepoint, current lease, locked fill row, free slots,
insert, counter, documents) and "submit" 9, and building each query cost more CPU than
PostgreSQL spent running it. Here each is one statement with data-modifying CTEs: one
round trip, atomic by itself, under the same locks and constraints as the services in
`annotate/services/assignments/` (the fill row FOR UPDATE SKIP LOCKED, the assignment row FOR UPDATE, the
partial unique index on live slots, the unique client UUID).

Each function handles only the common case and returns None otherwise: no free item, an
expired lease, a revision, a retry, input the statement finds wrong. The caller then runs
the general service, which decides those cases and words every error, so no rule and no
message is written twice. A unique-constraint violation (two leases racing for one slot,
a client UUID already stored) rolls the whole statement back and counts as "otherwise".

Both are prepared statements (config.prepared_sql): planning these CTEs took longer than
running them. On other databases (SQLite for the demo) the general services do it all.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connection, transaction
from django.db.models import DEFERRED

from annotate.fields import unpack_pairs
from annotate.models import (
    Annotation,
    Assignment,
    AssignmentStatus,
    Document,
    DocumentRole,
    InstructionVariant,
    Item,
    ItemDocument,
    ItemVariantFill,
    MemberConsent,
    Project,
    ProjectMembership,
    RationaleSet,
    RationaleSpan,
    Role,
    WorkerVariantBinding,
)
from config.prepared_sql import PreparedStatement, columns, instance_from_row

_A = Assignment._meta.db_table
_I = Item._meta.db_table
_F = ItemVariantFill._meta.db_table
_D = Document._meta.db_table
_ID = ItemDocument._meta.db_table
_P = Project._meta.db_table
_AN = Annotation._meta.db_table
_RS = RationaleSet._meta.db_table
_RSP = RationaleSpan._meta.db_table
_V = InstructionVariant._meta.db_table
_B = WorkerVariantBinding._meta.db_table
_M = ProjectMembership._meta.db_table
_ANNOTATOR = Role.ANNOTATOR.value
_PENDING, _DECLINED = MemberConsent.PENDING.value, MemberConsent.DECLINED.value
_LEASED, _SUBMITTED = AssignmentStatus.LEASED.value, AssignmentStatus.SUBMITTED.value
_QUESTION = DocumentRole.QUESTION.value
_INTEGER_MAX = 2**31 - 1  # PostgreSQL's integer, the type of the token parameters


def available() -> bool:
    return settings.ANNOTATE_HOT_PATH_SQL and connection.vendor == "postgresql"


def _alone(statement: PreparedStatement, values: dict, *, fetch_all: bool = False):
    """Run a write statement on its own (autocommit, so atomic by itself), or under a
    savepoint inside a caller's transaction, which a failed statement must not spoil."""
    run = statement.fetchall if fetch_all else statement.fetchone
    if connection.in_atomic_block:
        with transaction.atomic():
            return run(values)
    return run(values)


# The worker's open lease (a revision owed before any first-round lease, the oldest first)
# or, failing that, a new one on the fullest (item, variant) that has room, is not held
# out and was never theirs; then the chosen assignment with its variant and its item's
# documents, a row per document. New
# work comes under the variant the caller names (a project that mixes variants chooses
# one per request) or else the worker's bound variant while it is active: read here, it
# costs "next" no round trip of its own. With neither, nothing is leased and the caller
# binds the worker to a variant first.
_LEASE = f"""
WITH current_lease AS (
    SELECT a.id, a.item_id, a.round, a.status, a.lease_expires_at, a.draft, a.variant_id
    FROM {_A} a JOIN {_I} i ON i.id = a.item_id
    WHERE a.worker_id = %(worker)s AND i.project_id = %(project)s AND a.status = '{_LEASED}'
      AND (a.lease_expires_at >= %(now)s OR a.round > 1)
    ORDER BY a.round > 1 DESC, a.created_at, a.id
    LIMIT 1
),
variant_used AS (
    SELECT COALESCE(%(variant)s, (
        SELECT b.variant_id FROM {_B} b JOIN {_V} v ON v.id = b.variant_id
        WHERE b.project_id = %(project)s AND b.worker_id = %(worker)s AND v.active
    )) AS id
),
fill AS (
    SELECT f.id, f.item_id
    FROM {_F} f JOIN {_I} i ON i.id = f.item_id
    WHERE NOT EXISTS (SELECT 1 FROM current_lease)
      AND f.variant_id = (SELECT id FROM variant_used) AND f.live < %(quota)s
      AND NOT i.held_out
      -- A deleted item has no fill row (annotate/services/deletion.py); a row that
      -- "next"'s safety net recreated from a stale read must not hand it out either.
      AND i.deleted_at IS NULL
      AND NOT EXISTS (
          SELECT 1 FROM {_A} mine WHERE mine.item_id = f.item_id AND mine.worker_id = %(worker)s
      )
    ORDER BY f.live DESC, f.item_id
    LIMIT 1
    FOR UPDATE OF f SKIP LOCKED
),
free_slot AS (
    -- The item's taken slots come from one index lookup on the item (a subquery run
    -- once): correlated with the CTE instead, the planner scanned every live slot of the
    -- variant, which grows with the project.
    SELECT s.slot
    FROM generate_series(0, %(quota)s - 1) AS s(slot)
    WHERE EXISTS (SELECT 1 FROM fill)
      AND s.slot <> ALL (ARRAY(
          SELECT taken.slot FROM {_A} taken
          WHERE taken.item_id = (SELECT item_id FROM fill)
            AND taken.variant_id = (SELECT id FROM variant_used)
            AND taken.round = 1 AND taken.status IN ('{_LEASED}', '{_SUBMITTED}')
      ))
    ORDER BY s.slot
    LIMIT 1
),
new_lease AS (
    INSERT INTO {_A} (item_id, worker_id, variant_id, round, slot, status, lease_expires_at,
                      created_at, submitted_at, draft, draft_saved_at)
    SELECT fill.item_id, %(worker)s, (SELECT id FROM variant_used), 1, free_slot.slot,
           '{_LEASED}', %(expires)s, %(now)s, NULL, NULL, NULL
    FROM fill, free_slot
    ON CONFLICT DO NOTHING
    RETURNING id, item_id, round, status, lease_expires_at, draft, variant_id
),
counted AS (
    UPDATE {_F} f SET live = f.live + 1
    FROM new_lease, fill
    WHERE f.id = fill.id
    RETURNING f.id
),
chosen AS (
    SELECT * FROM current_lease
    UNION ALL
    SELECT * FROM new_lease
)
SELECT EXISTS (SELECT 1 FROM fill) AS found, (SELECT id FROM variant_used) AS variant_for_new,
       c.id, c.item_id, c.round, c.status, c.lease_expires_at, c.draft, c.variant_id,
       i.annotation_id, i.annotation_id_is_int, i.query, i.query_type, i.label,
       link.id, link.position, d.id, d.docid, d.text, d.tokens, d.sentences,
       {columns(InstructionVariant, "v")}
FROM (SELECT 1) AS always_a_row
LEFT JOIN chosen c ON true
LEFT JOIN {_V} v ON v.id = c.variant_id
LEFT JOIN {_I} i ON i.id = c.item_id
LEFT JOIN {_ID} link ON link.item_id = i.id
LEFT JOIN {_D} d ON d.id = link.document_id
ORDER BY link.position
"""  # noqa: S608 - only model table names are interpolated; every value is a parameter


_LEASE_STATEMENT = PreparedStatement(
    "rw_lease",
    _LEASE,
    [
        ("worker", "bigint"),
        ("project", "bigint"),
        ("variant", "bigint"),
        ("quota", "integer"),
        ("now", "timestamptz"),
        ("expires", "timestamptz"),
    ],
)

# A lease can find its free slot taken after all: the slot check reads the statement's
# snapshot, and a lease committed just before this statement locked the fill row is not
# in it. The unique index on live slots refuses the insert (ON CONFLICT DO NOTHING), and
# the statement is tried again with a new snapshot.
LEASE_ATTEMPTS = 3


# What `lease` returns when it was given no variant and the worker has no active one bound.
UNBOUND = object()


def lease(*, project: Project, worker_id: int, variant: InstructionVariant | None, now: datetime):
    """The worker's open or new lease, with its variant, item and documents attached for
    the response; UNBOUND when `variant` is None and the worker has no active variant
    bound; None when there is no lease to give here (the general service decides)."""
    parameters = {
        "worker": worker_id,
        "project": project.pk,
        "variant": variant.pk if variant is not None else None,
        "quota": project.annotators_per_item,
        "now": now,
        "expires": now + timedelta(seconds=project.lease_seconds),
    }
    for _attempt in range(LEASE_ATTEMPTS):
        rows = _alone(_LEASE_STATEMENT, parameters, fetch_all=True)
        found, variant_for_new, assignment_id = rows[0][:3]
        if assignment_id is not None:
            return _leased_assignment(rows, project, worker_id)
        if variant_for_new is None:
            return UNBOUND
        if not found:
            return None
    return None


_ASSIGNMENT_FIELDS = ("id", "item_id", "round", "status", "lease_expires_at", "draft", "variant_id")
_ITEM_FIELDS = ("annotation_id", "annotation_id_is_int", "query", "query_type", "label")
_DRAFT = Assignment._meta.get_field("draft")
# Where each part of the lease statement's row sits (after found, variant_for_new).
_ASSIGNMENT_COLUMNS = slice(2, 9)  # c.id .. c.variant_id
_ITEM_ID_COLUMN = 3  # c.item_id
_ITEM_COLUMNS = slice(9, 14)  # i.annotation_id .. i.label
_DOCUMENT_COLUMNS = slice(14, 21)  # link.id .. d.sentences
_VARIANT_COLUMNS = slice(21, None)


def _loaded(model, values: dict) -> object:
    """An instance as the ORM loads it from these column values (by attribute name); the
    fields not given are deferred: read on access, and left alone by save()."""
    row = [values.get(f.attname, DEFERRED) for f in model._meta.concrete_fields]
    return model.from_db(DEFAULT_DB_ALIAS, list(values), row)  # the statements run there


def _leased_assignment(rows, project: Project, worker_id: int) -> Assignment:
    first = rows[0]
    values = dict(zip(_ASSIGNMENT_FIELDS, first[_ASSIGNMENT_COLUMNS], strict=True))
    values["draft"] = _DRAFT.from_db_value(values["draft"], None, connection)
    assignment = _loaded(Assignment, {**values, "worker_id": worker_id})
    item_values = dict(zip(_ITEM_FIELDS, first[_ITEM_COLUMNS], strict=True))
    item = _loaded(Item, {"id": first[_ITEM_ID_COLUMN], "project_id": project.pk, **item_values})
    item.project = project
    links = []
    for row in rows:
        link_id, position, document_id, docid, text, tokens, sentences = row[_DOCUMENT_COLUMNS]
        if link_id is None:
            continue
        document = _loaded(
            Document,
            {
                "id": document_id,
                "docid": docid,
                "text": text,
                "tokens": unpack_pairs(tokens),
                "sentences": unpack_pairs(sentences),
            },
        )
        link = _loaded(
            ItemDocument,
            {"id": link_id, "item_id": item.pk, "document_id": document_id, "position": position},
        )
        link.item, link.document = item, document
        links.append(link)
    item._prefetched_objects_cache = {"item_documents": links}
    assignment.item = item
    assignment.variant = instance_from_row(connection, InstructionVariant, first[_VARIANT_COLUMNS])
    return assignment


# A first-round submission under a variant without model suggestions, of a lease still
# open, every span in a document of the item and within it, enough tokens, a label the
# project knows (given, where the project takes labels from its annotators; one of the
# item's options, where it has options), by a worker whose consent does not stand in the
# way: the assignment is marked submitted and the annotation, its sets and spans are
# written. Otherwise nothing is.
_SUBMIT = f"""
WITH target AS (
    -- The row is found by its primary key alone, then checked: with the other conditions
    -- beside the id, PostgreSQL on a table it had no statistics for chose the partial
    -- live-slot index (round = 1) and filtered every live assignment to find this one.
    SELECT a.id, a.item_id, p.question_rationales
    FROM (
        SELECT id, item_id, worker_id, status, round, lease_expires_at, variant_id
        FROM {_A} WHERE id = %(assignment)s
        OFFSET 0  -- keeps the checks below out of this lookup
        FOR UPDATE
    ) a
    JOIN {_I} i ON i.id = a.item_id
    JOIN {_P} p ON p.id = i.project_id
    JOIN {_V} v ON v.id = a.variant_id
    WHERE a.worker_id = %(worker)s
      -- A variant that shows model suggestions records them: the general service does.
      AND v.suggestions IS NULL
      AND a.status = '{_LEASED}' AND a.round = 1 AND a.lease_expires_at >= %(now)s
      AND p.min_highlight <= %(highlighted)s
      AND (%(label)s IS NULL OR jsonb_array_length(p.labels) = 0
           OR p.labels ? %(label)s)
      AND (%(label)s IS NOT NULL OR NOT p.labels_from_annotators)
      AND (%(label)s IS NULL OR jsonb_array_length(i.options) = 0
           OR i.options ? %(label)s)
      -- A study participant's consent, not given yet or declined (annotate.participants).
      AND NOT EXISTS (
          SELECT 1 FROM {_M} m
          WHERE m.project_id = i.project_id AND m.user_id = %(worker)s
            AND m.role = '{_ANNOTATOR}' AND m.consent IN ('{_PENDING}', '{_DECLINED}')
      )
),
given AS (
    SELECT *
    FROM unnest(%(set_positions)s, %(positions)s, %(docids)s,
                %(starts)s, %(ends)s)
         AS s(set_position, position, docid, start_token, end_token)
),
item_documents AS MATERIALIZED (
    -- From the item to its documents, never from the docids to every document that has
    -- one: without statistics, PostgreSQL hashed the whole document table for that join.
    -- A reading-comprehension question takes rationales only where the project allows.
    SELECT d.id, d.docid, d.token_count
    FROM target t
    JOIN {_ID} link ON link.item_id = t.item_id
    JOIN {_D} d ON d.id = link.document_id
    WHERE link.role <> '{_QUESTION}' OR t.question_rationales
),
resolved AS (
    SELECT g.set_position, g.position, g.start_token, g.end_token, d.id AS document_id
    FROM given g
    JOIN item_documents d ON d.docid = g.docid
    WHERE g.end_token <= d.token_count
),
accepted AS (
    SELECT t.id FROM target t WHERE (SELECT count(*) FROM resolved) = %(n_spans)s
),
submitted AS (
    UPDATE {_A} a SET status = '{_SUBMITTED}', submitted_at = %(now)s, draft = NULL
    FROM accepted
    WHERE a.id = accepted.id
    RETURNING a.id
),
annotation AS (
    INSERT INTO {_AN} (assignment_id, client_uuid, label, time_spent_ms, revision_of_id,
                       created_at)
    SELECT id, %(client_uuid)s, %(label)s, %(time_spent_ms)s, NULL, %(now)s FROM submitted
    RETURNING id
),
sets AS (
    INSERT INTO {_RS} (annotation_id, reference_item_id, position)
    SELECT annotation.id, NULL, n FROM annotation, generate_series(0, %(n_sets)s - 1) AS n
    RETURNING id, position
),
spans AS (
    INSERT INTO {_RSP} (rationale_set_id, document_id, start_token, end_token, position,
                        source_fields)
    SELECT sets.id, r.document_id, r.start_token, r.end_token, r.position, '{{}}'::jsonb
    FROM resolved r JOIN sets ON sets.position = r.set_position
    RETURNING 1
)
SELECT annotation.id, (SELECT count(*) FROM spans) FROM annotation
"""  # noqa: S608 - only model table names are interpolated; every value is a parameter

_SUBMIT_STATEMENT = PreparedStatement(
    "rw_submit",
    _SUBMIT,
    [
        ("assignment", "bigint"),
        ("worker", "bigint"),
        ("now", "timestamptz"),
        ("highlighted", "integer"),
        ("label", "text"),
        ("set_positions", "integer[]"),
        ("positions", "integer[]"),
        ("docids", "text[]"),
        ("starts", "integer[]"),
        ("ends", "integer[]"),
        ("n_spans", "integer"),
        ("n_sets", "integer"),
        ("client_uuid", "uuid"),
        ("time_spent_ms", "integer"),
    ],
)


def submit(
    *,
    assignment_id: int,
    worker_id: int,
    client_uuid: uuid.UUID,
    sets: list[list[tuple[str, int, int]]],
    label: str | None,
    time_spent_ms: int,
    now: datetime,
) -> Annotation | None:
    """Store a plain first-round submission; the new annotation, or None when the general
    service must decide (nothing has been written then). `sets` are checked (non-empty
    spans, no overlaps) and have no empty set."""
    spans = [
        (s, j, docid, start, end)
        for s, rows in enumerate(sets)
        for j, (docid, start, end) in enumerate(rows)
    ]
    set_positions, positions, docids, starts, ends = (
        [list(column) for column in zip(*spans, strict=True)] if spans else [[]] * 5
    )
    highlighted = sum(end - start for *_, start, end in spans)
    if max(ends, default=0) > _INTEGER_MAX or highlighted > _INTEGER_MAX:
        # Past any document's end; the statement's integer parameters cannot even hold it.
        return None
    try:
        row = _alone(
            _SUBMIT_STATEMENT,
            {
                "assignment": assignment_id,
                "worker": worker_id,
                "now": now,
                "highlighted": highlighted,
                "label": label,
                "set_positions": set_positions,
                "positions": positions,
                "docids": docids,
                "starts": starts,
                "ends": ends,
                "n_spans": len(spans),
                "n_sets": len(sets),
                "client_uuid": client_uuid,
                "time_spent_ms": time_spent_ms,
            },
        )
    except IntegrityError:  # the client UUID is already stored: the general service replays it
        return None
    if row is None:
        return None
    return _loaded(
        Annotation,
        {
            "id": row[0],
            "assignment_id": assignment_id,
            "client_uuid": client_uuid,
            "label": label,
            "time_spent_ms": time_spent_ms,
            "revision_of_id": None,
            "created_at": now,
        },
    )
