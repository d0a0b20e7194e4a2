"""Times on the pages. Every stored time (ISO 8601, UTC) is shown through one filter,
``{{ when|timestamp }}``: a ``<time>`` element whose text reads in UTC ("7 Dec 2026, 20:15 UTC")
for a reader without JavaScript and whose tooltip is the ISO time; the pages' script rewrites its
text in the reader's time zone and locale ("7 Dec 2026, 21:15", or "3 min ago" for a recent one).

>>> print(timestamp("2026-12-07T20:15:09+00:00"))
<time datetime="2026-12-07T20:15:09Z" title="2026-12-07T20:15:09Z">7 Dec 2026, 20:15 UTC</time>
>>> print(timestamp("2026-12-07T21:15:09+01:00"))
<time datetime="2026-12-07T20:15:09Z" title="2026-12-07T20:15:09Z">7 Dec 2026, 20:15 UTC</time>
>>> print(timestamp(""))
<BLANKLINE>
"""

from __future__ import annotations

from datetime import UTC, datetime

from markupsafe import Markup, escape

from service.pages.views import blp

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def readable_utc(moment: datetime) -> str:
    """``moment`` in UTC, in words that do not depend on the server's locale."""
    utc = moment.astimezone(UTC)
    return f"{utc.day} {MONTHS[utc.month - 1]} {utc.year}, {utc:%H:%M} UTC"


@blp.app_template_filter("timestamp")
def timestamp(value: str | None) -> Markup:
    """A stored time as a ``<time>`` element; nothing for no time, and a value that is not a
    time as it is (escaped)."""
    if not value:
        return Markup("")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return escape(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    iso = moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return Markup('<time datetime="{0}" title="{0}">{1}</time>').format(iso, readable_utc(moment))
