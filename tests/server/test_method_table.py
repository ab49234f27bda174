"""The method table names its models and the registry imports them on a method's first use; a
request without params gets its method's defaults without building the params validator."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field

from child_python import modules_loaded_by
from rpc_agent.methods.registry import MISSING, MethodRegistry
from rpc_agent.protocol.errors import INVALID_PARAMS
from rpc_agent.protocol.table import METHODS, protocol_model
from rpc_agent.server import RpcError


def test_every_model_the_table_names_lives_in_the_module_it_is_named_by() -> None:
    named = [name for method in METHODS for name in (method.params_model, method.result_model) if name]
    assert len(named) > len(METHODS)
    for name in named:
        model = protocol_model(name)
        assert f"{model.__module__}.{model.__name__}" == f"rpc_agent.protocol.{name}"
    with pytest.raises(TypeError, match="not a pydantic model"):
        protocol_model("table.METHODS")


def test_the_table_imports_no_model_module() -> None:
    loaded = modules_loaded_by("from rpc_agent.protocol.table import METHODS; [m.name for m in METHODS]")
    models = ["methods", "host", "checkpoints", "finding", "tree_methods", "stats", "entries", "events"]
    assert [name for name in models if f"rpc_agent.protocol.{name}" in loaded] == []


def test_absent_params_are_what_validating_empty_params_gives_for_every_method() -> None:
    """The registry answers an absent params member with ``model_construct()`` when every field
    has a default; for the protocol's models that is exactly ``model_validate({})``."""
    checked = []
    for method in METHODS:
        model = method.params
        if model is None or any(info.is_required() for info in model.model_fields.values()):
            continue
        constructed, validated = model.model_construct(), model.model_validate({})
        assert constructed == validated, method.name
        assert constructed.model_fields_set == validated.model_fields_set == set()
        assert constructed.model_dump(mode="json") == validated.model_dump(mode="json")
        checked.append(method.name)
    assert {"initialize", "get_entries", "get_tree", "new_session", "compact"} <= set(checked)


class _Defaults(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    limit: int = Field(default=10, ge=1)
    tags: list[str] = Field(default_factory=list)


class _Required(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    entryId: str


def test_a_request_without_params_gets_the_defaults_without_building_the_validator() -> None:
    spec = MethodRegistry().add("m", lambda _p: None, params=lambda: _Defaults, result=None, inline=True)
    parsed = spec.parse_params(MISSING)
    assert isinstance(parsed, _Defaults)
    assert (parsed.limit, parsed.tags) == (10, [])
    assert not _Defaults.__pydantic_complete__
    with pytest.raises(RpcError) as caught:
        spec.parse_params({"limit": 0})  # given params are validated as before
    assert caught.value.code == INVALID_PARAMS
    assert _Defaults.__pydantic_complete__


def test_a_request_without_params_of_a_method_with_required_params_is_refused_as_before() -> None:
    spec = MethodRegistry().add("m", lambda _p: None, params=_Required, result=None, inline=True)
    with pytest.raises(RpcError) as absent:
        spec.parse_params(MISSING)
    with pytest.raises(RpcError) as empty:
        spec.parse_params({})
    assert (absent.value.code, str(absent.value), absent.value.data) == (
        empty.value.code,
        str(empty.value),
        empty.value.data,
    )
    assert absent.value.code == INVALID_PARAMS


def test_models_given_as_functions_are_resolved_once_on_first_use() -> None:
    calls: list[str] = []

    def params() -> type[BaseModel]:
        calls.append("params")
        return _Required

    spec = MethodRegistry().add("m", lambda _p: None, params=params, result=lambda: None, inline=True)
    assert calls == []
    assert spec.positional == ("entryId",)
    assert spec.params is _Required
    assert spec.result is None
    parsed = spec.parse_params(["e1"])
    assert isinstance(parsed, _Required)
    assert parsed.entryId == "e1"
    assert calls == ["params"]
