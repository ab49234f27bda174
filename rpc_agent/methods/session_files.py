"""The methods on session files besides the live one's: ``search_sessions`` and
``delete_session``.

The method table's handlers for them import this module on their first call: a start lists
both methods but loads neither the scanner, nor the deletion, nor their params and results.
"""

from __future__ import annotations

from pathlib import Path

import anyio.to_thread

from rpc_agent.agent import deletion
from rpc_agent.agent.agent_session import AgentSession
from rpc_agent.protocol import finding as f
from rpc_agent.store import files, listing, search


async def search_sessions(
    agent: AgentSession, this_folder: Path, p: f.SearchSessionsParams
) -> f.SearchSessionsResult:
    folders = listing.cwd_folders(files.sessions_root(agent.home)) if p.all else [this_folder]
    return await anyio.to_thread.run_sync(search.search_sessions, folders, p.query, p.limit, p.cursor)


async def delete_session(agent: AgentSession, p: f.DeleteSessionParams) -> f.DeleteSessionResult:
    live = [agent.manager.session_file] if agent.manager.session_file is not None else []
    deleted = await anyio.to_thread.run_sync(
        lambda: deletion.delete_session(
            Path(p.sessionPath),
            home=agent.home or files.agent_home(),
            session_dir=agent.session_dir,
            live=live,
        )
    )
    return f.DeleteSessionResult(
        path=str(deleted.path), sessionId=deleted.session_id, blobsRemoved=deleted.blobs_removed
    )
