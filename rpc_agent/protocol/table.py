"""The method table: every JSON-RPC method"s name, params model, result model and description.

This is the contract both sides read: the server binds a handler to each name (and refuses to
start with one missing), the schema generator publishes it, and the clients are generated from
that schema. A method is added here first.

The table names each model (``"methods.PromptParams"``: a module of this package, then the
class) and imports it when it is first asked for: the server lists every method at start-up,
and importing every protocol module for that would build model classes that only some
methods use (session search, checkpoints, client tools) before the first answer.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache

from pydantic import BaseModel


@cache
def protocol_model(path: str) -> type[BaseModel]:
    """The model ``path`` names: ``"module.Class"``, the module one of ``rpc_agent.protocol``."""
    module, _, name = path.rpartition(".")
    model = getattr(importlib.import_module(f"rpc_agent.protocol.{module}"), name)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(f"{path} is not a pydantic model")
    return model


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    params_model: str | None
    """The params model's name (see ``protocol_model``); None: the method takes no params (an
    absent or empty ``params`` member)."""
    result_model: str | None
    description: str

    @property
    def params(self) -> type[BaseModel] | None:
        return None if self.params_model is None else protocol_model(self.params_model)

    @property
    def result(self) -> type[BaseModel] | None:
        return None if self.result_model is None else protocol_model(self.result_model)


METHODS: tuple[Method, ...] = (
    Method(
        "initialize",
        "methods.InitializeParams",
        "methods.InitializeResult",
        "Handshake: protocol version, server info, capabilities, the method list and the state.",
    ),
    Method(
        "get_state",
        None,
        "methods.State",
        "The session and agent state.",
    ),
    Method(
        "shutdown",
        None,
        "base.Ok",
        "Finish: abort any run, flush the session file, exit 0 after answering.",
    ),
    Method(
        "prompt",
        "methods.PromptParams",
        "methods.PromptResult",
        "Run the agent on a user message; resolves when the run ends. While a run is going, needs streamingBehavior and is queued.",
    ),
    Method(
        "steer",
        "methods.QueueParams",
        "methods.QueueResult",
        "Queue a message delivered between turns of the current run.",
    ),
    Method(
        "follow_up",
        "methods.QueueParams",
        "methods.QueueResult",
        "Queue a message delivered when the current run would stop.",
    ),
    Method(
        "abort",
        None,
        "methods.AbortResult",
        "Abort the run, compaction or summary in progress.",
    ),
    Method(
        "clear_queue",
        None,
        "methods.ClearQueueResult",
        "Take every queued steering and follow-up message off the queues; returns their texts.",
    ),
    Method(
        "abort_retry",
        None,
        "methods.AbortResult",
        "Stop waiting for an automatic retry.",
    ),
    Method(
        "get_messages",
        None,
        "methods.MessagesResult",
        "The context as the model sees it.",
    ),
    Method(
        "get_entries",
        "methods.GetEntriesParams",
        "methods.EntriesResult",
        "Raw session entries in file order, optionally only those after an entry id.",
    ),
    Method(
        "get_last_assistant_text",
        None,
        "methods.LastAssistantTextResult",
        "Text of the last assistant message on the current branch.",
    ),
    Method(
        "get_session_stats",
        None,
        "stats.SessionStats",
        "Message counts, token usage and cost of the session.",
    ),
    Method(
        "get_tree",
        "tree_methods.GetTreeParams",
        "tree_methods.TreeResult",
        "The tree as a flat depth-first list, children oldest first; "
        "optionally filtered, a subtree, depth-limited, or only what changed since a cursor.",
    ),
    Method(
        "navigate_tree",
        "tree_methods.NavigateTreeParams",
        "tree_methods.NavigateTreeResult",
        "Move the leaf to any entry, optionally summarizing the branch left behind.",
    ),
    Method(
        "set_label",
        "tree_methods.SetLabelParams",
        "tree_methods.SetLabelResult",
        "Set or clear (null) the label of an entry.",
    ),
    Method(
        "new_session",
        "methods.NewSessionParams",
        "methods.SessionChangeResult",
        "Start a new session.",
    ),
    Method(
        "switch_session",
        "methods.SwitchSessionParams",
        "methods.SessionChangeResult",
        "Open another session file.",
    ),
    Method(
        "list_sessions",
        "methods.ListSessionsParams",
        "methods.ListSessionsResult",
        "Sessions of this working directory (or all), most recent first; a page at a time with limit and cursor.",
    ),
    Method(
        "search_sessions",
        "finding.SearchSessionsParams",
        "finding.SearchSessionsResult",
        "Sessions of this working directory (or all) whose messages, name or labels hold the query, most recently written first, a page at a time.",
    ),
    Method(
        "delete_session",
        "finding.DeleteSessionParams",
        "finding.DeleteSessionResult",
        "Delete a session file, its file checkpoints and the stored images only it used; refuses the live session, one another process has open, and any file that is not a session of this agent's session folders.",
    ),
    Method(
        "fork",
        "methods.ForkParams",
        "methods.ForkResult",
        "New session file from the path before a user message; returns its text.",
    ),
    Method(
        "clone",
        "methods.CloneParams",
        "methods.SessionChangeResult",
        "New session file holding the current branch.",
    ),
    Method(
        "get_fork_messages",
        None,
        "methods.ForkMessagesResult",
        "User messages that fork can start from.",
    ),
    Method(
        "set_session_name",
        "methods.SetSessionNameParams",
        "base.Ok",
        "Set the session's display name.",
    ),
    Method(
        "set_model",
        "methods.SetModelParams",
        "methods.ModelDescription",
        "Switch the model. Unknown ids are refused (invalid params, with the known ids); so is a provider other than the one the server runs.",
    ),
    Method(
        "cycle_model",
        None,
        "methods.CycleModelResult",
        "Switch to the next available model.",
    ),
    Method(
        "get_available_models",
        None,
        "methods.ModelsResult",
        "Models of the current provider.",
    ),
    Method(
        "set_thinking_level",
        "methods.SetThinkingLevelParams",
        "base.Ok",
        "Set the thinking level.",
    ),
    Method(
        "cycle_thinking_level",
        None,
        "methods.ThinkingLevelResult",
        "Switch to the next thinking level.",
    ),
    Method(
        "get_available_thinking_levels",
        None,
        "methods.ThinkingLevelsResult",
        "The thinking levels the current model takes (only off for a model without reasoning).",
    ),
    Method(
        "get_commands",
        None,
        "methods.CommandsResult",
        "Commands a prompt can run as /name (pi's extension commands, prompt templates, skills).",
    ),
    Method(
        "set_steering_mode",
        "methods.SetQueueModeParams",
        "base.Ok",
        "Deliver queued steering messages all at once or one per turn.",
    ),
    Method(
        "set_follow_up_mode",
        "methods.SetQueueModeParams",
        "base.Ok",
        "Deliver queued follow-up messages all at once or one per run.",
    ),
    Method(
        "set_auto_compaction",
        "methods.SetEnabledParams",
        "base.Ok",
        "Turn automatic compaction on or off.",
    ),
    Method(
        "set_auto_retry",
        "methods.SetEnabledParams",
        "base.Ok",
        "Turn automatic retries of transient provider errors on or off.",
    ),
    Method(
        "bash",
        "methods.BashParams",
        "methods.BashResult",
        "Run a shell command; its output joins the context of the next prompt.",
    ),
    Method(
        "abort_bash",
        None,
        "methods.AbortResult",
        "Abort the running bash command.",
    ),
    Method(
        "compact",
        "methods.CompactParams",
        "methods.CompactResult",
        "Replace old context by a summary.",
    ),
    Method(
        "export_html",
        "methods.ExportHtmlParams",
        "methods.ExportHtmlResult",
        "Write the whole session tree as one self-contained HTML page; returns its path.",
    ),
    Method(
        "restore_files",
        "checkpoints.RestoreFilesParams",
        "checkpoints.RestoreFilesResult",
        "Make some or all files what they were at an entry (or a checkpoint) without moving the leaf; "
        "refused with the list of files someone else changed unless force; dryRun writes nothing.",
    ),
    Method(
        "get_file_changes",
        "checkpoints.GetFileChangesParams",
        "checkpoints.FileChangesResult",
        "The files an entry changed (against its parent's state, or since another entry), with unified diffs.",
    ),
    Method(
        "mcp_servers",
        None,
        "methods.McpServersResult",
        "The session's MCP servers: transport, status, tool count, last error.",
    ),
    Method(
        "mcp_restart",
        "methods.McpRestartParams",
        "methods.McpServersResult",
        "Restart one MCP server (or all); resolves once it is ready or has failed.",
    ),
    Method(
        "set_client_tools",
        "host.SetClientToolsParams",
        "host.SetClientToolsResult",
        "Replace the client's tools (the next model call sees the new list).",
    ),
    Method(
        "send_custom_message",
        "host.SendCustomMessageParams",
        "host.EntryIdResult",
        "Append a custom_message (it reaches the model); triggerTurn lets the model answer it. "
        "During a run it steers the run: stored when the next turn starts (entryId null).",
    ),
    Method(
        "append_custom_entry",
        "host.AppendCustomEntryParams",
        "host.EntryIdResult",
        "Append a custom entry (extension state that never reaches the model).",
    ),
)

METHODS_BY_NAME: dict[str, Method] = {method.name: method for method in METHODS}
