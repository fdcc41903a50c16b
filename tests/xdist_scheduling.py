"""How pytest-xdist shares the suite between its processes (`-n 2 --dist loadgroup`).

xdist's own `loadgroup` reads a group from an `xdist_group` mark by rewriting the item's
`_nodeid`, which pytest 9 no longer reads: every test stayed a group of its own, and the
marks grouped nothing. The groups are therefore declared here, by file, and read from the
node ids the processes report, which is all the scheduler sees (it collects no tests).

Each group runs in one process, one test after another, while the other process goes on
with the rest of the suite. Groups start first, then the tests known to be slow, so that
neither ends up alone at the end of the run.
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

# Tests that must never run beside another of the same group, or that share what their
# module builds, by the file they are in.
SERIAL_GROUPS: dict[str, tuple[str, ...]] = {
    # Fifty clients at once against PostgreSQL (tests/concurrency.py): two such tests side by
    # side pass its max_connections (100).
    "fifty-clients": (
        "tests/annotate/test_assignment_concurrency.py",
        "tests/crowd/test_concurrency.py",
        "tests/qc/test_review_concurrency.py",
        "tests/annotate/test_perturbations_concurrency.py",
        "tests/annotate/test_allocation.py",
    ),
    # One test per role on the demo's data, which the module builds once (a minute or two of
    # the process's time): spread over both processes, each would build it.
    "demo-walk": ("tests/e2e/test_walkthrough_a11y.py",),
}

# Folders and files whose tests take tens of seconds each (a browser, a real Celery worker):
# started before the quick ones, so that the run's last minutes are the quick ones.
SLOW_FIRST: tuple[str, ...] = (
    "tests/e2e/",
    "tests/annotate/test_worker_killed.py",
    "tests/annotate/test_import_workers",
    "tests/exports/test_export_workers.py",
    "tests/exports/test_run_workers.py",
    "tests/exports/test_run_score_workers.py",
    "tests/qc/test_agreement_workers.py",
)

_GROUP_OF_FILE = {path: group for group, paths in SERIAL_GROUPS.items() for path in paths}


def serial_group(nodeid: str) -> str | None:
    """The group the test `nodeid` belongs to, if any."""
    return _GROUP_OF_FILE.get(nodeid.split("::", 1)[0])


class SerialGroupScheduling(LoadScopeScheduling):
    """xdist's load scheduling with SERIAL_GROUPS kept together: each test is a unit of
    work of its own, except the tests of a group, which make one unit."""

    def _split_scope(self, nodeid: str) -> str:
        group = serial_group(nodeid)
        return f"group:{group}" if group else nodeid

    def _assign_work_unit(self, node) -> None:
        if not getattr(self, "_ordered", False):
            # Before the first unit is sent: groups first, then the slow tests, each in
            # collection order; the processes take units from the front of the queue.
            def rank(scope: str) -> int:
                if scope.startswith("group:"):
                    return 0
                return 1 if scope.startswith(SLOW_FIRST) else 2

            for scope in sorted(self.workqueue, key=rank):
                self.workqueue.move_to_end(scope)
            self._ordered = True
        super()._assign_work_unit(node)
