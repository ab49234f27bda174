from __future__ import annotations

from rpc_agent.tools.truncate import (
    count_lines,
    format_size,
    shorten_line,
    truncate_head,
    truncate_tail,
)


def test_no_truncation_keeps_text() -> None:
    result = truncate_head("a\nb\n", max_lines=5, max_bytes=100)
    assert not result.truncated
    assert result.content == "a\nb\n"
    assert result.total_lines == 2


def test_head_by_lines() -> None:
    text = "\n".join(str(i) for i in range(10))
    result = truncate_head(text, max_lines=3, max_bytes=1000)
    assert result.truncated
    assert result.truncated_by == "lines"
    assert result.content == "0\n1\n2"
    assert result.total_lines == 10
    assert result.output_lines == 3


def test_head_by_bytes_keeps_whole_lines() -> None:
    result = truncate_head("aaaa\nbbbb\ncccc", max_lines=100, max_bytes=10)
    assert result.truncated_by == "bytes"
    assert result.content == "aaaa\nbbbb"


def test_tail_by_lines() -> None:
    text = "\n".join(str(i) for i in range(10)) + "\n"
    result = truncate_tail(text, max_lines=3, max_bytes=1000)
    assert result.truncated_by == "lines"
    assert result.content == "7\n8\n9"
    assert result.total_lines == 10


def test_tail_by_bytes() -> None:
    result = truncate_tail("aaaa\nbbbb\ncccc", max_lines=100, max_bytes=10)
    assert result.truncated_by == "bytes"
    assert result.content == "bbbb\ncccc"
    assert not result.last_line_partial


def test_tail_keeps_end_of_one_long_line_without_splitting_characters() -> None:
    result = truncate_tail("é" * 100, max_lines=100, max_bytes=11)
    assert result.last_line_partial
    assert result.content == "é" * 5
    assert result.output_bytes <= 11


def test_helpers() -> None:
    assert count_lines("") == 0
    assert count_lines("a") == 1
    assert count_lines("a\n") == 1
    assert count_lines("a\nb") == 2
    assert format_size(10) == "10B"
    assert format_size(2048) == "2.0KB"
    assert format_size(3 * 1024 * 1024) == "3.0MB"
    assert shorten_line("abc", 5) == ("abc", False)
    assert shorten_line("abcdefgh", 3) == ("abc... [5 more chars]", True)
