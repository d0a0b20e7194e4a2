"""The arena's HTTP face: ``create_app(Config.from_environment())``.

The names are loaded on first use, so that importing a light module of the package (the web
worker class, :mod:`service.web_worker`, which gunicorn loads before gevent patches the
standard library) does not import the whole app with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.config import Config
    from service.app import create_app

__all__ = ["Config", "create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from service.app import create_app  # noqa: PLC0415 - loaded on first use (above)

        return create_app
    if name == "Config":
        from arena.config import Config  # noqa: PLC0415 - loaded on first use (above)

        return Config
    raise AttributeError(f"module 'service' has no attribute {name!r}")
