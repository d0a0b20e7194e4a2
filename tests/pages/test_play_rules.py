"""The Play page's rules, written for players, in each language, read against the referee: every
value, exposure effect and worked example on the page is the referee's scoring of those cards,
the match's end and each variant's figures are the rules profile's; cards are written with their
suit symbols, never as codes, and nothing speaks of the software. Each translation has the
English page's sections, tables, cards and figures."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
import requests

from referee import CardSet, Rules, Variant
from referee.cards import EXPOSABLE_CARDS, HEARTS_MASK, SCORING_CARDS, parse_card
from referee.game import PASS_COUNT
from referee.rules import DEFAULT_LOSING_THRESHOLD, HAND_CAP, PLUS_1000
from referee.scoring import QD_TRICK_BONUS, score_seat
from service.pages.i18n import LANGUAGES, SOURCE, translations
from service.pages.play import RULE_BOOKS, VARIANTS
from tests.pages.conftest import Arena

RANK = r"(10|[2-9JQKA])"
SUIT = "♣♦♥♠"
CARD = re.compile(rf"{RANK}([{SUIT}])|([{SUIT}]){RANK}")
"""A card as the rules write it: Q♠, 10♣, or in Chinese suit first, ♠Q."""
RANGE = re.compile(rf"({CARD.pattern})\s*–\s*({CARD.pattern})")
CODE = re.compile(r"\b(?:[2-9TJQKA]|10)[CDHS]\b")
"""A card as the software writes it: QS, TC."""
DEVELOPER = {
    "en": ["engine", "referee", "seed", ".md", "profile"],
    "es": ["motor", "árbitro", "seed", ".md", "perfil"],
    "it": ["motore", "arbitro", "seed", ".md", "profilo"],
    "zh": ["引擎", "裁判", "seed", ".md"],
}
"""Words of the software's own rule book that players have no use for."""
NUMBER = re.compile(r"[−+-]?\d+")
TRANSLATED = [language for language in LANGUAGES if language != SOURCE]


def _card(match: re.Match[str]) -> str:
    rank, suit = (match[1], match[2]) if match[1] else (match[4], match[3])
    return ("T" if rank == "10" else rank) + "CDHS"[SUIT.index(suit)]


def cards(text: str) -> CardSet:
    """The cards ``text`` names; ``2♥–A♥`` is every heart from the 2 to the ace."""
    found = CardSet()
    for span in RANGE.finditer(text):
        low, high = (parse_card(_card(m)) for m in CARD.finditer(span[0]))
        found |= CardSet(sum(1 << n for n in range(low, high + 1)))
    named = {_card(m) for m in CARD.finditer(RANGE.sub("", text))}
    return found | CardSet.parse(sorted(named))


def numbers(text: str) -> set[int]:
    """The figures of ``text`` (its cards' ranks left out): −200, +50, ×2's 2."""
    return {int(n.replace("−", "-")) for n in NUMBER.findall(CARD.sub("", text))}


