"""The interactive API docs: their assets, served from the ``swagger-ui-bundle`` package so
that the docs page at /api/docs works with no internet access, and the OpenAPI document's
descriptions in the Markdown its readers render. The descriptions come from the API's
docstrings and schemas, written in reStructuredText like every docstring of the project;
:func:`markdown_document` rewrites their inline markup (CommonMark: ``x`` becomes `x`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Response, send_from_directory
from swagger_ui_bundle import swagger_ui_path

from service.smorest import abort

ASSETS_URL = "/api/docs/assets/"
ASSETS = frozenset({"swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js"})
PROSE = frozenset({"description", "summary"})
"""The keys whose text is prose (a schema property named ``description`` is an object there)."""
VALUES = frozenset({"default", "enum", "example", "examples"})
"""The keys whose content is a value of the API: never rewritten."""
LITERAL = re.compile(r"``(.+?)``", re.DOTALL)
ROLE = re.compile(r":(?:[\w-]+:)?[\w-]+:`(~?)([^`<]*?)\s*(?:<([^`>]*)>)?`")
LINK = re.compile(r"`([^`<]+?)\s*<([^`>]+)>`__?")

blp = Blueprint("docs_assets", __name__, url_prefix=ASSETS_URL.rstrip("/"))


@blp.route("/<name>")
def asset(name: str) -> Response:
    if name not in ASSETS:
        abort(404, message=f"there is no docs asset {name}")
    return send_from_directory(str(swagger_ui_path), name, max_age=86400)


def _code(text: str) -> str:
    """``text`` as a CommonMark code span (a backtick inside takes a longer fence)."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _role(match: re.Match[str]) -> str:
    """A Sphinx cross-reference as code: its title, or its target (``~``: the last part)."""
    short, title, target = match.group(1), match.group(2), match.group(3)
    if target is not None and title:
        return _code(title)
    name = target or title
    return _code(name.rsplit(".", 1)[-1] if short else name)


def markdown(text: str) -> str:
    """reStructuredText's inline markup in ``text`` as CommonMark: literals, Sphinx roles
    and hyperlinks.

    >>> markdown("Serve it (``POST /api/bots``) with :class:`~arena.records.Bot` "
    ...          "and `the docs <https://example.org>`_.")
    'Serve it (`POST /api/bots`) with `Bot` and [the docs](https://example.org).'
    """
    text = LITERAL.sub(lambda m: _code(m.group(1)), text)
    text = ROLE.sub(_role, text)
    return LINK.sub(r"[\1](\2)", text)


def markdown_document(document: Any, key: str | None = None) -> Any:
    """A copy of the OpenAPI ``document`` whose descriptions and summaries are Markdown;
    everything else as it was."""
    if isinstance(document, Mapping):
        return {k: v if k in VALUES else markdown_document(v, k) for k, v in document.items()}
    if isinstance(document, list):
        return [markdown_document(item, key) for item in document]
    if isinstance(document, str) and key in PROSE:
        return markdown(document)
    return document
