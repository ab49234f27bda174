"""write, edit, read and grep run in the server: they keep to the sandbox's paths themselves,
judging a path by where it leads (symlinks resolved)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rpc_agent.tools.base import ToolError
from rpc_agent.tools.edit import EditTool
from rpc_agent.tools.grep import GrepTool
from rpc_agent.tools.read import ReadTool
from rpc_agent.tools.write import WriteTool
from sandbox.sandbox_testlib import SSH_SECRET, World, make_world, needs_bwrap, text_of

pytestmark = pytest.mark.anyio


@pytest.fixture
def world(tmp_path: Path) -> World:
    return make_world(tmp_path)


@pytest.mark.parametrize("mode", ["off", "read-only", "workspace-write"])
async def test_write_outside_the_tree(world: World, mode: str) -> None:
    target = world.outside / "w.txt"
    if mode == "off":
        await WriteTool().execute({"path": str(target), "content": "x"}, world.ctx(mode))
        assert target.read_text() == "x"
        return
    with pytest.raises(ToolError, match=f"Refusing to write {target}: .*sandbox {mode}"):
        await WriteTool().execute({"path": str(target), "content": "x"}, world.ctx(mode))
    assert not target.exists()


async def test_write_inside_the_tree_under_workspace_write(world: World) -> None:
    await WriteTool().execute({"path": "sub/in.txt", "content": "x"}, world.ctx("workspace-write"))
    assert (world.cwd / "sub" / "in.txt").read_text() == "x"


async def test_read_only_refuses_writes_in_the_tree_too(world: World) -> None:
    with pytest.raises(ToolError, match="read-only"):
        await WriteTool().execute({"path": "in.txt", "content": "x"}, world.ctx("read-only"))
    assert not (world.cwd / "in.txt").exists()


@pytest.mark.parametrize("tool", ["write", "edit"])
async def test_a_link_inside_the_tree_pointing_out_is_refused(world: World, tool: str) -> None:
    (world.cwd / "link").symlink_to(world.outside)
    (world.cwd / "file-link.txt").symlink_to(world.outside / "keep.txt")
    ctx = world.ctx("workspace-write")
    call = (
        WriteTool().execute({"path": "link/new.txt", "content": "x"}, ctx)
        if tool == "write"
        else EditTool().execute({"path": "file-link.txt", "oldText": "keep", "newText": "lost"}, ctx)
    )
    with pytest.raises(ToolError, match="outside the folders the sandbox lets commands write"):
        await call
    assert not (world.outside / "new.txt").exists()
    assert (world.outside / "keep.txt").read_text() == "keep me\n"


async def test_read_of_a_hidden_credential_is_refused(world: World) -> None:
    key = world.home / ".ssh" / "id_rsa"
    with pytest.raises(ToolError, match="hidden by the sandbox"):
        await ReadTool().execute({"path": str(key)}, world.ctx("read-only"))
    with pytest.raises(ToolError, match="hidden by the sandbox"):
        await ReadTool().execute({"path": str(world.agent_home / "auth.json")}, world.ctx("workspace-write"))
    assert SSH_SECRET in text_of(await ReadTool().execute({"path": str(key)}, world.ctx("off")))


@needs_bwrap
@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")
async def test_grep_runs_rg_in_the_sandbox(world: World) -> None:
    # rg is pointed at the whole fake home: in the sandbox, ~/.ssh is an empty folder.
    (world.home / "notes.txt").write_text(f"not {SSH_SECRET[:3]}-secret here\n")
    found_off = text_of(
        await GrepTool().execute({"pattern": "secret", "path": str(world.home)}, world.ctx("off"))
    )
    assert "id_rsa" in found_off
    found = text_of(
        await GrepTool().execute({"pattern": "secret", "path": str(world.home)}, world.ctx("read-only"))
    )
    assert "notes.txt" in found
    assert "id_rsa" not in found


@pytest.mark.parametrize("tool", ["ls", "find"])
async def test_listing_a_hidden_folder_is_refused(world: World, tool: str) -> None:
    from rpc_agent.tools.find import FindTool
    from rpc_agent.tools.ls import LsTool

    ssh = str(world.home / ".ssh")
    listing = LsTool() if tool == "ls" else FindTool()
    args = {"path": ssh} if tool == "ls" else {"pattern": "*", "path": ssh}
    with pytest.raises(ToolError, match="hidden by the sandbox"):
        await listing.execute(args, world.ctx("read-only"))
    assert "id_rsa" in text_of(await listing.execute(args, world.ctx("off")))
