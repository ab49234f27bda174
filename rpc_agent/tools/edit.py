"""``edit``: replace an exact piece of a file, returning a unified diff."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread
from pydantic import Field

from rpc_agent.tools._common import (
    BINARY_SAMPLE_BYTES,
    BuiltinTool,
    ToolArgs,
    check_writable,
    looks_binary,
    require_file,
    write_file,
)
from rpc_agent.tools.base import FileAccess, ToolContext, ToolError, ToolOutput

BOM = "\ufeff"
MAX_LISTED_LINES = 20


class EditArgs(ToolArgs):
    path: str = Field(description="Path of the file to edit, relative to the working directory or absolute.")
    oldText: str = Field(
        min_length=1,
        description="The exact text to replace, including whitespace and indentation. It must occur "
        "exactly once unless replaceAll is true; include surrounding lines to make it unique.",
    )
    newText: str = Field(description="The text to put in its place (may be empty to delete).")
    replaceAll: bool = Field(
        default=False, description="Replace every occurrence of oldText. Default: false."
    )


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def _for_display(text: str) -> str:
    """Undecodable bytes (kept as surrogates for a faithful write) shown as U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def unified_diff(old: str, new: str, label: str, context: int = 3) -> tuple[str, int | None]:
    """A unified diff of two LF texts and the first changed line number in the new text."""
    old_lines, new_lines = _lines(old), _lines(new)
    first: int | None = None
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, _i1, _i2, j1, _j2 in matcher.get_opcodes():
        if tag != "equal":
            first = min(j1 + 1, max(len(new_lines), 1))
            break
    diff = "\n".join(
        difflib.unified_diff(old_lines, new_lines, f"a/{label}", f"b/{label}", n=context, lineterm="")
    )
    return _for_display(diff), first


class EditTool(BuiltinTool[EditArgs]):
    name = "edit"
    description = (
        "Edit a file by replacing an exact piece of text. oldText must match the file exactly "
        "(whitespace and indentation included; line numbers from read are not part of the file) "
        "and occur once, unless replaceAll is true. If it is not found, or found more than once, "
        "nothing is changed and the error says why. Returns a unified diff of the change. "
        "Use edit for surgical changes to existing files; use write for new files or full rewrites. "
        "Line endings (CRLF) and a UTF-8 BOM are preserved."
    )

    async def run(self, params: EditArgs, ctx: ToolContext) -> ToolOutput:
        path = ctx.resolve(params.path)
        cwd, files = ctx.cwd, ctx.files
        await anyio.to_thread.run_sync(check_writable, path, ctx)
        text = await read_for_edit(path, files)
        edited = apply_edit(text, params, path)
        body, new_body, count = edited.body, edited.new_body, edited.count
        await write_file(files, path, edited.new_text)

        try:
            label = path.relative_to(cwd).as_posix()
        except ValueError:
            label = path.as_posix().lstrip("/")
        diff, first_line = unified_diff(body.replace("\r\n", "\n"), new_body.replace("\r\n", "\n"), label)
        replaced = count if params.replaceAll else 1
        summary = f"Edited {path}: replaced {replaced} occurrence{'s' * (replaced != 1)}."
        return ToolOutput.text(
            f"{summary}\n\n{diff}" if diff else summary,
            details={"diff": diff, "firstChangedLine": first_line, "replacements": replaced},
        )


def _check_file(path: Path) -> None:
    require_file(path, directory=".", other="; edit only changes files.")


async def read_for_edit(path: Path, files: FileAccess) -> str:
    """The text to edit: a regular text file, as ``files`` has it (disk or editor buffer)."""
    await anyio.to_thread.run_sync(_check_file, path)
    try:
        text = await files.read_text(path)
    except PermissionError:
        raise ToolError(f"Permission denied: {path}") from None
    except OSError as exc:
        raise ToolError(f"Could not read {path}: {exc.strerror or exc}") from None
    if looks_binary(text[:BINARY_SAMPLE_BYTES].encode("utf-8", "surrogateescape")):
        raise ToolError(f"{path} is a binary file; edit only changes text files.")
    return text


@dataclass(slots=True)
class Edited:
    body: str
    """The text without its BOM, before the edit."""
    new_body: str
    new_text: str
    """The whole new text, BOM included: what is written."""
    count: int
    first_line: int
    """Line (1-based) of the first replaced occurrence."""


def apply_edit(text: str, params: EditArgs, path: Path) -> Edited:
    """The edit applied to ``text`` (nothing is written); a ToolError says why it cannot be."""
    bom = BOM if text.startswith(BOM) else ""
    body = text[len(bom) :]

    old_text, new_text = params.oldText, params.newText
    if old_text == new_text:
        raise ToolError("oldText and newText are identical: there is nothing to change.")

    # Try the text as given, and (for a CRLF file) with its line ends made CRLF, so that a
    # model that saw LF-only lines from read still matches.
    candidates = [(old_text, new_text)]
    if "\r\n" in body:
        crlf_old = old_text.replace("\r\n", "\n").replace("\n", "\r\n")
        crlf_new = new_text.replace("\r\n", "\n").replace("\n", "\r\n")
        if crlf_old != old_text:
            candidates.insert(0, (crlf_old, crlf_new))
    elif "\r\n" in old_text:
        candidates.append((old_text.replace("\r\n", "\n"), new_text.replace("\r\n", "\n")))
    found = [(old, new, body.count(old)) for old, new in candidates if old in body]
    if not found:
        raise ToolError(
            f"oldText was not found in {path}. It must match the file exactly, including "
            "whitespace, indentation and line breaks. No changes were made; read the file "
            "again and retry with text copied from it."
        )
    old, new, count = found[0]
    if count > 1 and not params.replaceAll:
        positions: list[int] = []
        start = body.find(old)
        while start != -1:
            positions.append(body.count("\n", 0, start) + 1)
            start = body.find(old, start + len(old))
        listed = ", ".join(str(n) for n in positions[:MAX_LISTED_LINES])
        if len(positions) > MAX_LISTED_LINES:
            listed += f", ... ({len(positions) - MAX_LISTED_LINES} more)"
        raise ToolError(
            f"oldText occurs {count} times in {path} (starting at lines {listed}). No changes were "
            "made. Include more surrounding lines in oldText to make it unique, or set replaceAll "
            "to true to replace every occurrence."
        )
    new_body = body.replace(old, new) if params.replaceAll else body.replace(old, new, 1)
    return Edited(
        body=body,
        new_body=new_body,
        new_text=bom + new_body,
        count=count,
        first_line=body.count("\n", 0, body.find(old)) + 1,
    )
