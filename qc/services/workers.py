"""Worker profiles and records: identity shared by every project, attributes per project
(imported from a crowd platform's CSV into one project, updated by that project's review
outcomes), and block or unblock, always with an audit record."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction

from annotate.models import Project
from annotate.services import worker_leases_release
from config.exceptions import ApplicationError, ConflictError
from config.prepared_sql import PreparedStatement, columns
from config.transactions import create_unless_taken
from qc.models import (
    AuditAction,
    AuditEvent,
    Platform,
    WorkerProfile,
    WorkerRecord,
    WorkerStatus,
)

# Column names as crowd platforms spell them, mapped to our fields (compared lowercased).
CSV_COLUMNS = {
    "external_id": ("external_id", "worker_id", "workerid", "worker id", "id"),
    "approval_rate": (
        "approval_rate",
        "approval rate",
        "lifetime approval rate",
        "hit approval rate",
    ),
    "approved_count": (
        "approved_count",
        "approved",
        "number of hits approved",
        "lifetime approved",
        "approved hits",
    ),
    "locale": ("locale", "country", "location"),
    "is_master": ("is_master", "master", "masters"),
}
_TRUE = {"1", "true", "yes", "y", "t"}
_FALSE = {"0", "false", "no", "n", "f", ""}
MAX_CSV_BYTES = 20 * 1024 * 1024
PROGRESS_EVERY = 200


def audit_record(
    *, worker, action: str, reason: str, actor=None, project=None, details: dict | None = None
) -> AuditEvent:
    return AuditEvent.objects.create(
        project=project,
        actor=actor,
        worker=worker,
        action=action,
        reason=reason,
        details=details or {},
    )


_PROFILE_OF_USER = PreparedStatement(
    "rw_profile_of_user",
    f"SELECT {columns(WorkerProfile, 'p')} FROM {WorkerProfile._meta.db_table} p "  # noqa: S608 - model names only
    "WHERE p.user_id = %(user)s",
    [("user", "bigint")],
)


def worker_profile_for_user(user) -> WorkerProfile:
    """The user's profile: theirs, an imported one (naming no platform) whose external id
    is their username, or a new one with no platform history."""
    found = _PROFILE_OF_USER.instances(WorkerProfile, {"user": user.pk})
    if found:
        return found[0]
    # Each step is one statement, atomic by itself; a concurrent first visit of the same
    # user makes the other's link or insert a no-op, and both read the same row.
    linked = WorkerProfile.objects.filter(
        platform=Platform.UNSPECIFIED, external_id=user.get_username(), user__isnull=True
    ).update(user=user)
    if not linked:
        created = create_unless_taken(WorkerProfile, external_id=user.get_username(), user=user)
        if created is not None:
            return created
    return WorkerProfile.objects.get(user=user)


def worker_profile_for_platform(
    *, platform: str, external_id: str, user, user_is_new: bool = False
) -> WorkerProfile:
    """The profile of a platform's worker id, bound to `user`: an imported one for that
    platform and id is linked, else a new one is made. Raises ConflictError when the
    (platform, id) profile belongs to another account, or `user` has another profile,
    so an id can never be moved onto someone else's account.

    `user_is_new`: `user` was created in the caller's still open transaction, so no
    profile can name it yet: its own profile is not looked up, and linking an imported
    profile needs no savepoint (nothing else can take the account meanwhile)."""
    if platform == Platform.UNSPECIFIED:
        raise ApplicationError("platform: name the platform the id comes from")
    taken = ConflictError(
        f"the {platform} id {external_id!r} belongs to another account",
        extra={"code": "platform_id_taken"},
    )
    if user_is_new:
        linked = _profile_link_imported(platform, external_id, user)
    else:
        own = _profile_or_none(user=user)
        if own is not None:
            if (own.platform, own.external_id) != (platform, external_id):
                raise taken
            return own
        # One statement each, under the (platform, external_id) and user constraints: two
        # first visits of the same worker at once end with one profile, read by both.
        try:
            with transaction.atomic():
                linked = _profile_link_imported(platform, external_id, user)
        except IntegrityError:  # the account got a profile meanwhile: checked below
            linked = True
    # Nothing linked: most likely there is no profile of this id yet, so the insert comes
    # first (a refusal means one exists after all, and it is read below).
    profile = (
        None
        if linked
        else create_unless_taken(
            WorkerProfile, platform=platform, external_id=external_id, user=user
        )
    )
    if profile is None:
        profile = _profile_or_none(platform=platform, external_id=external_id)
    if profile is None or profile.user_id != user.pk:
        raise taken
    return profile


def _profile_link_imported(platform: str, external_id: str, user) -> bool:
    """Binds the unbound profile of (platform, id) to `user`; whether there was one."""
    return bool(
        WorkerProfile.objects.filter(
            platform=platform, external_id=external_id, user__isnull=True
        ).update(user=user)
    )


def _profile_or_none(**unique_lookup) -> WorkerProfile | None:
    """get(), not first(): first() orders the one row by the model's ordering, an ORDER
    BY compiled for nothing."""
    try:
        return WorkerProfile.objects.get(**unique_lookup)
    except WorkerProfile.DoesNotExist:
        return None


@dataclass
class CsvImportSummary:
    created: int = 0
    updated: int = 0
    linked: int = 0
    errors: list[str] = field(default_factory=list)


def _header_map(header: list[str], source: str) -> dict[str, int]:
    lowered = [h.strip().lower() for h in header]
    found = {}
    for name, aliases in CSV_COLUMNS.items():
        for alias in aliases:
            if alias in lowered:
                found[name] = lowered.index(alias)
                break
    if "external_id" not in found:
        raise ApplicationError(
            f"{source}, line 1: no worker id column; expected one of "
            + ", ".join(CSV_COLUMNS["external_id"]),
            extra={"problems": [f"{source}, line 1: no worker id column"]},
        )
    return found


def worker_csv_header_check(*, head: bytes, source: str) -> None:
    """The first line of a worker CSV, checked as it is uploaded: a file that is not UTF-8
    text, or whose header names no worker id column, is refused at once, not by the
    background job a minute later. `head` is the file's start (its first line is enough)."""
    first_line = head.split(b"\n", 1)[0]
    try:
        text = first_line.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ApplicationError(
            f"{source}: not UTF-8 text (byte {error.start})",
            extra={"problems": [f"{source}: not UTF-8 text"]},
        ) from None
    if not text.strip():
        raise ApplicationError(f"{source}, line 1: no header row (the file is empty)")
    try:
        header = next(csv.reader([text]))
    except csv.Error as error:
        raise ApplicationError(f"{source}, line 1: {error}") from None
    _header_map(header, source)


