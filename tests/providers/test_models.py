"""The model table, costs and thinking levels."""

from __future__ import annotations

import pytest

from rpc_agent.protocol.methods import ModelDescription
from rpc_agent.providers.models import (
    DEFAULT_MODEL_ID,
    MODEL_TABLE,
    THINKING_BUDGETS,
    cost_of,
    listed_models,
    resolve_model,
    spec_for,
    thinking_budget,
    thinking_params,
)


def test_table_has_the_current_models_with_sane_numbers() -> None:
    ids = {spec.id for spec in MODEL_TABLE}
    for expected in (
        "claude-opus-4-5",
        "claude-sonnet-4-5",
        "claude-haiku-4-5",
        "claude-opus-4-6",
        "claude-opus-5-5",
    ):
        assert expected in ids
    for spec in MODEL_TABLE:
        assert spec.context_window >= 200_000
        assert 8_000 <= spec.max_tokens <= spec.context_window
        assert set(spec.cost) == {"input", "output", "cacheRead", "cacheWrite"}
        assert spec.cost["output"] > spec.cost["input"] > spec.cost["cacheRead"] > 0
    assert listed_models()[0].id == DEFAULT_MODEL_ID
    assert all(info.provider == "anthropic" for info in listed_models())


def test_known_model_info() -> None:
    info = resolve_model("claude-sonnet-4-5")
    assert (info.contextWindow, info.maxTokens, info.reasoning) == (200_000, 64_000, True)
    assert info.cost == {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}
    assert info.to_json()["api"] == "anthropic-messages"


def test_a_model_json_is_a_model_description() -> None:
    # What the state and the model list send is the protocol's model, key for key.
    info = resolve_model("claude-sonnet-4-5")
    assert set(info.to_json()) == set(ModelDescription.model_fields)
    assert ModelDescription(**info.to_json()).model_dump() == info.to_json()


def test_dated_alias_and_date_suffix_find_their_entry() -> None:
    assert resolve_model("claude-haiku-4-5-20251001").cost["input"] == 1.0
    dated = resolve_model("claude-opus-4-6-20260205")
    assert dated.id == "claude-opus-4-6-20260205"
    assert dated.maxTokens == 128_000


def test_unknown_model_gets_defaults() -> None:
    info = resolve_model("my-gateway/some-model")
    assert info.id == "my-gateway/some-model"
    assert (info.contextWindow, info.maxTokens) == (200_000, 64_000)
    assert info.cost == {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}
    assert spec_for("my-gateway/some-model").thinking == "budget"


@pytest.mark.parametrize(
    ("model_id", "style"),
    [
        ("claude-opus-4-9", "adaptive"),
        ("claude-sonnet-6", "adaptive"),
        ("claude-fable-7", "adaptive"),
        ("claude-sonnet-4-1", "budget"),
        ("claude-3-7-sonnet-latest", "budget"),
    ],
)
def test_unknown_claude_ids_guess_the_thinking_style(model_id: str, style: str) -> None:
    assert spec_for(model_id).thinking == style


def test_cost_of_usage() -> None:
    usage = {"input": 1_000_000, "output": 200_000, "cacheRead": 500_000, "cacheWrite": 100_000}
    cost = cost_of(usage, resolve_model("claude-sonnet-4-5"))
    assert cost["input"] == pytest.approx(3.0)
    assert cost["output"] == pytest.approx(3.0)
    assert cost["cacheRead"] == pytest.approx(0.15)
    assert cost["cacheWrite"] == pytest.approx(0.375)
    assert cost["total"] == pytest.approx(6.525)
    assert cost_of(usage, "claude-sonnet-4-5") == cost


def test_cost_of_tiered_model_above_the_threshold() -> None:
    small = cost_of({"input": 50_000, "output": 1_000}, "claude-haiku-5-5")
    large = cost_of({"input": 50_000, "cacheRead": 60_000, "output": 1_000}, "claude-haiku-5-5")
    assert small["input"] == pytest.approx(50_000 * 0.10 / 1e6)
    assert large["input"] == pytest.approx(50_000 * 0.50 / 1e6)
    assert large["output"] == pytest.approx(1_000 * 2.50 / 1e6)


def test_cost_uses_a_model_infos_own_prices() -> None:
    info = resolve_model("claude-sonnet-4-5")
    info.cost = {"input": 1.0, "output": 1.0, "cacheRead": 0.0, "cacheWrite": 0.0}
    assert cost_of({"input": 1_000_000}, info)["total"] == pytest.approx(1.0)


@pytest.mark.parametrize("level", ["minimal", "low", "medium", "high", "xhigh"])
def test_thinking_budget_is_valid_for_every_level(level: str) -> None:
    for max_tokens in (1, 500, 4_096, 32_000, 64_000):
        for model_max in (8_192, 64_000, 128_000):
            budget, total = thinking_budget(level, max_tokens, model_max)
            assert total <= model_max
            if budget is not None:
                assert 1024 <= budget < total


def test_thinking_budget_levels() -> None:
    assert thinking_budget("off", 32_000, 64_000) == (None, 32_000)
    assert thinking_budget("minimal", 32_000, 64_000) == (1024, 33_024)
    assert thinking_budget("high", 32_000, 64_000) == (32_000, 64_000)
    # xhigh does not fit next to 32k of answer: max_tokens stops at the model's max output
    # and the budget leaves 1024 tokens for the answer.
    assert thinking_budget("xhigh", 32_000, 64_000) == (62_976, 64_000)
    # Too small a model for any budget: thinking stays off.
    assert thinking_budget("low", 1_000, 1_500) == (None, 1_000)
    assert THINKING_BUDGETS["minimal"] == 1024


def test_thinking_params_per_model_style() -> None:
    budget_model = spec_for("claude-sonnet-4-5")
    assert thinking_params(budget_model, "off", 1000) == ({}, 1000)
    assert thinking_params(budget_model, "low", 1000) == (
        {"thinking": {"type": "enabled", "budget_tokens": 4096}},
        5096,
    )

    opus46 = spec_for("claude-opus-4-6")
    assert thinking_params(opus46, "off", 1000) == ({}, 1000)
    params, total = thinking_params(opus46, "xhigh", 1000)
    assert params == {"thinking": {"type": "adaptive"}, "output_config": {"effort": "max"}}
    assert total == 65_000

    minimal = thinking_params(spec_for("claude-opus-4-8"), "minimal", 1000)[0]
    assert minimal == {
        "thinking": {"type": "adaptive", "display": "summarized"},
        "output_config": {"effort": "low"},
    }

    assert thinking_params(spec_for("claude-opus-5"), "off", 1000)[0] == {"thinking": {"type": "disabled"}}
    assert thinking_params(spec_for("claude-sonnet-5-5"), "off", 1000)[0] == {
        "thinking": {"type": "between_tools"}
    }
    # Always-on models cannot turn thinking off: the lowest effort instead.
    assert thinking_params(spec_for("claude-fable-5-1"), "off", 1000)[0] == {
        "output_config": {"effort": "low"}
    }
    # Unknown levels count as off.
    assert thinking_params(budget_model, "bogus", 1000) == ({}, 1000)
