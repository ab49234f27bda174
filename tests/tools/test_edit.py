from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from rpc_agent.tools.base import ToolContext, ToolError
from rpc_agent.tools.edit import EditArgs, EditTool
from tools.helpers import text_of

pytestmark = pytest.mark.anyio

SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


async def edit(ctx: ToolContext, **args: Any) -> Any:
    return await EditTool().execute(EditArgs(**args), ctx)


async def test_replaces_and_returns_a_diff(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    out = await edit(ctx, path="m.py", oldText="    return 2", newText="    return 42")
    assert (tmp_path / "m.py").read_text() == SOURCE.replace("return 2", "return 42")
    diff = out.details["diff"]
    assert diff.startswith("--- a/m.py\n+++ b/m.py\n@@")
    assert "-    return 2\n+    return 42" in diff
    assert out.details["firstChangedLine"] == 6
    assert diff in text_of(out)
    assert not out.is_error


async def test_first_changed_line_skips_a_common_prefix(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    out = await edit(ctx, path="m.py", oldText="def f():\n    return 1", newText="def f():\n    return 10")
    assert out.details["firstChangedLine"] == 2


async def test_not_found_changes_nothing_and_says_so(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError) as info:
        await edit(ctx, path="m.py", oldText="return 3", newText="return 4")
    message = str(info.value)
    assert "not found" in message
    assert "No changes were made" in message
    assert "return 1" not in message  # no guess at what the model might have meant
    assert (tmp_path / "m.py").read_text() == SOURCE


async def test_ambiguous_match_gives_count_and_lines(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError, match=r"occurs 2 times .*lines 2, 6") as info:
        await edit(ctx, path="m.py", oldText="    return", newText="    yield")
    assert "replaceAll" in str(info.value)
    assert (tmp_path / "m.py").read_text() == SOURCE


async def test_replace_all(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    out = await edit(ctx, path="m.py", oldText="    return", newText="    yield", replaceAll=True)
    assert (tmp_path / "m.py").read_text() == SOURCE.replace("return", "yield")
    assert out.details["replacements"] == 2
    assert "2 occurrences" in text_of(out)
    assert out.details["firstChangedLine"] == 2


async def test_crlf_file_keeps_crlf(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    # The model saw LF-only lines from read and answers with LF text.
    out = await edit(ctx, path="w.txt", oldText="one\ntwo\n", newText="one\n2\nand a half\n")
    assert (tmp_path / "w.txt").read_bytes() == b"one\r\n2\r\nand a half\r\nthree\r\n"
    assert "\r" not in out.details["diff"]
    assert "-two\n+2\n+and a half" in out.details["diff"]


async def test_bom_is_preserved(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_bytes(b"\xef\xbb\xbfname = 1\r\n")
    await edit(ctx, path="b.txt", oldText="name = 1", newText="name = 2")
    assert (tmp_path / "b.txt").read_bytes() == b"\xef\xbb\xbfname = 2\r\n"


async def test_undecodable_bytes_elsewhere_survive(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "l.txt").write_bytes(b"caf\xe9\nx = 1\n")
    out = await edit(ctx, path="l.txt", oldText="x = 1", newText="x = 2")
    assert (tmp_path / "l.txt").read_bytes() == b"caf\xe9\nx = 2\n"
    text_of(out).encode("utf-8")  # the diff is valid text


async def test_delete_text(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    await edit(ctx, path="m.py", oldText="\n\ndef g():\n    return 2\n", newText="")
    assert (tmp_path / "m.py").read_text() == "def f():\n    return 1\n"


async def test_identical_text_is_an_error(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError, match="identical"):
        await edit(ctx, path="m.py", oldText="f", newText="f")


async def test_missing_file(ctx: ToolContext, tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="not found") as info:
        await edit(ctx, path="nope.py", oldText="a", newText="b")
    assert str(tmp_path / "nope.py") in str(info.value)


async def test_binary_file_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "x.bin").write_bytes(b"a\x00b")
    with pytest.raises(ToolError, match="binary"):
        await edit(ctx, path="x.bin", oldText="a", newText="c")


@pytest.mark.parametrize(
    "args",
    [
        {"path": "m.py", "oldText": "", "newText": "x"},
        {"path": "m.py", "oldText": "a"},
        {"path": "m.py", "oldText": 1, "newText": "x"},
        {"path": "m.py", "oldText": "a", "newText": "b", "replaceAll": "sometimes"},
        {"path": "m.py", "old_text": "a", "newText": "b"},
    ],
)
def test_argument_validation(args: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        EditArgs.model_validate(args)
