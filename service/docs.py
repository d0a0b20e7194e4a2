"""The interactive API docs' assets, served from the ``swagger-ui-bundle`` package: the docs
page at /api/docs works with no internet access."""

from __future__ import annotations

from flask import Blueprint, Response, send_from_directory
from swagger_ui_bundle import swagger_ui_path

from service.smorest import abort

ASSETS_URL = "/api/docs/assets/"
ASSETS = frozenset({"swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js"})

blp = Blueprint("docs_assets", __name__, url_prefix=ASSETS_URL.rstrip("/"))


@blp.route("/<name>")
def asset(name: str) -> Response:
    if name not in ASSETS:
        abort(404, message=f"there is no docs asset {name}")
    return send_from_directory(str(swagger_ui_path), name, max_age=86400)
