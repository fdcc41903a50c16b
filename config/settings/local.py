"""Development: `make run`. DEBUG on, SQLite and eager Celery unless the environment says otherwise."""

from config.env import env
from config.settings.base import *  # noqa: F403

DEBUG = env.bool("DJANGO_DEBUG", default=True)
