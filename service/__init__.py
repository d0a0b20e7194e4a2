"""The arena's HTTP face: ``create_app(Config.from_environment())``."""

from service.app import create_app
from workers.config import Config

__all__ = ["Config", "create_app"]
