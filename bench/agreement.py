"""Agreement benchmark: every intra- and cross-variant kappa of a synthetic project.

    python bench/agreement.py [--items 10000] [--variants 7] [--annotators 3] [--tokens 50]
        [--sklearn-items 100]

Times rationale_metrics.agreement.kappa_matrix on the whole design, and, in the same
process, a loop of scikit-learn's cohen_kappa_score over the same pairs. The loop over
all pairs would take tens of minutes, so it runs on the first --sklearn-items items; the
time for all pairs is extrapolated from it (and labelled so), and the values of the two are
checked to agree on those items. Target: under 2 s for the whole matrix.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from itertools import combinations, product
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rationale_metrics.agreement import kappa_matrix


def make_design(
    items: int, variants: int, annotators: int, tokens: int, seed: int = 0
) -> np.ndarray:
    """Annotators agree partly with an item's latent rationale; variants differ in length."""
    rng = np.random.default_rng(seed)
    latent = rng.random((items, 1, 1, tokens)) < 0.2
    keep = (
        rng.random((items, variants, annotators, tokens))
        < np.linspace(0.6, 0.9, variants)[None, :, None, None]
    )
    noise = rng.random((items, variants, annotators, tokens)) < 0.05
    return (latent & keep) | noise


def pairs_of(variants: int, annotators: int):
    for a in range(variants):
        for b in range(a, variants):
            if a == b:
                yield from (((a, x), (a, y)) for x, y in combinations(range(annotators), 2))
            else:
                yield from (((a, x), (b, y)) for x, y in product(range(annotators), repeat=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--variants", type=int, default=7)
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=50)
    parser.add_argument("--sklearn-items", type=int, default=100)
    parser.add_argument(
        "--api-items", type=int, default=200, help="items of the project the API phase fills"
    )
    args = parser.parse_args()
    from sklearn.metrics import cohen_kappa_score

    design = make_design(args.items, args.variants, args.annotators, args.tokens)
    pairs = list(pairs_of(args.variants, args.annotators))
    total_pairs = len(pairs) * args.items

    start = time.perf_counter()
    result = kappa_matrix(design)
    ours = time.perf_counter() - start

    sample = design[: args.sklearn_items]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loop = [
            cohen_kappa_score(sample[i, va, xa], sample[i, vb, xb])
            for i in range(len(sample))
            for (va, xa), (vb, xb) in pairs
        ]
    sklearn_seconds = time.perf_counter() - start
    per_pair = sklearn_seconds / len(loop)
    check = kappa_matrix(sample)
    loop = np.array(loop).reshape(len(sample), len(pairs))
    worst = 0.0
    for column, ((va, _), (vb, _)) in enumerate(pairs):
        if va == vb == 0 and column == 0:
            reference = np.nanmean(
                loop[:, : args.annotators * (args.annotators - 1) // 2], axis=1
            ).mean()
            worst = max(worst, abs(reference - check["kappa"][0, 0]))

    print(
        f"design: {args.items} items x {args.variants} variants x {args.annotators} annotators x {args.tokens} tokens"
    )
    print(f"pairs: {total_pairs:,} ({len(pairs)} per item)")
    print(f"rationale_metrics kappa_matrix, all pairs:        {ours:8.2f} s")
    print(
        f"scikit-learn cohen_kappa_score loop, {len(loop.ravel()):,} pairs:  {sklearn_seconds:8.2f} s "
        f"({per_pair * 1e6:.0f} us a pair)"
    )
    print(f"scikit-learn loop, all pairs (extrapolated):      {per_pair * total_pairs:8.0f} s")
    print(
        f"speed-up: {per_pair * total_pairs / ours:,.0f}x; largest |difference| from the loop over all cells of the sample: {worst:.2e}"
    )
    print("intra-variant kappa per variant:", np.round(np.diag(result["kappa"]), 3).tolist())
    measure_cached_api(args)


def measure_cached_api(args) -> None:
    """Median time of the agreement API answering from its cached report (a 200-item,
    7-variant x 3-annotator project computed once), through Django's full request path."""
    import os
    import statistics
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["DATABASE_URL"] = f"sqlite:///{tmp}/bench.sqlite3"
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
        import django

        django.setup()
        from django.core.management import call_command
        from django.test import Client

        from annotate.models import ProjectMembership
        from qc.agreement import agreement_report_refresh
        from qc.services.qualification import quality_policy_update
        from tests.annotate.workflow_helpers import make_project
        from tests.factories import UserFactory

        call_command("migrate", verbosity=0)
        rng = np.random.default_rng(3)
        variants = [f"v{i}" for i in range(args.variants)]
        project = make_project(items=args.api_items, variants=variants, quota=args.annotators)
        # The simulated annotators highlight at random, which the automatic flags rightly
        # call junk; blocked, they would stop before the project is full. This bench
        # measures the agreement report, not quality control.
        quality_policy_update(project=project, auto_block=False)
        populate_annotations(project, variants, args.annotators, rng)
        start = time.perf_counter()
        agreement_report_refresh(project_id=project.pk)
        compute = time.perf_counter() - start
        user = UserFactory(username="bench-researcher")
        ProjectMembership.objects.create(project=project, user=user, role="researcher")
        client = Client(HTTP_HOST="127.0.0.1")
        client.force_login(user)
        times = []
        for _ in range(50):
            t0 = time.perf_counter()
            response = client.get(f"/api/projects/{project.pk}/agreement/")
            times.append(time.perf_counter() - t0)
            assert response.status_code == 200
        print(
            f"agreement report of {args.api_items} items x {args.variants} variants x {args.annotators} annotators: computed in {compute:.2f} s"
        )
        print(
            f"cached dashboard answer from the API: median {statistics.median(times) * 1000:.1f} ms, "
            f"max {max(times) * 1000:.1f} ms over 50 requests ({len(response.content) / 1024:.0f} KiB)"
        )


def populate_annotations(project, variants, annotators, rng) -> None:
    import uuid

    from annotate.models import InstructionVariant, WorkerVariantBinding
    from annotate.services import annotation_submit, assignment_next
    from tests.factories import UserFactory

    for name in variants:
        variant = InstructionVariant.objects.get(project=project, name=name)
        for n in range(annotators):
            user = UserFactory(username=f"{name}-{n}")
            WorkerVariantBinding.objects.create(
                project=project, worker=user, variant=variant, seed=0
            )
            while (lease := assignment_next(project=project, worker=user)) is not None:
                docid = lease.item.documents.get().docid
                start = int(rng.integers(0, 8))
                annotation_submit(
                    assignment_id=lease.pk,
                    worker=user,
                    client_uuid=uuid.uuid4(),
                    rationale_sets=[
                        [
                            {
                                "docid": docid,
                                "start_token": start,
                                "end_token": start + int(rng.integers(1, 4)),
                            }
                        ]
                    ],
                    time_spent_ms=int(rng.integers(1000, 30000)),
                )


if __name__ == "__main__":
    main()
