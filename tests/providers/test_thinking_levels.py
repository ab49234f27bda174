"""The thinking levels each Claude model takes, as pi 1.5.2 lists them.

The expected lists are pi-ai 1.5.2's ``getSupportedThinkingLevels`` over its model table
(``dist/providers/data/anthropic.json``, the ``thinkingLevelMap`` of each model): budget
models go up to high; adaptive ones add max, and xhigh where the model has that effort;
null entries (no "off" on the always-thinking models, no "minimal" on the newest) drop out.
"""

from __future__ import annotations

import pytest

from rpc_agent.agent.model_choice import clamp_thinking_level, next_thinking_level, thinking_levels
from rpc_agent.protocol.entries import THINKING_LEVELS
from rpc_agent.providers.faux import FauxProvider
from rpc_agent.providers.models import resolve_model

UP_TO_HIGH = ["off", "minimal", "low", "medium", "high"]

PI_LEVELS: dict[str, list[str]] = {
    "claude-haiku-4-5": UP_TO_HIGH,
    "claude-sonnet-4-5": UP_TO_HIGH,
    "claude-opus-4-5-20251101": UP_TO_HIGH,
    "claude-sonnet-4-6": [*UP_TO_HIGH, "max"],
    "claude-opus-4-6": [*UP_TO_HIGH, "max"],
    "claude-opus-4-7": [*UP_TO_HIGH, "xhigh", "max"],
    "claude-opus-4-8": [*UP_TO_HIGH, "xhigh", "max"],
    "claude-opus-5": [*UP_TO_HIGH, "xhigh", "max"],
    "claude-sonnet-5": [*UP_TO_HIGH, "xhigh", "max"],
    "claude-haiku-5-5": ["off", "low", "medium", "high", "xhigh", "max"],
    "claude-sonnet-5-5": ["low", "medium", "high", "xhigh", "max"],
    "claude-opus-5-5": ["low", "medium", "high", "xhigh", "max"],
    "claude-fable-5": ["minimal", "low", "medium", "high", "xhigh", "max"],
    "claude-fable-5-2": ["minimal", "low", "medium", "high", "xhigh", "max"],
}


@pytest.mark.parametrize("model_id", sorted(PI_LEVELS))
def test_each_claude_model_lists_the_levels_pi_lists(model_id: str) -> None:
    model = resolve_model(model_id)
    assert model.thinkingLevels == tuple(PI_LEVELS[model_id])
    # What get_available_thinking_levels answers: those of them this server takes.
    assert thinking_levels(model) == [level for level in PI_LEVELS[model_id] if level in THINKING_LEVELS]


def test_a_model_without_reasoning_takes_off_only() -> None:
    plain = FauxProvider().resolve_model("faux-plain")
    assert plain.reasoning is False
    assert thinking_levels(plain) == ["off"]
    assert next_thinking_level("off", thinking_levels(plain)) == "off"
    # Faux models with reasoning take every level.
    assert thinking_levels(FauxProvider().resolve_model("faux-1")) == list(THINKING_LEVELS)


def test_cycling_skips_the_levels_a_model_does_not_take() -> None:
    levels = thinking_levels(resolve_model("claude-sonnet-5-5"))
    assert next_thinking_level("high", levels) == levels[(levels.index("high") + 1) % len(levels)]
    # A level the model does not take (set before a model switch) moves to the model's first.
    assert next_thinking_level("off", levels) == levels[0]
    assert levels[0] == "low"


def test_a_level_the_model_does_not_take_is_clamped_as_pi_clamps() -> None:
    budget = ["off", "minimal", "low", "medium", "high"]
    newest = ["low", "medium", "high", "xhigh", "max"]
    assert clamp_thinking_level("medium", budget) == "medium"
    assert clamp_thinking_level("xhigh", budget) == "high"  # nothing above: the nearest below
    assert clamp_thinking_level("max", [*budget, "max"]) == "max"
    assert clamp_thinking_level("xhigh", [*budget, "max"]) == "max"  # the nearest above first
    assert clamp_thinking_level("off", newest) == "low"
    assert clamp_thinking_level("minimal", newest) == "low"
    assert clamp_thinking_level("high", ["off"]) == "off"
    assert clamp_thinking_level("unheard-of", newest) == "low"
