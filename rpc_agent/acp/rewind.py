"""``/rewind`` and ``/changes``: the workspace checkpoints from the editor's prompt box.

``/rewind`` moves the conversation back to before the last prompt (or before/at the entry
named) with the files; ``/changes`` shows what the last prompt (or one entry) changed, as
diffs. Both call the AgentSession API the JSON-RPC methods use.
"""

from __future__ import annotations

from rpc_agent.agent.agent_session import AgentSession
from rpc_agent.errors import RestoreConflictError
from rpc_agent.protocol import checkpoints as c
from rpc_agent.protocol import methods as m

MAX_SHOWN = 20_000
"""Characters of diff shown in one reply (the rest is named, not shown)."""


def last_prompt(agent: AgentSession) -> str | None:
    """The last user message on the current branch."""
    for entry in reversed(agent.manager.get_branch()):
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "user":
            return str(entry["id"])
    return None


async def rewind(agent: AgentSession, rest: str) -> str:
    words = rest.split()
    force = "force" in words
    named = [w for w in words if w != "force"]
    target = named[0] if named else last_prompt(agent)
    if target is None:
        return "Nothing to rewind: this branch has no prompt yet."
    try:
        result = await agent.navigate_tree(
            m.NavigateTreeParams(targetId=target, restoreFiles=True, force=force)
        )
    except RestoreConflictError as exc:
        listed = "\n".join(f"- {path}" for path in exc.files)
        return (
            f"Not rewound: these files changed since the last checkpoint:\n{listed}\n\n"
            f"`/rewind {target} force` overwrites them."
        )
    if result.cancelled:
        return "The rewind was cancelled."
    restore = result.restore
    files = restore.files if restore is not None else []
    lines = [f"Rewound to {result.leafId or 'the start'}; {len(files)} file(s) restored."]
    lines += [f"- {f.status} {f.path}" for f in files]
    if restore is not None:
        lines.append(f"\nThe files before the rewind are checkpoint {restore.checkpointId}.")
    if result.editorText:
        lines.append(f"\nEditor text: {result.editorText}")
    return "\n".join(lines)


async def changes(agent: AgentSession, rest: str) -> str:
    words = rest.split()
    if words:
        found = await agent.file_changes(words[0], None)
    else:
        leaf, prompt = agent.manager.leaf_id, last_prompt(agent)
        if leaf is None or prompt is None:
            return "No changes yet."
        found = await agent.file_changes(leaf, prompt)
    return format_changes(found)


def format_changes(found: c.FileChangesResult) -> str:
    if not found.files:
        return "No files changed."
    lines = [f"{len(found.files)} file(s) changed:"] + [f"- {f.status} {f.path}" for f in found.files]
    shown = 0
    for change in found.files:
        if not change.diff or shown + len(change.diff) > MAX_SHOWN:
            continue
        shown += len(change.diff)
        lines.append(f"\n```diff\n{change.diff.rstrip()}\n```")
    return "\n".join(lines)
