"""The method table: every JSON-RPC method"s name, params model, result model and description.

This is the contract both sides read: the server binds a handler to each name (and refuses to
start with one missing), the schema generator publishes it, and the clients are generated from
that schema. A method is added here first.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from rpc_agent.protocol import checkpoints as c
from rpc_agent.protocol import finding as f
from rpc_agent.protocol import host as h
from rpc_agent.protocol import methods as m
from rpc_agent.protocol.base import Ok


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    params: type[BaseModel] | None
    """None: the method takes no params (an absent or empty ``params`` member)."""
    result: type[BaseModel] | None
    description: str


METHODS: tuple[Method, ...] = (
    Method(
        "initialize",
        m.InitializeParams,
        m.InitializeResult,
        "Handshake: protocol version, server info, capabilities, the method list and the state.",
    ),
    Method(
        "get_state",
        None,
        m.State,
        "The session and agent state.",
    ),
    Method(
        "shutdown",
        None,
        Ok,
        "Finish: abort any run, flush the session file, exit 0 after answering.",
    ),
    Method(
        "prompt",
        m.PromptParams,
        m.PromptResult,
        "Run the agent on a user message; resolves when the run ends. While a run is going, needs streamingBehavior and is queued.",
    ),
    Method(
        "steer",
        m.QueueParams,
        m.QueueResult,
        "Queue a message delivered between turns of the current run.",
    ),
    Method(
        "follow_up",
        m.QueueParams,
        m.QueueResult,
        "Queue a message delivered when the current run would stop.",
    ),
    Method(
        "abort",
        None,
        m.AbortResult,
        "Abort the run, compaction or summary in progress.",
    ),
    Method(
        "clear_queue",
        None,
        m.ClearQueueResult,
        "Take every queued steering and follow-up message off the queues; returns their texts.",
    ),
    Method(
        "abort_retry",
        None,
        m.AbortResult,
        "Stop waiting for an automatic retry.",
    ),
    Method(
        "get_messages",
        None,
        m.MessagesResult,
        "The context as the model sees it.",
    ),
    Method(
        "get_entries",
        m.GetEntriesParams,
        m.EntriesResult,
        "Raw session entries in file order, optionally only those after an entry id.",
    ),
    Method(
        "get_last_assistant_text",
        None,
        m.LastAssistantTextResult,
        "Text of the last assistant message on the current branch.",
    ),
    Method(
        "get_session_stats",
        None,
        m.SessionStats,
        "Message counts, token usage and cost of the session.",
    ),
    Method(
        "get_tree",
        m.GetTreeParams,
        m.TreeResult,
        "The tree as a flat depth-first list, children oldest first; "
        "optionally filtered, a subtree, depth-limited, or only what changed since a cursor.",
    ),
    Method(
        "navigate_tree",
        m.NavigateTreeParams,
        m.NavigateTreeResult,
        "Move the leaf to any entry, optionally summarizing the branch left behind.",
    ),
    Method(
        "set_label",
        m.SetLabelParams,
        m.SetLabelResult,
        "Set or clear (null) the label of an entry.",
    ),
    Method(
        "new_session",
        m.NewSessionParams,
        m.SessionChangeResult,
        "Start a new session.",
    ),
    Method(
        "switch_session",
        m.SwitchSessionParams,
        m.SessionChangeResult,
        "Open another session file.",
    ),
    Method(
        "list_sessions",
        m.ListSessionsParams,
        m.ListSessionsResult,
        "Sessions of this working directory (or all), most recent first; a page at a time with limit and cursor.",
    ),
    Method(
        "search_sessions",
        f.SearchSessionsParams,
        f.SearchSessionsResult,
        "Sessions of this working directory (or all) whose messages, name or labels hold the query, most recently written first, a page at a time.",
    ),
    Method(
        "delete_session",
        f.DeleteSessionParams,
        f.DeleteSessionResult,
        "Delete a session file, its file checkpoints and the stored images only it used; refuses the live session, one another process has open, and any file that is not a session of this agent's session folders.",
    ),
    Method(
        "fork",
        m.ForkParams,
        m.ForkResult,
        "New session file from the path before a user message; returns its text.",
    ),
    Method(
        "clone",
        m.CloneParams,
        m.SessionChangeResult,
        "New session file holding the current branch.",
    ),
    Method(
        "get_fork_messages",
        None,
        m.ForkMessagesResult,
        "User messages that fork can start from.",
    ),
    Method(
        "set_session_name",
        m.SetSessionNameParams,
        Ok,
        "Set the session's display name.",
    ),
    Method(
        "set_model",
        m.SetModelParams,
        m.ModelDescription,
        "Switch the model. Unknown ids are refused (invalid params, with the known ids); so is a provider other than the one the server runs.",
    ),
    Method(
        "cycle_model",
        None,
        m.CycleModelResult,
        "Switch to the next available model.",
    ),
    Method(
        "get_available_models",
        None,
        m.ModelsResult,
        "Models of the current provider.",
    ),
    Method(
        "set_thinking_level",
        m.SetThinkingLevelParams,
        Ok,
        "Set the thinking level.",
    ),
    Method(
        "cycle_thinking_level",
        None,
        m.ThinkingLevelResult,
        "Switch to the next thinking level.",
    ),
    Method(
        "get_available_thinking_levels",
        None,
        m.ThinkingLevelsResult,
        "The thinking levels the current model takes (only off for a model without reasoning).",
    ),
    Method(
        "get_commands",
        None,
        m.CommandsResult,
        "Commands a prompt can run as /name (pi's extension commands, prompt templates, skills).",
    ),
    Method(
        "set_steering_mode",
        m.SetQueueModeParams,
        Ok,
        "Deliver queued steering messages all at once or one per turn.",
    ),
    Method(
        "set_follow_up_mode",
        m.SetQueueModeParams,
        Ok,
        "Deliver queued follow-up messages all at once or one per run.",
    ),
    Method(
        "set_auto_compaction",
        m.SetEnabledParams,
        Ok,
        "Turn automatic compaction on or off.",
    ),
    Method(
        "set_auto_retry",
        m.SetEnabledParams,
        Ok,
        "Turn automatic retries of transient provider errors on or off.",
    ),
    Method(
        "bash",
        m.BashParams,
        m.BashResult,
        "Run a shell command; its output joins the context of the next prompt.",
    ),
    Method(
        "abort_bash",
        None,
        m.AbortResult,
        "Abort the running bash command.",
    ),
    Method(
        "compact",
        m.CompactParams,
        m.CompactResult,
        "Replace old context by a summary.",
    ),
    Method(
        "export_html",
        m.ExportHtmlParams,
        m.ExportHtmlResult,
        "Write the whole session tree as one self-contained HTML page; returns its path.",
    ),
    Method(
        "restore_files",
        c.RestoreFilesParams,
        c.RestoreFilesResult,
        "Make some or all files what they were at an entry (or a checkpoint) without moving the leaf; "
        "refused with the list of files someone else changed unless force; dryRun writes nothing.",
    ),
    Method(
        "get_file_changes",
        c.GetFileChangesParams,
        c.FileChangesResult,
        "The files an entry changed (against its parent's state, or since another entry), with unified diffs.",
    ),
    Method(
        "mcp_servers",
        None,
        m.McpServersResult,
        "The session's MCP servers: transport, status, tool count, last error.",
    ),
    Method(
        "mcp_restart",
        m.McpRestartParams,
        m.McpServersResult,
        "Restart one MCP server (or all); resolves once it is ready or has failed.",
    ),
    Method(
        "set_client_tools",
        h.SetClientToolsParams,
        h.SetClientToolsResult,
        "Replace the client's tools (the next model call sees the new list).",
    ),
    Method(
        "send_custom_message",
        h.SendCustomMessageParams,
        h.EntryIdResult,
        "Append a custom_message (it reaches the model); triggerTurn lets the model answer it. "
        "During a run it steers the run: stored when the next turn starts (entryId null).",
    ),
    Method(
        "append_custom_entry",
        h.AppendCustomEntryParams,
        h.EntryIdResult,
        "Append a custom entry (extension state that never reaches the model).",
    ),
)

METHODS_BY_NAME: dict[str, Method] = {method.name: method for method in METHODS}
