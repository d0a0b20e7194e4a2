"""A match job that fails every time (here: a seat's bot is missing from the store) ends, after
its retries, as a failed match with its reason; the tournament ends ``done_with_failures`` and
says so on its page and in the API, and one operator command plays the failed matches again."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

from click.testing import CliRunner
from rq.job import Job

from arena.config import Config
from arena.queue import MATCH_RETRIES, match_job_id
from arena.records import MatchStatus, TournamentStatus
from arena.store import Store
from bot_sdk.examples.lowest_card import LowestCard
from service import create_app
from service.cli import main
from tests.pages.pages_support import serving
from tests.reliability.accounting import account
from tests.workers.crashes import wait_for
from tests.workers.test_worker_tournaments import _logs, _register, _start

TOKEN = "operator-token-of-the-test"


def _status(store: Store, tournament_id: str) -> TournamentStatus | None:
    tournament = store.get_tournament(tournament_id)
    return None if tournament is None else tournament.status


def test_matches_failing_every_time_end_failed_and_are_played_again_on_request(
    config: Config, store: Store, start_worker: Callable[[], Any]
) -> None:
    config = dataclasses.replace(config, operator_token=TOKEN)
    with ExitStack() as stack:
        bot = _register(store, stack, LowestCard, "lowest")
        store.redis.rename(f"gz:bot:{bot}", "hidden")  # every match's seat 0 cannot be seated
        tournament_id = _start(config, store, [bot])  # with three house bots: 4 matches
        start_worker()
        wait_for(
            lambda: _status(store, tournament_id) is TournamentStatus.DONE_WITH_FAILURES,
            60,
            "the tournament to end with failures",
        )
        tournament = store.get_tournament(tournament_id)
        assert tournament is not None and (tournament.done, tournament.total) == (0, 4)
        reason = f"LookupError: participant {bot!r} is neither a house bot nor a stored bot"
        assert [f.reason for f in tournament.failures] == [reason] * 4
        for failure in tournament.failures:
            match = store.get_match(failure.match_id)
            assert match is not None and match.status is MatchStatus.FAILED
            assert match.failure == reason and match.result is None
            job = Job.fetch(match_job_id(match.id), connection=store.redis)
            assert job.retries_left == 0  # run 1 + MATCH_RETRIES times before it was failed
        failed = [f.match_id for f in tournament.failures]

        client = create_app(config).test_client()
        shown = client.get(f"/api/tournaments/{tournament_id}").get_json()
        assert shown["status"] == "done_with_failures"
        assert shown["progress"] == {"done": 0, "failed": 4, "total": 4}
        assert shown["failures"] == [{"match_id": m, "reason": reason} for m in failed]
        assert client.get(f"/api/matches/{failed[0]}").get_json()["failure"] == reason
        page = client.get(f"/tournaments/{tournament_id}").get_data(as_text=True)
        assert "done_with_failures" in page and "4 failed" in page
        assert page.count("is neither a house bot nor a stored bot") == 4
        anyone = client.post(f"/api/tournaments/{tournament_id}/requeue-failed")
        assert anyone.status_code == 401

        store.redis.rename("hidden", f"gz:bot:{bot}")  # the cause is fixed
        with serving(create_app(config)) as url:
            command = ["tournaments", "requeue-failed", tournament_id, "--url", url]
            result = CliRunner().invoke(main, [*command, "--token", TOKEN])
            assert result.exit_code == 0, result.output
            assert json.loads(result.output)["status"] in {"running", "done"}
            wait_for(
                lambda: _status(store, tournament_id) is TournamentStatus.DONE,
                60,
                "the failed matches to be played again",
            )
            again = CliRunner().invoke(main, [*command, "--token", TOKEN])
            assert again.exit_code == 1 and "has no failed match" in again.output
    tournament = store.get_tournament(tournament_id)
    assert tournament is not None and tournament.failures == ()
    assert len(_logs(config, store, tournament_id)) == 4  # every replay verifies
    accounting = account(store, tournament_id)
    assert (accounting.planned, accounting.recorded) == (4, 4)
    assert (accounting.lost, accounting.duplicated) == (0, 0)
    for match_id in failed:
        job = Job.fetch(match_job_id(match_id), connection=store.redis)
        assert job.retries_left == MATCH_RETRIES  # queued afresh, and played at once
