"""The Claude model table: context windows, output limits, prices, and how thinking is asked for.

Prices are dollars per million tokens, as published on the model pages (2026-11). ``cacheWrite``
is the 5-minute cache write price (1.25x input) and ``cacheRead`` the cache hit price (0.1x
input). Ids not in the table still work: they get a 200k window, 64k max output and
Sonnet-class prices, and a thinking style guessed from the id (see ``spec_for``).

Thinking comes in two shapes on the Messages API, and which one a model accepts matters:

- ``budget``: ``{"type": "enabled", "budget_tokens": N}`` (Claude 4.5 and older). The budget
  must be >= 1024 and < max_tokens; ``thinking_budget`` picks it and raises max_tokens to make
  room, within the model's max output.
- ``adaptive``: ``{"type": "adaptive"}`` plus ``output_config.effort`` (Claude 4.6 and newer).
  Opus 4.7 and later reject ``budget_tokens`` with a 400, so the level maps to an effort there
  instead. How "off" is expressed also differs: some models accept ``{"type": "disabled"}``,
  Sonnet 5.5 turns thinking down with ``between_tools``, and the always-on models (Fable,
  Mythos, Opus 5.5) cannot turn it off at all, so "off" means the lowest effort.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from rpc_agent.protocol.entries import THINKING_LEVELS
from rpc_agent.protocol.shapes import CostDict
from rpc_agent.providers.base import ModelInfo

if TYPE_CHECKING:
    from anthropic.types import OutputConfigParam, ThinkingConfigAdaptiveParam, ThinkingConfigParam

PROVIDER = "anthropic"

ThinkingStyle = Literal["budget", "adaptive", "none"]
OffStyle = Literal["omit", "disabled", "between_tools", "low_effort"]
Effort = Literal["low", "medium", "high", "xhigh", "max"]


class ThinkingFields(TypedDict, total=False):
    """The request fields a thinking level sets (the SDK's types for them)."""

    thinking: ThinkingConfigParam
    output_config: OutputConfigParam


THINKING_BUDGETS: dict[str, int] = {
    "minimal": 1024,
    "low": 4096,
    "medium": 10240,
    "high": 32000,
    "xhigh": 64000,
    "max": 128000,
}
"""Budget tokens per level for ``budget`` models; also the extra room added to max_tokens for
``adaptive`` ones (where max_tokens covers thinking and answer together). ``max`` asks for as
much as the model's output allows (the budget is capped by it, leaving room for an answer)."""

MIN_THINKING_BUDGET = 1024
MIN_ANSWER_TOKENS = 1024
DEFAULT_OUTPUT_TOKENS = 32000
"""max_tokens when the request does not say, before room for thinking is added."""

_EFFORT_OF_LEVEL: dict[str, Effort] = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "max": "max",
}
"""Effort per level for ``adaptive`` models; ``max`` is an effort every adaptive Claude model
takes (pi-ai maps it so too), ``xhigh`` is the model's own (see ``ModelSpec.xhigh_effort``)."""


def _prices(inp: float, out: float) -> dict[str, float]:
    return {"input": inp, "output": out, "cacheRead": round(inp * 0.1, 6), "cacheWrite": round(inp * 1.25, 6)}


