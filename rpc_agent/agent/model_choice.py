"""Which model and thinking level a request may choose, and the next one when cycling.

Checks only: the AgentSession stores the change (through its ``mutation`` guard) and only
then adopts it.
"""

from __future__ import annotations

from ..errors import InvalidRequestError
from ..protocol.entries import THINKING_LEVELS
from ..providers.base import ModelInfo, Provider
from ..quoting import quote


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


def next_thinking_level(current: str) -> str:
    index = THINKING_LEVELS.index(current) if current in THINKING_LEVELS else 0
    return THINKING_LEVELS[(index + 1) % len(THINKING_LEVELS)]
