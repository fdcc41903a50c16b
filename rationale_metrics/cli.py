"""Command line: `python -m rationale_metrics {score,validate,explain,agreement,plausibility,fine-grained}`.

`score` accepts the ERASER reference scorer's flags and writes its JSON keys, plus
extensions under new keys. `fine-grained` scores the fine-grained interpretability
benchmark's own format with its flags. Bad input ends with a readable report and a
non-zero exit code, never a traceback.
"""

from __future__ import annotations

# Each subcommand imports what it runs, in its function: a score does not pay for the
# fine-grained benchmark's modules, nor `--help` for numpy.
import argparse
import json
import os
import sys
from pathlib import Path

from rationale_metrics.choices import (
    COMPARISONS,
    DEFAULT_AOPC_THRESHOLDS,
    DEFAULT_IOU_THRESHOLDS,
    GOLD_CHOICES,
    LANGUAGES,
    SPLITS,
    TASKS,
)
from rationale_metrics.problems import DataValidationError, ProblemList

# Names only: the explainers' modules (numpy, and torch for a model) load when they run.
BASELINE_EXPLAINERS = ("occlusion", "lime", "linear", "random")
MODEL_EXPLAINER_NAMES = (
    "gradient",
    "gradient_x_input",
    "integrated_gradients",
    "attention_last",
    "attention_rollout",
    "occlusion",
    "lime",
    "shap",
)

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


def _load_dataset(data_dir: str):
    from rationale_metrics.eraser import read_eraser_dataset
    from rationale_metrics.sources import open_dataset_source

    try:
        source = open_dataset_source(data_dir)
    except (OSError, ValueError) as exc:
        problems = ProblemList()
        problems.add(data_dir, None, None, str(exc))
        raise DataValidationError(problems) from exc
    with source:
        return read_eraser_dataset(source)


SHOWN = 20  # problems of one kind listed before the rest are counted


def _print_warnings(warnings: ProblemList) -> None:
    for problem in warnings[:SHOWN]:
        print(f"warning: {problem}", file=sys.stderr)
    if len(warnings) > SHOWN:
        print(f"warning: ... and {len(warnings) - SHOWN} more like these", file=sys.stderr)


def _load_predictions(args, dataset):
    from rationale_metrics.predictions import predictions_outside_split, read_predictions

    problems, warnings = ProblemList(), ProblemList()
    predictions = read_predictions(
        args.results,
        dataset=dataset,
        split=args.split,
        aopc_thresholds=list(args.aopc_thresholds),
        strict=args.strict,
        plausibility_only=args.plausibility_only,
        problems=problems,
        warnings=warnings,
    )
    _print_warnings(warnings)
    label = Path(args.results).name
    missing = ProblemList()
    if predictions.classification is not None:
        present = set(predictions.keys)
        for inst in [i for i in dataset.splits[args.split] if i.key not in present][:SHOWN]:
            missing.add(
                label,
                None,
                "annotation_id",
                f"no prediction for {inst.annotation_id!r}: classification needs every instance",
            )
    # Without --strict (which makes them errors in the reader) a line whose id is not in
    # the split is left out of the scores. A misspelt or mistyped id is also the usual
    # reason an instance has no prediction, so these lines are named in a failing report,
    # and in a warning when nothing else is wrong.
    outside = ProblemList()
    if not args.strict:
        outside = predictions_outside_split(predictions, dataset, args.split, label)
    shown = ProblemList(outside[:SHOWN])
    if len(outside) > SHOWN:
        shown.add(label, None, "annotation_id", f"{len(outside) - SHOWN} more ids not in the split")
    if problems or missing:
        problems.extend(shown)
        problems.extend(missing)
    else:
        for problem in shown:
            print(f"warning: {problem}", file=sys.stderr)
    problems.raise_if_any()
    return predictions


