"""DRF's content negotiation, with a shortcut for the request almost every client sends.

API clients (the annotator workspace's fetch calls, scripts, crowd-platform integrations)
send no Accept header or `*/*`, and never a `?format=`. For those, DRF's negotiation
parses the query string and the Accept header and ranks every renderer by precedence, to
arrive at the first renderer, the JSON one; on the 2-core load bench that was 4 % of the
instructions of a "next" + "submit" pair. Here such requests get the first renderer
straight away, with the media type DRF would have given; any other request (a browser
asking for HTML, `?format=api`, a specific or unacceptable type) is negotiated by DRF.
"""

from __future__ import annotations

from rest_framework.negotiation import DefaultContentNegotiation


class FirstRendererNegotiation(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        meta = request._request.META
        if not format_suffix and not meta.get("QUERY_STRING") and renderers:
            first = renderers[0]
            accept = meta.get("HTTP_ACCEPT")  # absent means */*; empty accepts nothing
            if accept is None or accept.strip() in ("*/*", first.media_type):
                return first, first.media_type
        return super().select_renderer(request, renderers, format_suffix)
