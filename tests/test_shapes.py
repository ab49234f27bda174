"""The TypedDicts the code passes entries and messages around in keep the fields of the
pydantic models that define the file format: a field added to a model and not to its shape
would make mypy reject code that reads it, or worse, let it be read untyped."""

from typing import get_args, get_type_hints

from pydantic import BaseModel

from rpc_agent.protocol import entries, shapes


def _union_members(annotated: object) -> list[type[BaseModel]]:
    members = get_args(get_args(annotated)[0])
    assert members, annotated
    return [member for member in members if issubclass(member, BaseModel)]


def _missing(models: list[type[BaseModel]], shape: type) -> dict[str, list[str]]:
    keys = set(get_type_hints(shape))
    return {
        model.__name__: sorted(set(model.model_fields) - keys)
        for model in models
        if set(model.model_fields) - keys
    }


def test_every_entry_field_is_a_key_of_the_entry_shape() -> None:
    models = _union_members(entries.KnownEntry)
    assert len(models) == len(entries.KNOWN_ENTRY_TYPES)
    assert _missing(models, shapes.EntryDict) == {}


def test_every_message_field_is_a_key_of_the_message_shape() -> None:
    models = _union_members(entries.AgentMessage)
    assert {model.model_fields["role"].default for model in models} >= {"user", "assistant", "toolResult"}
    assert _missing(models, shapes.MessageDict) == {}


def test_every_block_field_is_a_key_of_the_block_shape() -> None:
    blocks: list[type[BaseModel]] = [
        entries.TextContent,
        entries.ImageContent,
        entries.ThinkingContent,
        entries.ToolCall,
    ]
    assert _missing(blocks, shapes.BlockDict) == {}


def test_usage_header_and_declarations_keep_their_model_fields() -> None:
    pairs: list[tuple[type[BaseModel], type]] = [
        (entries.Usage, shapes.UsageDict),
        (entries.Cost, shapes.CostDict),
        (entries.SessionHeader, shapes.HeaderDict),
        (entries.ToolDeclaration, shapes.ToolDeclarationDict),
        (entries.ContextReplacement, shapes.ReplacementDict),
    ]
    for model, shape in pairs:
        assert set(model.model_fields) == set(get_type_hints(shape)), model.__name__


def test_a_shape_declares_no_field_its_models_lack() -> None:
    """The other direction: a key in a shape that no model has is a typo or a leftover."""
    entry_fields = {name for model in _union_members(entries.KnownEntry) for name in model.model_fields}
    message_fields = {name for model in _union_members(entries.AgentMessage) for name in model.model_fields}
    assert set(get_type_hints(shapes.EntryDict)) - entry_fields == set()
    assert set(get_type_hints(shapes.MessageDict)) - message_fields == set()