@dataclass(frozen=True, slots=True)
class ModelSpec:
    id: str
    name: str
    context_window: int
    max_tokens: int
    cost: dict[str, float]
    thinking: ThinkingStyle = "adaptive"
    off: OffStyle = "omit"
    xhigh_effort: Effort = "high"
    """The effort sent for level xhigh ("xhigh" where the model has it, else "max" or "high")."""
    display_summarized: bool = False
    """Send ``display: "summarized"`` with adaptive thinking (models whose default is to omit
    the thinking text and return only a signature)."""
    long_context: tuple[int, dict[str, float]] | None = None
    """(prompt tokens threshold, prices above it) for models with tiered prices."""
    aliases: tuple[str, ...] = ()
    unsupported_levels: tuple[str, ...] = ()
    """Levels the model does not take (pi's ``thinkingLevelMap`` nulls: an always-on model has
    no "off", the newest ones no "minimal")."""
    listed: bool = True
    input: tuple[str, ...] = field(default=("text", "image"))

    @property
    def reasoning(self) -> bool:
        return self.thinking != "none"

    @property
    def thinking_levels(self) -> tuple[str, ...]:
        """The levels pi offers for the model: budget models up to high; adaptive ones add
        xhigh where the model has that effort, and max."""
        if self.thinking == "none":
            return ("off",)
        levels = ["off", "minimal", "low", "medium", "high"]
        if self.thinking == "adaptive":
            levels += ["xhigh", "max"] if self.xhigh_effort == "xhigh" else ["max"]
        return tuple(level for level in levels if level not in self.unsupported_levels)

    def info(self, model_id: str | None = None) -> ModelInfo:
        return ModelInfo(
            id=model_id or self.id,
            provider=PROVIDER,
            name=self.name,
            contextWindow=self.context_window,
            maxTokens=self.max_tokens,
            reasoning=self.reasoning,
            input=list(self.input),
            cost=dict(self.cost),
            thinkingLevels=self.thinking_levels,
        )


_M = 1_000_000
_K128 = 128_000
_K64 = 64_000

_OPUS_45 = _prices(5, 25)
_SONNET_4 = _prices(3, 15)
_SONNET_5 = _prices(2, 10)
_FABLE = _prices(10, 50)


def _always_thinking(model_id: str, name: str, cost: dict[str, float] = _FABLE, **more: Any) -> ModelSpec:
    """A model that cannot turn thinking off (Fable, Mythos, Opus 5.5): "off" is the lowest
    effort. They share the 1M window, 128k output, effort xhigh and summarized thinking."""
    more.setdefault("unsupported_levels", ("off",))
    return ModelSpec(
        model_id,
        name,
        _M,
        _K128,
        cost,
        off="low_effort",
        xhigh_effort="xhigh",
        display_summarized=True,
        **more,
    )


# First entry is the default model.
MODEL_TABLE: tuple[ModelSpec, ...] = (
    _always_thinking("claude-opus-5-5", "Claude Opus 5.5", _prices(4, 20),
                     unsupported_levels=("off", "minimal")),
    ModelSpec("claude-sonnet-5-5", "Claude Sonnet 5.5", _M, _K128, _SONNET_5,
              off="between_tools", xhigh_effort="xhigh", display_summarized=True,
              unsupported_levels=("off", "minimal")),
    ModelSpec("claude-haiku-5-5", "Claude Haiku 5.5", _M, _K128, _prices(0.1, 0.5),
              off="disabled", xhigh_effort="xhigh", display_summarized=True,
              long_context=(100_000, _prices(0.5, 2.5)), unsupported_levels=("minimal",)),
    _always_thinking("claude-fable-5-1", "Claude Fable 5.1"),
    # In the SDK's model list but not yet described on the model pages: Fable-class assumed.
    _always_thinking("claude-fable-5-2", "Claude Fable 5.2"),
    ModelSpec("claude-opus-5", "Claude Opus 5", _M, _K128, _OPUS_45,
              off="disabled", xhigh_effort="xhigh", display_summarized=True),
    ModelSpec("claude-sonnet-5", "Claude Sonnet 5", _M, _K128, _SONNET_5,
              off="disabled", xhigh_effort="xhigh", display_summarized=True),
    _always_thinking("claude-fable-5", "Claude Fable 5"),
    ModelSpec("claude-opus-4-8", "Claude Opus 4.8", _M, _K128, _OPUS_45,
              xhigh_effort="xhigh", display_summarized=True),
    ModelSpec("claude-opus-4-7", "Claude Opus 4.7", _M, _K128, _OPUS_45,
              xhigh_effort="xhigh", display_summarized=True),
    ModelSpec("claude-opus-4-6", "Claude Opus 4.6", _M, _K128, _OPUS_45, xhigh_effort="max"),
    ModelSpec("claude-sonnet-4-6", "Claude Sonnet 4.6", _M, _K64, _SONNET_4),
    ModelSpec("claude-opus-4-5", "Claude Opus 4.5", 200_000, _K64, _OPUS_45,
              thinking="budget", aliases=("claude-opus-4-5-20251101",)),
    ModelSpec("claude-sonnet-4-5", "Claude Sonnet 4.5", 200_000, _K64, _SONNET_4,
              thinking="budget", aliases=("claude-sonnet-4-5-20250929",)),
    ModelSpec("claude-haiku-4-5", "Claude Haiku 4.5", 200_000, _K64, _prices(1, 5),
              thinking="budget", aliases=("claude-haiku-4-5-20251001",)),
    # Limited-access releases (Project Glasswing): same specs and prices as Fable.
    _always_thinking("claude-mythos-5-2", "Claude Mythos 5.2"),
    _always_thinking("claude-mythos-5-1", "Claude Mythos 5.1"),
    _always_thinking("claude-mythos-5", "Claude Mythos 5"),
    # Past its retirement date; kept so stored sessions still price and convert correctly.
    _always_thinking("claude-mythos-preview", "Claude Mythos Preview", _prices(25, 125), listed=False),
)  # fmt: skip

