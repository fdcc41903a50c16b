"""Import benchmark: raw-text documents into PostgreSQL, against spaCy's bare tokenizer;
then ERASER and benchmark-format uploads in one step and split over 1 and 2 Celery workers.

    python bench/import.py [--sizes 2000 10000] [--tokens 800]
        [--split-sizes 10000] [--workers 1 2] [--formats eraser benchmark]
        [--database-url postgres://postgres@127.0.0.1:5432/rw_bench_import]
        [--broker redis://127.0.0.1:6379/9]

Each raw-text import runs in a fresh child process on a fresh database so its peak RSS is
its own. Prints tokens/s for the import and for `nlp.tokenizer.pipe` over the same texts
(measured in this run), their ratio (target >= 30 %), and the import's peak memory at each
size (memory should not grow with the number of documents).

Then, for each of --split-sizes: an ERASER zip (that many documents of --tokens tokens in
docs.jsonl, one instance each with 1-3 evidence groups) and a benchmark reading-
comprehension file in Chinese (that many lines, half perturbed copies of the other half;
each question tokenized by spaCy), each imported by `dataset_import` in one step (in this
process), then as an upload job whose chunks (IMPORT_CHUNK_ROWS units) go to 1 and 2
Celery worker processes (`--pool=solo`) on a private queue of --broker. Prints the wall
time of each, the speed-up of 2 workers over 1, and whether the rows written are identical
to the one-step import's (documents, items, links, reference spans, labels; not ids). The
machine is shared: timings are noisy, run it more than once. `--split-sizes` with no value
leaves this part out.
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
import uuid
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


def write_eraser_zip(path: Path, docs: int, tokens: int, seed: int = 3) -> None:
    import zipfile

    rng = random.Random(seed)
    vocab = vocabulary(rng)
    splits: dict[str, list[str]] = {"train": [], "val": [], "test": []}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        lines = []
        for n in range(docs):
            text = make_text(rng, tokens, vocab).replace(". ", ".\n")
            count = len(text.split())
            lines.append(json.dumps({"docid": f"doc{n}", "document": text}))
            groups = []
            for _ in range(rng.randint(1, 3)):
                start = rng.randrange(max(1, count - 5))
                evidence = {"docid": f"doc{n}", "start_token": start, "end_token": start + 3}
                groups.append([{**evidence, "start_sentence": 0, "end_sentence": 1, "text": ""}])
            record = {
                "annotation_id": f"doc{n}",
                "classification": rng.choice(["POS", "NEG"]),
                "docids": None,
                "evidences": groups,
                "query": "What is the sentiment?",
                "query_type": None,
            }
            splits[("train", "val", "test")[n % 3]].append(json.dumps(record, sort_keys=True))
        archive.writestr("data/docs.jsonl", "\n".join(lines) + "\n")
        for split, records in splits.items():
            archive.writestr(f"data/{split}.jsonl", "\n".join(records) + "\n")


def split_uploads(folder: Path, size: int, tokens: int) -> dict[str, tuple[Path, dict]]:
    from bench.fine_grained import generate

    eraser = folder / f"eraser-{size}.zip"
    write_eraser_zip(eraser, size, tokens)
    gold, _ = generate(folder, "reading_comprehension", size)
    benchmark = folder / f"benchmark-{size}.jsonl"
    gold.rename(benchmark)
    return {
        "eraser": (eraser, {"task_type": "classification", "language": "en"}),
        "benchmark": (benchmark, {"task_type": "reading_comprehension", "language": "zh"}),
    }


def rows_sha256(project) -> str:
    import hashlib

    from tests.annotate.test_import_chunks_prepared import project_dump

    return hashlib.sha256(repr(project_dump(project)).encode()).hexdigest()


def split_runs(args, env: dict) -> None:
    """The ERASER and benchmark uploads in one step, then over 1 and 2 workers."""
    from bench.scale_out import start_workers, stop_workers

    os.environ.update(env)
    import django

    django.setup()
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command

    from annotate.models import ImportJob, Project
    from annotate.services import dataset_import
    from annotate.services.imports import import_job_create

    call_command("migrate", verbosity=0)
    print(
        f"\n{'format':>9} {'items':>7} {'one step s':>11} "
        + " ".join(f"{f'{w} worker(s) s':>14}" for w in args.workers)
        + f" {'speed-up':>9} {'same rows':>10}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.split_sizes:
            uploads = split_uploads(Path(tmp), size, args.tokens)
            for kind in args.formats:
                path, fields = uploads[kind]
                project = Project.objects.create(name=f"{kind} one step {size}", **fields)
                start = time.perf_counter()
                dataset_import(project=project, path=path)
                one_step = time.perf_counter() - start
                expected = rows_sha256(project)
                seconds, same, units = [], True, 0
                for count in args.workers:
                    workers = start_workers(count, env, Path(tmp))
                    try:
                        project = Project.objects.create(
                            name=f"{kind} {count} workers {size}", **fields
                        )
                        start = time.perf_counter()
                        job = import_job_create(
                            project=project,
                            acting_user=None,
                            upload=SimpleUploadedFile(path.name, path.read_bytes()),
                        )
                        while (job := ImportJob.objects.get(pk=job.pk)).status in (
                            "pending",
                            "running",
                        ):
                            time.sleep(0.1)
                        seconds.append(time.perf_counter() - start)
                    finally:
                        stop_workers(workers)
                    if job.status != "succeeded":
                        raise SystemExit(f"{kind} import on {count} worker(s): {job.error}")
                    units = job.progress_total
                    same = same and rows_sha256(project) == expected
                speed_up = seconds[0] / seconds[-1] if len(seconds) > 1 else 1.0
                print(
                    f"{kind:>9} {units:>7} {one_step:>11.1f} "
                    + " ".join(f"{s:>14.1f}" for s in seconds)
                    + f" {speed_up:>8.2f}x {'yes' if same else 'NO':>10}",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--tokens", type=int, default=800)
    parser.add_argument("--split-sizes", type=int, nargs="*", default=[10000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--formats", nargs="+", choices=["eraser", "benchmark"], default=["eraser", "benchmark"]
    )
    parser.add_argument(
        "--broker", default=os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/9")
    )
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
    if not args.split_sizes:
        return
    media = tempfile.TemporaryDirectory()
    recreate_database(args.database_url)
    split_runs(
        args,
        {
            **os.environ,
            "DATABASE_URL": args.database_url,
            "DJANGO_DEBUG": "false",
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "DJANGO_MEDIA_ROOT": media.name,
            "CELERY_BROKER_URL": args.broker,
            "CELERY_RESULT_BACKEND": args.broker,
            "CELERY_TASK_ALWAYS_EAGER": "false",
            "CELERY_TASK_DEFAULT_QUEUE": f"rw-bench-import-{uuid.uuid4().hex[:8]}",
            # Uploads of any size the bench makes.
            "IMPORT_MAX_UPLOAD_BYTES": str(1 << 34),
        },
    )


if __name__ == "__main__":
    main()