def command_score(args) -> int:
    from rationale_metrics.jsonl import collector_paused
    from rationale_metrics.scoring import ScoreOptions, score_predictions

    options = ScoreOptions(
        iou_thresholds=tuple(args.iou_thresholds),
        aopc_thresholds=tuple(args.aopc_thresholds),
        extensions=not args.no_extensions,
    )

    def scores_of_files() -> dict:
        dataset = _load_dataset(args.data_dir)
        predictions = _load_predictions(args, dataset)
        return score_predictions(dataset, args.split, predictions, options)

    # A short run that makes no reference cycles: the collector would only rescan the
    # dataset and predictions it keeps alive (see jsonl.collector_paused). Both are freed
    # when the function returns, before the collector is back.
    with collector_paused():
        scores = scores_of_files()
    text = json.dumps(scores, indent=4, sort_keys=True)
    if args.score_file:
        Path(args.score_file).write_text(text + "\n")
    else:
        print(text)
    return 0


def command_validate(args) -> int:
    from rationale_metrics.jsonl import collector_paused

    with collector_paused():
        dataset = _load_dataset(args.data_dir)
        if args.results:
            predictions = _load_predictions(args, dataset)
            print(f"{args.results}: {len(predictions)} predictions, no problems")
    counts = ", ".join(f"{s}: {len(dataset.splits[s])}" for s in SPLITS)
    print(f"{args.data_dir}: {len(dataset.documents)} documents; {counts}; no problems")
    return 0


def _baselines_installed() -> None:
    """The baseline model needs scikit-learn, which the package alone does not install."""
    import importlib.util

    if importlib.util.find_spec("sklearn") is None:
        raise ValueError(
            "explain needs scikit-learn for its baseline model, which is not installed: "
            "pip install 'rationale-metrics[baselines]'"
        )


def _models_installed() -> None:
    from rationale_metrics.models import torch_available

    if not torch_available():
        raise ValueError(
            "explaining a Transformers model needs the models extra, which is not installed: "
            "pip install 'rationale-metrics[models]'"
        )


def _model_of(args):
    """The checkpoint of `--model`, or None for the bundled baseline."""
    if not args.model:
        if args.device or args.memory_budget_mb is not None:
            raise ValueError("--device and --memory_budget_mb go with --model FOLDER")
        _baselines_installed()
        return None
    _models_installed()
    from rationale_metrics.models import DEFAULT_MEMORY_BUDGET_MB, load_classifier

    return load_classifier(
        args.model,
        device=args.device,
        memory_budget_mb=args.memory_budget_mb or DEFAULT_MEMORY_BUDGET_MB,
    )


def _explainer_options(args, model) -> dict | None:
    given = {
        "steps": args.ig_steps,
        "baseline": args.ig_baseline,
    }
    given = {name: value for name, value in given.items() if value is not None}
    if given and model is None:
        raise ValueError("--ig_steps and --ig_baseline go with --model FOLDER")
    if given and args.explainer != "integrated_gradients":
        raise ValueError("--ig_steps and --ig_baseline go with --explainer integrated_gradients")
    return given or None


def command_explain(args) -> int:
    from rationale_metrics.explain import explain_split

    model = _model_of(args)
    options = _explainer_options(args, model)
    if args.golden_path:
        return _explain_benchmark(args, model, options)
    if not args.data_dir:
        raise ValueError(
            "explain needs --data_dir (an ERASER dataset) or --golden_path with --task and "
            "--language (a fine-grained benchmark gold file)"
        )
    dataset = _load_dataset(args.data_dir)
    count = explain_split(
        dataset,
        split=args.split,
        explainer=args.explainer,
        out_path=Path(args.results),
        train_split=args.train_split,
        model=model,
        k=args.k,
        aopc_thresholds=tuple(args.aopc_thresholds),
        seed=args.seed,
        lime_samples=args.lime_samples,
        options=options,
    )
    print(f"wrote {count} predictions to {args.results}")
    return 0


