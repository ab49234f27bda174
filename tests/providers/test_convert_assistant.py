"""Stored messages -> Messages API params, the assistant side: which thinking goes back as
thinking, and which failed replies never go back at all."""

from __future__ import annotations

from typing import Any

import pytest

from providers.convert_testlib import convert, missing, roles, tool_result_block
from providers.stored_messages import MODEL, assistant, call, result, text, thinking, user


def test_assistant_blocks_same_model() -> None:
    converted = convert(
        [
            user("go"),
            assistant(
                thinking("plan", "SIG1"),
                thinking("[Reasoning redacted]", "OPAQUE", redacted=True),
                thinking("", "SIG-OMITTED"),
                text("doing it"),
                text("  "),
                call("toolu_1", "read", path="a.txt"),
                stop="toolUse",
            ),
            result("toolu_1", "file body", name="read"),
        ]
    )
    assert converted[1] == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "plan", "signature": "SIG1"},
            {"type": "redacted_thinking", "data": "OPAQUE"},
            {"type": "thinking", "thinking": "", "signature": "SIG-OMITTED"},
            text("doing it"),
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.txt"}},
        ],
    }
    assert converted[2] == {"role": "user", "content": [tool_result_block("toolu_1", "file body")]}


def test_thinking_without_signature_is_sent_as_text() -> None:
    converted = convert(
        [user("go"), assistant(thinking("half a thought"), thinking("  "), text("answer")), user("ok")]
    )
    assert converted[1]["content"] == [text("half a thought"), text("answer")]


@pytest.mark.parametrize(("model", "provider"), [("claude-sonnet-4-5", "anthropic"), (MODEL, "faux")])
def test_thinking_of_another_model_or_provider_is_text_and_redacted_is_dropped(
    model: str, provider: str
) -> None:
    converted = convert(
        [
            user("go"),
            assistant(
                thinking("old thought", "SIG"),
                thinking("[Reasoning redacted]", "OPAQUE", redacted=True),
                text("answer"),
                model=model,
                provider=provider,
            ),
            user("next"),
        ]
    )
    assert converted[1]["content"] == [text("old thought"), text("answer")]


def test_non_dict_arguments_become_an_empty_input() -> None:
    bad: Any = {
        "type": "toolCall",
        "id": "toolu_1",
        "name": "bash",
        "arguments": "not a dict",
    }  # not a BlockDict
    converted = convert([user("go"), assistant(bad, stop="toolUse"), result("toolu_1")])
    assert converted[1]["content"][0]["input"] == {}


# --- failed assistant messages ------------------------------------------------------------


def test_error_and_aborted_messages_without_content_are_dropped() -> None:
    converted = convert(
        [user("go"), assistant(stop="error"), user("again"), assistant(text(" "), stop="aborted"), user("x")]
    )
    assert converted == [{"role": "user", "content": [text("go"), text("again"), text("x")]}]


def test_error_message_superseded_by_a_retry_is_dropped() -> None:
    converted = convert(
        [
            user("go"),
            assistant(text("partial ans"), stop="error"),
            assistant(text("full answer")),
            user("thanks"),
        ]
    )
    assert converted[1] == {"role": "assistant", "content": [text("full answer")]}


def test_trailing_error_message_is_dropped() -> None:
    converted = convert([user("go"), assistant(text("partial"), call("toolu_a"), stop="error")])
    assert converted == [{"role": "user", "content": [text("go")]}]


def test_aborted_message_with_content_followed_by_user_is_kept_and_repaired() -> None:
    converted = convert(
        [
            user("go"),
            assistant(thinking("hmm", "SIG"), text("I will"), call("toolu_a", cmd="ls"), stop="aborted"),
            user("stop, do something else"),
        ]
    )
    assert roles(converted) == ["user", "assistant", "user"]
    assert converted[1]["content"][1] == text("I will")
    assert converted[2]["content"] == [missing("toolu_a"), text("stop, do something else")]
