"""The pages' routes: read the store, shape what the templates show."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable
from typing import Any

from flask import Blueprint, render_template, request

from arena import bots
from arena.records import Match, MatchStatus
from arena.store import FAULTS_KEPT
from replays.integrity import unpack
from replays.upgrade import read_log
from service.context import arena, store
from service.pages.chart import rating_chart
from service.pages.replay import replay_data

blp = Blueprint(
    "pages",
    __name__,
    template_folder="templates",
    static_folder="static",
    static_url_path="/assets",
)

PER_PAGE = 100
RECENT = 20
FAULTS_PER_PAGE = 50
TOURNAMENTS_PER_PAGE = 50


class PageNotFoundError(Exception):
    """An unknown id: answered with the friendly HTML 404 page."""


@blp.errorhandler(PageNotFoundError)
def not_found(error: PageNotFoundError) -> tuple[str, int]:
    return render_template("pages/not_found.html", message=str(error)), 404


def names(ids: Iterable[str]) -> dict[str, str]:
    """Display names by participant id: a registered bot's name, else the id (house bots)."""
    wanted = set(ids)
    found = store().get_bots(wanted)
    return {i: found[i].name if i in found else i for i in wanted}


def _page_arg(name: str = "page") -> int:
    return max(1, request.args.get(name, 1, type=int) or 1)


def _last_page(total: int, per_page: int) -> int:
    return max(1, -(-total // per_page))


@blp.route("/")
def ladder() -> str:
    page = _page_arg()
    found = store().ladder(page=page, per_page=PER_PAGE)
    last = _last_page(found.total, PER_PAGE)
    return render_template(
        "pages/ladder.html",
        rows=found.items,
        names=names(r.bot_id for _, r in found.items),
        page=page,
        last=last,
    )


def _all_matches(tournament_id: str) -> list[Match]:
    matches: list[Match] = []
    page = 1
    while True:
        found = store().list_matches(page=page, per_page=PER_PAGE, tournament_id=tournament_id)
        matches += found.items
        if page * PER_PAGE >= found.total:
            return matches
        page += 1


@blp.route("/tournaments")
def tournaments() -> str:
    page = _page_arg()
    found = store().list_tournaments(page=page, per_page=TOURNAMENTS_PER_PAGE)
    return render_template(
        "pages/tournaments.html",
        tournaments=found.items,
        page=page,
        last=_last_page(found.total, TOURNAMENTS_PER_PAGE),
    )


@blp.route("/tournaments/<tournament_id>")
def tournament(tournament_id: str) -> str:
    record = store().get_tournament(tournament_id)
    if record is None:
        raise PageNotFoundError(f"There is no tournament {tournament_id}.")
    matches = sorted(_all_matches(tournament_id), key=lambda m: (m.table_id or "", m.created_at))
    counts = Counter(m.status for m in matches)
    tables: dict[str, list[Match]] = {}
    for match in matches:
        tables.setdefault(match.table_id or "—", []).append(match)
    standings = store().standings(tournament_id)
    seated = [b for m in matches for b in m.seats]
    return render_template(
        "pages/tournament.html",
        t=record,
        running=counts[MatchStatus.RUNNING],
        queued=counts[MatchStatus.QUEUED],
        percent=round(100 * record.done / record.total) if record.total else 0,
        standings=standings,
        tables=tables,
        names=names([*record.spec.participants, *seated]),
        deal_secret=None if (secret := store().revealed_secret(record)) is None else secret.hex(),
    )


@blp.route("/bots/<bot_id>")
def bot(bot_id: str) -> str:
    found = store().get_bot(bot_id)
    record = None if found is None else bots.with_presence(arena(), [found])[0]
    rating = store().rating(bot_id)
    if record is None and rating is None:
        raise PageNotFoundError(f"There is no bot {bot_id}.")
    recent = store().list_matches(page=1, per_page=RECENT, bot_id=bot_id).items
    history = store().rating_history(bot_id)
    chart = rating_chart([(p.match_id, p.conservative) for p in history])
    fault_page = _page_arg("fault_page")
    faults = store().faults(bot_id, page=fault_page, per_page=FAULTS_PER_PAGE)
    return render_template(
        "pages/bot.html",
        bot_id=bot_id,
        bot=record,
        rating=rating,
        recent=recent,
        chart=chart,
        names=names([bot_id, *(b for m in recent for b in m.seats)]),
        faults=faults.items,
        fault_total=faults.total,
        fault_page=fault_page,
        fault_last=_last_page(faults.total, FAULTS_PER_PAGE),
        fault_cap=FAULTS_KEPT,
        embargoed=_embargoed({f.match_id for f in faults.items}),
    )


def _embargoed(match_ids: set[str]) -> set[str]:
    """The matches among ``match_ids`` whose hands and decisions are still embargoed."""
    matches = store().get_matches(sorted(match_ids))
    return {m.id for m in matches if store().embargo(m) is not None}


@blp.route("/matches/<match_id>")
def match(match_id: str) -> str:
    record = store().get_match(match_id)
    if record is None:
        raise PageNotFoundError(f"There is no match {match_id}.")
    shown = names(record.seats)
    embargo = store().embargo(record)
    blob = None if embargo is not None else store().replay_blob(match_id)
    data = None
    if blob is not None:
        data = dict(viewer_data(blob))
        data["seats"] = [
            {**seat, "name": shown.get(seat["bot_id"], seat["name"])} for seat in data["seats"]
        ]
    return render_template(
        "pages/match.html", match=record, replay=data, names=shown, embargo=embargo
    )


@functools.lru_cache(maxsize=64)
def viewer_data(blob: bytes) -> dict[str, Any]:
    """The replay viewer's data of a packed log. A recorded log never changes, so each process
    computes it once for the last 64 logs viewed (the referee walks the whole match: about 50 ms
    for 13 hands). The result is shared: copy what you change."""
    return replay_data(read_log(unpack(blob)))
