"""docs/API.md's examples use ids of the shapes the arena really makes: no placeholder ids."""

from __future__ import annotations

import re
from pathlib import Path

from arena.pairing import PlannedMatch
from arena.store import new_id

API = Path(__file__).resolve().parents[2] / "docs" / "API.md"


def _shape(real: str) -> str:
    """A regular expression of ids shaped like ``real`` (hex digits vary)."""
    return re.sub(r"[0-9a-f]{12}", "[0-9a-f]{12}", re.escape(real))


def test_every_id_in_api_md_has_the_shape_of_a_real_one() -> None:
    tournament = new_id("t")
    shapes = {
        "bot": _shape(new_id("bot")),
        "tournament": _shape(tournament),
        "match": _shape(PlannedMatch(0, 0, 0, ("a", "b", "c", "d")).match_id(tournament)),
    }
    text = API.read_text()
    assert "m_" not in re.sub(r"\w+m_", "", text), "a match id of a shape the arena never makes"
    ids = [i for i in re.findall(r"\b(?:bot|t)_[\w…-]*", text) if i not in ("bot_sdk", "bot_id")]
    assert ids, "API.md shows no ids"
    for found in ids:
        matched = [name for name, shape in shapes.items() if re.fullmatch(shape, found)]
        assert matched, f"{found!r} is not the shape of a real bot, tournament or match id"
    assert any(re.fullmatch(shapes["match"], i) for i in ids), "show a real match id"
