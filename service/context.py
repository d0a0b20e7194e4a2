"""The arena a request handler works on, installed on the app by its factory."""

from __future__ import annotations

from flask import Flask, current_app

from arena.context import Arena
from arena.store import Store

EXTENSION = "gongzhu"


def install(app: Flask, arena: Arena) -> None:
    app.extensions[EXTENSION] = arena


def arena() -> Arena:
    found: Arena = current_app.extensions[EXTENSION]
    return found


def store() -> Store:
    return arena().store


def end_streams(app: object) -> None:
    """End the pull bots' streams this process holds, each with a ``bye`` (``shutdown``), and
    those opened from now on, so that a stopping web process does not wait for them and their
    bots connect again, elsewhere (``app``: what gunicorn serves, the arena's app unless it
    failed to load)."""
    if not isinstance(app, Flask):
        return
    found: Arena | None = app.extensions.get(EXTENSION)
    if found is not None:  # the relay made now if need be: a stream opened later ends too
        found.relay.end_all("shutdown")
