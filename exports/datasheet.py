"""The datasheet inside every export: how the data was made, in JSON and Markdown."""

from __future__ import annotations

import json
import platform
import re
import shutil
import subprocess

import numpy as np
from django.apps import apps
from django.conf import settings
from django.db.models import Count

import rationale_metrics
from annotate.models import Document, InstructionVariant, Project
from annotate.selectors import perturbation_progress
from annotate.tokenization import spacy_version
from annotate.variant_presets import variant_display_text
from exports.selectors import (
    datasheet_info_get,
    reference_rationale_sources,
    reviewers_who_scored,
)
from qc.cohorts import NO_RECORD
from qc.rule_bands import band_text
from qc.selectors import quality_summary, worker_cohorts

NO_CROWD = "no crowd platform: annotators were invited members"
NOT_STATED = "not stated"


def _quartiles(values) -> dict | None:
    """Quartiles as `statistics.quantiles(values, n=4, method="inclusive")` gives them,
    read off a sorted int64 copy: `statistics` would turn the times of 100,000 items x 3
    annotations back into Python ints (about 11 MB) where the copy takes 2.4 MB."""
    if not len(values):
        return None
    ordered = np.sort(np.asarray(values, dtype=np.int64))
    n = len(ordered)
    if n == 1:
        return {"median": int(ordered[0]), "q1": int(ordered[0]), "q3": int(ordered[0]), "n": 1}
    cuts = []
    for i in (1, 2, 3):  # the "inclusive" method's linear interpolation, in exact integers
        j, delta = divmod(i * (n - 1), 4)
        cuts.append((int(ordered[j]) * (4 - delta) + int(ordered[j + 1]) * delta) / 4)
    q1, median, q3 = cuts
    return {"median": median, "q1": q1, "q3": q3, "n": n}


def _workers_per_cohort(project: Project, stats) -> dict:
    """Distinct exported workers per qualification cohort and variant."""
    worker_ids = {w for workers in stats.tally.workers_per_variant.values() for w in workers}
    cohorts = worker_cohorts(project=project, worker_ids=worker_ids)
    table: dict[str, dict[str, int]] = {}
    for variant, workers in sorted(stats.tally.workers_per_variant.items()):
        for worker in sorted(workers):  # a set's order could differ between runs
            cohort = cohorts.get(worker) or NO_RECORD
            table.setdefault(cohort, {}).setdefault(variant, 0)
            table[cohort][variant] += 1
    return table


def _perturbations(project: Project, stats) -> dict:
    """The perturbation step: the types, the exported perturbed instances per type, and
    the whole project's check figures (a perturbation with several types counts in each)."""
    progress = perturbation_progress(project=project)
    return {
        "link_fields": "perturbed instances carry perturbation_of (the original's "
        "annotation_id) and perturbation_types",
        "exported_perturbed_instances": stats.perturbed_instances,
        "exported_per_type": dict(sorted(stats.perturbed_per_type.items())),
        "types": [
            {
                "key": row["key"],
                "name": row["name"],
                "builtin": row["builtin"],
                "description": row["description"],
                "pending": row["pending"],
                "accepted": row["accepted"],
                "rejected": row["rejected"],
            }
            for row in progress["types"]
        ],
        "check": progress["check"],
        "quotas": {
            "accepted_per_type": project.perturbations_per_type,
            "accepted_per_original": project.perturbations_per_original,
            "originals": progress["originals"]["total"],
            "originals_below_quota": progress["originals"]["below_quota"],
        },
    }


