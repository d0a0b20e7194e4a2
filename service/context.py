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
