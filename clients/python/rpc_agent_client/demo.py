"""A tour of rpc-agent over real stdio, offline: ``rpc-agent-demo``.

Spawns the server with the faux provider in a scratch home folder, then: prompts twice,
labels an entry, goes back to the first answer and tries another direction with a branch
summary of the path it left, forks a new session file, and prints the tree and the files.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import anyio

from rpc_agent_client import RpcAgentClient
from rpc_agent_client import types as m


def render_tree(tree: m.TreeResult) -> str:
    lines = []
    for node in tree.nodes:
        marker = "  <- leaf" if node.id == tree.leafId else ""
        label = f" [{node.label}]" if node.label else ""
        kind = node.role or node.type
        lines.append(f"{'  ' * node.depth}{node.id} {kind}{label}: {node.preview[:60]}{marker}")
    return "\n".join(lines)


async def tour(home: Path, workdir: Path) -> None:
    async with RpcAgentClient.spawn(
        "--provider", "faux", "--cwd", str(workdir), env={"RPC_AGENT_HOME": str(home)}
    ) as client:
        init = await client.initialize("rpc-agent-demo")
        print(f"connected: {init.serverInfo.name} {init.serverInfo.version}, {len(init.methods)} methods")

        first = await client.prompt("Build a CLI in Node.js")
        await client.prompt("Add a --verbose flag")
        entries = (await client.get_entries()).entries
        assistant_ids = [
            e["id"] for e in entries if e.get("type") == "message" and e["message"]["role"] == "assistant"
        ]
        answer_id = assistant_ids[0]
        print(f"\nprompted twice; first run stopped with {first.stopReason!r}")

        await client.set_label(answer_id, "first-answer")
        nav = await client.navigate_tree(answer_id, summarize=True, label="rust-attempt")
        print(f"navigated back to {answer_id} with a branch summary (entry {nav.summaryEntryId})")
        await client.prompt("Actually, use Rust instead")

        state = await client.get_state()
        print(f"\nsession file: {state.sessionFile}")
        print("tree:")
        print(render_tree(await client.get_tree()))

        print("\ncontext sent to the model now:")
        for message in (await client.get_messages()).messages:
            text = getattr(message, "summary", None) or getattr(message, "content", "")
            if isinstance(text, list):
                text = " ".join(getattr(block, "text", "") for block in text)
            print(f"  {message.role}: {str(text).splitlines()[0][:70] if str(text) else ''}")

        forks = await client.get_fork_messages()
        target = next(f for f in forks.messages if f.text.startswith("Actually"))
        forked = await client.fork(target.entryId)
        print(f"\nforked before {target.text!r} into {forked.sessionFile}")
        print(render_tree(await client.get_tree()))

        sessions = await client.list_sessions()
        print(f"\n{len(sessions.sessions)} session files in this folder:")
        for info in sessions.sessions:
            print(f"  {Path(info.path).name}  messages={info.messageCount}  first={info.firstMessage[:40]!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, help="RPC_AGENT_HOME to use (default: a new temp folder)")
    args = parser.parse_args(argv)
    home = args.home or Path(tempfile.mkdtemp(prefix="rpc-agent-demo-"))
    workdir = home / "project"
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"RPC_AGENT_HOME={home}")
    anyio.run(tour, home, workdir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
