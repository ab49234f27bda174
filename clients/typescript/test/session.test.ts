// The client against the real Python server (faux provider): handshake, prompt, tree, fork.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  AGENT_EVENT_TYPES,
  METHOD_NAMES,
  PROTOCOL_VERSION,
  type AgentEvent,
  type AssistantMessage,
  type InitializeResult,
  type State,
  type TreeNode,
  type TreeResult,
} from "../src/index.js";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RpcAgentClient } from "../src/index.js";
import { startServer, suiteServer } from "./helpers.js";

function userNodes(tree: TreeResult): TreeNode[] {
  return tree.nodes.filter((node) => node.role === "user");
}

/** Prompt with each message in turn, each run to its end; the tree they made and its user nodes. */
async function converse(
  client: RpcAgentClient,
  ...messages: string[]
): Promise<{ tree: TreeResult; users: TreeNode[] }> {
  for (const message of messages) await client.prompt(message);
  const tree = await client.getTree();
  return { tree, users: userNodes(tree) };
}

function assistantText(message: AssistantMessage): string {
  return message.content
    .map((block) => (block.type === "text" ? block.text : ""))
    .join("");
}

describe("initialize and state", () => {
  const server = suiteServer({ initialize: false });

  it("initialize answers with the protocol version, every method and a typed state", async () => {
    const result: InitializeResult = await server.client.initialize();
    assert.equal(result.protocolVersion, PROTOCOL_VERSION);
    assert.equal(result.serverInfo.name, "rpc-agent");
    // The generated METHOD_NAMES are exactly what the server serves.
    assert.deepEqual([...result.methods].sort(), [...METHOD_NAMES]);
    assert.equal(result.state.cwd, server.cwd);
    assert.equal(result.state.isStreaming, false);
  });

  it("getState returns a State", async () => {
    const state: State = await server.client.getState();
    assert.equal(typeof state.sessionId, "string");
    assert.equal(state.cwd, server.cwd);
    assert.equal(state.messageCount, 0);
    assert.equal(state.leafId, null);
    assert.equal(state.model?.provider, "faux");
    assert.ok(["off", "minimal", "low", "medium", "high", "xhigh"].includes(state.thinkingLevel));
  });

  it("call() reaches the same methods by protocol name", async () => {
    const stats = await server.client.call("get_session_stats");
    assert.equal(stats.userMessages, 0);
    const models = await server.client.call("get_available_models");
    assert.ok(models.models.length > 0);
  });

  it("close() ends stdin and resolves with exit code 0", async () => {
    assert.equal(await server.client.close(), 0);
    assert.equal(server.client.isClosed, true);
  });
});

describe("prompt and events", () => {
  const server = suiteServer();

  it("message_update text deltas concatenate to the final text", async () => {
    const { client } = server;
    const events: AgentEvent[] = [];
    const deltas: string[] = [];
    client.on("event", (event) => events.push(event));
    const stopDeltas = client.onTextDelta((delta) => deltas.push(delta));
    const ends: string[] = [];
    const stopEnds = client.onEvent("message_update", (event) => {
      // The listener's parameter is narrowed to MessageUpdateEvent.
      if (event.assistantMessageEvent.type === "text_end") ends.push(event.assistantMessageEvent.content ?? "");
    });

    const result = await client.prompt("tell me about trees");
    stopDeltas();
    stopEnds();

    assert.equal(result.queued, false);
    assert.equal(result.stopReason, "stop");
    const final = result.messages?.at(-1);
    assert.ok(final && final.role === "assistant");
    const finalText = assistantText(final as AssistantMessage);
    assert.ok(finalText.length > 0);
    assert.ok(deltas.length >= 2, `expected several deltas, got ${deltas.length}`);
    assert.equal(deltas.join(""), finalText);
    assert.deepEqual(ends, [finalText]);
    assert.equal(await client.getLastAssistantText(), finalText);

    const types = events.map((event) => event.type);
    assert.equal(types[0], "agent_start");
    assert.deepEqual(types.slice(-2), ["agent_end", "agent_settled"]);
    for (const type of types) assert.ok((AGENT_EVENT_TYPES as readonly string[]).includes(type), type);
    const userEnd = events.find(
      (event) => event.type === "message_end" && event.message.role === "user",
    );
    assert.ok(userEnd && userEnd.type === "message_end" && typeof userEnd.entryId === "string");
    // eventsSeen keeps them all, and waitForEvent finds past events.
    assert.ok(client.eventsSeen.length >= events.length);
    const agentEnd = await client.waitForEvent("agent_end", { timeoutMs: 1000 });
    assert.equal(agentEnd.messages.length, 2);
  });

  it("a U+2028 and a U+2029 in a prompt round-trip intact", async () => {
    const { client } = server;
    const message = "line\u2028separator\u2029paragraph \u00e9\u{1F333}";
    const deltas: string[] = [];
    const stop = client.onTextDelta((delta) => deltas.push(delta));
    const result = await client.prompt(message);
    stop();
    const user = result.messages?.[0];
    assert.ok(user && user.role === "user");
    assert.equal(user.content, message);
    const final = assistantText(result.messages?.at(-1) as AssistantMessage);
    assert.ok(final.includes(message), JSON.stringify(final));
    assert.equal(deltas.join(""), final);
    const messages = await client.getMessages();
    assert.ok(messages.messages.some((m) => m.role === "user" && m.content === message));
  });
});

