"""Stored messages -> Messages API params, the user side: text, images, bash executions,
summaries and custom messages all reach the model as user content."""

from __future__ import annotations

from typing import Any

import pytest

from providers.convert_testlib import convert
from providers.stored_messages import JsonDict, assistant, bash, call, result, text, user
from rpc_agent.providers.convert import BRANCH_SUMMARY_PREAMBLE, COMPACTION_SUMMARY_PREAMBLE


def test_user_string_becomes_a_text_block() -> None:
    assert convert([user("hello")]) == [{"role": "user", "content": [text("hello")]}]


def test_user_blocks_images_and_empty_text() -> None:
    converted = convert(
        [
            user(
                [
                    text("look"),
                    text("   "),
                    {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                    {"type": "image", "data": "blob:sha256:" + "ab" * 32, "mimeType": "image/png"},
                    {"type": "image", "data": "AAAA", "mimeType": "image/bmp"},
                ]
            )
        ]
    )
    blocks = converted[0]["content"]
    assert blocks[0] == text("look")
    assert blocks[1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }
    assert blocks[2]["type"] == "text"
    assert "image omitted" in blocks[2]["text"]
    assert "blob:sha256" not in blocks[2]["text"]
    assert blocks[3]["type"] == "text"
    assert "image/bmp" in blocks[3]["text"]
    assert len(blocks) == 4


def test_whitespace_only_user_message_is_dropped_and_neighbours_merge() -> None:
    converted = convert([user("a"), user("  \n"), user([text("b")])])
    assert converted == [{"role": "user", "content": [text("a"), text("b")]}]


def test_content_items_that_are_not_blocks_are_skipped() -> None:
    # Session files are not validated when read: a list may hold anything a writer put there.
    junk: Any = ["a string", 7, None, ["nested"]]
    answer = assistant(call("toolu_1"), stop="toolUse")
    answer["content"] = [*junk, *answer["content"]]
    output = result("toolu_1")
    output["content"] = [*junk, text("out")]
    converted = convert([user([*junk, text("hi")]), answer, output])
    assert converted == [
        {"role": "user", "content": [text("hi")]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [text("out")]}],
        },
    ]


def test_lone_surrogates_are_replaced() -> None:
    converted = convert([user("bad \ud800 char")])
    assert converted[0]["content"][0]["text"] == "bad \ufffd char"


def test_custom_message_is_user_text() -> None:
    converted = convert(
        [
            {
                "role": "custom",
                "customType": "note",
                "content": "from an extension",
                "display": True,
                "timestamp": 1,
            },
            {
                "role": "custom",
                "customType": "note",
                "content": [text("as blocks")],
                "display": False,
                "timestamp": 1,
            },
        ]
    )
    assert converted == [{"role": "user", "content": [text("from an extension"), text("as blocks")]}]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"output": "a\nb", "exitCode": 0}, "Ran `ls -la`\n```\na\nb\n```"),
        ({"output": "", "exitCode": 0}, "Ran `ls -la`\n(no output)"),
        ({"output": "x", "exitCode": 2}, "Ran `ls -la`\n```\nx\n```\n\nCommand exited with code 2"),
        (
            {"output": "x", "cancelled": True, "exitCode": None},
            "Ran `ls -la`\n```\nx\n```\n\n(command cancelled)",
        ),
        (
            {"output": "tail", "exitCode": 0, "truncated": True, "fullOutputPath": "/tmp/full.log"},
            "Ran `ls -la`\n```\ntail\n```\n\n[Output truncated. Full output: /tmp/full.log]",
        ),
    ],
)
def test_bash_execution_text(fields: JsonDict, expected: str) -> None:
    assert convert([bash(**fields)]) == [{"role": "user", "content": [text(expected)]}]


def test_bash_execution_excluded_from_context_is_skipped() -> None:
    converted = convert([user("hi"), bash(output="secret", exitCode=0, excludeFromContext=True)])
    assert converted == [{"role": "user", "content": [text("hi")]}]


def test_summaries_are_user_text_with_summary_tags() -> None:
    converted = convert(
        [
            {"role": "compactionSummary", "summary": "We fixed X.", "tokensBefore": 5000, "timestamp": 1},
            {"role": "branchSummary", "summary": "Tried Y.", "fromId": "abcd1234", "timestamp": 2},
        ]
    )
    blocks = converted[0]["content"]
    assert blocks[0]["text"] == f"{COMPACTION_SUMMARY_PREAMBLE}\n\n<summary>\nWe fixed X.\n</summary>"
    assert blocks[1]["text"] == f"{BRANCH_SUMMARY_PREAMBLE}\n\n<summary>\nTried Y.\n</summary>"
    assert COMPACTION_SUMMARY_PREAMBLE.startswith("The conversation history before this point was compacted")
    assert BRANCH_SUMMARY_PREAMBLE.startswith("The following is a summary of a branch")


def test_unknown_roles_never_reach_the_model() -> None:
    assert convert([user("hi"), {"role": "somethingNew", "content": "x", "timestamp": 1}]) == [
        {"role": "user", "content": [text("hi")]}
    ]
