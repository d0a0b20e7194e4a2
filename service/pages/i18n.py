"""The Play page's languages: gettext catalogs (``translations/<language>/LC_MESSAGES/
messages.po``) compiled in memory with Babel when first used, the language of a request (the
``lang`` argument, else the ``lang`` cookie, else the browser's Accept-Language), and the
strings the page's script is given from the same catalogs (docs/PAGES.md, "Languages")."""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Mapping
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations
from flask import Response, g, request
from flask.sansio.app import App

LANGUAGES: Mapping[str, str] = {
    "en": "English",
    "zh": "简体中文",
    "es": "Español",
    "it": "Italiano",
}
"""The languages of the Play page, by code, each named in itself; English is the catalogs'
source language (its messages are the ids)."""
SOURCE = "en"
COOKIE = "lang"
COOKIE_AGE_S = 365 * 24 * 3600
TRANSLATIONS = Path(__file__).parent / "translations"
DOMAIN = "messages"


def catalog_path(language: str) -> Path:
    return TRANSLATIONS / language / "LC_MESSAGES" / f"{DOMAIN}.po"


def read_catalog(language: str) -> Catalog:
    with catalog_path(language).open("rb") as source:
        return read_po(source, locale=language, domain=DOMAIN)


@functools.cache
def translations(language: str) -> NullTranslations:
    """``language``'s messages, compiled from its .po once per process (the source language
    has no catalog: its messages are the ids)."""
    if language == SOURCE:
        return NullTranslations()
    compiled = io.BytesIO()
    write_mo(compiled, read_catalog(language))
    compiled.seek(0)
    return Translations(compiled, domain=DOMAIN)


def chosen_language() -> str:
    """The request's language: ``?lang=`` (the page's switch), else the cookie the switch
    set, else the best of the browser's Accept-Language, else English."""
    for asked in (request.args.get(COOKIE), request.cookies.get(COOKIE)):
        if asked is not None and asked in LANGUAGES:
            return asked
    best = request.accept_languages.best_match(list(LANGUAGES))
    return best or SOURCE


def use_language() -> str:
    """Set this request's language: the templates' ``_`` speak it."""
    language = chosen_language()
    g.language = language
    return language


def keep_choice(response: Response) -> Response:
    """Keep a language chosen with ``?lang=`` in the cookie."""
    asked = request.args.get(COOKIE)
    if asked is not None and asked in LANGUAGES:
        response.set_cookie(COOKIE, asked, max_age=COOKIE_AGE_S, samesite="Lax")
    return response


def current() -> NullTranslations:
    """The translations of this request's language: English unless a Play view chose one."""
    return translations(g.get("language", SOURCE))


def gettext(message: str) -> str:
    return current().gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    return current().ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    return str(current().pgettext(context, message))


def N_(message: str) -> str:  # noqa: N802 - the conventional name of gettext's no-op marker
    """Mark ``message`` for the catalogs; it is translated where it is shown."""
    return message


def install(app: App) -> None:
    """Let the app's templates translate with ``_`` / ``{% trans %}`` (English outside the
    Play pages)."""
    app.jinja_env.add_extension("jinja2.ext.i18n")
    install_callables: Callable[..., None] = app.jinja_env.install_gettext_callables  # type: ignore[attr-defined]
    install_callables(gettext=gettext, ngettext=ngettext, pgettext=pgettext, newstyle=True)