describe("pi 1.5's additions: queue, thinking levels, commands, typed events", () => {
  const server = suiteServer();

  it("clearQueue, getAvailableThinkingLevels and getCommands answer typed; new events are typed", async () => {
    const { client } = server;
    assert.deepEqual(await client.clearQueue(), { steering: [], followUp: [] });
    const { levels } = await client.getAvailableThinkingLevels();
    assert.equal(levels[0], "off");
    assert.ok(levels.includes("high"));
    assert.deepEqual(await client.getCommands(), { commands: [] });

    const changed: string[] = [];
    const stop = client.onEvent("thinking_level_changed", (event) => changed.push(event.level));
    await client.setThinkingLevel("low");
    stop();
    assert.deepEqual(changed, ["low"]);

    await client.prompt("settle");
    const settled = await client.waitForEvent("agent_settled", { timeoutMs: 1000 });
    assert.equal(settled.aborted, false);
    const end = await client.waitForEvent("agent_end", { timeoutMs: 1000 });
    assert.equal(end.willRetry, false);
  });
});

describe("tree: getTree, navigateTree, setLabel", () => {
  const server = suiteServer();

  it("navigating back and prompting again makes a branch; labels show on the tree", async () => {
    const { client } = server;
    const { tree, users } = await converse(client, "first question", "second question");
    assert.ok(tree.leafId);
    assert.equal(users.length, 2);
    const [first, second] = users as [TreeNode, TreeNode];
    assert.match(first.preview, /first question/);
    // A session starts, as pi's do, with its model and thinking level: the first question is
    // the third node down.
    assert.deepEqual(
      tree.nodes.slice(0, 2).map((node) => node.type),
      ["model_change", "thinking_level_change"],
    );
    assert.equal(first.depth, 2);
    assert.ok(second.depth > first.depth);

    // Navigate to the second user message: the leaf moves to its parent, its text comes back.
    const nav = await client.navigateTree(second.id);
    assert.equal(nav.cancelled, false);
    assert.equal(nav.editorText, "second question");
    assert.equal(nav.leafId, second.parentId);
    assert.equal((await client.getState()).leafId, second.parentId);

    await client.prompt("another second question");
    const branched = await client.getTree();
    const parent = branched.nodes.find((node) => node.id === second.parentId);
    assert.equal(parent?.childCount, 2);
    assert.equal(userNodes(branched).length, 3);

    const labelled = await client.setLabel(first.id, "start");
    assert.equal(typeof labelled.labelEntryId, "string");
    const withLabel = await client.getTree();
    assert.equal(withLabel.nodes.find((node) => node.id === first.id)?.label, "start");
    await client.setLabel(first.id, null);
    const cleared = await client.getTree();
    assert.equal(cleared.nodes.find((node) => node.id === first.id)?.label, null);
  });
});

describe("fork", () => {
  const server = suiteServer();

  it("fork starts a new session file before a user message and returns its text", async () => {
    const { client } = server;
    const { users } = await converse(client, "keep this", "fork from here");
    const target = users[1]!;
    const before = await client.getState();
    const forkable = await client.getForkMessages();
    assert.ok(forkable.messages.length >= 2);

    const sessionChanged = client.waitForEvent("session_changed", {
      predicate: (event) => event.reason === "fork",
      after: client.eventsSeen.length,
      timeoutMs: 10_000,
    });
    const forked = await client.fork(target.id);
    assert.equal(forked.text, "fork from here");
    assert.notEqual(forked.sessionId, before.sessionId);
    assert.ok(forked.sessionFile && forked.sessionFile !== before.sessionFile);
    assert.equal((await sessionChanged).sessionId, forked.sessionId);

    const state = await client.getState();
    assert.equal(state.sessionId, forked.sessionId);
    const tree = await client.getTree();
    const texts = userNodes(tree).map((node) => node.preview);
    assert.deepEqual(texts, ["keep this"]);
    const sessions = await client.listSessions();
    assert.ok(sessions.sessions.length >= 2);
  });
});

describe("finding and deleting sessions", () => {
  const server = suiteServer();

  it("searchSessions finds by message text, listSessions pages, deleteSession removes", async () => {
    const { client } = server;
    await client.prompt("the Quokka plan");
    const first = (await client.getState()).sessionFile!;
    await client.newSession();
    await client.prompt("something else");
    const second = (await client.getState()).sessionFile!;

    const found = await client.searchSessions("QUOKKA", { limit: 10 });
    assert.deepEqual(
      found.sessions.map((hit) => hit.session.path),
      [first],
    );
    assert.equal(found.sessions[0]!.entryIds.length, 2);
    assert.equal(found.sessions[0]!.snippet, "the Quokka plan");
    assert.equal(found.nextCursor, null);

    const page = await client.listSessions({ limit: 1 });
    assert.equal(page.sessions.length, 1);
    const rest = await client.listSessions({ limit: 1, cursor: page.nextCursor! });
    assert.deepEqual(
      new Set([...page.sessions, ...rest.sessions].map((info) => info.path)),
      new Set([first, second]),
    );
    assert.equal(rest.nextCursor, null);

    const deleted = await client.deleteSession(first);
    assert.equal(deleted.path, first);
    assert.deepEqual((await client.searchSessions("quokka")).sessions, []);
    await assert.rejects(client.deleteSession(second), /live session/);
  });
});

