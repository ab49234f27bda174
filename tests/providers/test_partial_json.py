"""Best-effort parsing of streamed tool arguments (input_json_delta chunks)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from rpc_agent.providers.anthropic import PartialJson

JsonDict = dict[str, Any]

VALUES: list[JsonDict] = [
    {"path": "a.txt", "limit": 10},
    {
        "content": 'line "one"\nline \\two\\ \u00e9\u4e2d \U0001f600 \\\\u00e9',
        "n": -1.5e3,
        "flags": [True, False, None],
    },
    {"nested": {"deep": [{"x": [1, 2, {"y": "z\\"}]}, []], "empty": {}}, "t": "tail \U0001f600"},
    {"edits": [{"oldText": "a\tb", "newText": "\U0001f600" * 3}, {"oldText": "\\", "newText": ""}]},
    {},
]


def texts(value: JsonDict) -> list[str]:
    return [json.dumps(value), json.dumps(value, ensure_ascii=False), json.dumps(value, indent=2)]


def is_prefix_view(partial: Any, full: Any) -> bool:
    """Every string in the partial view is a prefix of the final one; keys and items are a
    subset of the final ones; other values are final or a number still being written."""
    if isinstance(partial, dict):
        return isinstance(full, dict) and all(
            k in full and is_prefix_view(v, full[k]) for k, v in partial.items()
        )
    if isinstance(partial, list):
        return (
            isinstance(full, list) and len(partial) <= len(full) and all(map(is_prefix_view, partial, full))
        )
    if isinstance(partial, str):
        return isinstance(full, str) and full.startswith(partial)
    if isinstance(partial, int | float) and not isinstance(partial, bool):
        return isinstance(full, int | float)
    return bool(partial == full)


def encodable(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@pytest.mark.parametrize("value", VALUES)
def test_char_by_char(value: JsonDict) -> None:
    for text in texts(value):
        parser = PartialJson()
        previous_keys: list[str] = []
        for char in text:
            current = parser.feed(char)
            assert isinstance(current, dict)
            # Keys only ever grow: a best-effort view never loses what it had.
            assert list(current)[: len(previous_keys)] == previous_keys
            previous_keys = list(current)
            assert is_prefix_view(current, value), (text, current)
            assert encodable(current), (text, current)
        assert parser.final() == value
        assert parser.value == value


def test_random_chunkings() -> None:
    rng = random.Random(7)
    for value in VALUES:
        for text in texts(value):
            for _ in range(30):
                parser = PartialJson()
                pos = 0
                while pos < len(text):
                    size = rng.randint(1, 12)
                    current = parser.feed(text[pos : pos + size])
                    pos += size
                    assert is_prefix_view(current, value), (text, current)
                    assert encodable(current), (text, current)
                assert parser.final() == value


def test_views_along_the_way() -> None:
    parser = PartialJson()
    assert parser.feed('{"a": "x\\') == {"a": "x"}
    assert parser.feed('"y') == {"a": 'x"y'}
    assert parser.feed('", "b": tr') == {"a": 'x"y'}
    assert parser.feed("ue, ") == {"a": 'x"y', "b": True}
    assert parser.feed('"c": [1, {"d": "\\u00') == {"a": 'x"y', "b": True, "c": [1, {"d": ""}]}
    assert parser.feed('e9"}]}') == {"a": 'x"y', "b": True, "c": [1, {"d": "\u00e9"}]}


def test_a_high_surrogate_waits_for_its_low_half() -> None:
    parser = PartialJson()
    assert parser.feed('{"s": "ok \\ud83d') == {"s": "ok "}
    assert parser.feed("\\ude0") == {"s": "ok "}
    assert parser.feed('0!"}') == {"s": "ok \U0001f600!"}


def test_incomplete_input_keeps_the_best_view() -> None:
    parser = PartialJson()
    parser.feed('{"a": 1, "b": [')
    assert parser.final() == {"a": 1, "b": []}
    assert PartialJson().final() == {}
    not_an_object = PartialJson()
    not_an_object.feed("[1, 2]")
    assert not_an_object.final() == {}
