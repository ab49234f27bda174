"""Sessions for the export tests (imported by them; not a test module).

``rich_session`` holds one of everything a reader of an export must see: branches, labels, a
compaction, a branch summary, thinking, a tool call with long output, an image stored as a
blob, usage with cost, and text that tries to inject markup.
"""

from __future__ import annotations

import base64
import json
import random
import re
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_lines import usage
from rpc_agent.protocol.shapes import BlockDict, MessageDict
from rpc_agent.store import SessionManager

JsonDict = dict[str, Any]

DATA_SCRIPT = re.compile(r'<script id="session-data" type="application/json">(.*?)</script>', re.S)

XSS_TEXT = (
    'Try this: <img src=x onerror="window.__xss=1"> and <script>window.__xss=2</script> '
    "and [a link](javascript:window.__xss=3) and </script><script>window.__xss=5</script>"
)
XSS_BLOCKS = (
    '[quoted](https://a.example/" onmouseover="window.__xss=6)\n\n'
    '```"><img src=x onerror=window.__xss=7>\nprint(1)\n```\n\n'
    "| a | <b onclick=window.__xss=8>b</b> |\n|---|---|\n| `<i>` | ![x](data:image/png;base64,AAAA) |"
)
XSS_NAME = "</title></script><script>window.__xss=4</script> parser fix"


def png(width: int, height: int, seed: int = 7) -> bytes:
    """A real PNG with noisy pixels (so its base64 is long enough to go to the blob store)."""
    rng = random.Random(seed)
    rows = b"".join(
        b"\x00" + bytes(rng.randrange(256) if (x + y) % 3 else 40 for x in range(width * 3))
        for y in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def user(text: str, *images: BlockDict) -> MessageDict:
    return {"role": "user", "content": [{"type": "text", "text": text}, *images], "timestamp": 1}


def assistant(*blocks: BlockDict, cost: float = 0.0123, stop: str = "stop") -> MessageDict:
    return {
        "role": "assistant",
        "content": list(blocks),
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": usage(1200, 80, cost),
        "stopReason": stop,
        "timestamp": 2,
    }


def text(value: str) -> BlockDict:
    return {"type": "text", "text": value}


@dataclass
class RichSession:
    path: Path
    ids: dict[str, str]
    """Entry ids by role in the story: first_user, tool_call, tool_result, main_answer, ..."""
    leaf: str


LONG_OUTPUT = "\n".join(
    [f"tests/test_parser.py::test_case_{n} PASSED" for n in range(60)]
    + ["FAILED tests/test_parser.py::test_quotes - AssertionError: '\"' != '<q>'"]
)


def rich_session(folder: Path) -> RichSession:
    """Written with the store itself; the leaf ends on the main branch, not the alternative."""
    manager = SessionManager.create(str(folder / "project"), folder / "sessions")
    ids: dict[str, str] = {}
    image: BlockDict = {
        "type": "image",
        "data": base64.b64encode(png(48, 32)).decode(),
        "mimeType": "image/png",
    }
    manager.append_model_change("anthropic", "claude-sonnet-4-5")
    manager.append_thinking_level_change("high")
    ids["first_user"] = str(
        manager.append_message(user("FIRST-QUESTION: the parser test fails, see the screenshot", image)).id
    )
    ids["tool_call"] = str(
        manager.append_message(
            assistant(
                {
                    "type": "thinking",
                    "thinking": "THINK-MARKER: the quote handling looks wrong.",
                    "thinkingSignature": "sig" * 50,
                },
                text("I'll run the tests first."),
                {
                    "type": "toolCall",
                    "id": "call_1",
                    "name": "bash",
                    "arguments": {"command": "pytest -q tests/test_parser.py"},
                },
                stop="toolUse",
            )
        ).id
    )
    ids["tool_result"] = str(
        manager.append_message(
            {
                "role": "toolResult",
                "toolCallId": "call_1",
                "toolName": "bash",
                "content": [text(LONG_OUTPUT)],
                "isError": False,
                "timestamp": 3,
            }
        ).id
    )
    answer = (
        "MAIN-ANSWER: fixed **the quote bug** in `parse()`.\n\n"
        "```python\ndef parse(text: str) -> list[str]:\n    # split on quotes\n    return text.split('\"')\n```\n\n"
        "- one\n- two\n\nSee [the docs](https://example.com/docs).\n\n" + XSS_TEXT + "\n\n" + XSS_BLOCKS
    )
    ids["main_answer"] = str(manager.append_message(assistant(text(answer))).id)
    manager.append_label_change(ids["first_user"], "start-here")
    manager.append_label_change(ids["main_answer"], "fixed")
    ids["compaction"] = str(
        manager.append_compaction(
            "COMPACTION-SUMMARY: the parser test was fixed.", ids["main_answer"], 45000
        ).id
    )
    ids["second_user"] = str(manager.append_message(user("Now add docs")).id)
    ids["main_leaf"] = str(
        manager.append_message(
            assistant(text("MAIN-LEAF: docs added.")),
        ).id
    )
    ids["branch_summary"] = str(
        manager.branch_with_summary(ids["tool_result"], "BRANCH-SUMMARY: tried approach A first.").id
    )
    ids["alt_user"] = str(manager.append_message(user("ALT-QUESTION: try another approach")).id)
    ids["alt_answer"] = str(manager.append_message(assistant(text("ALT-ANSWER: a regex instead."))).id)
    manager.append_session_info(XSS_NAME)
    manager.branch(ids["main_leaf"])
    leaf = manager.leaf_id
    assert leaf == ids["main_leaf"]
    path = manager.session_file
    assert path is not None
    manager.close()
    return RichSession(path=path, ids=ids, leaf=leaf)


def long_session(folder: Path, entries: int = 10_000, branch_every: int = 500) -> tuple[Path, list[str]]:
    """A chain of ``entries`` messages with a short side branch every ``branch_every``."""
    manager = SessionManager.create(str(folder / "project"), folder / "sessions")
    chain: list[str] = []
    for n in range(entries):
        if n % 2 == 0:
            entry_id = manager.append_message(user(f"question {n}: what about `item_{n}`?")).id
        else:
            entry_id = manager.append_message(
                assistant(text(f"answer {n}: **item_{n}** is fine."), cost=0.001)
            ).id
        chain.append(str(entry_id))
        if n % branch_every == branch_every - 1 and n + 1 < entries:
            manager.append_message(user(f"SIDE-{n}: a side question"))
            manager.branch(chain[-1])
    manager.close()
    path = manager.session_file
    assert path is not None
    return path, chain


def embedded_data(page: str) -> JsonDict:
    match = DATA_SCRIPT.search(page)
    assert match is not None, "the page has no embedded session data"
    data: JsonDict = json.loads(match.group(1))
    return data