def _explain_benchmark(args, model, options) -> int:
    from rationale_metrics.benchmark_format import read_benchmark_gold
    from rationale_metrics.explain import explain_benchmark
    from rationale_metrics.fine_grained import resolve_ratios
    from rationale_metrics.jsonl import collector_paused

    if not args.task or not args.language:
        raise ValueError("explain --golden_path needs --task and --language")
    with collector_paused():
        gold = read_benchmark_gold(args.golden_path, args.task, args.language)
    _check_language(gold, args.language, args.golden_path)
    ratios, _ = resolve_ratios(args.ratio, args.task, args.language, gold)
    count = explain_benchmark(
        gold,
        task=args.task,
        explainer=args.explainer,
        out_path=Path(args.results),
        ratios=ratios,
        model=model,
        seed=args.seed,
        lime_samples=args.lime_samples,
        options=options,
    )
    print(f"wrote {count} fine-grained predictions to {args.results}")
    return 0


def command_train_tiny_model(args) -> int:
    _models_installed()
    from rationale_metrics.models import train_tiny_model

    if args.golden_path:
        from rationale_metrics.benchmark_format import read_benchmark_gold
        from rationale_metrics.jsonl import collector_paused

        if not args.task or not args.language:
            raise ValueError("train-tiny-model --golden_path needs --task and --language")
        if args.task == "reading_comprehension":
            raise ValueError("reading comprehension with QA models is not supported yet")
        with collector_paused():
            gold = read_benchmark_gold(args.golden_path, args.task, args.language)
        examples = [i for i in gold if i.is_original and i.label is not None]
        token_lists = [[t for sentence in i.tokens for t in sentence] for i in examples]
        queries = [None] * len(examples)
        labels = [str(i.label) for i in examples]
    elif args.data_dir:
        from rationale_metrics.explain import instance_tokens

        dataset = _load_dataset(args.data_dir)
        examples = [i for i in dataset.splits[args.split] if i.classification is not None]
        token_lists = [instance_tokens(dataset, i)[0] for i in examples]
        queries = [i.query for i in examples]
        labels = [i.classification for i in examples]
    else:
        raise ValueError("train-tiny-model needs --data_dir or --golden_path")
    folder = train_tiny_model(
        token_lists, labels, args.out, queries=queries, seed=args.seed, epochs=args.epochs
    )
    print(f"trained a tiny model on {len(labels)} examples; saved in {folder}")
    return 0


LANGUAGE_NAMES = {"en": "English", "zh": "Chinese"}


def _check_language(gold, language: str, gold_path: str) -> None:
    """Refuse gold written in the other language than `--language` says: its published
    ratio, and so every score, would silently be the other language's."""
    from rationale_metrics.benchmark_format import language_of_tokens

    found, evidence = language_of_tokens(gold)
    if found is not None and found != language:
        raise ValueError(
            f"{gold_path}: the gold tokens are {LANGUAGE_NAMES[found]} ({evidence}), but "
            f"--language {language} was given, which scores at {LANGUAGE_NAMES[language]}'s "
            f"ratio: rerun with --language {found}"
        )


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def _cut_summary(counts: dict, ratios: tuple[float, ...] | None, ratio_source: str) -> str:
    from rationale_metrics.fine_grained import PUBLISHED_RATIOS_SOURCE

    if ratios is None:
        return "  rationales scored as given (--ratio none), none cut"
    origin = {
        "published": f"published: {PUBLISHED_RATIOS_SOURCE}",
        "gold": "the gold file's mean rationale length ratio",
        "given": "given with --ratio",
    }[ratio_source]
    return (
        f"  ratio {' '.join(map(str, ratios))} ({origin}): {counts['cut_to_ratio']} of "
        f"{counts['predictions']} predictions cut to their top ceil(ratio x n) tokens"
    )


