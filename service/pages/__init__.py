"""The arena's web pages: the ladder, tournaments, bots and the replay viewer, server-rendered
with one small stylesheet and one small script, both served by the arena (docs/PAGES.md)."""

from service.pages.views import blp

__all__ = ["blp"]
