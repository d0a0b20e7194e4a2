"""Times on the pages in Chromium: in the reader's time zone and locale, how long ago for a
recent one, the ISO time in the tooltip; readable in UTC without JavaScript; and no page shows
a raw ISO time."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
import requests
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.pages.conftest import Arena, screenshot
from tests.pages.pages_support import utc_iso

OLD = "2024-01-01T10:00:00Z"
"""The veteran's first rated match (conftest.py): a time long past, shown as a date."""
RAW = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")


Reader = Callable[..., Page]


@pytest.fixture
def reader(browser: Browser) -> Iterator[Reader]:
    """Opens a page in a new browser context of the options given (a reader's time zone,
    locale...); the contexts close after the test."""
    opened: list[BrowserContext] = []

    def open_page(**options: Any) -> Page:
        opened.append(browser.new_context(**options))
        return opened[-1].new_page()

    yield open_page
    for context in opened:
        context.close()


def _spaces(text: str) -> str:
    """ICU writes a narrow no-break space before AM/PM."""
    return text.replace("\u202f", " ").replace("\xa0", " ")


@pytest.mark.parametrize(
    ("locale", "zone", "shown"),
    [
        ("en-GB", "Asia/Shanghai", "1 Jan 2024, 18:00"),
        ("en-US", "America/New_York", "Jan 1, 2024, 5:00 AM"),
        ("de-DE", "Europe/Berlin", "1 Jan 2024, 11:00"),  # an English page, German habits
    ],
)
def test_a_time_reads_in_the_reader_s_zone_and_locale_with_the_iso_time_in_its_tooltip(
    reader: Reader, arena: Arena, locale: str, zone: str, shown: str
) -> None:
    page = reader(locale=locale, timezone_id=zone)
    page.goto(f"{arena.url}/bots/{arena.ladder.veteran}")
    first = page.locator(f'#versions time[datetime="{OLD}"]')
    expect(first).to_have_count(1)
    expect(first).not_to_contain_text("UTC")  # the script has run
    assert _spaces(first.inner_text()) == shown
    title = first.get_attribute("title") or ""
    assert title.endswith(f"({OLD})") and "2024" in title


def test_a_recent_time_says_how_long_ago(reader: Reader, arena: Arena) -> None:
    created = arena.store.get_tournament(arena.tournament_id)
    assert created is not None
    page = reader(locale="en-GB", timezone_id="Europe/Rome")
    page.clock.set_fixed_time(datetime.fromisoformat(created.created_at) + timedelta(minutes=3))
    page.goto(f"{arena.url}/tournaments/{arena.tournament_id}")
    when = page.locator(f'.lead time[datetime="{utc_iso(created.created_at)}"]')
    expect(when).to_have_text("3 min ago")
    expect(when).to_have_attribute("title", re.compile(re.escape(utc_iso(created.created_at))))


def test_without_javascript_a_time_reads_in_utc(reader: Reader, arena: Arena) -> None:
    page = reader(java_script_enabled=False, timezone_id="Asia/Tokyo")
    page.goto(f"{arena.url}/bots/{arena.ladder.veteran}")
    first = page.locator(f'#versions time[datetime="{OLD}"]')
    expect(first).to_have_text("1 Jan 2024, 10:00 UTC")
    expect(first).to_have_attribute("title", OLD)


def test_no_page_shows_a_raw_iso_time(reader: Reader, arena: Arena) -> None:
    page = reader(locale="en-GB", timezone_id="America/Sao_Paulo")
    pages = [
        "/",
        "/ladder/tables",
        "/tournaments",
        f"/tournaments/{arena.tournament_id}",
        f"/matches/{arena.tournament_matches[0]}",
        f"/bots/{arena.ladder.veteran}",
        f"/bots/{arena.bots[0]}",
    ]
    for path in pages:
        html = requests.get(arena.url + path, timeout=10).text
        assert "<time datetime=" in html, path  # each of these pages shows a time
        page.goto(arena.url + path)
        text = page.locator("body").inner_text()
        assert RAW.findall(text) == [], path
        for title in page.locator("time").evaluate_all("ts => ts.map(t => t.title)"):
            assert RAW.search(title), (path, title)
    screenshot(page, "times-bot")