def command_fine_grained(args) -> int:
    from rationale_metrics.benchmark_format import read_benchmark
    from rationale_metrics.fine_grained import (
        PUBLISHED_RATIOS_SOURCE,
        FineGrainedOptions,
        resolve_ratios,
        score_fine_grained,
    )
    from rationale_metrics.jsonl import collector_paused

    def scores_of_files() -> tuple[dict, tuple[float, ...] | None, str]:
        gold, predictions = read_benchmark(
            args.golden_path, args.pred_path, args.task, args.language
        )
        _check_language(gold, args.language, args.golden_path)
        ratios, ratio_source = resolve_ratios(args.ratio, args.task, args.language, gold)
        options = FineGrainedOptions(
            ratios=ratios,
            gold_choice=args.gold_choice,
            comparison=args.comparison,
            iou_threshold=args.iou_threshold,
        )
        return score_fine_grained(gold, predictions, options), ratios, ratio_source

    # As in command_score: the files' objects are freed when scores_of_files returns, so
    # the collector, once back, has no pass over them to make.
    with collector_paused():
        scores, ratios, ratio_source = scores_of_files()
    scores["options"] = {
        "task": args.task,
        "language": args.language,
        "ratio": list(ratios) if ratios is not None else None,
        "ratio_source": ratio_source,
        **({"ratio_origin": PUBLISHED_RATIOS_SOURCE} if ratio_source == "published" else {}),
        "gold_choice": args.gold_choice,
        "comparison": args.comparison,
        "iou_threshold": args.iou_threshold,
    }
    counts = scores["counts"]
    summary = "\n".join(
        [
            f"{args.task} ({args.language}): {counts['gold_instances']} gold instances "
            f"({counts['originals']} original, {counts['perturbed']} perturbed), "
            f"{counts['predictions']} predictions, {counts['pairs_scored']} pairs scored",
            _cut_summary(counts, ratios, ratio_source),
            f"  plausibility  token F1 {_percent(scores['plausibility']['token_f1'])}"
            f"   IoU match rate {_percent(scores['plausibility']['iou_match_rate'])}",
            f"  consistency   MAP {_percent(scores['consistency']['map'])}",
            f"  faithfulness  New-P {_percent(scores['faithfulness']['new_p'])}",
            "  (x 100, as the benchmark prints them; the JSON holds fractions)",
        ]
    )
    text = json.dumps(scores, indent=4, sort_keys=True)
    if args.score_file:
        Path(args.score_file).write_text(text + "\n")
        print(summary)
        print(f"wrote {args.score_file}")
    else:
        # stdout stays one JSON document, as with `score`; the summary goes beside it.
        print(summary, file=sys.stderr)
        print(text)
    return 0


def command_agreement(args) -> int:
    from rationale_metrics.agreement import agreement_from_jsonl

    report = agreement_from_jsonl(Path(args.annotations), undefined=args.undefined)
    text = json.dumps(report, indent=2, sort_keys=True)
    if args.out:
        Path(args.out).write_text(text + "\n")
    else:
        print(text)
    return 0


