"""The gauntlets' pages: the list, and one gauntlet with its verdict, its chart and its deals."""

from __future__ import annotations

from flask import render_template

from arena import gauntlets
from arena.errors import NotFoundError
from arena.records import OPERATOR
from bot_sdk.sequential import VERDICT_TEXT
from service.context import arena
from service.pages.chart import gauntlet_chart
from service.pages.views import PageNotFoundError, _last_page, _page_arg, blp, names

GAUNTLETS_PER_PAGE = 50


@blp.app_template_global()
def verdict_text(verdict: str) -> str:
    """A gauntlet's verdict in words."""
    return VERDICT_TEXT.get(verdict, verdict)


@blp.route("/gauntlets")
def gauntlet_list() -> str:
    page = _page_arg()
    found = gauntlets.listing(arena(), page=page, per_page=GAUNTLETS_PER_PAGE)
    seated = [p for g in found.items for p in (g.gauntlet.candidate, g.gauntlet.baseline)]
    return render_template(
        "pages/gauntlets.html",
        gauntlets=found.items,
        names=names(seated),
        page=page,
        last=_last_page(found.total, GAUNTLETS_PER_PAGE),
    )


@blp.route("/gauntlets/<gauntlet_id>")
def gauntlet(gauntlet_id: str) -> str:
    try:
        shown = gauntlets.progress(arena(), gauntlet_id)
    except NotFoundError:
        raise PageNotFoundError(f"There is no gauntlet {gauntlet_id}.") from None
    g = shown.gauntlet
    starter = None if g.started_by == OPERATOR else g.started_by  # else the owner's bot
    shown_ids = [g.candidate, g.baseline, *g.opponents, *([] if starter is None else [starter])]
    return render_template(
        "pages/gauntlet.html",
        g=shown,
        chart=gauntlet_chart(
            shown.trajectory, [d.deal for d in shown.deals if not d.void], g.delta
        ),
        names=names(shown_ids),
        starter=starter,
        match_id=gauntlets.match_id,
    )
