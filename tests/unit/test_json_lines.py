"""The one JSON Lines reading loop: objects with their line numbers, the reader's own error for a bad line."""

from __future__ import annotations

import json

import pytest

from stratabench.json_lines import BadLine, json_objects


class Bad(Exception):
    pass


def keep(line: BadLine) -> Bad:
    error = Bad()
    error.line = line  # type: ignore[attr-defined]
    return error


def test_objects_with_their_numbers_blank_lines_skipped() -> None:
    lines = ['{"a": 1}\n', "\n", "   \n", '{"b": 2}']
    assert list(json_objects(lines, keep)) == [(1, {"a": 1}), (4, {"b": 2})]


def test_a_line_that_is_not_json_is_handed_over_with_its_error() -> None:
    with pytest.raises(Bad) as caught:
        list(json_objects(['{"a": 1}', "{oops"], keep))
    line: BadLine = caught.value.line  # type: ignore[attr-defined]
    assert (line.number, line.text, line.value) == (2, "{oops", None)
    assert isinstance(line.error, json.JSONDecodeError)


def test_a_value_that_is_not_an_object_is_handed_over() -> None:
    with pytest.raises(Bad) as caught:
        list(json_objects(["[1, 2]"], keep))
    line: BadLine = caught.value.line  # type: ignore[attr-defined]
    assert (line.number, line.error, line.value) == (1, None, [1, 2])


def test_a_stricter_decoders_value_error_marks_the_line_bad() -> None:
    def no_floats(text: str) -> object:
        return json.loads(text, parse_float=lambda _: (_ for _ in ()).throw(ValueError("no floats")))

    with pytest.raises(Bad) as caught:
        list(json_objects(['{"x": 1.5}'], keep, decode=no_floats))
    assert str(caught.value.line.error) == "no floats"  # type: ignore[attr-defined]


def test_lines_are_read_lazily() -> None:
    read = []

    def lines() -> object:
        for text in ('{"n": 1}', '{"n": 2}'):
            read.append(text)
            yield text

    objects = json_objects(lines(), keep)  # type: ignore[arg-type]
    assert next(objects) == (1, {"n": 1}) and read == ['{"n": 1}']
