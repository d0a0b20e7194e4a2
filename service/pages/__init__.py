"""The arena's web pages: the ladder and its tables, tournaments, gauntlets, bots, the replay
viewer and the Play page, server-rendered with a small stylesheet and script, all served by the
arena (docs/PAGES.md)."""

from service.pages import disputes, gauntlets, play, times  # noqa: F401 - register on blp
from service.pages.views import blp

__all__ = ["blp"]