_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%?\s*(?:\((\d+)\s*/\s*(\d+)\))?\s*$")


def _parse_row(cells: list[str], columns: dict[str, int], where: str, errors: list[str]):
    def cell(name):
        index = columns.get(name)
        return cells[index].strip() if index is not None and index < len(cells) else ""

    external_id = cell("external_id")
    if not external_id:
        errors.append(f"{where}, field external_id: empty worker id")
        return None
    if len(external_id) > 200:
        errors.append(f"{where}, field external_id: longer than 200 characters")
        return None
    row = {"external_id": external_id}
    judged = None
    raw_rate = cell("approval_rate")
    if raw_rate:
        match = _RATE.match(raw_rate)
        if not match or not 0 <= float(match.group(1)) <= 100:
            errors.append(
                f"{where}, field approval_rate: {raw_rate!r} is not a percentage between 0 and 100"
            )
        else:
            row["approval_rate"] = float(match.group(1))
            if match.group(3):
                row["approved_count"], judged = int(match.group(2)), int(match.group(3))
    raw_count = cell("approved_count")
    if raw_count:
        if not raw_count.replace(",", "").isdigit():
            errors.append(
                f"{where}, field approved_count: {raw_count!r} is not a non-negative integer"
            )
        else:
            row["approved_count"] = int(raw_count.replace(",", ""))
    if "approved_count" in row:
        rate = row.get("approval_rate")
        if judged is None:
            judged = round(row["approved_count"] * 100 / rate) if rate else row["approved_count"]
        row["judged_count"] = max(judged, row["approved_count"])
    locale = cell("locale")
    if len(locale) > 16:
        errors.append(f"{where}, field locale: {locale!r} is longer than 16 characters")
    elif locale:
        row["locale"] = locale.upper()
    if "is_master" in columns:
        raw = cell("is_master").lower()
        if raw in _TRUE:
            row["is_master"] = True
        elif raw in _FALSE:
            row["is_master"] = False
        else:
            errors.append(f"{where}, field is_master: {raw!r} is not yes/no or true/false")
    return row


