"""The datasheet inside every export: how the data was made, in JSON and Markdown."""

from __future__ import annotations

import platform
import statistics

import numpy as np
import spacy
from django.db.models import Count

import rationale_metrics
from annotate.models import Document, InstructionVariant, Project
from annotate.selectors import perturbation_progress
from annotate.variant_presets import variant_display_text
from qc.cohorts import NO_RECORD
from qc.rule_bands import band_text
from qc.selectors import quality_summary, worker_cohorts


def _quartiles(values: list[int]) -> dict | None:
    if not values:
        return None
    if len(values) == 1:
        return {"median": values[0], "q1": values[0], "q3": values[0], "n": 1}
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return {"median": median, "q1": q1, "q3": q3, "n": len(values)}


def _workers_per_cohort(project: Project, stats) -> dict:
    """Distinct exported workers per qualification cohort and variant."""
    worker_ids = {w for workers in stats.tally.workers_per_variant.values() for w in workers}
    cohorts = worker_cohorts(project=project, worker_ids=worker_ids)
    table: dict[str, dict[str, int]] = {}
    for variant, workers in sorted(stats.tally.workers_per_variant.items()):
        for worker in workers:
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


def datasheet_build(*, project: Project, params, stats) -> dict:
    quality = quality_summary(project=project)
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
            "intra_variant_kappa": float(np.mean(values)) if values else None,
            "items": len(values),
            "excluded_pairs": stats.tally.kappa_excluded.get(name, 0),
        }
        for name, values in sorted(stats.tally.kappa_per_variant.items())
    }
    return {
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
        "processing": {
            "tokenizers": tokenizers,
            "spacy_version": spacy.__version__,
            "split_procedure": (
                "imported splits kept"
                if params.splits == "keep"
                else f"new splits by ratios {list(params.ratios)} with seed {params.seed}, items sharing a document kept together"
            ),
            "export_parameters": params.as_dict(),
        },
        "platform": {
            "name": "Rationale Workbench",
            "version": rationale_metrics.__version__,
            "python": platform.python_version(),
        },
    }


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
    parts += ["", *_perturbations_markdown(sheet["perturbations"])]
    p = sheet["processing"]
    parts += [
        "",
        "## Processing",
        f"- tokenizers: {', '.join(t['tokenizer'] + ' (' + str(t['documents']) + ' documents)' for t in p['tokenizers'])}",
        f"- spaCy {p['spacy_version']}; splits: {p['split_procedure']}",
        f"- export parameters: `{p['export_parameters']}`",
        f"- platform: {sheet['platform']['name']} {sheet['platform']['version']} (Python {sheet['platform']['python']})",
        "",
    ]
    return "\n".join(parts)


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
