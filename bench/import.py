"""Import benchmark: raw-text documents into PostgreSQL, against spaCy's bare tokenizer.

    python bench/import.py [--sizes 2000 10000] [--tokens 800]
        [--database-url postgres://postgres@127.0.0.1:5432/rw_bench_import]

Each import runs in a fresh child process on a fresh database so its peak RSS is its own.
Prints tokens/s for the import and for `nlp.tokenizer.pipe` over the same texts (measured in
this run), their ratio (target >= 30 %), and the import's peak memory at each size (memory
should not grow with the number of documents).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import recreate_database, run_child


def vocabulary(rng: random.Random, size: int = 30_000) -> tuple[list[str], list[float]]:
    """Pseudo-words with Zipf-distributed frequencies, like a real text's vocabulary."""
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    words = {
        "".join(rng.choice(letters[: rng.randint(8, 26)]) for _ in range(rng.randint(1, 11)))
        for _ in range(size)
    }
    ordered = sorted(words)
    rng.shuffle(ordered)
    return ordered, [1 / (rank + 1) for rank in range(len(ordered))]


def make_text(rng: random.Random, tokens: int, vocab) -> str:
    words_list, weights = vocab
    sentences, count = [], 0
    while count < tokens:
        length = rng.randint(8, 24)
        words = rng.choices(words_list, weights, k=length)
        words[0] = words[0].capitalize()
        sentence = " ".join(words[:-1]) + ", " + words[-1] + "."
        sentences.append(sentence)
        count += length + 2
    return " ".join(sentences)


def write_corpus(path: Path, docs: int, tokens: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    with open(path, "w") as handle:
        for n in range(docs):
            text = make_text(rng, tokens, vocab)
            handle.write(
                json.dumps({"id": f"d{n}", "text": text, "label": rng.choice(["pos", "neg"])})
                + "\n"
            )


def bare_tokenizer_rate(path: Path) -> tuple[float, int]:
    import spacy

    nlp = spacy.blank("en")
    with open(path) as handle:
        texts = [json.loads(line)["text"] for line in handle]
    start = time.perf_counter()
    count = sum(len(doc) for doc in nlp.tokenizer.pipe(texts, batch_size=256))
    return count / (time.perf_counter() - start), count


def child(path: Path) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    import django

    django.setup()
    from django.core.management import call_command

    from annotate.models import Document, Project
    from annotate.services import dataset_import

    call_command("migrate", verbosity=0)
    project = Project.objects.create(name="bench")
    start = time.perf_counter()
    summary = dataset_import(project=project, path=path)
    seconds = time.perf_counter() - start
    tokens = sum(Document.objects.filter(project=project).values_list("token_count", flat=True))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "seconds": seconds,
                "tokens": tokens,
                "items": summary.items_created,
                "peak_rss_mb": peak_mb,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--tokens", type=int, default=800)
    parser.add_argument(
        "--database-url",
        default=os.environ.get(
            "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/rw_bench_import"
        ),
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return

    print(
        f"{'docs':>7} {'tokens':>10} {'import s':>9} {'import tok/s':>13} {'bare tok/s':>12} "
        f"{'ratio':>6} {'peak RSS MB':>12}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            corpus = Path(tmp) / f"corpus-{size}.jsonl"
            write_corpus(corpus, size, args.tokens)
            bare_rate, _ = bare_tokenizer_rate(corpus)
            recreate_database(args.database_url)
            env = {**os.environ, "DATABASE_URL": args.database_url, "DJANGO_DEBUG": "false"}
            result = run_child(__file__, str(corpus), env=env)
            rate = result["tokens"] / result["seconds"]
            print(
                f"{size:>7} {result['tokens']:>10} {result['seconds']:>9.1f} {rate:>13,.0f} "
                f"{bare_rate:>12,.0f} {rate / bare_rate:>6.0%} {result['peak_rss_mb']:>12.0f}"
            )


if __name__ == "__main__":
    main()