describe("close() when the host is done", () => {
  it("during a slow prompt: the server stores the turn as aborted and exits 0", async () => {
    const slow = Array.from({ length: 60 }, (_, i) => `w${i}`).join(" ");
    const server = startServer({ fauxScript: [{ text: slow, delayMs: 400 }] });
    try {
      const { client } = server;
      await client.initialize();
      const firstDelta = new Promise<void>((resolve) => {
        const stop = client.onTextDelta(() => {
          stop();
          resolve();
        });
      });
      const prompt = client.prompt("talk").catch((error: unknown) => error);
      await firstDelta;
      // Time enough to finish the whole reply: the server must not use it, EOF is an abort.
      const began = Date.now();
      assert.equal(await client.close(30_000), 0);
      assert.ok(Date.now() - began < 2_000, `exit took ${Date.now() - began} ms`);
      await prompt;
      const files = (readdirSync(join(server.home, "sessions"), { recursive: true }) as string[]).filter(
        (name) => name.endsWith(".jsonl"),
      );
      assert.equal(files.length, 1);
      const lines = readFileSync(join(server.home, "sessions", files[0]!), "utf8").trim().split("\n");
      const last = JSON.parse(lines[lines.length - 1]!) as { message: { role: string; stopReason: string } };
      assert.equal(last.message.role, "assistant");
      assert.equal(last.message.stopReason, "aborted");
    } finally {
      await server.dispose();
    }
  });

  it("a server that outlives its stdin gets SIGTERM before SIGKILL", async () => {
    const client = RpcAgentClient.spawn({
      // The event line says the trap is set: a SIGTERM before that would kill bash outright.
      command: [
        "bash",
        "-c",
        `trap 'exit 7' TERM; echo '{"jsonrpc":"2.0","method":"event","params":{"type":"agent_start"}}'; while :; do sleep 0.05; done`,
      ],
      args: [],
    });
    await client.waitForEvent("agent_start", { timeoutMs: 10_000 });
    assert.equal(await client.close(200, 5_000), 7);
  });
});

describe("a pi 1.5.2 session", () => {
  it("system messages, a compaction's system checkpoint and thinking level max come back typed", async () => {
    const folder = realpathSync(mkdtempSync(join(tmpdir(), "rpc-agent-ts-pi15-")));
    const path = join(folder, "pi15.jsonl");
    const at = (second: number): string => new Date(Date.UTC(2026, 10, 3, 14, 0, second)).toISOString();
    const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
    const entry = (type: string, id: string, parentId: string | null, second: number, fields: object) =>
      JSON.stringify({ type, id, parentId, timestamp: at(second), ...fields });
    const system = { role: "system", content: "", sections: { preamble: "You are pi." }, toolsAdded: [{ name: "read", description: "Read", parameters: {} }], timestamp: 1 };
    const lines = [
      JSON.stringify({ type: "session", version: 3, id: "019a7c52-5e1c-7d3e-9c1a-2b3c4d5e6f70", timestamp: at(0), cwd: folder }),
      entry("thinking_level_change", "00000001", null, 1, { thinkingLevel: "max" }),
      entry("message", "00000002", "00000001", 2, { message: system }),
      entry("message", "00000003", "00000002", 3, { message: { role: "user", content: "hi", timestamp: 3 } }),
      entry("message", "00000004", "00000003", 4, {
        message: { role: "assistant", content: [{ type: "text", text: "hello" }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage, stopReason: "stop", thinkingLevel: "max", timestamp: 4 },
      }),
      entry("compaction", "00000005", "00000004", 5, { summary: "S", firstKeptEntryId: "00000003", tokensBefore: 100, systemMessage: { ...system, timestamp: 5 } }),
    ];
    writeFileSync(path, lines.join("\n") + "\n");
    const server = startServer({ args: ["--session", path] });
    try {
      const { client } = server;
      assert.equal((await client.initialize()).state.thinkingLevel, "max");
      const { messages } = await client.getMessages();
      assert.deepEqual(
        messages.map((message) => message.role),
        ["system", "compactionSummary", "user", "assistant"],
      );
      const first = messages[0];
      assert.ok(first?.role === "system");
      assert.deepEqual(first.sections, { preamble: "You are pi." });
      assert.equal(first.toolsAdded?.[0]?.name, "read");
      await client.setThinkingLevel("off");
      await client.setThinkingLevel("max");
      assert.equal((await client.getState()).thinkingLevel, "max");
    } finally {
      await server.dispose();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
