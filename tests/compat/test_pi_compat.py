"""Two-way compatibility with the reference implementation, the pi coding agent itself.

Node runs pi's own code (``@mariozechner/pi-coding-agent``, pinned in ``package.json`` here):

* ours -> pi: sessions written by our ``SessionManager`` are opened by pi's
  ``SessionManager.open(path).buildSessionContext()`` (``pi_context.mjs``); the messages must be
  the ones our store builds when it reopens the same file.
* pi -> ours: a session written by pi's ``SessionManager`` (``pi_write.mjs``) is opened by our
  store: same context, every entry pi wrote, same leaf, labels and name; then we append and
  pi must still open the file and see the new message last.

Run ``npm ci`` in ``tests/compat`` first; without ``node_modules`` these tests skip.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from node_reader import NodeReader
from pi_lines import BASE_MS, USAGE, run_node_lines
from rpc_agent.protocol.shapes import MessageDict
from rpc_agent.store import PendingAppend, SessionManager
from rpc_agent.store.context import SessionContext

JsonDict = dict[str, Any]

COMPAT_DIR = Path(__file__).resolve().parent


# --- running pi ----------------------------------------------------------------------------


def run_pi(node: str, script: str, *args: str) -> JsonDict:
    """The JSON line a pi script printed (pi's context of a file comes from the ``pi_reader``
    fixture, one node start for every test)."""
    return run_node_lines(node, COMPAT_DIR, script, *args, timeout=60)[0]


def as_json(value: Any) -> Any:
    """A value as JSON would carry it (what the node side printed is compared with this)."""
    return json.loads(json.dumps(value))


def context_json(context: SessionContext) -> JsonDict:
    model = (
        None
        if context.model is None
        else {"provider": context.model.provider, "modelId": context.model.modelId}
    )
    return {
        "messages": as_json(context.messages),
        "thinkingLevel": context.thinkingLevel,
        "model": model,
    }


# --- messages ------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = BASE_MS

    def __call__(self) -> int:
        self.now += 1000
        return self.now


def user(clock: Clock, text: str) -> MessageDict:
    return {"role": "user", "content": text, "timestamp": clock()}


def assistant(
    clock: Clock, text: str, provider: str = "anthropic", model: str = "claude-sonnet-4-5"
) -> MessageDict:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages" if provider == "anthropic" else "openai-responses",
        "provider": provider,
        "model": model,
        "usage": USAGE,
        "stopReason": "stop",
        "timestamp": clock(),
    }


def eid(pending: PendingAppend) -> str:
    assert pending.id is not None
    return pending.id


def conversation(manager: SessionManager, clock: Clock, *texts: str) -> list[str]:
    """A user message and its answer for each text; the ids, in order."""
    ids: list[str] = []
    for text in texts:
        ids.append(eid(manager.append_message(user(clock, f"{text}?"))))
        ids.append(eid(manager.append_message(assistant(clock, f"{text}!"))))
    return ids


# --- ours -> pi: the shapes --------------------------------------------------------------------


def linear(m: SessionManager, c: Clock) -> None:
    conversation(m, c, "one", "two")
    m.append_message(
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Reading it.", "thinkingSignature": "sig"},
                {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a.txt"}},
            ],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": USAGE,
            "stopReason": "toolUse",
            "timestamp": c(),
        }
    )
    m.append_message(
        {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "read",
            "content": [{"type": "text", "text": 'üñí 😀 "quoted" \\ backslash\n\ttab \u2028 sep'}],
            "details": {"lines": 1},
            "isError": False,
            "timestamp": c(),
        }
    )
    m.append_message(assistant(c, "done"))


def branched(m: SessionManager, c: Clock) -> None:
    _u1, a1, *_ = conversation(m, c, "one", "two")
    m.branch(a1)
    conversation(m, c, "two, again")


def navigated(m: SessionManager, c: Clock) -> None:
    """branch() with nothing after it: our leaf marker is the last line."""
    u1, *_ = conversation(m, c, "one", "two")
    m.branch(u1)


def navigated_twice(m: SessionManager, c: Clock) -> None:
    _u1, a1, _u2, a2 = conversation(m, c, "one", "two")
    m.branch(a1)
    conversation(m, c, "three")
    m.branch(a2)


def reset(m: SessionManager, c: Clock) -> None:
    conversation(m, c, "one")
    m.reset_leaf()


def reset_then_new_root(m: SessionManager, c: Clock) -> None:
    conversation(m, c, "one")
    m.reset_leaf()
    conversation(m, c, "a new start")


def with_branch_summary(m: SessionManager, c: Clock) -> None:
    _u1, a1, *_ = conversation(m, c, "one", "two")
    m.branch_with_summary(
        a1, "The second question went nowhere.", details={"readFiles": ["a"], "modifiedFiles": []}
    )
    conversation(m, c, "three")


def with_branch_summary_at_root(m: SessionManager, c: Clock) -> None:
    conversation(m, c, "one")
    m.branch_with_summary(None, "Everything so far, summarised.", from_hook=True)
    conversation(m, c, "two")


def labels_moving_leaf(m: SessionManager, c: Clock) -> None:
    u1, a1 = conversation(m, c, "one")
    m.append_label_change(u1, "start")
    conversation(m, c, "two")
    m.append_label_change(a1, "answer")  # the last line
    m.append_label_change(u1, None)  # cleared


def labels_keeping_leaf(m: SessionManager, c: Clock) -> None:
    u1, a1 = conversation(m, c, "one")
    m.append_label_change(u1, "start", move_leaf=False)
    conversation(m, c, "two")
    m.append_label_change(a1, "answer", move_leaf=False)  # the last line; the leaf stays


def labels_then_navigation(m: SessionManager, c: Clock) -> None:
    u1, a1, *_ = conversation(m, c, "one", "two")
    m.append_label_change(a1, "keep", move_leaf=False)
    m.branch(u1)


def with_compaction(m: SessionManager, c: Clock) -> None:
    m.append_thinking_level_change("medium")
    _u1, _a1, u2, *_ = conversation(m, c, "one", "two", "three")
    m.append_model_change("openai", "gpt-4o")
    m.append_compaction("One, two and three, summarised.", u2, 4242, details={"readFiles": []})
    m.append_message(user(c, "four?"))
    m.append_message(assistant(c, "four!", "openai", "gpt-4o"))
    m.append_thinking_level_change("high")


def with_two_compactions(m: SessionManager, c: Clock) -> None:
    conversation(m, c, "one")
    u2, *_ = conversation(m, c, "two")
    m.append_compaction("First summary.", u2, 100)
    u3, *_ = conversation(m, c, "three")
    m.append_compaction("Second summary.", u3, 200, from_hook=False)
    conversation(m, c, "four")


def with_custom_entries(m: SessionManager, c: Clock) -> None:
    conversation(m, c, "one")
    m.append_custom_entry("ext-state", {"count": 1})
    m.append_custom_message_entry("ext-note", "A note.", display=True, details={"from": "ext"})
    m.append_custom_message_entry("ext-hidden", [{"type": "text", "text": "Hidden."}], display=False)
    conversation(m, c, "two")
    m.append_custom_entry("ext-state")


def with_session_info(m: SessionManager, c: Clock) -> None:
    conversation(m, c, "one")
    m.append_session_info("  First name ")
    conversation(m, c, "two")
    m.append_session_info("Second name")


def with_session_name_cleared(m: SessionManager, c: Clock) -> None:
    conversation(m, c, "one")
    m.append_session_info("A name")
    conversation(m, c, "two")
    m.append_session_info("")


SHAPES: dict[str, Callable[[SessionManager, Clock], None]] = {
    f.__name__: f
    for f in (
        linear,
        branched,
        navigated,
        navigated_twice,
        reset,
        reset_then_new_root,
        with_branch_summary,
        with_branch_summary_at_root,
        labels_moving_leaf,
        labels_keeping_leaf,
        labels_then_navigation,
        with_compaction,
        with_two_compactions,
        with_custom_entries,
        with_session_info,
        with_session_name_cleared,
    )
}


def write_ours(tmp_path: Path, shape: Callable[[SessionManager, Clock], None]) -> Path:
    manager = SessionManager.create("/compat/project", tmp_path / "sessions")
    shape(manager, Clock())
    manager.close()
    assert manager.session_file is not None
    assert manager.session_file.is_file()
    return manager.session_file


@pytest.fixture(scope="session")
def pi_on_our_shapes(
    pi_reader: NodeReader, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[Path, JsonDict]]:
    """Every shape written by our store, and what pi read from it."""
    folder = tmp_path_factory.mktemp("shapes")
    paths = {name: write_ours(folder / name, shape) for name, shape in SHAPES.items()}
    views = pi_reader.read(*paths.values())
    assert len(views) == len(paths)
    return {name: (path, view) for (name, path), view in zip(paths.items(), views, strict=True)}


@pytest.mark.parametrize("shape", SHAPES)
def test_pi_builds_our_context_from_our_file(
    pi_on_our_shapes: dict[str, tuple[Path, JsonDict]], shape: str
) -> None:
    path, pi = pi_on_our_shapes[shape]
    with SessionManager.open(path) as ours:
        expected = context_json(ours.build_session_context())
        name, labels = ours.session_name, ours.labels

    # Compared whole, as JSON: no field is normalised. pi drops undefined fields when it prints
    # (JSON.stringify), and our store never writes a field it has no value for, so none differ.
    assert pi["messages"] == expected["messages"]
    assert pi["thinkingLevel"] == expected["thinkingLevel"]
    assert pi["model"] == expected["model"]
    assert pi["sessionName"] == name
    assert pi["labels"] == labels


def test_the_shapes_are_not_trivial(pi_on_our_shapes: dict[str, tuple[Path, JsonDict]]) -> None:
    """A guard on the guard: the shapes do build the contexts they are meant to."""
    expected = {
        "navigated": ["one?"],
        "reset": [],
        "reset_then_new_root": ["a new start?", "a new start!"],
        "labels_then_navigation": ["one?"],
        "branched": ["one?", "one!", "two, again?", "two, again!"],
    }
    for name, texts in expected.items():
        _path, pi = pi_on_our_shapes[name]
        assert [_text(m) for m in pi["messages"]] == texts, name


def _text(message: JsonDict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content or [] if isinstance(block, dict))


def test_pi_reads_our_images_as_blob_references(pi_reader: NodeReader, tmp_path: Path) -> None:
    """Large images: the one known difference, by design of our blob store.

    Our store writes the base64 of an image of 1,024 characters or more to ``blobs/<sha256>``
    and keeps ``blob:sha256:<hex>`` in the line (see ``rpc_agent/store/blobs.py``); our reader
    turns it back into base64. pi has no blob store: it takes the line as it is, so its context
    carries the reference string where the image data was. Everything else is equal, and
    small images (under the threshold) stay inline and are equal too.
    """
    raw = bytes(range(256)) * 16  # 4 KiB: far above the threshold once in base64
    big = base64.b64encode(raw).decode("ascii")
    small = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    clock = Clock()
    manager = SessionManager.create("/compat/project", tmp_path / "sessions")
    manager.append_message(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in these?"},
                {"type": "image", "data": big, "mimeType": "image/png"},
                {"type": "image", "data": small, "mimeType": "image/png"},
            ],
            "timestamp": clock(),
        }
    )
    manager.append_message(assistant(clock, "Two images."))
    manager.close()
    path = manager.session_file
    assert path is not None
    with SessionManager.open(path) as ours:
        expected = context_json(ours.build_session_context())

    [pi] = pi_reader.read(path)

    ours_blocks = expected["messages"][0]["content"]
    pi_blocks = pi["messages"][0]["content"]
    assert ours_blocks[1]["data"] == big  # our reader restores the image
    assert pi_blocks[1]["data"] == "blob:sha256:" + hashlib.sha256(raw).hexdigest()  # pi sees the reference
    assert pi_blocks[2]["data"] == small  # small images are inline for both
    # Apart from that one string, the contexts are the same.
    pi_blocks[1]["data"] = big
    assert pi["messages"] == expected["messages"]
    assert pi["thinkingLevel"] == expected["thinkingLevel"]
    assert pi["model"] == expected["model"]


# --- pi -> ours --------------------------------------------------------------------------------


def test_we_read_a_session_pi_wrote_and_pi_reads_it_after_we_append(
    node: str, pi_reader: NodeReader, tmp_path: Path
) -> None:
    folder = tmp_path / "pi-sessions"
    folder.mkdir()
    written = run_pi(node, "pi_write.mjs", str(folder))
    path = Path(written["file"])
    pi_entries: list[JsonDict] = written["entries"]
    kinds = {e["type"] for e in pi_entries}
    assert kinds >= {
        "message",
        "label",
        "thinking_level_change",
        "model_change",
        "custom_message",
        "compaction",
        "session_info",
    }

    with SessionManager.open(path) as ours:
        # The context pi built when it wrote the file.
        assert context_json(ours.build_session_context()) == written["context"]
        # Every entry pi wrote, unchanged and in order; the leaf, labels and name as pi has them.
        assert as_json(ours.entries) == pi_entries
        assert ours.leaf_id == written["leafId"]
        assert ours.labels == written["labels"]
        assert ours.session_name == written["sessionName"]
        # The tree shows every entry but the label entries, which it shows as labels of
        # their targets instead.
        tree = ours.get_tree()
        shown = {node.entry["id"] for node in tree}
        assert shown == {e["id"] for e in pi_entries if e["type"] != "label"}
        assert {n.entry["id"]: n.label for n in tree if n.label} == written["labels"]
        # Both branches are there: the first answer has two children.
        first_answer = pi_entries[1]["id"]
        assert len(ours.get_children(first_answer)) == 2

        new_message = user(Clock(), "One more question, from rpc-agent")
        new_id = eid(ours.append_message(new_message))

    [again] = pi_reader.read(path)
    assert again["messages"] == [*written["context"]["messages"], new_message]
    assert again["leafId"] == new_id
    assert again["thinkingLevel"] == written["context"]["thinkingLevel"]
    assert again["model"] == written["context"]["model"]
    assert again["sessionName"] == written["sessionName"]
    assert again["labels"] == written["labels"]
