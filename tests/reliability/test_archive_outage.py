"""An archive outage under the README's run command (``gongzhu run``: its own Redis, the web
service, two workers and cron with the Procfile's settings, the demo's bots in the ladder): the
archive's directory taken away for 17 s while a tournament and the ladder's tables play
(``benchmarks/archive_outage.py``, whose figures docs/RELIABILITY.md gives). It takes minutes:
``pytest -m chaos tests/reliability``, deselected from the default run."""

from __future__ import annotations

import pytest

from benchmarks import archive_outage


@pytest.mark.chaos
def test_a_17_s_archive_outage_under_the_run_command_fails_no_match_and_plays_none_twice() -> None:
    args = archive_outage.arguments(["--wait-s", "120"])
    seen = archive_outage.run(args)
    archive_outage.report(seen, args)
    assert seen.in_flight and seen.recorded_in_outage  # matches were played and recorded
    assert seen.most_held > 0
    assert seen.failed == set() and seen.played_again == []
    assert set(seen.ready) == {"degraded"}  # /ready said so throughout
    # every held log in the archive within a recovery interval (GONGZHU_RECOVERY_S) and its job
    assert seen.drained_after is not None and seen.drained_after < 15 + 15
    assert seen.tournament == "done (20/20)"
    assert seen.tables and "done_with_failures" not in seen.tables
