"""Fine-grained benchmark scoring: the whole `fine-grained` command vs merely parsing its files.

    python bench/fine_grained.py [--instances 10000] [--repeat 5]

For each task, generates a gold file of --instances lines (half originals, half their
perturbed copies, linked through rel_ids; sentiment with up to three alternative rationale
sets) and a predictions file for every line (the top ceil(ratio x n) tokens per sentence
with their tokens and the three labels, as the benchmark's pipeline writes them). Then,
each in a fresh process, alternating, --repeat times:
  - parse: python's json.loads on every line of both files;
  - score: `python -m rationale_metrics fine-grained` reading, validating, scoring and
    writing its JSON.
Medians of wall time are compared (single runs vary by a quarter on a shared machine);
peak memory is the largest resident set of any run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rationale_metrics.fine_grained import PUBLISHED_RATIOS

WORDS = [
    "the",
    "a",
    "film",
    "plot",
    "actor",
    "good",
    "bad",
    "great",
    "dull",
    "story",
    "was",
    "is",
    "not",
    "very",
    "fun",
    "boring",
]
CHARACTERS = list("地瓜不是红薯一般生吃或者凉拌外形纺锤型的有明显瓣状结构内里肉白色清淡药香味")
# (language, tokens per sentence, sentences)
TASKS = {
    "sentiment": ("en", (8, 40), 1),
    "similarity": ("en", (5, 16), 2),
    "reading_comprehension": ("zh", (60, 240), 1),
}


def published_ratios(task: str) -> tuple[float, ...]:
    """The ratios the scorer cuts at by default, so that predictions written at them are
    scored whole (a copy here once gave Chinese reading comprehension English's ratio)."""
    return PUBLISHED_RATIOS[(task, TASKS[task][0])]


def _tokens(rng: random.Random, language: str, bounds: tuple[int, int]) -> list[str]:
    pool = WORDS if language == "en" else CHARACTERS
    return [rng.choice(pool) for _ in range(rng.randint(*bounds))]


def _gold_line(rng, task, sent_id, kind, rel_ids) -> tuple[dict, list[list[str]]]:
    language, bounds, n_sentences = TASKS[task]
    sentences = [_tokens(rng, language, bounds) for _ in range(n_sentences)]

    def one_set(tokens):
        start = rng.randrange(len(tokens))
        return list(range(start, min(len(tokens), start + rng.randint(1, 6))))

    line: dict = {"sent_id": sent_id}
    if task == "sentiment":
        line["context"] = " ".join(sentences[0])
        line["sent_token"] = sentences[0]
        line["sent_label"] = rng.randint(0, 1)
        line["rationales"] = [one_set(sentences[0]) for _ in range(rng.randint(1, 3))]
    elif task == "similarity":
        line["sentence1"], line["sentence2"] = (" ".join(s) for s in sentences)
        line["text_q_seg"], line["text_t_seg"] = sentences
        line["sent_label"] = rng.randint(0, 1)
        line["rationale_q_idx"], line["rationale_t_idx"] = (one_set(s) for s in sentences)
    else:
        line["title"] = ""
        line["context"] = "".join(sentences[0])
        line["question"] = "".join(sentences[0][:8]) + "吗"
        line["sent_token"] = sentences[0]
        line["sent_label"] = "".join(sentences[0][3:6])
        line["rationales"] = one_set(sentences[0])
    line["sample_type"] = kind
    if kind == "ori":
        line["rel_ids"] = rel_ids
    return line, sentences


def generate(root: Path, task: str, n_instances: int, seed: int = 5) -> tuple[Path, Path]:
    rng = random.Random(seed)
    ratios = published_ratios(task)
    gold_path, pred_path = root / f"{task}.gold.jsonl", root / f"{task}.pred.jsonl"
    with open(gold_path, "w") as gold, open(pred_path, "w") as preds:
        for pair in range(n_instances // 2):
            original, perturbed = 2 * pair, 2 * pair + 1
            for sent_id, kind in ((original, "ori"), (perturbed, "disturb")):
                line, sentences = _gold_line(rng, task, sent_id, kind, [perturbed])
                gold.write(json.dumps(line, ensure_ascii=False) + "\n")
                rationale = []
                for tokens, ratio in zip(sentences, ratios, strict=True):
                    ranking = rng.sample(range(len(tokens)), len(tokens))
                    rationale.append(ranking[: math.ceil(len(tokens) * ratio)])
                label = line["sent_label"]
                other = "" if isinstance(label, str) else 1 - label
                prediction = {
                    "id": sent_id,
                    "pred_label": label,
                    "rationale": rationale,
                    "rationale_token": [
                        [tokens[i] for i in chosen]
                        for tokens, chosen in zip(sentences, rationale, strict=True)
                    ],
                    "rationale_pred": rng.choice([label, other]),
                    "no_rationale_pred": rng.choice([label, other]),
                }
                preds.write(json.dumps(prediction, ensure_ascii=False) + "\n")
    return gold_path, pred_path


PARSE = (
    "import json, sys\n"
    "for name in sys.argv[1:]:\n"
    "    with open(name, encoding='utf-8') as handle:\n"
    "        rows = [json.loads(line) for line in handle]\n"
)


def measured(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak resident MB of one child process."""
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise RuntimeError(f"{command[:4]} exited with {child.returncode}")
    return seconds, usage.ru_maxrss / 1024


def bench_task(root: Path, task: str, n_instances: int, repeat: int) -> dict:
    gold_path, pred_path = generate(root, task, n_instances)
    language = TASKS[task][0]
    parse = [sys.executable, "-c", PARSE, str(gold_path), str(pred_path)]
    score = [sys.executable, "-m", "rationale_metrics", "fine-grained", "--task", task]
    score += ["--language", language, "--golden_path", str(gold_path)]
    score += ["--pred_path", str(pred_path), "--score_file", str(root / f"{task}.scores.json")]
    times: dict[str, list[float]] = {"parse": [], "score": []}
    peaks: dict[str, float] = {"parse": 0.0, "score": 0.0}
    for _ in range(repeat):
        for name, command in (("parse", parse), ("score", score)):
            seconds, peak = measured(command)
            times[name].append(seconds)
            peaks[name] = max(peaks[name], peak)
    parse_s, score_s = (statistics.median(times[k]) for k in ("parse", "score"))
    scores = json.loads((root / f"{task}.scores.json").read_text())
    return {
        "cut": scores["counts"]["cut_to_ratio"],
        "task": task,
        "language": language,
        "instances": n_instances,
        "megabytes": (gold_path.stat().st_size + pred_path.stat().st_size) / 1e6,
        "parse_s": parse_s,
        "score_s": score_s,
        "ratio": score_s / parse_s,
        "parse_peak_mb": peaks["parse"],
        "score_peak_mb": peaks["score"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tasks", nargs="+", choices=list(TASKS), default=list(TASKS))
    args = parser.parse_args()
    print(
        f"{'task':<22} {'lang':<4} {'lines':>6} {'MB':>5} {'parse s':>8} {'score s':>8} "
        f"{'ratio':>6} {'parse MB':>9} {'score MB':>9} {'cut':>4}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for task in args.tasks:
            r = bench_task(Path(tmp), task, args.instances, args.repeat)
            print(
                f"{r['task']:<22} {r['language']:<4} {r['instances']:>6} {r['megabytes']:>5.1f} "
                f"{r['parse_s']:>8.3f} {r['score_s']:>8.3f} {r['ratio']:>5.2f}x "
                f"{r['parse_peak_mb']:>9.0f} {r['score_peak_mb']:>9.0f} {r['cut']:>4}",
                flush=True,
            )
    print(
        f"medians of {args.repeat} alternating runs, each a whole fresh process; "
        "parse = python json.loads of both files, score = the fine-grained command; "
        "cut = predictions the scorer shortened (0: written at its published ratio)"
    )


if __name__ == "__main__":
    main()
