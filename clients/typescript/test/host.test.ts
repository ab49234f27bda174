// The host's side against the real Python server: an approval callback, a hook, a client tool,
// and $/cancelRequest handling.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { python, startServer } from "./helpers.js";

describe("host: elicitation", () => {
  it("answers an MCP server's elicitation/request", async () => {
    const server = startServer({
      fauxScript: [{ toolCalls: [{ name: "mcp__acct__ask_profile", arguments: {}, id: "t1" }] }, { text: "done" }],
    });
    try {
      const asked: string[] = [];
      server.client.onElicitation((request) => {
        asked.push(`${request.server} ${request.mode} ${request.message}`);
        return { action: "accept", content: { name: "Ada", language: "python" } };
      });
      // The eliciting MCP server of the Python tests (FastMCP over stdio), run by the same Python.
      // (compiled to dist/test: the repository is four levels up)
      const eliciting = resolve(dirname(fileURLToPath(import.meta.url)), "../../../../tests/mcp_servers/eliciting_server.py");
      const init = await server.client.initialize({
        mcpServers: [{ name: "acct", command: python, args: [eliciting], env: [] }],
      });
      assert.equal(init.client?.elicitation, true);
      const result = await server.client.prompt("set me up");
      assert.deepEqual(asked, ["acct form Who are you?"]);
      const toolResult = (result.messages ?? []).find((m) => m.role === "toolResult");
      assert.match(JSON.stringify(toolResult), /accept \{\\"language\\": \\"python\\", \\"name\\": \\"Ada\\"\}/);
    } finally {
      await server.dispose();
    }
  });
});

describe("host: approvals, hooks, client tools", () => {
  it("denies a write, runs a client tool and applies a tool_result hook", async () => {
    const server = startServer({
      fauxScript: [
        { toolCalls: [{ name: "write", arguments: { path: "a.txt", content: "x" } }] },
        { toolCalls: [{ name: "clock", arguments: { zone: "UTC" } }] },
        { text: "done" },
      ],
    });
    try {
      const asked: string[] = [];
      server.client
        .onApproval((request) => {
          asked.push(request.toolName);
          return { decision: "deny", message: "not today" };
        })
        .addTool(
          {
            name: "clock",
            description: "The time.",
            parameters: { type: "object", properties: { zone: { type: "string" } }, required: ["zone"] },
            readOnly: true,
          },
          (args) => `noon ${String(args.zone)}`,
        )
        .onHook("tool_result", (event) =>
          event.toolName === "clock" ? { content: [{ type: "text", text: "hooked noon" }] } : undefined,
        );
      const init = await server.client.initialize();
      assert.deepEqual(init.client?.tools, ["clock"]);
      const result = await server.client.prompt("go");
      assert.equal(result.stopReason, "stop");
      assert.deepEqual(asked, ["write"]);
      assert.equal(existsSync(join(server.cwd, "a.txt")), false);
      const toolResults = (result.messages ?? []).filter((m) => m.role === "toolResult");
      assert.equal(toolResults.length, 2);
      assert.match(JSON.stringify(toolResults[0]), /not today/);
      assert.match(JSON.stringify(toolResults[1]), /hooked noon/);
    } finally {
      await server.dispose();
    }
  });

  it("aborts a pending approval when the server sends $/cancelRequest", async () => {
    const server = startServer({
      fauxScript: [{ toolCalls: [{ name: "bash", arguments: { command: "echo x > b.txt" } }] }, { text: "ok" }],
    });
    try {
      let aborted = false;
      let asked!: () => void;
      const askedPromise = new Promise<void>((resolve) => (asked = resolve));
      server.client.onApproval(
        (_request, signal) =>
          new Promise((resolve) => {
            asked();
            signal.addEventListener("abort", () => {
              aborted = true;
              resolve("allow");
            });
          }),
      );
      await server.client.initialize();
      const run = server.client.prompt("go");
      await askedPromise;
      await server.client.abort();
      const result = await run;
      assert.equal(result.stopReason, "aborted");
      assert.equal(server.client.cancelledRequests.length, 1);
      assert.equal(aborted, true);
      assert.equal(existsSync(join(server.cwd, "b.txt")), false);
    } finally {
      await server.dispose();
    }
  });
});
