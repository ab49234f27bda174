"""Changing which session an AgentSession drives: new, switch (resume), fork and clone.

Each change asks the host first (pi's ``session_before_switch`` / ``session_before_fork``
hooks may cancel it), opens or creates the new SessionManager off the event loop, closes the
old one and takes the new one's model and thinking level. The AgentSession runs these inside
its ``_exclusive`` guard, so no run appends to a session that is being left.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import anyio.to_thread

from rpc_agent.agent import hooks
from rpc_agent.agent.selection import opening_level
from rpc_agent.errors import InvalidRequestError, SessionNotFoundError
from rpc_agent.protocol import events as ev
from rpc_agent.protocol import host as h
from rpc_agent.protocol import methods as m
from rpc_agent.protocol.content import message_text
from rpc_agent.store import files, guard
from rpc_agent.store.manager import SessionManager

if TYPE_CHECKING:
    from rpc_agent.agent.core import AgentCore


def _article(word: str) -> str:
    """``an assistant``, ``a custom``: the word with its indefinite article."""
    return f"{'an' if word[:1].lower() in 'aeio' else 'a'} {word}"


def announce_session(session: AgentCore, reason: str) -> None:
    manager = session.manager
    session.emit(
        ev.SessionChangedEvent(
            reason=reason,
            sessionId=manager.session_id,
            sessionFile=str(manager.session_file) if manager.session_file else None,
            leafId=manager.leaf_id,
        )
    )


class _ChangeFields(TypedDict):
    """The fields every session change answers with (``SessionChangeResult``, ``ForkResult``)."""

    cancelled: bool
    sessionId: str
    sessionFile: str | None
    leafId: str | None


def _change_result(session: AgentCore) -> _ChangeFields:
    manager = session.manager
    return {
        "cancelled": False,
        "sessionId": manager.session_id,
        "sessionFile": str(manager.session_file) if manager.session_file else None,
        "leafId": manager.leaf_id,
    }


def _changed(session: AgentCore) -> m.SessionChangeResult:
    return m.SessionChangeResult(**_change_result(session))


def _unchanged(session: AgentCore) -> m.SessionChangeResult:
    return m.SessionChangeResult(**{**_change_result(session), "cancelled": True})


async def _replace_manager(session: AgentCore, new: SessionManager, reason: str) -> None:
    old = session.manager
    session.manager = new
    session.temp_files.remove_all()  # the old session's tool results were the only references
    try:
        await old.aclose()
    finally:
        context = new.context_settings()
        session.thinking_level = opening_level(context, session.settings)
        if context.model is not None:
            session.model = session.provider.resolve_model(context.model.modelId)
        announce_session(session, reason)
    if session.on_opened is not None:
        session.on_opened()
    background = session.background
    if background is not None:
        # Not awaited: the change is answered now, and the thread holds the last reference.
        background.free_when_unread(old)


def _session_folder(session: AgentCore) -> Path:
    if session.session_dir is not None:
        return session.session_dir
    if session.manager.session_dir is not None:
        return session.manager.session_dir
    return files.default_session_dir(session.manager.cwd, session.home)


async def _hook_cancels(session: AgentCore, name: str, **event: str) -> bool:
    """pi's session_before_switch / session_before_fork: may the change go ahead? ``event`` is
    the hook's event (all its fields are strings)."""
    model: type[h.SessionBeforeResult] = (
        h.SessionBeforeSwitchResult if name == "session_before_switch" else h.SessionBeforeForkResult
    )
    answer = await hooks.run(session.host, name, event, model)
    return bool(answer is not None and answer.cancel)


async def new_session(session: AgentCore, parent_session: str | None) -> m.SessionChangeResult:
    if await _hook_cancels(session, "session_before_switch", reason="new"):
        return _unchanged(session)
    manager = session.manager
    if not manager.is_persisted:
        new = SessionManager.in_memory(manager.cwd)
    else:
        new = await anyio.to_thread.run_sync(
            lambda: SessionManager.create(
                manager.cwd, _session_folder(session), parent_session=parent_session, home=session.home
            )
        )
    await _replace_manager(session, new, "new")
    return _changed(session)


async def switch_session(session: AgentCore, path: str) -> m.SessionChangeResult:
    target = Path(path).expanduser()
    current = session.manager.session_file
    if current is not None and guard.same_file(target, current):
        return _changed(session)  # this session, by any name
    cwd = session.manager.cwd  # not the manager itself: _replace_manager frees it when unread
    if not target.exists():
        # Checked here as well as in the store: taking the lock first would create the
        # missing folders of a mistyped path. (What is there but is not a regular file,
        # the store refuses with the reason.)
        raise SessionNotFoundError(target.absolute())
    if await _hook_cancels(
        session, "session_before_switch", reason="resume", targetSessionFile=str(target.absolute())
    ):
        return _unchanged(session)

    def open_session() -> SessionManager:
        opened = SessionManager.open(target, cwd=cwd, home=session.home, must_exist=True)
        try:
            opened.warm_up(session.background)
        except BaseException:
            opened.close()
            raise
        return opened

    new = await anyio.to_thread.run_sync(open_session)
    await _replace_manager(session, new, "switch")
    return _changed(session)


async def fork(session: AgentCore, entry_id: str) -> m.ForkResult:
    manager = session.manager
    entry = manager.require_entry(entry_id)
    message = entry.get("message") if entry.get("type") == "message" else None
    if not isinstance(message, dict) or message.get("role") != "user":
        # The entry exists: "not found" would send the client looking for the wrong problem.
        kind = (
            f"{_article(str(message.get('role')))} message"
            if isinstance(message, dict)
            else f"{_article(str(entry.get('type')))} entry"
        )
        raise InvalidRequestError(f"fork needs a user message; entry {entry_id} is {kind}")
    text = message_text(message.get("content"))
    fork_answer = await hooks.run(
        session.host,
        "session_before_fork",
        {"entryId": entry_id, "position": "before"},
        h.SessionBeforeForkResult,
    )
    if fork_answer is not None and fork_answer.cancel:
        return m.ForkResult(text="", **{**_change_result(session), "cancelled": True})
    if fork_answer is not None and fork_answer.skipConversationRestore:
        text = ""
    parent = entry.get("parentId")
    parent_file = str(manager.session_file) if manager.session_file else None
    if isinstance(parent, str) and manager.get_entry(parent) is not None:
        new = await anyio.to_thread.run_sync(
            lambda: manager.create_branched_session(parent, home=session.home)
        )
    elif manager.is_persisted:
        new = await anyio.to_thread.run_sync(
            lambda: SessionManager.create(
                manager.cwd, _session_folder(session), parent_session=parent_file, home=session.home
            )
        )
    else:
        new = SessionManager.in_memory(manager.cwd)
    await _replace_manager(session, new, "fork")
    return m.ForkResult(text=text, **_change_result(session))


async def clone(session: AgentCore) -> m.SessionChangeResult:
    manager = session.manager
    leaf = manager.leaf_id
    if leaf is not None and await _hook_cancels(session, "session_before_fork", entryId=leaf, position="at"):
        return _unchanged(session)
    if leaf is None:
        return await new_session(session, str(manager.session_file) if manager.session_file else None)
    new = await anyio.to_thread.run_sync(lambda: manager.create_branched_session(leaf, home=session.home))
    await _replace_manager(session, new, "clone")
    return _changed(session)
