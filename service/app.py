"""The application factory: ``create_app(config)`` wires the store, the API, docs, limits and
the error shape together."""

from __future__ import annotations

import flask
from flask import Flask, Response
from werkzeug.exceptions import HTTPException
from werkzeug.middleware.proxy_fix import ProxyFix

from arena.config import Config, ConfigError
from arena.context import Arena
from arena.store import Store
from service import errors
from service.api import (
    bots,
    disputes,
    divergences,
    failures,
    gauntlets,
    health,
    ladder,
    matches,
    play,
    pull,
    schedules,
    tournaments,
)
from service.auth import SECURITY_SCHEMES
from service.context import install
from service.docs import ASSETS_URL, markdown_document
from service.docs import blp as docs_assets
from service.guard import check_request
from service.headers import add_security_headers
from service.limits import init_limits
from service.pages import blp as pages
from service.smorest import Api

MAX_REQUEST_BYTES = 64 * 1024


class ArenaApi(Api):
    """flask-smorest's Api, documenting and returning the arena's one error shape, its
    document's descriptions in Markdown (:func:`service.docs.markdown_document`)."""

    ERROR_SCHEMA = errors.ErrorSchema

    def handle_http_exception(self, error: HTTPException) -> Response:
        return errors.handle_http_exception(error)

    def _openapi_json(self) -> Response:
        """/api/openapi.json, as flask-smorest serves it, with Markdown descriptions."""
        document = markdown_document(self.spec.to_dict())
        return flask.current_app.response_class(
            flask.json.dumps(document, indent=2, sort_keys=False), mimetype="application/json"
        )


def create_app(config: Config, *, store: Store | None = None) -> Flask:
    """The service for ``config``; ``store`` replaces the one built from ``config.redis_url``."""
    if not config.secret_key:
        raise ConfigError(
            "GONGZHU_SECRET_KEY is not set: generate one with "
            '`python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key())"`'
        )
    app = Flask(__name__)
    app.config.update(
        MAX_CONTENT_LENGTH=MAX_REQUEST_BYTES,
        API_TITLE="Gong Zhu arena",
        API_VERSION="1",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/api",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH="docs",
        OPENAPI_SWAGGER_UI_URL=ASSETS_URL,
        RATELIMIT_STORAGE_URI=config.redis_url,
        RATELIMIT_STORAGE_OPTIONS={"socket_connect_timeout": 2},
    )
    if config.trust_proxy_headers:
        n = config.trust_proxy_headers
        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]  # Flask's way to wrap it
            app.wsgi_app, x_for=n, x_proto=n, x_host=n
        )
    install(app, Arena(config, store or Store.from_config(config)))
    init_limits(app)
    api = ArenaApi(app, spec_kwargs={"components": {"securitySchemes": SECURITY_SCHEMES}})
    for blueprint in (
        health.blp,
        bots.blp,
        pull.blp,
        tournaments.blp,
        failures.blp,
        schedules.blp,
        matches.blp,
        divergences.blp,
        ladder.blp,
        gauntlets.blp,
        disputes.blp,
        play.blp,
    ):
        api.register_blueprint(blueprint)
    app.register_blueprint(docs_assets)
    app.register_blueprint(pages)
    errors.register(app)
    app.before_request(check_request)
    app.after_request(add_security_headers)
    return app


def from_environment() -> Flask:
    """The app configured from the environment: ``gunicorn 'service.app:from_environment()'``."""
    return create_app(Config.from_environment())
