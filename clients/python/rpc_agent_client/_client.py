"""``RpcAgentClient``: one typed call per protocol method, on top of the host connection."""

from __future__ import annotations

from typing import Any, Literal

from rpc_agent_client import types as m
from rpc_agent_client._connection import JsonDict
from rpc_agent_client._host import HostConnection

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
QueueMode = Literal["all", "one-at-a-time"]


def _given(**params: Any) -> JsonDict:
    """The params a call was given: one left at None is not sent, so the server's default applies."""
    return {name: value for name, value in params.items() if value is not None}


class RpcAgentClient(HostConnection):
    """Spawn the server with ``RpcAgentClient.spawn(...)``; each method below is one request."""

    async def initialize(
        self,
        client_name: str = "rpc-agent-client",
        *,
        sandbox: JsonDict | None = None,
        additional_directories: list[str] | None = None,
    ) -> m.InitializeResult:
        """Handshake; declares the approval callback, hooks and tools registered so far.
        ``sandbox``: ``{"mode": "workspace-write", "network": "deny"}`` for the agent's commands;
        ``additional_directories``: workspace roots besides the cwd (absolute folders)."""
        params: JsonDict = {"clientInfo": {"name": client_name}}
        if sandbox is not None:
            params["sandbox"] = sandbox
        if additional_directories is not None:
            params["additionalDirectories"] = additional_directories
        caps = self.capabilities()
        if caps["approvals"] or caps["hooks"] or caps.get("tools") or caps.get("elicitation"):
            params["capabilities"] = caps
        return await self._typed(m.InitializeResult, "initialize", params)

    async def get_state(self) -> m.State:
        return await self._typed(m.State, "get_state")

    async def prompt(
        self,
        message: str,
        *,
        images: list[JsonDict] | None = None,
        streaming_behavior: str | None = None,
        max_turns: int | None = None,
        max_budget_usd: float | None = None,
        output_schema: JsonDict | None = None,
    ) -> m.PromptResult:
        params = _given(
            maxTurns=max_turns,
            maxBudgetUsd=max_budget_usd,
            outputSchema=output_schema,
            images=images or None,
            streamingBehavior=streaming_behavior or None,
        )
        return await self._typed(m.PromptResult, "prompt", {"message": message, **params})

    async def steer(self, message: str) -> m.QueueResult:
        return await self._typed(m.QueueResult, "steer", {"message": message})

    async def follow_up(self, message: str) -> m.QueueResult:
        return await self._typed(m.QueueResult, "follow_up", {"message": message})

    async def abort(self) -> m.AbortResult:
        return await self._typed(m.AbortResult, "abort")

    async def clear_queue(self) -> m.ClearQueueResult:
        """Take the queued steering and follow-up messages back; their texts."""
        return await self._typed(m.ClearQueueResult, "clear_queue")

    async def get_messages(self) -> m.MessagesResult:
        return await self._typed(m.MessagesResult, "get_messages")

    async def get_entries(self, since: str | None = None) -> m.EntriesResult:
        return await self._typed(m.EntriesResult, "get_entries", _given(since=since or None) or None)

    async def get_tree(
        self,
        *,
        filter: str = "default",
        root_id: str | None = None,
        max_depth: int | None = None,
        since: int | None = None,
        format: str = "nodes",
    ) -> m.TreeResult:
        """The tree; ``since`` takes the ``cursor`` of an earlier result, ``format="columns"``
        gives the nodes in ``columns`` instead of ``nodes`` (see GetTreeParams)."""
        params = _given(
            filter=None if filter == "default" else filter,
            rootId=root_id,
            maxDepth=max_depth,
            since=since,
            format=None if format == "nodes" else format,
        )
        return await self._typed(m.TreeResult, "get_tree", params or None)

    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool = False,
        label: str | None = None,
        restore_files: bool = False,
        force: bool = False,
    ) -> m.NavigateTreeResult:
        """With ``restore_files``, the working directory becomes the target entry's state."""
        params = {
            "targetId": target_id,
            "summarize": summarize,
            "replaceInstructions": replace_instructions,
            **_given(customInstructions=custom_instructions, label=label),
            **({"restoreFiles": True, "force": force} if restore_files else {}),
        }
        return await self._typed(m.NavigateTreeResult, "navigate_tree", params)

    async def set_label(self, entry_id: str, label: str | None) -> m.SetLabelResult:
        return await self._typed(m.SetLabelResult, "set_label", {"entryId": entry_id, "label": label})

    async def fork(self, entry_id: str, *, restore_files: bool = False, force: bool = False) -> m.ForkResult:
        params: JsonDict = {"entryId": entry_id}
        if restore_files:
            params.update(restoreFiles=True, force=force)
        return await self._typed(m.ForkResult, "fork", params)

    async def clone(self, *, restore_files: bool = False, force: bool = False) -> m.SessionChangeResult:
        params = {"restoreFiles": True, "force": force} if restore_files else None
        return await self._typed(m.SessionChangeResult, "clone", params)

    async def restore_files(
        self,
        entry_id: str | None = None,
        *,
        checkpoint_id: str | None = None,
        paths: list[str] | None = None,
        dry_run: bool = False,
        force: bool = False,
    ) -> m.RestoreFilesResult:
        """Files back to an entry's state (or a checkpoint's) without moving the leaf."""
        params = {
            **_given(entryId=entry_id, checkpointId=checkpoint_id, paths=paths),
            "dryRun": dry_run,
            "force": force,
        }
        return await self._typed(m.RestoreFilesResult, "restore_files", params)

    async def get_file_changes(self, entry_id: str, since: str | None = None) -> m.FileChangesResult:
        """The files an entry changed (against its parent's state or ``since``), with diffs."""
        params = {"entryId": entry_id, **_given(since=since)}
        return await self._typed(m.FileChangesResult, "get_file_changes", params)

    async def new_session(
        self,
        parent_session: str | None = None,
        *,
        sandbox: JsonDict | None = None,
        additional_directories: list[str] | None = None,
    ) -> m.SessionChangeResult:
        params = _given(
            parentSession=parent_session or None,
            sandbox=sandbox,
            additionalDirectories=additional_directories,
        )
        return await self._typed(m.SessionChangeResult, "new_session", params or None)

    async def switch_session(self, session_path: str) -> m.SessionChangeResult:
        return await self._typed(m.SessionChangeResult, "switch_session", {"sessionPath": session_path})

    async def list_sessions(
        self, *, all_cwds: bool = False, limit: int | None = None, cursor: str | None = None
    ) -> m.ListSessionsResult:
        """Every session without ``limit``; with it, a page, and ``nextCursor`` for the next."""
        params = {"all": all_cwds, **_given(limit=limit, cursor=cursor)}
        return await self._typed(m.ListSessionsResult, "list_sessions", params)

    async def search_sessions(
        self, query: str, *, all_cwds: bool = False, limit: int | None = None, cursor: str | None = None
    ) -> m.SearchSessionsResult:
        """Sessions whose messages, name or labels hold ``query`` (any case), newest first."""
        params = {"query": query, "all": all_cwds, **_given(limit=limit, cursor=cursor)}
        return await self._typed(m.SearchSessionsResult, "search_sessions", params)

    async def delete_session(self, session_path: str) -> m.DeleteSessionResult:
        return await self._typed(m.DeleteSessionResult, "delete_session", {"sessionPath": session_path})

    async def get_fork_messages(self) -> m.ForkMessagesResult:
        return await self._typed(m.ForkMessagesResult, "get_fork_messages")

    async def get_session_stats(self) -> m.SessionStats:
        return await self._typed(m.SessionStats, "get_session_stats")

    async def get_last_assistant_text(self) -> str | None:
        return (await self._typed(m.LastAssistantTextResult, "get_last_assistant_text")).text

    async def set_session_name(self, name: str) -> None:
        await self.call("set_session_name", {"name": name})

    async def bash(self, command: str, *, exclude_from_context: bool = False) -> m.BashResult:
        """Output streams meanwhile as ``bash_execution_update`` events naming this request's id."""
        params: JsonDict = {"command": command}
        if exclude_from_context:
            params["excludeFromContext"] = True
        return await self._typed(m.BashResult, "bash", params)

    async def abort_bash(self) -> m.AbortResult:
        return await self._typed(m.AbortResult, "abort_bash")

    async def abort_retry(self) -> m.AbortResult:
        return await self._typed(m.AbortResult, "abort_retry")

    async def compact(self, custom_instructions: str | None = None) -> m.CompactResult:
        params = _given(customInstructions=custom_instructions)
        return await self._typed(m.CompactResult, "compact", params or None)

    async def get_available_models(self) -> m.ModelsResult:
        return await self._typed(m.ModelsResult, "get_available_models")

    async def set_model(self, model_id: str, provider: str | None = None) -> m.ModelDescription:
        params = {"modelId": model_id, **_given(provider=provider)}
        return await self._typed(m.ModelDescription, "set_model", params)

    async def cycle_model(self) -> m.CycleModelResult:
        return await self._typed(m.CycleModelResult, "cycle_model")

    async def set_thinking_level(self, level: ThinkingLevel) -> None:
        await self.call("set_thinking_level", {"level": level})

    async def cycle_thinking_level(self) -> m.ThinkingLevelResult:
        return await self._typed(m.ThinkingLevelResult, "cycle_thinking_level")

    async def get_available_thinking_levels(self) -> list[str]:
        """The levels the current model takes (["off"] for a model without reasoning)."""
        result = await self._typed(m.ThinkingLevelsResult, "get_available_thinking_levels")
        return [str(level) for level in result.levels]

    async def get_commands(self) -> m.CommandsResult:
        return await self._typed(m.CommandsResult, "get_commands")

    async def set_steering_mode(self, mode: QueueMode) -> None:
        await self.call("set_steering_mode", {"mode": mode})

    async def set_follow_up_mode(self, mode: QueueMode) -> None:
        await self.call("set_follow_up_mode", {"mode": mode})

    async def set_auto_compaction(self, enabled: bool) -> None:
        await self.call("set_auto_compaction", {"enabled": enabled})

    async def set_auto_retry(self, enabled: bool) -> None:
        await self.call("set_auto_retry", {"enabled": enabled})

    async def export_html(self, output_path: str | None = None) -> str:
        """Write the session as an HTML page; returns the path written."""
        params = _given(outputPath=output_path)
        return (await self._typed(m.ExportHtmlResult, "export_html", params or None)).path

    async def send_custom_message(
        self,
        custom_type: str,
        content: str | list[JsonDict],
        *,
        display: bool = True,
        details: Any = None,
        trigger_turn: bool = False,
    ) -> str | None:
        result = await self.call(
            "send_custom_message",
            {
                "customType": custom_type,
                "content": content,
                "display": display,
                "details": details,
                "triggerTurn": trigger_turn,
            },
        )
        return result.get("entryId") if isinstance(result, dict) else None

    async def append_custom_entry(self, custom_type: str, data: Any = None) -> str | None:
        result = await self.call("append_custom_entry", {"customType": custom_type, "data": data})
        return result.get("entryId") if isinstance(result, dict) else None

    async def mcp_servers(self) -> m.McpServersResult:
        return await self._typed(m.McpServersResult, "mcp_servers")

    async def mcp_restart(self, name: str | None = None) -> m.McpServersResult:
        return await self._typed(m.McpServersResult, "mcp_restart", _given(name=name or None) or None)

    async def shutdown(self) -> None:
        await self.call("shutdown")
