// Error responses and the server going away.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ErrorCodes, RpcAgentClient, RpcError, ServerExitedError } from "../src/index.js";
import { python, startServer, suiteServer } from "./helpers.js";

describe("error responses", () => {
  const server = suiteServer();

  it("an unknown entry id rejects with RpcError code -32002", async () => {
    const error = await server.client.setLabel("no-such-entry", "x").then(
      () => assert.fail("setLabel should have failed"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof RpcError);
    assert.equal(error.code, -32002);
    assert.equal(error.code, ErrorCodes.ENTRY_NOT_FOUND);
    assert.equal(error.method, "set_label");
    assert.match(error.message, /no-such-entry/);
    assert.deepEqual(error.data, { entryId: "no-such-entry" });

    await assert.rejects(server.client.navigateTree("no-such-entry"), {
      name: "RpcError",
      code: ErrorCodes.ENTRY_NOT_FOUND,
    });
  });

  it("an unknown method and bad params reject with their codes; the client keeps working", async () => {
    await assert.rejects(server.client.callRaw("no_such_method"), { code: ErrorCodes.METHOD_NOT_FOUND });
    await assert.rejects(server.client.callRaw("set_label", { entryId: 5 }), {
      code: ErrorCodes.INVALID_PARAMS,
    });
    // A line that is not JSON gets a parse error with id null: no pending call is touched.
    const unmatched = new Promise<Record<string, unknown>>((resolve) => server.client.once("unmatched", resolve));
    server.client.sendRaw("this is not json\n");
    const parseError = await unmatched;
    assert.equal((parseError.error as { code: number }).code, ErrorCodes.PARSE_ERROR);
    assert.equal((await server.client.getState()).isStreaming, false);
  });
});

describe("the server exits", () => {
  it("pending calls are rejected when the server is killed", async () => {
    const server = startServer({ fauxScript: [{ text: "slow words that take a while", delayMs: 3000 }] });
    try {
      const { client } = server;
      await client.initialize();
      const prompt = client.prompt("go slowly");
      const stats = client.getSessionStats();
      await client.waitForEvent("agent_start", { timeoutMs: 10_000 });
      await stats; // answered while the run goes on
      const secondPrompt = client.prompt("queued", { streamingBehavior: "followUp" });
      await secondPrompt;
      client.kill("SIGKILL");
      const error = await prompt.then(
        () => assert.fail("the prompt should have been rejected"),
        (e: unknown) => e,
      );
      assert.ok(error instanceof ServerExitedError, String(error));
      assert.equal(error.method, "prompt");
      assert.equal(error.signal, "SIGKILL");
      assert.match(error.message, /killed by SIGKILL/);
      // Later calls fail at once with the same reason.
      await assert.rejects(client.getState(), { name: "ServerExitedError", signal: "SIGKILL" });
      assert.equal(client.isClosed, true);
    } finally {
      await server.dispose();
    }
  });

  it("the exit code and the tail of stderr are in the error", async () => {
    const client = RpcAgentClient.spawn({
      command: [python, "-m", "rpc_agent"],
      args: ["--provider", "no-such-provider"],
    });
    const error = await client.initialize().then(
      () => assert.fail("initialize should have failed"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ServerExitedError, String(error));
    assert.equal(error.exitCode, 2);
    assert.match(error.message, /exited with code 2/);
    assert.match(error.message, /invalid choice: 'no-such-provider'/);
    assert.equal(await client.close(), 2);
  });

  it("a command that does not exist rejects pending calls instead of hanging", async () => {
    const client = RpcAgentClient.spawn({ command: "/nonexistent/rpc-agent" });
    await assert.rejects(client.getState(), (error: unknown) => {
      assert.ok(error instanceof ServerExitedError);
      assert.match(error.message, /could not start.*ENOENT/);
      return true;
    });
    await client.close();
  });
});
