"""The upload limit is one figure: the settings read IMPORT_MAX_UPLOAD_BYTES, and nginx's
client_max_body_size is rendered from the same variable, with the same default."""

import os
import re
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from bench.common import NGINX_TEMPLATE, upload_limit_bytes

ROOT = Path(__file__).resolve().parents[2]


def test_nginx_takes_its_body_limit_from_the_upload_limit():
    template = NGINX_TEMPLATE.read_text()

    assert re.findall(r"client_max_body_size\s+([^;]+);", template) == [
        "${IMPORT_MAX_UPLOAD_BYTES}"
    ]
    assert '"limit_bytes": ${IMPORT_MAX_UPLOAD_BYTES}' in template


def test_compose_gives_nginx_and_the_application_the_settings_default():
    if "IMPORT_MAX_UPLOAD_BYTES" in os.environ:
        pytest.fail("run without IMPORT_MAX_UPLOAD_BYTES set, so the settings hold their default")
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    default = f"${{IMPORT_MAX_UPLOAD_BYTES:-{settings.IMPORT_MAX_UPLOAD_BYTES}}}"

    assert compose["services"]["proxy"]["environment"]["IMPORT_MAX_UPLOAD_BYTES"] == default
    assert compose["x-app"]["environment"]["IMPORT_MAX_UPLOAD_BYTES"] == default
    assert upload_limit_bytes() == str(settings.IMPORT_MAX_UPLOAD_BYTES)
