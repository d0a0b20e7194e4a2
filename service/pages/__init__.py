"""The arena's web pages: the ladder and its tables, tournaments, bots, the replay viewer and the
Play page, server-rendered with a small stylesheet and script, all served by the arena
(docs/PAGES.md)."""

from service.pages import play  # noqa: F401 - registers the Play page's routes on blp
from service.pages.views import blp

__all__ = ["blp"]
