from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from rpc_agent.tools.base import ToolContext, ToolError
from rpc_agent.tools.write import WriteArgs, WriteTool
from tools.helpers import text_of

pytestmark = pytest.mark.anyio


async def test_creates_parents_and_reports_bytes(ctx: ToolContext, tmp_path: Path) -> None:
    out = await WriteTool().execute(WriteArgs(path="a/b/c.txt", content="héllo\n"), ctx)
    target = tmp_path / "a" / "b" / "c.txt"
    assert target.read_bytes() == "héllo\n".encode()
    assert "7 bytes" in text_of(out)
    assert out.details == {"path": str(target), "bytes": 7, "created": True}


async def test_overwrites_keeping_mode_and_leaves_no_temp_files(ctx: ToolContext, tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_text("old")
    target.chmod(0o751)
    out = await WriteTool().execute(WriteArgs(path="run.sh", content="#!/bin/sh\n"), ctx)
    assert target.read_text() == "#!/bin/sh\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert out.details["created"] is False
    assert "Overwrote" in text_of(out)
    assert sorted(os.listdir(tmp_path)) == ["run.sh"]


async def test_new_file_gets_normal_permissions(ctx: ToolContext, tmp_path: Path) -> None:
    await WriteTool().execute(WriteArgs(path="new.txt", content=""), ctx)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o666 & ~umask


async def test_writes_through_a_symlink(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to("real.txt")
    await WriteTool().execute(WriteArgs(path="link.txt", content="new"), ctx)
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "new"


async def test_directory_target_is_an_error(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        await WriteTool().execute(WriteArgs(path="d", content="x"), ctx)


async def test_parent_that_is_a_file_is_an_error(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(ToolError, match="parent"):
        await WriteTool().execute(WriteArgs(path="f/g.txt", content="x"), ctx)


@pytest.mark.parametrize(
    "args", [{"path": "a"}, {"content": "x"}, {"path": "a", "content": 5}, {"path": None, "content": ""}]
)
def test_argument_validation(args: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        WriteArgs.model_validate(args)
