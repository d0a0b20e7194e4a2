"""The JSON body limits at their edges: the deepest nesting and the longest number accepted and
one past them, brackets inside strings, the constants and the surrogates JSON allows but the
API does not. (tests/service/test_hostile_input.py sends such bodies through the API.)"""

from __future__ import annotations

import pytest

from service.guard import MAX_DEPTH, MAX_DIGITS, BodyError, check_json, json_strings


def nested(depth: int, opening: str = "[") -> bytes:
    closing = {"[": "]", "{": "}"}[opening]
    inner = '{"a":' if opening == "{" else "["
    return (inner * depth + "1" + closing * depth).encode()


def test_the_limits_are_32_levels_and_30_digits() -> None:
    assert (MAX_DEPTH, MAX_DIGITS) == (32, 30)


@pytest.mark.parametrize("opening", ["[", "{"])
def test_the_deepest_nesting_accepted_is_32(opening: str) -> None:
    check_json(nested(32, opening))
    with pytest.raises(BodyError, match="nested 33 deep; at most 32 levels"):
        check_json(nested(33, opening))


def test_closed_brackets_do_not_count_towards_the_depth() -> None:
    check_json(b"[" + b"[[]]," * 40 + b"[]]")  # 40 siblings, 3 deep
    check_json(b"{" + b", ".join(b'"k%d": {"x": []}' % i for i in range(40)) + b"}")


def test_whitespace_between_brackets_is_no_string() -> None:
    with pytest.raises(BodyError, match="nested 33 deep"):
        check_json(b"[ " * 33 + b"1" + b" ]" * 33)


def test_closing_brackets_count_one_level_each() -> None:
    with pytest.raises(BodyError, match="nested 33 deep"):
        check_json(b"[" + b"[]," * 20 + b"[" * 32 + b"1" + b"]" * 33)


def test_brackets_inside_strings_do_not_count() -> None:
    check_json(b'{"a": "' + b"[" * 40 + b'"}')
    check_json(b'{"a": "a string, with spaces! ' + b"[" * 40 + b'"}')
    check_json(b'{"a": "\\"' + b"{" * 40 + b'"}')  # an escaped quote does not end the string


def test_an_escaped_backslash_ends_before_the_quote() -> None:
    # "\\" is a whole string: the brackets after it are outside, and count
    with pytest.raises(BodyError, match="nested 34 deep"):
        check_json(b'["\\\\", ' + b"[" * 33 + b"]" * 33 + b"]")


def test_the_longest_number_accepted_has_30_digits() -> None:
    check_json(b'{"n": -' + b"9" * 30 + b"}")  # the sign is not a digit
    check_json(b'{"n": 1.' + b"5" * 29 + b"}")  # nor the point
    with pytest.raises(BodyError, match="a number of 31 digits; numbers are at most 30"):
        check_json(b'{"n": ' + b"9" * 31 + b"}")
    with pytest.raises(BodyError, match="a number of 31 digits"):
        check_json(b'{"n": 1.' + b"5" * 30 + b"}")


@pytest.mark.parametrize("number", [b"1e999", b"-1E999", b"1.5e400"])
def test_a_number_beyond_the_doubles_is_refused(number: bytes) -> None:
    with pytest.raises(BodyError, match="is too large for a JSON number here"):
        check_json(b'{"n": ' + number + b"}")


@pytest.mark.parametrize("number", [b"1e300", b"-2.5E-300", b"12345"])
def test_numbers_within_the_doubles_are_accepted(number: bytes) -> None:
    check_json(b'{"n": ' + number + b"}")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_the_non_numbers_python_allows_are_refused(constant: str) -> None:
    with pytest.raises(BodyError, match=f"{constant} is not a JSON number"):
        check_json(b'{"n": ' + constant.encode() + b"}")


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (b'"\\udc00"', "dc00"),
        (b'{"\\ud83d": 1}', "d83d"),
        (b'{"a": [1, {"b": ["ok", "\\ud800"]}]}', "d800"),
    ],
)
def test_a_lone_surrogate_anywhere_is_refused(body: bytes, where: str) -> None:
    with pytest.raises(BodyError, match=rf"lone surrogate \(\\u{where}\)"):
        check_json(body)


def test_a_surrogate_pair_is_valid_text() -> None:
    check_json(b'{"pig": "\\ud83d\\udc37"}')


def test_a_body_that_is_not_json_is_left_to_the_views() -> None:
    check_json(b"not json at all {")
    check_json(b"")


def test_every_string_of_a_value_is_found_keys_included() -> None:
    value = {"a": ["b", {"c": "d"}, 1, None], "e": "f"}
    assert sorted(json_strings(value)) == ["a", "b", "c", "d", "e", "f"]