def plain(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def table_rows(book: str) -> list[list[list[str]]]:
    """Each table of the page, as rows of cells' HTML, the header row left out."""
    return [
        [
            re.findall(r"<t[dh]>(.*?)</t[dh]>", row, re.S)
            for row in re.findall(r"<tr>(.*?)</tr>", t, re.S)
        ][1:]
        for t in re.findall(r"<table>(.*?)</table>", book, re.S)
    ]


def book(page: str) -> str:
    """The rules themselves, below the profile of the game."""
    return page.split('<div class="book"', 1)[1]


def sections(page: str) -> list[str]:
    """The rules' text by their second-level headings: the cards, a hand, the scoring cards,
    the exposures, a hand's score, the match's end, the variants."""
    return [plain(part) for part in re.split(r"<h2[^>]*>", book(page))[1:]]


def seat(taken: str, exposed: str = "") -> int:
    return score_seat(CardSet.parse(taken), CardSet.parse(exposed)).score


@pytest.fixture(scope="module")
def pages(arena: Arena) -> dict[str, str]:
    """The rules page in each language: its ``<main>``'s HTML."""
    found = {}
    for language in LANGUAGES:
        answer = requests.get(f"{arena.url}/play/rules?lang={language}", timeout=10)
        assert answer.status_code == 200
        main = re.search(r"<main>(.*)</main>", answer.text, re.S)
        assert main is not None
        found[language] = main.group(1)
    return found


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_rules_speak_to_players_with_card_symbols(pages: dict[str, str], language: str) -> None:
    text = plain(pages[language])
    assert CODE.findall(text) == []
    assert [word for word in DEVELOPER[language] if word in text.lower()] == []
    assert not re.search(r"\w_\w", text)  # no variant by its identifier
    assert "<code>" not in pages[language]
    assert set(SUIT) <= set(text)
    wanted = EXPOSABLE_CARDS | CardSet.parse("2S")
    assert cards(text) & wanted == wanted
    assert pages[language].count('<span class="red">') >= 13  # ♥ and ♦ are red


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_scoring_card_is_worth_what_the_referee_scores(
    pages: dict[str, str], language: str
) -> None:
    values = table_rows(book(pages[language]))[0]
    listed = CardSet()
    for shown, worth in values:
        held = cards(plain(shown))
        assert held and not held & listed, shown
        listed |= held
        for card in held.names():
            scored = score_seat(CardSet.parse(card))
            expected = {scored.score}
            if card == "TC":  # alone, and beside another scoring card
                expected.add(score_seat(CardSet.parse("TC 2H")).multiplier)
            assert expected <= numbers(plain(worth)), (card, worth)
    assert listed == SCORING_CARDS
    hearts = sum(seat(card) for card in CardSet(HEARTS_MASK).names())
    assert hearts == -200 and "−200" in sections(pages[language])[2]


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_exposure_does_what_the_referee_scores(pages: dict[str, str], language: str) -> None:
    exposures = table_rows(book(pages[language]))[1]
    hearts = CardSet(HEARTS_MASK).names()
    expected = {
        "AH": {sum(seat(h, "AH") for h in hearts), sum(seat(h) for h in hearts)},
        "QS": {seat("QS", "QS"), seat("QS")},
        "JD": {seat("JD", "JD"), seat("JD")},
        "TC": {
            seat("TC", "TC"),
            seat("TC"),
            score_seat(CardSet.parse("TC 2H"), CardSet.parse("TC")).multiplier,
            score_seat(CardSet.parse("TC 2H")).multiplier,
        },
    }
    shown = {}
    for card, *effect in exposures:
        (name,) = cards(plain(card)).names()
        shown[name] = numbers(plain(" ".join(effect)))
    assert shown.keys() == expected.keys() == set(EXPOSABLE_CARDS.names())
    for name, figures in expected.items():
        assert figures <= shown[name], name


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_worked_example_is_the_referee_s_score(pages: dict[str, str], language: str) -> None:
    examples = table_rows(book(pages[language]))[2]
    assert len(examples) >= 13
    for taken, exposed, score in examples:
        claimed = re.search(r"<strong>(.*?)</strong>", score)
        assert claimed is not None, score
        scored = score_seat(cards(plain(taken)), cards(plain(exposed)))
        assert numbers(claimed.group(1)) == {scored.score}, (plain(taken), plain(exposed))


@pytest.mark.parametrize("language", LANGUAGES)
def test_all_hearts_and_the_match_s_end_are_the_referee_s(
    pages: dict[str, str], language: str
) -> None:
    said = sections(pages[language])
    all_hearts = CardSet(HEARTS_MASK)
    with_pig = all_hearts | CardSet.parse("QS")
    reversal = {
        score_seat(all_hearts).hearts,
        score_seat(all_hearts, CardSet.parse("AH")).hearts,
        score_seat(with_pig).pig,
        score_seat(with_pig, CardSet.parse("QS")).pig,
    }
    assert reversal <= numbers(said[4])
    standard = Rules()
    assert {standard.losing_threshold, standard.max_hands} <= numbers(said[5])


VARIANT_FIGURES = {
    Variant.PASS_3: {PASS_COUNT},
    Variant.TARGET_500: {
        Rules.with_variants("target_500").losing_threshold,
        DEFAULT_LOSING_THRESHOLD,
    },
    Variant.END_AT_PLUS_1000: {PLUS_1000},
    Variant.QD_BONUS: {QD_TRICK_BONUS},
    Variant.HAND_CAP_800: {HAND_CAP},
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_variant_is_on_the_page_with_the_referee_s_figures(
    pages: dict[str, str], language: str
) -> None:
    listed = dict(re.findall(r'<div data-variant="(\w+)">(.*?)</div>', pages[language], re.S))
    assert list(listed) == [v.value for v in Variant]
    for variant, figures in VARIANT_FIGURES.items():
        assert figures <= numbers(plain(listed[variant.value])), variant


def _lobby_names(arena: Arena, language: str) -> Iterator[tuple[str, str]]:
    page = requests.get(f"{arena.url}/play?lang={language}", timeout=10).text
    for value, name in re.findall(r'value="(\w+)"> <strong>(.*?)</strong>', page):
        yield value, plain(name)


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_lobby_names_each_variant_in_the_language(arena: Arena, language: str) -> None:
    english = dict(_lobby_names(arena, SOURCE))
    assert list(english) == [v.value for v in Variant]
    assert english[Variant.TEAMS.value] == VARIANTS[Variant.TEAMS].name
    named = dict(_lobby_names(arena, language))
    assert named.keys() == english.keys()
    assert [v for v, name in named.items() if name == english[v]] == []
    assert named[Variant.TEAMS.value] == translations(language).gettext("Teams")


def _shape(text: str) -> dict[str, object]:
    """What a translation keeps of the English rules: its headings' levels, its numbered
    items, its tables' rows, its cards and its figures."""
    lines = text.splitlines()
    return {
        "headings": [line.split(" ")[0] for line in lines if line.startswith("#")],
        "items": [line.split(".")[0].strip() for line in lines if re.match(r"\s*\d+\. ", line)],
        "rows": sum(1 for line in lines if line.startswith("|")),
        "cards": cards(text),
        "figures": numbers(re.sub(r"^\s*\d+\. ", "", text, flags=re.M)),
    }


@pytest.mark.parametrize("language", TRANSLATED)
def test_each_translation_keeps_the_english_rules_sections_cards_and_figures(
    language: str,
) -> None:
    english = (RULE_BOOKS / f"{SOURCE}.md").read_text(encoding="utf-8")
    translated = (RULE_BOOKS / f"{language}.md").read_text(encoding="utf-8")
    assert _shape(translated) == _shape(english)


def test_the_rules_of_a_game_say_what_its_profile_sets_besides_the_variants(
    arena: Arena,
) -> None:
    profile = {
        "variants": ["pass_3"], "pass_direction": "across", "losing_threshold": -700,
        "max_hands": 20,
    }  # fmt: skip
    started = requests.post(
        f"{arena.url}/api/play",
        json={"opponents": ["house:easy"] * 3, "seat": 0, "rules": profile},
        timeout=10,
    )
    assert started.status_code == 201, started.text
    page = requests.get(f"{arena.url}/play/rules?game={started.json()['id']}&lang=it", timeout=10)
    said = [plain(s) for s in re.findall(r'<p class="setting">(.*?)</p>', page.text)]
    assert said == [
        "La partita finisce a −700 o meno, invece di −1000.",
        "Si ferma al massimo dopo 20 mani.",
        "Le 3 carte si passano al giocatore di fronte.",
    ]
