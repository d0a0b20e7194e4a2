"""The security headers of every answer: no sniffing, no framing, no referrer to other sites,
and a Content-Security-Policy that lets a page run only the arena's own scripts and styles.

The pages have no inline script, style attribute or event handler (their data travels in
``<script type="application/json">`` blocks, which are not run). The one exception is the
interactive API docs page, ``/api/docs`` (flask-smorest's Swagger UI template), which starts
Swagger UI with an inline script: inline script and style are allowed on that page only.
"""

from __future__ import annotations

from typing import Final

from flask import Response, request

PAGES_POLICY: Final = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
DOCS_PATH: Final = "/api/docs"
DOCS_POLICY: Final = PAGES_POLICY.replace(
    "script-src 'self'", "script-src 'self' 'unsafe-inline'"
).replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")
"""Swagger UI's page: its inline start-up script and the styles Swagger UI sets."""


def add_security_headers(response: Response) -> Response:
    """After every request (pages, API answers and errors alike)."""
    headers = response.headers
    policy = DOCS_POLICY if request.path == DOCS_PATH else PAGES_POLICY
    headers.setdefault("Content-Security-Policy", policy)
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("X-Frame-Options", "DENY")
    headers.setdefault("Referrer-Policy", "same-origin")
    headers.setdefault("Cross-Origin-Opener-Policy", "same-origin")
    return response
