"""Moving the leaf to another entry of the tree, with an optional summary of the branch left.

The host's ``session_before_tree`` hook may cancel the move or supply the summary itself;
otherwise the model writes it (an abort of that call cancels the move). The AgentSession
runs this inside its ``_exclusive`` and ``mutation`` guards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from rpc_agent.agent import hooks
from rpc_agent.agent.branch_summary import generate_branch_summary, prepare_branch_summary
from rpc_agent.agent.selection import record_after_navigation
from rpc_agent.agent.summary_calls import SummaryCalls
from rpc_agent.agent.switching import announce_session
from rpc_agent.protocol import events as ev
from rpc_agent.protocol import host as h
from rpc_agent.protocol import methods as m
from rpc_agent.protocol.content import message_text

if TYPE_CHECKING:
    from rpc_agent.agent.core import AgentCore


async def navigate_tree(session: AgentCore, params: m.NavigateTreeParams) -> m.NavigateTreeResult:
    manager = session.manager
    target = manager.require_entry(params.targetId)
    old_leaf = manager.leaf_id
    if params.targetId == old_leaf:
        return m.NavigateTreeResult(cancelled=False, leafId=old_leaf)
    message = target.get("message") if target.get("type") == "message" else None
    user_like_message = isinstance(message, dict) and message.get("role") in ("user", "custom")
    is_user_like = user_like_message or target.get("type") == "custom_message"
    editor_text: str | None = None
    new_leaf: str | None = params.targetId
    if is_user_like:
        content = message.get("content") if isinstance(message, dict) else target.get("content")
        editor_text = message_text(content)
        parent = target.get("parentId")
        new_leaf = parent if isinstance(parent, str) and manager.get_entry(parent) is not None else None
    summary_entry_id: str | None = None
    hook_summary: h.TreeSummary | None = None
    if hooks.declared(session.host, "session_before_tree"):
        tree_hook = await hooks.before_tree(session.host, manager, params, old_leaf, new_leaf)
        if tree_hook is None:
            return m.NavigateTreeResult(cancelled=True, leafId=old_leaf)
        params, hook_summary = tree_hook
    if hook_summary is not None:
        details = hook_summary.details
        summary_entry_id = await manager.branch_with_summary(
            new_leaf, hook_summary.summary, details, from_hook=True
        )
    elif params.summarize:
        preparation = prepare_branch_summary(manager, old_leaf, new_leaf)
        if preparation.entries:
            try:
                calls = SummaryCalls(session.settings.retry, session.emit, "branchSummary")
                with anyio.CancelScope() as scope:
                    session.op_scope = scope
                    summary, details = await generate_branch_summary(
                        session.provider,
                        session.model,
                        preparation.entries,
                        custom_instructions=params.customInstructions,
                        replace_instructions=params.replaceInstructions,
                        calls=calls,
                    )
            finally:
                session.op_scope = None
            if scope.cancelled_caught:
                return m.NavigateTreeResult(cancelled=True, leafId=old_leaf)
            details["fromLeafId"] = old_leaf
            # Its usage is stored with it, as pi does: the session's totals count it.
            summary_entry_id = await manager.branch_with_summary(
                new_leaf, summary, details, usage=calls.usage
            )
    if summary_entry_id is None:
        await (manager.branch(new_leaf) if new_leaf is not None else manager.reset_leaf())
    await record_after_navigation(session)
    label_target = summary_entry_id or params.targetId
    if params.label:
        await manager.append_label_change(label_target, params.label, move_leaf=False)
    await manager.flush()
    announce_session(session, "navigate")
    session.emit(
        ev.SessionTreeEvent(
            newLeafId=manager.leaf_id,
            oldLeafId=old_leaf,
            summaryEntry=manager.get_entry(summary_entry_id) if summary_entry_id else None,
            fromExtension=hook_summary is not None,
        )
    )
    return m.NavigateTreeResult(
        cancelled=False, editorText=editor_text, leafId=manager.leaf_id, summaryEntryId=summary_entry_id
    )