_BY_ID: dict[str, ModelSpec] = {}
for _spec in MODEL_TABLE:
    _BY_ID[_spec.id] = _spec
    for _alias in _spec.aliases:
        _BY_ID[_alias] = _spec

DEFAULT_MODEL_ID = MODEL_TABLE[0].id

_DATE_SUFFIX = re.compile(r"-\d{8}$")
_CLAUDE_ID = re.compile(r"claude-(opus|sonnet|haiku|fable|mythos)-(\d+)(?:-(\d{1,2}))?(?:-|$)")


def listed_models() -> list[ModelInfo]:
    return [spec.info() for spec in MODEL_TABLE if spec.listed]


def known_spec(model_id: str) -> ModelSpec | None:
    """The table entry of an id (date-suffixed ids find their base entry), or None."""
    spec = _BY_ID.get(model_id)
    if spec is None:
        spec = _BY_ID.get(_DATE_SUFFIX.sub("", model_id))
    return spec


def spec_for(model_id: str) -> ModelSpec:
    """The table entry of an id, or defaults for an id we do not know.

    Unknown ids (a new model, a gateway's alias) get a 200k window, 64k max output and
    Sonnet-class prices. Their thinking style is guessed from the id: a recognisable Claude
    4.6+ id gets adaptive thinking (Fable/Mythos always-on), anything else budget thinking,
    which every thinking-capable model before 4.7 accepts.
    """
    spec = known_spec(model_id)
    if spec is not None:
        return spec
    thinking: ThinkingStyle = "budget"
    off: OffStyle = "omit"
    display = False
    match = _CLAUDE_ID.search(model_id)
    if match:
        family, major, minor = match.group(1), int(match.group(2)), int(match.group(3) or 0)
        if family in ("fable", "mythos"):
            thinking, off, display = "adaptive", "low_effort", True
        elif (major, minor) >= (4, 6):
            thinking, display = "adaptive", (major, minor) >= (4, 7)
    return ModelSpec(
        model_id,
        model_id,
        200_000,
        _K64,
        dict(_SONNET_4),
        thinking=thinking,
        off=off,
        display_summarized=display,
        listed=False,
    )


def resolve_model(model_id: str) -> ModelInfo:
    return spec_for(model_id).info(model_id)


# --- cost ---------------------------------------------------------------------------------


def _model_id(model: ModelInfo | str) -> str:
    return model if isinstance(model, str) else model.id


