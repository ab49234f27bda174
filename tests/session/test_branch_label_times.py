"""A branched session carries the labels of its path with the times they were set, not the
time of the copy."""

from __future__ import annotations

import json
from pathlib import Path

from session_testlib import assistant, iso, read_lines, user

from rpc_agent.store import SessionManager


def test_copied_labels_keep_their_timestamps(tmp_path: Path) -> None:
    lines = [
        {"type": "session", "version": 3, "id": "s-1", "timestamp": iso(0), "cwd": "/p"},
        {"type": "message", "id": "00000001", "parentId": None, "timestamp": iso(1), "message": user("u1")},
        {
            "type": "message",
            "id": "00000002",
            "parentId": "00000001",
            "timestamp": iso(2),
            "message": assistant("a1"),
        },
        {
            "type": "label",
            "id": "0000000a",
            "parentId": "00000002",
            "timestamp": iso(3),
            "targetId": "00000001",
            "label": "old",
        },
        {
            "type": "label",
            "id": "0000000b",
            "parentId": "0000000a",
            "timestamp": iso(4),
            "targetId": "00000001",
            "label": "start",
        },
        {
            "type": "label",
            "id": "0000000c",
            "parentId": "0000000b",
            "timestamp": iso(5),
            "targetId": "00000002",
            "label": "answer",
        },
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    with SessionManager.open(path) as manager:
        branched = manager.create_branched_session("00000002")
    with branched:
        copied = {e["targetId"]: e for e in branched.entries if e["type"] == "label"}
    assert {target: (e["label"], e["timestamp"]) for target, e in copied.items()} == {
        "00000001": ("start", iso(4)),
        "00000002": ("answer", iso(5)),
    }
    assert branched.session_file is not None
    on_disk = [line for line in read_lines(branched.session_file) if line["type"] == "label"]
    assert [(line["label"], line["timestamp"]) for line in on_disk] == [("start", iso(4)), ("answer", iso(5))]
