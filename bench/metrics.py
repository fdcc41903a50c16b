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

Then whole processes, the way a user runs them (interpreter start-up, imports, reading and
writing included; compiled bytecode kept, as an installed package has it), after one
uncounted run of each, --whole-repeat rounds of, in turn:
  - parse: a fresh `python -c` that json.loads every line of the same three files;
  - score: `python -m rationale_metrics score ...` writing its score file;
  - reference: the ERASER reference scorer (`python -m rationale_benchmark.metrics`, same
    flags) when --reference names a folder holding its `rationale_benchmark` package, run
    by --reference-python (it needs torch, which the project's Python does not have).
A child that fails ends the bench with its own error output.
Wall and CPU (user + system) seconds of each, medians of the per-round ratios, and
whether every number the reference wrote is the scorer's to 1e-9.
Targets (docs/benchmarks.md#metrics-scoring): score at most 1.5x parse; reference at least 20x
score.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import random
import resource
import statistics
import subprocess
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


# The fresh process that only parses: what the scorer must read, and nothing else.
PARSE_ONLY = (
    "import json, sys\n"
    "for name in sys.argv[1:]:\n"
    "    with open(name) as handle:\n"
    "        for line in handle:\n"
    "            json.loads(line)\n"
)


def whole_process_commands(
    root: Path, reference: Path | None, reference_python: str = sys.executable
) -> dict[str, tuple[list, dict]]:
    """The command and environment of each whole process compared, by name.

    Every process gets to keep its modules' compiled bytecode (in a folder beside the
    data), as an installed package has it: with PYTHONDONTWRITEBYTECODE set, as it may be
    where the bench runs, each run would compile its modules' sources again.
    """
    python = sys.executable
    flags = ["--data_dir", str(root), "--split", "test", "--results", str(root / "preds.jsonl")]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    ours, theirs = root / "scores_whole.json", root / "scores_reference.json"
    commands = {
        "parse": (
            [python, "-c", PARSE_ONLY, *(str(root / n) for n in INPUT_FILES)],
            env,
        ),
        "score": (
            [python, "-m", "rationale_metrics", "score", *flags, "--score_file", str(ours)],
            env,
        ),
    }
    if reference is not None:
        commands["reference"] = (
            [
                reference_python,
                "-m",
                "rationale_benchmark.metrics",
                *flags,
                "--score_file",
                str(theirs),
            ],
            {**env, "PYTHONPATH": str(reference)},
        )
    return commands


INPUT_FILES = ("docs.jsonl", "test.jsonl", "preds.jsonl")


ERROR_TAIL_CHARS = 4000  # of a failed child's error output, shown with the failure


def run_timed(command: list, env: dict) -> dict:
    """Wall and CPU seconds and peak RSS of one whole process (its standard output
    discarded). A failure raises RuntimeError with the end of the child's error output:
    the reference scorer fails on a missing module, which the bench hid."""
    with tempfile.TemporaryFile() as errors:  # a file, not a pipe: nothing to drain
        start = time.perf_counter()
        process = subprocess.Popen(
            command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=errors
        )
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            errors.seek(0)
            said = errors.read().decode("utf-8", "replace")[-ERROR_TAIL_CHARS:].strip()
            raise RuntimeError(
                f"{' '.join(map(str, command[:4]))} exited with {process.returncode}:\n"
                f"{said or '(no error output)'}"
            )
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,
    }


def numbers_differing(reference, ours, path: str = "", tolerance: float = 1e-9) -> list[str]:
    """Where a number (or other value) the reference wrote is not ours; keys only we
    write (the extensions) are not compared."""
    if isinstance(reference, dict):
        if not isinstance(ours, dict):
            return [path or "/"]
        return [
            where
            for key, value in reference.items()
            for where in (
                numbers_differing(value, ours[key], f"{path}/{key}", tolerance)
                if key in ours
                else [f"{path}/{key} (missing)"]
            )
        ]
    if isinstance(reference, list):
        if not isinstance(ours, list) or len(ours) != len(reference):
            return [path]
        return [
            where
            for i, (a, b) in enumerate(zip(reference, ours, strict=True))
            for where in numbers_differing(a, b, f"{path}[{i}]", tolerance)
        ]
    numeric = (int, float)
    if isinstance(reference, numeric) and isinstance(ours, numeric):
        both_nan = math.isnan(reference) and math.isnan(ours)
        return [] if both_nan or abs(reference - ours) <= tolerance else [path]
    return [] if reference == ours else [path]


def count_numbers(value) -> int:
    if isinstance(value, dict):
        return sum(count_numbers(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_numbers(v) for v in value)
    return int(isinstance(value, (int, float)) and not isinstance(value, bool))


def whole_processes(
    root: Path, reference: Path | None, rounds: int, reference_python: str = sys.executable
) -> dict[str, list[dict]]:
    """`rounds` rounds of every command in turn, so that a slow spell hits all alike, after
    one uncounted run of each (it writes the bytecode caches and reads the files once)."""
    commands = whole_process_commands(root, reference, reference_python)
    for command, env in commands.values():
        run_timed(command, env)
    runs: dict[str, list[dict]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, (command, env) in commands.items():
            runs[name].append(run_timed(command, env))
    return runs


def print_whole_processes(scale: str, root: Path, runs: dict[str, list[dict]]) -> None:
    def median(name: str, figure: str) -> float:
        return statistics.median(r[figure] for r in runs[name])

    def paired(top: str, bottom: str, figure: str) -> list[float]:
        return [a[figure] / b[figure] for a, b in zip(runs[top], runs[bottom], strict=True)]

    for figure in ("wall", "cpu"):
        line = (
            f"{scale:<20} {figure:>4} {median('parse', figure):>8.2f} "
            f"{median('score', figure):>8.2f} "
        )
        ratios = paired("score", "parse", figure)
        line += f"{statistics.median(ratios):>7.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
        if "reference" in runs:
            ratios = paired("reference", "score", figure)
            line += (
                f" {median('reference', figure):>8.2f} "
                f"{statistics.median(ratios):>7.1f}x ({min(ratios):.1f}-{max(ratios):.1f})"
            )
        print(line)
    peaks = {name: max(r["peak_rss_mb"] for r in rs) for name, rs in runs.items()}
    print(f"{'':<20} peak MB " + " ".join(f"{k} {v:.0f}" for k, v in peaks.items()))
    if "reference" in runs:
        theirs = json.loads((root / "scores_reference.json").read_text())
        ours = json.loads((root / "scores_whole.json").read_text())
        differing = numbers_differing(theirs, ours)
        verdict = "identical" if not differing else f"DIFFERENT at {differing[:5]}"
        print(f"{'':<20} numbers: {count_numbers(theirs)} of the reference's, {verdict} (1e-9)")


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
    parser.add_argument(
        "--whole-repeat",
        type=int,
        default=3,
        help="rounds of the whole-process comparison (parse, score, reference in turn)",
    )
    parser.add_argument(
        "--reference",
        type=Path,
        default=os.environ.get("ERASER_REFERENCE_DIR") or None,
        help="a folder holding the ERASER reference scorer's rationale_benchmark package "
        "(default: $ERASER_REFERENCE_DIR); without it the reference is not run",
    )
    parser.add_argument(
        "--reference-python",
        default=os.environ.get("ERASER_REFERENCE_PYTHON") or sys.executable,
        help="the Python that runs the reference scorer, with its dependencies (torch, "
        "scikit-learn...) installed (default: $ERASER_REFERENCE_PYTHON, else this Python)",
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
    whole: dict[str, dict[str, list[dict]]] = {}
    loads: dict[str, tuple[float, float]] = {}  # 1-minute load average before and after
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
            before = os.getloadavg()[0]
            whole[scale] = whole_processes(
                root, args.reference, args.whole_repeat, args.reference_python
            )
            loads[scale] = (before, os.getloadavg()[0])
        print()
        print(
            f"Whole processes, start-up included: medians of {args.whole_repeat} rounds "
            "(ratios: median of the per-round ratios, and their range)"
        )
        header = f"{'scale':<20} {'':>4} {'parse s':>8} {'score s':>8} {'score/parse':>20}"
        if args.reference is None:
            print(header + "   (reference not run: give --reference or $ERASER_REFERENCE_DIR)")
        else:
            print(header + f" {'ref s':>8} {'ref/score':>18}")
        for scale, runs in whole.items():
            print_whole_processes(scale, Path(tmp) / scale, runs)
            before, after = loads[scale]
            print(
                f"{'':<20} load average {before:.2f} before, {after:.2f} after "
                f"({os.cpu_count()} CPUs; CPU seconds are the less sensitive to it)"
            )


if __name__ == "__main__":
    main()
