"""The method table names its models and the registry imports them on a method's first use."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict

from child_python import modules_loaded_by
from rpc_agent.methods.registry import MethodRegistry
from rpc_agent.protocol.table import METHODS, protocol_model


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


class _Required(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    entryId: str


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