def cost_of(usage: Mapping[str, Any], model: ModelInfo | str) -> CostDict:
    """The cost object {input, output, cacheRead, cacheWrite, total} of a usage dict.

    ``usage`` has the stored keys (input, output, cacheRead, cacheWrite). A ModelInfo's own
    ``cost`` is used (a user may have configured other prices), except for models with tiered
    prices, whose long-context tier applies when the prompt (input + cache read + cache write)
    exceeds its threshold.
    """
    tokens = {key: int(usage.get(key) or 0) for key in ("input", "output", "cacheRead", "cacheWrite")}
    spec = known_spec(_model_id(model))
    prices: dict[str, float]
    prices = model.cost if isinstance(model, ModelInfo) else (spec or spec_for(model)).cost
    if spec is not None and spec.long_context is not None:
        threshold, long_prices = spec.long_context
        if tokens["input"] + tokens["cacheRead"] + tokens["cacheWrite"] > threshold:
            prices = long_prices
    parts = {key: tokens[key] * float(prices.get(key, 0.0)) / 1_000_000 for key in tokens}
    return {
        "input": parts["input"],
        "output": parts["output"],
        "cacheRead": parts["cacheRead"],
        "cacheWrite": parts["cacheWrite"],
        "total": sum(parts.values()),
    }


# --- thinking -----------------------------------------------------------------------------


def normalize_level(level: str | None) -> str:
    return level if level in THINKING_LEVELS else "off"


def thinking_budget(level: str, max_tokens: int, model_max_tokens: int) -> tuple[int | None, int]:
    """(budget_tokens or None, max_tokens) for budget-style thinking at ``level``.

    max_tokens is raised by the budget (the answer keeps its room), capped at the model's
    max output; when the cap bites, the budget is cut to leave 1024 answer tokens (or the
    requested room if smaller). If that leaves less than the API's minimum of 1024, thinking
    is off (None).
    """
    level = normalize_level(level)
    max_tokens = max(1, min(max_tokens, model_max_tokens))
    if level == "off":
        return None, max_tokens
    budget = THINKING_BUDGETS[level]
    total = min(model_max_tokens, max_tokens + budget)
    if total < max_tokens + budget:
        # Capped by the model: keep room for an answer (at least 1024 tokens, or the
        # requested room when that is smaller).
        budget = min(budget, total - min(max_tokens, MIN_ANSWER_TOKENS))
    if budget < MIN_THINKING_BUDGET or budget >= total:
        return None, max_tokens
    return budget, total


def thinking_params(spec: ModelSpec, level: str, max_tokens: int) -> tuple[ThinkingFields, int]:
    """The request fields (``thinking``, ``output_config``) for a level, and the max_tokens to
    send. ``max_tokens`` is the room wanted for the answer."""
    level = normalize_level(level)
    model_max = spec.max_tokens
    max_tokens = max(1, min(max_tokens, model_max))
    if spec.thinking == "none":
        return {}, max_tokens
    if spec.thinking == "budget":
        budget, total = thinking_budget(level, max_tokens, model_max)
        if budget is None:
            return {}, total
        return {"thinking": {"type": "enabled", "budget_tokens": budget}}, total

    # adaptive: max_tokens covers thinking and answer, so add the level's room on top.
    if level == "off":
        if spec.off == "disabled":
            return {"thinking": {"type": "disabled"}}, max_tokens
        if spec.off == "between_tools":
            return {"thinking": {"type": "between_tools"}}, max_tokens
        if spec.off == "low_effort":
            return {"output_config": {"effort": "low"}}, max_tokens
        return {}, max_tokens
    effort = spec.xhigh_effort if level == "xhigh" else _EFFORT_OF_LEVEL[level]
    thinking: ThinkingConfigAdaptiveParam = {"type": "adaptive"}
    if spec.display_summarized:
        thinking["display"] = "summarized"
    total = min(model_max, max_tokens + THINKING_BUDGETS[level])
    return {"thinking": thinking, "output_config": {"effort": effort}}, total
