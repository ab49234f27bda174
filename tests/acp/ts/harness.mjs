// rpc-agent --acp driven by the official TypeScript SDK (@agentclientprotocol/sdk 2.4.0, the
// stable v1 entrypoint), as a current editor drives it. Used by tests/acp/test_acp_ts_sdk.py.
//
//   node harness.mjs CONFIG.json
//
// CONFIG: {command: [...argv of the agent], cwd, extraDir}. The scenario: initialize with the
// terminal-auth and form-elicitation capabilities, a session with an additional directory, a
// slow prompt withdrawn with the SDK's own request cancellation ($/cancel_request), a prompt
// that runs, the listing, a second session deleted (refused while open), and logout. Every inbound message the SDK parsed is counted by kind.
// The report (one JSON object) goes to stdout; the agent's stderr to ours.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const child = spawn(config.command[0], config.command.slice(1), {
  cwd: config.cwd,
  stdio: ["pipe", "pipe", "inherit"],
});
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const updates = [];
const report = { updates: {}, errors: [] };
let firstText;
const sawText = new Promise((resolve) => (firstText = resolve));

const app = acp
  .client()
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    const kind = params.update.sessionUpdate;
    updates.push(params.update);
    report.updates[kind] = (report.updates[kind] ?? 0) + 1;
    if (kind === "agent_message_chunk") firstText();
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => ({
    outcome: { outcome: "selected", optionId: params.options[0].optionId },
  }));
const connection = app.connect(stream);
const agent = connection.agent;

try {
  report.initialize = await agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { auth: { terminal: true }, elicitation: { form: {} } },
  });
  const { sessionId } = await agent.request(acp.methods.agent.session.new, {
    cwd: config.cwd,
    additionalDirectories: [config.extraDir],
    mcpServers: [],
  });
  report.sessionId = sessionId;

  // A slow reply, cancelled the way the SDK cancels any request it sent.
  const cancel = new AbortController();
  const slow = agent.request(
    acp.methods.agent.session.prompt,
    { sessionId, prompt: [{ type: "text", text: "talk slowly" }] },
    { cancellationSignal: cancel.signal },
  );
  await sawText;
  cancel.abort();
  report.cancelled = await slow.then(
    (response) => ({ stopReason: response.stopReason }),
    (error) => ({ code: error.code, message: error.message }),
  );

  const done = await agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "and now answer" }],
  });
  report.done = { stopReason: done.stopReason };
  report.usage = updates.filter((u) => u.sessionUpdate === "usage_update").at(-1);
  report.titles = updates.filter((u) => u.sessionUpdate === "session_info_update" && u.title).map((u) => u.title);
  report.list = await agent.request(acp.methods.agent.session.list, { cwd: config.extraDir });

  // session/delete: an open session is refused until it is closed; a closed one goes for good.
  const other = await agent.request(acp.methods.agent.session.new, { cwd: config.cwd, mcpServers: [] });
  await agent.request(acp.methods.agent.session.prompt, {
    sessionId: other.sessionId,
    prompt: [{ type: "text", text: "short lived" }],
  });
  report.deleteOpen = await agent
    .request(acp.methods.agent.session.delete, { sessionId: other.sessionId })
    .then(
      () => "deleted",
      (error) => ({ code: error.code }),
    );
  await agent.request(acp.methods.agent.session.close, { sessionId: other.sessionId });
  report.deleted = await agent.request(acp.methods.agent.session.delete, { sessionId: other.sessionId });
  report.deletedId = other.sessionId;
  report.listAfterDelete = (await agent.request(acp.methods.agent.session.list, {})).sessions.map(
    (info) => info.sessionId,
  );

  report.logout = await agent.request(acp.methods.agent.logout, {});
} catch (error) {
  report.errors.push(String(error?.stack ?? error));
} finally {
  connection.close();
  child.stdin.end();
  await new Promise((resolve) => child.once("exit", resolve));
}
process.stdout.write(JSON.stringify(report) + "\n");
