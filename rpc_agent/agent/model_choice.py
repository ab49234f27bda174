"""Which model and thinking level a request may choose, and the next one when cycling.

Checks only: the AgentSession stores the change (through its ``mutation`` guard) and only
then adopts it.
"""

from __future__ import annotations

from rpc_agent.errors import InvalidRequestError
from rpc_agent.protocol.entries import THINKING_LEVELS
from rpc_agent.providers.base import ModelInfo, Provider
from rpc_agent.quoting import quote


def choose_model(provider: Provider, model_id: str, provider_name: str | None) -> ModelInfo:
    """A model of this server's provider; unknown ids and other providers are refused."""
    if provider_name is not None and provider_name != provider.name:
        raise InvalidRequestError(
            f"provider {quote(provider_name)} is not available: this server runs the "
            f"{provider.name} provider (start it with --provider to use another)"
        )
    if not provider.knows_model(model_id):
        known = ", ".join(model.id for model in provider.models())
        raise InvalidRequestError(
            f"unknown model {quote(model_id)} for provider {provider.name}; known models: {known}"
        )
    return provider.resolve_model(model_id)


def next_model_id(provider: Provider, current: ModelInfo) -> str:
    models = provider.models()
    ids = [model.id for model in models]
    index = ids.index(current.id) if current.id in ids else -1
    return models[(index + 1) % len(models)].id


def check_thinking_level(level: str) -> None:
    if level not in THINKING_LEVELS:
        raise InvalidRequestError(f"unknown thinking level {quote(level)}")


def thinking_levels(model: ModelInfo) -> list[str]:
    """The levels a model takes, lowest first: only "off" without reasoning, else the levels
    of the model's table entry (pi's per-model list) that this server knows."""
    if not model.reasoning:
        return ["off"]
    if model.thinkingLevels is None:
        return list(THINKING_LEVELS)
    return [level for level in THINKING_LEVELS if level in model.thinkingLevels]


_ORDER = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
"""Every level pi has, lowest first (the order a clamp searches in)."""


def clamp_thinking_level(level: str, levels: list[str]) -> str:
    """The level to use when the model does not take ``level`` (pi's clamp): the nearest one
    above it, else the nearest below, else the model's first."""
    if level in levels:
        return level
    if level in _ORDER:
        index = _ORDER.index(level)
        for candidate in (*_ORDER[index + 1 :], *reversed(_ORDER[:index])):
            if candidate in levels:
                return candidate
    return levels[0] if levels else "off"


def next_thinking_level(current: str, levels: list[str] | None = None) -> str:
    """The level after ``current`` among ``levels`` (all by default), wrapping around."""
    levels = levels or list(THINKING_LEVELS)
    index = levels.index(current) if current in levels else -1
    return levels[(index + 1) % len(levels)]
