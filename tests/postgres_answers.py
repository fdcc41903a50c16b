"""Exit 0 when a PostgreSQL server answers at the URL given, 1 otherwise (make test asks)."""

import sys
from urllib.parse import urlparse

import psycopg2


def main(url: str) -> int:
    parsed = urlparse(url)
    try:
        psycopg2.connect(
            host=parsed.hostname,
            port=parsed.port or 5432,
            user=parsed.username or "postgres",
            password=parsed.password,
            dbname="postgres",
            connect_timeout=3,
        ).close()
    except psycopg2.OperationalError:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
