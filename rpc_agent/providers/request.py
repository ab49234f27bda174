"""The whole Anthropic Messages API request around the converted messages: system prompt,
tools, token limit and the thinking fields of the request's level and model.

System messages (pi 1.5 stores the system prompt and tool set as ``role: "system"``
messages) never become turns. As pi-ai does for Claude models, which take no system
messages mid-conversation, they are folded into the request's one ``system`` prompt: the agent's
own prompt and tools stand where pi would declare its live prompt sections and tools over the
stored ones, and the ``content`` of each stored system message (instructions added from that
point on, which pi's replay keeps) follows it.

Typed with the SDK's param TypedDicts, imported for type checking only (see ``convert``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from rpc_agent.protocol.shapes import MessageDict
from rpc_agent.providers.base import ProviderRequest, ToolSpec
from rpc_agent.providers.convert import EPHEMERAL, clean_text, convert_messages
from rpc_agent.providers.models import DEFAULT_OUTPUT_TOKENS, ThinkingFields, spec_for, thinking_params
from rpc_agent.store.projection import content_text

if TYPE_CHECKING:
    from anthropic.types import TextBlockParam, ToolParam
    from anthropic.types.message_create_params import MessageCreateParamsBase


def convert_system(system_prompt: str, *, cache: bool = True) -> list[TextBlockParam] | None:
    if not system_prompt or not system_prompt.strip():
        return None
    block: TextBlockParam = {"type": "text", "text": clean_text(system_prompt)}
    if cache:
        block["cache_control"] = EPHEMERAL.copy()
    return [block]


def system_text(system_prompt: str, messages: Sequence[MessageDict]) -> str:
    """The request's system prompt: the agent's own, then the instructions the context's
    system messages add (see the module docstring), separated by blank lines as pi-ai's
    replay joins them."""
    parts = [system_prompt] if system_prompt else []
    for message in messages:
        if message.get("role") == "system":
            text = content_text(message.get("content"))
            if text:
                parts.append(text)
    return "\n\n".join(parts)


def convert_tools(tools: Iterable[ToolSpec]) -> list[ToolParam]:
    converted: list[ToolParam] = []
    for tool in tools:
        schema = dict(tool.parameters) if isinstance(tool.parameters, dict) else {}
        schema.setdefault("type", "object")
        if schema["type"] == "object":
            schema.setdefault("properties", {})
        converted.append({"name": tool.name, "description": tool.description, "input_schema": schema})
    return converted


def build_params(request: ProviderRequest, *, cache: bool = True) -> MessageCreateParamsBase:
    """Everything the Messages API call needs except ``stream``: model, max_tokens, system,
    messages, tools, and the thinking fields for the request's level and model."""
    model = request.model
    spec = spec_for(model.id)
    if spec.max_tokens != model.maxTokens:
        spec = replace(spec, max_tokens=model.maxTokens)
    answer_tokens = request.max_tokens or min(model.maxTokens, DEFAULT_OUTPUT_TOKENS)
    thinking: ThinkingFields
    if model.reasoning:
        thinking, max_tokens = thinking_params(spec, request.thinking_level, answer_tokens)
    else:
        thinking, max_tokens = {}, max(1, min(answer_tokens, model.maxTokens))
    params: MessageCreateParamsBase = {
        "model": model.id,
        "max_tokens": max_tokens,
        "messages": convert_messages(request.messages, model_id=model.id, cache=cache),
    }
    system = convert_system(system_text(request.system_prompt, request.messages), cache=cache)
    if system:
        params["system"] = system
    if request.tools:
        params["tools"] = convert_tools(request.tools)
    if "thinking" in thinking:
        params["thinking"] = thinking["thinking"]
    if "output_config" in thinking:
        params["output_config"] = thinking["output_config"]
    forced = request.tool_choice
    if forced and any(tool.name == forced for tool in request.tools) and not _thinks(params):
        params["tool_choice"] = {"type": "tool", "name": forced}
    return params


def _thinks(params: MessageCreateParamsBase) -> bool:
    """Whether the call may think: the API refuses a forced tool_choice with thinking on."""
    thinking = params.get("thinking")
    if thinking is not None:
        return thinking["type"] != "disabled"
    return "output_config" in params  # adaptive models think unless told not to
