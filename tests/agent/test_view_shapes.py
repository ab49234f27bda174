"""The TypedDicts the agent hands its fronts (the tree as dicts, the sandbox's state) keep the
fields of the protocol models that describe the same data, and are what the code really
builds: a field the store adds to a tree row and the shape lacks would be read untyped."""

from typing import get_type_hints

from rpc_agent.agent import views
from rpc_agent.agent.sandboxing import SessionSandbox
from rpc_agent.protocol import methods as m
from rpc_agent.protocol.sandbox import SandboxState
from rpc_agent.protocol.state_shapes import SandboxStateDict
from rpc_agent.sandbox import SandboxPolicy
from rpc_agent.store import SessionManager


def _keys(shape: type) -> set[str]:
    return set(get_type_hints(shape))


def test_tree_shapes_keep_the_fields_of_the_tree_models() -> None:
    assert _keys(views.TreeNodeDict) == set(m.TreeNode.model_fields)
    assert _keys(views.TreeColumnsDict) == set(m.TreeColumns.model_fields)
    # filesChanged is the JSON-RPC front's addition (from the checkpoints), not the tree's.
    assert _keys(views.TreeDict) == set(m.TreeResult.model_fields) - {"filesChanged"}


def _manager_with_a_branch() -> SessionManager:
    manager = SessionManager.in_memory("/project")
    manager.append_message({"role": "user", "content": "hello", "timestamp": 1})
    first = manager.leaf_id
    manager.append_message({"role": "user", "content": "again", "timestamp": 2})
    assert first is not None
    manager.append_label_change(first, "start")
    return manager


def test_the_tree_as_dicts_has_the_keys_of_its_shapes() -> None:
    manager = _manager_with_a_branch()
    tree = views.tree(manager)
    assert set(tree) == _keys(views.TreeDict) - {"columns"}
    assert len(tree["nodes"]) == 2
    for node in tree["nodes"]:
        assert set(node) == _keys(views.TreeNodeDict)
    assert tree["nodes"][0]["label"] == "start"


def test_the_tree_in_columns_has_the_keys_of_its_shapes() -> None:
    manager = _manager_with_a_branch()
    tree = views.tree(manager, m.GetTreeParams(format="columns"))
    assert set(tree) == _keys(views.TreeDict)
    assert tree["nodes"] == []
    columns = tree["columns"]
    assert set(columns) == _keys(views.TreeColumnsDict)
    assert columns["preview"] == ["hello", "again"]


def test_the_sandbox_state_keeps_the_fields_of_its_model() -> None:
    assert _keys(SandboxStateDict) == set(SandboxState.model_fields)
    state = SessionSandbox(SandboxPolicy(), None).state_json()
    assert set(state) == _keys(SandboxStateDict)
    assert SandboxState.model_validate(state).mode == "off"
