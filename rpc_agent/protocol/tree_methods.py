"""Params and results of the tree's methods: get_tree, navigate_tree, set_label.

``protocol.methods`` re-exports them, with the params and results of every other method.
"""

from typing import Literal

from pydantic import Field

from rpc_agent.protocol.base import Params, Result
from rpc_agent.protocol.checkpoints import RestoreFilesResult


class TreeNode(Result):
    id: str
    parentId: str | None
    type: str
    role: str | None
    preview: str = Field(description="one line of the entry's text, at most 100 characters")
    label: str | None
    timestamp: str
    depth: int
    childCount: int


class GetTreeParams(Params):
    filter: Literal["default", "no-custom", "user-only", "labeled-only"] = Field(
        default="default",
        description="default: every node; no-custom: without extension entries (custom, custom_message); "
        "user-only: user messages; labeled-only: nodes with a label. Kept nodes keep their depth and parentId.",
    )
    rootId: str | None = Field(default=None, description="only this entry and what hangs under it")
    maxDepth: int | None = Field(
        default=None, ge=0, description="only nodes at most this many levels below rootId (or the roots)"
    )
    since: int | None = Field(
        default=None,
        ge=0,
        description="a cursor from an earlier result: only nodes added or relabelled since, and their "
        "parents (whose childCount changed), in file order",
    )
    format: Literal["nodes", "columns"] = Field(
        default="nodes",
        description="nodes: one object per node in nodes; columns: the same nodes in columns "
        "(nodes is then empty), the compact shape for a big tree",
    )


class TreeColumns(Result):
    """The nodes of a tree as columns: node i is the i-th item of every list."""

    id: list[str]
    parentId: list[str | None]
    type: list[str]
    role: list[str | None]
    preview: list[str] = Field(description="one line of each entry's text, at most 100 characters")
    label: list[str | None]
    timestamp: list[str]
    depth: list[int]
    childCount: list[int]


class TreeResult(Result):
    leafId: str | None
    nodes: list[TreeNode] = Field(
        description="depth-first, children oldest first; flat, never nested (empty with format columns)"
    )
    columns: TreeColumns | None = Field(
        default=None, description="with format columns: the nodes, in the same order, as columns"
    )
    cursor: int | None = Field(
        default=None, description="pass as since to get only what changed after this result"
    )
    filesChanged: dict[str, int] | None = Field(
        default=None,
        description="entry id -> how many files its checkpoint changed (entries that changed none are left out)",
    )


class NavigateTreeParams(Params):
    targetId: str
    summarize: bool = False
    customInstructions: str | None = None
    replaceInstructions: bool = False
    label: str | None = None
    restoreFiles: bool = Field(default=False, description="make the working directory the target's state")
    force: bool = Field(default=False, description="with restoreFiles: overwrite files someone else changed")


class NavigateTreeResult(Result):
    cancelled: bool
    editorText: str | None = Field(default=None, description="text of the selected user message, to edit")
    leafId: str | None
    summaryEntryId: str | None = None
    restore: RestoreFilesResult | None = Field(default=None, description="what restoreFiles changed")


class SetLabelParams(Params):
    entryId: str
    label: str | None


class SetLabelResult(Result):
    labelEntryId: str
