"""Requests answered by the production settings, in a process of their own.

The production module refuses unsafe values and is read once per process, so each probe
starts Python with `config.settings.production` and an environment that passes, sends
the given requests through Django's test client (no server, no database tables: only
pages that need none) and reports status, headers and cookies as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What `python -c "import secrets; print(secrets.token_urlsafe(50))"` gives (README).
STRONG_KEY = "q7Rk2vN_p9XcLw4TbZ-hYm1sJ8dFgE3uAoK6iWnV0rQ5tMxC2yBeHlUaGz7DjPfS4k"
PUBLIC_HOST = "workbench.example.org"

_SCRIPT = r"""
import json, sys
import django
django.setup()
from django.conf import settings
from django.test import Client

out = {"settings": {name: getattr(settings, name, None) for name in json.loads(sys.argv[2])}}
answers = []
for asked in json.loads(sys.argv[1]):
    client = Client(**asked.get("client", {}))
    response = getattr(client, asked.get("method", "get"))(asked["path"], **asked.get("headers", {}))
    answers.append({
        "status": response.status_code,
        "headers": dict(response.headers),
        "cookies": {name: {"secure": bool(morsel["secure"])} for name, morsel in response.cookies.items()},
    })
out["answers"] = answers
print(json.dumps(out, default=str))
"""


def production_environment(**overrides: str) -> dict[str, str]:
    """The process environment without this test run's Django switches, plus a
    production configuration that passes the safety checks, plus `overrides`."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_", "CACHE_", "NGINX_"))
    }
    return {
        **clean,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": STRONG_KEY,
        "DJANGO_ALLOWED_HOSTS": PUBLIC_HOST,
        # An empty SQLite file: enough for /readyz's SELECT 1 and pages that read no table.
        "DATABASE_URL": "sqlite:////tmp/rationale-workbench-production-probe.sqlite3",
        # Production refuses to run jobs inside requests; the embedded broker needs no server.
        "CELERY_BROKER_URL": "filesystem://",
        "CELERY_EMBEDDED_DIR": "/tmp/rationale-workbench-production-probe-celery",
        "LOG_LEVEL": "ERROR",
        "REQUEST_LOG_LEVEL": "WARNING",
        **overrides,
    }


def production_probe(requests: list[dict], *, settings: tuple[str, ...] = (), **env: str) -> dict:
    """Each request is {"path", "method"?, "headers"? (test-client META keywords),
    "client"? (Client keywords)}; returns {"settings": {...}, "answers": [...]}."""
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, json.dumps(requests), json.dumps(list(settings))],
        env=production_environment(**env),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
