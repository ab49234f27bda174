// Framing, without the Python server: a tiny Node "server" writes lines in awkward pieces.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RpcAgentClient } from "../src/index.js";

// Answers each request line with its params echoed back as the result. The output holds a raw
// (unescaped) U+2028 and U+2029, is split into single bytes (cutting UTF-8 sequences apart) and
// carries a notification and a non-JSON line along the way.
const fakeServer = String.raw`
let buffer = Buffer.alloc(0);
process.stdin.on("data", async (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  let i;
  while ((i = buffer.indexOf(10)) >= 0) {
    const request = JSON.parse(buffer.subarray(0, i).toString("utf8"));
    buffer = buffer.subarray(i + 1);
    const text = "raw\u2028sep\u2029para \u00e9\u{1F333}";
    const event = JSON.stringify({ jsonrpc: "2.0", method: "event", params: { type: "queue_update", steering: [text], followUp: [] } });
    const response = JSON.stringify({ jsonrpc: "2.0", id: request.id, result: { echo: request.params, text } });
    const bytes = Buffer.from(event + "\nnot json\n" + response + "\n", "utf8");
    for (const byte of bytes) {
      process.stdout.write(Buffer.from([byte]));
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
});
process.stdin.on("end", () => process.exit(0));
`;

describe("framing", () => {
  it("splits on LF only: raw U+2028/U+2029 and split UTF-8 sequences stay intact", async () => {
    const client = RpcAgentClient.spawn({ command: process.execPath, args: ["-e", fakeServer] });
    const events: unknown[] = [];
    const protocolErrors: string[] = [];
    client.on("event", (event) => events.push(event));
    client.on("protocolError", (line) => protocolErrors.push(line));
    const sent = "params\u2028with\u2029separators";
    const result = (await client.callRaw("echo", { message: sent })) as {
      echo: { message: string };
      text: string;
    };
    const expected = "raw\u2028sep\u2029para \u00e9\u{1F333}";
    assert.equal(result.echo.message, sent);
    assert.equal(result.text, expected);
    assert.deepEqual(events, [{ type: "queue_update", steering: [expected], followUp: [] }]);
    assert.deepEqual(protocolErrors, ["not json"]);
    assert.equal(await client.close(), 0);
  });

  it("correlates concurrent calls by id", async () => {
    const client = RpcAgentClient.spawn({ command: process.execPath, args: ["-e", fakeServer] });
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map((n) => client.callRaw("echo", { n }) as Promise<{ echo: { n: number } }>),
    );
    assert.deepEqual(
      results.map((r) => r.echo.n),
      [1, 2, 3, 4, 5],
    );
    assert.equal(await client.close(), 0);
  });
});
