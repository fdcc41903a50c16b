"""Metrics benchmark: full scoring time and peak memory vs merely parsing the same files.

    python bench/metrics.py [--scales esnli evidence_inference]

Generates an ERASER dataset and a complete predictions file (hard, soft token and soft
sentence rationales, classification, comprehensiveness, sufficiency, thresholded scores)
at two scales, then in fresh child processes (so peak RSS is their own):
  - parse: json.loads of every line of docs.jsonl, the split and the predictions;
  - score: rationale_metrics reading, validating and scoring everything.
Each is run --repeat times, alternating, and the medians are compared: single runs of
either vary by a quarter on this kind of machine. Peak memory is the largest seen.
Targets: score within 3x of parse; under 500 MB peak at the second scale.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import run_child

SCALES = {
    # name: (instances, documents per instance, tokens per document, sentences per document)
    "esnli": (9807, 2, 16, 1),
    "evidence_inference": (959, 1, 4761, 156),
    # For the smoke run (bench/smoke.py): every step, at no size worth timing.
    "tiny": (50, 1, 200, 10),
}
LABELS = ["entailment", "contradiction", "neutral"]
THRESHOLDS = [0.01, 0.05, 0.1, 0.2, 0.5]


def _document(rng: random.Random, tokens: int, sentences: int) -> str:
    words = [f"w{rng.randint(0, 5000)}" for _ in range(tokens)]
    bounds = sorted(rng.sample(range(1, tokens), sentences - 1)) if sentences > 1 else []
    cuts = [0, *bounds, tokens]
    return "\n".join(" ".join(words[a:b]) for a, b in itertools.pairwise(cuts))


def _probs(rng: random.Random) -> dict:
    raw = [rng.random() + 1e-3 for _ in LABELS]
    total = sum(raw)
    return {label: value / total for label, value in zip(LABELS, raw, strict=True)}


def generate(root: Path, scale: str, seed: int = 3) -> None:
    n_instances, n_docs, n_tokens, n_sentences = SCALES[scale]
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    with (
        open(root / "docs.jsonl", "w") as docs,
        open(root / "test.jsonl", "w") as split,
        open(root / "preds.jsonl", "w") as preds,
    ):
        for i in range(n_instances):
            docids, evidences, rationales = [], [], []
            for d in range(n_docs):
                docid = f"doc{i}_{d}"
                text = _document(rng, n_tokens, n_sentences)
                docs.write(json.dumps({"docid": docid, "document": text}) + "\n")
                docids.append(docid)
                start = rng.randint(0, n_tokens - 4)
                end = start + rng.randint(1, min(40, n_tokens - start))
                evidences.append(
                    {
                        "docid": docid,
                        "start_token": start,
                        "end_token": end,
                        "start_sentence": 0,
                        "end_sentence": 1,
                        "text": "x",
                    }
                )
                p_start = rng.randint(0, n_tokens - 4)
                rationales.append(
                    {
                        "docid": docid,
                        "hard_rationale_predictions": [
                            {"start_token": p_start, "end_token": p_start + rng.randint(1, 3)}
                        ],
                        "soft_rationale_predictions": [
                            round(rng.random(), 4) for _ in range(n_tokens)
                        ],
                        "soft_sentence_predictions": [
                            round(rng.random(), 4) for _ in range(n_sentences)
                        ],
                    }
                )
            split.write(
                json.dumps(
                    {
                        "annotation_id": f"i{i}",
                        "classification": rng.choice(LABELS),
                        "docids": docids,
                        "evidences": [evidences],
                        "query": "q",
                        "query_type": None,
                    }
                )
                + "\n"
            )
            full = _probs(rng)
            preds.write(
                json.dumps(
                    {
                        "annotation_id": f"i{i}",
                        "rationales": rationales,
                        "classification": max(full, key=full.get),
                        "classification_scores": full,
                        "comprehensiveness_classification_scores": _probs(rng),
                        "sufficiency_classification_scores": _probs(rng),
                        "thresholded_scores": [
                            {
                                "threshold": t,
                                "comprehensiveness_classification_scores": _probs(rng),
                                "sufficiency_classification_scores": _probs(rng),
                            }
                            for t in THRESHOLDS
                        ],
                    }
                )
                + "\n"
            )
    (root / "train.jsonl").write_text("")
    (root / "val.jsonl").write_text("")


def child(mode: str, root: Path) -> None:
    start = time.perf_counter()
    if mode == "parse":
        count = 0
        for name in ("docs.jsonl", "test.jsonl", "preds.jsonl"):
            with open(root / name) as handle:
                for line in handle:
                    json.loads(line)
                    count += 1
    else:
        from rationale_metrics.cli import main

        dataset_dir = root
        code = main(
            [
                "score",
                "--data_dir",
                str(dataset_dir),
                "--split",
                "test",
                "--results",
                str(root / "preds.jsonl"),
                "--score_file",
                str(root / "scores.json"),
            ]
        )
        assert code == 0
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_rss_mb": peak}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scales", nargs="+", choices=sorted(SCALES), default=["esnli", "evidence_inference"]
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="parse and score runs per scale, interleaved; medians are reported",
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        # The predictions file lives beside the dataset; the reader ignores unknown files.
        child(args.child[0], Path(args.child[1]))
        return
    print(
        f"{'scale':<20} {'parse s':>8} {'parse MB':>9} {'score s':>8} {'score MB':>9} "
        f"{'score/parse':>12} {'range':>11}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for scale in args.scales:
            root = Path(tmp) / scale
            generate(root, scale)
            # Alternate the two so that a slow spell of the machine hits both alike.
            pairs = [
                (run_child(__file__, "parse", str(root)), run_child(__file__, "score", str(root)))
                for _ in range(args.repeat)
            ]
            parse = statistics.median(p["seconds"] for p, _ in pairs)
            score = statistics.median(s["seconds"] for _, s in pairs)
            ratios = [s["seconds"] / p["seconds"] for p, s in pairs]
            print(
                f"{scale:<20} {parse:>8.2f} {max(p['peak_rss_mb'] for p, _ in pairs):>9.0f} "
                f"{score:>8.2f} {max(s['peak_rss_mb'] for _, s in pairs):>9.0f} "
                f"{score / parse:>11.2f}x {min(ratios):>5.2f}-{max(ratios):.2f}x"
            )


if __name__ == "__main__":
    main()
