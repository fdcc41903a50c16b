"""Explainers on a Transformers model: ours against ferret's, speed and agreement.

On a tiny BERT trained on the slice itself (a configuration and a tokenizer trained on the
texts: nothing downloaded), each explainer explains every instance and its faithfulness is
measured (comprehensiveness and sufficiency at k, AOPC bins, Kendall's tau with leave-one-
out). Prints instances per second per explainer for ours and for ferret (run by the Python
of ferret's own virtual environment, as bench/metrics.py runs the reference scorer; skipped
with the reason when it is absent), their ratio (goal: ours >= 5x), and the largest
difference between ferret's metrics of our explanations and ours, for the metrics both
define the same way (comprehensiveness and sufficiency at k, tau leave-one-out).

    python bench/model_explain.py                       # 20 Movies instances, 60 words each
    python bench/model_explain.py --instances 5 --explainers gradient occlusion
    python bench/model_explain.py --ferret-python /work/ferret-venv/bin/python

ferret's environment: python3 -m venv V; V/bin/pip install torch==2.13.0; V/bin/pip install
ferret-xai==0.4.2 'pyarrow<17' (ferret keeps numpy 1, which newer pyarrow refuses at import).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "eraser-reference" / "movies" / "data"
DEMO = ROOT / "annotate" / "demo_data" / "film_reviews.jsonl"
FERRET_PYTHON = "/work/ferret-venv/bin/python"
ALL = [
    "gradient",
    "gradient_x_input",
    "integrated_gradients",
    "attention_last",
    "attention_rollout",
    "occlusion",
    "lime",
    "shap",
]
AOPC_BINS = (0.01, 0.05, 0.1, 0.2, 0.5)


def slice_of(data: Path, split: str, count: int, words: int):
    """(words, label) of `count` instances, each cut to its first `words` tokens."""
    if data.is_dir():
        from rationale_metrics.eraser import read_eraser_dataset
        from rationale_metrics.explain import instance_tokens
        from rationale_metrics.sources import open_dataset_source

        with open_dataset_source(str(data)) as source:
            dataset = read_eraser_dataset(source)
        by_label: dict = {}
        for inst in dataset.splits[split]:
            by_label.setdefault(inst.classification, []).append(inst)
        # Labels taken in turn: the tiny model trains on the slice and needs two classes.
        instances = [i for group in zip(*by_label.values(), strict=False) for i in group][:count]
        return [(instance_tokens(dataset, i)[0][:words], i.classification) for i in instances]
    print(f"{data} not found: the demo's film reviews instead")
    lines = [json.loads(line) for line in DEMO.read_text().splitlines()]
    return [(r["text"].split()[:words], r["label"]) for r in lines][:count]


def run_ours(model, texts, names, *, k, samples, ig_steps):
    import numpy as np

    from rationale_metrics.explain import explain_model_block
    from rationale_metrics.models import ModelInput
    from rationale_metrics.models.faithfulness import model_faithfulness

    inputs = [ModelInput(words=words) for words in texts]
    seconds, measured = {}, {}
    # Warm up (first calls of torch and Captum), outside the timings.
    explain_model_block(
        model, inputs[:1], [np.random.default_rng(0)], explainer="gradient", options={}
    )
    for name in names:
        options = {"samples": samples} if name in ("lime", "shap") else {}
        if name == "integrated_gradients":
            options = {"steps": ig_steps}
        started = time.perf_counter()
        _, _, _, scores = explain_model_block(
            model,
            inputs,
            [np.random.default_rng([0, i]) for i in range(len(inputs))],
            explainer=name,
            options=options,
        )
        measured[name] = (
            scores,
            model_faithfulness(model, inputs, scores, k=k, aopc_thresholds=AOPC_BINS),
        )
        seconds[name] = time.perf_counter() - started
    return seconds, measured


def run_ferret(ferret_python, folder, texts, targets, piece_scores, names, *, k, samples, ig_steps):
    with tempfile.TemporaryDirectory() as work:
        job, answer = Path(work) / "job.json", Path(work) / "answer.json"
        job.write_text(
            json.dumps(
                {
                    "model": str(folder),
                    "texts": [" ".join(words) for words in texts],
                    "targets": targets,
                    "our_piece_scores": piece_scores,
                    "explainers": names,
                    "k": k,
                    "samples": samples,
                    "ig_steps": ig_steps,
                }
            )
        )
        done = subprocess.run(
            [ferret_python, str(ROOT / "bench" / "ferret_runner.py"), str(job), str(answer)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            print(f"ferret failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
            return None
        return json.loads(answer.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--split", default="val")
    parser.add_argument("--instances", type=int, default=20)
    parser.add_argument("--words", type=int, default=60, help="first N tokens of each instance")
    parser.add_argument("--explainers", nargs="+", default=ALL, choices=ALL)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--samples", type=int, default=100, help="LIME and SHAP samples")
    parser.add_argument("--ig-steps", type=int, default=20)
    parser.add_argument("--ferret-python", default=FERRET_PYTHON)
    parser.add_argument("--no-ferret", action="store_true")
    parser.add_argument("--threads", type=int, default=1, help="torch threads, ours and ferret's")
    args = parser.parse_args()

    import os

    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import numpy as np
    import torch

    from rationale_metrics.models import (
        ModelInput,
        load_classifier,
        torch_available,
        train_tiny_model,
    )
    from rationale_metrics.models.explainers import gradient_x_input_pieces, words_of_pieces

    if not torch_available():
        print("skipped: the models extra (torch, transformers, captum) is not installed")
        return 0
    torch.set_num_threads(args.threads)
    rows = slice_of(args.data, args.split, args.instances, args.words)
    texts = [[w.lower() for w in words] for words, _ in rows]
    labels = [label for _, label in rows]
    with tempfile.TemporaryDirectory() as work:
        started = time.perf_counter()
        # A vocabulary large enough that every word is one piece: ferret scores pieces, we
        # score words, and the shared metrics are then defined on the same units.
        folder = train_tiny_model(texts, labels, Path(work) / "tiny", epochs=3, vocab_size=30000)
        print(
            f"tiny model trained on {len(texts)} instances in {time.perf_counter() - started:.1f} s"
        )
        model = load_classifier(folder, device="cpu")
        seconds, _ = run_ours(
            model, texts, args.explainers, k=args.k, samples=args.samples, ig_steps=args.ig_steps
        )
        encoded = [model.encode(ModelInput(words=w)) for w in texts]
        targets = [
            int(np.argmax(p[0]))
            for p in model.probabilities(encoded, [np.ones((1, e.n_words), bool) for e in encoded])
        ]
        pieces = gradient_x_input_pieces(model, encoded, targets)
        one_piece = [e.n_words == len(e.ids) - 2 for e in encoded]
        ferret = None
        if args.no_ferret:
            print("ferret: skipped (--no-ferret)")
        elif not Path(args.ferret_python).exists():
            print(f"ferret: skipped ({args.ferret_python} not found: see this script's docstring)")
        else:
            ferret = run_ferret(
                args.ferret_python,
                folder,
                texts,
                targets,
                [p[1:-1].tolist() for p in pieces],
                args.explainers,
                k=args.k,
                samples=args.samples,
                ig_steps=args.ig_steps,
            )
    n = len(texts)
    print(
        f"\n{n} instances of {args.words} words at most, k={args.k}, {args.samples} LIME/SHAP samples, "
        f"{args.ig_steps} IG steps, {args.threads} torch thread(s); explain + faithfulness"
    )
    print(f"{'explainer':22s} {'ours inst/s':>12s} {'ferret inst/s':>14s} {'ratio':>7s}")
    for name in args.explainers:
        ours = n / seconds[name]
        theirs = ferret["seconds"].get(name) if ferret else None
        if theirs:
            print(f"{name:22s} {ours:12.2f} {n / theirs:14.2f} {theirs / seconds[name]:6.1f}x")
        else:
            print(f"{name:22s} {ours:12.2f} {'-':>14s} {'-':>7s}")
    if ferret:
        from rationale_metrics.models.faithfulness import model_faithfulness

        word_scores = [words_of_pieces(p, e) for p, e in zip(pieces, encoded, strict=True)]
        # ferret ranks every leave-one-out drop as it comes; ours counts drops within
        # LOO_TIE as ties (rationale_metrics/README.md). Compared on ferret's definition,
        # and the difference our tie rule makes is printed beside it.
        from rationale_metrics.models.faithfulness import LOO_TIE

        inputs = [ModelInput(words=w) for w in texts]
        ours_at_k, ours_with_ties = (
            model_faithfulness(
                model, inputs, word_scores, k=args.k, aopc_thresholds=AOPC_BINS, loo_tie=tie
            )
            for tie in (0.0, LOO_TIE)
        )
        largest = {"comprehensiveness": 0.0, "sufficiency": 0.0, "tau_loo": 0.0}
        compared = 0
        for mine, theirs, single in zip(
            ours_at_k, ferret["ours_by_ferret"], one_piece, strict=True
        ):
            if theirs is None or not single:
                continue
            compared += 1
            for metric in largest:
                largest[metric] = max(largest[metric], abs(getattr(mine, metric) - theirs[metric]))
        print(
            f"\nferret's metrics of our gradient x input explanations, {compared} of {n} instances "
            "(those whose every word is one piece):"
        )
        for metric, value in largest.items():
            print(f"  largest difference in {metric}: {value:.3g}")
        tie_effect = max(
            abs(a.tau_loo - b.tau_loo)
            for a, b in zip(ours_at_k, ours_with_ties, strict=True)
            if not (np.isnan(a.tau_loo) and np.isnan(b.tau_loo))
        )
        print(
            "  (tau_loo on ferret's definition; our default counts drops within 1e-6 as "
            f"ties, which moved tau by at most {tie_effect:.3g} here)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
