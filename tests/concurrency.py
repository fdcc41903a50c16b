"""Running many clients at the same moment against the real database, for the tests."""

import threading

from django.db import connection


def run_at_once(work, argument_lists, *, timeout: float = 300) -> list[str]:
    """Call `work(*arguments)` in one thread per argument list, all released together
    by a barrier; each thread closes its own database connection. Returns what the
    calls raised, as "Type: message", for the test to assert on."""
    errors: list[str] = []
    barrier = threading.Barrier(len(argument_lists))

    def run(arguments):
        try:
            barrier.wait()
            work(*arguments)
        except Exception as exc:  # returned to the test, which asserts on it
            errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(a,)) for a in argument_lists]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    return errors
