"""The exported page in a real browser: Chromium from the Debian package, driven by Playwright.

Only a browser can tell whether the page works: that the tree marks the leaf and the labels,
that clicking a node on another branch shows that branch's path and not the current one, that
session text stays text, that nothing is fetched from the network, and that a 10,000-entry
session opens and answers a click. Screenshots are kept in ``$RPC_AGENT_TEST_ARTIFACTS`` (else
the test's tmp dir) and their paths printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from export_testlib import embedded_data, long_session, rich_session
from playwright.sync_api import Browser, Page, expect, sync_playwright

from rpc_agent.cli import main

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
BOUND_S = 10.0
"""How long opening a big export, or rendering a path after a click, may take at most."""

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (apt-get install chromium)"),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert errors == [], f"errors in the page: {errors}"


def artifact(tmp_path: Path, name: str) -> Path:
    folder = Path(os.environ.get("RPC_AGENT_TEST_ARTIFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def export(session: Path, out: Path) -> Path:
    assert main(["export", str(session), "-o", str(out)]) == 0
    return out


def open_page(page: Page, path: Path) -> list[str]:
    """Load the page; the URLs it requested (the page itself included)."""
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready]", timeout=BOUND_S * 1000)
    return requests


def path_text(page: Page) -> str:
    return str(page.text_content("#path"))


def test_the_tree_marks_the_leaf_and_labels_and_a_click_shows_the_other_branch(
    page: Page, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = rich_session(tmp_path)
    out = export(session.path, tmp_path / "rich.html")
    requests = open_page(page, out)

    # The tree: every node a row, the leaf marked, the labels shown, the branch point counted.
    rows = page.locator("#tree .row")
    assert rows.count() == len(embedded_data(out.read_text(encoding="utf-8"))["nodes"])
    leaf_row = page.locator("#tree .row:has(.pill.leaf)")
    assert leaf_row.count() == 1
    assert leaf_row.get_attribute("data-id") == session.leaf
    assert "MAIN-LEAF" in leaf_row.inner_text()
    labels = {
        str(r.get_attribute("data-id")): r.locator(".pill.label").inner_text()
        for r in page.locator("#tree .row:has(.pill.label)").all()
    }
    assert labels == {session.ids["first_user"]: "start-here", session.ids["main_answer"]: "fixed"}
    fork = page.locator(f'#tree .row[data-id="{session.ids["tool_result"]}"] .pill.fork')
    assert fork.inner_text() == "2 branches"

    # At first the path to the leaf is shown: the compaction is on it, the other branch is not.
    shown = path_text(page)
    assert "MAIN-LEAF" in shown
    assert "COMPACTION-SUMMARY" in shown
    assert "ALT-ANSWER" not in shown
    assert "BRANCH-SUMMARY" not in shown

    # A click on a node of the other branch shows that branch's path from the root.
    page.click(f'#tree .row[data-id="{session.ids["alt_answer"]}"]')
    page.wait_for_selector(f'body[data-selected="{session.ids["alt_answer"]}"]')
    shown = path_text(page)
    for text in (
        "FIRST-QUESTION",
        "I'll run the tests first.",
        "BRANCH-SUMMARY",
        "ALT-QUESTION",
        "ALT-ANSWER",
    ):
        assert text in shown
    for text in ("MAIN-LEAF", "MAIN-ANSWER", "COMPACTION-SUMMARY", "Now add docs"):
        assert text not in shown
    assert page.locator("#path-head").inner_text().count("on another branch") == 1
    assert page.locator(f'#tree .row.sel[data-id="{session.ids["alt_answer"]}"]').count() == 1

    # Thinking is folded, the tool call shows its command and its folded output, the image is decoded.
    thinking = page.locator("#path details.thinking")
    assert thinking.count() == 1
    assert thinking.get_attribute("open") is None
    tool = page.locator("#path .tool")
    assert "pytest -q tests/test_parser.py" in tool.locator(".head").inner_text()
    assert "test_case_0 PASSED" in tool.inner_text()
    assert "FAILED tests/test_parser.py::test_quotes" not in tool.inner_text()  # folded away
    tool.locator("details.fold > summary").click()
    expect(tool).to_contain_text("FAILED tests/test_parser.py::test_quotes")
    image = page.locator("#path img.inline")
    assert image.count() == 1
    assert image.evaluate("img => img.complete && img.naturalWidth") == 48
    assert "in 1,200 · out 80 · $0.012" in page.locator("#path .usage").first.inner_text()

    # The main branch's answer: Markdown with a highlighted code block; its XSS attempts stay text.
    page.click(f'#tree .row[data-id="{session.ids["main_answer"]}"]')
    page.wait_for_selector(f'body[data-selected="{session.ids["main_answer"]}"]')
    answer = page.locator(f"#e-{session.ids['main_answer']}")
    assert answer.locator("strong").first.inner_text() == "the quote bug"
    assert answer.locator("pre code .hl-k").first.inner_text() == "def"
    assert answer.locator("a").first.get_attribute("href") == "https://example.com/docs"
    assert "<img src=x onerror=" in answer.inner_text()
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert (
        page.locator(
            '#path img:not(.inline), #path script, #path [onmouseover], #path [onclick], #path [onerror], a[href^="javascript:"]'
        ).count()
        == 0
    )
    assert answer.locator("table td code").first.inner_text() == "<i>"

    # Nothing but the file itself and inline data was loaded.
    assert [u for u in requests if not u.startswith(("file:", "data:"))] == []
    shot = artifact(tmp_path, "export-tree.png")
    page.screenshot(path=str(shot))
    with capsys.disabled():
        print(f"\nscreenshot of an exported tree: {shot}")


def test_a_ten_thousand_entry_session_opens_and_answers_a_click(
    page: Page, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session, chain = long_session(tmp_path, entries=10_000)
    out = export(session, tmp_path / "long.html")
    started = time.monotonic()
    open_page(page, out)
    assert time.monotonic() - started < BOUND_S
    assert "10,019" in page.inner_text("#tree-status")  # 10,000 in the chain and 19 side questions
    # A virtual list: a screenful of rows in the DOM, and no deep nesting anywhere.
    assert page.locator("#tree .row").count() < 200
    depth = page.evaluate(
        "() => { let d = 0; for (const e of document.querySelectorAll('*')) {"
        " let n = 0; for (let p = e; p; p = p.parentElement) n++; d = Math.max(d, n); } return d; }"
    )
    assert depth < 40
    # The leaf's path is 10,000 entries long; the newest are rendered, the rest on request.
    assert "answer 9999" in path_text(page)
    assert "question 0:" not in path_text(page)
    shown = page.locator("#path .msg")
    assert shown.count() == 60
    page.click("#path .more button.earlier")
    expect(shown).to_have_count(180)
    assert "question 9820" in path_text(page)
    assert "answer 9819" not in path_text(page)

    # Scroll the tree to the top and click the first question.
    page.evaluate("document.getElementById('tree').scrollTop = 0")
    first = page.locator(f'#tree .row[data-id="{chain[0]}"]')
    first.wait_for(timeout=BOUND_S * 1000)
    started = time.monotonic()
    first.click()
    page.wait_for_selector(f'body[data-selected="{chain[0]}"]', timeout=BOUND_S * 1000)
    assert time.monotonic() - started < BOUND_S
    assert "question 0: what about item_0?" in path_text(page)
    assert "answer 1:" not in path_text(page)

    # A side question deep in the tree: its path runs through the chain to it.
    page.fill("#search", "SIDE-4999")
    side = page.locator("#tree .row", has_text="SIDE-4999")
    side.wait_for(timeout=BOUND_S * 1000)
    started = time.monotonic()
    side.click()
    page.wait_for_function("(id) => document.body.dataset.selected !== id", arg=chain[0])
    assert time.monotonic() - started < BOUND_S
    assert "SIDE-4999" in path_text(page)
    assert "answer 4999" in path_text(page)
    assert "question 5000" not in path_text(page)
    shot = artifact(tmp_path, "export-10k.png")
    page.screenshot(path=str(shot))
    with capsys.disabled():
        print(f"\nscreenshot of a 10,000-entry export: {shot}")


def test_the_files_each_turn_changed_are_shown_with_their_diffs(page: Page, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("before\n")
    script = tmp_path / "script.json"
    command = "echo after > notes.txt && echo new > added.txt"
    script.write_text(
        '[{"toolCalls": [{"name": "bash", "arguments": {"command": "' + command + '"}}]}, {"text": "done"}]'
    )
    argv = ["-p", "change the notes", "--provider", "faux", "--faux-script", str(script), "--cwd", str(work)]
    # A process of its own: Playwright's loop runs in this thread, and -p runs one too.
    done = subprocess.run(
        [sys.executable, "-m", "rpc_agent", *argv, "--output-format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    session = Path(json.loads(done.stdout)["sessionFile"])
    out = export(session, tmp_path / "changes.html")
    data = embedded_data(out.read_text())
    ((entry_id, files),) = data["fileChanges"].items()
    assert {f["path"]: f["status"] for f in files} == {"notes.txt": "modified", "added.txt": "added"}
    open_page(page, out)
    summary = page.locator("details.files > summary")
    expect(summary).to_have_text("Files changed · 2")
    summary.click()
    page.locator("details.file > summary", has_text="modified notes.txt").click()
    expect(page.locator("details.files")).to_contain_text("+after")
    page.screenshot(path=str(artifact(tmp_path, "export-file-changes.png")))
    assert entry_id in page.content()
