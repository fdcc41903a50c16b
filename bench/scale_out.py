"""Scale-out benchmark: an export and an agreement report on 1 and on 2 Celery workers.

    python bench/scale_out.py [--items 100000] [--agreement-items 5000] [--variants 6]
        [--annotators 3] [--export-chunk-items 5000] [--agreement-chunk-items 500]
        [--workers 1 2] [--repeat 1] [--jobs export agreement]
        [--database-url postgres://...] [--broker redis://127.0.0.1:6379/8]
        [--reuse-database]

Fills a fresh PostgreSQL database with bench/export.py's project (items x 3 annotations,
40 tokens each) and an agreement project (tests/qc/agreement_data.py: items x variants x
annotators, workers over three cohorts). Then, for each number of workers, starts that
many Celery worker processes (one task at a time each, `--pool=solo`) on a private queue
of the broker, and times, from the request to the published result, the export (majority
vote, `docs` layout, as a zip) and the agreement report, `--repeat` times alternating.

Prints each run's wall time, per-chunk timings from the workers' task logs (count, sum,
median, max for each task: the chunks, the assemblies; for the agreement report also by
kind of chunk, and its largest chunk against the median), each worker's busy time, the CPU
seconds the workers and this database's PostgreSQL backends spent in the run (read from
/proc; other databases' backends are not counted), the speed-up of 2 workers over 1, and
whether the outputs are identical (the sha256 of the export's data files, the stored
report's sha256). Goal
(docs/benchmarks.md#scaling-out): at least 1.7x with 2 workers and identical output. The machine is
shared with other sessions: run it more than once (`--reuse-database` skips the filling
when the database already holds the projects), and read the load averages it prints.
`--jobs agreement` fills and times the agreement report alone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import ProcessCpuSampler, recreate_database, run_child

AGREEMENT_PROJECT = "bench scale-out agreement"
TASK_DONE = re.compile(r"Task ([\w.]+)\[([0-9a-f-]+)\] succeeded in ([\d.]+)s")
# qc/agreement.py logs each chunk's computing time with its kind and key.
AGREEMENT_CHUNK_DONE = re.compile(
    r"agreement report \d+: (\w+) chunk '([^']*)' computed in ([\d.]+) s"
)


def _django(env: dict) -> None:
    os.environ.update(env)
    import django

    django.setup()


def child_agreement_populate(items: int, variants: int, annotators: int) -> None:
    _django({})
    from django.core.management import call_command
    from django.db import connection

    from tests.qc.agreement_data import agreement_project

    started = time.perf_counter()
    call_command("migrate", verbosity=0)  # when the export's filling has not run it
    agreement_project(name=AGREEMENT_PROJECT, items=items, variants=variants, annotators=annotators)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(json.dumps({"setup_s": time.perf_counter() - started}))


def start_workers(count: int, env: dict, folder: Path) -> list[tuple[subprocess.Popen, Path]]:
    """`count` worker processes on the queue `env` names, each running one task at a time."""
    from config.celery import app

    started = []
    for n in range(count):
        name = f"{env['CELERY_TASK_DEFAULT_QUEUE']}-{n}"
        log = folder / f"{name}.log"
        with open(log, "w") as handle:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "config",
                    "worker",
                    "-Q",
                    env["CELERY_TASK_DEFAULT_QUEUE"],
                    "--pool=solo",
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                    "-n",
                    f"{name}@%h",
                    "--loglevel=INFO",
                ],
                env={**env, "EXPORT_WORK_DIR": str(folder / f"{name}-work")},
                stdout=handle,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
            )
        started.append((process, log))
        deadline = time.monotonic() + 120
        while not app.control.ping(destination=[f"{name}@{os.uname().nodename}"], timeout=1.0):
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"worker {name} did not start:\n{log.read_text()[-3000:]}")
    return started


def stop_workers(started) -> None:
    for process, _ in started:
        process.terminate()
    for process, _ in started:
        process.wait(timeout=60)


def wait_for(read, timeout: float = 3600):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = read()
        if value is not None:
            return value
        time.sleep(0.1)
    raise SystemExit("the job did not finish within the time limit")


def export_content_sha256(export) -> str:
    """The sha256 of the zip's members but its datasheet: the datasheet records the
    checkout's git commit, which other sessions sharing this checkout move while the bench
    runs; the file's own sha256 is printed beside it."""
    import zipfile

    from django.core.files.storage import default_storage

    digest = hashlib.sha256()
    with default_storage.open(export.file_path, "rb") as handle, zipfile.ZipFile(handle) as zipped:
        for info in zipped.infolist():
            if "datasheet" in info.filename:
                continue
            digest.update(info.filename.encode() + b"\0")
            with zipped.open(info) as member:
                for block in iter(lambda: member.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


def run_export(project, user) -> tuple[float, str]:
    from exports.models import Export
    from exports.services import export_start

    started = time.perf_counter()
    export = export_start(
        project=project,
        acting_user=user,
        raw_params={"aggregation": "majority", "layout": "docs"},
    )
    done = wait_for(
        lambda: (
            Export.objects.filter(pk=export.pk).exclude(status__in=["pending", "running"]).first()
        )
    )
    seconds = time.perf_counter() - started
    if done.status != "succeeded":
        raise SystemExit(f"export {done.pk} {done.status}: {done.error}")
    return seconds, f"{export_content_sha256(done)[:16]} (file {done.sha256[:16]})"


def run_agreement(project) -> tuple[float, str]:
    from django.db.models import F, TextField
    from django.db.models.functions import Cast

    from qc.agreement import agreement_report_request
    from qc.models import AgreementReport

    started = time.perf_counter()
    agreement_report_request(project=project)
    done = wait_for(
        lambda: AgreementReport.objects.filter(project=project).exclude(status="running").first()
    )
    seconds = time.perf_counter() - started
    if done.status != "ready":
        raise SystemExit(f"agreement report {done.status}: {done.error}")
    text = (
        AgreementReport.objects.filter(pk=done.pk)
        .annotate(text=Cast(F("data"), output_field=TextField()))
        .values_list("text", flat=True)
        .get()
    )
    return seconds, hashlib.sha256(text.encode()).hexdigest()[:16]


def task_timings(logs: list[Path], offsets: list[int]) -> tuple[dict, list[float], dict]:
    """Seconds of each finished task by name, each worker's busy seconds, and the agreement
    chunks' computing seconds by kind and key, from the lines the workers logged after
    `offsets`."""
    by_task: dict[str, list[float]] = defaultdict(list)
    chunks: dict[tuple[str, str], float] = {}
    busy = []
    for log, offset in zip(logs, offsets, strict=True):
        total = 0.0
        with open(log) as handle:
            handle.seek(offset)
            text = handle.read()
        for match in TASK_DONE.finditer(text):
            by_task[match.group(1).rsplit(".", 1)[-1]].append(float(match.group(3)))
            total += float(match.group(3))
        for match in AGREEMENT_CHUNK_DONE.finditer(text):
            chunks[(match.group(1), match.group(2))] = float(match.group(3))
        busy.append(total)
    return by_task, busy, chunks


def _line(name: str, seconds: list[float], unit: str) -> str:
    return (
        f"      {name:24} {len(seconds):4} {unit}  sum {sum(seconds):7.2f} s  "
        f"median {statistics.median(seconds):6.3f} s  max {max(seconds):6.3f} s"
    )


def print_timings(by_task: dict, busy: list[float], chunks: dict) -> None:
    for task, seconds in sorted(by_task.items()):
        print(_line(task, seconds, "tasks"))
    print("      busy per worker: " + ", ".join(f"{b:.1f} s" for b in busy))
    if not chunks:
        return
    by_kind: dict[str, list[float]] = defaultdict(list)
    for (kind, _), seconds in chunks.items():
        by_kind[kind].append(seconds)
    print("      agreement chunks by kind (computing time, without the task's overhead):")
    for kind, seconds in sorted(by_kind.items()):
        print(_line(f"  {kind}", seconds, "chunks"))
    every = list(chunks.values())
    (kind, key), largest = max(chunks.items(), key=lambda entry: entry[1])
    print(
        f"      largest chunk {kind} {key!r} {largest:.2f} s = "
        f"{largest / statistics.median(every):.1f}x the median, "
        f"{100 * largest / sum(every):.0f}% of the chunks' total"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000, help="export items")
    parser.add_argument("--agreement-items", type=int, default=5000)
    parser.add_argument("--variants", type=int, default=6)
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--export-chunk-items", type=int, default=5000)
    parser.add_argument("--agreement-chunk-items", type=int, default=500)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--jobs",
        nargs="+",
        choices=["export", "agreement"],
        default=["export", "agreement"],
        help="which jobs to fill and time (default both)",
    )
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--database-url",
        default=os.environ.get(
            "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/rw_bench_scale_out"
        ),
    )
    parser.add_argument(
        "--broker", default=os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/8")
    )
    parser.add_argument(
        "--reuse-database",
        action="store_true",
        help="keep the database's projects from an earlier run instead of filling it again",
    )
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_agreement_populate(*(int(v) for v in args.child[1:]))
        return
    media = tempfile.TemporaryDirectory()
    queue = f"rw-scale-out-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "DATABASE_URL": args.database_url,
        "DJANGO_DEBUG": "false",
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DJANGO_MEDIA_ROOT": media.name,
        "CELERY_BROKER_URL": args.broker,
        "CELERY_RESULT_BACKEND": args.broker,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "CELERY_TRACE_LOG_LEVEL": "INFO",  # a line per finished task, with its seconds
        "EXPORT_CHUNK_ITEMS": str(args.export_chunk_items),
        "AGREEMENT_CHUNK_ITEMS": str(args.agreement_chunk_items),
    }
    filled = agreed = {"setup_s": 0.0}
    if not args.reuse_database:
        recreate_database(args.database_url)
        if "export" in args.jobs:
            filled = run_child(str(ROOT / "bench/export.py"), "populate", str(args.items), env=env)
        if "agreement" in args.jobs:
            agreed = run_child(
                __file__,
                "agreement",
                str(args.agreement_items),
                str(args.variants),
                str(args.annotators),
                env=env,
            )
    sizes = {
        "export": f"export: {args.items} items x 3 annotations, chunks of "
        f"{args.export_chunk_items} (filled in {filled['setup_s']:.0f} s)",
        "agreement": f"agreement: {args.agreement_items} items x {args.variants} variants x "
        f"{args.annotators} annotators, item chunks of {args.agreement_chunk_items} "
        f"(filled in {agreed['setup_s']:.0f} s)",
    }
    print(
        "; ".join(sizes[job] for job in args.jobs)
        + (" (database reused: sizes as filled before)" if args.reuse_database else ""),
        flush=True,
    )
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    database = args.database_url.rsplit("/", 1)[-1].split("?")[0]
    sampler = ProcessCpuSampler(
        {
            "workers": lambda comm, cmdline: "celery" in cmdline and queue in cmdline,
            "database": lambda comm, cmdline: (
                cmdline.startswith("postgres:") and f" {database} " in cmdline
            ),
        }
    ).start()
    _django(env)
    from django.contrib.auth import get_user_model

    from annotate.models import Project
    from bench.export import PROJECT

    user = get_user_model().objects.create(username=f"bench-{uuid.uuid4().hex[:6]}")
    jobs = {}
    if "export" in args.jobs:
        export_project = Project.objects.get(name=PROJECT)
        jobs["export"] = lambda: run_export(export_project, user)
    if "agreement" in args.jobs:
        agreement_project = Project.objects.get(name=AGREEMENT_PROJECT)
        jobs["agreement"] = lambda: run_agreement(agreement_project)
    walls: dict[tuple[str, int], list[float]] = defaultdict(list)
    hashes: dict[str, set[str]] = defaultdict(set)
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.repeat):
            for count in args.workers:
                started = start_workers(count, env, Path(folder))
                try:
                    for job, run in jobs.items():
                        logs = [log for _, log in started]
                        offsets = [log.stat().st_size for log in logs]
                        window_start = time.time()
                        seconds, digest = run()
                        time.sleep(0.5)  # the last log lines
                        cpu = sampler.window(window_start, time.time())
                        walls[(job, count)].append(seconds)
                        hashes[job].add(digest.split()[0])
                        print(
                            f"{job:9} {count} worker(s): {seconds:7.2f} s  sha256 {digest}",
                            flush=True,
                        )
                        print_timings(*task_timings(logs, offsets))
                        print(
                            f"      CPU: workers {cpu.get('workers', 0.0):.1f} s, "
                            f"PostgreSQL ({database}) {cpu.get('database', 0.0):.1f} s; "
                            f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
                            flush=True,
                        )
                finally:
                    stop_workers(started)
    sampler.stop()
    media.cleanup()
    low, high = min(args.workers), max(args.workers)
    for job in jobs:
        one = statistics.median(walls[(job, low)])
        many = statistics.median(walls[(job, high)])
        print(
            f"{job:9} {low} -> {high} workers: {one:.2f} s -> {many:.2f} s, "
            f"speed-up {one / many:.2f}x; output identical: {'yes' if len(hashes[job]) == 1 else 'NO'}"
        )
    if any(len(h) != 1 for h in hashes.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
