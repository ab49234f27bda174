"""LineReader and LineWriter on real pipes, in process: strict LF framing, whole coalesced writes."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator

import anyio
import pytest

from rpc_agent.io.background import Foreground
from rpc_agent.server import LineReader, LineWriter

pytestmark = pytest.mark.anyio


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    yield read_fd, write_fd
    for fd in (read_fd, write_fd):
        with contextlib.suppress(OSError):
            os.close(fd)


async def read_all(reader: LineReader) -> list[bytes]:
    lines: list[bytes] = []
    with anyio.fail_after(30):
        async for chunk in reader:
            assert chunk, "the reader never yields an empty list"
            lines.extend(chunk)
    return lines


async def test_lines_split_on_lf_only_with_one_trailing_cr_dropped(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    separators = "a\u2028b\u2029c\x85d\x0be\x0cf\x1cg\x1dh\x1ei".encode()
    os.write(write_fd, b"one\r\ntwo\n\nthree\r\r\n" + separators + b"\n\rcr-first\nlast-without-lf")
    os.close(write_fd)
    reader = LineReader(read_fd)
    assert await read_all(reader) == [
        b"one",
        b"two",
        b"",
        b"three\r",
        separators,
        b"\rcr-first",
        b"last-without-lf",
    ]


async def test_lines_split_across_reads_are_joined(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    reader = LineReader(read_fd, chunk_size=7)
    big = b"x" * 2_000

    async def feed() -> None:
        for part in [b'{"a":', b"1}\n{", b'"b":2}\r', b"\n", big[:1_000], big[1_000:] + b"\n"]:
            await anyio.to_thread.run_sync(os.write, write_fd, part)
        os.close(write_fd)

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(feed)
        lines = await read_all(reader)
    assert lines == [b'{"a":1}', b'{"b":2}', big]


async def test_a_chunk_yields_all_its_lines_at_once(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    os.write(write_fd, b"".join(b"line %d\n" % i for i in range(1000)))
    reader = LineReader(read_fd)
    with anyio.fail_after(30):
        lines = await reader.read_lines()
    assert lines == [b"line %d" % i for i in range(1000)]


async def test_a_binary_file_without_descriptor_works_too() -> None:
    reader = LineReader(io.BufferedReader(io.BytesIO(b"a\nb\r\nc")))
    assert await read_all(reader) == [b"a", b"b", b"c"]


async def test_cancelling_a_read_wakes_its_worker_thread_and_closes_the_reader(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    reader = LineReader(read_fd)
    with anyio.move_on_after(0.05) as scope:
        await reader.read_lines()
    assert scope.cancelled_caught
    # The abandoned worker thread was woken and did not stay behind to swallow input: bytes
    # written now are still in the pipe for whoever reads next.
    os.write(write_fd, b"left for someone else\n")
    assert os.read(read_fd, 100) == b"left for someone else\n"
    assert await reader.read_lines() == []  # a cancelled reader is closed, and closed is EOF


async def test_closing_the_reader_during_a_read_ends_it_like_eof(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    reader = LineReader(read_fd)
    os.write(write_fd, b"first\n")
    seen: list[bytes] = []

    async def consume() -> None:
        async for lines in reader:
            seen.extend(lines)
            if len(seen) == 1:
                reader.close()  # while the next read is about to wait

    with anyio.fail_after(30):
        await consume()
    assert seen == [b"first"]
    os.write(write_fd, b"not consumed\n")
    assert os.read(read_fd, 100) == b"not consumed\n"


async def test_closing_the_reader_from_another_task_wakes_a_blocked_read(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    reader = LineReader(read_fd)
    async with anyio.create_task_group() as task_group:
        result: list[list[bytes]] = []

        async def read() -> None:
            result.append(await reader.read_lines())

        task_group.start_soon(read)
        await anyio.wait_all_tasks_blocked()  # the reader is waiting in its worker thread
        reader.close()
    assert result == [[]]
    os.write(write_fd, b"not consumed\n")
    assert os.read(read_fd, 100) == b"not consumed\n"


async def test_the_writer_coalesces_everything_queued_into_one_write(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    async with LineWriter(write_fd) as writer:
        for i in range(500):
            writer.write_line(b'{"n":%d}\n' % i)
        await writer.flush()
        assert writer.writes == 1
    os.close(write_fd)
    data = b""
    while chunk := os.read(read_fd, 1 << 16):
        data += chunk
    assert data == b"".join(b'{"n":%d}\n' % i for i in range(500))


async def test_the_writer_escapes_unicode_line_separators(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    async with LineWriter(write_fd) as writer:
        writer.write_line('{"t":"a\u2028b\u2029c\u00e9\u20ac"}\n'.encode())
    assert os.read(read_fd, 100) == '{"t":"a\\u2028b\\u2029c\u00e9\u20ac"}\n'.encode()


async def written(pipe: tuple[int, int], *lines: bytes | list[bytes]) -> tuple[bytes, LineWriter]:
    """What a reader draining the pipe gets from a writer given ``lines`` (a list: one line in
    parts), and the writer."""
    read_fd, write_fd = pipe
    received: list[bytes] = []

    def drain() -> None:
        while chunk := os.read(read_fd, 1 << 16):
            received.append(chunk)

    async with anyio.create_task_group() as group:
        group.start_soon(anyio.to_thread.run_sync, drain)
        try:
            async with LineWriter(write_fd) as writer:
                for line in lines:
                    if isinstance(line, list):
                        writer.write_parts(line)
                    else:
                        writer.write_line(line)
        finally:
            os.close(write_fd)  # the drain ends at EOF, whatever happened
    return b"".join(received), writer


async def test_a_huge_line_in_pieces_arrives_whole_with_every_separator_escaped(
    pipe: tuple[int, int],
) -> None:
    text = "\u2028\u2029é€x" * 300_000  # 3.3 MB, cut between characters
    parts = [b'{"t":"', text.encode(), b'"}\n']
    received, _ = await written(pipe, b'{"before":1}\n', parts, b'{"after":2}\n')
    escaped = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    assert received == b'{"before":1}\n{"t":"' + escaped.encode() + b'"}\n{"after":2}\n'


async def test_a_huge_line_with_curly_quotes_but_no_separator_arrives_as_it_was(
    pipe: tuple[int, int],
) -> None:
    # \u201c and \u201d start with the byte that starts U+2028 too: nothing to escape here.
    text = "\u201cquoted\u201d text, " * 200_000
    line = b'{"t":"' + text.encode() + b'"}\n'
    received, _ = await written(pipe, [line], b'{"after":1}\n')
    assert received == line + b'{"after":1}\n'


async def test_a_non_blocking_stdout_gets_every_piece_of_a_big_line_in_order(pipe: tuple[int, int]) -> None:
    os.set_blocking(pipe[1], False)  # as a host may leave it: writes stop short when the pipe fills
    parts = [b'{"n":"', *(bytes([65 + i % 26]) * 100_000 for i in range(40)), b'"}\n']
    received, writer = await written(pipe, parts, b'{"after":1}\n')
    assert writer.broken is None
    assert received == b"".join(parts) + b'{"after":1}\n'


async def test_a_line_is_foreground_work_until_it_is_written(pipe: tuple[int, int]) -> None:
    """A big answer still being copied into the pipe keeps background threads back."""
    read_fd, write_fd = pipe
    foreground = Foreground()
    before = foreground.under_way
    async with LineWriter(write_fd, foreground=foreground) as writer:
        writer.write_parts([b'{"big":"', b"x" * 300_000, b'"}\n'])  # more than the pipe holds
        writer.write_line(b"2\n")
        assert foreground.under_way == before + 4
        await anyio.sleep(0.2)  # the writer thread is blocked on the full pipe
        assert foreground.under_way > before
        received = b""
        while not received.endswith(b"2\n"):
            received += await anyio.to_thread.run_sync(os.read, read_fd, 1 << 20)
        await writer.flush()
        assert foreground.under_way == before
    assert received == b'{"big":"' + b"x" * 300_000 + b'"}\n2\n'


async def test_leaving_the_writer_writes_what_is_still_queued(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    async with LineWriter(write_fd) as writer:
        writer.write_line(b"1\n")
        writer.write_line(b"2\n")
    assert os.read(read_fd, 100) == b"1\n2\n"


async def test_leaving_the_writer_because_of_cancellation_still_flushes(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    with anyio.CancelScope() as scope:
        async with LineWriter(write_fd) as writer:
            writer.write_line(b"answer\n")
            scope.cancel()
            await anyio.sleep(3600)
    assert os.read(read_fd, 100) == b"answer\n"


async def test_a_broken_sink_drops_output_instead_of_failing(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    os.close(read_fd)
    async with LineWriter(write_fd) as writer:
        writer.write_line(b"nobody reads this\n")
        await writer.flush()
        assert isinstance(writer.broken, BrokenPipeError)
        writer.write_line(b"dropped\n")
        await writer.flush()
