"""The HTML export without a browser: what the page embeds, that session text cannot become
markup, that the page loads nothing from the network, and the ``rpc-agent export`` command."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from export_testlib import DATA_SCRIPT, XSS_NAME, XSS_TEXT, embedded_data, rich_session

from rpc_agent.cli import main
from rpc_agent.export import page_data, render_page
from rpc_agent.store import SessionManager


def export(session: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["export", str(session), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    return out.read_text(encoding="utf-8")


def test_the_page_embeds_the_whole_tree_with_leaf_labels_and_restored_images(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = rich_session(tmp_path)
    blob_refs = session.path.read_text().count("blob:sha256:")
    assert blob_refs == 1  # the image went to the blob store
    data = embedded_data(export(session.path, tmp_path / "out.html", capsys))

    with SessionManager.open_read_only(session.path) as manager:
        tree = manager.get_tree()
    assert [n["entry"]["id"] for n in data["nodes"]] == [n.entry["id"] for n in tree]
    assert [n["parentId"] for n in data["nodes"]] == [n.parentId for n in tree]
    assert data["leafId"] == session.leaf
    labels = {n["entry"]["id"]: n["label"] for n in data["nodes"] if n["label"]}
    assert labels == {session.ids["first_user"]: "start-here", session.ids["main_answer"]: "fixed"}
    ids = {n["entry"]["id"] for n in data["nodes"]}
    assert {session.ids["alt_answer"], session.ids["main_leaf"], session.ids["compaction"]} <= ids
    assert {n["entry"]["type"] for n in data["nodes"]} >= {"compaction", "branch_summary", "message"}
    assert not any(n["entry"]["type"] == "label" for n in data["nodes"])  # labels are fields, not nodes

    by_id = {n["entry"]["id"]: n["entry"] for n in data["nodes"]}
    image = by_id[session.ids["first_user"]]["message"]["content"][1]
    assert image["type"] == "image"
    assert not image["data"].startswith("blob:")  # the blob store gave the bytes back
    thinking = by_id[session.ids["tool_call"]]["message"]["content"][0]
    assert thinking["thinking"].startswith("THINK-MARKER")
    assert "thinkingSignature" not in thinking
    assert data["session"]["name"] == XSS_NAME.strip()
    assert data["title"] == XSS_NAME.strip()


def test_session_text_cannot_end_the_data_script_or_become_markup(tmp_path: Path) -> None:
    session = rich_session(tmp_path)
    with SessionManager.open_read_only(session.path) as manager:
        data = page_data(manager)
    page = render_page(data)
    match = DATA_SCRIPT.search(page)
    assert match is not None
    embedded = match.group(1)
    assert "<" not in embedded
    assert ">" not in embedded
    frame = page.replace(embedded, "")
    assert len(re.findall(r"<script\b", frame)) == 2  # the data and the viewer, nothing else
    escaped_title = "&lt;/title&gt;&lt;/script&gt;&lt;script&gt;window.__xss=4&lt;/script&gt; parser fix"
    assert f"<title>{escaped_title}</title>" in frame
    assert "__xss" not in frame.replace(escaped_title, "")
    assert embedded_data(page) == data  # the escaping does not change the data
    messages: list[Mapping[str, Any]] = [node["entry"].get("message") or {} for node in data["nodes"]]
    texts = [
        block.get("text")
        for message in messages
        for block in message.get("content") or []
        if isinstance(block, dict)
    ]
    assert any(isinstance(t, str) and XSS_TEXT in t for t in texts)


def test_the_page_loads_nothing_from_the_network(tmp_path: Path) -> None:
    session = rich_session(tmp_path)
    with SessionManager.open_read_only(session.path) as manager:
        page = render_page(page_data(manager))
    frame = re.sub(r'<script id="session-data" type="application/json">.*?</script>', "", page, flags=re.S)
    assert "https://example.com/docs" in page  # a link in a message is data, not a load
    assert not re.search(r"<(link|iframe|object|embed)\b", frame, re.I)
    assert not re.search(r"<script[^>]*\bsrc\s*=", frame, re.I)
    assert not re.search(r"""\b(src|href)\s*=\s*["']?(https?:)?//""", frame, re.I)
    assert not re.search(r"@import|url\(\s*['\"]?(https?:)?//", frame, re.I)
    assert "default-src 'none'" in frame  # and the page forbids loads it did not plan


def test_export_reads_a_session_another_writer_holds_and_leaves_the_file_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    session = rich_session(tmp_path)
    before = session.path.read_bytes()
    monkeypatch.chdir(tmp_path)
    with SessionManager.open(session.path):  # holds the write lock, as a running agent does
        assert main(["export", str(session.path)]) == 0
    out = Path(capsys.readouterr().out.strip())
    assert out == tmp_path / session.path.with_suffix(".html").name  # default: the cwd
    assert "MAIN-LEAF" in out.read_text(encoding="utf-8")
    assert session.path.read_bytes() == before


def test_export_refuses_to_overwrite_a_session_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = rich_session(tmp_path)
    other = rich_session(tmp_path / "other")
    before, other_before = session.path.read_bytes(), other.path.read_bytes()
    assert main(["export", str(session.path), "-o", str(session.path)]) == 2
    assert "refusing to overwrite the session file itself" in capsys.readouterr().err
    assert main(["export", str(session.path), "-o", str(other.path)]) == 2
    assert "refusing to overwrite a session file" in capsys.readouterr().err
    assert (session.path.read_bytes(), other.path.read_bytes()) == (before, other_before)
    assert main(["export", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "x.html")]) == 1
    assert "no session at" in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()


def test_a_read_only_session_refuses_appends_and_migrates_in_memory_only(tmp_path: Path) -> None:
    old = tmp_path / "v1.jsonl"
    old.write_text(
        '{"type":"session","id":"s1","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}\n'
        '{"type":"message","timestamp":"2024-01-01T00:00:01.000Z",'
        '"message":{"role":"user","content":"hello","timestamp":1}}\n'
    )
    before = old.read_bytes()
    with SessionManager.open_read_only(old) as manager:
        [node] = manager.get_tree()
        assert node.entry["message"]["content"] == "hello"
        with pytest.raises(RuntimeError, match="read-only"):
            manager.append_session_info("x")
    assert old.read_bytes() == before
    assert not old.with_name(old.name + ".lock").exists()
