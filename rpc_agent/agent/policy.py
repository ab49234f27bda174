"""Which tool calls need the host's approval: the policy, its rules and the previews.

The policy is ``never`` (nothing is asked), ``writes`` (every tool not marked read-only:
write, edit, bash and each client or MCP tool without a read-only hint) or ``all``. Rules
from the settings decide before anyone is asked: ``deny`` rules first, then ``allow`` rules;
a rule is a tool name with an optional glob on what the call touches (``bash(npm test*)``
matches the command, ``edit(src/**)`` the path relative to the working directory, ``read``
every call of that tool). ``allow_always`` answers add the tool to a per-session set.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rpc_agent.errors import SettingsError
from rpc_agent.protocol.host import ApprovalPreview
from rpc_agent.tools.base import Tool, is_read_only

ApprovalMode = Literal["never", "writes", "all"]
Verdict = Literal["allow", "deny", "ask"]

_RULE = re.compile(r"^\s*([A-Za-z0-9_.:-]+)\s*(?:\((.*)\))?\s*$", re.S)


class RuleError(SettingsError):
    """A rule in the settings that cannot be parsed."""


@dataclass(frozen=True, slots=True)
class Rule:
    tool: str
    pattern: str | None = None

    @classmethod
    def parse(cls, text: str) -> Rule:
        match = _RULE.match(text)
        if match is None:
            raise RuleError(f"invalid tool rule {text!r}: expected NAME or NAME(PATTERN)")
        pattern = match.group(2)
        return cls(match.group(1), pattern.strip() if pattern is not None else None)

    def matches(self, tool_name: str, arguments: Mapping[str, object], cwd: Path) -> bool:
        if tool_name != self.tool:
            return False
        if self.pattern is None or self.pattern in ("", "*"):
            return True
        subject = call_subject(tool_name, arguments, cwd)
        return subject is not None and fnmatch.fnmatchcase(subject, self.pattern)

    def __str__(self) -> str:
        return self.tool if self.pattern is None else f"{self.tool}({self.pattern})"


def call_subject(tool_name: str, arguments: Mapping[str, object], cwd: Path) -> str | None:
    """What a rule's pattern is matched against: the command, or the path relative to cwd."""
    if tool_name == "bash":
        command = arguments.get("command")
        return command if isinstance(command, str) else None
    path = arguments.get("path")
    if not isinstance(path, str):
        return None
    candidate = Path(path).expanduser()
    if not candidate.is_absolute():
        return candidate.as_posix()
    try:
        return candidate.relative_to(cwd).as_posix()
    except ValueError:
        return candidate.as_posix()


@dataclass(slots=True)
class Decision:
    verdict: Verdict
    reason: str
    source: Literal["policy", "rule", "session"] = "policy"


@dataclass(slots=True)
class ApprovalPolicy:
    mode: ApprovalMode = "never"
    allow: list[Rule] = field(default_factory=list)
    deny: list[Rule] = field(default_factory=list)
    always_allowed: set[str] = field(default_factory=set)
    """Tools the host answered ``allow_always`` for, in this session."""

    def decide(self, tool: Tool, arguments: Mapping[str, object], cwd: Path) -> Decision:
        name = tool.name
        for rule in self.deny:
            if rule.matches(name, arguments, cwd):
                return Decision(
                    "deny", f"the {name} call is denied by the rule {rule} in the settings", "rule"
                )
        for rule in self.allow:
            if rule.matches(name, arguments, cwd):
                return Decision("allow", f"allowed by the rule {rule}", "rule")
        if name in self.always_allowed:
            return Decision("allow", f"{name} was allowed for the rest of the session", "session")
        if self.mode == "all" or (self.mode == "writes" and not is_read_only(tool)):
            return Decision("ask", f"the approval policy is {self.mode!r}")
        return Decision("allow", f"the approval policy is {self.mode!r}")


def parse_rules(texts: list[str] | None) -> list[Rule]:
    return [Rule.parse(text) for text in texts or []]


def preview(tool_name: str, arguments: Mapping[str, object], cwd: Path) -> ApprovalPreview | None:
    """What the host shows before deciding: a diff for edit/write (nothing is written), the
    command and cwd for bash."""
    if tool_name == "bash":
        return {"command": arguments.get("command"), "cwd": str(cwd)}
    if tool_name not in ("edit", "write"):
        return None
    from rpc_agent.tools.edit import unified_diff

    path = arguments.get("path")
    if not isinstance(path, str):
        return None
    target = Path(path).expanduser()
    target = target if target.is_absolute() else cwd / target
    try:
        old = target.read_text(encoding="utf-8", errors="surrogateescape").replace("\r\n", "\n")
        exists = True
    except OSError:
        old, exists = "", False
    if tool_name == "write":
        new = str(arguments.get("content", ""))
    else:
        old_text, new_text = str(arguments.get("oldText", "")), str(arguments.get("newText", ""))
        if not old_text or old_text not in old:
            return {"path": str(target), "diff": None, "note": "oldText does not occur in the file"}
        count = -1 if arguments.get("replaceAll") else 1
        new = old.replace(old_text, new_text, count)
    label = call_subject(tool_name, arguments, cwd) or path
    diff, _first = unified_diff(old, new, label)
    result: ApprovalPreview = {"path": str(target), "diff": diff}
    if not exists:
        result["newFile"] = True
    return result
