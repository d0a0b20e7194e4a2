"""The pages' routes: read the store, shape what the templates show."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from flask import Blueprint, render_template, request

from arena import bots, disputes, divergences, gauntlets
from arena import ladder as ladder_figures
from arena.errors import ArenaError, NotFoundError
from arena.ratings import ANCHOR, NEW_VERSION_SIGMA, matches_to_settle
from arena.records import PROVISIONAL_SIGMA, Match, MatchStatus, Page, Rating
from arena.store import FAULTS_KEPT
from replays.integrity import unpack
from replays.upgrade import read_log
from service.context import arena, store
from service.errors import status_of
from service.limits import expensive_read
from service.pages.chart import rating_chart
from service.pages.divergence import seat_view
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
TABLES_PER_PAGE = 50
HEAD_TO_HEAD_PER_PAGE = 20
DIVERGENCES_PER_PAGE = 20
RULINGS_PER_PAGE = 100
RECENT_GAUNTLETS = 10


class PageNotFoundError(Exception):
    """An unknown id: answered with the friendly HTML 404 page."""


@blp.errorhandler(PageNotFoundError)
def not_found(error: PageNotFoundError) -> tuple[str, int]:
    return render_template("pages/not_found.html", message=str(error)), 404


def names(ids: Iterable[str]) -> dict[str, str]:
    """Display names by participant id: a registered bot's name, else the id (house bots)."""
    wanted = set(ids)
    found = store().bot_names(wanted)
    return {i: found.get(i, i) for i in wanted}


@blp.app_template_global()
def page_query(arg: str, value: int) -> str:
    """This page's query string with ``arg`` set to ``value`` and every other argument kept
    (a pager's link: paging the faults keeps the version chosen, and so on)."""
    args = request.args.to_dict(flat=False)
    args[arg] = [str(value)]
    return "?" + urlencode(args, doseq=True)


@blp.app_template_global()
def provisional_note() -> str:
    """What the provisional mark's tooltip says."""
    unsure = f"σ above {PROVISIONAL_SIGMA:.1f} points per hand"
    return f"{unsure}: too few rated matches to trust the place yet"


def _page_arg(name: str = "page") -> int:
    return max(1, request.args.get(name, 1, type=int) or 1)


