"""Stored messages -> Messages API params: tool results paired with their calls, and every repair
that turns a history the API would reject (missing, orphan or duplicate results, foreign ids, an
assistant message first) into one it accepts."""

from __future__ import annotations

from providers.convert_testlib import all_blocks, convert, missing, roles, tool_result_block
from providers.stored_messages import assistant, call, result, text, user
from rpc_agent.protocol.shapes import BlockDict
from rpc_agent.providers.convert import LEADING_PLACEHOLDER


def test_consecutive_tool_results_are_one_user_message_in_call_order() -> None:
    converted = convert(
        [
            user("go"),
            assistant(call("toolu_a"), call("toolu_b"), call("toolu_c"), stop="toolUse"),
            result("toolu_c", "C"),
            result("toolu_a", "A", error=True),
            result("toolu_b", "B"),
        ]
    )
    assert roles(converted) == ["user", "assistant", "user"]
    assert converted[2]["content"] == [
        tool_result_block("toolu_a", "A", error=True),
        tool_result_block("toolu_b", "B"),
        tool_result_block("toolu_c", "C"),
    ]


def test_tool_result_images_and_empty_content() -> None:
    image: BlockDict = {"type": "image", "data": "R0lGOD", "mimeType": "image/gif"}
    stored = result("toolu_1")
    stored["content"] = [text("see"), image]
    empty = result("toolu_2")
    empty["content"] = []
    converted = convert(
        [user("go"), assistant(call("toolu_1"), call("toolu_2"), stop="toolUse"), stored, empty]
    )
    first, second = converted[2]["content"]
    assert first["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/gif", "data": "R0lGOD"},
    }
    assert second == {"type": "tool_result", "tool_use_id": "toolu_2"}


def test_missing_result_gets_a_synthetic_error_result() -> None:
    converted = convert(
        [
            user("go"),
            assistant(call("toolu_a"), call("toolu_b"), stop="toolUse"),
            result("toolu_b", "B"),
            user("what happened?"),
        ]
    )
    assert converted[2]["content"] == [
        missing("toolu_a"),
        tool_result_block("toolu_b", "B"),
        text("what happened?"),
    ]


def test_history_ending_in_unanswered_calls_gets_synthetic_results() -> None:
    converted = convert([user("go"), assistant(call("toolu_a"), stop="toolUse")])
    assert roles(converted) == ["user", "assistant", "user"]
    assert converted[2]["content"] == [missing("toolu_a")]


def test_calls_abandoned_before_the_next_assistant_message_get_synthetic_results() -> None:
    converted = convert(
        [
            user("go"),
            assistant(text("running"), call("toolu_a"), stop="toolUse"),
            assistant(text("never mind")),
            user("ok"),
        ]
    )
    # Both assistant messages become one; its call is answered before the next user text.
    assert roles(converted) == ["user", "assistant", "user"]
    assert converted[1]["content"][-1] == text("never mind")
    assert converted[2]["content"] == [missing("toolu_a"), text("ok")]


def test_tool_results_come_before_text_stored_earlier_in_the_same_turn() -> None:
    converted = convert(
        [
            user("go"),
            assistant(call("toolu_a"), stop="toolUse"),
            user("steer: also check tests"),
            result("toolu_a", "done"),
        ]
    )
    assert converted[2]["content"] == [tool_result_block("toolu_a", "done"), text("steer: also check tests")]


def test_orphan_result_after_a_compaction_cut_becomes_text() -> None:
    converted = convert(
        [
            {"role": "compactionSummary", "summary": "S", "tokensBefore": 10, "timestamp": 1},
            result("toolu_gone", "old output", name="grep"),
            user("continue"),
        ]
    )
    blocks = all_blocks(converted)
    assert all(block["type"] != "tool_result" for block in blocks)
    assert roles(converted) == ["user"]
    orphan = blocks[1]["text"]
    assert "`grep`" in orphan
    assert "no longer in this conversation" in orphan
    assert "old output" in orphan


def test_orphan_result_whose_call_is_in_an_earlier_assistant_message_becomes_text() -> None:
    converted = convert(
        [
            user("go"),
            assistant(call("toolu_a"), stop="toolUse"),
            result("toolu_a", "first"),
            assistant(text("next step")),
            user("and?"),
            result("toolu_a", "late duplicate", error=True),
        ]
    )
    last = converted[-1]["content"]
    assert last[0] == text("and?")
    assert last[1]["type"] == "text"
    assert "(error)" in last[1]["text"]
    assert "late duplicate" in last[1]["text"]
    assert sum(block["type"] == "tool_result" for block in all_blocks(converted)) == 1


def test_second_result_for_the_same_call_becomes_text() -> None:
    converted = convert(
        [
            user("go"),
            assistant(call("toolu_a"), stop="toolUse"),
            result("toolu_a", "one"),
            result("toolu_a", "two"),
        ]
    )
    content = converted[2]["content"]
    assert content[0] == tool_result_block("toolu_a", "one")
    assert content[1]["type"] == "text"
    assert "two" in content[1]["text"]


def test_orphan_result_with_only_an_image_keeps_the_image() -> None:
    stored = result("toolu_x")
    stored["content"] = [{"type": "image", "data": "AAAA", "mimeType": "image/jpeg"}]
    converted = convert([user("go"), stored])
    assert [block["type"] for block in converted[0]["content"]] == ["text", "text", "image"]


# --- structure ----------------------------------------------------------------------------


def test_history_starting_with_an_assistant_message_gets_a_placeholder_user_first() -> None:
    converted = convert([assistant(text("hello from the past")), user("hi")])
    assert converted[0] == {"role": "user", "content": [text(LEADING_PLACEHOLDER)]}
    assert roles(converted) == ["user", "assistant", "user"]


def test_foreign_tool_call_ids_are_normalized_consistently() -> None:
    foreign = "call_abc|fc_" + "x" * 100
    converted = convert(
        [user("go"), assistant(call(foreign), stop="toolUse", provider="openai"), result(foreign)]
    )
    tool_use = converted[1]["content"][0]
    assert tool_use["id"] == ("call_abc_fc_" + "x" * 100)[:64]
    assert converted[2]["content"][0]["tool_use_id"] == tool_use["id"]


def test_duplicate_tool_use_ids_in_merged_assistant_messages_are_renamed() -> None:
    converted = convert(
        [
            user("go"),
            assistant(call("toolu_a"), stop="toolUse"),
            assistant(call("toolu_a"), stop="toolUse"),
            result("toolu_a", "A"),
        ]
    )
    ids = [block["id"] for block in converted[1]["content"]]
    assert ids == ["toolu_a", "toolu_a_2"]
    assert converted[2]["content"] == [tool_result_block("toolu_a", "A"), missing("toolu_a_2")]