def worker_profiles_import_csv(
    *,
    project: Project,
    acting_user,
    data: bytes,
    source: str = "workers.csv",
    platform: str = Platform.UNSPECIFIED,
    progress: Callable[[str, int, int], None] | None = None,
) -> CsvImportSummary:
    """Import a crowd platform's CSV export into `project`: the rows' attributes become
    this project's records of those workers, which only its own rules read. Profiles
    (identity) are made for ids seen for the first time. Every row is checked first; one
    bad row rejects the whole file and nothing is written. The import is audited.

    With a platform named, the rows are that platform's ids: they belong to the profiles
    that study-link accounts of that platform have, or wait for those accounts.

    `progress(phase, done, total)` hears of the rows checked, then of the rows written,
    every PROGRESS_EVERY rows."""
    if platform not in Platform.values:
        raise ApplicationError(
            f"platform: {platform!r} is not one of {', '.join(v or '(none)' for v in Platform.values)}"
        )
    if len(data) > MAX_CSV_BYTES:
        raise ApplicationError(f"{source}: larger than {MAX_CSV_BYTES // 1024 // 1024} MB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ApplicationError(
            f"{source}: not UTF-8 text (byte {error.start})",
            extra={"problems": [f"{source}: not UTF-8 text"]},
        ) from None
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        raise ApplicationError(f"{source}: the file is empty") from None
    except csv.Error as error:
        raise ApplicationError(f"{source}, line 1: {error}") from None
    columns = _header_map(header, source)
    summary = CsvImportSummary()
    rows, seen = [], {}
    lines = max(text.count("\n") - 1, 0)
    try:
        for checked, cells in enumerate(reader, start=1):
            if progress and checked % PROGRESS_EVERY == 0:
                progress("checking", checked, max(lines, checked))
            where = f"{source}, line {reader.line_num}"
            if not any(c.strip() for c in cells):
                continue
            row = _parse_row(cells, columns, where, summary.errors)
            if row is None:
                continue
            if row["external_id"] in seen:
                summary.errors.append(
                    f"{where}, field external_id: {row['external_id']!r} already on line "
                    f"{seen[row['external_id']]}"
                )
                continue
            seen[row["external_id"]] = reader.line_num
            rows.append(row)
    except csv.Error as error:
        summary.errors.append(f"{source}, line {reader.line_num}: {error}")
    if summary.errors:
        raise ApplicationError(
            f"{source}: {len(summary.errors)} problem(s); nothing was imported. "
            + summary.errors[0],
            extra={"problems": summary.errors},
        )
    from django.contrib.auth import get_user_model

    # Only ids that name no platform are usernames; a platform's ids belong to the
    # accounts its study links make.
    users = (
        {
            u.username: u
            for u in get_user_model().objects.filter(username__in=[r["external_id"] for r in rows])
        }
        if platform == Platform.UNSPECIFIED
        else {}
    )
    with transaction.atomic():
        profiles = {
            p.external_id: p
            for p in WorkerProfile.objects.select_for_update().filter(
                platform=platform, external_id__in=seen
            )
        }
        records = {
            r.profile_id: r
            for r in WorkerRecord.objects.select_for_update().filter(
                project=project, profile__in=profiles.values()
            )
        }
        for written, row in enumerate(rows):
            if progress and written % PROGRESS_EVERY == 0:
                progress("writing", written, len(rows))
            external_id = row.pop("external_id")
            profile = profiles.get(external_id)
            if profile is None:
                # A study-link arrival may make the same (platform, id) meanwhile: then it
                # is that profile the row belongs to.
                profile = create_unless_taken(
                    WorkerProfile, platform=platform, external_id=external_id
                ) or WorkerProfile.objects.get(platform=platform, external_id=external_id)
            user = users.get(external_id)
            if profile.user_id is None and user is not None and not hasattr(user, "worker_profile"):
                profile.user = user
                profile.save(update_fields=["user", "updated_at"])
                summary.linked += 1
            record = records.get(profile.pk)
            if record is None:
                record = create_unless_taken(WorkerRecord, project=project, profile=profile, **row)
                if record is not None:
                    summary.created += 1
                    continue
                # A review verdict made the record meanwhile: the row updates it.
                record = WorkerRecord.objects.select_for_update().get(
                    project=project, profile=profile
                )
            summary.updated += 1
            for name, value in row.items():
                setattr(record, name, value)
            record.save()
        audit_record(
            project=project,
            actor=acting_user,
            worker=None,
            action=AuditAction.IMPORT,
            reason=(
                f"worker attributes from {source} ({platform or 'no platform named'}): "
                f"{len(rows)} rows, {summary.created} new to this project, "
                f"{summary.updated} updated, {summary.linked} linked to accounts"
            ),
        )
    return summary


@transaction.atomic
def worker_verdict_record(*, project: Project, worker, accepted: bool) -> WorkerRecord:
    """Our own review outcome counts like a platform's approval or rejection, in the
    project whose reviewers judged: its reviewers are appointed by its admin, so counting
    it elsewhere would let them move another project's figures."""
    profile = worker_profile_for_user(worker)
    # One INSERT, refused when the record exists (a concurrent verdict made it): both
    # then lock the same row and count in turn.
    create_unless_taken(WorkerRecord, project=project, profile=profile)
    record = WorkerRecord.objects.select_for_update().get(project=project, profile=profile)
    record.judged_count += 1
    record.approved_count += int(accepted)
    record.approval_rate = 100 * record.approved_count / record.judged_count
    record.save(update_fields=["judged_count", "approved_count", "approval_rate", "updated_at"])
    return record


@transaction.atomic
def worker_profile_set_status(*, profile: WorkerProfile, status: str, reason: str, actor):
    """Block or unblock a worker on every project (staff only, from the Django admin)."""
    profile = WorkerProfile.objects.select_for_update().get(pk=profile.pk)
    if profile.status == status:
        return profile
    profile.status = status
    profile.save(update_fields=["status", "updated_at"])
    if profile.user_id and status == WorkerStatus.BLOCKED:
        worker_leases_release(project=None, worker=profile.user)
    if profile.user_id:
        action = AuditAction.BLOCK if status == WorkerStatus.BLOCKED else AuditAction.UNBLOCK
        audit_record(worker=profile.user, action=action, reason=reason, actor=actor)
    return profile