def _last_page(total: int, per_page: int) -> int:
    return max(1, -(-total // per_page))


@blp.route("/")
def ladder() -> str:
    page = _page_arg()
    found = ladder_figures.standings(arena(), page=page, per_page=PER_PAGE)
    last = _last_page(found.total, PER_PAGE)
    return render_template(
        "pages/ladder.html",
        rows=found.items,
        names={r.rating.bot_id: r.name for r in found.items},
        status=(status := ladder_figures.status(arena())),
        threshold=PROVISIONAL_SIGMA,
        provisional_matches=matches_to_settle(status.hands) if status.hands else None,
        page=page,
        last=last,
    )


@blp.route("/ladder/tables")
def ladder_tables() -> str:
    page = _page_arg()
    found = store().list_tournaments(page=page, per_page=TABLES_PER_PAGE, ladder=True)
    return render_template(
        "pages/ladder_tables.html",
        tables=found.items,
        names=names(p for t in found.items for p in t.spec.participants),
        status=ladder_figures.status(arena()),
        page=page,
        last=_last_page(found.total, TABLES_PER_PAGE),
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
        rulings=disputes.listing(
            arena(), by=None, page=1, per_page=RULINGS_PER_PAGE, tournament_id=tournament_id
        ).items,
    )


@blp.route("/bots/<bot_id>")
def bot(bot_id: str) -> str:
    found = store().get_bot(bot_id)
    record = None if found is None else bots.with_presence(arena(), [found])[0]
    if record is None and store().rating(bot_id) is None:
        raise PageNotFoundError(f"There is no bot {bot_id}.")
    rating = ladder_figures.rating(arena(), bot_id)  # as shown: relative to house Normal
    versions = ladder_figures.versions(arena(), bot_id)
    selected = _selected(bot_id, versions, request.args.get("version"), rating)
    history = (
        []
        if selected is None
        else ladder_figures.rating_history(arena(), bot_id, selected.version)[1]
    )
    h2h_page = _page_arg("h2h_page")
    every = store().head_to_head(bot_id)
    h2h = Page.of(every, page=h2h_page, per_page=HEAD_TO_HEAD_PER_PAGE)
    recent = store().list_matches(page=1, per_page=RECENT, bot_id=bot_id).items
    fault_page = _page_arg("fault_page")
    faults = store().faults(bot_id, page=fault_page, per_page=FAULTS_PER_PAGE)
    divergence_page = _page_arg("divergence_page")
    divergent = store().divergences(bot_id, page=divergence_page, per_page=DIVERGENCES_PER_PAGE)
    played = gauntlets.listing(arena(), page=1, per_page=RECENT_GAUNTLETS, bot_id=bot_id).items
    shown = [
        bot_id,
        *(b for m in recent for b in m.seats),
        *(h.opponent for h in h2h.items),
        *(b for g in played for b in (g.gauntlet.candidate, g.gauntlet.baseline)),
    ]
    return render_template(
        "pages/bot.html",
        bot_id=bot_id,
        bot=record,
        rating=rating,
        versions=versions,
        selected=selected,
        chart=rating_chart(history),
        anchor=ANCHOR,
        rerating=store().rating_level() is None,
        new_version_sigma=NEW_VERSION_SIGMA,
        head_to_head=h2h.items,
        h2h_page=h2h_page,
        h2h_last=_last_page(h2h.total, HEAD_TO_HEAD_PER_PAGE),
        recent=recent,
        names=names(shown),
        faults=faults.items,
        fault_total=faults.total,
        fault_page=fault_page,
        fault_last=_last_page(faults.total, FAULTS_PER_PAGE),
        fault_cap=FAULTS_KEPT,
        embargoed=_embargoed({f.match_id for f in faults.items}),
        divergences=divergent.items,
        divergence_total=divergent.total,
        divergence_page=divergence_page,
        divergence_last=_last_page(divergent.total, DIVERGENCES_PER_PAGE),
        gauntlets=played,
    )


def _selected(
    bot_id: str, versions: list[Rating], asked: str | None, current: Rating | None
) -> Rating | None:
    """The version ``?version=`` asks for (default: the one played latest, if any is rated);
    a version never rated is answered with the 404 page."""
    if asked is None:
        if current is None:
            return None
        asked = current.version
    for rating in versions:
        if rating.version == asked:
            return rating
    raise PageNotFoundError(f'{bot_id} has no rated version "{asked}".')


def _embargoed(match_ids: set[str]) -> set[str]:
    """The matches among ``match_ids`` whose hands and decisions are still embargoed."""
    matches = store().get_matches(sorted(match_ids))
    return {m.id for m in matches if store().embargo(m) is not None}


@blp.route("/matches/<match_id>")
@expensive_read
def match(match_id: str) -> str:
    record = store().get_match(match_id)
    if record is None:
        raise PageNotFoundError(f"There is no match {match_id}.")
    shown = names(record.seats)
    embargo = store().embargo(record)
    blob = None if embargo is not None else store().replay_blob(match_id)
    data = None
    tournament = (
        None if record.tournament_id is None else store().get_tournament(record.tournament_id)
    )
    duplicate = tournament is not None and tournament.spec.format.duplicate
    if blob is not None:
        data = dict(viewer_data(blob))
        data["seats"] = [
            {**seat, "name": shown.get(seat["bot_id"], seat["name"])} for seat in data["seats"]
        ]
    return render_template(
        "pages/match.html",
        match=record,
        replay=data,
        names=shown,
        embargo=embargo,
        comparable=data is not None and bool(record.deal_label) and duplicate,
    )


@blp.route("/matches/<match_id>/divergence")
@expensive_read
def divergence(match_id: str) -> str | tuple[str, int]:
    """The bot's line of the match's deal against the others' (``?bot=``, and ``&seat=`` when
    it sat twice); a refusal (an embargoed deal, nothing to compare) is a page saying why."""
    bot_id = request.args.get("bot", "")
    if not bot_id:
        message = "say whose play to compare: add ?bot= with the id of one of the match's bots"
        return render_template("pages/refused.html", message=message, code="invalid"), 422
    try:
        found = divergences.divergence(
            arena(), match_id, bot=bot_id, seat=request.args.get("seat", type=int), operator=False
        )
    except NotFoundError as error:
        raise PageNotFoundError(f"{error.message[0].upper()}{error.message[1:]}.") from None
    except ArenaError as error:
        page = render_template("pages/refused.html", message=error.message, code=error.code)
        return page, status_of(type(error))
    report = found.report
    point = report.divergence
    return render_template(
        "pages/divergence.html",
        match=found.match,
        report=report,
        bot_id=bot_id,
        names=names(line.participant for line in report.lines),
        view=None if point is None else seat_view(point.view),
    )


@functools.lru_cache(maxsize=64)
def viewer_data(blob: bytes) -> dict[str, Any]:
    """The replay viewer's data of a packed log. A recorded log never changes, so each process
    computes it once for the last 64 logs viewed (the referee walks the whole match: about 50 ms
    for 13 hands). The result is shared: copy what you change."""
    return replay_data(read_log(unpack(blob)))
