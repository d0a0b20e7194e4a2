"""The Play page's languages without a browser: the catalogs hold every message of the
sources, translated, with no placeholder the page does not fill, and the game's vocabulary; a
request's language (switch, cookie, Accept-Language); the rules page's head; the refusal as
code and parameters; the favicon (test_play_rules.py reads the rules against the referee)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from arena.human_view import refusal_json
from referee import CardSet, Reason, Refusal, Suit
from service.pages.i18n import LANGUAGES, SOURCE, catalog_path, read_catalog, translations
from tests.pages.conftest import Arena

ROOT = Path(__file__).resolve().parents[2]
TRANSLATED = [language for language in LANGUAGES if language != SOURCE]
VOCABULARY = {
    "zh": ["猪", "羊", "变压器", "亮牌"],
    "es": ["cerdo", "oveja", "transformador"],
    "it": ["maiale", "pecora", "trasformatore"],
}
"""The game's words each catalog must use, as the source documents do."""
PLACEHOLDER = re.compile(r"\{(\w+)\}")


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str | None, str], str]:
    """Every message of the sources, as `pybabel extract` finds it (docs/PAGES.md)."""
    template = tmp_path_factory.mktemp("catalogs") / "messages.pot"
    subprocess.run(
        [sys.executable, "-m", "babel.messages.frontend", "extract",
         "-F", "service/pages/babel.cfg", "-o", str(template), "."],
        cwd=ROOT, check=True, capture_output=True,
    )  # fmt: skip
    from babel.messages.pofile import read_po

    with template.open("rb") as source:
        return {(m.context, str(m.id)): str(m.id) for m in read_po(source) if m.id}


@pytest.mark.parametrize("language", TRANSLATED)
def test_each_catalog_translates_exactly_the_messages_of_the_sources(
    extracted: dict[tuple[str | None, str], str], language: str
) -> None:
    catalog = read_catalog(language)
    held = {(m.context, str(m.id)): m for m in catalog if m.id}
    assert sorted(set(extracted) - set(held)) == [], "missing: run the catalog update"
    assert sorted(set(held) - set(extracted)) == [], "obsolete: run the catalog update"
    for key, message in held.items():
        forms = message.string if isinstance(message.string, tuple) else (message.string,)
        assert all(forms), f"{language}: {key} is not translated (in each plural form)"
        assert not message.fuzzy, f"{language}: {key} is fuzzy"
        # a language may leave a value out (Spanish needs no singular suit), never add one
        filled = set(PLACEHOLDER.findall(key[1]))
        assert set(PLACEHOLDER.findall(" ".join(forms))) <= filled, (
            f"{language}: {key} has a placeholder the page does not fill"
        )


@pytest.mark.parametrize("language", TRANSLATED)
def test_each_catalog_speaks_the_game_s_vocabulary(language: str) -> None:
    text = catalog_path(language).read_text(encoding="utf-8").lower()
    for word in VOCABULARY[language]:
        assert word in text, f"{language} lacks {word}"
    pig = translations(language).gettext("Pig")
    assert pig.lower() == VOCABULARY[language][0]


@pytest.mark.parametrize(
    ("headers", "cookies", "query", "language"),
    [
        ({"Accept-Language": "zh-CN,zh;q=0.9"}, {}, "", "zh"),
        ({"Accept-Language": "es-AR,es;q=0.9,en;q=0.4"}, {}, "", "es"),
        ({"Accept-Language": "fr-FR,fr;q=0.9"}, {}, "", "en"),
        ({"Accept-Language": "fr-FR,fr;q=0.9,it;q=0.5"}, {}, "", "it"),
        ({"Accept-Language": "zh-CN"}, {"lang": "it"}, "", "it"),
        ({"Accept-Language": "zh-CN"}, {"lang": "it"}, "?lang=es", "es"),
        ({"Accept-Language": "es"}, {"lang": "xx"}, "?lang=xx", "es"),
    ],
)
def test_the_page_speaks_the_switch_s_then_the_cookie_s_then_the_browser_s_language(
    arena: Arena, headers: dict[str, str], cookies: dict[str, str], query: str, language: str
) -> None:
    answer = requests.get(f"{arena.url}/play{query}", headers=headers, cookies=cookies, timeout=10)
    assert answer.status_code == 200
    assert f'<html lang="{language}">' in answer.text


def test_the_switch_keeps_its_choice_in_a_cookie(arena: Arena) -> None:
    answer = requests.get(f"{arena.url}/play?lang=zh", timeout=10)
    assert answer.cookies.get("lang") == "zh"
    assert "Max-Age=31536000" in answer.headers["Set-Cookie"]
    assert requests.get(f"{arena.url}/play?lang=xx", timeout=10).cookies.get("lang") is None


def test_the_rules_page_heads_the_rules_with_the_variants_chosen(arena: Arena) -> None:
    answer = requests.get(f"{arena.url}/play/rules?variants=teams,pass_3&lang=es", timeout=10)
    assert answer.status_code == 200
    listed = re.findall(r'<li data-variant="(\w+)"><strong>([^<]+)</strong>', answer.text)
    assert listed == [("pass_3", "Pasar 3 cartas"), ("teams", "Por parejas")]
    assert "los compañeros se sientan enfrente" in answer.text
    assert "<h1>Cómo se juega al Gong Zhu</h1>" in answer.text
    assert "<table>" in answer.text
    assert 'class="setting"' not in answer.text  # nothing set besides the variants
    standard = requests.get(f"{arena.url}/play/rules?variants=bogus", timeout=10)
    assert 'id="profile-standard"' in standard.text
    missing = requests.get(f"{arena.url}/play/rules?game=g_nothere", timeout=10)
    assert missing.status_code == 404


def test_a_refusal_travels_as_its_code_and_parameters() -> None:
    follow = Reason(Refusal.MUST_FOLLOW_SUIT, seat=0, suit=Suit.SPADES)
    assert refusal_json(follow) == {"code": "must_follow_suit", "seat": 0, "suit": "S"}
    exposed = Reason(
        Refusal.EXPOSED_FIRST_TRICK, seat=2, cards=CardSet.parse(["QS"]), suit=Suit.SPADES
    )
    assert refusal_json(exposed) == {
        "code": "exposed_first_trick",
        "seat": 2,
        "cards": ["QS"],
        "suit": "S",
    }


def test_the_pages_have_a_favicon(arena: Arena) -> None:
    page = requests.get(f"{arena.url}/play", timeout=10).text
    link = re.search(r'<link rel="icon" type="image/svg\+xml" href="([^"]+)">', page)
    assert link is not None
    icon = requests.get(arena.url + link.group(1), timeout=10)
    assert icon.status_code == 200
    assert icon.headers["Content-Type"].startswith("image/svg+xml")
    assert icon.text.startswith("<svg")
