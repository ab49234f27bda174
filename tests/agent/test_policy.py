"""The approval policy: which calls are asked about, and rules that decide before asking."""

from __future__ import annotations

from pathlib import Path

import pytest

from rpc_agent.agent.policy import ApprovalPolicy, Rule, RuleError, parse_rules, preview
from rpc_agent.tools import default_tools
from rpc_agent.tools.base import Tool

TOOLS = {tool.name: tool for tool in default_tools()}


def tool(name: str) -> Tool:
    return TOOLS[name]


def test_writes_asks_about_every_tool_not_marked_read_only(tmp_path: Path) -> None:
    policy = ApprovalPolicy(mode="writes")
    asked = {name for name, t in TOOLS.items() if policy.decide(t, {}, tmp_path).verdict == "ask"}
    assert asked == {"write", "edit", "bash"}


def test_never_and_all(tmp_path: Path) -> None:
    assert (
        ApprovalPolicy(mode="never").decide(tool("bash"), {"command": "rm -rf x"}, tmp_path).verdict
        == "allow"
    )
    assert ApprovalPolicy(mode="all").decide(tool("read"), {"path": "a"}, tmp_path).verdict == "ask"


def test_rules_match_commands_and_paths_deny_first(tmp_path: Path) -> None:
    policy = ApprovalPolicy(
        mode="all",
        allow=parse_rules(["bash(npm test*)", "read", "edit(src/**)"]),
        deny=parse_rules(["edit(src/secret/*)"]),
    )
    assert policy.decide(tool("bash"), {"command": "npm test -- --watch"}, tmp_path).verdict == "allow"
    assert policy.decide(tool("bash"), {"command": "npm publish"}, tmp_path).verdict == "ask"
    assert policy.decide(tool("read"), {"path": "/etc/hosts"}, tmp_path).verdict == "allow"
    assert policy.decide(tool("edit"), {"path": "src/a/b.py"}, tmp_path).verdict == "allow"
    assert policy.decide(tool("edit"), {"path": str(tmp_path / "src/x.py")}, tmp_path).verdict == "allow"
    denied = policy.decide(tool("edit"), {"path": "src/secret/key"}, tmp_path)
    assert denied.verdict == "deny"
    assert "edit(src/secret/*)" in denied.reason


def test_a_malformed_rule_is_an_error() -> None:
    with pytest.raises(RuleError):
        Rule.parse("bash(")


def test_preview_diffs_without_writing(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("one\ntwo\n")
    edit = preview("edit", {"path": "f.txt", "oldText": "two", "newText": "three"}, tmp_path)
    assert edit is not None
    diff = edit["diff"]
    assert diff is not None
    assert "-two" in diff
    assert "+three" in diff
    assert (tmp_path / "f.txt").read_text() == "one\ntwo\n"
    write = preview("write", {"path": "new.txt", "content": "hi\n"}, tmp_path)
    assert write is not None
    assert write["newFile"] is True
    assert not (tmp_path / "new.txt").exists()
    assert preview("bash", {"command": "ls"}, tmp_path) == {"command": "ls", "cwd": str(tmp_path)}
