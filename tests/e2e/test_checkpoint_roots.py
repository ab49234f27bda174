"""Checkpoints cover the session's ``additionalDirectories`` too: a bash turn that changes files
in the working directory and in an additional folder is undone in both by navigating back, and
redone by navigating forward; the additional folder's files are named by absolute path; a
user's edit there is a conflict; a fork keeps the states; deleting the session frees them."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e.conftest import E2E, current_file, expect_error
from e2e.test_checkpoints import bash, bash_prompts, disk_state, entry_ids, events_of, seed, user_entries
from rpc_agent.protocol.errors import RESTORE_CONFLICT

pytestmark = [pytest.mark.anyio, pytest.mark.in_process]


def seed_other(other: Path) -> None:
    other.mkdir()
    (other / "lib.txt").write_text("library v1\n")
    (other / "old.txt").write_text("to be removed\n")
    (other / ".gitignore").write_text("*.tmp\n")


async def test_navigating_restores_the_additional_folder_with_the_working_directory(e2e: E2E) -> None:
    seed(e2e.cwd)
    other = e2e.root / "other"
    seed_other(other)
    before, before_other = disk_state(e2e.cwd), disk_state(other)
    script = [
        bash(
            f"echo changed >> a.txt && echo v2 > {other}/lib.txt && rm {other}/old.txt"
            f" && mkdir -p {other}/new && echo n > {other}/new/n.txt && chmod +x {other}/lib.txt"
        ),
        {"text": "done"},
    ]
    async with e2e.server(script=script) as client:
        await client.call("initialize", {"additionalDirectories": [str(other)]})
        await client.call("prompt", {"message": "change both"})
        after, after_other = disk_state(e2e.cwd), disk_state(other)
        assert after_other != before_other
        assert after != before
        taken = events_of(client, "checkpoint")
        assert [e["filesChanged"] for e in taken][1:] == [4]  # a.txt, lib.txt, old.txt, new/n.txt
        leaf = (await client.get_state()).leafId
        assert leaf is not None
        (prompt_id,) = user_entries(await entry_ids(client))

        back = await client.call("navigate_tree", {"targetId": prompt_id, "restoreFiles": True})
        assert disk_state(e2e.cwd) == before
        assert disk_state(other) == before_other
        assert {f["path"]: f["status"] for f in back["restore"]["files"]} == {
            "a.txt": "modified",
            f"{other}/lib.txt": "modified",
            f"{other}/old.txt": "added",
            f"{other}/new/n.txt": "deleted",
        }

        forward = await client.call("navigate_tree", {"targetId": leaf, "restoreFiles": True})
        assert forward["leafId"] == leaf
        assert disk_state(e2e.cwd) == after
        assert disk_state(other) == after_other

        # The user edits the additional folder: going back would overwrite it, so it is refused
        # (nothing moves, nothing is written) unless forced.
        (other / "lib.txt").write_text("the user's edit\n")
        error = await expect_error(
            client.call("navigate_tree", {"targetId": prompt_id, "restoreFiles": True}), RESTORE_CONFLICT
        )
        assert error.data is not None
        assert error.data["files"] == [f"{other}/lib.txt"]
        assert (await client.get_state()).leafId == leaf
        assert disk_state(e2e.cwd) == after
        await client.call("navigate_tree", {"targetId": prompt_id, "restoreFiles": True, "force": True})
        assert disk_state(other) == before_other

        # Undo of that restore: its checkpoint holds the additional folder's state too.
        undo = await client.call("restore_files", {"checkpointId": back["restore"]["checkpointId"]})
        assert undo["conflicts"] == []
        assert disk_state(e2e.cwd) == after


async def test_a_fork_keeps_the_additional_folders_states_and_deleting_frees_them(e2e: E2E) -> None:
    seed(e2e.cwd)
    other = e2e.root / "other"
    seed_other(other)
    before_other = disk_state(other)
    script = bash_prompts(f"echo v2 > {other}/lib.txt")
    async with e2e.server(script=script) as client:
        await client.call("initialize", {"additionalDirectories": [str(other)]})
        await client.call("prompt", {"message": "change the library"})
        original = await current_file(client)
        (prompt_id,) = user_entries(await entry_ids(client))
        forked = await client.call("fork", {"entryId": prompt_id, "restoreFiles": True})
        assert not forked["cancelled"]
        assert disk_state(other) == before_other
        fork_file = await current_file(client)
        assert fork_file != original
        roots = [
            line for line in fork_file.with_name(fork_file.name + ".checkpoints").read_text().splitlines()
        ]
        assert any(str(other) in line for line in roots[1:])  # the copied entries carry the folder's state

        refs = e2e.home / "checkpoints"
        key_folders = sorted(p for p in refs.glob("*/refs/rpc-agent/*") if p.is_dir())
        assert len({p.parents[2] for p in key_folders}) == 2  # both repositories hold refs
        await client.call("delete_session", {"sessionPath": str(original)})
        remaining = {p.name for p in refs.glob("*/refs/rpc-agent/*") if p.is_dir()}
        assert len(remaining) == 1  # the fork's key stays; the deleted session's are gone from both
        assert len({p.parents[2] for p in refs.glob("*/refs/rpc-agent/*") if p.is_dir()}) == 2
