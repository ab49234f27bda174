"""Finding and removing sessions: ``search_sessions`` and ``delete_session``.

``list_sessions``, whose ``SessionInfoModel`` a search hit carries, is in ``methods``.
"""

from __future__ import annotations

from pydantic import Field

from rpc_agent.protocol.base import Params, Result
from rpc_agent.protocol.methods import SessionInfoModel


class SearchSessionsParams(Params):
    query: str = Field(
        min_length=1,
        description=(
            "case-insensitive text to find in user and assistant message text, the session's "
            "name and its entries' labels"
        ),
    )
    all: bool = Field(default=False, description="every working directory, not only this one")
    limit: int = Field(default=50, ge=1, le=1000, description="at most this many sessions")
    cursor: str | None = Field(default=None, description="the nextCursor of the previous page")


class SessionSearchHit(Result):
    session: SessionInfoModel
    entryIds: list[str] = Field(
        description=("matching messages, and entries whose label matches, in file order (at most 100)")
    )
    moreMatches: bool = Field(description="the session matches in more entries than entryIds lists")
    nameMatched: bool = Field(description="the session's name matches")
    snippet: str = Field(description="one line of text around the first match")


class SearchSessionsResult(Result):
    sessions: list[SessionSearchHit] = Field(description="most recently written first")
    nextCursor: str | None = Field(
        default=None, description="pass it as cursor for the next page; null: this page is the last"
    )


class DeleteSessionParams(Params):
    sessionPath: str = Field(description="a session file in this agent's session folders")


class DeleteSessionResult(Result):
    path: str
    sessionId: str
    blobsRemoved: int = Field(description="stored images no other session used")
