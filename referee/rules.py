"""The rules profile: the standard rules plus any named variants, as a small JSON value.

A tournament stores its profile and every replay carries it. :meth:`Rules.from_json` refuses
unknown keys, unknown variants and impossible combinations with a :class:`RulesError` that
says which.

>>> Rules.from_json({"variants": ["target_500", "no_exposure"]}).losing_threshold
-500
>>> Rules().to_json()  # doctest: +NORMALIZE_WHITESPACE
{'variants': [], 'losing_threshold': -1000, 'max_hands': 100, 'fixed_hands': None,
 'pass_direction': 'next'}
>>> Rules.from_json({"variants": ["no_exposure", "sequential_exposure"]})
Traceback (most recent call last):
...
referee.rules.RulesError: variants no_exposure and sequential_exposure cannot be combined: ...
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final


class RulesError(ValueError):
    """A rules profile that is malformed, unknown or self-contradictory."""


class Variant(enum.Enum):
    """The named variants of RULES.md; each changes one thing about the standard profile."""

    NO_EXPOSURE = "no_exposure"
    SEQUENTIAL_EXPOSURE = "sequential_exposure"
    LEAD_2C = "lead_2c"
    DEALER_LEFT_LEADS = "dealer_left_leads"
    HEARTS_MUST_BREAK = "hearts_must_break"
    NO_SPADE_LEAD_FIRST_TRICK = "no_spade_lead_first_trick"
    PASS_3 = "pass_3"
    TARGET_500 = "target_500"
    END_AT_PLUS_1000 = "end_at_plus_1000"
    TIE_CONTINUE_BOTTOM = "tie_continue_bottom"
    TIE_SHARE = "tie_share"
    TEAMS = "teams"
    QD_BONUS = "qd_bonus"
    HAND_CAP_800 = "hand_cap_800"


class PassDirection(enum.Enum):
    """Where the ``pass_3`` cards go: ``cycle`` is next, previous, across, no pass, repeating."""

    NEXT = "next"
    PREVIOUS = "previous"
    ACROSS = "across"
    CYCLE = "cycle"

    def offset(self, hand_number: int) -> int:
        """Seats to count forward from the passer to the receiver (0: nobody passes)."""
        if self is PassDirection.CYCLE:
            return (1, 3, 2, 0)[(hand_number - 1) % 4]
        return {"next": 1, "previous": 3, "across": 2}[self.value]


_EXCLUSIVE: Final[tuple[tuple[Variant, Variant, str], ...]] = (
    (Variant.NO_EXPOSURE, Variant.SEQUENTIAL_EXPOSURE, "there is no exposure phase to sequence"),
    (Variant.LEAD_2C, Variant.DEALER_LEFT_LEADS, "each decides who leads every hand"),
    (Variant.TIE_CONTINUE_BOTTOM, Variant.TIE_SHARE, "each replaces the tie rule"),
)

DEFAULT_LOSING_THRESHOLD: Final = -1000
DEFAULT_MAX_HANDS: Final = 100
PLUS_1000: Final = 1000
HAND_CAP: Final = 800
_KEYS: Final = ("variants", "losing_threshold", "max_hands", "fixed_hands", "pass_direction")


@dataclass(frozen=True)
class Rules:
    """A rules profile. The default instance is the standard profile of RULES.md.

    ``losing_threshold``: a total at or below it ends the match (``target_500`` means -500).
    ``max_hands``: the cap that makes every match end; at the cap, ties share a place.
    ``fixed_hands``: when set, the match is exactly this many hands and the threshold is ignored.
    ``pass_direction``: used with ``pass_3``.
    """

    variants: frozenset[Variant] = frozenset()
    losing_threshold: int = DEFAULT_LOSING_THRESHOLD
    max_hands: int = DEFAULT_MAX_HANDS
    fixed_hands: int | None = None
    pass_direction: PassDirection = PassDirection.NEXT
    # Flags derived once, so the hot path reads an attribute instead of a set.
    exposure: bool = field(init=False, repr=False, compare=False)
    sequential_exposure: bool = field(init=False, repr=False, compare=False)
    passing: bool = field(init=False, repr=False, compare=False)
    lead_2c: bool = field(init=False, repr=False, compare=False)
    dealer_left_leads: bool = field(init=False, repr=False, compare=False)
    hearts_must_break: bool = field(init=False, repr=False, compare=False)
    no_spade_lead_first_trick: bool = field(init=False, repr=False, compare=False)
    teams: bool = field(init=False, repr=False, compare=False)
    qd_bonus: bool = field(init=False, repr=False, compare=False)
    hand_cap: int | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        variants = frozenset(self.variants)
        for v in variants:
            if not isinstance(v, Variant):
                raise RulesError(f"not a Variant: {v!r}")
        for a, b, why in _EXCLUSIVE:
            if a in variants and b in variants:
                raise RulesError(f"variants {a.value} and {b.value} cannot be combined: {why}")
        threshold = self.losing_threshold
        if Variant.TARGET_500 in variants and threshold not in (-500, DEFAULT_LOSING_THRESHOLD):
            raise RulesError(
                f"target_500 sets losing_threshold to -500, but {threshold} was also given"
            )
        if Variant.TARGET_500 in variants:
            threshold = -500
        _check_int("losing_threshold", threshold, high=-1)
        _check_int("max_hands", self.max_hands, low=1, high=10_000)
        if self.fixed_hands is not None:
            _check_int("fixed_hands", self.fixed_hands, low=1, high=self.max_hands)
        if not isinstance(self.pass_direction, PassDirection):
            raise RulesError(f"not a PassDirection: {self.pass_direction!r}")
        if self.pass_direction is not PassDirection.NEXT and Variant.PASS_3 not in variants:
            raise RulesError("pass_direction is only meaningful with the pass_3 variant")
        setter = object.__setattr__
        setter(self, "variants", variants)
        setter(self, "losing_threshold", threshold)
        setter(self, "exposure", Variant.NO_EXPOSURE not in variants)
        setter(self, "sequential_exposure", Variant.SEQUENTIAL_EXPOSURE in variants)
        setter(self, "passing", Variant.PASS_3 in variants)
        setter(self, "lead_2c", Variant.LEAD_2C in variants)
        setter(self, "dealer_left_leads", Variant.DEALER_LEFT_LEADS in variants)
        setter(self, "hearts_must_break", Variant.HEARTS_MUST_BREAK in variants)
        setter(self, "no_spade_lead_first_trick", Variant.NO_SPADE_LEAD_FIRST_TRICK in variants)
        setter(self, "teams", Variant.TEAMS in variants)
        setter(self, "qd_bonus", Variant.QD_BONUS in variants)
        setter(self, "hand_cap", HAND_CAP if Variant.HAND_CAP_800 in variants else None)

    @classmethod
    def with_variants(cls, *names: str | Variant, **params: Any) -> Rules:
        """``Rules.with_variants("teams", "qd_bonus")``."""
        return cls.from_json({"variants": [getattr(n, "value", n) for n in names], **params})

    def __contains__(self, variant: object) -> bool:
        """``Variant.TEAMS in rules``; a variant's name works too."""
        if isinstance(variant, str):
            return any(v.value == variant for v in self.variants)
        return variant in self.variants

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Rules:
        """A profile from its JSON object; missing keys take the standard values."""
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise RulesError(f"a rules profile is a JSON object, not {type(data).__name__}")
        unknown = sorted(set(data) - set(_KEYS))
        if unknown:
            raise RulesError(
                f"unknown rules key(s) {', '.join(unknown)}; known: {', '.join(_KEYS)}"
            )
        variants = _parse_variants(data.get("variants", []))
        threshold = data.get("losing_threshold", DEFAULT_LOSING_THRESHOLD)
        if Variant.TARGET_500 in variants and "losing_threshold" in data and threshold != -500:
            raise RulesError(
                f"target_500 sets losing_threshold to -500, but {threshold!r} was also given"
            )
        direction = data.get("pass_direction", PassDirection.NEXT.value)
        try:
            pass_direction = PassDirection(direction)
        except ValueError:
            choices = ", ".join(d.value for d in PassDirection)
            raise RulesError(f"pass_direction {direction!r} is not one of {choices}") from None
        return cls(
            variants=variants,
            losing_threshold=threshold,
            max_hands=data.get("max_hands", DEFAULT_MAX_HANDS),
            fixed_hands=data.get("fixed_hands"),
            pass_direction=pass_direction,
        )

    def to_json(self) -> dict[str, Any]:
        """The canonical JSON object: every key present, variants sorted."""
        return {
            "variants": sorted(v.value for v in self.variants),
            "losing_threshold": self.losing_threshold,
            "max_hands": self.max_hands,
            "fixed_hands": self.fixed_hands,
            "pass_direction": self.pass_direction.value,
        }


def _parse_variants(raw: Any) -> frozenset[Variant]:
    if not isinstance(raw, list | tuple):
        raise RulesError("variants must be a list of variant names")
    known = {v.value: v for v in Variant}
    out: set[Variant] = set()
    for name in raw:
        if not isinstance(name, str) or name not in known:
            raise RulesError(f"unknown variant {name!r}; known: {', '.join(sorted(known))}")
        if known[name] in out:
            raise RulesError(f"variant {name} is listed twice")
        out.add(known[name])
    return frozenset(out)


def _check_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise RulesError(f"{name} must be a whole number, not {value!r}")
    if low is not None and value < low:
        raise RulesError(f"{name} must be at least {low}, not {value}")
    if high is not None and value > high:
        raise RulesError(f"{name} must be at most {high}, not {value}")


STANDARD: Final = Rules()
