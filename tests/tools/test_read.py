from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from rpc_agent.tools.base import ToolContext, ToolError
from rpc_agent.tools.read import ReadArgs, ReadTool, image_mime_type
from tools.helpers import text_of

pytestmark = pytest.mark.anyio

PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
    b"\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82"
)


async def read(ctx: ToolContext, **args: Any) -> str:
    return text_of(await ReadTool().execute(ReadArgs(**args), ctx))


async def test_numbered_lines(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("alpha\nbeta\n")
    out = await ReadTool().execute(ReadArgs(path="f.txt"), ctx)
    assert text_of(out) == "     1\talpha\n     2\tbeta"
    assert not out.is_error
    assert out.details["totalLines"] == 2


async def test_offset_and_limit_say_how_to_continue(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    text = await read(ctx, path="f.txt", offset=3, limit=2)
    assert text.startswith("     3\tline 3\n     4\tline 4\n")
    assert "Showing lines 3-4 of 10" in text
    assert "offset=5" in text
    assert "line 5" not in text


async def test_default_limit_is_2000_lines(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"{i}\n" for i in range(1, 2501)))
    out = await ReadTool().execute(ReadArgs(path="big.txt"), ctx)
    text = text_of(out)
    assert "  2000\t2000\n" in text
    assert "\t2001" not in text
    assert "offset=2001" in text
    assert out.details["truncated"] is True
    rest = await read(ctx, path="big.txt", offset=2001)
    assert rest.startswith("  2001\t2001")
    assert rest.endswith("  2500\t2500")


async def test_output_is_bounded_in_bytes(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text(("x" * 1000 + "\n") * 200)
    text = await read(ctx, path="wide.txt")
    assert len(text.encode()) < 52 * 1024
    assert "offset=" in text
    assert "50.0KB output limit" in text


async def test_long_lines_are_cut(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text("a" * 5000 + "\nshort\n")
    text = await read(ctx, path="long.txt")
    first = text.split("\n")[0]
    assert first.startswith("     1\t" + "a" * 2000 + "...")
    assert "3000 more chars" in first
    assert "     2\tshort" in text
    assert "longer than 2000 chars cut" in text


async def test_crlf_is_not_shown(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    assert await read(ctx, path="win.txt") == "     1\tone\n     2\ttwo"


async def test_absolute_path_and_empty_file(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    assert "empty file" in await read(ctx, path=str(tmp_path / "empty.txt"))


async def test_missing_file_names_the_resolved_path(ctx: ToolContext, tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="not found") as info:
        await read(ctx, path="sub/nope.txt")
    assert str(tmp_path / "sub" / "nope.txt") in str(info.value)


async def test_directory_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError, match="directory"):
        await read(ctx, path="d")


async def test_fifo_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ToolError, match="not a regular file"):
        await read(ctx, path="pipe")


async def test_offset_beyond_end(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb\n")
    with pytest.raises(ToolError, match=r"Offset 5 is beyond the end .* 2 lines"):
        await read(ctx, path="f.txt", offset=5)


async def test_png_is_returned_as_an_image_block(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "pic.bin").write_bytes(PNG)  # detected by content, not by name
    out = await ReadTool().execute(ReadArgs(path="pic.bin"), ctx)
    images = [block for block in out.content if block["type"] == "image"]
    assert len(images) == 1
    assert images[0]["mimeType"] == "image/png"
    assert base64.b64decode(images[0]["data"]) == PNG
    assert "image/png" in text_of(out)


@pytest.mark.parametrize(
    ("head", "mime"),
    [
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
        (b"GIF89a\x01\x00", "image/gif"),
        (b"GIF87a\x01\x00", "image/gif"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"RIFF\x10\x00\x00\x00WAVEfmt ", None),
        (b"hello", None),
    ],
)
def test_image_magic_bytes(head: bytes, mime: str | None) -> None:
    assert image_mime_type(head) == mime


async def test_gif_read(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.gif").write_bytes(b"GIF89a\x01\x00\x01\x00\x00\x00\x00;")
    out = await ReadTool().execute(ReadArgs(path="a.gif"), ctx)
    assert out.content[1]["mimeType"] == "image/gif"


async def test_binary_file_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)))
    with pytest.raises(ToolError, match="binary file"):
        await read(ctx, path="blob.bin")


async def test_invalid_utf8_text_is_read_with_replacement(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    assert await read(ctx, path="latin1.txt") == "     1\tcaf\ufffd"


async def test_plain_dict_arguments_are_validated_too(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    assert text_of(await ReadTool().execute({"path": "f.txt"}, ctx)) == "     1\tx"
    with pytest.raises(ValidationError):
        await ReadTool().execute({"path": "f.txt", "limit": 0}, ctx)


@pytest.mark.parametrize(
    "args",
    [
        {"path": 123},
        {},
        {"path": "f", "offset": "abc"},
        {"path": "f", "offset": 0},
        {"path": "f", "limit": -1},
        {"path": "f", "unknown": 1},
    ],
)
def test_argument_validation(args: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ReadArgs.model_validate(args)