def software_version() -> dict:
    """The software that made the export: the package version and, from a git checkout,
    its commit. Without git (an installed package, a container) the version alone."""
    commit = None
    git = shutil.which("git")
    if git:
        try:
            done = subprocess.run(  # noqa: S603 - a fixed command, no input from outside
                [git, "rev-parse", "HEAD"],
                cwd=settings.BASE_DIR,
                capture_output=True,
                text=True,
                timeout=5,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            done = None
        if done is not None and re.fullmatch(r"[0-9a-f]{40}", done.stdout.strip()):
            commit = done.stdout.strip()
    return {
        "name": "Rationale Workbench",
        "version": rationale_metrics.__version__,
        "git_commit": commit,
        "python": platform.python_version(),
    }


def _crowd_selectors():
    """`crowd.selectors`, or None without the crowd app: exports read the crowd study
    when there is one and must work without it, so it is imported here, not at the top."""
    if not apps.is_installed("crowd"):
        return None
    try:
        from crowd import selectors
    except ImportError:
        return None
    needed = ("study_link_list", "crowd_datasheet_summary")
    return selectors if all(hasattr(selectors, name) for name in needed) else None


def crowd_facts(*, project: Project) -> dict | None:
    """The project's crowd study for the datasheet: platform, payment, and each study link
    with its consent text, read through crowd.selectors; None when it has no study link."""
    selectors = _crowd_selectors()
    if selectors is None:
        return None
    links = list(selectors.study_link_list(project=project))
    if not links:
        return None
    summary = selectors.crowd_datasheet_summary(project=project)
    pay_rows = summary.get("links") or []
    # The summary lists the links as study_link_list does; by name should that ever differ.
    if [row.get("name") for row in pay_rows] == [link.name for link in links]:
        pays = pay_rows
    else:
        by_name = {row.get("name"): row for row in pay_rows}
        pays = [by_name.get(link.name) for link in links]
    return {
        "platform": summary.get("crowd_source")
        or ", ".join(sorted({str(link.platform) for link in links})),
        "payment": summary.get("payment") or None,
        "platforms": summary.get("platforms") or [],
        "hourly_pay_measure": summary.get("hourly_pay_measure"),
        "links": [
            {
                "name": link.name,
                "platform": str(link.platform),
                "key": link.key,
                "variant": link.variant.name if link.variant_id else None,
                "active": link.active,
                "created_at": link.created_at,
                "description": link.description,
                "consent_text": link.consent_text,
                "pay": pay,
            }
            for link, pay in zip(links, pays, strict=True)
        ],
    }


def _worker_qualification_text(quality: dict, info) -> str:
    """Table 6's worker-qualification cell: the rules, the test, the manual selection, and
    who the annotators were when the admins said so."""
    q = quality["qualification"]
    test = q["test"]
    parts = [_qualification_rules_text(q["rules"])]
    parts.append(
        f"qualification test on {test['gold_items']} gold item(s), pass at mean token F1 "
        f"≥ {test['pass_mark_token_f1']}"
        if test["enabled"]
        else "no qualification test"
    )
    parts.append(f"manual selection by an admin: {'yes' if q['manual_selection'] else 'no'}")
    if info.annotator_background:
        parts.append(f"annotators: {info.annotator_background}")
    if info.annotator_languages:
        parts.append(f"languages: {', '.join(info.annotator_languages)}")
    return "; ".join(parts)


def _json_safe(value):
    """The sheet as plain JSON (dates as ISO text, amounts as text), as stored on the export."""
    return json.loads(
        json.dumps(value, default=lambda v: v.isoformat() if hasattr(v, "isoformat") else str(v))
    )


def datasheet_build(*, project: Project, params, stats) -> dict:
    quality = quality_summary(project=project)
    info = datasheet_info_get(project=project)
    crowd = crowd_facts(project=project)
    variants = [
        {
            "name": v.name,
            "version": v.version,
            "granularity": v.granularity,
            "active": v.active,
            # As annotators saw it: with the multi-set sentence when the option is on.
            "text": variant_display_text(v.text, multi_set=project.multi_set_mode),
            "examples": v.examples,
            "workers": len(stats.tally.workers_per_variant.get(v.name, ())),
            # Model suggestions are an instruction factor: which run's top k it showed, and
            # how many exported annotations of the variant's name were made with them.
            "suggestions": {"run": v.suggestions["run"], "k": v.suggestions["k"]}
            if v.suggestions
            else None,
            "annotations_with_suggestions": stats.tally.with_suggestions.get(v.name, 0),
            "suggested_tokens_accepted": stats.tally.suggestions_accepted.get(v.name, 0),
        }
        for v in InstructionVariant.objects.filter(project=project).order_by("name", "version")
    ]
    tokenizers = list(
        Document.objects.filter(project=project)
        .values("tokenizer")
        .annotate(documents=Count("pk"))
        .order_by("tokenizer")
    )
    agreement = {
        name: {
            "intra_variant_kappa": float(np.mean(values)) if len(values) else None,
            "items": len(values),
            "excluded_pairs": stats.tally.kappa_excluded.get(name, 0),
        }
        for name, values in sorted(stats.tally.kappa_per_variant.items())
    }
    exported_workers = {w for ids in stats.tally.workers_per_variant.values() for w in ids}
    sheet = {
        "dataset": {
            "project": project.name,
            "description": project.description,
            "task_type": project.task_type,
            "labels": project.labels,
            "language": project.language,
            "instances_per_split": stats.instances,
            "documents": stats.documents,
        },
        "instructions": variants,
        "workers": {
            "qualification": quality["qualification"],
            "per_cohort_and_variant": _workers_per_cohort(project, stats),
            "per_variant": {
                name: len(ids) for name, ids in sorted(stats.tally.workers_per_variant.items())
            },
            "allocation": "between-subjects, permuted blocks of the active variants in "
            "order of arrival"
            if not project.allow_variant_mixing
            else "variants mixed per worker",
            "allocation_seed": project.allocation_seed,
        },
        "annotation": {
            "annotators_per_item_target": project.annotators_per_item,
            "annotations": stats.tally.annotations,
            "annotations_per_item": {
                str(k): v for k, v in sorted(stats.tally.annotations_per_item.items())
            },
            "minimum_highlight_tokens": project.min_highlight,
            "multi_set_mode": project.multi_set_mode,
            "time_spent_ms": _quartiles(stats.tally.time_spent_ms),
            "items_with_empty_evidence": stats.empty_evidence_items,
        },
        "review": {
            "reviewers_per_annotation": project.reviewers_per_annotation,
            "thresholds": {
                "sufficiency": project.sufficiency_threshold,
                "compactness": project.compactness_threshold,
                "comprehensiveness": project.comprehensiveness_threshold,
            },
            "max_rounds": project.max_rounds,
            "rounds_and_discards": quality["review"],
        },
        "quality_flags": {
            "thresholds": quality["flag_thresholds"],
            "exported_annotations_flagged": dict(sorted(stats.tally.flags.items())),
        },
        "agreement": {
            "measure": "token-level Cohen's kappa, pairs within a variant, mean over items",
            "per_variant": agreement,
        },
        "perturbations": _perturbations(project, stats),
        "curation": _curation(params, stats),
        "processing": {
            "tokenizers": tokenizers,
            "spacy_version": spacy_version(),
            "split_procedure": (
                "imported splits kept"
                if params.splits == "keep"
                else f"new splits by ratios {list(params.ratios)} with seed {params.seed}, items sharing a document kept together"
            ),
            "export_parameters": params.as_dict(),
        },
        "collection_summary": {
            "crowd_platform": crowd["platform"] if crowd else NO_CROWD,
            "worker_qualification": _worker_qualification_text(quality, info),
            "payment": (crowd or {}).get("payment") or info.compensation or NOT_STATED,
            "detailed_instructions": (
                f"yes: {len(variants)} instruction variant(s), verbatim with their examples, "
                "under Instructions"
                if variants
                else "no instruction variants were defined"
            ),
        },
        "annotators": {
            "background": info.annotator_background or NOT_STATED,
            "languages": info.annotator_languages,
            "training": info.annotator_training or NOT_STATED,
            "compensation": info.compensation or NOT_STATED,
            "annotators_in_export": len(exported_workers),
            "senior_reviewers_who_scored": reviewers_who_scored(project=project),
        },
        "crowd": crowd
        or {
            "platform": None,
            "note": NO_CROWD,
            "payment": None,
            "links": [],
        },
        "licence": {
            "licence": info.licence or NOT_STATED,
            "terms_of_use": info.terms_of_use or NOT_STATED,
        },
        "reference_rationales": reference_rationale_sources(project=project),
        "platform": software_version(),
    }
    return _json_safe(sheet)


def _curation(params, stats) -> dict:
    """How many exported items have a curated gold, by hand and by rule, how many the
    curated aggregation left out, and the exported annotations against the curated gold
    per annotator (numbered, in the order of their accounts: a datasheet names no one) and
    per variant."""
    summary = stats.gold.summary()
    numbers = {
        worker: f"annotator {n}"
        for n, worker in enumerate(sorted(summary["annotators"], key=int), start=1)
    }
    return {
        "aggregation_is_curated": params.aggregation == "curated",
        "items_curated_by_hand": stats.curated_by_hand,
        "items_curated_by_rule": stats.curated_by_rule,
        "items_left_out_not_curated": stats.uncurated_left_out,
        "measure": "each exported annotation's token F1 and Cohen's kappa against its item's "
        "curated gold (the union of the gold sets), mean per annotator and per variant; "
        "items without a curated gold do not count",
        "against_curated_gold": {
            "annotators": {numbers[w]: row for w, row in summary["annotators"].items()},
            "variants": summary["variants"],
            "kappa_undefined": summary["kappa_undefined"],
        },
    }


def _curation_markdown(curation: dict) -> list[str]:
    lines = [
        "## Curation",
        f"- items with a curated gold: {curation['items_curated_by_hand']} by hand, "
        f"{curation['items_curated_by_rule']} by rule",
    ]
    if curation["aggregation_is_curated"]:
        lines.append(
            "- evidences: the curated gold sets; chosen items left out because no curator "
            f"curated them: {curation['items_left_out_not_curated']}"
        )
    against = curation["against_curated_gold"]
    if not against["annotators"]:
        return lines
    lines.append(f"- {curation['measure']}")

    def figure(value) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    for group in ("variants", "annotators"):
        lines += [
            "",
            _table(
                [(group[:-1], "token F1", "kappa", "annotations")]
                + [
                    (name, figure(row["f1"]), figure(row["kappa"]), row["n"])
                    for name, row in against[group].items()
                ]
            ),
        ]
    return lines


def _qualification_rules_text(rules: dict) -> str:
    """The attribute rules in words; the approval rate and approved count as bands, so a
    study that recruited one level (say 80-90 %) says so."""
    rate = band_text(rules["min_approval_rate_percent"], rules["max_approval_rate_percent"], "%")
    count = band_text(rules["min_approved_count"], rules["max_approved_count"])
    return (
        f"approval rate {rate}, approved tasks {count}, locales {rules['allowed_locales']}, "
        f"masters only: {'yes' if rules['masters_only'] else 'no'}"
    )


def _table(rows: list[tuple]) -> str:
    lines = ["| " + " | ".join(str(c) for c in rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += [
        "| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in row) + " |"
        for row in rows[1:]
    ]
    return "\n".join(lines)


def datasheet_markdown(sheet: dict) -> str:
    d, a = sheet["dataset"], sheet["annotation"]
    parts = [
        f"# Datasheet: {d['project']}",
        "",
        f"{d['description']}".strip(),
        "",
        *_collection_summary_markdown(sheet["collection_summary"]),
        "",
        "## Task",
        f"- task: {d['task_type']}; language: {d['language']}; labels: {', '.join(d['labels'])}",
        "- instances: "
        + ", ".join(f"{k} {v}" for k, v in d["instances_per_split"].items())
        + f"; documents: {d['documents']}",
        "",
        "## Instructions (verbatim)",
    ]
    for v in sheet["instructions"]:
        parts += [
            f"### {v['name']} (version {v['version']}, {v['granularity']}, {v['workers']} workers)",
            "",
            v["text"],
            "",
        ]
        if v.get("suggestions"):
            parts += [
                f"- model suggestions shown: the top {v['suggestions']['k']} tokens of explainer "
                f"run {v['suggestions']['run']}",
                "",
            ]
        if v.get("annotations_with_suggestions"):
            parts += [
                f"- exported annotations of {v['name']} made with model suggestions: "
                f"{v['annotations_with_suggestions']} "
                f"({v['suggested_tokens_accepted']} suggested token(s) accepted)",
                "",
            ]
        for example in v["examples"]:
            marked = [
                f"[{t}]" if i in set(example["highlighted"]) else t
                for i, t in enumerate(example["tokens"])
            ]
            parts.append(
                f"- example: {' '.join(marked)}"
                + (f" ({example.get('note')})" if example.get("note") else "")
            )
        parts.append("")
    w = sheet["workers"]
    q = w["qualification"]
    rules = q["rules"]
    test = q["test"]
    parts += [
        "## Workers",
        f"- qualification rules: {_qualification_rules_text(rules)}",
        "- qualification test: "
        + (
            f"{test['gold_items']} gold item(s), pass at mean token F1 ≥ {test['pass_mark_token_f1']}, "
            f'{test["max_attempts"]} attempt(s); instructions: "{test["instructions"]}"'
            if test["enabled"]
            else "none"
        ),
        f"- manual selection by an admin: {'yes' if q['manual_selection'] else 'no'}; "
        f"automatic blocking: {'on' if q['automatic_blocking'] else 'off'}",
        f"- workers by standing: {q['workers_by_standing'] or 'none'}",
        f"- allocation: {w['allocation']}, seed {w['allocation_seed']}",
        _table([("variant", "workers"), *w["per_variant"].items()])
        if w["per_variant"]
        else "- no annotations",
        "",
        "Exported workers per qualification cohort and variant:",
        _table(
            [
                ("cohort", "variant", "workers"),
                *(
                    (cohort, variant, n)
                    for cohort, row in w["per_cohort_and_variant"].items()
                    for variant, n in row.items()
                ),
            ]
        )
        if w["per_cohort_and_variant"]
        else "- no annotations",
        "",
        "## Annotation",
        f"- target annotators per item and variant: {a['annotators_per_item_target']}; annotations: {a['annotations']}",
        f"- annotations per item: {a['annotations_per_item']}",
        f"- minimum highlight: {a['minimum_highlight_tokens']} token(s); items with empty evidence: {a['items_with_empty_evidence']}",
        f"- time spent (ms): {a['time_spent_ms']}",
        "",
        "## Review",
        f"- reviewers per annotation: {sheet['review']['reviewers_per_annotation']}; thresholds (mean over reviewers): "
        + ", ".join(f"{k} {v:.3f}" for k, v in sheet["review"]["thresholds"].items())
        + f"; max rounds: {sheet['review']['max_rounds']}",
        f"- reviews: {sheet['review']['rounds_and_discards']['reviews']}; discarded after the last round: "
        f"{sheet['review']['rounds_and_discards']['discarded']}",
        f"- verdicts per round: {sheet['review']['rounds_and_discards']['verdicts_per_round'] or 'none'}",
        f"- automatic flags on the exported annotations: {sheet['quality_flags']['exported_annotations_flagged'] or 'none'}; "
        f"thresholds: {sheet['quality_flags']['thresholds']}",
        "",
        "## Agreement",
        f"- {sheet['agreement']['measure']}",
    ]
    if sheet["agreement"]["per_variant"]:
        parts.append(
            _table(
                [("variant", "kappa", "items", "excluded pairs")]
                + [
                    (
                        name,
                        "n/a"
                        if r["intra_variant_kappa"] is None
                        else f"{r['intra_variant_kappa']:.3f}",
                        r["items"],
                        r["excluded_pairs"],
                    )
                    for name, r in sheet["agreement"]["per_variant"].items()
                ]
            )
        )
    parts += ["", *_annotators_markdown(sheet["annotators"])]
    parts += ["", *_crowd_markdown(sheet["crowd"])]
    parts += ["", *_licence_markdown(sheet["licence"])]
    parts += ["", *_reference_markdown(sheet["reference_rationales"])]
    parts += ["", *_perturbations_markdown(sheet["perturbations"])]
    parts += ["", *_curation_markdown(sheet["curation"])]
    p = sheet["processing"]
    software = sheet["platform"]
    parts += [
        "",
        "## Processing",
        f"- tokenizers: {', '.join(t['tokenizer'] + ' (' + str(t['documents']) + ' documents)' for t in p['tokenizers'])}",
        f"- spaCy {p['spacy_version']}; splits: {p['split_procedure']}",
        f"- export parameters: `{p['export_parameters']}`",
        "",
        "## Software",
        f"- {software['name']} {software['version']}, git commit "
        f"{software['git_commit'] or 'unknown (not exported from a git checkout)'} "
        f"(Python {software['python']})",
        "",
    ]
    return "\n".join(parts)


def _collection_summary_markdown(summary: dict) -> list[str]:
    """The columns the instruction study's Table 6 found missing from published datasets."""
    return [
        "## Collection summary",
        _table(
            [
                ("crowd platform", "worker qualification", "payment", "detailed instructions"),
                (
                    summary["crowd_platform"],
                    summary["worker_qualification"],
                    summary["payment"],
                    summary["detailed_instructions"],
                ),
            ]
        ),
    ]


def _annotators_markdown(annotators: dict) -> list[str]:
    languages = ", ".join(annotators["languages"]) or NOT_STATED
    return [
        "## Annotators",
        f"- background: {annotators['background']}",
        f"- languages: {languages}",
        f"- training: {annotators['training']}",
        f"- compensation outside a crowd platform: {annotators['compensation']}",
        f"- annotators in this export: {annotators['annotators_in_export']}; senior reviewers "
        f"who scored: {annotators['senior_reviewers_who_scored']}",
    ]


def _quoted(text: str) -> list[str]:
    return [f"> {line}" if line else ">" for line in (text or "").splitlines()] or ["> (empty)"]


def _crowd_markdown(crowd: dict) -> list[str]:
    parts = ["## Crowd platform, study links and consent"]
    if not crowd["links"]:
        return [*parts, f"- {crowd['note']}; no study link, no consent text shown by this platform"]
    parts += [f"- platform: {crowd['platform']}", f"- payment: {crowd['payment'] or NOT_STATED}"]
    for link in crowd["links"]:
        parts += [
            "",
            f"### Study link {link['name']} ({link['platform']}, variant "
            f"{link['variant'] or 'allocated'}, {'active' if link['active'] else 'closed'})",
            "",
            "Consent text (verbatim):",
            "",
            *_quoted(link["consent_text"]),
        ]
    return parts


def _licence_markdown(licence: dict) -> list[str]:
    return [
        "## Licence and terms of use",
        f"- licence: {licence['licence']}",
        "- terms of use:",
        "",
        *_quoted(licence["terms_of_use"]),
    ]


def _reference_markdown(sources: dict) -> list[str]:
    parts = [
        "## Reference rationales",
        f"- reference rationale sets in the project: {sources['reference_sets']} on "
        f"{sources['items_with_reference']} item(s)",
    ]
    if sources["imports"]:
        parts += [
            "",
            _table(
                [
                    ("imported file", "format", "finished", "items created", "reference sets"),
                    *(
                        (
                            job["source_name"],
                            job["source_format"],
                            job["finished_at"],
                            job["items_created"],
                            job["reference_sets_created"],
                        )
                        for job in sources["imports"]
                    ),
                ]
            ),
        ]
    else:
        parts.append("- no import job recorded (a command-line import keeps none)")
    return parts


def _perturbations_markdown(figures: dict) -> list[str]:
    check, quotas = figures["check"], figures["quotas"]
    parts = ["## Perturbations"]
    if not figures["exported_perturbed_instances"] and not check["pending"] + check["decided"]:
        return [*parts, "- none"]
    share = check["accepted_unchanged_share"]
    exported = figures["exported_per_type"]
    parts += [
        f"- exported perturbed instances: {figures['exported_perturbed_instances']}; "
        f"{figures['link_fields']}",
        f"- check: {check['decided']} decided, {check['accepted']} accepted "
        f"({check['accepted_unchanged']} unchanged, {check['accepted_edited']} edited by the "
        f"checker), {check['rejected']} rejected, {check['pending']} pending; accepted "
        "unchanged share: " + ("n/a" if share is None else f"{share:.1%}"),
        f"- quotas: {quotas['accepted_per_type']} accepted per type, "
        f"{quotas['accepted_per_original']} per original; originals below quota: "
        f"{quotas['originals_below_quota']} of {quotas['originals']}",
        "",
        _table(
            [
                ("type", "exported", "pending", "accepted", "rejected"),
                *(
                    (
                        t["name"],
                        exported.get(t["key"], 0),
                        t["pending"],
                        t["accepted"],
                        t["rejected"],
                    )
                    for t in figures["types"]
                ),
            ]
        ),
    ]
    return parts
