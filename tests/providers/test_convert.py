"""Stored messages -> Messages API params: shapes, and every repair rule."""

from __future__ import annotations

import random
from typing import Any

import pytest

from fake_anthropic import validate_request
from rpc_agent.providers.base import ProviderRequest, ToolSpec
from rpc_agent.providers.convert import (
    BRANCH_SUMMARY_PREAMBLE,
    COMPACTION_SUMMARY_PREAMBLE,
    LEADING_PLACEHOLDER,
    MISSING_RESULT_TEXT,
    build_params,
    convert_messages,
    convert_system,
    convert_tools,
)
from rpc_agent.providers.models import resolve_model

JsonDict = dict[str, Any]
MODEL = "claude-opus-4-5"


# --- stored-message builders --------------------------------------------------------------


def user(content: Any) -> JsonDict:
    return {"role": "user", "content": content, "timestamp": 1}


def text(value: str) -> JsonDict:
    return {"type": "text", "text": value}


def thinking(value: str, signature: str | None = None, *, redacted: bool = False) -> JsonDict:
    block: JsonDict = {"type": "thinking", "thinking": value}
    if signature is not None:
        block["thinkingSignature"] = signature
    if redacted:
        block["redacted"] = True
    return block


def call(call_id: str, name: str = "bash", **arguments: Any) -> JsonDict:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def assistant(
    *blocks: JsonDict, stop: str = "stop", model: str = MODEL, provider: str = "anthropic"
) -> JsonDict:
    return {
        "role": "assistant",
        "content": list(blocks),
        "api": "anthropic-messages",
        "provider": provider,
        "model": model,
        "stopReason": stop,
        "timestamp": 2,
    }


def result(call_id: str, output: str = "ok", *, name: str = "bash", error: bool = False) -> JsonDict:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [text(output)],
        "isError": error,
        "timestamp": 3,
    }


def convert(messages: list[JsonDict], **kwargs: Any) -> list[JsonDict]:
    kwargs.setdefault("cache", False)
    converted = convert_messages(messages, model_id=MODEL, **kwargs)
    problem = validate_request({"model": MODEL, "max_tokens": 1000, "messages": converted})
    assert problem is None, problem
    return converted


def tool_result_block(call_id: str, output: str = "ok", *, error: bool = False) -> JsonDict:
    block: JsonDict = {"type": "tool_result", "tool_use_id": call_id, "content": [text(output)]}
    if error:
        block["is_error"] = True
    return block


MISSING = {
    "type": "tool_result",
    "tool_use_id": "",
    "content": [text(MISSING_RESULT_TEXT)],
    "is_error": True,
}


def missing(call_id: str) -> JsonDict:
    return {**MISSING, "tool_use_id": call_id}


def roles(messages: list[JsonDict]) -> list[str]:
    return [m["role"] for m in messages]


def all_blocks(messages: list[JsonDict]) -> list[JsonDict]:
    return [block for m in messages for block in m["content"]]


# --- user side ----------------------------------------------------------------------------


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


def bash(**fields: Any) -> JsonDict:
    return {"role": "bashExecution", "command": "ls -la", "output": "", "timestamp": 1, **fields}


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


# --- assistant side -----------------------------------------------------------------------


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
    bad = {"type": "toolCall", "id": "toolu_1", "name": "bash", "arguments": "not a dict"}
    converted = convert([user("go"), assistant(bad, stop="toolUse"), result("toolu_1")])
    assert converted[1]["content"][0]["input"] == {}


# --- tool results and repairs -------------------------------------------------------------


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
    image = {"type": "image", "data": "R0lGOD", "mimeType": "image/gif"}
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


# --- cache control, system, tools, params -------------------------------------------------


def test_cache_control_on_the_last_two_user_messages() -> None:
    converted = convert(
        [
            user("one"),
            assistant(text("r1")),
            user("two"),
            assistant(call("toolu_a"), stop="toolUse"),
            result("toolu_a"),
            user("three"),
        ],
        cache=True,
    )
    marked = [
        (i, j)
        for i, m in enumerate(converted)
        for j, block in enumerate(m["content"])
        if "cache_control" in block
    ]
    assert marked == [(2, 0), (4, 1)]
    assert converted[4]["content"][1] == {**text("three"), "cache_control": {"type": "ephemeral"}}
    assert "cache_control" not in converted[0]["content"][0]


def test_cache_control_can_land_on_a_tool_result() -> None:
    converted = convert(
        [user("go"), assistant(call("toolu_a"), stop="toolUse"), result("toolu_a")], cache=True
    )
    assert converted[2]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert converted[0]["content"][0]["cache_control"] == {"type": "ephemeral"}