def command_plausibility(args) -> int:
    from rationale_metrics.agreement import plausibility_from_jsonl

    report = plausibility_from_jsonl(
        Path(args.annotations), Path(args.scores), undefined=args.undefined
    )
    text = json.dumps(report, indent=2, sort_keys=True)
    if args.out:
        Path(args.out).write_text(text + "\n")
    else:
        print(text)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rationale-metrics", description="Score explainers against ERASER rationale datasets."
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    sub = parser.add_subparsers(dest="command", required=True)

    def data_flags(p, results_required: bool, data_required: bool = True):
        p.add_argument(
            "--data_dir", required=data_required, help="ERASER dataset directory or .zip"
        )
        p.add_argument("--split", choices=SPLITS, default="test")
        p.add_argument("--results", required=results_required, help="predictions .jsonl")
        p.add_argument(
            "--strict",
            action="store_true",
            help="predictions for ids not in the split, and class probabilities outside "
            "[0, 1] or not summing to 1, are errors (else warnings)",
        )
        p.add_argument(
            "--iou_thresholds", type=float, nargs="+", default=list(DEFAULT_IOU_THRESHOLDS)
        )
        p.add_argument(
            "--aopc_thresholds", type=float, nargs="+", default=list(DEFAULT_AOPC_THRESHOLDS)
        )

    def plausibility_flag(p):
        p.add_argument(
            "--plausibility_only",
            action="store_true",
            help="score the rationales alone, leaving out classification and faithfulness: "
            "for a file that gives a classification without classification_scores, which "
            "is otherwise refused (as the reference scorer refuses it)",
        )

    score = sub.add_parser("score", help="score a predictions file (reference-compatible JSON)")
    data_flags(score, True)
    plausibility_flag(score)
    score.add_argument("--score_file", help="write the scores here (default: stdout)")
    score.add_argument(
        "--no_extensions",
        dest="no_extensions",
        action="store_true",
        help="write only the reference scorer's keys",
    )
    score.set_defaults(run=command_score)

    validate = sub.add_parser("validate", help="check a dataset and optionally a predictions file")
    data_flags(validate, False)
    plausibility_flag(validate)
    validate.set_defaults(run=command_validate)

    def benchmark_flags(p, required: bool):
        p.add_argument("--task", choices=TASKS, required=required)
        p.add_argument("--language", choices=LANGUAGES, required=required)
        p.add_argument(
            "--ratio",
            nargs="+",
            default=["published"],
            help="rationale length ratio: top ceil(ratio x n) tokens of each sentence are kept. "
            "'published' (the benchmark's per-task values, default: the RATIO_DIC of its "
            "generation script, rationale_extraction/generate.sh), 'gold' (mean of the gold "
            "file), 'none' (rationales as given), or one number, or one per sentence",
        )

    explain = sub.add_parser("explain", help="run the bundled baseline model and an explainer")
    data_flags(explain, True, data_required=False)
    explain.add_argument(
        "--golden_path",
        help="explain a fine-grained benchmark gold file instead of an ERASER dataset "
        "(needs --task and --language; writes the benchmark's prediction format)",
    )
    benchmark_flags(explain, required=False)
    explain.add_argument(
        "--explainer",
        choices=sorted(set(BASELINE_EXPLAINERS) | set(MODEL_EXPLAINER_NAMES)),
        required=True,
        help=f"baseline model: {', '.join(BASELINE_EXPLAINERS)}; a Transformers model "
        f"(--model): {', '.join(MODEL_EXPLAINER_NAMES)}",
    )
    explain.add_argument(
        "--model",
        help="a local sequence-classification checkpoint folder (config, weights, tokenizer) "
        "to explain instead of the bundled baseline; needs the models extra",
    )
    explain.add_argument("--device", help="cpu, cuda or cuda:N (default: cuda when present)")
    explain.add_argument(
        "--memory_budget_mb",
        type=int,
        default=None,
        help="forward passes are batched within about this much memory (default 512)",
    )
    explain.add_argument("--ig_steps", type=int, help="integrated gradients' steps (default 50)")
    explain.add_argument(
        "--ig_baseline",
        choices=["zero", "pad", "mask"],
        help="integrated gradients' baseline for the words' pieces (default zero)",
    )
    explain.add_argument("--train_split", choices=SPLITS, default="train")
    explain.add_argument(
        "--k",
        type=int,
        default=None,
        help="tokens per hard rationale (default: mean human rationale length)",
    )
    explain.add_argument("--seed", type=int, default=0)
    explain.add_argument(
        "--lime_samples", type=int, default=300, help="samples of LIME (and of SHAP, for a model)"
    )
    explain.set_defaults(run=command_explain)

    tiny = sub.add_parser(
        "train-tiny-model",
        help="train a tiny BERT classifier on a dataset's split, from a configuration and a "
        "tokenizer trained on that data (nothing downloaded): to try the model explainers",
    )
    tiny.add_argument("--data_dir", help="ERASER dataset directory or .zip")
    tiny.add_argument("--split", choices=SPLITS, default="train")
    tiny.add_argument(
        "--golden_path", help="or a fine-grained benchmark gold file (its originals' labels)"
    )
    benchmark_flags(tiny, required=False)
    tiny.add_argument("--out", required=True, help="the folder to save the checkpoint in")
    tiny.add_argument("--seed", type=int, default=0)
    tiny.add_argument("--epochs", type=int, default=8)
    tiny.set_defaults(run=command_train_tiny_model)

    fine = sub.add_parser(
        "fine-grained",
        help="score predictions in the fine-grained interpretability benchmark's format",
    )
    benchmark_flags(fine, required=True)
    fine.add_argument("--golden_path", required=True, help="gold .jsonl (sent_id, rationales...)")
    fine.add_argument("--pred_path", required=True, help="predictions .jsonl (id, rationale...)")
    fine.add_argument("--score_file", help="write the scores here (default: stdout)")
    fine.add_argument(
        "--gold_choice",
        choices=GOLD_CHOICES,
        default="greedy_union",
        help="gold of an instance with several rationale sets: greedy unions of sets (the "
        "public code, default) or the best single set (the paper's wording)",
    )
    fine.add_argument(
        "--comparison",
        choices=COMPARISONS,
        default="float",
        help="compare F1s as floats like the public code (default) or as exact fractions",
    )
    fine.add_argument("--iou_threshold", type=float, default=0.5)
    fine.set_defaults(run=command_fine_grained)

    agreement = sub.add_parser("agreement", help="token-level agreement between annotators")
    agreement.add_argument(
        "--annotations",
        required=True,
        help="JSONL: {item, annotator, variant?, n_tokens, tokens: [index, ...]}",
    )
    agreement.add_argument(
        "--undefined",
        choices=["exclude", "one"],
        default="exclude",
        help="kappa when both annotations are constant and equal",
    )
    agreement.add_argument("--out", help="write the report here (default: stdout)")
    agreement.set_defaults(run=command_agreement)

    plausibility = sub.add_parser(
        "plausibility",
        help="an explainer's plausibility per instruction variant: its top-k tokens against "
        "each annotation by kappa (k from the annotations), the best per item, mean over items",
    )
    plausibility.add_argument(
        "--annotations",
        required=True,
        help="JSONL as for agreement: {item, annotator, variant?, n_tokens, tokens}",
    )
    plausibility.add_argument(
        "--scores",
        required=True,
        help="JSONL of soft token scores: {item, scores: [...]}, or ERASER prediction lines "
        "(annotation_id, rationales[].soft_rationale_predictions, joined in listed order)",
    )
    plausibility.add_argument(
        "--undefined",
        choices=["exclude", "one"],
        default="exclude",
        help="kappa when the top-k and an annotation are both constant and equal",
    )
    plausibility.add_argument("--out", help="write the report here (default: stdout)")
    plausibility.set_defaults(run=command_plausibility)
    return parser


# OpenBLAS starts a thread per core as numpy is imported: on a 2-core machine that import
# took 60 ms more CPU and 90 ms more wall time than with one thread, for commands whose
# numpy work is elementwise and never calls BLAS. `explain` fits models and `agreement`
# multiplies matrices, which BLAS's threads may speed up.
SINGLE_THREADED_COMMANDS = {"score", "validate", "fine-grained"}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command in SINGLE_THREADED_COMMANDS and "numpy" not in sys.modules:
        # Only read as numpy loads, and never over the user's own setting.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        return args.run(args)
    except DataValidationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (OSError, ValueError) as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:
        if args.debug:
            raise
        print(
            f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for details)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
