"""Finding sessions: search (what matches, the byte scan's careful paths, pages) and list pages."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from session_testlib import BASE_MS, assistant, eid, header, message_entry, session_path, user, write_jsonl

from rpc_agent.errors import InvalidRequestError
from rpc_agent.store import SessionManager, list_sessions, paging
from rpc_agent.store.listing import listing_key
from rpc_agent.store.search import match_file, scan_needle, search, search_sessions, snippet

JsonDict = dict[str, object]


def written(manager: SessionManager, mtime_s: int | None = None) -> Path:
    path = session_path(manager)
    manager.close()
    if mtime_s is not None:
        os.utime(path, (mtime_s, mtime_s))
    return path


def hit_paths(folder: Path, query: str, limit: int = 50) -> list[str]:
    hits, _ = search([folder], query, limit, None)
    return [hit.candidate.path for hit in hits]


def test_matches_message_text_the_current_name_and_current_labels_in_any_case(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    in_text = SessionManager.create("/p", folder)
    u = eid(in_text.append_message(user("Fix the Parser bug please")))
    a = eid(in_text.append_message(assistant("The PARSER is fixed.")))
    in_text.append_message(assistant("unrelated"))
    in_text.append_label_change(u, "the parser prompt")  # matches too: the id is listed once
    named = SessionManager.create("/p", folder)
    named.append_message(user("hello"))
    named.append_message(assistant("hi"))
    named.append_session_info("Parser work")
    renamed = SessionManager.create("/p", folder)
    renamed.append_message(user("hello"))
    renamed.append_message(assistant("hi"))
    renamed.append_session_info("parser")
    renamed.append_session_info("something else")
    labelled = SessionManager.create("/p", folder)
    target = eid(labelled.append_message(user("hello")))
    labelled.append_message(assistant("hi"))
    labelled.append_label_change(target, "parser checkpoint")
    unlabelled = SessionManager.create("/p", folder)
    gone = eid(unlabelled.append_message(user("hello")))
    unlabelled.append_message(assistant("hi"))
    unlabelled.append_label_change(gone, "parser")
    unlabelled.append_label_change(gone, None)
    elsewhere = SessionManager.create("/p", folder)
    elsewhere.append_message(user("run it"))
    elsewhere.append_message(
        {
            **assistant("ok"),
            "content": [
                {"type": "thinking", "thinking": "the parser is odd", "thinkingSignature": "parser"},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "parser.py"}},
            ],
        }
    )
    elsewhere.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "def parser(): ..."}],
            "isError": False,
            "timestamp": BASE_MS,
        }
    )
    paths = {
        name: written(manager, BASE_MS // 1000 + i)
        for i, (name, manager) in enumerate(
            [
                ("in_text", in_text),
                ("named", named),
                ("renamed", renamed),
                ("labelled", labelled),
                ("unlabelled", unlabelled),
                ("elsewhere", elsewhere),
            ]
        )
    }

    result = search_sessions([folder], "pArSeR", 50, None)
    by_path = {hit.session.path: hit for hit in result.sessions}
    assert list(by_path) == [
        str(paths["labelled"]),
        str(paths["named"]),
        str(paths["in_text"]),
    ]  # newest first
    assert result.nextCursor is None
    text_hit = by_path[str(paths["in_text"])]
    assert text_hit.entryIds == [u, a]
    assert text_hit.nameMatched is False
    assert text_hit.snippet == "Fix the Parser bug please"
    assert text_hit.session.messageCount == 3
    assert text_hit.session.firstMessage == "Fix the Parser bug please"
    named_hit = by_path[str(paths["named"])]
    assert (named_hit.entryIds, named_hit.nameMatched, named_hit.snippet) == ([], True, "Parser work")
    assert named_hit.session.name == "Parser work"
    label_hit = by_path[str(paths["labelled"])]
    assert (label_hit.entryIds, label_hit.nameMatched) == ([target], False)
    assert label_hit.snippet == "parser checkpoint"
    assert hit_paths(folder, "no such words") == []


def test_the_careful_paths_find_what_the_byte_scan_alone_would_miss(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    texts = {
        "accented": "Un CAFÉ noir",
        "quoted": 'she said "hi there" and left',
        "kelvin": "cooled to 4 \u212aelvin",
        "dotted": "\u0130stanbul trip",
        "taxi": "call a TAX\u0130",
        "cjk": "日本語のテキスト",
    }
    paths: dict[str, Path] = {}
    for i, (name, text) in enumerate(texts.items()):
        lines = [header(session_id=f"id-{name}"), message_entry(f"e-{name}", None, 1, user(text))]
        paths[name] = folder / f"{name}.jsonl"
        write_jsonl(paths[name], lines)
        os.utime(paths[name], (1000 + i, 1000 + i))
    # The same texts as a writer that escapes everything but ASCII (Python's json) puts them.
    escaped = folder / "escaped.jsonl"
    escaped.write_text(
        "\n".join(
            json.dumps(line, ensure_ascii=True)
            for line in [
                header(session_id="id-escaped"),
                message_entry("e-esc", None, 1, user(" / ".join(texts.values()))),
            ]
        )
        + "\n"
    )
    os.utime(escaped, (900, 900))

    assert hit_paths(folder, "café") == [str(paths["accented"]), str(escaped)]
    assert hit_paths(folder, '"HI THERE"') == [str(paths["quoted"]), str(escaped)]
    assert hit_paths(folder, "kelvin") == [str(paths["kelvin"]), str(escaped)]  # U+212A lowers to "k"
    assert hit_paths(folder, "i̇stanbul") == [str(paths["dotted"]), str(escaped)]  # U+0130 lowers to "i̇"
    assert hit_paths(folder, "テキスト") == [str(paths["cjk"]), str(escaped)]  # no ASCII to look for
    assert hit_paths(folder, "Taxi") == [str(paths["taxi"]), str(escaped)]  # "taxi̇" holds "taxi"


TRICKY_TEXTS = [
    "4 \u212aelvin and 3 K",
    "\u0130stanbul, TAX\u0130, Ii",
    'say "Hi" \\ back\\slash\ttab\nnew line',
    "Caf\u00e9 Stra\u00dfe \u01c5 \u2028 end",
    "\u65e5\u672c\u8a9e \U0001f600 mixed ASCII",
]


@pytest.mark.parametrize("ensure_ascii", [False, True])
def test_the_scan_agrees_with_plain_lowered_substring_search(ensure_ascii: bool) -> None:
    """Every substring (up to 4 characters) of every text, in three casings, as a query: the
    byte scan finds the message exactly when ``query.lower() in text.lower()``."""
    for text in TRICKY_TEXTS:
        lines = [header(), message_entry("e1", None, 1, user(text))]
        data = "".join(json.dumps(line, ensure_ascii=ensure_ascii) + "\n" for line in lines).encode()
        queries = {
            variant
            for source in (text, text.lower())
            for size in range(1, 5)
            for start in range(len(source) - size + 1)
            for piece in [source[start : start + size]]
            for variant in (piece, piece.upper(), piece.lower())
            if piece.strip()
        }
        for other in TRICKY_TEXTS:
            queries.add(other[:6])
        for query in sorted(queries):
            lowered = query.lower()
            expected = lowered in text.lower()
            found = match_file(data, lowered, scan_needle(lowered)) is not None
            assert found == expected, (text, query, scan_needle(lowered))


def test_pages_walk_newest_first_and_return_each_session_once_while_new_ones_arrive(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    expected: list[str] = []
    for i in range(9):
        manager = SessionManager.create("/p", folder)
        manager.append_message(user(f"needle number {i}" if i % 3 else "nothing here"))
        manager.append_message(assistant("ok"))
        # Two sessions share each mtime: the path breaks the tie.
        path = written(manager, 5000 - i // 2)
        if i % 3:
            expected.append(str(path))
    expected.sort()
    expected.sort(key=lambda p: os.stat(p).st_mtime_ns, reverse=True)

    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        hits, cursor = search([folder], "NEEDLE", 2, cursor)
        seen += [hit.candidate.path for hit in hits]
        pages += 1
        if pages == 1:  # a session written meanwhile is newer than every page: it shifts nothing
            newcomer = SessionManager.create("/p", folder)
            newcomer.append_message(user("a needle too"))
            newcomer.append_message(assistant("ok"))
            written(newcomer, 9000)
        if cursor is None:
            break
    assert seen == expected
    assert pages == 3  # 6 hits in pages of 2, the last known to be last


def test_bad_queries_and_cursors_are_invalid_params(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    manager = SessionManager.create("/p", folder)
    manager.append_message(user("x"))
    manager.append_message(assistant("y"))
    written(manager)
    list_cursor = paging.encode_cursor("list", ("2024-01-01T00:00:00.000Z", "/a"))
    for query, cursor in [("  ", None), ("x", "not a cursor"), ("x", list_cursor), ("x", "e30")]:
        with pytest.raises(InvalidRequestError):
            search([folder], query, 10, cursor)


def test_snippet_is_one_line_around_the_first_match() -> None:
    text = "word " * 30 + "the\nTarget   here " + "tail " * 40
    cut = snippet(text, "target")
    assert cut.startswith("…")
    assert cut.endswith("…")
    assert "the Target here" in cut
    assert "\n" not in cut
    assert snippet("short target", "target") == "short target"


def test_list_pages_follow_the_listing_order_and_return_each_session_once(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    for i in range(7):
        lines = [
            header(session_id=f"id-{i}"),
            # Pairs share their last activity: the path breaks the tie, as in the full list.
            message_entry(f"e{i}", None, 1, user(f"m{i}", ts=BASE_MS + (i // 2) * 1000)),
        ]
        write_jsonl(folder / f"s{i}.jsonl", lines)
    everything = list_sessions(folder)
    keys = [listing_key(info) for info in everything]
    expected = sorted(keys, key=lambda key: key[1])
    expected.sort(key=lambda key: key[0], reverse=True)
    assert keys == expected
    assert len({key[0] for key in keys}) == 4  # ties to break
    seen: list[str] = []
    cursor: str | None = None
    while True:
        chosen, cursor = paging.page(everything, listing_key, "list", 3, cursor)
        seen += [info.path for info in chosen]
        if cursor is None:
            break
    assert seen == [info.path for info in everything]
    assert paging.page(everything, listing_key, "list", None, None) == (everything, None)
    search_cursor = paging.encode_cursor("search", (1, "/a"))
    with pytest.raises(InvalidRequestError):
        paging.page(everything, listing_key, "list", 3, search_cursor)
