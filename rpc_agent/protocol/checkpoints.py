"""Workspace checkpoints on the wire: restore and look at the files each entry left.

An entry's workspace state is the working directory as it was when the entry was appended
(snapshots at every prompt and after every tool that may change files; other entries share
their parent's). A ``checkpointId`` names one stored state (a git tree id).
"""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rpc_agent.protocol.base import Params, Result

FileStatus = Literal["added", "modified", "deleted"]


class SkippedFile(Result):
    path: str
    reason: str


class FileChange(Result):
    path: str
    status: FileStatus


class FileDiff(FileChange):
    diff: str = Field(description="unified diff (git's format); empty for a binary file")
    binary: bool = False
    truncated: bool = Field(default=False, description="the diff was cut at 256 KiB")


class RestoreFilesParams(Params):
    entryId: str | None = Field(
        default=None, description="the entry whose state to restore (one of entryId or checkpointId)"
    )
    checkpointId: str | None = Field(
        default=None, description="a state returned by an earlier restore (undoes that restore)"
    )
    paths: list[str] | None = Field(default=None, description="only these files (default: all)")
    dryRun: bool = Field(default=False, description="report what would change; write nothing")
    force: bool = Field(
        default=False, description="overwrite files someone else changed since the last checkpoint"
    )


class RestoreFilesResult(Result):
    checkpointId: str = Field(description="the state of the disk before the restore: restore it to undo")
    dryRun: bool
    files: list[FileChange] = Field(description="what was (or, on a dry run, would be) changed")
    skipped: list[SkippedFile] = Field(default_factory=list)
    conflicts: list[str] = Field(
        default_factory=list, description="files changed by someone else since the last checkpoint"
    )


class GetFileChangesParams(Params):
    entryId: str
    since: str | None = Field(
        default=None, description="compare with this entry's state (default: the entry's parent)"
    )


class FileChangesResult(Result):
    entryId: str
    fromCheckpointId: str | None
    toCheckpointId: str
    files: list[FileDiff]


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class CheckpointEvent(_Event):
    """A snapshot of the working directory was stored as the state of ``entryId``."""

    type: Literal["checkpoint"] = "checkpoint"
    entryId: str
    checkpointId: str
    filesChanged: int = Field(description="files that differ from the parent entry's state")
    skipped: list[SkippedFile] = Field(default_factory=list)


class CheckpointFailedEvent(_Event):
    """A snapshot could not be taken (the turn goes on without it)."""

    type: Literal["checkpoint_failed"] = "checkpoint_failed"
    entryId: str | None = None
    error: str


class CheckpointSkippedEvent(_Event):
    """This working directory is not checkpointed (home, root, too many files)."""

    type: Literal["checkpoint_skipped"] = "checkpoint_skipped"
    reason: str


class FilesRestoredEvent(_Event):
    type: Literal["files_restored"] = "files_restored"
    entryId: str | None
    checkpointId: str = Field(description="the disk before the restore")
    files: list[FileChange]
    skipped: list[SkippedFile] = Field(default_factory=list)
