import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
application = get_wsgi_application()
# Import every view now rather than on the first request. With gunicorn's preload_app
# this happens once in the master, before the workers fork. Nothing here may open a
# database or cache connection: forked workers would share it.
get_resolver().url_patterns  # noqa: B018 - reading it imports the URLconf
