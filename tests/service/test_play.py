"""Human games over the API: a match to its end, the referee's refusals, stale and duplicate
submits, Next hand, difficulty changes, hints, registered bots as opponents, the replay."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask.testing import FlaskClient

from arena.store import Store
from referee import CardSet, Rules, deal_from_seed
from replays.deals import DealScheme, DealSource, commitment_of, parse_secret
from replays.integrity import unpack
from replays.upgrade import read_log
from replays.verify import verify
from tests.service.play_support import ALL_EASY, one_hand, referee_game, seed_where
from tests.service.service_support import bearer, register

Json = dict[str, Any]


def start(client: FlaskClient, **body: Any) -> Json:
    response = client.post("/api/play", json={"opponents": ALL_EASY, "seat": 0, **body})
    assert response.status_code == 201, response.json
    state: Json = response.json
    return state


def post(client: FlaskClient, state: Json, path: str, **body: Any) -> Any:
    return client.post(
        f"/api/play/{state['id']}/{path}", json={"version": state["version"], **body}
    )


def answer(client: FlaskClient, state: Json) -> Json:
    """Make the person's pending decision: expose nothing, pass the first 3, or play the first
    playable card; or press Next hand."""
    decision = state["decision"]
    if decision is None:
        response = post(client, state, "next-hand")
    elif decision["kind"] == "play":
        card = next(c["card"] for c in state["hand"] if c["playable"])
        response = post(client, state, "move", card=card)
    else:
        cards = [c["card"] for c in state["hand"]][: decision["count"] or 0]
        response = post(client, state, "move", cards=cards)
    assert response.status_code == 200, response.json
    result: Json = response.json
    return result


def play_to_the_end(client: FlaskClient, state: Json) -> Json:
    while state["outcome"] is None:
        state = answer(client, state)
    return state


def test_a_match_is_played_to_its_end_recorded_unrated_and_verifiable(
    client: FlaskClient, store: Store
) -> None:
    state = start(client, rules=Rules(fixed_hands=2).to_json(), seed="5")
    assert state["seat"] == 0 and [s["position"] for s in state["seats"]] == [
        "bottom", "right", "top", "left",
    ]  # fmt: skip
    hands_seen = []
    while state["outcome"] is None:
        if state["hand_result"] is not None:
            hands_seen.append(state["hand_result"]["hand_number"])
        state = answer(client, state)
    assert hands_seen == [1]
    stored = store.get_human_game(state["id"])
    assert stored is not None and stored.recorded
    game = referee_game(stored)
    assert game.is_over() and game.outcome is not None
    assert state["outcome"]["totals"] == list(game.outcome.totals)
    assert state["hand_result"]["scores"] == list(game.results[-1].scores)
    log = read_log(unpack(store.replay_blob(state["match_id"]) or b""))
    assert log.extra["human"] is True and not log.rated and log.tournament_id is None
    assert [s.kind for s in log.seats] == ["human", "house", "house", "house"]
    assert store.rating("house:easy") is None
    assert store.ladder(page=1, per_page=10).total == 0
    verified = client.post(f"/api/matches/{state['match_id']}/verify").json
    assert verified["ok"] is True and verified["hands"] == 2
    page = client.get(f"/matches/{state['match_id']}")
    assert page.status_code == 200 and b"a human game on the Play page" in page.data


def test_a_game_is_dealt_from_a_secret_committed_at_the_start_and_revealed_at_the_end(
    client: FlaskClient, store: Store
) -> None:
    state = start(client, rules=one_hand())
    deals = state["deals"]
    assert deals["scheme"] == "committed" and deals["secret"] is None and deals["seed"] is None
    assert "secret" not in json.dumps({k: v for k, v in state.items() if k != "deals"})
    stored = store.get_human_game(state["id"])
    assert stored is not None and stored.deals.secret is not None
    assert stored.deals.secret not in json.dumps(state)  # not shown while the game is played
    commitment = deals["commitment"]
    state = play_to_the_end(client, state)
    secret = parse_secret(state["deals"]["secret"])
    assert commitment_of(secret) == commitment
    log = read_log(unpack(store.replay_blob(state["match_id"]) or b""))
    assert log.deals.scheme is DealScheme.COMMITTED and log.deals.commitment == commitment
    result = verify(log)
    assert result.ok and result.deals_checked  # the log carries its secret: nothing else needed
    assert client.post(f"/api/matches/{state['match_id']}/verify").json["deals_checked"]


def test_a_seed_chosen_by_the_player_is_practice_and_the_replay_says_so(
    client: FlaskClient, store: Store
) -> None:
    state = play_to_the_end(client, start(client, rules=one_hand(), seed="my-seed"))
    assert state["deals"] == {"scheme": "practice", "commitment": None, "secret": None,
                              "seed": "my-seed"}  # fmt: skip
    log = read_log(unpack(store.replay_blob(state["match_id"]) or b""))
    assert log.deals == DealSource.practice("my-seed")
    assert log.hands[0].deal == tuple(CardSet(m) for m in deal_from_seed("my-seed", 1))
    assert verify(log).deals_checked


def test_the_state_shows_only_the_persons_hand_and_the_referees_reasons(
    client: FlaskClient,
) -> None:
    state = start(client, rules=one_hand(), seed=seed_where(seat=0, exposable=True))
    assert state["phase"] == "exposing" and state["decision"]["kind"] == "expose"
    exposable = {c["card"]: c["effect"] for c in state["hand"] if c["playable"]}
    assert exposable and set(exposable) <= {"AH", "QS", "JD", "TC"}
    assert {"QS": "Pig ×2", "JD": "Goat ×2", "AH": "Hearts ×2", "TC": "Transformer ×2"}.items() >= (
        exposable.items()
    )
    assert "hands" not in state and all("hand" not in s for s in state["seats"])
    state = answer(client, state)  # expose nothing: all exposures are revealed together
    assert state["events"][0]["kind"] == "exposed" and len(state["events"][0]["exposed"]) == 4
    while not any(c["reason"] for c in state["hand"]):
        state = answer(client, state)
    version, hand = state["version"], state["hand"]
    refused = next(c for c in hand if not c["playable"])
    assert refused["reason"].startswith(("You must follow", "Exposed "))
    response = post(client, state, "move", card=refused["card"])
    assert response.status_code == 422 and response.json["error"] == "illegal_move"
    assert response.json["message"] == refused["reason"]
    again = client.get(f"/api/play/{state['id']}").json
    assert again["version"] == version and again["hand"] == hand


def test_nothing_to_expose_is_said_and_the_phase_skipped(client: FlaskClient) -> None:
    state = start(client, rules=one_hand(), seed=seed_where(seat=0, exposable=False))
    assert state["phase"] == "playing"
    assert state["notice"] == "You have no card to expose this hand"


def test_a_stale_or_duplicate_submit_is_refused_and_changes_nothing(client: FlaskClient) -> None:
    state = start(client, rules=one_hand(), seed=seed_where(seat=0, exposable=False))
    card = next(c["card"] for c in state["hand"] if c["playable"])
    first = post(client, state, "move", card=card)
    assert first.status_code == 200
    duplicate = post(client, state, "move", card=card)
    assert duplicate.status_code == 409 and duplicate.json["error"] == "conflict"
    assert "reload" in duplicate.json["message"]
    now = client.get(f"/api/play/{state['id']}").json
    assert now["version"] == first.json["version"] and now["moves"] == first.json["moves"]


def test_events_start_with_the_persons_move_and_show_the_computers_plays(
    client: FlaskClient,
) -> None:
    state = start(client, rules=one_hand(), seed=seed_where(seat=0, exposable=False))
    card = next(c["card"] for c in state["hand"] if c["playable"])
    after = post(client, state, "move", card=card).json
    events = after["events"]
    assert events[0] == {**events[0], "kind": "play", "seat": 0, "card": card}
    assert [e["move"] for e in events] == list(range(state["moves"], after["moves"]))
    assert all(e["kind"] == "play" for e in events)
    since = client.get(f"/api/play/{state['id']}?since={state['moves']}").json
    assert since["events"] == events


def test_next_hand_waits_for_the_person_and_the_difficulty_changes_from_the_next_hand(
    client: FlaskClient, store: Store
) -> None:
    state = start(client, rules=Rules(fixed_hands=2).to_json())
    assert post(client, state, "next-hand").status_code == 409
    changed = post(client, state, "difficulty", level="normal").json
    assert changed["difficulty"] == {"level": "easy", "next": "normal"}
    state = changed
    while state["hand_result"] is None:
        state = answer(client, state)
    assert state["decision"] is None
    waiting = post(client, state, "move", card="2C")
    assert waiting.status_code == 409 and "Next hand" in waiting.json["message"]
    state = answer(client, state)  # Next hand
    assert state["difficulty"] == {"level": "normal", "next": None}
    stored = store.get_human_game(state["id"])
    assert stored is not None and stored.level_changes == ((2, "normal"),)
    state = play_to_the_end(client, state)
    log = read_log(unpack(store.replay_blob(state["match_id"]) or b""))
    assert log.extra["level_changes"] == [[2, "normal"]]
    assert post(client, state, "next-hand").status_code == 409


def test_hints_are_legal_moves(client: FlaskClient) -> None:
    state = start(client, rules=one_hand(), seed=seed_where(seat=0, exposable=True))
    exposable = {c["card"] for c in state["hand"] if c["playable"]}
    hint = client.get(f"/api/play/{state['id']}/hint").json
    assert hint["kind"] == "expose" and set(hint["cards"]) <= exposable
    state = answer(client, state)
    while state["decision"] is None or state["decision"]["kind"] != "play":
        state = answer(client, state)
    hint = client.get(f"/api/play/{state['id']}/hint").json
    playable = {c["card"] for c in state["hand"] if c["playable"]}
    assert hint["kind"] == "play" and len(hint["cards"]) == 1 and hint["cards"][0] in playable


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/play/g_nope"),
        ("get", "/api/play/g_nope/hint"),
        ("post", "/api/play/g_nope/move"),
        ("post", "/api/play/g_nope/next-hand"),
    ],
)
def test_an_unknown_game_is_a_404_in_the_error_shape(
    client: FlaskClient, method: str, path: str
) -> None:
    response = getattr(client, method)(
        path, **({"json": {"version": 1}} if method == "post" else {})
    )
    assert response.status_code == 404 and response.is_json
    assert response.json["error"] == "not_found" and "g_nope" in response.json["message"]
    assert client.get("/play/g_nope").status_code == 404


def test_registered_bots_play_only_when_their_owners_allow_it(
    client: FlaskClient, bot_url: str, store: Store
) -> None:
    bot = register(client, bot_url)
    bot_id, token = bot["bot"]["id"], bot["token"]
    assert bot["bot"]["allow_human_games"] is False
    opponents = ["house:easy", bot_id, "house:easy"]
    refused = client.post("/api/play", json={"opponents": opponents})
    assert refused.status_code == 403 and refused.json["error"] == "forbidden"
    assert "does not allow human games" in refused.json["message"]
    assert [o["id"] for o in client.get("/api/play/opponents").json] == [
        "house:easy", "house:normal", "house:hard",
    ]  # fmt: skip
    allowed = client.patch(
        f"/api/bots/{bot_id}", json={"allow_human_games": True}, headers=bearer(token)
    )
    assert allowed.status_code == 200 and allowed.json["allow_human_games"] is True
    assert client.get("/api/play/opponents").json[-1] == {
        "id": bot_id,
        "name": "alpha",
        "kind": "bot",
    }
    state = start(client, opponents=opponents, rules=one_hand())
    assert state["seats"][2]["name"] == "alpha" and state["seats"][2]["kind"] == "bot"
    state = play_to_the_end(client, state)
    log = read_log(unpack(store.replay_blob(state["match_id"]) or b""))
    assert log.seats[2].kind == "http" and log.faults == (0, 0, 0, 0)
    assert all(d.request_sha256 for h in log.hands for d in h.decisions if d.seat == 2)
    unknown = client.post("/api/play", json={"opponents": ["house:easy", "bot_nope", "house:easy"]})
    assert unknown.status_code == 422 and "opponents" in unknown.json["errors"]


def test_starting_games_is_rate_limited_per_client(client: FlaskClient) -> None:
    for _ in range(20):
        start(client)
    response = client.post("/api/play", json={"opponents": ALL_EASY, "seat": 0})
    assert response.status_code == 429 and response.json["error"] == "rate_limited"
    assert "20 per 1 minute" in response.json["message"]


def test_the_hand_scores_shown_during_a_hand_end_at_the_referees_with_the_qd_bonus(
    client: FlaskClient,
) -> None:
    rules = {**Rules.with_variants("qd_bonus", "no_exposure").to_json(), "fixed_hands": 1}
    with_bonus = 0
    for seed in map(str, range(20)):  # the house bots draw their own seeds: play until it shows
        state = play_to_the_end(client, start(client, rules=rules, seed=seed))
        result = state["hand_result"]
        assert [s["hand_score"] for s in state["seats"]] == result["scores"]
        with_bonus += any(s["qd_bonus"] for s in result["seats"])
        if with_bonus == 2:
            break
    assert with_bonus == 2  # the bonus counted in two of these hands
