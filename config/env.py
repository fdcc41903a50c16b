"""The one place where settings are read from the environment.

django-environ parses DATABASE_URL / CACHE_URL / booleans / lists, so the settings modules
only say what each value means, never how to parse it.
"""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
_dotenv = BASE_DIR / ".env"
if _dotenv.exists():
    environ.Env.read_env(str(_dotenv))