def test_system_prompt_block() -> None:
    assert convert_system("You are helpful.") == [
        {"type": "text", "text": "You are helpful.", "cache_control": {"type": "ephemeral"}}
    ]
    assert convert_system("   ") is None
    assert convert_system("x", cache=False) == [{"type": "text", "text": "x"}]


def test_tools_get_an_object_input_schema() -> None:
    tools = convert_tools(
        [
            ToolSpec(
                "read",
                "Read a file",
                {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            ),
            ToolSpec("noargs", "No arguments", {}),
        ]
    )
    assert tools == [
        {
            "name": "read",
            "description": "Read a file",
            "input_schema": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
        {
            "name": "noargs",
            "description": "No arguments",
            "input_schema": {"type": "object", "properties": {}},
        },
    ]


def request(model_id: str, level: str = "off", max_tokens: int | None = None) -> ProviderRequest:
    return ProviderRequest(
        model=resolve_model(model_id),
        system_prompt="sys",
        messages=[user("hi")],
        tools=[ToolSpec("bash", "Run", {"type": "object", "properties": {}})],
        thinking_level=level,
        max_tokens=max_tokens,
    )


def test_build_params_budget_model() -> None:
    params = build_params(request("claude-haiku-4-5", "medium"))
    assert params["model"] == "claude-haiku-4-5"
    assert params["thinking"] == {"type": "enabled", "budget_tokens": 10240}
    assert params["max_tokens"] == 32000 + 10240
    assert "output_config" not in params
    assert params["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert params["tools"][0]["input_schema"]["type"] == "object"
    assert validate_request(params) is None


def test_build_params_off_sends_no_thinking_on_budget_models() -> None:
    params = build_params(request("claude-haiku-4-5", "off", max_tokens=4000))
    assert "thinking" not in params
    assert params["max_tokens"] == 4000


def test_build_params_adaptive_model() -> None:
    params = build_params(request("claude-opus-4-7", "xhigh"))
    assert params["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert params["output_config"] == {"effort": "xhigh"}
    assert params["max_tokens"] == min(128_000, 32000 + 64000)
    assert validate_request(params) is None


def test_build_params_without_reasoning_sends_no_thinking() -> None:
    req = request("claude-haiku-4-5", "high", max_tokens=1000)
    req.model.reasoning = False
    params = build_params(req)
    assert "thinking" not in params
    assert params["max_tokens"] == 1000


# --- the request is valid whatever the history (seeded random histories) --------------------


def _random_history(rng: random.Random) -> list[JsonDict]:
    messages: list[JsonDict] = []
    ids: list[str] = []
    for _ in range(rng.randint(1, 14)):
        kind = rng.choice(
            ["user", "assistant", "calls", "result", "result", "orphan", "bash", "summary", "custom"]
        )
        if kind == "user":
            messages.append(user(rng.choice(["hi", "  ", "do it", ""])))
        elif kind == "assistant":
            stop = rng.choice(["stop", "stop", "error", "aborted"])
            blocks = rng.choice(
                [[], [text("ok")], [thinking("t", "S"), text("a")], [thinking("t")], [text(" ")]]
            )
            messages.append(assistant(*blocks, stop=stop))
        elif kind == "calls":
            new = [f"toolu_{rng.randint(0, 5)}" for _ in range(rng.randint(1, 3))]
            ids.extend(new)
            stop = rng.choice(["toolUse", "toolUse", "aborted", "error"])
            messages.append(assistant(*(call(i) for i in new), stop=stop))
        elif kind == "result" and ids:
            messages.append(result(rng.choice(ids), rng.choice(["out", ""]), error=rng.random() < 0.3))
        elif kind == "orphan":
            messages.append(result(f"toolu_orphan{rng.randint(0, 3)}"))
        elif kind == "bash":
            messages.append(
                bash(output="x", exitCode=rng.choice([0, 1, None]), excludeFromContext=rng.random() < 0.3)
            )
        elif kind == "summary":
            messages.append({"role": "compactionSummary", "summary": "s", "tokensBefore": 1, "timestamp": 1})
        else:
            messages.append(
                {"role": "custom", "customType": "c", "content": "note", "display": True, "timestamp": 1}
            )
    return messages


def test_random_histories_always_give_a_valid_request() -> None:
    rng = random.Random(20261121)
    checked = 0
    for _ in range(600):
        history = _random_history(rng)
        converted = convert_messages(history, model_id=MODEL, cache=True)
        if not converted:
            continue  # nothing the model could see (e.g. only whitespace)
        body = {"model": MODEL, "max_tokens": 100, "messages": converted}
        problem = validate_request(body)
        assert problem is None, (problem, history, converted)
        checked += 1
    assert checked > 400
