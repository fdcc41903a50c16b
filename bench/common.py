"""Helpers shared by the benchmark scripts."""

from __future__ import annotations

import socket
from urllib.parse import urlparse


def recreate_database(url: str) -> None:
    """Drop and create the PostgreSQL database named in `url` (a throwaway bench database)."""
    import psycopg2

    parsed = urlparse(url)
    admin = psycopg2.connect(
        host=parsed.hostname,
        port=parsed.port or 5432,
        user=parsed.username or "postgres",
        password=parsed.password,
        dbname="postgres",
    )
    admin.autocommit = True
    with admin.cursor() as cur:
        name = parsed.path.lstrip("/")
        cur.execute(f'DROP DATABASE IF EXISTS "{name}"')
        cur.execute(f'CREATE DATABASE "{name}"')
    admin.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
