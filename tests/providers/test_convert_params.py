"""The rest of a Messages API request: cache breakpoints, the system prompt, tool schemas, and
the thinking and token fields each model gets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fake_anthropic import validate_request
from providers.convert_testlib import convert
from providers.stored_messages import JsonDict, assistant, call, result, text, user
from rpc_agent.protocol.shapes import MessageDict
from rpc_agent.providers.base import ProviderRequest, ToolSpec
from rpc_agent.providers.models import resolve_model
from rpc_agent.providers.request import build_params, convert_system, convert_tools

if TYPE_CHECKING:
    from anthropic.types.message_create_params import MessageCreateParamsBase


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


def as_json(params: MessageCreateParamsBase) -> JsonDict:
    """The params as the JSON the API gets, to look into blocks the SDK's types keep apart."""
    body: JsonDict = dict(params)
    return body


def test_build_params_budget_model() -> None:
    params = as_json(build_params(request("claude-haiku-4-5", "medium")))
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


def test_build_params_max_on_an_adaptive_model_is_effort_max() -> None:
    # pi-ai sends effort "max" on every adaptive Claude model, also where xhigh is not native.
    for model_id in ("claude-opus-4-7", "claude-sonnet-4-6"):
        params = build_params(request(model_id, "max"))
        assert params["output_config"] == {"effort": "max"}, model_id
        assert params["thinking"]["type"] == "adaptive"
        assert params["max_tokens"] == resolve_model(model_id).maxTokens
        assert validate_request(params) is None


def test_build_params_max_on_a_budget_model_is_its_largest_budget() -> None:
    params = as_json(build_params(request("claude-haiku-4-5", "max", max_tokens=4000)))
    xhigh = as_json(build_params(request("claude-haiku-4-5", "xhigh", max_tokens=4000)))
    model_max = resolve_model("claude-haiku-4-5").maxTokens
    assert params["max_tokens"] == model_max
    # Capped by the model's output: the budget leaves 1024 tokens for the answer.
    assert params["thinking"] == {"type": "enabled", "budget_tokens": model_max - 1024}
    assert params["thinking"]["budget_tokens"] >= xhigh["thinking"]["budget_tokens"]
    assert validate_request(params) is None


def test_system_messages_are_folded_into_the_system_prompt_never_sent_as_turns() -> None:
    stored_system: MessageDict = {
        "role": "system",
        "content": "",
        "sections": {"preamble": "You are pi."},
        "toolsAdded": [{"name": "read", "description": "Read", "parameters": {}}],
        "timestamp": 0,
    }
    added: MessageDict = {
        "role": "system",
        "content": [text("Answer in French."), text("Be brief.")],
        "timestamp": 0,
    }
    req = request("claude-haiku-4-5")
    req.messages = [stored_system, user("hi"), assistant(text("salut")), added, user("again")]
    params = as_json(build_params(req))
    assert [m["role"] for m in params["messages"]] == ["user", "assistant", "user"]
    # The agent's own prompt and tools, then the instructions the stored messages add; the
    # stored sections and tool declarations describe another agent's loadout and are not sent.
    assert params["system"][0]["text"] == "sys\n\nAnswer in French.\nBe brief."
    assert [tool["name"] for tool in params["tools"]] == ["bash"]
    assert validate_request(params) is None
