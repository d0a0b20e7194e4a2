"""The disputes' public pages (docs/PAGES.md): a ruled dispute with its ruling and, once the
match's replay is public, the disputing seat's view at the contested decision, as the viewer
shows it. An open dispute, and every evidence report, are for the bot's owner and the operator,
through the API and ``gongzhu disputes``."""

from __future__ import annotations

from typing import Any

from flask import render_template

from arena import disputes, matches
from arena.errors import ArenaError, NotFoundError
from referee import Observation
from replays.integrity import unpack
from replays.reask import ReaskError, rebuild
from replays.upgrade import read_log
from service.context import arena
from service.errors import status_of
from service.pages.divergence import seat_view
from service.pages.views import PageNotFoundError, blp, names


@blp.route("/disputes/<dispute_id>")
def dispute(dispute_id: str) -> str | tuple[str, int]:
    try:
        shown = disputes.get(arena(), dispute_id, by=None)
    except NotFoundError:
        raise PageNotFoundError(f"There is no dispute {dispute_id}.") from None
    except ArenaError as error:
        page = render_template("pages/refused.html", message=error.message, code=error.code)
        return page, status_of(type(error))
    d = shown.dispute
    return render_template(
        "pages/dispute.html",
        d=d,
        sealed=shown.sealed_ruling,
        view=_view(d.match_id, d.hand, d.decision),
        names=names([d.bot_id]),
    )


def _view(match_id: str, hand: int, decision: int | None) -> dict[str, Any] | None:
    """The seat's view at the contested decision, if the match's replay is public."""
    if decision is None:
        return None
    try:
        _, blob = matches.finished(arena(), match_id, operator=False)
        observation: Observation = rebuild(read_log(unpack(blob)), hand, decision).observation
    except (ArenaError, ReaskError):
        return None  # under embargo, or a decision never asked: nothing to show
    return seat_view(observation)
