"""replays.divergence on real logs: the four rotations of a duplicate deal, played in process."""

from __future__ import annotations

import dataclasses

import pytest

from referee import CardSet, DecisionKind, Play
from replays.divergence import compare, line_up
from tests.replays.divergence_support import rotations

ALIKE = ["lowest-a", "lowest-b", "lowest-c", "lowest-d"]
ONE_APART = ["lowest-a", "lowest-b", "high-x", "lowest-c"]
PASSES_APART = ["lowest-a", "lowest-b", "lowpass-x", "lowest-c"]


def test_bots_that_play_alike_never_diverge_and_score_the_same() -> None:
    logs = rotations(ALIKE)
    for seat, lines in enumerate(line_up(logs)):
        assert [line.participant for line in lines] == [ALIKE[(seat + r) % 4] for r in range(4)]
        for n in range(4):
            report = compare(seat, lines, n)
            assert report.divergence is None and report.cost == 0
        expected = [[hand.result.seats[seat].score for hand in log.hands] for log in logs]
        assert [list(line.points) for line in lines] == expected
        assert len({line.total for line in lines}) == 1


@pytest.mark.parametrize("seat", range(4))
def test_the_bot_that_plays_high_diverges_where_no_other_line_chose_its_card(seat: int) -> None:
    lines = line_up(rotations(ONE_APART))[seat]
    mine = next(n for n, line in enumerate(lines) if line.participant == "high-x")
    report = compare(seat, lines, mine)
    point = report.divergence
    assert point is not None and point.step.kind is DecisionKind.PLAY
    own = lines[mine].decisions[point.step]
    assert own.move == Play(seat, point.view.legal.highest()) and len(point.view.legal) > 1
    others = [line.decisions[point.step].move for n, line in enumerate(lines) if n != mine]
    assert own.move not in others
    # every earlier decision of the seat in the hand was shared by some other line
    for row in point.rows[:-1]:
        cards = row.cells[mine]
        assert cards is not None
        assert any(
            c is not None and c.cards == cards.cards for n, c in enumerate(row.cells) if n != mine
        )
    assert point.rows[-1].step == point.step and point.rows[-1].cells[mine] is not None
    totals = [line.total for line in lines]
    others_mean = (sum(totals) - totals[mine]) / 3
    assert report.cost == pytest.approx(others_mean - totals[mine])


def test_a_different_pass_is_the_first_divergence() -> None:
    lines = line_up(rotations(PASSES_APART))[1]
    mine = next(n for n, line in enumerate(lines) if line.participant == "lowpass-x")
    point = compare(1, lines, mine).divergence
    assert point is not None and point.step.label == "pass" and point.step.hand == 1
    assert [row.step for row in point.rows] == [point.step]
    assert point.rows[0].cells[mine] is not None
    assert point.rows[0].cells[mine].cards == tuple(point.view.hand.names()[:3])


def test_the_view_at_the_divergence_is_the_seats_own_and_hides_cards_it_did_not_hold() -> None:
    hidden = 0
    for seat, lines in enumerate(line_up(rotations(PASSES_APART))):
        for n in range(4):
            point = compare(seat, lines, n).divergence
            if point is None:
                continue
            made = lines[n].decisions[point.step]
            assert point.view == made.view and point.view.seat == seat
            assert point.view.decision is not None and point.view.decision.seat == seat
            for row in point.rows:
                held = lines[n].decisions[row.step].view.hand
                for cell in row.cells:
                    if cell is None:
                        continue
                    if cell.cards is None:
                        hidden += 1
                    else:
                        assert not CardSet.parse(" ".join(cell.cards)) - held
    assert hidden, "no line chose a card the compared seat did not hold: nothing was hidden"


def test_same_position_is_the_seats_observation_with_totals_aside() -> None:
    lines = line_up(rotations(ALIKE))[0]
    point = compare(0, lines, 0)
    assert point.divergence is None
    first = min(lines[0].decisions)
    assert lines[0].decisions[first].view == lines[1].decisions[first].view


def test_logs_of_different_deals_are_not_lined_up() -> None:
    one, other = rotations(ALIKE)[0], rotations(ALIKE, deal=1)[0]
    with pytest.raises(ValueError, match="not rotations of one deal"):
        line_up([one, other])
    assert line_up([one, dataclasses.replace(one, match_id="copy")])[0][1].match_id == "copy"
