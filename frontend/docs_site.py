"""The documentation site, built by `make docs` (mkdocs.yml) into DOCS_SITE_DIR and served
here at /docs/, so `make run` shows the documentation of the very code it runs.

The site is static files. Its pages carry a few small inline scripts of the theme's (the
colour scheme, the search's base address): rather than loosening the site's Content
Security Policy for them, each HTML page's answer allows exactly its own inline scripts by
their sha256 hashes, and nothing else inline.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from django.conf import settings
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.http import require_safe
from django.views.static import serve

INLINE_SCRIPT = re.compile(rb"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.S | re.I)


def inline_script_hashes(html: bytes) -> list[str]:
    """The CSP source expression of each inline script of a page ('sha256-...'), in order,
    once each. A JSON data block (`type="application/json"`) is not run, but hashing it
    costs nothing and keeps the rule simple."""
    hashes = []
    for body in INLINE_SCRIPT.findall(html):
        expression = "'sha256-" + base64.b64encode(hashlib.sha256(body).digest()).decode() + "'"
        if expression not in hashes:
            hashes.append(expression)
    return hashes


@require_safe
def docs_page(request, path: str = ""):
    root = Path(settings.DOCS_SITE_DIR).resolve()
    if not (root / "index.html").is_file():
        if path:
            raise Http404("The documentation site is not built.")
        # A clone where `make docs` has not run yet: say how to build it.
        return render(request, "frontend/docs_not_built.html")
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        raise Http404("Not in the documentation.")
    if target.is_dir():
        if path and not path.endswith("/"):
            return HttpResponseRedirect(request.path + "/")
        target = target / "index.html"
        path = f"{path}index.html"
    if target.suffix != ".html":
        return serve(request, path, document_root=str(root))
    if not target.is_file():
        raise Http404("No such page in the documentation.")
    html = target.read_bytes()
    response = HttpResponse(html, content_type="text/html; charset=utf-8")
    hashes = inline_script_hashes(html)
    if hashes:
        # django-csp adds these to the site's script-src for this answer only.
        response._csp_update = {"script-src": hashes}
    return response
