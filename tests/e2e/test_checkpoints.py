"""Workspace checkpoints over the wire: the faux model changes files with bash, write and edit,
and navigating the tree with ``restoreFiles`` brings the disk to each entry's state. Every
comparison hashes every file (content or link target, and the executable bit) with real git
in a real shadow repository."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from e2e.conftest import E2E, JsonDict, current_file, expect_error, header_and_entries, messages_of
from rpc_agent.protocol.errors import ENTRY_NOT_FOUND, INVALID_PARAMS, NO_CHECKPOINT, RESTORE_CONFLICT
from rpc_agent_client import RpcAgentClient

pytestmark = [pytest.mark.anyio, pytest.mark.in_process]


def disk_state(root: Path) -> dict[str, str]:
    """Every file, link and folder under ``root``: its hash, link target or kind, and +x."""
    found: dict[str, str] = {}
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                found[relative] = "link:" + os.readlink(path)
            elif stat.S_ISDIR(st.st_mode):
                found[relative] = "dir"
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                found[relative] = f"{digest}:{'x' if st.st_mode & 0o100 else '-'}"
    return found


def bash(command: str) -> JsonDict:
    return {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}


def bash_prompts(*commands: str) -> list[JsonDict]:
    """The faux script of one prompt per command: the model runs it with bash, then answers."""
    return [turn for command in commands for turn in (bash(command), {"text": "ok"})]


def seed(cwd: Path) -> None:
    (cwd / "a.txt").write_text("alpha\nbeta\n")
    (cwd / "src").mkdir()
    (cwd / "src" / "b.py").write_text("print('b')\n")
    (cwd / "script.sh").write_text("echo hi\n")
    (cwd / "doomed.txt").write_text("to be removed\n")
    (cwd / ".gitignore").write_text("*.log\n")
    (cwd / "keep.log").write_text("ignored\n")


async def entry_ids(client: RpcAgentClient) -> list[JsonDict]:
    return (await client.call("get_entries"))["entries"]  # type: ignore[no-any-return]


def user_entries(entries: list[JsonDict]) -> list[str]:
    return [e["id"] for e in messages_of(entries, "user")]


def events_of(client: RpcAgentClient, kind: str) -> list[JsonDict]:
    return [e for e in client.events_seen if e["type"] == kind]


CHANGES = [
    bash(
        "sed -i 's/alpha/ALPHA/' a.txt && rm doomed.txt && mkdir -p newdir/sub && echo n > newdir/sub/n.txt"
        " && mv src/b.py src/c.py && chmod +x script.sh && echo changed > keep.log"
    ),
    {"toolCalls": [{"name": "write", "arguments": {"path": "w.txt", "content": "written\n"}}]},
    {"toolCalls": [{"name": "edit", "arguments": {"path": "a.txt", "oldText": "beta", "newText": "BETA"}}]},
    {"text": "done"},
]


async def test_bash_write_and_edit_are_undone_and_redone_by_navigating(e2e: E2E) -> None:
    seed(e2e.cwd)
    before = disk_state(e2e.cwd)
    async with e2e.server(script=CHANGES) as client:
        result = await client.call("prompt", {"message": "change things"})
        assert result["stopReason"] == "stop"
        after = disk_state(e2e.cwd)
        assert after["script.sh"].endswith(":x")
        assert "src/c.py" in after
        assert "doomed.txt" not in after
        entries = await entry_ids(client)
        (prompt_id,) = user_entries(entries)
        leaf = (await client.get_state()).leafId
        assert leaf is not None
        taken = events_of(client, "checkpoint")
        tool_results = [e["id"] for e in messages_of(entries, "toolResult")]
        assert [e["entryId"] for e in taken] == [prompt_id, *tool_results]
        assert [e["filesChanged"] for e in taken][1:] == [6, 1, 1]

        back = await client.call("navigate_tree", {"targetId": prompt_id, "restoreFiles": True})
        (prompt_entry,) = (e for e in entries if e["id"] == prompt_id)
        assert back["leafId"] == prompt_entry["parentId"]  # the prompt's parent (the opening level)
        assert back["editorText"] == "change things"
        restored = disk_state(e2e.cwd)
        # The ignored file keeps what bash wrote; everything else is as it was.
        assert restored.pop("keep.log") != before.pop("keep.log")
        assert restored == before
        assert {f["path"]: f["status"] for f in back["restore"]["files"]} == {
            "a.txt": "modified",
            "doomed.txt": "added",
            "newdir/sub/n.txt": "deleted",
            "src/b.py": "added",
            "src/c.py": "deleted",
            "script.sh": "modified",
            "w.txt": "deleted",
        }
        (event,) = events_of(client, "files_restored")
        assert event["checkpointId"] == back["restore"]["checkpointId"]

        forward = await client.call("navigate_tree", {"targetId": leaf, "restoreFiles": True})
        assert forward["leafId"] == leaf
        assert disk_state(e2e.cwd) == after


async def test_a_b_a_round_trip_is_exact(e2e: E2E) -> None:
    seed(e2e.cwd)
    script = bash_prompts(
        "echo A > branch.txt && rm a.txt && mkdir -p only_a && echo a > only_a/f",
        "echo B > branch.txt && chmod +x script.sh && ln -s src link_b",
    )
    async with e2e.server(script=script) as client:
        await client.call("prompt", {"message": "branch A"})
        a_leaf = (await client.get_state()).leafId
        state_a = disk_state(e2e.cwd)
        (first,) = user_entries(await entry_ids(client))
        await client.call("navigate_tree", {"targetId": first, "restoreFiles": True})
        await client.call("prompt", {"message": "branch B"})
        b_leaf = (await client.get_state()).leafId
        state_b = disk_state(e2e.cwd)
        assert state_b != state_a
        assert state_b["link_b"] == "link:src"
        for leaf, expected in ((a_leaf, state_a), (b_leaf, state_b), (a_leaf, state_a), (b_leaf, state_b)):
            assert leaf is not None
            await client.call("navigate_tree", {"targetId": leaf, "restoreFiles": True})
            assert disk_state(e2e.cwd) == expected


async def test_user_edits_are_conflicts_unless_forced(e2e: E2E) -> None:
    seed(e2e.cwd)
    async with e2e.server(script=CHANGES) as client:
        await client.call("prompt", {"message": "change things"})
        leaf = (await client.get_state()).leafId
        (prompt_id,) = user_entries(await entry_ids(client))
        (e2e.cwd / "a.txt").write_text("the user's own edit\n")  # the restore would change it
        (e2e.cwd / "notes.md").write_text("new, untouched by the restore? no: it is removed\n")
        error = await expect_error(
            client.call("navigate_tree", {"targetId": prompt_id, "restoreFiles": True}), RESTORE_CONFLICT
        )
        assert error.data is not None
        assert sorted(error.data["files"]) == ["a.txt", "notes.md"]
        assert (await client.get_state()).leafId == leaf  # nothing moved
        assert (e2e.cwd / "a.txt").read_text() == "the user's own edit\n"

        dry = await client.call("restore_files", {"entryId": prompt_id, "dryRun": True})
        assert sorted(dry["conflicts"]) == ["a.txt", "notes.md"]
        assert (e2e.cwd / "a.txt").read_text() == "the user's own edit\n"

        forced = await client.call(
            "navigate_tree", {"targetId": prompt_id, "restoreFiles": True, "force": True}
        )
        assert (e2e.cwd / "a.txt").read_text() == "alpha\nbeta\n"
        assert not (e2e.cwd / "notes.md").exists()
        # The restore checkpointed the disk first: restoring that checkpoint undoes it.
        undo = await client.call("restore_files", {"checkpointId": forced["restore"]["checkpointId"]})
        assert undo["files"]
        assert (e2e.cwd / "a.txt").read_text() == "the user's own edit\n"
        assert (e2e.cwd / "notes.md").exists()


async def test_an_edit_the_restore_does_not_touch_is_no_conflict(e2e: E2E) -> None:
    seed(e2e.cwd)
    async with e2e.server(script=bash_prompts("echo more >> a.txt")) as client:
        await client.call("prompt", {"message": "append"})
        (prompt_id,) = user_entries(await entry_ids(client))
        (e2e.cwd / "src" / "b.py").write_text("print('edited by the user')\n")
        result = await client.call("restore_files", {"entryId": prompt_id, "paths": ["a.txt"]})
        assert result["conflicts"] == []
        assert [f["path"] for f in result["files"]] == ["a.txt"]
        assert (e2e.cwd / "a.txt").read_text() == "alpha\nbeta\n"
        assert (e2e.cwd / "src" / "b.py").read_text() == "print('edited by the user')\n"
        assert (await client.get_state()).leafId != prompt_id  # restore_files does not move the leaf


async def test_symlinks_are_restored_as_links_and_never_followed(e2e: E2E) -> None:
    outside = e2e.root / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (e2e.cwd / "out_link").symlink_to("../outside/secret.txt")
    (e2e.cwd / "out_dir").symlink_to("../outside")
    script = bash_prompts("rm out_link && echo mine > out_link && echo x > out_dir/evil.txt")
    async with e2e.server(script=script) as client:
        await client.call("prompt", {"message": "replace the link"})
        leaf = (await client.get_state()).leafId
        (prompt_id,) = user_entries(await entry_ids(client))
        await client.call("navigate_tree", {"targetId": prompt_id, "restoreFiles": True})
        assert os.readlink(e2e.cwd / "out_link") == "../outside/secret.txt"
        assert (outside / "secret.txt").read_text() == "secret\n"
        # Outside the working directory: never captured, never restored.
        assert (outside / "evil.txt").read_text() == "x\n"
        assert leaf is not None
        await client.call("navigate_tree", {"targetId": leaf, "restoreFiles": True})
        assert not (e2e.cwd / "out_link").is_symlink()
        assert (e2e.cwd / "out_link").read_text() == "mine\n"
        assert (outside / "secret.txt").read_text() == "secret\n"


async def test_files_over_the_limit_are_skipped_and_said_so(e2e: E2E) -> None:
    (e2e.home / "settings.json").write_text(json.dumps({"checkpoints": {"maxFileSizeBytes": 1000}}))
    (e2e.cwd / "small.txt").write_text("s\n")
    script = bash_prompts("head -c 5000 /dev/zero > big.bin && echo t > small.txt")
    async with e2e.server(script=script) as client:
        await client.call("prompt", {"message": "make a big file"})
        (prompt_id,) = user_entries(await entry_ids(client))
        after_tool = events_of(client, "checkpoint")[-1]
        assert after_tool["skipped"] == [{"path": "big.bin", "reason": "larger than 1000 bytes"}]
        await client.call("navigate_tree", {"targetId": prompt_id, "restoreFiles": True})
        assert (e2e.cwd / "small.txt").read_text() == "s\n"
        assert (e2e.cwd / "big.bin").stat().st_size == 5000  # not in any state: left alone


async def test_get_file_changes_has_statuses_and_unified_diffs(e2e: E2E) -> None:
    seed(e2e.cwd)
    async with e2e.server(script=CHANGES) as client:
        await client.call("prompt", {"message": "change things"})
        entries = await entry_ids(client)
        bash_result, write_result, edit_result = (e["id"] for e in messages_of(entries, "toolResult"))
        edit = await client.call("get_file_changes", {"entryId": edit_result})
        (changed,) = edit["files"]
        assert changed["path"] == "a.txt"
        assert changed["status"] == "modified"
        assert "-beta\n+BETA\n" in changed["diff"]
        first = await client.call("get_file_changes", {"entryId": bash_result})
        statuses = {f["path"]: f["status"] for f in first["files"]}
        assert statuses == {
            "a.txt": "modified",
            "doomed.txt": "deleted",
            "newdir/sub/n.txt": "added",
            "src/b.py": "deleted",
            "src/c.py": "added",
            "script.sh": "modified",
        }
        assert "new mode 100755" in next(f["diff"] for f in first["files"] if f["path"] == "script.sh")
        (prompt_id,) = user_entries(entries)
        for form in ("nodes", "columns"):
            tree = await client.call("get_tree", {"format": form})
            assert tree["filesChanged"] == {bash_result: 6, write_result: 1, edit_result: 1}
        overall = await client.call("get_file_changes", {"entryId": edit_result, "since": prompt_id})
        assert {f["path"] for f in overall["files"]} == {*statuses, "w.txt"}
        await expect_error(client.call("get_file_changes", {"entryId": "nope1234"}), ENTRY_NOT_FOUND)


async def test_bad_restore_requests_get_clear_errors(e2e: E2E) -> None:
    seed(e2e.cwd)
    async with e2e.server("--no-checkpoints", script=bash_prompts("echo 1 > one")) as client:
        await client.call("prompt", {"message": "before checkpoints"})
        assert events_of(client, "checkpoint") == []
        (old_prompt,) = user_entries(await entry_ids(client))
        session = await current_file(client)
    async with e2e.server("--session", str(session)) as client:
        await expect_error(
            client.call("navigate_tree", {"targetId": old_prompt, "restoreFiles": True}), NO_CHECKPOINT
        )
        await expect_error(client.call("restore_files", {"entryId": old_prompt}), NO_CHECKPOINT)
        await client.call("prompt", {"message": "now with checkpoints"})
        await expect_error(client.call("restore_files", {"entryId": "zzzzzzzz"}), ENTRY_NOT_FOUND)
        for bad in (["../x"], ["/etc/passwd"], ["a/../../x"]):
            await expect_error(
                client.call("restore_files", {"entryId": old_prompt, "paths": bad}), INVALID_PARAMS
            )
        await expect_error(client.call("restore_files", {}), INVALID_PARAMS)
        await expect_error(client.call("restore_files", {"checkpointId": "0" * 40}), NO_CHECKPOINT)
        assert (await client.get_state()).sessionFile == str(session)


async def test_the_session_file_is_what_it_would_be_without_checkpoints(e2e: E2E) -> None:
    seed(e2e.cwd)
    async with e2e.server(script=CHANGES) as client:
        await client.call("prompt", {"message": "change things"})
        session = await current_file(client)
    _header, entries = header_and_entries(session)
    # The messages and the opening model and thinking level pi writes too: nothing of checkpoints.
    assert {e["type"] for e in entries} == {"message", "model_change", "thinking_level_change"}
    sidecar = session.with_name(session.name + ".checkpoints")
    lines = [json.loads(line) for line in sidecar.read_text().splitlines()]
    assert lines[0]["type"] == "rpc-agent.checkpoints"
    assert {line["entry"] for line in lines[1:]} <= {e["id"] for e in entries}
    # The shadow repository lives in the agent home, never in the user's folder.
    assert not (e2e.cwd / ".git").exists()
    assert (e2e.home / "checkpoints").is_dir()


async def test_a_failed_snapshot_is_an_event_and_the_turn_goes_on(e2e: E2E) -> None:
    (e2e.home / "checkpoints").write_text("a file where the repositories would go")
    async with e2e.server(script=[bash("echo 1 > one"), {"text": "still answered"}]) as client:
        result = await client.call("prompt", {"message": "go"})
        assert result["stopReason"] == "stop"
        assert result["messages"][-1]["content"][0]["text"] == "still answered"
        failed = events_of(client, "checkpoint_failed")
        assert len(failed) == 2
        assert all(e["error"] for e in failed)


async def test_the_home_folder_is_not_checkpointed(e2e: E2E, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(e2e.cwd))
    async with e2e.server(script=bash_prompts("echo 1 > one")) as client:
        await client.call("prompt", {"message": "go"})
        (skipped,) = events_of(client, "checkpoint_skipped")
        assert "home folder" in skipped["reason"]
        assert events_of(client, "checkpoint") == []
        (prompt_id,) = user_entries(await entry_ids(client))
        error = await expect_error(client.call("restore_files", {"entryId": prompt_id}), -32012)
        assert "not checkpointed" in error.message


async def test_too_many_files_is_not_checkpointed(e2e: E2E) -> None:
    (e2e.home / "settings.json").write_text(json.dumps({"checkpoints": {"maxFiles": 5}}))
    for i in range(10):
        (e2e.cwd / f"f{i}").write_text(str(i))
    async with e2e.server(script=bash_prompts("echo 1 > one")) as client:
        await client.call("prompt", {"message": "go"})
        (skipped,) = events_of(client, "checkpoint_skipped")
        assert "more than 5 files" in skipped["reason"]
